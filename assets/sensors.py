"""Refresh when the law changes: the ``source_watch`` sensor over a list of source watchers, the
refresh job it launches, a freshness check per watched source, and the weekly re-validation.

    source_watch (sensor, every LEXPIPE_SOURCE_POLL_INTERVAL_S)
      ├─ EliListingWatcher ── the ELI year listings (offline: the held PDFs) → catalogue/eli.json
      │     an act's listed changeDate not published yet → new pl_changesets partition
      │     "<version>_<slug>" + RunRequest(run_key "eli:<changeset>")
      │     → pl_statutes_refresh: raw_pdf → articles ─[articles_valid]→ chunks ─[chunks_valid]→ diff
      │                            → published → search_index (pool "index") → notifications
      ├─ GesetzeWatcher ── the gesetze repository: each commit not applied yet (a BGBl issue, a fix …)
      │     → new de_changesets partition + RunRequest(run_key "gesetze:<changeset>")
      │     → de_statutes_refresh: published ─[de_changeset_valid]→ search_index → notifications
      └─ (Open Legal Data cases, SAOS judgments: further ``SourceWatcher`` subclasses)

Why a cursor *and* run keys: the cursor (JSON, one entry per watcher) remembers what each source
last said — change date, ETag, versions already handled — so an unchanged source costs one cheap
request and no run; the run key ``<act>:<version>`` makes Dagster drop a duplicate request even
if the cursor is reset. A watcher that fails or runs out of time leaves its cursor entry as it
was (the next tick asks again) and the tick reports the reason as its skip reason.

Why the tick is bounded: Dagster abandons a sensor evaluation after 60 s. Every poll runs in a
worker thread with what is left of ``budget_s`` (default 30 s); the ELI client used for polling
has a short timeout and one retry (``EliApi.poll_source``). A listing shows each act's newest
version only, so the ELI watcher requests at most one version per act per tick: runs of one act
must go oldest first (a version's diff and checks compare it with the newest published older
version; the run tag ``lexpipe/act`` lets the queue run one per act at a time).

Every successful poll is recorded as an observation of the source's external asset (e.g.
``sources/pl_eli``: polled at, years listed, acts, versions requested), which the freshness check
``polled_within_window`` (WARN) reads: a source nobody polled within its window is news even
when nothing failed — typically the sensor is off or the API has been unreachable for days.

Adding a source (the extension point): subclass ``SourceWatcher`` — a stable ``name`` (cursor
key; never rename), a ``source_key`` for its external asset, the ``job`` it requests, the
``required_resource_keys`` it reads in ``poll`` — and append an instance to ``WATCHERS``. ``poll``
gets the resources and its previous cursor entry and returns a ``PollOutcome``: the new entry,
the versions to process (each becomes a partition of ``NewVersion.partitions_def_name`` and a
run of ``NewVersion.job_name``), and what to record as the poll's observation.

Polish exam benchmarks (``assets/benchmarks.py``) are partitioned per act, not by changeset, so a
refresh run no longer carries their staleness: the nightly benchmark job and ``lexpipe run``
bring it up to date.
"""


import datetime as dt
import json
import time
import warnings
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13 (see assets/pl_statutes.py).
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

from assets import de_cases, de_statutes, pl_cases, pl_statutes
from assets.resources import CorpusStorage, EliApi
from connectors.eli import HttpEliSource
from core.settings import get_settings
from pipelines.statutes.store import CorpusStore

CURSOR_FORMAT = 1
MAX_REMEMBERED_VERSIONS = 64  # per watcher; older entries fall out of the cursor (run keys still dedupe)
SOURCE_GROUP = "sources"


# ----------------------------------------------------------------------------------------------
# what watchers return


