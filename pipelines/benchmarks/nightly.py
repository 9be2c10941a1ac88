"""The nightly benchmark steps without an orchestrator: question table → staleness → retrieval eval.

Why a module of steps: Dagster (``assets/benchmarks.py``) and Prefect (``lexpipe/prefect_flows.py``)
bind the same three steps and must write the same files under ``$LEXPIPE_HOME/benchmarks`` (the
layout is a public contract, see the README). Each step reads its inputs from the layout, writes
atomically, and returns a small outcome the binding turns into metadata, logs or a table.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from core.layout import Layout
from core.atomic import atomic_write_json
from pipelines.statutes.store import CorpusStore, write_table

Progress = Callable[[str], None]
RETRIEVERS: tuple[str, ...] = ("bm25", "dense", "hybrid", "gaius")  # every retriever the backends answer
QUESTION_COUNT_TOLERANCE = 0.02  # allowed drop of the question count against the previous build


class BenchmarkInputError(RuntimeError):
    """A step's input is missing (an upstream step has not run for this version)."""


# ----------------------------------------------------------------------------------------------
# where things live (the public layout)


def questions_path(layout: Layout) -> Path:
    return layout.benchmarks / "questions.parquet"


def questions_manifest_path(layout: Layout) -> Path:
    return layout.benchmarks / "questions.json"


def staleness_path(layout: Layout, act_id: str, version: str) -> Path:
    jur, act = act_id.split(":", 1)
    return layout.benchmarks / "staleness" / jur / act / f"{version}.parquet"


def eval_root(layout: Layout) -> Path:
    return layout.benchmarks / "retrieval_eval"


# ----------------------------------------------------------------------------------------------
# the question table

# the modules whose code decides what the table holds: a change to any of them must rebuild it
_BUILDER_MODULES = ("benchmark_table", "exam_jsonl", "exam_pdf", "gerlayqa", "legal_basis", "records")


