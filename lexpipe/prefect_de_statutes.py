"""German federal law (gesetze changesets) as a Prefect 3 flow: the steps of the Dagster group ``de_statutes``.

    gesetze-changesets → for each changeset not applied, oldest first:
        apply-changeset → check-changeset → index-changeset

Bindings only, like ``assets/de_statutes.py``: each task calls one ``connectors/`` or ``pipelines/``
function — the catalogue move and the batch build with quarantine
(:func:`pipelines.statutes.de.changeset_build.apply_changeset`, resumable from the changeset's
record), the asset check's re-validation (:func:`pipelines.statutes.changeset_check.recheck_changeset`),
the index switch (:func:`pipelines.retrieval.statute_index.index_changeset`); which changesets and
in which order is :mod:`pipelines.statutes.changeset_order`, the same rule the Dagster partitions
and ``lexpipe load`` obey. One Prefect task per step per changeset, so the UI shows the source's
history as it was applied.

What Prefect adds: retries with exponential backoff where a failure can be transient (fetching a
remote repository; index writes), none where it cannot (parsing and checks are deterministic, and a
failed act is already quarantined inside the build). Nothing is cached by Prefect (``NO_CACHE``):
the changeset record is the cache — a re-run skips every act published from the same source bytes
and every applied changeset. A check that blocks (the Dagster check's ERROR severity: a published
version fails the suites, or every act of the changeset failed) raises before the index step, so
the index keeps its last good generation, and the changesets after it are not run (versions are
published in the source's order); :class:`ChangesetsFailed` carries what was applied before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# first: importing prefect_flows sets Prefect's offline environment before prefect is imported
from lexpipe.prefect_flows import _exception, _settings, _transient_index_error, retry_delays

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402

from core.layout import Layout  # noqa: E402
from core.settings import Settings  # noqa: E402

JURISDICTION = "de"


class ChangesetBlocked(RuntimeError):
    """The changeset's check failed with ERROR severity: its versions are not indexed."""


class ChangesetsFailed(RuntimeError):
    """The flow stopped at a changeset; ``report`` says what was applied before it."""

    def __init__(self, message: str, report: "DeChangesetsReport") -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class Planned:
    key: str
    kind: str
    gazette: str
    date: str
    members: int
    acts: list[str] | None  # the acts built (a restricted run); None: every member


@dataclass(frozen=True)
class Applied:
    """What ``apply_changeset`` recorded (``corpus/de/.changesets/<key>.json``)."""

    key: str
    state: str  # applied | in_progress (a restricted run leaves the other acts to do)
    counts: dict
    reasons: dict
    diff: dict
    seconds: float


@dataclass(frozen=True)
class Checked:
    passed: bool  # False with blocking False: quarantined acts (a warning)
    description: str
    published: int
    quarantined: int
    rows: int


@dataclass
class ChangesetResult:
    """One changeset's way through the flow (the CLI prints these)."""

    key: str
    kind: str
    gazette: str
    acts: int
    status: str = "not started"  # applied | partial | failed: <step> | not started
    applied: Applied | None = None
    check: Checked | None = None
    index: dict | None = None  # IndexChangesetReport.metadata()
    error: str | None = None


@dataclass
class DeChangesetsReport:
    changesets: list[ChangesetResult] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return all(c.status in ("applied", "partial") for c in self.changesets)


def _source(settings: Settings, layout: Layout, *, sync: bool = False):
    from connectors.gesetze import GesetzeSource

    return GesetzeSource.open(layout, settings, sync=sync)


def _transient_source_error(task, task_run, state) -> bool:
    """Fetching the repository can fail for a moment (network, a busy remote); a missing bundle or
    a bad URL will not get better by waiting, but only a remote is fetched with retries."""
    from connectors.gesetze.git import GitError

    return isinstance(_exception(state), (GitError, ConnectionError, TimeoutError))


@task(name="gesetze-changesets", cache_policy=NO_CACHE, retry_condition_fn=_transient_source_error)
def plan_changesets(home: str, until: str | None, acts: list[str] | None) -> list[Planned]:
    """The repository fetched (online and not replaying, as the sensor does) and the changesets it
    offers that are not applied yet, oldest first (``pipelines.statutes.changeset_order``). An
    ``until`` or an act the source does not offer is refused here, before anything is written."""
    from pipelines.statutes.changeset_order import changesets_to_apply

    settings = _settings(home)
    layout = Layout(Path(home))
    source = _source(settings, layout)
    if not settings.offline and not source.replay:
        source.sync()
    offered = source.changesets()
    if acts:
        known = {m.act_id for c in offered for m in c.members}
        unknown = [a for a in acts if a not in known]
        if unknown:
            raise ValueError(f"acts {', '.join(unknown)}: no changeset of {source.url} ({len(offered)} offered) "
                             f"touches them; German acts are named like de:bgb (the gesetze folder's slug)")
    plan = changesets_to_apply(layout, offered, acts=acts, until=until)
    get_run_logger().info(f"gesetze at {offered[-1].key if offered else 'nothing'} ({len(offered)} changesets "
                          f"offered): {len(plan)} to apply" + (f" up to {until}" if until else "")
                          + (f" for {', '.join(acts)}" if acts else ""))
    return [Planned(p.changeset.key, p.changeset.kind, p.changeset.gazette, p.changeset.date,
                    len(p.changeset.members), list(p.acts) if p.acts is not None else None) for p in plan]


