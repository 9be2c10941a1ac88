"""``lexpipe run`` builds what ``--acts`` / ``--jurisdiction`` name: Polish acts by default, German
statutes and the German case law from the same command."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.openlegaldata import OldpPaths
from lexpipe.cli import _selected


def _args(acts=None, jurisdiction=None) -> argparse.Namespace:
    return argparse.Namespace(acts=acts, jurisdiction=jurisdiction)


def test_selection() -> None:
    # the default: the Polish statutes, no case law (its embeddings cost minutes)
    assert ([a.id for a in _selected(_args())[0]], _selected(_args())[1]) == (["pl:kc", "pl:kpc", "pl:kp", "pl:kk"], ())
    acts, cases = _selected(_args(jurisdiction=["de"]))
    assert [a.id for a in acts] == ["de:bgb", "de:gg", "de:hgb", "de:stgb", "de:stpo", "de:zpo"] and cases == ("de:cases",)
    acts, cases = _selected(_args(acts=["de:gg,de:cases", "pl:kc"]))
    assert [a.id for a in acts] == ["pl:kc", "de:gg"] and cases == ("de:cases",)
    assert _selected(_args(acts=["de:cases"])) == ((), ("de:cases",))
    assert _selected(_args(acts=["pl:cases"])) == ((), ("pl:cases",))
    acts, cases = _selected(_args(jurisdiction=["pl"]))  # named explicitly: with its case law
    assert [a.id for a in acts] == ["pl:kc", "pl:kpc", "pl:kp", "pl:kk"] and cases == ("pl:cases",)
    with pytest.raises(KeyError, match="no act of jurisdiction 'fr'"):
        _selected(_args(jurisdiction=["fr"]))


def test_german_statute_and_case_law_from_lexpipe_run(tmp_path: Path, sample_dir: Path) -> None:
    if not (sample_dir / "de" / "gesetze" / "gg.md").exists() or not (sample_dir / "de" / "openlegaldata").is_dir():
        pytest.skip("German samples not in the shared data")
    home = tmp_path / "home"
    env = {**os.environ, "LEXPIPE_HOME": str(home), "DAGSTER_HOME": str(tmp_path / "dagster_home"),
           "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true", "LEXPIPE_ENCODER": "hashing"}
    env.pop("LEXPIPE_ACT_REGISTRY", None)
    run = subprocess.run([sys.executable, "-m", "lexpipe.cli", "run", "--acts", "de:gg,de:cases", "--no-index"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "German federal law" in run.stdout and "de:cases: built" in run.stdout
    served = json.loads((home / "corpus" / "de" / "gg" / "current.json").read_text())["version"]
    assert (home / "corpus" / "de" / "gg" / served / "articles.parquet").exists()
    assert list((OldpPaths(home).store_root / "cases").glob("part-*.parquet"))
    # --no-index: no search index was built, and no Polish act was touched
    assert not (home / "index").exists() and not (home / "corpus" / "pl").exists()


@pytest.mark.parametrize("argv, message", [
    (["run", "--jurisdiction", "fr"], "no act of jurisdiction 'fr'"),
    (["run", "--acts", "pl:kc,pl:nope"], "unknown act id 'pl:nope'"),
])
def test_a_bad_selection_is_refused_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture, argv, message) -> None:
    from lexpipe.cli import main

    monkeypatch.setenv("LEXPIPE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "home").exists() and not (tmp_path / "dagster_home").exists()


def test_unknown_case_law_collection_is_refused_naming_the_known_ones(tmp_path) -> None:
    from core.settings import Settings
    from lexpipe.runner import run_cases

    with pytest.raises(KeyError, match="unknown case-law collection 'fr:cases'; known: de:cases, pl:cases"):
        run_cases(Settings(home=tmp_path), collection="fr:cases")
    with pytest.raises(KeyError, match="no act 'pl:casez'|pl:casez"):
        _selected(_args(acts=["pl:casez"]))
