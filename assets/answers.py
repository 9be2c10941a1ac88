"""The answer job as Dagster assets: every exam question citing a Polish act answered with citations
and scored, one asset per curated act (``benchmarks/<jur>/<slug>/answers``, partitioned like the act's
benchmarks: ``pl_<slug>_changesets``, keys ``<version>_<slug>``).

Thin binding of ``pipelines.answers.answer_run`` (the step the Prefect ``answers`` flow runs too):
with ``LEXPIPE_LLM_BASE_URL`` and ``LEXPIPE_LLM_MODEL`` set, the gAIus agent answers through that
OpenAI-compatible endpoint; otherwise the offline answerer (the baseline an LLM must beat). Stale
questions of the version (the act's ``staleness``) are skipped, so a changed article never scores
against an outdated key. Each run writes ``$LEXPIPE_HOME/benchmarks/answers/<run_id>.parquet``
(+ ``.json`` with the scores).
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any

import dagster as dg

from assets import pl_statutes
from assets.benchmarks import BENCHMARKS, GROUP, PREFIX, ActBenchmarks, questions
from assets.resources import CorpusStorage, SearchConfig
from connectors.eli_listing import changeset_key, parse_changeset_key
from pipelines.answers.answer_run import llm_settings_from_env


@dataclass(frozen=True)
class ActAnswers:
    bench: ActBenchmarks
    answers: dg.AssetsDefinition
    job: Any
    schedule: Any

    @property
    def act_id(self) -> str:
        return self.bench.act_id


def act_answers(bench: ActBenchmarks) -> ActAnswers:
    """The answer asset, job and nightly schedule of one Polish act."""
    act, ACT_ID, versions, search_index = bench.act, bench.act_id, bench.versions, pl_statutes.search_index

    @dg.asset(key=PREFIX + [act.jurisdiction, act.slug, "answers"], deps=[questions, bench.staleness, search_index],
              partitions_def=versions, group_name=GROUP, kinds={"parquet"}, pool="llm",
              description=f"Answers with cited units for every multiple-choice exam question citing {ACT_ID} (gAIus "
                          "agent with an LLM endpoint, else the offline answerer), scored: answer, context, joint.")
    def answers(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig) -> dg.MaterializeResult:
        from pipelines.answers.answer_run import answers_step
        from pipelines.benchmarks.nightly import BenchmarkInputError

        version = parse_changeset_key(context.partition_key)[0]
        layout = storage.layout
        llm = llm_settings_from_env()
        if llm is not None:
            context.log.info(f"answering with the gAIus agent on {llm.model}")
        try:
            out = answers_step(layout, act_id=ACT_ID, version=version,
                               backend=search_config.open_backend(layout, act_id=ACT_ID), run_tag=context.run.run_id,
                               llm=llm, progress=context.log.info)
        except BenchmarkInputError as exc:
            raise dg.Failure(f"{exc} (materialize benchmarks/questions and "
                             f"{'/'.join(bench.staleness.key.path)} first)") from exc
        name, table, scores, path, counts, seconds = out.answerer, out.table, out.scores, out.path, out.counts, out.seconds
        rows = "\n".join(f"| {g} | {v['n']} | {v['answer']:.3f} | {v['context']:.3f} | {v['joint']:.3f} | {v['failed']} |"
                         for g, v in scores.items())
        wrong = [r for r in table.to_pylist() if not r["answer_correct"]][:10]
        context.log.info(f"{ACT_ID} {version}: {name} " + "; ".join(
            f"{g}: answer {v['answer']:.3f}, context {v['context']:.3f}, joint {v['joint']:.3f} (n={v['n']})"
            for g, v in scores.items()))
        return dg.MaterializeResult(metadata={
            "act_id": ACT_ID, "version": version, "answerer": name, "questions": out.questions, "stale_skipped": counts["stale_skipped"],
            "invalid_questions": counts["invalid"], "seconds": round(seconds, 1),
            **{f"{k}_{g.replace('–', '_')}": v[k] for g, v in scores.items() for k in ("answer", "context", "joint")},
            # cited units that do not exist / are not in force at the question's date (pipelines.answers.citation_check)
            **{f"{k}_{g.replace('–', '_')}": v[k] for g, v in scores.items()
               for k in ("hallucination_rate", "not_in_force_rate") if k in v},
            "scores": dg.MetadataValue.md("| questions | n | answer | context | joint | failed |\n|---|---:|---:|---:|---:|---:|\n" + rows),
            "first_wrong": dg.MetadataValue.md("| question | gold | chosen | cited |\n|---|---|---|---|\n" + "\n".join(
                f"| {r['question_id']} | {r['gold_option']} | {r['option']} | {', '.join(r['cited_unit_ids'][:2])} |"
                for r in wrong)),
            "path": dg.MetadataValue.path(str(path)),
        })

    job = dg.define_asset_job(
        f"answers_nightly_{act.key}", selection=dg.AssetSelection.assets(answers), partitions_def=versions,
        description=f"Answer and score every exam question citing {ACT_ID} against one of its corpus versions.")

    def nightly(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
        from pipelines.statutes.store import CorpusStore

        serving = CorpusStore(storage.layout).current_version(ACT_ID)
        key = changeset_key(serving, act.slug) if serving else ""
        if serving is None or not context.instance.has_dynamic_partition(versions.name, key):
            return dg.SkipReason(f"no indexed {ACT_ID} version is served yet (run `lexpipe run`)")
        day = (context.scheduled_execution_time or dt.datetime.now(dt.timezone.utc)).date().isoformat()
        return dg.RunRequest(partition_key=key, run_key=f"answers:{ACT_ID}:{serving}@{day}", tags={"lexpipe/act": ACT_ID})

    schedule = dg.schedule(
        job=job, cron_schedule="0 3 * * *", execution_timezone="Europe/Warsaw",
        name=f"answers_nightly_{act.key}_schedule", default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Nightly answer job on the serving {ACT_ID} version (after the 02:00 benchmarks).")(nightly)
    return ActAnswers(bench, answers, job, schedule)


ANSWERS: dict[str, ActAnswers] = {act_id: act_answers(b) for act_id, b in BENCHMARKS.items()}

ASSETS = [a.answers for a in ANSWERS.values()]
JOBS = [a.job for a in ANSWERS.values()]
SCHEDULES = [a.schedule for a in ANSWERS.values()]

defs = dg.Definitions(assets=ASSETS, jobs=JOBS, schedules=SCHEDULES)
