"""Benchmarks as Dagster assets: the question table, and per Polish act its staleness per corpus
version and the nightly retrieval evaluation with its history.

Thin bindings only: the work happens in ``pipelines.benchmarks.nightly`` (the same steps the
Prefect ``benchmark`` flow runs) over ``benchmark_table``, ``staleness`` and ``retrieval_eval``.

    benchmarks/questions ─[benchmark_questions_valid: GX, blocking]
        ├→ benchmarks/pl/kc/staleness (per pl:kc changeset)  → benchmarks/pl/kc/retrieval_eval [retrieval_no_regression]
        ├→ benchmarks/pl/kpc/staleness (per pl:kpc changeset) → benchmarks/pl/kpc/retrieval_eval …
        └→ … one family per curated Polish act (``BENCHMARKS``); pl/statutes/{articles,diff,search_index} upstream

The question table is one (its gold references resolve to every act of the registry); an act's
staleness and evaluation are partitioned by that act's changesets (``pl_<slug>_changesets``: the
keys of ``pl_changesets`` that are text states of the act, ``2025-11-13_kc``), so a new version of
the Kodeks pracy re-checks only the k.p. questions and each partition maps one to one onto the
``pl/statutes/*`` partition it reads. The ``benchmark_nightly_<act>`` jobs run for the serving
version every night (02:00 Europe/Warsaw). The regression check is not blocking: a worse metric is
news, not a reason to stop serving the corpus.

Why these stay per act while the statutes are one group (issue 24, point 5): a benchmark family
exists only for a curated act with exam ties (four of them), not for each of the thousands of
discovered acts; its evaluation history, regression check and plots are series of one act; and
one asset over every act's questions would re-evaluate every act when one changes. Their
partitions are a subset of ``pl_changesets`` (identity mapping), so lineage stays exact; a
``pl_statutes_refresh`` run cannot carry them (one job, one partitions definition): the nightly
job and ``lexpipe run`` bring staleness up to date after a refresh.
"""

import base64
import datetime as dt
import warnings
from dataclasses import dataclass
from typing import Any

import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13 (see assets/pl_statutes.py).
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

import pyarrow.parquet as pq

from assets import pl_statutes
from assets.resources import BenchmarkConfig, CorpusStorage, SearchConfig
from connectors.eli_listing import changeset_key, parse_changeset_key
from schemas.acts import Act, registry
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
          description="Benchmark questions with parsed gold legal references into every registry act (exam PDFs, "
                      "compiled exam JSONL, GerLayQA), de-duplicated: schemas.arrow.BENCHMARK_QUESTIONS.")
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
        "refs_in_corpus_per_act": dg.MetadataValue.json(stats.get("refs_in_corpus_per_act", {})),
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
# one act's staleness, evaluation, regression check, job and schedule


@dataclass(frozen=True)
class ActBenchmarks:
    """The benchmark assets of one Polish act, partitioned by that act's changesets."""

    act: Act
    versions: dg.DynamicPartitionsDefinition  # pl_<slug>_changesets: keys "<version>_<slug>"
    staleness: dg.AssetsDefinition
    retrieval_eval: dg.AssetsDefinition
    retrieval_no_regression: dg.AssetChecksDefinition
    job: Any
    schedule: Any

    @property
    def act_id(self) -> str:
        return self.act.id

    @property
    def assets(self) -> list[dg.AssetsDefinition]:
        return [self.staleness, self.retrieval_eval]

    def key(self, version: str) -> str:
        """The partition key of a version of the act: ``2025-11-13`` → ``2025-11-13_kc``."""
        return changeset_key(version, self.act.slug)


def _version(key: str) -> str:
    return parse_changeset_key(key)[0]


