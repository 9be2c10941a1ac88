"""Change notifications as Dagster assets: after a version is published, its webhook events.

Thin bindings of :mod:`pipelines.subscriptions`. One asset per jurisdiction, partitioned exactly
like the ``published`` asset it follows (by changeset), because that is the unit a notification is about:

* ``notifications/pl/statutes`` — partitioned by ``pl_changesets`` (one ELI text state of an act,
  as ``pl/statutes/published``): the events of the publication of every act version the changeset
  published (vs each act's previous version), written to the outbox and delivered.
* ``notifications/de/statutes`` — partitioned by gesetze changeset, as ``de/statutes/published``:
  the events of every act version the changeset published; each subscription hears only of
  publications made after it was created, and events already in the outbox are not built again,
  so re-materializing is cheap and sends nothing twice.

Why not one asset over both ``published`` assets: the two jurisdictions' changesets are different
partition sets; an unpartitioned asset would have to re-derive "which version is new" on every
run, and could not be backfilled for one changeset.

Both depend on the act's search index too: a saved-query subscription compares the query's top k
on the previous and the new version, so the new version must be indexed. The automation
condition fires once the publishing run is over (``any_deps_in_progress`` waits for its index
step) even if no index was built (``--no-index``): saved queries whose version is not searchable
are then deferred, and the next materialization (e.g. after the index asset runs) sends them.

What runs them:

* ``subscription_notify`` — an automation-condition sensor over these assets (off until turned on,
  like ``source_watch``): a partition of ``published`` (or the index) updated → its notifications.
* ``pl_statutes_notify`` / ``de_statutes_notify`` — jobs to run or backfill them by hand.
* ``webhook_outbox`` (sensor, on by default) → ``webhook_deliver`` (job): every minute, when a retry
  has fallen due or a crashed run left an event behind (its sender's lease expired), a run that
  delivers the outbox. On by default because nothing else comes back for those events in a Dagster
  deployment (elsewhere ``lexpipe notify`` does); a tick with nothing due costs one SQLite count.

Metadata per materialization: events (of this publication), new events, delivered, failed (to be
retried), dead-lettered, deferred (saved queries not runnable yet), delivery attempts, seconds.
"""


import warnings

import dagster as dg

from assets import de_statutes, pl_statutes
from assets.resources import CorpusStorage, SearchConfig

GROUP = "subscriptions"

# after the publishing run: any upstream partition updated since the last request, none in progress
NOTIFY_WHEN = (dg.AutomationCondition.in_latest_time_window()
               & dg.AutomationCondition.any_deps_updated().since_last_handled()
               & ~dg.AutomationCondition.any_deps_in_progress()
               & ~dg.AutomationCondition.in_progress()).with_label("after publication")


def _runner(storage: CorpusStorage, search_config: SearchConfig):
    """Saved queries search the configured backend, one version at a time (opened on first use)."""
    from pipelines.subscriptions.matching import backend_runner

    return backend_runner(lambda act_id: search_config.open_backend(storage.layout, act_id=act_id))


def _result(report) -> dg.MaterializeResult:
    md = {"act": report.act_id, "versions": ", ".join(report.versions) or "none",
          "subscriptions": report.subscriptions, "events": report.events, "new_events": report.new,
          "delivered": report.delivered, "failed": report.pending, "dead_lettered": report.dead_lettered,
          "deferred": len(report.deferred), "attempts": report.attempts, "seconds": round(report.seconds, 2),
          "dagster/row_count": report.events}
    if report.deferred:
        md["deferred_queries"] = dg.MetadataValue.md("| subscription | why |\n|---|---|\n" + "\n".join(
            f"| {sub} | {why.replace('|', '/')[:200]} |" for sub, why in report.deferred))
    return dg.MaterializeResult(metadata=md)


def _log(context: dg.AssetExecutionContext, report) -> None:
    context.log.info(f"{report.act_id} {', '.join(report.versions)}: {report.events} events ({report.new} new) for "
                     f"{report.subscriptions} subscriptions; {report.delivered} delivered, {report.pending} to retry, "
                     f"{report.dead_lettered} dead-lettered, {len(report.deferred)} deferred")


@dg.asset(key=["notifications", "pl", "statutes"], deps=[pl_statutes.published, pl_statutes.search_index],
          partitions_def=pl_statutes.changesets, group_name=GROUP, kinds={"webhook"}, automation_condition=NOTIFY_WHEN,
          description="Webhook events of every act version the Polish changeset published (vs each act's previous "
                      "version) for every matching subscription (act, unit and descendants, saved query), written to "
                      "the outbox and delivered, signed, with retries; see docs/subscriptions.md.")
