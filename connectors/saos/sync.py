"""SAOS (https://www.saos.org.pl) judgment sync over the dump API: incremental and crash-safe.

Why it looks like this
----------------------
Polish judgments (~500k, full text, 2.5 MB per page of 100) are published through one bulk
endpoint, ``GET /api/dump/judgments?pageSize=&pageNumber=`` with optional ``judgmentStartDate`` /
``judgmentEndDate`` and ``sinceModificationDate``. We want every judgment exactly once in its
newest version, with bounded re-downloading, whatever happens mid-sync.

* **Passes of page numbers, over a stable order.** The dump is ordered by ``judgmentDate`` then
  ``id`` (a total order, so page ``N`` is the records at offset ``N × pageSize`` and stays so while
  nothing is added or removed); a pass walks ``pageNumber`` 0, 1, … until a page comes back
  without a ``next`` link. The first pass has no ``sinceModificationDate`` (the whole dump); every
  later pass asks ``sinceModificationDate = start of the previous pass - overlap``
  (``LEXPIPE_SAOS_OVERLAP_HOURS``): records carry no modification time, only the server filters by
  it, so the pass's own start time (taken before its first request, on our clock) is the only safe
  bound, and the overlap absorbs clock skew and imports committed after they were stamped.
* **Crash safety by ordering of writes.** Per page: raw body → content-addressed landing zone;
  accepted records → one Parquet batch (``JudgmentStore``); refused records → quarantine; *then*
  the cursor (query, next page number, pass start) is replaced atomically. A crash before the
  cursor write only means the page is fetched again: its records now equal the newest stored
  versions, count as ``unchanged`` and are not written twice, so a restarted sync ends with
  exactly the judgments of an uninterrupted one. ``on_checkpoint`` exposes the points (``landed``,
  ``written``, ``committed``) to crash tests.
* **The server's answer is checked, not trusted.** The ``self`` and ``next`` links must name the
  query we sent with this page number and the next (``SaosApi.follow_next``), a page may hold at
  most ``pageSize`` items, and every readable ``judgmentDate`` must lie in the requested window;
  otherwise ``ContractError`` stops the sync before anything of the page is written.
* **Bad records are quarantined, not fatal.** A record the validator refuses (missing id, date or
  text, HTML without text, wrong types — ``connectors.saos.records``) or that is not valid JSON is
  written to the quarantine with every reason and the page's landed hash, and the sync goes on.
  A page whose *envelope* is unreadable (an HTML error page with 200, no ``items``) is quarantined
  as kind ``page`` and stops the sync with its URL, without moving the cursor: skipping it would
  silently drop up to 100 judgments.
* **Politeness.** ``PoliteHttpClient``: a minimum interval between requests
  (``LEXPIPE_SAOS_MIN_INTERVAL_S``), retries with exponential backoff on 429/5xx/timeouts/dropped
  connections, ``Retry-After`` honoured; a 4xx such as a refused parameter is not retried.

What the live API does (``CeON/saos``, read with the code search; details in ``sample.py``)
-----------------------------------------------------------------------------------------
``DumpJudgmentsController`` pages ``JudgmentSearchFilter`` results ``upBy(judgmentDate)`` then
``id``, filtered ``judgmentDate >= start``, ``<= end`` and ``modificationDate >= since``; links are
``self``/``prev``/``next``, ``next`` only while more records exist; ``pageSize`` must lie in
10..100, unknown parameters are refused (``@RestrictParamsNames``). Deleted judgments are listed
separately (``/api/dump/judgments/deleted``), not by this endpoint.

What a pass guarantees, and what it cannot
-------------------------------------------
Every record that matches the pass's query when the pass starts and stays on the server is read
(modification only ever moves ``modificationDate`` forward, so a record matching at the start
matches to the end, and its position depends on its judgment date and id only). A record inserted
or newly modified during the pass may shift later records forward: they are read twice (the
second read is ``unchanged``), and the new record itself is read by the next pass. What it cannot
guarantee, because the dump is paged by offset and has no tombstones here: a judgment *deleted*
during a pass shifts later records back by one, so one record past the deletion may be skipped in
that pass (an incremental pass re-reads it only if it is modified again; ``full_rescan_days``
bounds how long such a gap can last); a judgment whose date changes mid-pass may be missed until
the next pass; deletions are not propagated to the store.

Offline: ``judgment_sync_from_settings`` with ``LEXPIPE_OFFLINE`` (the default) runs this same sync
against ``connectors.saos.sample.SampleSaos`` — the shared sample pages answered in-process like
the live API — so validation, quarantine, store and cursor have one code path.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from connectors.http import PoliteHttpClient, redact_url
from connectors.landing import RawLandingZone
from connectors.saos.client import SaosApi
from connectors.saos.cursor import (CursorStore, SaosCursor, end_pass, next_page, start_pass)
from connectors.saos.errors import ContractError, PageFormatError, SyncLockedError
from connectors.saos.pages import PAGE_SUFFIX, DumpPage, parse_dump_page
from connectors.saos.quarantine import page_quarantine_row, record_id_of, record_quarantine_row
from connectors.saos.records import validate_judgment
from connectors.saos.sample import MIN_PAGE_SIZE, SAMPLE_BASE_URL, SampleSaos, parse_day
from connectors.saos.settings import (JUDGMENTS_ACT_ID, DumpQuery, SaosPaths, SaosSettings,
                                      dump_query, overlap)
from connectors.saos.store import JudgmentStore, LatestVersions
from connectors.sync_lock import SyncLock

log = logging.getLogger(__name__)


@dataclass
class PageReport:
    """What one request did (also passed to ``on_checkpoint``)."""

    request_no: int
    url: str
    page: int
    since: str | None
    raw_sha256: str = ""
    records: int = 0
    accepted: int = 0  # written to the store: new + updated
    new: int = 0
    updated: int = 0
    unchanged: int = 0  # valid, and equal to the newest stored version
    quarantined: int = 0
    salvaged: bool = False  # some record was not valid JSON and was split out
    last_page: bool = False


@dataclass
class SyncReport:
    pages: list[PageReport] = field(default_factory=list)
    complete: bool = False  # the pass reached the page without a next link
    cursor: SaosCursor = field(default_factory=SaosCursor)

    @property
    def accepted(self) -> int:
        return sum(p.accepted for p in self.pages)

    @property
    def new(self) -> int:
        return sum(p.new for p in self.pages)

    @property
    def updated(self) -> int:
        return sum(p.updated for p in self.pages)

    @property
    def unchanged(self) -> int:
        return sum(p.unchanged for p in self.pages)

    @property
    def quarantined(self) -> int:
        return sum(p.quarantined for p in self.pages)

    @property
    def records(self) -> int:
        return sum(p.records for p in self.pages)


Checkpoint = Callable[[str, PageReport], None]


@dataclass(frozen=True)
class Probe:
    """What :meth:`JudgmentSync.probe` saw."""

    url: str | None  # the probe request (None: pending without asking)
    since: str | None  # the next pass's sinceModificationDate
    pending: bool  # a sync has something to do
    ids: tuple[int, ...]  # judgment ids on the probe page (at most 10)
    fingerprint: str


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class JudgmentSync:
    """Incremental sync of ``/api/dump/judgments`` into a ``JudgmentStore`` under ``home``.

    ``query``: the configured selection (date window, page size, ``withGenerated``; its ``since``
    is ignored: the cursor decides it). ``overlap``: how far before the previous pass's start an
    incremental pass begins. ``full_rescan_days``: a pass without ``since`` when the last full one
    is older (0 = never again after the first).
    """

    def __init__(self, api: SaosApi, home: Path, *, query: DumpQuery = DumpQuery(),
                 overlap: timedelta = timedelta(hours=24), full_rescan_days: int = 0,
                 now: Callable[[], datetime] = _utcnow) -> None:
        if overlap < timedelta(0):
            raise ValueError(f"overlap must not be negative, got {overlap}")
        self.api = api
        self.query = query
        self.overlap = overlap
        self.full_rescan_days = full_rescan_days
        self.paths = SaosPaths(Path(home))
        self.store = JudgmentStore(self.paths.store_root)
        self.landing = RawLandingZone(self.paths.raw)
        self.cursors = CursorStore(self.paths.cursor_path)
        self._now = now
        self._versions = LatestVersions()

    def sync(self, max_pages: int | None = None, *,
             on_checkpoint: Checkpoint | None = None) -> SyncReport:
        """Continue the pass in progress, or run the next one, to its end (or ``max_pages``
        requests). HTTP failures after retries, ``PageFormatError`` and ``ContractError`` stop
        the sync with the cursor at the last committed page; ``SyncLockedError`` when another
        sync of this home runs."""
        with SyncLock(self.paths.lock_path, source="SAOS", error=SyncLockedError):
            cursor = start_pass(self.cursors.load(), self.query, self._now(),
                                full_rescan_days=self.full_rescan_days)
            report = SyncReport(cursor=cursor)
            self._versions = self.store.versions()
            url = self.api.dump_url(cursor.query, cursor.page)
            request_no = 0
            while cursor.in_progress and (max_pages is None or request_no < max_pages):
                request_no += 1
                cursor, url = self._one_page(cursor, url, request_no, report, on_checkpoint)
            report.complete = not cursor.in_progress
            report.cursor = cursor
            log.info("saos sync: %d page(s), %d record(s): %d new, %d updated, %d unchanged, "
                     "%d quarantined; complete=%s", len(report.pages), report.records, report.new,
                     report.updated, report.unchanged, report.quarantined, report.complete)
            return report

    def probe(self) -> "Probe":
        """Is there anything to sync? One small request (``pageSize`` 10, page 0 of the next
        pass's query), nothing stored and the cursor untouched — what a sensor asks each tick.

        Pending without a request when no pass has completed yet or a pass is in progress (a
        crashed or ``max_pages``-bounded sync must be resumed); else pending when the dump has
        records modified since the next pass's ``sinceModificationDate``. The fingerprint names
        what was seen (the ``since`` and the ids on the probe page), so a watcher asks for one run
        per change, not one per tick."""
        cursor = self.cursors.load()
        if cursor.in_progress:
            return Probe(None, cursor.since, True, (), f"resume:{cursor.pass_started_at}:{cursor.page}")
        if not cursor.complete or cursor.since is None:
            return Probe(None, None, True, (), "first-pass")
        query = replace(self.query, since=cursor.since, page_size=MIN_PAGE_SIZE)
        url = self.api.dump_url(query, 0)
        body, _ = self.api.get(url)
        page = parse_dump_page(body)
        ids = tuple(sorted(r.obj["id"] for r in page.records
                           if isinstance(r.obj, dict) and isinstance(r.obj.get("id"), int)))
        more = "+" if page.next_url else ""
        return Probe(url, cursor.since, bool(page.records), ids,
                     f"since={cursor.since};ids={','.join(map(str, ids))}{more}" if page.records else f"since={cursor.since};none")

    def _one_page(self, cursor: SaosCursor, url: str, request_no: int, report: SyncReport,
                  on_checkpoint: Checkpoint | None) -> tuple[SaosCursor, str]:
        query, page_no = cursor.query, cursor.page
        page_rep = PageReport(request_no, url, page_no, query.since)
        report.pages.append(page_rep)
        body, headers = self.api.get(url)
        fetched_at = self._now()
        landed = self.landing.store(
            body, source_url=url, act_id=JUDGMENTS_ACT_ID, headers=headers, suffix=PAGE_SUFFIX,
            version=(f"since={query.since or ''};from={query.start or ''};to={query.end or ''};"
                     f"size={query.page_size};page={page_no}"))
        page_rep.raw_sha256 = landed.sha256
        _checkpoint(on_checkpoint, "landed", page_rep)

        parsed = self._parse(body, url, page_no, landed.sha256)
        page_rep.records, page_rep.salvaged = len(parsed.records), parsed.salvaged
        try:  # every check before any record of the page is used
            self.api.check_self(parsed, query, page_no)
            next_url = self.api.follow_next(parsed, query, page_no)
            self._check_items(parsed, query)
        except ContractError as exc:
            raise ContractError(f"{redact_url(url)}: {exc}") from None

        self._ingest(parsed, url, page_no, landed.sha256, fetched_at, page_rep)
        page_rep.last_page = next_url is None
        _checkpoint(on_checkpoint, "written", page_rep)

        cursor = end_pass(cursor, self.overlap, self._now()) if next_url is None else next_page(cursor)
        self.cursors.save(cursor)
        _checkpoint(on_checkpoint, "committed", page_rep)
        log.info("saos %s: %d record(s): %d new, %d updated, %d unchanged, %d quarantined%s",
                 redact_url(url), page_rep.records, page_rep.new, page_rep.updated,
                 page_rep.unchanged, page_rep.quarantined,
                 " (salvaged record by record)" if page_rep.salvaged else "")
        return cursor, next_url or self.api.dump_url(cursor.query, cursor.page)

    def _parse(self, body: bytes, url: str, page_no: int, raw_sha: str) -> DumpPage:
        try:
            return parse_dump_page(body)
        except PageFormatError as exc:
            self.store.write_quarantine([page_quarantine_row(body, url, page_no, raw_sha,
                                                             str(exc), self._now())])
            raise PageFormatError(f"{redact_url(url)}: {exc} (page quarantined; the cursor stays "
                                  f"on page {page_no})") from None

    @staticmethod
    def _check_items(parsed: DumpPage, query: DumpQuery) -> None:
        if len(parsed.records) > query.page_size:
            raise ContractError(f"{len(parsed.records)} items on a page of pageSize "
                                f"{query.page_size}; does the server honour pageSize?")
        lo, hi = parse_day(query.start), parse_day(query.end)
        if lo is None and hi is None:
            return
        for rec in parsed.records:
            day = parse_day(rec.obj.get("judgmentDate")) if isinstance(rec.obj, dict) else None
            if day is not None and ((lo is not None and day < lo) or (hi is not None and day > hi)):
                raise ContractError(
                    f"record {rec.index} (id {record_id_of(rec)}) has judgmentDate {day}, outside "
                    f"the requested {query.start or '…'}..{query.end or '…'}; does the server "
                    "honour judgmentStartDate/judgmentEndDate?")

    def _ingest(self, parsed: DumpPage, url: str, page_no: int, raw_sha: str,
                fetched_at: datetime, page_rep: PageReport) -> None:
        """Validate every record; store new/updated versions, quarantine refused ones."""
        accepted: list[dict[str, Any]] = []
        refused: list[dict[str, Any]] = []
        for rec in parsed.records:
            if rec.error is not None:
                row, reasons = None, [f"not valid JSON: {rec.error}"]
            else:
                row, reasons = validate_judgment(rec.obj)
            if row is None:
                refused.append(record_quarantine_row(rec, reasons, url, page_no, raw_sha,
                                                     self._now()))
                continue
            kind = self._versions.classify(row["judgment_id"], row["record_sha256"])
            if kind == "unchanged":
                page_rep.unchanged += 1
                continue
            self._versions.add(row["judgment_id"], row["record_sha256"], fetched_at)
            if kind == "new":
                page_rep.new += 1
            else:
                page_rep.updated += 1
            accepted.append({**row, "source_url": url, "raw_sha256": raw_sha, "page": page_no,
                             "fetched_at": fetched_at})
        self.store.write_judgments(accepted)
        self.store.write_quarantine(refused)
        page_rep.accepted, page_rep.quarantined = len(accepted), len(refused)


def _checkpoint(hook: Checkpoint | None, stage: str, page: PageReport) -> None:
    if hook is not None:
        hook(stage, page)


def judgment_sync_from_settings(settings: Any, saos_settings: SaosSettings | None = None, *,
                                home: Path | None = None, **client_overrides: Any) -> JudgmentSync:
    """The judgment sync the settings ask for, like ``case_sync_from_settings``.

    ``settings.offline`` (the default): the sample pages of ``<settings.sample_dir>/pl/saos``
    served by an in-process emulator of the live API (no socket, no network, no rate limit —
    nothing remote to be polite to), through the same client, landing, validation, store and
    cursor code. Otherwise: the live API at ``LEXPIPE_SAOS_BASE_URL`` with the polite client's
    rate limit, retries and timeout from ``LEXPIPE_SAOS_*``. The query (date window, page size,
    ``withGenerated``), the overlap and the full-rescan age come from ``LEXPIPE_SAOS_*`` either way.
    """
    saos = saos_settings or SaosSettings()
    if settings.offline:
        emulator = SampleSaos(Path(settings.sample_dir))
        client = PoliteHttpClient(user_agent=settings.user_agent, timeout_s=saos.timeout_s,
                                  max_retries=0, min_interval_s=0.0,
                                  transport=emulator.transport())
        api = SaosApi(client, SAMPLE_BASE_URL)
    else:
        api = SaosApi.from_settings(settings, saos, **client_overrides)
    return JudgmentSync(api, Path(home) if home is not None else Path(settings.home),
                        query=dump_query(saos), overlap=overlap(saos),
                        full_rescan_days=saos.full_rescan_days)