def act_benchmarks(act: Act) -> ActBenchmarks:
    """Staleness → retrieval evaluation (+ regression check), job and nightly schedule of one act."""
    ACT_ID = act.id
    versions = dg.DynamicPartitionsDefinition(name=f"{act.key}_changesets")
    prefix = PREFIX + [act.jurisdiction, act.slug]

    @dg.asset(key=prefix + ["staleness"], deps=[questions, pl_statutes.articles, pl_statutes.diff],
              partitions_def=versions, group_name=GROUP, kinds={"parquet"},
              description=f"Gold references into {ACT_ID} the version does not support as they were: unit missing "
                          "or repealed, or its text (in force or announced) changed since the previous version "
                          "(schemas.arrow.BENCHMARK_STALENESS). Stale questions are left out of the evaluation.")
    def staleness(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
        from pipelines.benchmarks.nightly import staleness_step
        from pipelines.benchmarks.staleness import flags_markdown

        version = _version(context.partition_key)
        try:
            out = staleness_step(storage.layout, act_id=ACT_ID, version=version)
        except BenchmarkInputError as exc:
            raise dg.Failure(f"{exc} (materialize benchmarks/questions first)") from exc
        flags, summary, prev, path = out.flags, out.summary, out.previous_version, out.path
        context.log.info(f"{ACT_ID} {version} (vs {prev or 'no previous version'}): {summary['questions_checked']} "
                         f"questions, {summary['refs_checked']} gold refs checked; {summary['flagged_refs']} flagged, "
                         f"{summary['stale_questions']} questions stale "
                         + ", ".join(f"{k.removeprefix('refs_')} {v}" for k, v in summary.items()
                                     if k.startswith("refs_") and k != "refs_checked" and v))
        return dg.MaterializeResult(metadata={
            **summary, "act_id": ACT_ID, "version": version, "previous_version": prev or "none",
            "dagster/row_count": flags.num_rows,
            "flags": dg.MetadataValue.md(flags_markdown(flags)),
            "path": dg.MetadataValue.path(str(path))})

    @dg.asset(key=prefix + ["retrieval_eval"], deps=[questions, staleness, pl_statutes.search_index],
              partitions_def=versions, group_name=GROUP, kinds={"parquet"},
              description=f"recall@1/5/10/50, MRR and NDCG@5 of every retriever and query style on the questions "
                          f"with in-corpus gold in {ACT_ID} (stale ones skipped), searched within the act and, for "
                          "the serving version, across every act of the jurisdiction; appended to the history "
                          "(schemas.arrow.RETRIEVAL_EVAL) with a plot.")
    def retrieval_eval(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                       benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
        from pipelines.benchmarks.nightly import retrieval_eval_step
        from pipelines.benchmarks.retrieval_eval import metrics_markdown

        version = _version(context.partition_key)
        try:
            out = retrieval_eval_step(
                storage.layout, act_id=ACT_ID, version=version, run_id=context.run.run_id,
                encoder_name=search_config.encoder,
                open_backend=lambda encoder: search_config.open_backend(storage.layout, act_id=ACT_ID, encoder=encoder),
                open_across_backend=lambda encoder: search_config.open_across_acts(storage.layout, act_id=ACT_ID,
                                                                                   encoder=encoder),
                question_set=benchmark_config.question_set(), retrievers=benchmark_config.retrievers,
                styles=benchmark_config.query_styles, k=benchmark_config.k, scopes=benchmark_config.scopes,
                progress=context.log.info)
        except BenchmarkInputError as exc:  # inputs missing or the version not indexed: name it, append nothing
            raise dg.Failure(f"{exc} (materialize benchmarks/questions, {'/'.join(staleness.key.path)} and "
                             f"{'/'.join(pl_statutes.search_index.key.path)} for {context.partition_key} first)"
                             ) from exc
        rows, best = out.rows, out.best
        context.log.info(f"{ACT_ID} {version}: evaluation done in {out.seconds:.0f}s (query encoding "
                         f"{out.encode_seconds:.0f}s); " + (f"best MRR {best['mrr']:.3f} ({best['retriever']}, "
                                                            f"{best['query_style']}, {best['scope']})"
                                                            if best else "no questions"))
        return dg.MaterializeResult(metadata={
            "act_id": ACT_ID, "version": version, "questions": out.questions, "skipped_stale": out.skipped_stale,
            "question_set": out.question_set, "scopes": ", ".join(out.scopes),
            "encoder": out.encoder, "backend": out.backend, "k": benchmark_config.k,
            "seconds": round(out.seconds, 1), "query_encode_seconds": round(out.encode_seconds, 1),
            "run_id": context.run.run_id,
            "metrics": dg.MetadataValue.md(metrics_markdown(rows)),
            **({f"mrr_{r['retriever']}_{r['query_style'].replace('+', '_')}_{r['scope']}": round(r["mrr"], 4)
                for r in rows.to_pylist() if r["mrr"] is not None and r["benchmark"] == "pl_exams"}),
            "history_rows": out.history_rows,
            "history_plot": dg.MetadataValue.md(
                f"![retrieval history](data:image/png;base64,{base64.b64encode(out.png).decode()})"),
            "history_plot_path": dg.MetadataValue.path(str(out.plot_path)),
            "path": dg.MetadataValue.path(str(out.path)),
        })

    @dg.asset_check(asset=retrieval_eval, name="retrieval_no_regression", blocking=False, partitions_def=versions,
                    description="No metric of this run fell by more than regression_margin (default 0.02) against "
                                "the previous run of the same act, scope, benchmark, retriever, query style and "
                                "question set")
    def retrieval_no_regression(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                                benchmark_config: BenchmarkConfig) -> dg.AssetCheckResult:
        from pipelines.benchmarks.nightly import check_regressions
        from pipelines.benchmarks.retrieval_eval import changes_markdown

        margin = benchmark_config.regression_margin
        checked = check_regressions(storage.layout, act_id=ACT_ID, version=_version(context.partition_key),
                                    run_id=context.run.run_id, margin=margin)
        context.log.info(checked.description)
        if not checked.changes:
            return dg.AssetCheckResult(passed=True, description=checked.description)
        compared = [c for c in checked.changes if c.delta is not None]
        return dg.AssetCheckResult(passed=checked.passed, description=checked.description, metadata={
            "regressions": len(checked.regressions), "compared_metrics": checked.compared, "margin": margin,
            "run_id": checked.run_id,
            "previous_run_id": next((c.previous_run_id for c in checked.changes if c.previous_run_id), None) or "none",
            "changes": dg.MetadataValue.md(changes_markdown(compared or checked.changes, margin))})

    job = dg.define_asset_job(
        f"benchmark_nightly_{act.key}", selection=dg.AssetSelection.assets(questions, staleness, retrieval_eval),
        partitions_def=versions,
        description=f"Rebuild the benchmark questions, flag stale gold references into {ACT_ID} and evaluate every "
                    "retriever for one of its corpus versions (the schedule picks the serving version).")

    def nightly(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
        serving = CorpusStore(storage.layout).current_version(ACT_ID)
        if serving is None:
            return dg.SkipReason(f"no {ACT_ID} version is served yet (run `lexpipe run`)")
        key = changeset_key(serving, act.slug)
        if not context.instance.has_dynamic_partition(versions.name, key):
            return dg.SkipReason(f"{ACT_ID} {serving} is served but {key} is not a {versions.name} partition of "
                                 "this instance")
        when = context.scheduled_execution_time
        day = (when or dt.datetime.now(dt.timezone.utc)).date().isoformat()
        return dg.RunRequest(partition_key=key, run_key=f"{ACT_ID}:{serving}@{day}",
                             tags={"lexpipe/serving_version": serving, "lexpipe/act": ACT_ID})

    schedule = dg.schedule(
        job=job, cron_schedule="0 2 * * *", execution_timezone="Europe/Warsaw",
        name=f"benchmark_nightly_{act.key}_schedule", default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Nightly benchmark regeneration and retrieval evaluation of the serving {ACT_ID} version.")(nightly)
    return ActBenchmarks(act, versions, staleness, retrieval_eval, retrieval_no_regression, job, schedule)


# every curated Polish act (acts.toml): the exam question table resolves gold references to them; an
# act discovered from the ELI listing has no exam ties and no benchmark family
BENCHMARKS: dict[str, ActBenchmarks] = {a.id: act_benchmarks(a) for a in registry().curated().of_source("eli")}


def of_act(act_id: str) -> ActBenchmarks:
    """The benchmark family of a Polish registry act (KeyError naming the loaded ones)."""
    try:
        return BENCHMARKS[act_id]
    except KeyError:
        raise KeyError(f"no benchmark family for {act_id!r}; loaded: {', '.join(BENCHMARKS)}") from None


ASSETS = [questions, *(a for b in BENCHMARKS.values() for a in b.assets)]
CHECKS = [benchmark_questions_valid, *(b.retrieval_no_regression for b in BENCHMARKS.values())]
JOBS = [b.job for b in BENCHMARKS.values()]
SCHEDULES = [b.schedule for b in BENCHMARKS.values()]

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS, schedules=SCHEDULES)