@dataclass(frozen=True)
class NewVersion:
    """A version a watcher wants processed: it becomes a dynamic partition and one run."""

    act_id: str
    version: str
    change_date: str | None
    partitions_def_name: str | None  # None: the job is not partitioned (e.g. the case-law sync)
    job_name: str
    asset_selection: tuple[dg.AssetKey, ...] | None = None  # None: the whole job
    tags: Mapping[str, str] = field(default_factory=dict)
    static_partition: str | None = None  # a partition of a static partitions definition (no add request)

    @property
    def run_key(self) -> str:
        return f"{self.act_id}:{self.version}"


@dataclass(frozen=True)
class PollOutcome:
    """One successful poll: the watcher's next cursor entry, what to run, what to record."""

    state: dict[str, Any]
    note: str
    new_versions: tuple[NewVersion, ...] = ()
    observation: Mapping[str, Any] = field(default_factory=dict)


class SourceWatcher(ABC):
    """A source the ``source_watch`` sensor polls for new versions (see the module docstring)."""

    name: str
    source_key: dg.AssetKey
    description: str
    job: Any  # a define_asset_job(...) result: what the watcher's new versions run
    required_resource_keys: frozenset[str]
    poll_window: dt.timedelta

    @abstractmethod
    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        """Ask the source what changed since ``state`` (this watcher's previous cursor entry, empty
        on the first poll). Raise on any failure: the sensor keeps the old entry and reports why."""

    def source_asset(self) -> dg.AssetSpec:
        return dg.AssetSpec(key=self.source_key, group_name=SOURCE_GROUP, description=self.description,
                            metadata={"watcher": self.name,
                                      "poll_window_hours": self.poll_window.total_seconds() / 3600})


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _remember(seen: Mapping[str, str], version: str, how: str) -> dict[str, str]:
    out = {**seen, version: how}
    for old in sorted(out)[:-MAX_REMEMBERED_VERSIONS]:
        del out[old]
    return out


# ----------------------------------------------------------------------------------------------
# the ELI watcher (Polish statutes)


