"""Adding a Polish act = one registry row + its sample files: ``lexpipe run --acts`` builds it end to end.

A temporary registry that knows only the Civil Code, plus one row for the Kodeks karny (ELI
DU/1997/553; the shipped ``schemas/acts.toml`` holds it too, since issue 14), is handed to a real
``lexpipe run`` through ``LEXPIPE_ACT_REGISTRY``; the sample source serves its real ISAP PDF from ``../shared/data``. No
code names the act: the ELI connector, the parser's identity check, the Dagster asset family
(``pl/kk/*``, partitions ``pl_kk_versions``, job ``pl_kk_corpus_and_index``), the index and the
search all come from the row.
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
from registry_rows import KC as KC_ROW, KK as KK_ROW  # tests/, on sys.path via conftest

VERSION = "2026-07-28"


def _lexpipe(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lexpipe.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def kk_run(tmp_path_factory, sample_dir: Path):
    if not (sample_dir / "pl" / "isap" / f"D19970553Lj_{VERSION}.pdf").exists():
        pytest.skip("the Kodeks karny sample PDF is not in the shared data")
    root = tmp_path_factory.mktemp("kk")
    registry = root / "acts.toml"
    registry.write_text(KC_ROW + KK_ROW, encoding="utf-8")
    env = {**os.environ, "LEXPIPE_ACT_REGISTRY": str(registry), "LEXPIPE_HOME": str(root / "home"),
           "DAGSTER_HOME": str(root / "dagster_home"), "LEXPIPE_ENCODER": "hashing",
           "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true"}
    run = _lexpipe(["run", "--acts", "pl:kk", "--no-benchmarks"], env, root)
    return root, env, run


def test_the_base_registry_does_not_know_the_act(tmp_path: Path) -> None:
    (tmp_path / "acts.toml").write_text(KC_ROW, encoding="utf-8")
    assert "pl:kk" not in ActRegistry.load(tmp_path / "acts.toml")


def test_one_registry_row_builds_the_act_end_to_end(kk_run) -> None:
    root, _, run = kk_run
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "pl:kk corpus versions" in run.stdout and "published" in run.stdout
    act_dir = root / "home" / "corpus" / "pl" / "kk"
    assert json.loads((act_dir / "current.json").read_text())["version"] == VERSION
    articles = pq.read_table(act_dir / VERSION / "articles.parquet")
    ids = articles["id"].to_pylist()
    assert len(ids) > 400 and all(i.startswith("pl:kk:art:") for i in ids)
    assert "pl:kk:art:148" in ids and "pl:kk:art:278" in ids  # murder, theft
    act = pq.read_table(act_dir / VERSION / "acts.parquet").to_pylist()[0]
    assert (act["act_id"], act["eli"], act["short_name"]) == ("pl:kk", "DU/1997/553", "k.k.")
    # nothing of the Civil Code was built: only the named act
    assert not (root / "home" / "corpus" / "pl" / "kc").exists()


def test_the_registered_act_is_searchable(kk_run) -> None:
    root, env, run = kk_run
    assert run.returncode == 0
    found = _lexpipe(["search", "--act", "pl:kk", "--retriever", "bm25", "--json", "--k", "5",
                      "Kto zabiera w celu przywłaszczenia cudzą rzecz ruchomą"], env, root)
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)["hits"]
    assert hits and all(h["article_id"].startswith("pl:kk:") for h in hits)
    assert "pl:kk:art:278" in [h["article_id"] for h in hits[:3]]


def test_an_unknown_act_is_refused_naming_the_registry(tmp_path: Path) -> None:
    env = {**os.environ, "LEXPIPE_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dh")}
    env.pop("LEXPIPE_ACT_REGISTRY", None)
    run = _lexpipe(["run", "--acts", "pl:kro"], env, tmp_path)
    assert run.returncode == 2
    assert "unknown act id 'pl:kro'" in run.stderr and "pl:kc" in run.stderr