@task(name="apply-changeset", task_run_name="apply {key}", cache_policy=NO_CACHE)
def apply_changeset_task(home: str, key: str, acts: list[str] | None) -> Applied:
    """The catalogue moved to the changeset's commit, then every act it changed (or ``acts``)
    parsed, checked, chunked, diffed and published in batches, failures quarantined with their
    reason. Refused (``ChangesetOrderError``, nothing written) while an earlier changeset is not applied."""
    from pipelines.statutes.changeset_order import ordered_changeset
    from pipelines.statutes.de.changeset_build import apply_changeset

    settings = _settings(home)
    layout = Layout(Path(home))
    logger = get_run_logger()
    source = _source(settings, layout)
    cs = ordered_changeset(layout, source.history(), key, only=acts, source=source.url)
    source.update_catalogue(layout, cs)

    def progress(p) -> None:
        logger.info(f"{key}: batch {p.batch}/{p.batches}, {p.done}/{p.total} acts, {p.published} published, "
                    f"{p.quarantined} quarantined, {p.seconds:.0f} s")

    record = apply_changeset(layout, source, cs, workers=settings.parse_workers,
                             batch_size=settings.changeset_batch_size, max_tokens=settings.chunk_max_tokens,
                             tolerance=settings.article_count_tolerance, only=acts, progress=progress)
    counts, reasons, diff = record.counts(), record.reasons(), record.diff_totals()
    logger.info(f"{key} ({cs.kind} {cs.gazette or cs.title}): {counts}; quarantined by reason {reasons}; units {diff}; "
                f"record {record.state}")
    return Applied(key, record.state, counts, reasons, diff, round(record.seconds, 2))


@task(name="check-changeset", task_run_name="check {key}", cache_policy=NO_CACHE)
def check_changeset(home: str, key: str, max_tokens: int) -> Checked:
    """The Dagster check ``de_changeset_valid``: every published version of the changeset validated
    again from the published files (those whose files and suites are the ones the build validated
    count as validated, as in Dagster outside the weekly revalidation). Blocking (raises ``ChangesetBlocked``) when a version fails or
    the quarantine is systemic (more than half of a changeset of at least 10 acts); quarantined acts
    otherwise are a warning: their last good version serves and later changesets go on."""
    from pipelines.statutes.changeset_check import recheck_changeset

    logger = get_run_logger()
    result = recheck_changeset(Layout(Path(home)), JURISDICTION, key, max_tokens=max_tokens)
    if result.blocking:
        raise ChangesetBlocked(f"{key}: the changeset check blocks: {result.description} — not indexed")
    (logger.info if result.passed else logger.warning)(result.description)
    return Checked(result.passed, result.description, result.published, result.quarantined, result.rows)


@task(name="index-changeset", task_run_name="index {key}", cache_policy=NO_CACHE,
      retry_condition_fn=_transient_index_error)
def index_changeset_task(home: str, key: str) -> dict:
    """The changeset's published versions into the German index (embedded, or Elasticsearch when
    ``LEXPIPE_ELASTICSEARCH_URL`` is set), switched in one step."""
    from assets.resources import SearchConfig
    from pipelines.retrieval.statute_index import index_changeset

    settings = _settings(home)
    search = SearchConfig(encoder=settings.encoder, elasticsearch_url=settings.elasticsearch_url or "")
    report = index_changeset(Layout(Path(home)), JURISDICTION, key, search=search, log=get_run_logger().info)
    return report.metadata()


@flow(name="de-changesets", persist_result=False, validate_parameters=True)
def de_changesets(until: str | None = None, acts: list[str] | None = None, home: str | None = None,
                  index: bool = True) -> DeChangesetsReport:
    """Every gesetze changeset not applied yet, oldest first, up to ``until`` (a changeset key, or
    "import" for the initial import): apply → check → index. ``acts``: only the changesets touching
    these acts, built for them only (the others stay to do). Stops at the first changeset that
    fails or whose check blocks and raises ``ChangesetsFailed`` naming it and the step; what was
    applied before stays applied, and the index keeps its last good generation."""
    settings = _settings(home)
    layout = Layout(settings.home.resolve())
    home_s = str(layout.home)
    logger = get_run_logger()
    retrying = {"retries": settings.prefect_task_retries, "retry_delay_seconds": retry_delays(settings),
                "retry_jitter_factor": 0.2}
    plan = plan_changesets.with_options(**(retrying if not settings.offline else {}))(home_s, until, acts or None)
    report = DeChangesetsReport([ChangesetResult(p.key, p.kind, p.gazette, len(p.acts) if p.acts is not None
                                                 else p.members) for p in plan])
    for p, res in zip(plan, report.changesets):
        step = "apply"
        try:
            res.applied = apply_changeset_task(home_s, p.key, p.acts)
            step = "check"
            res.check = check_changeset(home_s, p.key, settings.chunk_max_tokens)
            if index:
                step = "index"
                res.index = index_changeset_task.with_options(**retrying)(home_s, p.key)
            res.status = "applied" if res.applied.state == "applied" else "partial"
        except Exception as exc:  # noqa: BLE001 — reported with the changeset and the step, then re-raised
            res.status, res.error = f"failed: {step}", f"{type(exc).__name__}: {exc}"
            done = [c.key for c in report.changesets if c.status in ("applied", "partial")]
            message = (f"{p.key}: {step} failed: {exc} — {len(done)} changeset(s) applied before it"
                       + (f" (last {done[-1]})" if done else "")
                       + ("; the index keeps its last good generation" if index else "")
                       + f"; {len(plan) - len(done) - 1} later changeset(s) not run")
            logger.error(message)
            raise ChangesetsFailed(message, report) from exc
    logger.info(f"gesetze: {len(report.changesets)} changeset(s) applied"
                + (f", {report.changesets[0].key} … {report.changesets[-1].key}" if report.changesets else
                   ": nothing to do"))
    return report