class EliListingWatcher(SourceWatcher):
    """The Sejm ELI API's year listings (or the offline source's listing of the held PDFs): one
    watcher over every Polish act, not one per act.

    A poll lists the watched years (the source's held years offline; online every year of a
    registry ELI act), writes what it lists to the home's catalogue (``catalogue/eli.json``: a
    newly listed statute becomes a registry act, ``pl:du<year>_<pos>``) and compares each act's
    listed ``changeDate`` with what is published: a text state not published yet, whose changeset
    is not already applied (a quarantined version is not asked for again) nor requested, becomes a
    ``pl_changesets`` partition ``<version>_<slug>`` and one run of ``pl_statutes_refresh``.

    Why one watcher over the listing and not one per act: with discovery the catalogue holds every
    statute of the listed years; a watcher per act would make one metadata request, one source
    asset and one freshness check per act (thousands), while a year listing carries every act's
    change date in one request. The listing is asked unconditionally (a 304 would leave nothing to
    compare with); an unchanged year costs one response body, no run.
    """

    required_resource_keys = frozenset({"storage", "eli"})
    MAX_PER_TICK = 20  # new changesets requested per tick (the rest next tick, oldest first)
    MAX_REMEMBERED = 4096  # requested keys kept in the cursor (run keys still dedupe beyond it)

    def __init__(self, *, job: Any, poll_window: dt.timedelta) -> None:
        self.name = "eli:listing"
        self.source_key = pl_statutes.SOURCE_KEY
        self.description = ("The Sejm ELI API's year listings of the Dziennik Ustaw (offline: the held PDFs), polled by "
                            "the source_watch sensor; each observation records one successful poll (years listed, "
                            "acts, new versions).")
        self.job = job
        self.poll_window = poll_window

    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        from connectors.eli_listing import changeset_key
        from pipelines.statutes.changeset_record import applied_keys
        from schemas.acts import registry

        storage: CorpusStorage = resources.storage
        eli_api: EliApi = resources.eli
        layout = storage.layout
        source = eli_api.poll_source(layout.raw)
        try:
            update = pl_statutes.discover(layout, source)
        finally:
            if isinstance(source, HttpEliSource):  # a client per poll: the code server lives for days
                source.client.close()
        polled_at = _utcnow()
        reg = registry(layout.home)
        store = CorpusStore(layout)
        applied = applied_keys(layout, pl_statutes.JURISDICTION)
        seen: dict[str, str] = dict(state.get("seen", {}))
        pending = []
        for item in sorted(update.listed, key=lambda i: (i.version or "", i.eli)):
            act = reg.by_address("eli", item.eli)
            if act is None or item.version is None:
                continue
            key = changeset_key(item.version, act.slug)
            if key in applied or item.version in store.published_versions(act.id):
                continue
            pending.append((act, item, key))
        fresh = [p for p in pending if p[2] not in seen][: self.MAX_PER_TICK]
        new = []
        for act, item, key in fresh:
            seen = {**seen, key: "requested"}
            new.append(NewVersion(act_id="eli", version=key, change_date=item.change_date,
                                  partitions_def_name=pl_statutes.changesets.name, job_name=self.job.name,
                                  tags={"lexpipe/source": "eli", "lexpipe/act": act.id, "lexpipe/changeset": key,
                                        pl_statutes.CHANGE_DATE_TAG: item.change_date or ""}))
        for old in sorted(seen)[:-self.MAX_REMEMBERED]:
            del seen[old]
        note = (f"{self.name}: {len(update.listed)} acts listed in {', '.join(map(str, update.years)) or 'no year'}"
                + (f" ({len(update.added)} new to the catalogue: {', '.join(update.added[:5])})" if update.added else "")
                + f", {len(pending)} version(s) not published, {len(new)} requested"
                + (": " + ", ".join(n.version for n in new[:5]) if new else ""))
        observation = {"polled_at": dg.MetadataValue.timestamp(polled_at), "result": "changed" if new else "unchanged",
                       "years": ", ".join(map(str, update.years)) or "none", "acts": len(update.listed),
                       "new_acts": len(update.added), "pending": len(pending), "requested": len(new),
                       "change_date": max((i.change_date or "" for i in update.listed), default="") or "unknown",
                       "catalogue": dg.MetadataValue.path(str(update.catalogue.path))}
        return PollOutcome(state={"polled_at": polled_at.isoformat(), "years": update.years, "seen": seen,
                                  "last_result": observation["result"]},
                           note=note, new_versions=tuple(new), observation=observation)


class OpenLegalDataWatcher(SourceWatcher):
    """The Open Legal Data cases API (or its offline sample emulator).

    A poll is one one-record request (``ordering=-date``): the case count and the newest decision
    form a fingerprint; an unseen fingerprint runs the ``cases_refresh`` job (sync → chunks →
    check → index). The sync itself is incremental and catches edits of older decisions in its
    overlap window, so the watcher only has to notice that there is something to sync."""

    required_resource_keys = frozenset({"storage"})

    def __init__(self, *, job: Any, poll_window: dt.timedelta) -> None:
        self.name = "openlegaldata:cases"
        self.source_key = dg.AssetKey(["sources", "de_openlegaldata"])
        self.description = ("The Open Legal Data cases API, polled by the source_watch sensor; each observation "
                            "records one successful poll (case count, newest decision).")
        self.job = job
        self.poll_window = poll_window

    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        from connectors.openlegaldata import case_sync_from_settings

        storage: CorpusStorage = resources.storage
        base_settings = get_settings()
        # a sensor-sized budget: short timeout, one retry (a slow API costs a skipped tick)
        settings = base_settings.model_copy(update={"home": storage.layout.home, "http_max_retries": 1,
                                                    "http_timeout_s": base_settings.source_poll_timeout_s})
        sync = case_sync_from_settings(settings)
        try:
            probe = sync.api.probe()
        finally:
            sync.api.client.close()
        polled_at = _utcnow()
        seen: dict[str, str] = dict(state.get("seen", {}))
        base = {**state, "url": probe.url, "polled_at": polled_at.isoformat(), "count": probe.count,
                "newest_date": probe.newest_date, "newest_id": probe.newest_id}
        new: tuple[NewVersion, ...] = ()
        if probe.fingerprint in seen:
            outcome, note = "unchanged", f"{self.name}: {probe.count} cases, newest {probe.newest_date}; no change"
        else:
            outcome = "changed"
            note = f"{self.name}: {probe.count} cases, newest {probe.newest_date} ({probe.newest_id}): sync requested"
            seen = _remember(seen, probe.fingerprint, "requested")
            new = (NewVersion(act_id="de:cases", version=probe.fingerprint, change_date=probe.newest_date,
                              partitions_def_name=None, job_name=self.job.name,
                              tags={"lexpipe/source": self.name}),)
        observation = {"polled_at": dg.MetadataValue.timestamp(polled_at), "result": outcome,
                       "cases": probe.count, "newest_decision": probe.newest_date or "none", "url": probe.url}
        return PollOutcome(state={**base, "seen": seen, "last_result": outcome}, note=note, new_versions=new,
                           observation=observation)