def polish_notifications(context: dg.AssetExecutionContext, storage: CorpusStorage,
                         search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.statutes.changeset_record import published_versions
    from pipelines.subscriptions.events import notify

    runner = _runner(storage, search_config)
    pairs = published_versions(storage.layout, pl_statutes.JURISDICTION, context.partition_key)
    if not pairs:  # no record (published before changesets were recorded): the act version the key names
        ref = _key_version(storage, context.partition_key)
        pairs = [ref] if ref is not None else []
    reports = [notify(storage.layout, act_id, version, runner=runner) for act_id, version in pairs]
    total = reports[0] if len(reports) == 1 else _merge_reports(reports, context.partition_key)
    _log(context, total)
    return _result(total)


def _key_version(storage: CorpusStorage, key: str) -> tuple[str, str] | None:
    """(act, version) of a one-act changeset key when that version is published."""
    from connectors.eli_listing import parse_changeset_key
    from pipelines.statutes.store import CorpusStore

    version, slug = parse_changeset_key(key)
    act_id = f"{pl_statutes.JURISDICTION}:{slug}"
    return (act_id, version) if version in CorpusStore(storage.layout).published_versions(act_id) else None


@dg.asset(key=["notifications", "de", "statutes"],
          deps=[de_statutes.german_published, de_statutes.german_search_index],
          partitions_def=de_statutes.changesets, group_name=GROUP, kinds={"webhook"}, automation_condition=NOTIFY_WHEN,
          description="Webhook events of every act version the gesetze changeset published, for subscriptions made "
                      "before the publication; an editorial-only version (a converter fix) raises no change event. "
                      "Events already in the outbox are not built again.")
def german_notifications(context: dg.AssetExecutionContext, storage: CorpusStorage,
                         search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.statutes.changeset_record import published_versions
    from pipelines.subscriptions.events import notify

    runner = _runner(storage, search_config)
    reports = [notify(storage.layout, act_id, version, runner=runner)
               for act_id, version in published_versions(storage.layout, "de", context.partition_key)]
    total = _merge_reports(reports, context.partition_key)
    _log(context, total)
    return _result(total)


def _merge_reports(reports: list, label: str):
    """One report over the notifications of many act versions (a changeset's)."""
    from pipelines.subscriptions.events import NotifyReport

    return NotifyReport(act_id=f"{label} ({len(reports)} act versions)",
                        versions=[v for r in reports for v in r.versions][:20],
                        subscriptions=max((r.subscriptions for r in reports), default=0),
                        event_ids=[e for r in reports for e in r.event_ids], new=sum(r.new for r in reports),
                        delivered=sum(r.delivered for r in reports), pending=sum(r.pending for r in reports),
                        dead_lettered=sum(r.dead_lettered for r in reports),
                        cancelled=sum(r.cancelled for r in reports), deferred=[d for r in reports for d in r.deferred],
                        attempts=sum(r.attempts for r in reports), seconds=sum(r.seconds for r in reports))


ASSETS = [polish_notifications, german_notifications]

NOTIFY_JOBS = [
    dg.define_asset_job("pl_statutes_notify", selection=dg.AssetSelection.assets(polish_notifications),
                        partitions_def=pl_statutes.changesets,
                        description="Webhook events of a Polish changeset's publications, delivered."),
    dg.define_asset_job("de_statutes_notify", selection=dg.AssetSelection.assets(german_notifications),
                        partitions_def=de_statutes.changesets,
                        description="Webhook events of a gesetze changeset's publications, delivered."),
]

with warnings.catch_warnings():  # Dagster 1.13 passes its beta `owners` parameter on internally
    warnings.simplefilter("ignore")
    subscription_notify = dg.AutomationConditionSensorDefinition(
        "subscription_notify", target=dg.AssetSelection.assets(*ASSETS),
        default_status=dg.DefaultSensorStatus.STOPPED, minimum_interval_seconds=60,
        description="Materializes notifications/* for a partition once its published asset (or index) was "
                    "updated and the run that did it is over.")


@dg.op(description="Attempt every pending webhook event that is due: retries, and events a crashed run left.")
def deliver_outbox(context: dg.OpExecutionContext, storage: CorpusStorage) -> None:
    from pipelines.subscriptions.delivery import deliver_due

    report = deliver_due(storage.layout)
    context.log.info(f"webhook outbox: {report.attempts} attempts, {report.delivered} delivered, "
                     f"{report.retried} to retry, {report.dead_lettered} dead-lettered")


@dg.job(name="webhook_deliver", description="Deliver the webhook outbox (what is due now).")
def webhook_deliver() -> None:
    deliver_outbox()


@dg.sensor(job_name="webhook_deliver", minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Starts webhook_deliver when a webhook retry has fallen due (or a crashed run left an "
                       "event undelivered: its lease expired) and no delivery run is going on.")
def webhook_outbox(context: dg.SensorEvaluationContext, storage: CorpusStorage):
    from pipelines.subscriptions.delivery import pending_due

    due = pending_due(storage.layout)
    if not due:
        return dg.SkipReason("no webhook delivery is due")
    active = context.instance.get_run_records(filters=dg.RunsFilter(
        job_name=webhook_deliver.name, statuses=[dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED,
                                                 dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]), limit=1)
    if active:
        return dg.SkipReason(f"{due} deliveries due; a webhook_deliver run is already going")
    return dg.RunRequest(tags={"lexpipe/webhooks_due": str(due)})


JOBS = [*NOTIFY_JOBS, webhook_deliver]
SENSORS = [subscription_notify, webhook_outbox]

defs = dg.Definitions(assets=ASSETS, jobs=JOBS, sensors=SENSORS)
