"""The answer job as a Dagster asset: every Civil Code exam question answered with citations, scored.

Thin binding of ``pipelines.answers.answer_run`` (the step the Prefect ``answers`` flow runs too):
with ``LEXPIPE_LLM_BASE_URL`` and ``LEXPIPE_LLM_MODEL`` set, the gAIus agent answers through that
OpenAI-compatible endpoint; otherwise the offline answerer (the baseline an LLM must beat). Stale questions of the version (``benchmarks/staleness``) are
skipped, so a changed article never scores against an outdated key. Each run writes
``$LEXPIPE_HOME/benchmarks/answers/<run_id>.parquet`` (+ ``.json`` with the scores).
"""

import datetime as dt

import dagster as dg

from assets.benchmarks import GROUP, PREFIX, questions, staleness
from assets.benchmarks import BENCHMARK_ACT

ACT_ID, search_index, versions = BENCHMARK_ACT.act_id, BENCHMARK_ACT.search_index, BENCHMARK_ACT.versions
from assets.resources import CorpusStorage, SearchConfig
from pipelines.answers.answer_run import llm_settings_from_env


@dg.asset(key=PREFIX + ["answers"], deps=[questions, staleness, search_index], partitions_def=versions,
          group_name=GROUP, kinds={"parquet"}, pool="llm",
          description="Answers with cited articles for every Civil Code multiple-choice question (gAIus agent "
                      "with an LLM endpoint, else the offline answerer), scored: answer, context, joint.")
def answers(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.answers.answer_run import answers_step
    from pipelines.benchmarks.nightly import BenchmarkInputError

    version = context.partition_key
    layout = storage.layout
    llm = llm_settings_from_env()
    if llm is not None:
        context.log.info(f"answering with the gAIus agent on {llm.model}")
    try:
        out = answers_step(layout, act_id=ACT_ID, version=version,
                           backend=search_config.open_backend(layout, act_id=ACT_ID), run_tag=context.run.run_id,
                           llm=llm, progress=context.log.info)
    except BenchmarkInputError as exc:
        raise dg.Failure(f"{exc} (materialize benchmarks/questions and benchmarks/staleness first)") from exc
    name, table, scores, path, counts, seconds = out.answerer, out.table, out.scores, out.path, out.counts, out.seconds
    rows = "\n".join(f"| {g} | {v['n']} | {v['answer']:.3f} | {v['context']:.3f} | {v['joint']:.3f} | {v['failed']} |"
                     for g, v in scores.items())
    wrong = [r for r in table.to_pylist() if not r["answer_correct"]][:10]
    context.log.info(f"{ACT_ID} {version}: {name} " + "; ".join(
        f"{g}: answer {v['answer']:.3f}, context {v['context']:.3f}, joint {v['joint']:.3f} (n={v['n']})"
        for g, v in scores.items()))
    return dg.MaterializeResult(metadata={
        "answerer": name, "questions": out.questions, "stale_skipped": counts["stale_skipped"],
        "invalid_questions": counts["invalid"], "seconds": round(seconds, 1),
        **{f"{k}_{g.replace('–', '_')}": v[k] for g, v in scores.items() for k in ("answer", "context", "joint")},
        "scores": dg.MetadataValue.md("| questions | n | answer | context | joint | failed |\n|---|---:|---:|---:|---:|---:|\n" + rows),
        "first_wrong": dg.MetadataValue.md("| question | gold | chosen | cited |\n|---|---|---|---|\n" + "\n".join(
            f"| {r['question_id']} | {r['gold_option']} | {r['option']} | {', '.join(r['cited_unit_ids'][:2])} |"
            for r in wrong)),
        "path": dg.MetadataValue.path(str(path)),
    })


answers_job = dg.define_asset_job(
    "answers_nightly", selection=dg.AssetSelection.assets(answers), partitions_def=versions,
    description="Answer and score every Civil Code question against one corpus version.")


@dg.schedule(job=answers_job, cron_schedule="0 3 * * *", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Nightly answer job on the serving pl:kc version (after the 02:00 benchmarks).")
def answers_nightly_schedule(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
    from pipelines.statutes.store import CorpusStore

    serving = CorpusStore(storage.layout).current_version(ACT_ID)
    if serving is None or not context.instance.has_dynamic_partition(versions.name, serving):
        return dg.SkipReason(f"no indexed {ACT_ID} version is served yet (run `lexpipe run`)")
    day = (context.scheduled_execution_time or dt.datetime.now(dt.timezone.utc)).date().isoformat()
    return dg.RunRequest(partition_key=serving, run_key=f"answers:{serving}@{day}")


ASSETS = [answers]
JOBS = [answers_job]
SCHEDULES = [answers_nightly_schedule]

defs = dg.Definitions(assets=ASSETS, jobs=JOBS, schedules=SCHEDULES)