class SaosWatcher(SourceWatcher):
    """SAOS judgments (the dump API, or its offline sample emulator).

    A poll is ``JudgmentSync.probe``: no request while the first pass has not completed or a pass
    is in progress (a run is asked for: it resumes from the cursor); else one ``pageSize=10``
    request for records modified since the next pass's ``sinceModificationDate``. Something new
    runs ``pl_cases_refresh`` (sync → chunks → check → index, citation links, cited-by), once per
    fingerprint (the ``since`` and the ids seen)."""

    required_resource_keys = frozenset({"storage"})

    def __init__(self, *, job: Any, poll_window: dt.timedelta) -> None:
        self.name = "saos:judgments"
        self.source_key = dg.AssetKey(["sources", "pl_saos"])
        self.description = ("The SAOS judgments dump, polled by the source_watch sensor; each observation records "
                            "one successful poll (whether records changed since the last pass).")
        self.job = job
        self.poll_window = poll_window

    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        from connectors.saos import SaosSettings, judgment_sync_from_settings

        storage: CorpusStorage = resources.storage
        settings = get_settings().model_copy(update={"home": storage.layout.home})
        # a sensor-sized budget: short timeout, one retry (a slow API costs a skipped tick)
        saos = SaosSettings().model_copy(update={"max_retries": 1, "timeout_s": settings.source_poll_timeout_s})
        sync = judgment_sync_from_settings(settings, saos)
        try:
            probe = sync.probe()
        finally:
            sync.api.client.close()
        polled_at = _utcnow()
        seen: dict[str, str] = dict(state.get("seen", {}))
        new: tuple[NewVersion, ...] = ()
        if not probe.pending:
            outcome, note = "unchanged", f"{self.name}: nothing modified since {probe.since}"
        elif probe.fingerprint in seen:
            outcome, note = "requested", f"{self.name}: {probe.fingerprint} already requested"
        else:
            outcome = "changed"
            note = f"{self.name}: {probe.fingerprint}: sync requested"
            seen = _remember(seen, probe.fingerprint, "requested")
            new = (NewVersion(act_id="pl:cases", version=probe.fingerprint, change_date=probe.since,
                              partitions_def_name=None, job_name=self.job.name,
                              tags={"lexpipe/source": self.name}),)
        observation = {"polled_at": dg.MetadataValue.timestamp(polled_at), "result": outcome,
                       "since": probe.since or "none (no complete pass yet)", "url": probe.url or ""}
        return PollOutcome(state={**state, "url": probe.url, "polled_at": polled_at.isoformat(), "since": probe.since,
                                  "seen": seen, "last_result": outcome},
                           note=note, new_versions=new, observation=observation)


