"""Benchmarks as Dagster assets: the question table, its staleness per corpus version, and the
nightly retrieval evaluation with its history.

Thin bindings only: the work happens in ``pipelines.benchmarks`` (``benchmark_table``,
``staleness``, ``retrieval_eval``).

    benchmarks/questions ─[benchmark_questions_valid: GX, blocking]→ benchmarks/staleness (per version)
                                                                     └→ benchmarks/retrieval_eval (per version)
                                                                        [retrieval_no_regression]

``staleness`` and ``retrieval_eval`` are partitioned like the corpus (``pl_kc_versions``); the
``benchmark_nightly`` job runs all three for the serving version every night at 02:00
(Europe/Warsaw). The regression check is not blocking: a worse metric is news, not a reason to stop
serving the corpus.
"""

import base64
import datetime as dt
import json
import math
import time
import warnings

import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13 (see assets/pl_statutes.py).
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

import pyarrow.parquet as pq

from assets import pl_statutes
from assets.pl_statutes import ACT_ID, versions
from assets.resources import BenchmarkConfig, CorpusStorage, SearchConfig
from lexpipe.layout import Layout, atomic_write_bytes, atomic_write_json
from pipelines.corpus_store import CorpusStore, write_table

GROUP = "benchmarks"
PREFIX = ["benchmarks"]


def questions_path(layout: Layout):
    return layout.benchmarks / "questions.parquet"


def questions_manifest_path(layout: Layout):
    return layout.benchmarks / "questions.json"


def staleness_path(layout: Layout, act_id: str, version: str):
    jur, act = act_id.split(":", 1)
    return layout.benchmarks / "staleness" / jur / act / f"{version}.parquet"


def eval_root(layout: Layout):
    return layout.benchmarks / "retrieval_eval"


def _md_table(rows: list[dict], columns: list[str], n: int = 8) -> dg.MarkdownMetadataValue:
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "\n".join("| " + " | ".join(str(r[c])[:100].replace("|", "/").replace("\n", " ") for c in columns) + " |"
                     for r in rows[:n])
    return dg.MetadataValue.md(head + body)


# ----------------------------------------------------------------------------------------------
# the question table


@dg.asset(key=PREFIX + ["questions"], group_name=GROUP, kinds={"parquet"},
          description="Benchmark questions with parsed gold legal references (exam PDFs, compiled exam JSONL, "
                      "GerLayQA), de-duplicated: schemas.arrow.BENCHMARK_QUESTIONS.")
def questions(context: dg.AssetExecutionContext, storage: CorpusStorage,
              benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
    from pathlib import Path

    from pipelines.benchmarks.benchmark_table import build_benchmark_table, table_stats

    layout = storage.layout
    path = questions_path(layout)
    previous_rows = pq.read_metadata(path).num_rows if path.exists() else None
    t0 = time.perf_counter()
    table = build_benchmark_table(Path(benchmark_config.sample_dir))
    seconds = time.perf_counter() - t0
    write_table(path, table, "benchmark_questions")
    stats = table_stats(table)
    atomic_write_json(questions_manifest_path(layout), {
        "rows": table.num_rows, "previous_rows": previous_rows, "built_at": dt.datetime.now(dt.timezone.utc),
        "sample_dir": benchmark_config.sample_dir, "stats": stats})
    context.log.info(f"benchmark questions: {table.num_rows} rows ({stats['refs_in_corpus']} gold refs in the corpus) "
                     f"from {len(stats['rows_per_source'])} source files in {seconds:.1f}s")
    per_source = sorted(stats["rows_per_source"].items())
    return dg.MaterializeResult(metadata={
        "dagster/row_count": table.num_rows,
        "previous_rows": previous_rows if previous_rows is not None else "none",
        "rows_per_benchmark": dg.MetadataValue.json(stats["rows_per_benchmark"]),
        "rows_per_source": dg.MetadataValue.md("| source | rows |\n|---|---|\n" + "\n".join(
            f"| {s} | {n} |" for s, n in per_source)),
        "refs": stats["refs"], "refs_in_corpus": stats["refs_in_corpus"],
        "refs_outside_corpus": stats["refs_outside_corpus"], "refs_unresolved": stats["refs_unresolved"],
        "superscript_refs": stats["superscript_refs"], "duplicates_dropped": stats["duplicates_dropped"],
        "build_seconds": round(seconds, 2),
        "preview": _md_table(table.select(["id", "legal_basis", "question"]).to_pylist(),
                             ["id", "legal_basis", "question"]),
        "path": dg.MetadataValue.path(str(path)),
    })


@dg.asset_check(asset=questions, blocking=True,
                description="Great Expectations suite schemas.expectations.benchmark_questions_suite; the question "
                            "count may drop by at most question_count_tolerance against the previous build")
def benchmark_questions_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                              benchmark_config: BenchmarkConfig) -> dg.AssetCheckResult:
    from pipelines.benchmarks.benchmark_table import validate_benchmark_table

    layout = storage.layout
    table = pq.read_table(questions_path(layout))
    manifest = json.loads(questions_manifest_path(layout).read_text()) if questions_manifest_path(layout).exists() else {}
    prev = manifest.get("previous_rows")
    min_rows = math.ceil(prev * (1 - benchmark_config.question_count_tolerance)) if prev else None
    report = validate_benchmark_table(table, min_rows=min_rows)
    context.log.info(report.summary())
    return dg.AssetCheckResult(passed=report.success, description=report.summary(), metadata={
        **report.to_metadata(), "previous_rows": prev if prev is not None else "none",
        "min_rows": min_rows if min_rows is not None else "none"})