def question_sources_digest(sample_dir: Path) -> str:
    """sha256 over every source file the question table is built from (relative path + bytes) and
    the builder's own code: equal digests give equal tables, so orchestrators may cache on it."""
    from pipelines.benchmarks.benchmark_table import EXAM_PDFS_DIR, EXAMS_DIR, GERLAYQA_FILE

    sample_dir = Path(sample_dir)
    h = hashlib.sha256()
    files: list[Path] = []
    for rel in (EXAM_PDFS_DIR, EXAMS_DIR):
        folder = sample_dir / rel
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: benchmark source directory not found")
        files += sorted(p for p in folder.rglob("*") if p.is_file())
    gerlayqa = sample_dir / GERLAYQA_FILE
    if not gerlayqa.is_file():
        raise FileNotFoundError(f"{gerlayqa}: GerLayQA file not found")
    files.append(gerlayqa)
    for path in files:
        h.update(str(path.relative_to(sample_dir)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    here = Path(__file__).resolve().parent
    for name in _BUILDER_MODULES:
        h.update(name.encode() + b"\0" + (here / f"{name}.py").read_bytes())
    return h.hexdigest()


@dataclass
class QuestionTableBuild:
    path: Path
    rows: int
    previous_rows: int | None
    stats: dict[str, Any]
    seconds: float
    sources_digest: str


def question_table_step(layout: Layout, sample_dir: Path) -> QuestionTableBuild:
    """Build the benchmark question table from ``sample_dir`` and write it (+ ``questions.json``
    with the row count of the build it replaces, which the count check compares against)."""
    from pipelines.benchmarks.benchmark_table import build_benchmark_table, table_stats

    path = questions_path(layout)
    previous_rows = pq.read_metadata(path).num_rows if path.exists() else None
    digest = question_sources_digest(sample_dir)
    t0 = time.perf_counter()
    table = build_benchmark_table(Path(sample_dir))
    seconds = time.perf_counter() - t0
    write_table(path, table, "benchmark_questions")
    stats = table_stats(table)
    atomic_write_json(questions_manifest_path(layout), {
        "rows": table.num_rows, "previous_rows": previous_rows, "built_at": dt.datetime.now(dt.timezone.utc),
        "sample_dir": str(sample_dir), "sources_digest": digest, "stats": stats})
    return QuestionTableBuild(path, table.num_rows, previous_rows, stats, seconds, digest)


def question_table_built(layout: Layout, sources_digest: str) -> bool:
    """True when the question table on disk was built from sources with this digest (what a cached
    ``question_table_step`` result claims)."""
    manifest = questions_manifest_path(layout)
    if not (questions_path(layout).exists() and manifest.exists()):
        return False
    return json.loads(manifest.read_text()).get("sources_digest") == sources_digest


@dataclass
class QuestionTableCheck:
    report: Any  # pipelines.validation.ValidationReport
    previous_rows: int | None
    min_rows: int | None


def check_question_table(layout: Layout, *, count_tolerance: float = QUESTION_COUNT_TOLERANCE) -> QuestionTableCheck:
    """The benchmark GX suite; the row count may drop by at most ``count_tolerance`` against the
    build the current table replaced (recorded in ``questions.json``)."""
    from pipelines.benchmarks.benchmark_table import validate_benchmark_table

    if not questions_path(layout).exists():
        raise BenchmarkInputError(f"no benchmark question table at {questions_path(layout)}: build it first")
    table = pq.read_table(questions_path(layout))
    manifest_file = questions_manifest_path(layout)
    manifest = json.loads(manifest_file.read_text()) if manifest_file.exists() else {}
    prev = manifest.get("previous_rows")
    min_rows = math.ceil(prev * (1 - count_tolerance)) if prev else None
    return QuestionTableCheck(validate_benchmark_table(table, min_rows=min_rows), prev, min_rows)


# ----------------------------------------------------------------------------------------------
# staleness of gold references per corpus version


@dataclass
class StalenessOutcome:
    path: Path
    flags: pa.Table
    summary: dict[str, Any]
    previous_version: str | None


def staleness_step(layout: Layout, *, act_id: str, version: str) -> StalenessOutcome:
    """Flag the gold references ``version`` does not support as they were (unit by unit, against the
    newest published older version and the version's diff from it) and write the flags."""
    from pipelines.benchmarks.staleness import check_staleness, staleness_summary

    store = CorpusStore(layout)
    if not questions_path(layout).exists():
        raise BenchmarkInputError("no benchmark questions table: build benchmarks/questions first")
    table = pq.read_table(questions_path(layout))
    prev = store.previous_version(act_id, version)
    kw: dict[str, Any] = {}
    if prev:
        diff_file = (store.built_dir(act_id, version) or layout.version_dir(act_id, version)) / f"diff_from_{prev}.parquet"
        kw = dict(previous_version=prev,
                  previous_articles=store.read(act_id, prev, "articles", published_only=True),
                  previous_nodes=store.read(act_id, prev, "nodes", published_only=True),
                  diff=pq.read_table(diff_file) if diff_file.exists() else None)
    flags = check_staleness(table, act_id=act_id, version=version, articles=store.read(act_id, version, "articles"),
                            nodes=store.read(act_id, version, "nodes"), **kw)
    path = staleness_path(layout, act_id, version)
    write_table(path, flags, "benchmark_staleness")
    return StalenessOutcome(path, flags, staleness_summary(table, flags, act_id), prev)


def stale_ids_of(layout: Layout, *, act_id: str, version: str) -> set[str]:
    """Questions stale in ``version`` (from its staleness file, which must exist)."""
    from pipelines.benchmarks.staleness import stale_question_ids

    stale_file = staleness_path(layout, act_id, version)
    if not questions_path(layout).exists() or not stale_file.exists():
        raise BenchmarkInputError(f"benchmarks/questions and benchmarks/staleness [{version}] must be built first")
    return stale_question_ids(pq.read_table(stale_file))


# ----------------------------------------------------------------------------------------------
# retrieval evaluation


@dataclass
class EvalOutcome:
    rows: pa.Table
    path: Path  # this run's history file
    plot_path: Path
    png: bytes
    questions: int
    skipped_stale: int
    question_set: str
    encoder: str
    backend: str
    seconds: float
    encode_seconds: float
    history_rows: int
    best: dict | None = field(default=None)
    scopes: tuple[str, ...] = ("act",)  # the scopes evaluated (jurisdiction only for the serving version)


def retrieval_eval_step(layout: Layout, *, act_id: str, version: str, run_id: str, encoder_name: str,
                        open_backend: Callable[[Any], Any], question_set: Any, retrievers: Sequence[str],
                        styles: Sequence[str], k: int = 50, scopes: Sequence[str] = ("act", "jurisdiction"),
                        jurisdiction_retrievers: Sequence[str] = ("hybrid",),
                        open_across_backend: Callable[[Any], Any] | None = None,
                        progress: Progress | None = None) -> EvalOutcome:
    """Evaluate every retriever × query style on the version's non-stale questions with in-corpus
    gold in ``act_id``, append the rows to the history (one file per run id, act and version,
    staged then renamed) and redraw the act's history plot.

    Scopes: ``act`` searches the act alone at exactly ``version``; ``jurisdiction`` searches every
    act of the jurisdiction with no act filter, as a consumer's query does — only when ``version``
    is the act's serving version (the other acts are searched at theirs) and only with
    ``jurisdiction_retrievers`` (the default retriever: the across-acts rows answer "does the
    served search find it among every act", and each extra retriever costs a full pass).

    ``open_backend(encoder)`` opens the search backend with the given (query-caching) encoder; the
    caller decides which backend (embedded or Elasticsearch), as the index step did;
    ``open_across_backend(encoder)`` the one searching every act of the language (default: the
    same backend, right for the embedded one, which holds them all)."""
    from pipelines.benchmarks.retrieval_eval import (
        SCOPES,
        EvalContext,
        EvalHistory,
        backend_search,
        evaluate_retrievers,
        plot_history,
        prime_query_cache,
        select_questions,
    )
    from pipelines.retrieval.encoders import QueryCachingEncoder, get_encoder
    from pipelines.retrieval.index_build import throttled_progress
    from pipelines.retrieval.interface import SearchError

    say = progress or (lambda _msg: None)
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise ValueError(f"unknown evaluation scope(s) {unknown} (known: {', '.join(SCOPES)})")
    serving = CorpusStore(layout).current_version(act_id)
    scopes = [s for s in scopes if s == "act" or version == serving]
    run_ts = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    stale = stale_ids_of(layout, act_id=act_id, version=version)
    qs, skipped = select_questions(pq.read_table(questions_path(layout)), act_id=act_id, question_set=question_set,
                                   stale=stale)
    retrievers, styles = list(retrievers), list(styles)
    queries = [q.text(s) for q in qs for s in styles]
    # a cache of its own that holds every query of the evaluation (the shared one keeps 4096)
    encoder = QueryCachingEncoder(get_encoder(encoder_name), maxsize=max(4096, 2 * len(queries)))
    backend = open_backend(encoder)
    say(f"{act_id} {version}: evaluating {len(qs)} questions ({sum(skipped.values())} stale skipped) × "
        f"{len(retrievers)} retrievers × {len(styles)} query styles, scopes {', '.join(scopes)}, "
        f"encoder {encoder.id}, {type(backend).__name__}")
    t0 = time.perf_counter()
    if {"dense", "hybrid"} & set(retrievers):
        prime_query_cache(encoder, queries, progress=throttled_progress(say, "encoding queries {done}/{total}", 0.25))
    encode_s = time.perf_counter() - t0
    parts = []
    for scope in scopes:
        ctx = EvalContext(run_id=run_id, run_ts=run_ts, act_id=act_id, version=version, encoder=encoder.id,
                          backend=type(backend).__name__, question_set=question_set.label, k=k, scope=scope)
        scoped = retrievers if scope == "act" else [r for r in retrievers if r in jurisdiction_retrievers]
        searched = backend if scope == "act" or open_across_backend is None else open_across_backend(encoder)
        try:
            parts.append(evaluate_retrievers(qs, backend_search(searched, act_id=act_id, version=version, scope=scope),
                                             ctx, retrievers=scoped, styles=styles, skipped_stale=skipped,
                                             progress=lambda m, scope=scope: say(f"[{scope}] {m}")))
        except SearchError as exc:  # e.g. the version is not indexed: name it, append nothing
            raise BenchmarkInputError(f"{act_id} {version}: cannot search the index ({exc}); index this version "
                                      "first") from exc
    rows = pa.concat_tables(parts)
    history = EvalHistory(eval_root(layout))
    path = history.append(rows)
    png = plot_history(history.read(), question_set=question_set.label, act_id=act_id)
    plot_path = history.write_plot(act_id, png)
    best = max((r for r in rows.to_pylist() if r["mrr"] is not None), key=lambda r: r["mrr"], default=None)
    return EvalOutcome(rows, path, plot_path, png, len(qs), sum(skipped.values()), question_set.label, encoder.id,
                       type(backend).__name__, time.perf_counter() - t0, encode_s, history.read().num_rows, best,
                       tuple(scopes))


def across_acts_backend(act_id: str, open_act: Callable[[str], Any]):
    """A backend answering searches with no act filter over every registry act of ``act_id``'s
    language, each act opened by ``open_act(act)``: an ``ActRouter``, for backends serving one act
    each (Elasticsearch: one index family per act). The embedded backend needs none: it holds
    every act already."""
    from pipelines.retrieval.act_router import ActRouter
    from pipelines.retrieval.languages import language_of
    from schemas.acts import registry

    lang = language_of(act_id)
    return ActRouter(lang, open_act, sorted(a.id for a in registry().of_language(lang)))


@dataclass
class RegressionCheck:
    passed: bool
    description: str
    run_id: str  # the run judged (the newest of the version when the given one has no rows)
    changes: list  # every MetricChange of that run
    regressions: list
    compared: int


def check_regressions(layout: Layout, *, act_id: str, version: str, run_id: str, margin: float) -> RegressionCheck:
    """Did any metric of ``run_id`` on ``act_id`` ``version`` fall by more than ``margin`` against
    the previous run of the same act, scope, benchmark, retriever, query style and question set?
    Without rows of ``run_id`` (a check launched on its own) the newest run of the version is
    judged."""
    from pipelines.benchmarks.retrieval_eval import EvalHistory, compare_to_previous, regressions

    history = EvalHistory(eval_root(layout)).read()
    mine = [r for r in history.to_pylist() if r["version"].isoformat() == version and r["act_id"] == act_id]
    if not any(r["run_id"] == run_id for r in mine):
        if not mine:
            return RegressionCheck(True, f"no evaluation of {act_id} {version} in the history yet", run_id, [], [], 0)
        run_id = max(mine, key=lambda r: r["run_ts"])["run_id"]
    changes = compare_to_previous(history, run_id, version=version, act_id=act_id)
    bad = regressions(changes, margin)
    compared = [c for c in changes if c.delta is not None]
    if bad:
        desc = f"{len(bad)} metric(s) fell by more than {margin}: " + "; ".join(
            f"{c.scope}/{c.retriever}/{c.query_style} {c.metric} {c.previous:.3f} → {c.current:.3f}" for c in bad[:6])
    elif compared:
        desc = f"no metric fell by more than {margin} ({len(compared)} compared with the previous run)"
    else:
        desc = "first run of this question set: nothing to compare"
    return RegressionCheck(not bad, desc, run_id, changes, bad, len(compared))
