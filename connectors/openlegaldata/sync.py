"""Open Legal Data (https://de.openlegaldata.io/api/) case-law sync: incremental and crash-safe.

Why it looks like this
----------------------
German court decisions arrive as a long, slowly changing stream (350k+ cases). We want every case
exactly once in its newest version, with bounded re-downloading, whatever happens mid-sync.

* **Keyset cursor, not page numbers.** The list is requested sorted by ``(updated_date, id)`` and
  filtered ``updated_date >= cursor``; after each page the cursor moves to the last record's key and
  the next request starts again at page 1 of the narrower filter. Page-number walks shift when
  records change under them (and the live API caps deep page numbers); a keyset does not.
  Records at or below the cursor (the ``>=`` overlap) are skipped. When a whole page shares the
  cursor's ``updated_date`` (bulk imports), the next page *number* of the same filter is asked for,
  so the walk always moves forward. URLs are built from the cursor; the server's ``next`` link
  only says whether there is more (it is never followed, so it cannot redirect the token).
  A 404 past the end of such a run (records deleted under us) ends the pass; the next pass
  rereads the run from page 1.
* **Crash safety by ordering of writes.** Per page: raw body → content-addressed landing zone;
  accepted records → one idempotent Parquet batch (``CaseStore``); refused records → quarantine;
  *then* the cursor is replaced atomically. A crash before the cursor write only means the page is
  fetched again and produces the same batch file (named by content), so a restarted sync ends with
  exactly the rows of an uninterrupted one. ``on_checkpoint`` exposes these points to crash tests.
* **The server's ordering is verified, never trusted.** If a page comes back unsorted or below the
  cursor (e.g. a server that silently ignores ``ordering``/``updated_date__gte``, as DRF does for
  unknown fields), the sync stops with ``CursorContractError`` before writing any record of the
  page, because advancing a keyset cursor over an unordered stream would leave gaps. (An ignored
  filter shows from the second request on; a first page can only be checked for its own order.)
* **Schema drift is tolerated, bad records are quarantined.** Unknown fields are kept verbatim
  (``extra_json``); the court may come as an object or as a bare id. A record missing a required
  field (id, court, file_number, date, updated_date, non-empty content) is written to the
  quarantine with every reason and the sync goes on. A page that is not valid JSON because of one
  record (e.g. an invalid ``\\'`` escape) is split record by record, so only that record is lost.
  A page whose *envelope* is unreadable (an HTML error page with 200) stops the sync without
  moving the cursor: skipping it would silently drop a page of cases.
* **Politeness and secrets.** ``PoliteHttpClient`` does rate limiting, retries with backoff on
  429/5xx/dropped connections and honours ``Retry-After``. The API token is a ``SecretStr`` and is
  put into the ``Authorization: Token …`` header per request only (never in URLs, reprs or logs).

What the live API supports (read in ``openlegaldata/oldp`` with the code search)
---------------------------------------------------------------------------------
* ``oldp/apps/cases/api_views.py`` — ``CaseViewSet``: ``filter_backends = (OrderingFilter,
  DjangoFilterBackend)``, ``ordering_fields = ("date",)``, ``filterset_class = CaseAPIFilter``,
  ``pagination_class = SmallResultsSetPagination``; ``dispatch`` is wrapped in
  ``cache_page(settings.CACHE_TTL)`` (varying on Authorization), so list pages may be served from
  a cache up to ``CACHE_TTL`` old (6 h in the current ``oldp/settings.py``, 15 min in old ones).
* DRF's ``OrderingFilter`` drops ordering terms not in ``ordering_fields`` *silently*; with none
  left the model's default applies: ``oldp/apps/cases/models.py`` ``Case.Meta.ordering =
  ('-date',)``. So ``ordering=updated_date,id`` yields newest decisions first, and ``ordering=date``
  gives no order among cases of the same date (no tie-breaker).
* ``oldp/apps/cases/filters.py`` — ``CaseAPIFilter(RESTFilterSet, BaseCaseFilter)``: ``court``
  (id), ``court__state``, ``court__slug``, ``court__state__slug``, ``court__jurisdiction``,
  ``court__level_of_appeal``, ``has_reference_to_law``, ``date`` (``DateFromToRangeFilter``: query
  parameters ``date_after`` / ``date_before``, inclusive), ``slug``, ``file_number``, ``ecli``,
  ``review_status``, ``created_by_token``. No ``updated_date`` and no ``id`` filter: unknown query
  parameters such as ``updated_date__gte`` are ignored. (``updated_date``, an ``auto_now`` field, is
  an ordering option only of the front-end ``CaseFilter``, not of the API.)
* ``oldp/api/__init__.py`` — ``SmallResultsSetPagination(PageNumberPagination)``: ``page_size``
  query parameter, default 10, ``max_page_size = 1000``; a page above ``settings.PAGINATE_UNTIL``
  (10 in ``oldp/settings.py``; 20 in older versions) is a 404 "Page N exceeds maximum … For bulk
  access use https://static.openlegaldata.io/dumps/"; ``offset`` deeper than
  ``PAGINATE_UNTIL × max_page_size`` is refused as well. Envelope: ``count``, ``next``,
  ``previous``, ``results``.
* ``oldp/apps/cases/serializers.py`` — ``CASE_API_FIELDS = (id, slug, court, file_number, date,
  created_date, updated_date, type, ecli, content)``, ``court`` via ``CourtMinimalSerializer``.
* ``oldp/api/views.py`` — ``CourtViewSet`` sets no pagination class, so ``/courts/`` uses the
  project default, ``CappedLimitOffsetPagination`` (``limit``/``offset``) in the current
  ``oldp/settings.py`` ``REST_FRAMEWORK``; throttling there: ``user`` 5000/hour, ``anon`` 100/day.
  ``oldp/api/__init__.py`` — ``CappedLimitOffsetPagination(LimitOffsetPagination)``:
  ``default_limit = 50``, ``max_limit = 1000``, an ``offset`` above ``PAGINATE_UNTIL × max_limit``
  is a 404. DRF ignores ``page``/``page_size`` there: a page-number walk of ``/courts/`` gets the
  first 50 courts on every request. ``sync_courts`` therefore asks ``limit``/``offset`` and
  follows the ``next`` link (DRF builds it with ``limit`` and ``offset``), checked to stay on the
  API's host and path because the token header goes with every request. The view orders by
  ``name`` (``Court.objects.all().order_by("name")``) and serializes ``CourtSerializer`` fields.

Consequences: the keyset mode below (``ordering=updated_date,id`` + ``updated_date__gte``) cannot
work against de.openlegaldata.io — its contract check stops it on the first or second page — and
at most ``10 × page_size`` records of any one filter are reachable by paging. Hence two modes:

``keyset``
    For a server that honours ``(updated_date, id)`` (the preferred design, described above).
``date_windows`` (fallback, what the live API supports)
    ``ordering=date&date_after=LO&date_before=HI`` over consecutive windows of the decision date
    that tile the whole axis (the first window has no lower bound, the last none upper). A window
    whose ``count`` exceeds ``max_pages × page_size`` is halved before any record of it is taken
    (an unbounded first window is cut at the earliest date the page shows); a window with few
    records doubles the next one. Because the order *within* a window is not defined, a window is
    complete only when the distinct records read (ids; the text hash of an id-less record) reach
    the window's ``count``; otherwise the window is read again from page 1 (up to
    ``max_rereads`` times, then the sync stops with the cursor on that window). Each page's
    records must fall inside the window (``CursorContractError`` otherwise). The cursor (window,
    page, ids read so far, count) is saved atomically after every page, so a crash resumes on the
    same window and page and the completeness check spans the crash. Records already stored with
    the same ``record_sha256`` count as ``unchanged`` and are not written again, so re-reads and
    restarts add no duplicate rows.

    An incremental pass starts ``overlap_days`` before the newest decision date seen, and every
    ``full_rescan_days`` a pass starts from the beginning. What this mode guarantees: every record
    that stays on the server with the same decision date during a pass is read in that pass (no
    gaps), at most once stored per version (no duplicates), resumable after a crash. What it
    cannot guarantee, because the API has no change feed: an edit to a case whose decision date is
    older than the overlap window, or a newly imported old case, is seen only at the next full
    rescan; a record whose decision date changes mid-pass, or that is added/removed inside a window
    while that window is being read, may be missed until the next pass covering its date; records
    with a null decision date are never reached (``date_after``/``date_before`` exclude NULL);
    deletions are not propagated; and list pages can be up to ``CACHE_TTL`` stale.

``auto`` (the default setting) starts in keyset mode and switches to date windows for good (the
mode is kept in the cursor) when the keyset contract check fails; ``LEXPIPE_OLDP_SYNC_MODE``
forces either mode.

Offline: ``case_sync_from_settings`` with ``LEXPIPE_OFFLINE`` (the default) runs this same sync
against ``connectors.openlegaldata.sample.SampleOpenLegalData`` — the sample files served through
an in-process httpx transport that behaves like the live API — so validation, quarantine, store and
cursor have one code path.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from connectors.case_store import CaseStore, VersionIndex
from connectors.http import HttpFetchError, PoliteHttpClient, redact_url
from connectors.landing import RawLandingZone
from connectors.openlegaldata.client import OpenLegalDataApi
from connectors.openlegaldata.courts import sync_court_list
from connectors.openlegaldata.cursor import CaseKey, CursorStore, SyncCursor, case_key
from connectors.openlegaldata.errors import (CursorContractError, OpenLegalDataError,
                                             PageFormatError, SyncLockedError)
from connectors.openlegaldata.pages import PAGE_SUFFIX, ParsedPage, RawRecord, parse_page
from connectors.openlegaldata.records import (record_id_of, page_quarantine_row, parse_timestamp,
                                              record_quarantine_row, validate_case)
from connectors.openlegaldata.sample import SAMPLE_BASE_URL, SampleOpenLegalData
from connectors.openlegaldata.settings import (CASES_ACT_ID, MAX_PAGE_SIZE, OldpPaths,
                                               OpenLegalDataSettings, WindowConfig, api_params,
                                               window_config)
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
    unchanged: int = 0  # valid, but this exact version is stored already
    skipped: int = 0  # keyset: at or below the cursor
    quarantined: int = 0
    salvaged: bool = False
    last_page: bool = False
    narrowed: bool = False  # date windows: the window was too large; nothing taken from the page


@dataclass
class SyncReport:
    pages: list[PageReport] = field(default_factory=list)
    complete: bool = False
    cursor: SyncCursor = field(default_factory=SyncCursor)
    mode: str = "keyset"
    mode_switch: str | None = None  # why auto mode left keyset for date windows (this run)

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
    def skipped(self) -> int:
        return sum(p.skipped for p in self.pages)


Checkpoint = Callable[[str, PageReport], None]


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


SYNC_MODES = ("auto", "keyset", "date_windows")


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _day(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


def _record_date(rec: RawRecord) -> date | None:
    """A record's decision date when it is readable (records are checked, not trusted)."""
    return _day(rec.obj.get("date")) if isinstance(rec.obj, dict) else None


