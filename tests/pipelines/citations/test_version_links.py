"""Version-aware links: the version in force on the citing date, else the nearest, flagged."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.citations.version_links import HeldVersions, article_of


def _publish(home: Path, act: str, version: str, nodes: list[tuple[str, str, str]]) -> None:
    d = Layout(home).version_dir(act, version)
    d.mkdir(parents=True)
    pq.write_table(pa.table({"id": [n[0] for n in nodes], "status": [n[1] for n in nodes],
                             "text": [n[2] for n in nodes]}), d / "nodes.parquet")
    (d / "manifest.json").write_text(json.dumps({"version": version}))


def _held(tmp_path: Path) -> HeldVersions:
    _publish(tmp_path, "pl:kp", "2016-09-22", [
        ("pl:kp:art:264", "in_force", "§ 1. Odwołanie … w ciągu 7 dni"),
        ("pl:kp:art:264:par:1", "in_force", "Odwołanie … w ciągu 7 dni"),
        ("pl:kp:art:30", "in_force", "Umowa o pracę rozwiązuje się"),
        ("pl:kp:art:36^1", "in_force", "(uchylony)."),
    ])
    _publish(tmp_path, "pl:kp", "2025-12-10", [
        ("pl:kp:art:264", "in_force", "§ 1. Odwołanie … w ciągu 21 dni"),
        ("pl:kp:art:264:par:1", "in_force", "Odwołanie … w ciągu 21 dni"),
        ("pl:kp:art:30", "in_force", "Umowa o  pracę rozwiązuje się"),  # spacing only: editorial
        ("pl:kp:art:36^1", "repealed", "(uchylony)"),
        ("pl:kp:art:18^3a", "in_force", "Pracownicy powinni być równo traktowani"),
    ])
    return HeldVersions(Layout(tmp_path))


def test_exact_version_in_force_on_the_date(tmp_path: Path) -> None:
    link = _held(tmp_path).link("pl:kp:art:264:par:1", "pl:kp", date(2020, 5, 1))
    assert (link.resolved_to_version, link.exact_version, link.status) == ("2016-09-22", True, "in_force")
    assert link.changed_since is True and link.serving_version == "2025-12-10"
    newest = _held(tmp_path / "b").link("pl:kp:art:264:par:1", "pl:kp", date(2026, 1, 1))
    assert (newest.resolved_to_version, newest.exact_version, newest.changed_since) == ("2025-12-10", True, False)


def test_before_every_held_version_is_the_nearest_and_not_exact(tmp_path: Path) -> None:
    link = _held(tmp_path).link("pl:kp:art:30", "pl:kp", date(2011, 3, 17))
    assert (link.resolved_to_version, link.exact_version) == ("2016-09-22", False)
    assert link.changed_since is False  # only spacing differs: editorial, not an amendment


def test_missing_paragraph_falls_back_to_its_article_and_unknown_units_say_so(tmp_path: Path) -> None:
    held = _held(tmp_path)
    link = held.link("pl:kp:art:30:par:4", "pl:kp", date(2017, 1, 1))
    assert link.matched_id == "pl:kp:art:30" and link.status == "in_force"
    added_later = held.link("pl:kp:art:18^3a", "pl:kp", date(2017, 1, 1))
    assert added_later.status == "not_in_version" and added_later.matched_id is None
    assert held.link("pl:kp:art:36^1", "pl:kp", date(2025, 12, 31)).status == "repealed"


def test_act_not_held(tmp_path: Path) -> None:
    link = _held(tmp_path).link("pl:kpk:art:7", "pl:kpk", date(2011, 1, 1))
    assert link.status == "act_not_held" and link.resolved_to_version is None and not link.exact_version


def test_no_date_uses_the_serving_version_unflagged_as_exact(tmp_path: Path) -> None:
    link = _held(tmp_path).link("pl:kp:art:30", "pl:kp", None)
    assert (link.resolved_to_version, link.exact_version) == ("2025-12-10", False)


def test_article_of() -> None:
    assert article_of("pl:kpc:art:98:par:1") == "pl:kpc:art:98"
    assert article_of("pl:kc:art:626^13") == "pl:kc:art:626^13"
    assert article_of("pl:kc") == "pl:kc"