# ----------------------------------------------------------------------------------------------
# staleness per corpus version


@dg.asset(key=PREFIX + ["staleness"], deps=[questions, pl_statutes.articles, pl_statutes.diff],
          partitions_def=versions, group_name=GROUP, kinds={"parquet"},
          description="Gold references the version does not support as they were: unit missing or repealed, "
                      "or its text (in force or announced) changed since the previous version "
                      "(schemas.arrow.BENCHMARK_STALENESS). Stale questions are left out of the evaluation.")
def staleness(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    from pipelines.benchmarks.staleness import check_staleness, flags_markdown, staleness_summary

    version = context.partition_key
    layout = storage.layout
    store = CorpusStore(layout)
    if not questions_path(layout).exists():
        raise dg.Failure("no benchmark questions table: materialize benchmarks/questions first")
    table = pq.read_table(questions_path(layout))
    prev = store.previous_version(ACT_ID, version)
    kw = {}
    if prev:
        diff_file = (store.built_dir(ACT_ID, version) or layout.version_dir(ACT_ID, version)) / f"diff_from_{prev}.parquet"
        kw = dict(previous_version=prev,
                  previous_articles=store.read(ACT_ID, prev, "articles", published_only=True),
                  previous_nodes=store.read(ACT_ID, prev, "nodes", published_only=True),
                  diff=pq.read_table(diff_file) if diff_file.exists() else None)
    flags = check_staleness(table, act_id=ACT_ID, version=version, articles=store.read(ACT_ID, version, "articles"),
                            nodes=store.read(ACT_ID, version, "nodes"), **kw)
    path = staleness_path(layout, ACT_ID, version)
    write_table(path, flags, "benchmark_staleness")
    summary = staleness_summary(table, flags, ACT_ID)
    context.log.info(f"{ACT_ID} {version} (vs {prev or 'no previous version'}): {summary['questions_checked']} questions, "
                     f"{summary['refs_checked']} gold refs checked; {summary['flagged_refs']} flagged, "
                     f"{summary['stale_questions']} questions stale "
                     + ", ".join(f"{k.removeprefix('refs_')} {v}" for k, v in summary.items()
                                 if k.startswith("refs_") and k != "refs_checked" and v))
    return dg.MaterializeResult(metadata={
        **summary, "previous_version": prev or "none", "dagster/row_count": flags.num_rows,
        "flags": dg.MetadataValue.md(flags_markdown(flags)),
        "path": dg.MetadataValue.path(str(path))})


# ----------------------------------------------------------------------------------------------
# retrieval evaluation


@dg.asset(key=PREFIX + ["retrieval_eval"], deps=[questions, staleness, pl_statutes.search_index],
          partitions_def=versions, group_name=GROUP, kinds={"parquet"},
          description="recall@1/5/10/50, MRR and NDCG@5 of every retriever and query style on the benchmark "
                      "questions with in-corpus gold (stale ones skipped), appended to the history "
                      "(schemas.arrow.RETRIEVAL_EVAL) with a plot.")
def retrieval_eval(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                   benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
    from pipelines.benchmarks.retrieval_eval import (
        EvalContext,
        EvalHistory,
        backend_search,
        evaluate_retrievers,
        metrics_markdown,
        plot_history,
        prime_query_cache,
        select_questions,
    )
    from pipelines.benchmarks.staleness import stale_question_ids
    from pipelines.retrieval.encoders import QueryCachingEncoder, get_encoder
    from pipelines.retrieval.interface import SearchError

    version = context.partition_key
    layout = storage.layout
    run_ts = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    stale_file = staleness_path(layout, ACT_ID, version)
    if not questions_path(layout).exists() or not stale_file.exists():
        raise dg.Failure(f"benchmarks/questions and benchmarks/staleness [{version}] must be materialized first")
    qset = benchmark_config.question_set()
    qs, skipped = select_questions(pq.read_table(questions_path(layout)), act_id=ACT_ID, question_set=qset,
                                   stale=stale_question_ids(pq.read_table(stale_file)))
    retrievers, styles = list(benchmark_config.retrievers), list(benchmark_config.query_styles)
    queries = [q.text(s) for q in qs for s in styles]
    # a cache of its own that holds every query of the evaluation (the shared one keeps 4096)
    encoder = QueryCachingEncoder(get_encoder(search_config.encoder), maxsize=max(4096, 2 * len(queries)))
    backend = search_config.open_backend(layout, act_id=ACT_ID, encoder=encoder)
    context.log.info(f"{ACT_ID} {version}: evaluating {len(qs)} questions ({sum(skipped.values())} stale skipped) × "
                     f"{len(retrievers)} retrievers × {len(styles)} query styles, encoder {encoder.id}, "
                     f"{type(backend).__name__}")
    t0 = time.perf_counter()
    if {"dense", "hybrid"} & set(retrievers):
        last = [0.0]

        def encoded(done: int, total: int) -> None:
            if done == total or done / total - last[0] >= 0.25:
                last[0] = done / total
                context.log.info(f"encoding queries {done}/{total}")

        prime_query_cache(encoder, queries, progress=encoded)
    encode_s = time.perf_counter() - t0
    ctx = EvalContext(run_id=context.run.run_id, run_ts=run_ts, act_id=ACT_ID, version=version, encoder=encoder.id,
                      backend=type(backend).__name__, question_set=qset.label, k=benchmark_config.k)
    try:
        rows = evaluate_retrievers(qs, backend_search(backend, act_id=ACT_ID, version=version), ctx,
                                   retrievers=retrievers, styles=styles, skipped_stale=skipped,
                                   progress=context.log.info)
    except SearchError as exc:  # e.g. the version is not indexed: name it, append nothing
        raise dg.Failure(f"{ACT_ID} {version}: cannot search the index ({exc}); materialize "
                         "pl/kc/search_index for this version first") from exc
    history = EvalHistory(eval_root(layout))
    path = history.append(rows)
    png = plot_history(history.read(), question_set=qset.label)
    plot_path = eval_root(layout) / "history.png"
    atomic_write_bytes(plot_path, png)
    seconds = time.perf_counter() - t0
    best = max((r for r in rows.to_pylist() if r["mrr"] is not None), key=lambda r: r["mrr"], default=None)
    context.log.info(f"{ACT_ID} {version}: evaluation done in {seconds:.0f}s (query encoding {encode_s:.0f}s); "
                     + (f"best MRR {best['mrr']:.3f} ({best['retriever']}, {best['query_style']})" if best else "no questions"))
    return dg.MaterializeResult(metadata={
        "questions": len(qs), "skipped_stale": sum(skipped.values()), "question_set": qset.label,
        "encoder": encoder.id, "backend": type(backend).__name__, "k": benchmark_config.k,
        "seconds": round(seconds, 1), "query_encode_seconds": round(encode_s, 1), "run_id": ctx.run_id,
        "metrics": dg.MetadataValue.md(metrics_markdown(rows)),
        **({f"mrr_{r['retriever']}_{r['query_style'].replace('+', '_')}": round(r["mrr"], 4)
            for r in rows.to_pylist() if r["mrr"] is not None and r["benchmark"] == "pl_exams"}),
        "history_rows": history.read().num_rows,
        "history_plot": dg.MetadataValue.md(f"![retrieval history](data:image/png;base64,{base64.b64encode(png).decode()})"),
        "history_plot_path": dg.MetadataValue.path(str(plot_path)),
        "path": dg.MetadataValue.path(str(path)),
    })


@dg.asset_check(asset=retrieval_eval, blocking=False, partitions_def=versions,
                description="No metric of this run fell by more than regression_margin (default 0.02) against the "
                            "previous run of the same benchmark, retriever, query style and question set")
def retrieval_no_regression(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                            benchmark_config: BenchmarkConfig) -> dg.AssetCheckResult:
    from pipelines.benchmarks.retrieval_eval import EvalHistory, changes_markdown, compare_to_previous, regressions

    version = context.partition_key
    history = EvalHistory(eval_root(storage.layout)).read()
    run_id = context.run.run_id
    mine = [r for r in history.to_pylist() if r["version"].isoformat() == version]
    if not any(r["run_id"] == run_id for r in mine):  # check launched on its own: judge the newest run
        if not mine:
            return dg.AssetCheckResult(passed=True, description=f"no evaluation of {version} in the history yet")
        run_id = max(mine, key=lambda r: r["run_ts"])["run_id"]
    margin = benchmark_config.regression_margin
    changes = compare_to_previous(history, run_id, version=version)
    bad = regressions(changes, margin)
    compared = [c for c in changes if c.delta is not None]
    if bad:
        desc = f"{len(bad)} metric(s) fell by more than {margin}: " + "; ".join(
            f"{c.retriever}/{c.query_style} {c.metric} {c.previous:.3f} → {c.current:.3f}" for c in bad[:6])
    elif compared:
        desc = f"no metric fell by more than {margin} ({len(compared)} compared with the previous run)"
    else:
        desc = "first run of this question set: nothing to compare"
    context.log.info(desc)
    return dg.AssetCheckResult(passed=not bad, description=desc, metadata={
        "regressions": len(bad), "compared_metrics": len(compared), "margin": margin, "run_id": run_id,
        "previous_run_id": next((c.previous_run_id for c in changes if c.previous_run_id), None) or "none",
        "changes": dg.MetadataValue.md(changes_markdown([c for c in changes if c.delta is not None] or changes, margin))})


# ----------------------------------------------------------------------------------------------
# job and schedule

ASSETS = [questions, staleness, retrieval_eval]
CHECKS = [benchmark_questions_valid, retrieval_no_regression]
benchmark_job = dg.define_asset_job(
    "benchmark_nightly", selection=dg.AssetSelection.assets(*ASSETS), partitions_def=versions,
    description="Rebuild the benchmark questions, flag stale gold references and evaluate every retriever "
                "for one corpus version (the schedule picks the serving version).")


@dg.schedule(job=benchmark_job, cron_schedule="0 2 * * *", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Nightly benchmark regeneration and retrieval evaluation of the serving pl:kc version.")
def benchmark_nightly_schedule(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
    serving = CorpusStore(storage.layout).current_version(ACT_ID)
    if serving is None:
        return dg.SkipReason(f"no {ACT_ID} version is served yet (run `lexpipe run`)")
    if not context.instance.has_dynamic_partition(versions.name, serving):
        return dg.SkipReason(f"{ACT_ID} {serving} is served but not a {versions.name} partition of this instance")
    when = context.scheduled_execution_time
    day = (when or dt.datetime.now(dt.timezone.utc)).date().isoformat()
    return dg.RunRequest(partition_key=serving, run_key=f"{serving}@{day}",
                         tags={"lexpipe/serving_version": serving})


SCHEDULES = [benchmark_nightly_schedule]