class GesetzeWatcher(SourceWatcher):
    """The gesetze git repository of German federal law (``connectors/gesetze``): a poll fetches
    it (a remote; the offline bundle is cloned once) and lists its changesets — one per
    first-parent commit: the import, a BGBl or BAnz issue, a converter fix, a refresh. Every
    changeset with acts that is not applied yet becomes a ``de_changesets`` partition and one run of
    ``de_statutes_refresh``, which refreshes exactly the acts that commit changed. Runs of the
    source go oldest first (a changeset refuses to run before the earlier ones are applied).

    In replay mode (``LEXPIPE_GESETZE_REPLAY``) the source offers its history one commit at a time:
    the poll moves the replay cursor one step once the last offered changeset is applied, so the
    sensor sees each commit arrive as it once did."""

    required_resource_keys = frozenset({"storage", "gesetze"})
    MAX_PER_TICK = 20  # new changesets requested per tick (runs queue in source order)

    def __init__(self, *, job: Any, poll_window: dt.timedelta) -> None:
        self.name = "gesetze:repository"
        self.source_key = dg.AssetKey(["sources", "de_gesetze"])
        self.description = ("The gesetze git repository of German federal law (bundestag/gesetze; offline: the sample "
                            "bundle), polled by the source_watch sensor; each observation records one poll (its "
                            "position, the changesets offered and applied).")
        self.job = job
        self.poll_window = poll_window

    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        from pipelines.statutes.changeset_record import applied_keys

        storage: CorpusStorage = resources.storage
        gesetze = resources.gesetze
        source = gesetze.source(storage.layout, sync=not gesetze.replay and not gesetze.offline)
        history = source.history()
        applied = applied_keys(storage.layout, de_statutes.JURISDICTION)
        offered = source.changesets()
        moved = ""
        if source.replay and offered and len(offered) < len(history):
            last = offered[-1]
            if not last.members or last.key in applied:
                step = source.advance()
                offered = source.changesets()
                moved = f"; replay moved to {offered[-1].key}" if step else ""
        pending = [c for c in offered if c.members and c.key not in applied]
        seen: dict[str, str] = dict(state.get("seen", {}))
        fresh = [c for c in pending if c.key not in seen][: self.MAX_PER_TICK]
        new = []
        for c in fresh:
            seen = _remember(seen, c.key, "requested")
            new.append(NewVersion(act_id="gesetze", version=c.key, change_date=c.date,
                                  partitions_def_name=de_statutes.changesets.name, job_name=self.job.name,
                                  tags={"lexpipe/source": "gesetze", "lexpipe/changeset": c.key,
                                        "lexpipe/changeset_kind": c.kind, "lexpipe/gazette": c.gazette or "none",
                                        "lexpipe/acts": str(len(c.members))}))
        polled_at = _utcnow()
        head = offered[-1] if offered else None
        note = (f"{self.name}: at {head.key if head else 'nothing'} ({len(offered)} of {len(history)} commits offered"
                f"{', replay' if source.replay else ''}), {len(pending)} not applied, {len(new)} requested{moved}")
        observation = {"polled_at": dg.MetadataValue.timestamp(polled_at), "result": "changed" if new else "unchanged",
                       "position": head.position if head else "none", "changeset": head.key if head else "none",
                       "offered": len(offered), "applied": len(applied), "pending": len(pending),
                       "replay": source.replay}
        return PollOutcome(state={"polled_at": polled_at.isoformat(), "position": head.key if head else None,
                                  "seen": seen}, note=note, new_versions=tuple(new), observation=observation)


# ----------------------------------------------------------------------------------------------
# the sensor


