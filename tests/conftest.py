"""Shared fixtures: where the read-only sample data is, and a throwaway LEXPIPE_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lexpipe.layout import Layout

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """``$LEXPIPE_SAMPLE_DIR`` or ``<repo>/../shared/data``; skips tests when it is absent."""
    env = os.environ.get("LEXPIPE_SAMPLE_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not (path / "pl" / "isap").is_dir():
        pytest.skip(f"sample data not found at {path} (set LEXPIPE_SAMPLE_DIR to the shared "
                    "data folder containing pl/isap)")
    return path.resolve()


@pytest.fixture
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    """A fresh Layout under tmp_path; LEXPIPE_HOME points at it for code reading settings."""
    home = tmp_path / "lexpipe_home"
    home.mkdir()
    monkeypatch.setenv("LEXPIPE_HOME", str(home))
    return Layout(home)


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory, sample_dir: Path) -> Path:
    """A ``$LEXPIPE_HOME`` with both sample Civil Code versions published and indexed with the
    model-free hashing encoder, built once per session by the real main job. Read-only: copy it
    (``shutil.copytree``) before writing."""
    import dagster as dg

    from lexpipe.runner import run_corpus
    from lexpipe.settings import Settings

    home = tmp_path_factory.mktemp("corpus_home") / "home"
    settings = Settings(home=home, sample_dir=sample_dir, offline=True, parse_workers=2, encoder="hashing")
    runs = run_corpus(settings, instance=dg.DagsterInstance.ephemeral(), log_level="WARNING")
    assert [r.success for r in runs] == [True, True], runs
    return home
