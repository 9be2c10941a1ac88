"""Shared fixtures: where the read-only sample data is, a throwaway LEXPIPE_HOME, and the published
Civil Code corpus the suite builds once."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from core.layout import Layout

from corpus_fixtures import PublishedCorpus, build_published_corpus  # tests/ (this folder), on sys.path

REPO = Path(__file__).resolve().parents[1]

# No test reads the user's own home: after `make run` (the README's first command) ./.lexpipe holds
# the catalogue of the acts discovered from the ELI listing, and a test asking the registry for the
# default home saw them beside its own registry rows (three failures in a fresh clone's `make test`
# after `make run`). A test that needs a home sets LEXPIPE_HOME itself; every other one, and every
# process it starts, gets this empty folder (one per pytest-xdist worker, removed at exit).
_TEST_HOME = tempfile.mkdtemp(prefix="lexpipe_test_home_")
os.environ["LEXPIPE_HOME"] = _TEST_HOME
atexit.register(shutil.rmtree, _TEST_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """``$LEXPIPE_SAMPLE_DIR`` or ``<repo>/../shared/data``; skips tests when it is absent."""
    env = os.environ.get("LEXPIPE_SAMPLE_DIR")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not (path / "pl" / "isap").is_dir():
        pytest.skip(f"sample data not found at {path} (set LEXPIPE_SAMPLE_DIR to the shared "
                    "data folder containing pl/isap)")
    return path.resolve()


@pytest.fixture(scope="session")
def two_page_sample_dir(tmp_path_factory, sample_dir: Path) -> Path:
    """``sample_dir`` with two of the SAOS dump's pages (347, 355; symlinks to the real files)."""
    from saos_fixtures import sample_with_saos_pages

    if not (sample_dir / "pl" / "saos").is_dir():
        pytest.skip(f"SAOS sample pages not found under {sample_dir}")
    return sample_with_saos_pages(tmp_path_factory.mktemp("sample") / "data", sample_dir)


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
    tests/corpus_fixtures.py), one build for all pytest-xdist workers (tests/shared_build.py).
    Read-only: ``copy_published_corpus`` (or ``shutil.copytree`` of its
    ``home``) before writing to either folder."""
    from shared_build import shared

    return shared(tmp_path_factory, "published_corpus", lambda root: build_published_corpus(root, sample_dir))


@pytest.fixture(scope="session")
def corpus_home(published_corpus: PublishedCorpus) -> Path:
    """The ``$LEXPIPE_HOME`` of ``published_corpus``. Read-only: copy it (``shutil.copytree``)
    before writing."""
    return published_corpus.home


# -- parsed sample sources, shared read-only ------------------------------------------------------
# Several modules parse the same sample files with the same call; each is parsed once per session
# (the PDFs once for all pytest-xdist workers: tests/shared_build.py).
# The parsed objects are mutable dataclasses: tests read them and never keep a change (one
# injects a leak into a § and restores it in ``finally``).

BGB_PDF = Path("de") / "pdf" / "BJNR001950896_bgb_gii_2024-11-28.pdf"
BGB_MD = Path("de") / "gesetze" / "bgb.md"


@pytest.fixture(scope="session")
def isap_lines(tmp_path_factory, sample_dir: Path):
    """``isap_lines(name)``: ``read_lines`` of every page of the sample ISAP PDF ``name`` (two
    page-reading workers), read once per session for all pytest-xdist workers. Reading the pages is
    most of a parse (~10–20 s of CPU for a code), and five test files read the same seven PDFs:
    16 whole reads, now 7. Read-only (the lists are shared within a worker)."""
    from pipelines.pdf_lines import read_lines

    from shared_build import shared

    cache: dict = {}

    def get(name: str):
        if name not in cache:
            path = sample_dir / "pl" / "isap" / name
            if not path.exists():
                pytest.skip(f"{path} not in the sample data")
            cache[name] = shared(tmp_path_factory, f"isap-lines-{name}", lambda _root: read_lines(path, workers=2))
        return cache[name]
    return get


@pytest.fixture(scope="session")
def kc_parsed(tmp_path_factory, sample_dir: Path, isap_lines) -> dict:
    """Version → ``parse_statute`` of that sample Civil Code PDF (2024-12-19 and 2025-11-13)."""
    import datetime as dt

    from pipelines.statutes.pl.parser import parse_statute

    from shared_build import shared

    def name(v: str) -> str:
        return f"D19640093Lj_{v}.pdf"

    return shared(tmp_path_factory, "kc_parsed", lambda _root: {
        v: parse_statute(sample_dir / "pl" / "isap" / name(v), dt.date.fromisoformat(v), "pl:kc",
                         pages=isap_lines(name(v)))
        for v in ("2024-12-19", "2025-11-13")})


@pytest.fixture(scope="session")
def bgb_pdf(tmp_path_factory, sample_dir: Path):
    """``parse_gii_pdf`` of the gesetze-im-internet BGB PDF (two page-reading workers)."""
    from pipelines.statutes.de.pdf import parse_gii_pdf

    from shared_build import shared

    return shared(tmp_path_factory, "bgb_pdf", lambda _root: parse_gii_pdf(sample_dir / BGB_PDF, workers=2))


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


# The files that take longest (seconds summed over setup, call and teardown in the two-worker run
# of 2026-11-29, `--durations=0`), started first: `make test` sends whole files to two pytest-xdist
# workers in collection order, and the production test (~9 min of real processes) collected in
# the middle ran alone for its last minutes while the other worker idled. Longest first keeps both
# busy to the end. A file missing here only runs in its usual place.
LONGEST_FIRST = (
    "tests/deploy/test_dagster_production.py",       # 1058 s
    "tests/lexpipe/test_bad_acts.py",                # 365 s
    "tests/lexpipe/test_prefect_flows.py",           # 278 s
    "tests/assets/test_de_statutes.py",              # 251 s
    "tests/lexpipe/test_load_kill_resume.py",        # 237 s
    "tests/pipelines/subscriptions/test_webhook_crash.py",  # 205 s
    "tests/pipelines/statutes/de/test_de_versions.py",      # 199 s
    "tests/ui/test_dagster_ui.py",                   # 192 s
    "tests/pipelines/statutes/pl/test_article_census.py",   # 167 s
    "tests/pipelines/case_law/test_pl_judgments.py",        # 156 s
    "tests/assets/test_pl_statutes_job.py",          # 142 s
    "tests/pipelines/tools/test_tool_definitions.py",       # 138 s
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest files first (stable: a file's tests keep their order and stay together)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    root = Path(str(config.rootpath))

    def key(item: pytest.Item) -> int:
        try:
            rel = Path(str(item.path)).relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(rel, len(rank))

    items.sort(key=key)
