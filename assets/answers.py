"""The answer job as a Dagster asset: every Civil Code exam question answered with citations, scored.

Thin binding of ``pipelines.answers``: with ``LEXPIPE_LLM_BASE_URL`` and ``LEXPIPE_LLM_MODEL`` set,
the gAIus agent answers through that OpenAI-compatible endpoint; otherwise the offline answerer
(the baseline an LLM must beat). Stale questions of the version (``benchmarks/staleness``) are
skipped, so a changed article never scores against an outdated key. Each run writes
``$LEXPIPE_HOME/benchmarks/answers/<run_id>.parquet`` (+ ``.json`` with the scores).
"""

import datetime as dt
import os
import time

import dagster as dg
import pyarrow.parquet as pq

from assets.benchmarks import GROUP, PREFIX, questions, questions_path, staleness, staleness_path
from assets.pl_statutes import ACT_ID, search_index, versions
from assets.resources import CorpusStorage, SearchConfig

REPORT_YEARS = (2021, 2022, 2023)  # the years BENCHMARKS.md compares with the gAIus paper


def _llm_settings():
    """LLM endpoint settings when configured, else None (offline answerer)."""
    if not (os.environ.get("LEXPIPE_LLM_BASE_URL") and os.environ.get("LEXPIPE_LLM_MODEL")):
        return None
    from pipelines.answers.llm_client import LLMSettings

    return LLMSettings()


@dg.asset(key=PREFIX + ["answers"], deps=[questions, staleness, search_index], partitions_def=versions,
          group_name=GROUP, kinds={"parquet"}, pool="llm",
          description="Answers with cited articles for every Civil Code multiple-choice question (gAIus agent "
                      "with an LLM endpoint, else the offline answerer), scored: answer, context, joint.")
def answers(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.answers.answer_job import questions_from_benchmark, results_table, score_rows, write_run
    from pipelines.benchmarks.staleness import stale_question_ids
    from pipelines.retrieval.interface import Filters, SearchRequest

    version = context.partition_key
    layout = storage.layout
    stale_file = staleness_path(layout, ACT_ID, version)
    if not questions_path(layout).exists() or not stale_file.exists():
        raise dg.Failure(f"benchmarks/questions and benchmarks/staleness [{version}] must be materialized first")
    selected, counts = questions_from_benchmark(pq.read_table(questions_path(layout)), act_id=ACT_ID,
                                                stale_ids=stale_question_ids(pq.read_table(stale_file)))
    backend = search_config.open_backend(layout, act_id=ACT_ID)
    filters = Filters(act_ids=(ACT_ID,), version=version)

    def search(query: str, k: int):
        return backend.search(SearchRequest(query[:4000], k, "hybrid", filters))

    llm = _llm_settings()
    t0 = time.perf_counter()
    qs = [s.question for s in selected]
    if llm is None:
        from pipelines.answers.offline_answerer import ArticleStore, OfflineAnswerer

        store = ArticleStore.from_parquet(layout.version_dir(ACT_ID, version) / "articles.parquet")
        answerer, name = OfflineAnswerer(search, store, stats=store.stats), "offline"
        results = []
        for i, q in enumerate(qs, 1):
            results.append(answerer.answer(q))
            if i % 100 == 0 or i == len(qs):
                context.log.info(f"answered {i}/{len(qs)} ({time.perf_counter() - t0:.0f}s)")
    else:
        from pipelines.answers.extraction import known_unit_ids_from_corpus
        from pipelines.answers.gaius_agent import answer_questions

        name = f"gaius:{llm.model}"
        context.log.info(f"answering {len(qs)} questions with the gAIus agent on {llm.model}")
        results = answer_questions(qs, search, llm,
                                   known_unit_ids=known_unit_ids_from_corpus(layout.version_dir(ACT_ID, version)))
    seconds = time.perf_counter() - t0
    run_id = f"{version}_{name.replace(':', '-').replace('/', '-')}_{context.run.run_id[:8]}"
    table = results_table(selected, results, run_id=run_id, answerer=name, corpus_version=version)
    scores = score_rows(selected, results, {
        "all": lambda s: True,
        f"{REPORT_YEARS[0]}–{REPORT_YEARS[-1]}": lambda s: s.year in REPORT_YEARS,
    })
    path = write_run(layout.benchmarks / "answers", table, scores, run_id=run_id)
    rows = "\n".join(f"| {g} | {v['n']} | {v['answer']:.3f} | {v['context']:.3f} | {v['joint']:.3f} | {v['failed']} |"
                     for g, v in scores.items())
    wrong = [r for r in table.to_pylist() if not r["answer_correct"]][:10]
    context.log.info(f"{ACT_ID} {version}: {name} " + "; ".join(
        f"{g}: answer {v['answer']:.3f}, context {v['context']:.3f}, joint {v['joint']:.3f} (n={v['n']})"
        for g, v in scores.items()))
    return dg.MaterializeResult(metadata={
        "answerer": name, "questions": len(qs), "stale_skipped": counts["stale_skipped"],
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
    from pipelines.corpus_store import CorpusStore

    serving = CorpusStore(storage.layout).current_version(ACT_ID)
    if serving is None or not context.instance.has_dynamic_partition(versions.name, serving):
        return dg.SkipReason(f"no indexed {ACT_ID} version is served yet (run `lexpipe run`)")
    day = (context.scheduled_execution_time or dt.datetime.now(dt.timezone.utc)).date().isoformat()
    return dg.RunRequest(partition_key=serving, run_key=f"answers:{serving}@{day}")


ASSETS = [answers]
JOBS = [answers_job]
SCHEDULES = [answers_nightly_schedule]