def load_cursor(raw: str | None) -> dict[str, dict[str, Any]]:
    """Watcher name → its state. An unreadable cursor starts afresh (run keys still dedupe)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("format") != CURSOR_FORMAT or not isinstance(data.get("sources"), dict):
        return {}
    return {k: v for k, v in data["sources"].items() if isinstance(v, dict)}


def dump_cursor(sources: Mapping[str, Mapping[str, Any]]) -> str:
    return json.dumps({"format": CURSOR_FORMAT, "sources": sources}, sort_keys=True, default=str)


def _poll_with_timeout(watcher: SourceWatcher, resources: Any, state: Mapping[str, Any],
                       timeout_s: float) -> PollOutcome:
    """Run ``watcher.poll`` in a worker thread and stop waiting after ``timeout_s`` (a stuck
    connection cannot hold the tick past Dagster's limit; the thread ends with its own timeout)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"poll-{watcher.name}")
    try:
        return pool.submit(watcher.poll, resources, dict(state)).result(timeout=timeout_s)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def evaluate_watchers(context: dg.SensorEvaluationContext, watchers: Sequence[SourceWatcher], *,
                      budget_s: float, resources: Any) -> dg.SensorResult:
    """One tick: poll every watcher within ``budget_s``; new versions → partitions + run requests."""
    start = time.monotonic()
    cursor = load_cursor(context.cursor)
    notes: list[str] = []
    runs: list[dg.RunRequest] = []
    partitions: dict[str, list[str]] = {}
    events: list[dg.AssetObservation] = []
    for watcher in watchers:
        remaining = budget_s - (time.monotonic() - start)
        if remaining < 0.5:
            notes.append(f"{watcher.name}: not polled, the tick's {budget_s:.0f} s budget is spent; cursor kept")
            continue
        try:
            outcome = _poll_with_timeout(watcher, resources, cursor.get(watcher.name, {}), remaining)
        except FutureTimeout:
            notes.append(f"{watcher.name}: no answer within {remaining:.1f} s; cursor kept, next tick retries")
            continue
        except Exception as exc:  # noqa: BLE001 — any failure of one source must not stop the others
            notes.append(f"{watcher.name}: poll failed ({type(exc).__name__}: {exc}); cursor kept, next tick retries")
            continue
        cursor[watcher.name] = outcome.state
        notes.append(outcome.note)
        events.append(dg.AssetObservation(asset_key=watcher.source_key, metadata=dict(outcome.observation)))
        for nv in outcome.new_versions:
            if nv.partitions_def_name is not None:
                partitions.setdefault(nv.partitions_def_name, []).append(nv.version)
            runs.append(dg.RunRequest(
                run_key=nv.run_key, job_name=nv.job_name,
                partition_key=nv.version if nv.partitions_def_name is not None else nv.static_partition,
                asset_selection=list(nv.asset_selection) if nv.asset_selection is not None else None,
                tags=dict(nv.tags)))
    for note in notes:
        context.log.info(note)
    requests = [dg.AddDynamicPartitionsRequest(partitions_def_name=name, partition_keys=keys)
                for name, keys in partitions.items()]
    if runs:
        return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests,
                               cursor=dump_cursor(cursor), asset_events=events)
    return dg.SensorResult(skip_reason="; ".join(notes) or "no sources to watch",
                           cursor=dump_cursor(cursor), asset_events=events)


def build_source_sensor(watchers: Sequence[SourceWatcher], *, name: str = "source_watch",
                        minimum_interval_seconds: int = 3600, budget_s: float = 30.0,
                        default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED) -> dg.SensorDefinition:
    """The sensor over ``watchers`` (it needs the union of their resources)."""
    if budget_s >= 55:
        raise ValueError(f"budget_s={budget_s}: a sensor tick must end well before Dagster's 60 s limit")
    jobs = list({w.job.name: w.job for w in watchers}.values())
    required = set().union(*(w.required_resource_keys for w in watchers)) if watchers else set()

    @dg.sensor(name=name, jobs=jobs, minimum_interval_seconds=minimum_interval_seconds,
               required_resource_keys=required, default_status=default_status,
               description="Polls every watched source for a new version (ELI change date / ETag) and "
                           "launches the refresh job for it: one run per (act, version).")
    def _sensor(context: dg.SensorEvaluationContext, **_resources: Any) -> dg.SensorResult:
        # A direct call (tests) also passes the required resources as keyword arguments, the
        # daemon does not: ``context.resources`` holds them in both cases.
        return evaluate_watchers(context, watchers, budget_s=budget_s, resources=context.resources)

    return _sensor


