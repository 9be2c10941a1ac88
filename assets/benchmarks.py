"""Benchmarks as Dagster assets: the question table, its staleness per corpus version, and the
nightly retrieval evaluation with its history.

Thin bindings only: the work happens in ``pipelines.benchmarks.nightly`` (the same steps the
Prefect ``benchmark`` flow runs) over ``benchmark_table``, ``staleness`` and ``retrieval_eval``.

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
import warnings

import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13 (see assets/pl_statutes.py).
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

import pyarrow.parquet as pq

from assets import pl_statutes
from pipelines.benchmarks.legal_basis import EXAM_ACT

# The exam benchmark's partitions are the versions of this act (legal_basis.EXAM_ACT)
BENCHMARK_ACT = pl_statutes.family(EXAM_ACT)
ACT_ID = BENCHMARK_ACT.act_id
versions = BENCHMARK_ACT.versions
from assets.resources import BenchmarkConfig, CorpusStorage, SearchConfig
from pipelines.benchmarks.nightly import (  # noqa: F401  (the paths are re-exported for importers)
    BenchmarkInputError,
    eval_root,
    questions_manifest_path,
    questions_path,
    staleness_path,
)
from pipelines.statutes.store import CorpusStore

GROUP = "benchmarks"
PREFIX = ["benchmarks"]


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

    from pipelines.benchmarks.nightly import question_table_step

    built = question_table_step(storage.layout, Path(benchmark_config.sample_dir))
    path, previous_rows, stats, seconds = built.path, built.previous_rows, built.stats, built.seconds
    table = pq.read_table(path)
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
    from pipelines.benchmarks.nightly import check_question_table

    checked = check_question_table(storage.layout, count_tolerance=benchmark_config.question_count_tolerance)
    report, prev, min_rows = checked.report, checked.previous_rows, checked.min_rows
    context.log.info(report.summary())
    return dg.AssetCheckResult(passed=report.success, description=report.summary(), metadata={
        **report.to_metadata(), "previous_rows": prev if prev is not None else "none",
        "min_rows": min_rows if min_rows is not None else "none"})


# ----------------------------------------------------------------------------------------------
# staleness per corpus version


@dg.asset(key=PREFIX + ["staleness"], deps=[questions, BENCHMARK_ACT.articles, BENCHMARK_ACT.diff],
          partitions_def=versions, group_name=GROUP, kinds={"parquet"},
          description="Gold references the version does not support as they were: unit missing or repealed, "
                      "or its text (in force or announced) changed since the previous version "
                      "(schemas.arrow.BENCHMARK_STALENESS). Stale questions are left out of the evaluation.")
def staleness(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    from pipelines.benchmarks.nightly import staleness_step
    from pipelines.benchmarks.staleness import flags_markdown

    version = context.partition_key
    try:
        out = staleness_step(storage.layout, act_id=ACT_ID, version=version)
    except BenchmarkInputError as exc:
        raise dg.Failure(f"{exc} (materialize benchmarks/questions first)") from exc
    flags, summary, prev, path = out.flags, out.summary, out.previous_version, out.path
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


@dg.asset(key=PREFIX + ["retrieval_eval"], deps=[questions, staleness, BENCHMARK_ACT.search_index],
          partitions_def=versions, group_name=GROUP, kinds={"parquet"},
          description="recall@1/5/10/50, MRR and NDCG@5 of every retriever and query style on the benchmark "
                      "questions with in-corpus gold (stale ones skipped), appended to the history "
                      "(schemas.arrow.RETRIEVAL_EVAL) with a plot.")
def retrieval_eval(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                   benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
    from pipelines.benchmarks.nightly import retrieval_eval_step
    from pipelines.benchmarks.retrieval_eval import metrics_markdown

    version = context.partition_key
    try:
        out = retrieval_eval_step(
            storage.layout, act_id=ACT_ID, version=version, run_id=context.run.run_id,
            encoder_name=search_config.encoder,
            open_backend=lambda encoder: search_config.open_backend(storage.layout, act_id=ACT_ID, encoder=encoder),
            question_set=benchmark_config.question_set(), retrievers=benchmark_config.retrievers,
            styles=benchmark_config.query_styles, k=benchmark_config.k, progress=context.log.info)
    except BenchmarkInputError as exc:  # inputs missing or the version not indexed: name it, append nothing
        raise dg.Failure(f"{exc} (materialize benchmarks/questions, benchmarks/staleness and pl/kc/search_index "
                         f"for {version} first)") from exc
    rows, best = out.rows, out.best
    context.log.info(f"{ACT_ID} {version}: evaluation done in {out.seconds:.0f}s (query encoding {out.encode_seconds:.0f}s); "
                     + (f"best MRR {best['mrr']:.3f} ({best['retriever']}, {best['query_style']})" if best else "no questions"))
    return dg.MaterializeResult(metadata={
        "questions": out.questions, "skipped_stale": out.skipped_stale, "question_set": out.question_set,
        "encoder": out.encoder, "backend": out.backend, "k": benchmark_config.k,
        "seconds": round(out.seconds, 1), "query_encode_seconds": round(out.encode_seconds, 1),
        "run_id": context.run.run_id,
        "metrics": dg.MetadataValue.md(metrics_markdown(rows)),
        **({f"mrr_{r['retriever']}_{r['query_style'].replace('+', '_')}": round(r["mrr"], 4)
            for r in rows.to_pylist() if r["mrr"] is not None and r["benchmark"] == "pl_exams"}),
        "history_rows": out.history_rows,
        "history_plot": dg.MetadataValue.md(f"![retrieval history](data:image/png;base64,{base64.b64encode(out.png).decode()})"),
        "history_plot_path": dg.MetadataValue.path(str(out.plot_path)),
        "path": dg.MetadataValue.path(str(out.path)),
    })


@dg.asset_check(asset=retrieval_eval, blocking=False, partitions_def=versions,
                description="No metric of this run fell by more than regression_margin (default 0.02) against the "
                            "previous run of the same benchmark, retriever, query style and question set")
def retrieval_no_regression(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                            benchmark_config: BenchmarkConfig) -> dg.AssetCheckResult:
    from pipelines.benchmarks.nightly import check_regressions
    from pipelines.benchmarks.retrieval_eval import changes_markdown

    margin = benchmark_config.regression_margin
    checked = check_regressions(storage.layout, version=context.partition_key, run_id=context.run.run_id,
                                margin=margin)
    context.log.info(checked.description)
    if not checked.changes:
        return dg.AssetCheckResult(passed=True, description=checked.description)
    compared = [c for c in checked.changes if c.delta is not None]
    return dg.AssetCheckResult(passed=checked.passed, description=checked.description, metadata={
        "regressions": len(checked.regressions), "compared_metrics": checked.compared, "margin": margin,
        "run_id": checked.run_id,
        "previous_run_id": next((c.previous_run_id for c in checked.changes if c.previous_run_id), None) or "none",
        "changes": dg.MetadataValue.md(changes_markdown(compared or checked.changes, margin))})


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

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=[benchmark_job], schedules=SCHEDULES)
