"""``ensure_dagster_home`` keeps the instance config in step with the project's dagster.yaml."""

from pathlib import Path

import pytest

from lexpipe.runner import ensure_dagster_home

REPO = Path(__file__).resolve().parents[2]


def test_copies_updates_and_respects_an_operators_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "dh"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    ensure_dagster_home(REPO)
    assert (home / "dagster.yaml").read_bytes() == (REPO / "dagster.yaml").read_bytes()
    # an older managed copy (before the pools existed) is replaced
    (home / "dagster.yaml").write_text("# lexpipe-managed: old\ntelemetry:\n  enabled: false\n")
    ensure_dagster_home(REPO)
    assert b"granularity: run" in (home / "dagster.yaml").read_bytes()
    # an operator's own file (no marker line) is theirs
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    ensure_dagster_home(REPO)
    assert (home / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"