# ----------------------------------------------------------------------------------------------
# freshness: was each source polled within its window?


def freshness_result(instance: dg.DagsterInstance, watcher: SourceWatcher, *, now: float | None = None) -> dg.AssetCheckResult:
    """Pass when the source's latest observation (one successful poll) is within its window."""
    now = time.time() if now is None else now
    window_h = watcher.poll_window.total_seconds() / 3600
    records = instance.fetch_observations(watcher.source_key, limit=1).records
    if not records:
        return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN,
                                   description=f"{watcher.name} was never polled (is the source_watch sensor on?)",
                                   metadata={"window_hours": window_h, "last_polled_at": "never"})
    obs = records[0].asset_observation
    md = obs.metadata if obs is not None else {}
    polled = md.get("polled_at")
    polled_ts = float(polled.value) if polled is not None else records[0].timestamp
    age_h = (now - polled_ts) / 3600
    passed = age_h <= window_h
    when = dt.datetime.fromtimestamp(polled_ts, dt.timezone.utc).isoformat(timespec="seconds")
    change = md["change_date"].value if "change_date" in md else "unknown"
    desc = (f"{watcher.name} last polled {age_h:.1f} h ago ({when}); window {window_h:g} h"
            + ("" if passed else " — overdue: is the source_watch sensor running, is the source reachable?"))
    return dg.AssetCheckResult(passed=passed, severity=dg.AssetCheckSeverity.WARN, description=desc, metadata={
        "last_polled_at": dg.MetadataValue.timestamp(polled_ts), "age_hours": round(age_h, 2),
        "window_hours": window_h, "last_change_date": change,
        "last_result": md["result"].value if "result" in md else "unknown"})


def build_freshness_check(watcher: SourceWatcher) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=watcher.source_key, name="polled_within_window", blocking=False,
                    description=f"WARN when {watcher.name} has not been polled successfully within "
                                f"{watcher.poll_window.total_seconds() / 3600:g} h (LEXPIPE_SOURCE_POLL_WINDOW_HOURS)")
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        result = freshness_result(context.instance, watcher)
        context.log.info(result.description or "")
        return result

    return _check


# ----------------------------------------------------------------------------------------------
# jobs, schedules and the watcher list

PL_REVALIDATED_CHECKS = [next(iter(c.check_keys)) for c in pl_statutes.CHECKS]
pl_revalidate_job = dg.define_asset_job(
    "pl_statutes_revalidate", selection=dg.AssetSelection.assets(pl_statutes.articles, pl_statutes.chunks),
    partitions_def=pl_statutes.changesets,
    description="Re-runs the GX checks on the act versions of a Polish changeset (the weekly schedule runs only the "
                "checks, over every published version).")


