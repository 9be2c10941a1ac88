"""A Polish act needs no registry row: the ELI listing discovers it, and ``lexpipe run`` builds it
end to end.

A temporary registry that knows only the Civil Code (``LEXPIPE_ACT_REGISTRY``) is handed to a real
``lexpipe run``; the offline ELI source lists the held PDFs of ``../shared/data`` (titles and
addresses read from page 1), so the Kodeks karny's PDF (ELI DU/1997/553) becomes the act
``pl:du1997_553`` in the home's ``catalogue/eli.json`` — discovered ids are
``pl:<publisher><year>_<position>`` — and is parsed (its identity checked against page 1, its
paragraphs numbered "§" as the PDF shows), checked, chunked, published and indexed through the
``pl_statutes`` assets (partition ``2026-07-28_du1997_553`` of ``pl_changesets``). No code and no
row names the act. With the shipped registry the same PDF is ``pl:kk`` (the curated row enriches
the listed act: tests/connectors/test_eli_listing.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from schemas.acts import ActRegistry
from registry_rows import KC as KC_ROW  # tests/, on sys.path via conftest

VERSION = "2026-07-28"
ACT = "pl:du1997_553"  # DU/1997/553 as the listing discovers it
ARTICLES = 461  # the Kodeks karny's articles as the curated pl:kk parses them (BENCHMARKS.md, parse table)


def _lexpipe(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lexpipe.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def kk_run(tmp_path_factory, sample_dir: Path):
    if not (sample_dir / "pl" / "isap" / f"D19970553Lj_{VERSION}.pdf").exists():
        pytest.skip("the Kodeks karny sample PDF is not in the shared data")
    root = tmp_path_factory.mktemp("kk")
    registry = root / "acts.toml"
    registry.write_text(KC_ROW, encoding="utf-8")  # no row for the Kodeks karny
    env = {**os.environ, "LEXPIPE_ACT_REGISTRY": str(registry), "LEXPIPE_HOME": str(root / "home"),
           "DAGSTER_HOME": str(root / "dagster_home"), "LEXPIPE_ENCODER": "hashing",
           "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true"}
    run = _lexpipe(["run", "--acts", ACT, "--no-benchmarks"], env, root)
    return root, env, run


def test_a_listed_act_without_a_row_is_discovered_and_built_end_to_end(kk_run) -> None:
    root, _, run = kk_run
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # the registry has no row for three of the four held codes: all three are discovered (only one is run)
    assert ("3 act(s) discovered in the ELI listing without a curated row: pl:du1964_296, pl:du1974_141, "
            f"{ACT}") in run.stderr
    assert f"{ACT} corpus versions" in run.stdout and "published" in run.stdout
    home = root / "home"
    catalogue = {e["address"]: e for e in json.loads((home / "catalogue" / "eli.json").read_text())["acts"]}
    entry = catalogue["DU/1997/553"]
    assert (entry["id"], entry["title"], entry["extra"]["display_address"]) == (
        ACT, "Kodeks karny", "Dz. U. 1997 Nr 88 poz. 553")
    act_dir = home / "corpus" / "pl" / "du1997_553"
    assert json.loads((act_dir / "current.json").read_text())["version"] == VERSION
    articles = pq.read_table(act_dir / VERSION / "articles.parquet")
    ids = articles["id"].to_pylist()
    assert len(ids) == ARTICLES and all(i.startswith(f"{ACT}:art:") for i in ids)
    assert f"{ACT}:art:148" in ids and f"{ACT}:art:278" in ids  # murder, theft
    nodes = pq.read_table(act_dir / VERSION / "nodes.parquet")["id"].to_pylist()
    assert f"{ACT}:art:148:par:1" in nodes  # "§ 1." read from the PDF: no row said so
    act = pq.read_table(act_dir / VERSION / "acts.parquet").to_pylist()[0]
    assert (act["act_id"], act["eli"]) == (ACT, "DU/1997/553")
    # the changeset's record: one ELI text state of the act, published
    record = json.loads((home / "corpus" / "pl" / ".changesets" / f"{VERSION}_du1997_553.json").read_text())
    assert record["state"] == "applied" and record["outcomes"][0]["outcome"] == "published"
    assert record["outcomes"][0]["units"] == ARTICLES
    # nothing else was built: only the named act
    assert sorted(p.name for p in (home / "corpus" / "pl").iterdir()) == [".changesets", "du1997_553"]


def test_the_discovered_act_is_searchable(kk_run) -> None:
    root, env, run = kk_run
    assert run.returncode == 0
    found = _lexpipe(["search", "--act", ACT, "--retriever", "bm25", "--json", "--k", "5",
                      "Kto zabiera w celu przywłaszczenia cudzą rzecz ruchomą"], env, root)
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)["hits"]
    assert hits and all(h["article_id"].startswith(f"{ACT}:") for h in hits)
    assert f"{ACT}:art:278" in [h["article_id"] for h in hits[:3]]


def test_the_base_registry_does_not_know_the_act(tmp_path: Path) -> None:
    (tmp_path / "acts.toml").write_text(KC_ROW, encoding="utf-8")
    assert ACT not in ActRegistry.load(tmp_path / "acts.toml") and "pl:kk" not in ActRegistry.load(tmp_path / "acts.toml")


def test_an_unknown_act_is_refused_naming_the_registry(tmp_path: Path) -> None:
    env = {**os.environ, "LEXPIPE_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dh")}
    env.pop("LEXPIPE_ACT_REGISTRY", None)
    run = _lexpipe(["run", "--acts", "pl:kro"], env, tmp_path)
    assert run.returncode == 2
    assert "unknown act id 'pl:kro'" in run.stderr and "pl:kc" in run.stderr
