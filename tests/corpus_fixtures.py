"""The published Civil Code corpus the suite builds once (``published_corpus`` in conftest.py) and
the Dagster instance its runs were recorded in.

Why one build with a real instance: parsing, validating, chunking, diffing and indexing both
sample versions is the slowest setup of the suite, and several modules need exactly that corpus —
some only the files (``$LEXPIPE_HOME``), some also what Dagster recorded (materializations, check
evaluations; the browser test shows them in the UI). So the main job runs once into a throwaway
``DAGSTER_HOME`` with the project's dagster.yaml (SQLite storage, as ``lexpipe run`` uses), and a
module that writes to either gets its own copy of both (``copy_published_corpus``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OLD, NEW = "2024-12-19", "2025-11-13"  # the real sample versions: both published, NEW served


@dataclass(frozen=True)
class PublishedCorpus:
    """A home with both versions published and indexed (hashing encoder), and the DAGSTER_HOME
    whose instance recorded the two runs of the main job (``runs``: PartitionRun, oldest first)."""

    home: Path  # $LEXPIPE_HOME
    dagster_home: Path
    runs: tuple


def write_dagster_yaml(dagster_home: Path) -> None:
    """The project's dagster.yaml plus two test-only settings: the UI's daemon launches no runs
    (a schedule firing mid-test must not change what the pages show) and no newsletter sign-up
    dialog (it covers the page on an instance's first visit)."""
    import yaml

    cfg = yaml.safe_load((REPO / "dagster.yaml").read_text()) or {}
    cfg.setdefault("concurrency", {}).setdefault("runs", {})["max_concurrent_runs"] = 0
    cfg["nux"] = {"enabled": False}
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(cfg))


@contextmanager
def dagster_home_env(dagster_home: Path) -> Iterator[None]:
    """``DAGSTER_HOME`` set to ``dagster_home`` (the storage section of dagster.yaml reads it),
    restored afterwards."""
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = previous


def open_instance(dagster_home: Path):
    """The Dagster instance recorded in ``dagster_home`` (the caller disposes of it). Its storage
    paths are resolved while loading, so DAGSTER_HOME is only set for that."""
    import dagster as dg

    with dagster_home_env(dagster_home):
        return dg.DagsterInstance.get()


def build_published_corpus(root: Path, sample_dir: Path) -> PublishedCorpus:
    """``lexpipe run``'s corpus step over the sample Civil Code PDFs (offline, hashing encoder),
    recorded in a fresh DAGSTER_HOME under ``root``."""
    from lexpipe.runner import run_corpus
    from core.settings import Settings

    dagster_home = root / "dagster_home"
    dagster_home.mkdir(parents=True)
    write_dagster_yaml(dagster_home)
    home = root / "home"
    settings = Settings(home=home, sample_dir=sample_dir, offline=True, parse_workers=2, encoder="hashing")
    with dagster_home_env(dagster_home), open_instance(dagster_home) as instance:
        runs = run_corpus(settings, act_id="pl:kc", instance=instance, log_level="WARNING")
    assert [(r.version, r.success) for r in runs] == [(OLD, True), (NEW, True)], runs
    return PublishedCorpus(home, dagster_home, tuple(runs))


def copy_published_corpus(corpus: PublishedCorpus, root: Path) -> PublishedCorpus:
    """A writable copy (``root/home``, ``root/dagster_home``) of the session's read-only corpus."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(corpus.home, root / "home", symlinks=True)
    shutil.copytree(corpus.dagster_home, root / "dagster_home", symlinks=True)
    return PublishedCorpus(root / "home", root / "dagster_home", corpus.runs)