@dg.schedule(job=pl_revalidate_job, cron_schedule="0 4 * * 0", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Sundays 04:00: the blocking GX checks again over every published Polish act version (a "
                         "changed suite or tolerance shows up on versions already served); a published version "
                         "that fails is reported, never quarantined.")
def weekly_polish_revalidation_schedule(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
    refs = pl_statutes.published_changeset_keys(storage.layout)
    if not refs:
        return dg.SkipReason("no Polish act version is published yet")
    known = [r for r in refs if context.instance.has_dynamic_partition(pl_statutes.changesets.name, r.key)]
    if not known:
        return dg.SkipReason(f"the published versions ({', '.join(r.key for r in refs[:5])}) are not "
                             f"{pl_statutes.changesets.name} partitions of this instance")
    year, week, _ = (context.scheduled_execution_time or _utcnow()).isocalendar()
    return [dg.RunRequest(partition_key=r.key, run_key=f"revalidate:pl:{r.key}@{year}-W{week:02d}",
                          asset_selection=[], asset_check_keys=PL_REVALIDATED_CHECKS,
                          tags={"lexpipe/revalidation": f"{year}-W{week:02d}", "lexpipe/act": r.act_id})
            for r in known]


DE_REVALIDATED_CHECKS = [next(iter(c.check_keys)) for c in de_statutes.CHECKS]
de_revalidate_job = dg.define_asset_job(
    "de_statutes_revalidate", selection=dg.AssetSelection.assets(de_statutes.german_published),
    partitions_def=de_statutes.changesets,
    description="Re-runs the GX suites on the versions a gesetze changeset published (checks only). The weekly "
                "schedule runs it for the changesets applied in the last week; after a suite changes, backfill it "
                "over every partition from the UI.")


@dg.schedule(job=de_revalidate_job, cron_schedule="30 4 * * 0", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Sundays 04:30: the GX suites again over the versions the changesets of the last week "
                         "published.")
def weekly_german_revalidation_schedule(context: dg.ScheduleEvaluationContext, storage: CorpusStorage):
    root = storage.layout.changesets(de_statutes.JURISDICTION)
    now = (context.scheduled_execution_time or _utcnow()).timestamp()
    recent = sorted(p.stem for p in root.glob("*.json") if now - p.stat().st_mtime < 7 * 86400) if root.is_dir() else []
    known = [k for k in recent if context.instance.has_dynamic_partition(de_statutes.changesets.name, k)]
    if not known:
        return dg.SkipReason("no gesetze changeset was applied in the last week")
    year, week, _ = (context.scheduled_execution_time or _utcnow()).isocalendar()
    return [dg.RunRequest(partition_key=k, run_key=f"revalidate:de:{k}@{year}-W{week:02d}", asset_selection=[],
                          asset_check_keys=DE_REVALIDATED_CHECKS,
                          tags={de_statutes.REVALIDATION_TAG: f"{year}-W{week:02d}"})
            for k in known]


def _watchers() -> list[SourceWatcher]:
    settings = get_settings()
    window = dt.timedelta(hours=settings.source_poll_window_hours)
    return [
        EliListingWatcher(job=pl_statutes.refresh_job, poll_window=window),
        OpenLegalDataWatcher(job=de_cases.cases_job, poll_window=window),
        SaosWatcher(job=pl_cases.pl_cases_job, poll_window=window),
        GesetzeWatcher(job=de_statutes.de_statutes_job, poll_window=window),
    ]


WATCHERS = _watchers()
SOURCE_ASSETS = [w.source_asset() for w in WATCHERS]
CHECKS = [build_freshness_check(w) for w in WATCHERS]
freshness_job = dg.define_asset_job("source_freshness", selection=dg.AssetSelection.checks(*CHECKS),
                                    description="The freshness check of every watched source.")


@dg.schedule(job=freshness_job, cron_schedule="17 * * * *", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Hourly: WARN on every source not polled within its window.")
def source_freshness_schedule(context: dg.ScheduleEvaluationContext):
    return dg.RunRequest()


source_watch = build_source_sensor(WATCHERS, minimum_interval_seconds=get_settings().source_poll_interval_s,
                                   budget_s=get_settings().source_poll_budget_s)

JOBS = [pl_revalidate_job, de_revalidate_job, freshness_job]
SCHEDULES = [weekly_polish_revalidation_schedule, weekly_german_revalidation_schedule, source_freshness_schedule]
SENSORS = [source_watch]

defs = dg.Definitions(assets=SOURCE_ASSETS, asset_checks=CHECKS, jobs=JOBS, schedules=SCHEDULES, sensors=SENSORS)