def _record_key(rec: RawRecord) -> str:
    """Identity of a record within a window: its id, else a hash of its text."""
    if isinstance(rec.obj, dict) and type(rec.obj.get("id")) is int:
        return f"id:{rec.obj['id']}"
    return "sha:" + hashlib.sha256(rec.text.encode("utf-8")).hexdigest()[:24]


class CaseSync:
    """Incremental sync of ``/cases/`` (and ``/courts/``) into a ``CaseStore``.

    ``mode``: ``"auto"`` (keyset, falling back to date windows for good on a contract failure),
    ``"keyset"`` or ``"date_windows"``; see the module docstring for what each guarantees.
    """

    def __init__(self, api: OpenLegalDataApi, home: Path, *, mode: str = "auto",
                 windows: WindowConfig = WindowConfig(),
                 now: Callable[[], datetime] = _utcnow) -> None:
        if mode not in SYNC_MODES:
            raise ValueError(f"sync mode must be one of {SYNC_MODES}, got {mode!r}")
        self.api = api
        self.mode = mode
        self.windows = windows
        self.paths = OldpPaths(Path(home))
        self.store = CaseStore(self.paths.store_root)
        self.landing = RawLandingZone(self.paths.raw)
        self.cursors = CursorStore(self.paths.cursor_path)
        self._now = now
        self._versions: VersionIndex = VersionIndex()

    # -- cases ---------------------------------------------------------------------------------

    def sync_cases(self, *, max_pages: int | None = None,
                   on_checkpoint: Checkpoint | None = None) -> SyncReport:
        """Fetch pages after the persisted cursor until the pass ends (or ``max_pages`` requests).

        Stages passed to ``on_checkpoint``: ``landed`` (raw body stored), ``written`` (batch and
        quarantine stored, cursor not yet moved), ``committed`` (cursor saved).
        HTTP failures after retries, ``CursorContractError`` (except in auto mode's keyset phase,
        which switches to date windows) and ``PageFormatError`` stop the sync with the cursor at
        the last committed page.
        """
        with SyncLock(self.paths.lock_path, source="Open Legal Data", error=SyncLockedError):
            cursor = self._start(self.cursors.load())
            report = SyncReport(cursor=cursor, mode=cursor.mode)
            self._versions = self.store.versions()
            request_no = 0
            while max_pages is None or request_no < max_pages:
                request_no += 1
                if cursor.mode == "date_windows":
                    cursor = self._window_page(cursor, request_no, report, on_checkpoint)
                else:
                    try:
                        cursor = self._one_page(cursor, request_no, report, on_checkpoint)
                    except CursorContractError as exc:
                        if self.mode != "auto":
                            raise
                        log.warning("openlegaldata: %s -- switching to date windows for good", exc)
                        report.mode_switch = str(exc)
                        cursor = self._new_window_pass(cursor)
                        self.cursors.save(cursor)
                        continue
                if cursor.complete:
                    break
            report.complete = cursor.complete
            report.cursor = cursor
            report.mode = cursor.mode
            log.info("openlegaldata sync (%s): %d page(s), %d new, %d updated, %d unchanged, "
                     "%d skipped, %d quarantined, complete=%s", report.mode, len(report.pages),
                     report.new, report.updated, report.unchanged, report.skipped,
                     report.quarantined, report.complete)
            return report

    def _start(self, cursor: SyncCursor) -> SyncCursor:
        """The cursor to continue from: the configured mode, and a new pass after a complete one."""
        wanted = cursor.mode if self.mode == "auto" else self.mode
        if wanted == "date_windows":
            if cursor.mode != "date_windows" or cursor.complete:
                return self._new_window_pass(cursor)
            return cursor
        if cursor.mode != "keyset":  # forced back to keyset: its own fields were kept
            cursor = replace(cursor, mode="keyset", page=1, complete=False)
        if cursor.complete:  # a new pass over whatever changed since
            cursor = replace(cursor, complete=False)
        return cursor

    def _one_page(self, cursor: SyncCursor, request_no: int, report: SyncReport,
                  on_checkpoint: Checkpoint | None) -> SyncCursor:
        key = cursor.key
        url = self.api.cases_url(cursor.updated_date, cursor.page)
        page_rep = PageReport(request_no, url, cursor.page, cursor.updated_date)
        report.pages.append(page_rep)
        try:
            body, headers = self.api.get(url)
        except HttpFetchError as exc:
            if exc.status != 404 or cursor.page == 1:
                raise
            # DRF answers 404 past the last page. Within a run of equal timestamps that means
            # records were deleted under us: end this pass; the next one rereads from page 1.
            log.warning("openlegaldata %s: 404 past the end of the list; pass complete",
                        redact_url(url))
            page_rep.last_page = True
            cursor = self._advance(cursor, key, [], last_page=True)
            self.cursors.save(cursor)
            _checkpoint(on_checkpoint, "committed", page_rep)
            return cursor
        fetched_at = self._now()
        landed = self.landing.store(body, source_url=url, act_id=CASES_ACT_ID,
                                    version=f"since={cursor.updated_date or ''};page={cursor.page}",
                                    headers=headers, suffix=PAGE_SUFFIX)
        page_rep.raw_sha256 = landed.sha256
        _checkpoint(on_checkpoint, "landed", page_rep)
        parsed = self._parse(body, url, cursor.page, landed.sha256)
        page_rep.records, page_rep.salvaged = len(parsed.records), parsed.salvaged

        keys = [(r.index, k) for r in parsed.records if (k := case_key(r.obj)) is not None]
        self._check_order(url, key, keys)

        def at_or_below_cursor(rec: RawRecord) -> bool:  # the >= overlap: an earlier page's
            rkey = case_key(rec.obj)
            return key is not None and rkey is not None and rkey <= key

        self._ingest(parsed, url, cursor.page, landed.sha256, fetched_at, page_rep,
                     skip=at_or_below_cursor)
        page_rep.last_page = parsed.next_url is None
        _checkpoint(on_checkpoint, "written", page_rep)

        cursor = self._advance(cursor, key, [k for _, k in keys], parsed.next_url is None)
        self.cursors.save(cursor)
        _checkpoint(on_checkpoint, "committed", page_rep)
        self._log_page(url, page_rep)
        return cursor

    # -- shared by both modes: one path for validation, quarantine and storage ------------------

    def _parse(self, body: bytes, url: str, page: int, raw_sha: str) -> ParsedPage:
        try:
            return parse_page(body)
        except PageFormatError as exc:
            self.store.write_quarantine([page_quarantine_row(body, url, page, raw_sha,
                                                             str(exc), self._now())])
            raise PageFormatError(f"{redact_url(url)}: {exc}") from None

    def _ingest(self, parsed: ParsedPage, url: str, page: int, raw_sha: str,
                fetched_at: datetime, page_rep: PageReport, *,
                skip: Callable[[RawRecord], bool] | None = None) -> None:
        """Validate every record; store new/updated versions, quarantine refused ones."""
        accepted: list[dict[str, Any]] = []
        refused: list[dict[str, Any]] = []
        for rec in parsed.records:
            if skip is not None and skip(rec):
                page_rep.skipped += 1
                continue
            if rec.error is not None:
                row, reasons = None, [f"not valid JSON: {rec.error}"]
            else:
                row, reasons = validate_case(rec.obj)
            if row is None:
                refused.append(record_quarantine_row("case", rec, reasons, url, page, raw_sha,
                                                     self._now()))
                continue
            kind = self._versions.classify(row["case_id"], row["record_sha256"])
            if kind == "unchanged":
                page_rep.unchanged += 1
                continue
            self._versions.add(row["case_id"], row["record_sha256"])
            if kind == "new":
                page_rep.new += 1
            else:
                page_rep.updated += 1
            accepted.append({**row, "source_url": url, "raw_sha256": raw_sha,
                             "fetched_at": fetched_at})
        self.store.write_cases(accepted)
        self.store.write_quarantine(refused)
        page_rep.accepted, page_rep.quarantined = len(accepted), len(refused)

    @staticmethod
    def _log_page(url: str, rep: PageReport) -> None:
        log.info("openlegaldata %s: %d record(s): %d new, %d updated, %d unchanged, "
                 "%d already seen, %d quarantined%s", redact_url(url), rep.records, rep.new,
                 rep.updated, rep.unchanged, rep.skipped, rep.quarantined,
                 " (salvaged record by record)" if rep.salvaged else "")

    # -- date windows (what the live API supports) ---------------------------------------------

    def _today(self) -> date:
        return self._now().date()

    def _window_end(self, lo: date, span: int) -> date | None:
        """The last day of a window starting at ``lo``; None (unbounded) once it reaches today."""
        hi = lo + timedelta(days=span - 1)
        return None if hi >= self._today() else hi

    def _new_window_pass(self, cursor: SyncCursor) -> SyncCursor:
        """Start a date-window pass: from the beginning when a full rescan is due, else from
        ``overlap_days`` before the newest decision date seen."""
        cfg = self.windows
        last_full = parse_timestamp(cursor.last_full_scan_at)
        full = (cursor.max_date_seen is None or last_full is None
                or (cfg.full_rescan_days > 0
                    and self._now() - last_full >= timedelta(days=cfg.full_rescan_days)))
        span = cursor.window_days or cfg.window_days
        lo: date | None = None
        hi: date | None = None
        if not full:
            lo = date.fromisoformat(cursor.max_date_seen) - timedelta(days=cfg.overlap_days)  # type: ignore[arg-type]
            hi = self._window_end(lo, span)
        return replace(cursor, mode="date_windows", complete=False, page=1,
                       window_lo=_iso(lo), window_hi=_iso(hi), window_count=None,
                       window_keys=[], window_rereads=0, window_days=span, pass_full=full)

    def _window_page(self, cursor: SyncCursor, request_no: int, report: SyncReport,
                     on_checkpoint: Checkpoint | None) -> SyncCursor:
        lo, hi = _day(cursor.window_lo), _day(cursor.window_hi)
        url = self.api.window_url(cursor.window_lo, cursor.window_hi, cursor.page)
        page_rep = PageReport(request_no, url, cursor.page,
                              f"{cursor.window_lo or '…'}..{cursor.window_hi or '…'}")
        report.pages.append(page_rep)
        try:
            body, headers = self.api.get(url)
        except HttpFetchError as exc:
            if exc.status != 404 or cursor.page == 1:
                raise
            # the page existed when the window was counted: records vanished under us (or the
            # page cap shrank). Close the window; the completeness check decides on a re-read.
            log.warning("openlegaldata %s: 404 inside a date window", redact_url(url))
            page_rep.last_page = True
            cursor = self._close_window(replace(cursor, pages_committed=cursor.pages_committed + 1),
                                        cursor.window_count or 0, lo, hi)
            self.cursors.save(cursor)
            _checkpoint(on_checkpoint, "committed", page_rep)
            return cursor
        fetched_at = self._now()
        landed = self.landing.store(
            body, source_url=url, act_id=CASES_ACT_ID, headers=headers, suffix=PAGE_SUFFIX,
            version=f"date={cursor.window_lo or ''}..{cursor.window_hi or ''};page={cursor.page}")
        page_rep.raw_sha256 = landed.sha256
        _checkpoint(on_checkpoint, "landed", page_rep)
        parsed = self._parse(body, url, cursor.page, landed.sha256)
        page_rep.records, page_rep.salvaged = len(parsed.records), parsed.salvaged
        if parsed.count is None:
            raise PageFormatError(f"{redact_url(url)}: no integer 'count' in the page; a date "
                                  "window cannot be checked for completeness without it")

        self._check_window(url, lo, hi, parsed)  # before any use of the page, narrowing included
        capacity = self.api.params.window_capacity
        if cursor.page == 1 and parsed.count > capacity:
            cursor = self._narrow(cursor, parsed, url, lo, hi)
            page_rep.narrowed = True
            self.cursors.save(cursor)
            _checkpoint(on_checkpoint, "committed", page_rep)
            log.info("openlegaldata %s: %d records > %d reachable; window narrowed to %s..%s",
                     redact_url(url), parsed.count, capacity, cursor.window_lo or "…",
                     cursor.window_hi or "…")
            return cursor

        self._ingest(parsed, url, cursor.page, landed.sha256, fetched_at, page_rep)
        _checkpoint(on_checkpoint, "written", page_rep)

        dates = [d for r in parsed.records if (d := _record_date(r)) is not None]
        newest = max([*dates, *([_day(cursor.max_date_seen)] if cursor.max_date_seen else [])],
                     default=None)
        cursor = replace(cursor, pages_committed=cursor.pages_committed + 1,
                         window_keys=[*cursor.window_keys, *(_record_key(r) for r in parsed.records)],
                         window_count=parsed.count, max_date_seen=_iso(newest))
        last = parsed.next_url is None or cursor.page >= self.api.params.max_pages
        page_rep.last_page = last
        if last:
            cursor = self._close_window(cursor, parsed.count, lo, hi)
        else:
            cursor = replace(cursor, page=cursor.page + 1)
        self.cursors.save(cursor)
        _checkpoint(on_checkpoint, "committed", page_rep)
        self._log_page(url, page_rep)
        return cursor

    def _close_window(self, cursor: SyncCursor, count: int, lo: date | None,
                      hi: date | None) -> SyncCursor:
        """After a window's last page: read it again if records are missing, else move on."""
        seen = len(set(cursor.window_keys))
        window = f"{cursor.window_lo or '…'}..{cursor.window_hi or '…'}"
        if seen < count:
            if cursor.window_rereads >= self.windows.max_rereads:
                raise OpenLegalDataError(
                    f"date window {window}: {seen} distinct record(s) of {count} after "
                    f"{cursor.window_rereads + 1} read(s); the server's order within the window "
                    "is not stable or the window keeps changing. The cursor stays on this window.")
            log.warning("openlegaldata date window %s: %d of %d record(s) seen; reading it again",
                        window, seen, count)
            return replace(cursor, page=1, window_rereads=cursor.window_rereads + 1)
        done = replace(cursor, page=1, window_keys=[], window_count=None, window_rereads=0,
                       windows_done=cursor.windows_done + 1)
        if hi is None:  # the unbounded last window: the pass is over
            now = self._now().isoformat(timespec="seconds")
            return replace(done, complete=True, last_completed_at=now,
                           last_full_scan_at=now if cursor.pass_full else cursor.last_full_scan_at)
        span = cursor.window_days or self.windows.window_days
        if count * 4 <= self.api.params.window_capacity:  # sparse: take bigger steps
            span = min(span * 2, self.windows.max_span_days)
        nxt = hi + timedelta(days=1)
        return replace(done, window_lo=_iso(nxt), window_hi=_iso(self._window_end(nxt, span)),
                       window_days=span)

    def _narrow(self, cursor: SyncCursor, parsed: ParsedPage, url: str, lo: date | None,
                hi: date | None) -> SyncCursor:
        """Halve a window holding more records than the server lets us page through."""
        base = lo
        if base is None:  # unbounded below: start from the earliest date this page shows
            base = min((d for r in parsed.records if (d := _record_date(r)) is not None),
                       default=None)
            if base is None:
                raise OpenLegalDataError(f"{redact_url(url)}: {parsed.count} records, more than "
                                         f"{self.api.params.window_capacity} reachable, and no "
                                         "readable decision date on the page to split the window at")
        if hi is None:
            new_hi = base + timedelta(days=(cursor.window_days or self.windows.window_days) - 1)
        elif hi <= base:
            raise OpenLegalDataError(
                f"{redact_url(url)}: the single day {hi} holds {parsed.count} cases, more than "
                f"the {self.api.params.window_capacity} the API lets us page through "
                f"(max_pages {self.api.params.max_pages} × page_size "
                f"{self.api.params.page_size}); raise LEXPIPE_OLDP_PAGE_SIZE (up to {MAX_PAGE_SIZE})")
        else:
            new_hi = base + (hi - base) // 2
        return replace(cursor, page=1, window_hi=_iso(new_hi), window_count=None, window_keys=[],
                       window_rereads=0, window_days=(new_hi - base).days + 1,
                       pages_committed=cursor.pages_committed + 1)

    @staticmethod
    def _check_window(url: str, lo: date | None, hi: date | None, parsed: ParsedPage) -> None:
        for rec in parsed.records:
            d = _record_date(rec)
            if d is not None and ((lo is not None and d < lo) or (hi is not None and d > hi)):
                raise CursorContractError(
                    f"{redact_url(url)}: record {rec.index} (id {record_id_of(rec)}) has date {d}, "
                    f"outside the requested window {lo or '…'}..{hi or '…'}; does the server "
                    "honour date_after/date_before?")

    @staticmethod
    def _check_order(url: str, key: CaseKey | None, keys: list[tuple[int, CaseKey]]) -> None:
        for (i_prev, prev), (i_cur, cur) in zip(keys, keys[1:]):
            if cur < prev:
                raise CursorContractError(
                    f"{redact_url(url)}: results not sorted by (updated_date, id): record {i_cur} "
                    f"(id {cur.case_id}, {cur.raw}) after record {i_prev} (id {prev.case_id}, "
                    f"{prev.raw}); does the server honour the ordering parameter?")
        if key is not None:
            for i, k in keys:
                if k.updated < key.updated:
                    raise CursorContractError(
                        f"{redact_url(url)}: record {i} (id {k.case_id}) has updated_date {k.raw} "
                        f"before the cursor {key.raw}; does the server honour the filter?")

    def _advance(self, cursor: SyncCursor, key: CaseKey | None, keys: list[CaseKey],
                 last_page: bool) -> SyncCursor:
        top = max(keys) if keys else None
        if key is not None and top is not None and top < key:
            top = key
        new = SyncCursor(updated_date=cursor.updated_date, case_id=cursor.case_id,
                         page=cursor.page, pages_committed=cursor.pages_committed + 1,
                         last_completed_at=cursor.last_completed_at)
        if top is not None:
            new.updated_date, new.case_id = top.raw, top.case_id
        if last_page:
            new.page, new.complete = 1, True
            new.last_completed_at = self._now().isoformat(timespec="seconds")
        elif top is not None and (key is None or top.updated > key.updated):
            new.page = 1  # restart at the head of the narrower filter
        else:
            new.page = cursor.page + 1  # the page held nothing newer than the cursor's timestamp
        return new

    # -- courts --------------------------------------------------------------------------------

    def sync_courts(self, *, max_pages: int = 1000) -> int:
        """Fetch the whole court list; replace the snapshot only when every page was read.

        Holds this home's sync lock; the walk and its all-or-nothing checks are
        ``connectors.openlegaldata.courts.sync_court_list``. Returns the number of courts written.
        """
        with SyncLock(self.paths.lock_path, source="Open Legal Data", error=SyncLockedError):
            return sync_court_list(self.api, self.store, self.landing, now=self._now,
                                   max_pages=max_pages)


