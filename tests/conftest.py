"""Shared fixtures: where the read-only sample data is, a throwaway LEXPIPE_HOME, and the published
Civil Code corpus the suite builds once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.layout import Layout

from corpus_fixtures import PublishedCorpus, build_published_corpus  # tests/ (this folder), on sys.path

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
def published_corpus(tmp_path_factory, sample_dir: Path) -> PublishedCorpus:
    """Both sample Civil Code versions published and indexed with the model-free hashing encoder,
    built once per session by the real main job and recorded in a DAGSTER_HOME of its own (see
    tests/corpus_fixtures.py). Read-only: ``copy_published_corpus`` (or ``shutil.copytree`` of its
    ``home``) before writing to either folder."""
    return build_published_corpus(tmp_path_factory.mktemp("published_corpus"), sample_dir)


@pytest.fixture(scope="session")
def corpus_home(published_corpus: PublishedCorpus) -> Path:
    """The ``$LEXPIPE_HOME`` of ``published_corpus``. Read-only: copy it (``shutil.copytree``)
    before writing."""
    return published_corpus.home


# -- parsed sample sources, shared read-only ------------------------------------------------------
# Several modules parse the same sample files with the same call; each is parsed once per session.
# The parsed objects are mutable dataclasses: tests read them and never keep a change (one
# injects a leak into a § and restores it in ``finally``).

BGB_PDF = Path("de") / "pdf" / "BJNR001950896_bgb_gii_2024-11-28.pdf"
BGB_MD = Path("de") / "gesetze" / "bgb.md"


@pytest.fixture(scope="session")
def kc_parsed(sample_dir: Path) -> dict:
    """Version → ``parse_statute`` of that sample Civil Code PDF (2024-12-19 and 2025-11-13)."""
    import datetime as dt

    from pipelines.statutes.pl.parser import parse_statute

    return {v: parse_statute(sample_dir / "pl" / "isap" / f"D19640093Lj_{v}.pdf", dt.date.fromisoformat(v), "pl:kc")
            for v in ("2024-12-19", "2025-11-13")}


@pytest.fixture(scope="session")
def bgb_pdf(sample_dir: Path):
    """``parse_gii_pdf`` of the gesetze-im-internet BGB PDF (two page-reading workers)."""
    from pipelines.statutes.de.pdf import parse_gii_pdf

    return parse_gii_pdf(sample_dir / BGB_PDF, workers=2)


@pytest.fixture(scope="session")
def bgb_markdown(sample_dir: Path):
    """``parse_markdown`` of the bundestag/gesetze BGB."""
    from pipelines.statutes.de.markdown import parse_markdown

    return parse_markdown(sample_dir / BGB_MD)


@pytest.fixture(scope="session")
def bgb_comparison(bgb_markdown, bgb_pdf):
    """``compare_sources`` of the two BGB sources (Markdown vs PDF)."""
    from pipelines.statutes.de.sources_compare import compare_sources

    return compare_sources(bgb_markdown, bgb_pdf)


@pytest.fixture(scope="session")
def benchmark_table(sample_dir: Path):
    """``build_benchmark_table`` over the sample benchmark sources (an immutable Arrow table)."""
    from pipelines.benchmarks.benchmark_table import build_benchmark_table

    return build_benchmark_table(sample_dir)