def _checkpoint(hook: Checkpoint | None, stage: str, page: PageReport) -> None:
    if hook is not None:
        hook(stage, page)


def case_sync_from_settings(settings: Any, oldp: OpenLegalDataSettings | None = None, *,
                            home: Path | None = None, **client_overrides: Any) -> CaseSync:
    """The case sync the settings ask for, like ``eli_source_from_settings``.

    ``settings.offline`` (the default): the sample files of ``settings.sample_dir`` served by an
    in-process emulator of the live API (no socket, no network, no rate limit — nothing remote
    to be polite to), through the same client, landing, validation, store and cursor code.
    Otherwise: the live API at ``LEXPIPE_OLDP_BASE_URL`` with the polite client's rate limit,
    retries and the token. ``LEXPIPE_OLDP_*`` choose the sync mode and the window shape either way.
    """
    oldp = oldp or OpenLegalDataSettings()
    if settings.offline:
        emulator = SampleOpenLegalData(Path(settings.sample_dir))
        client = PoliteHttpClient(user_agent=settings.user_agent, timeout_s=settings.http_timeout_s,
                                  max_retries=0, min_interval_s=0.0,
                                  transport=emulator.transport())
        api = OpenLegalDataApi(client, SAMPLE_BASE_URL, params=api_params(oldp))
    else:
        api = OpenLegalDataApi.from_settings(settings, oldp, **client_overrides)
    return CaseSync(api, Path(home) if home is not None else Path(settings.home),
                    mode=oldp.sync_mode, windows=window_config(oldp))
