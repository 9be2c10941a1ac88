"""Open Legal Data (https://de.openlegaldata.io/api/) case-law connector: incremental and crash-safe.

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
against ``connectors.openlegaldata_sample.SampleOpenLegalData`` — the sample files served through
an in-process httpx transport that behaves like the live API — so validation, quarantine, store and
cursor have one code path.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping

import httpx
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from connectors.case_store import CaseStore, VersionIndex
from connectors.http import HttpFetchError, PoliteHttpClient, redact_url
from connectors.landing import RawLandingZone
from connectors.openlegaldata_sample import PAGINATE_UNTIL, SAMPLE_BASE_URL, SampleOpenLegalData
from core.atomic import atomic_write_json

log = logging.getLogger(__name__)

SOURCE = "openlegaldata"
DEFAULT_BASE_URL = "https://de.openlegaldata.io/api"
MAX_PAGE_SIZE = 1000  # SmallResultsSetPagination.max_page_size
CASES_ACT_ID = "de:openlegaldata:cases"    # landing-zone provenance labels
COURTS_ACT_ID = "de:openlegaldata:courts"
_PAGE_EXCERPT = 4096
# Landed page bodies are <sha>.page: a ".json" blob would be overwritten by its own sidecar
# (<sha>.json) in RawLandingZone, and any "*.json" blob would be read as a sidecar by find().
_PAGE_SUFFIX = ".page"
_CASE_FIELDS = frozenset({"id", "slug", "court", "file_number", "date", "created_date",
                          "updated_date", "type", "ecli", "content"})
_COURT_FIELDS = frozenset({"id", "name", "code", "slug", "court_type", "city", "state",
                           "jurisdiction", "level_of_appeal", "updated_date"})
_ID_GUESS = re.compile(r'"(?:id|pk)"\s*:\s*(\d+)')


# -- configuration ------------------------------------------------------------------------------


class OpenLegalDataSettings(BaseSettings):
    """``LEXPIPE_OLDP_*``: where the API is, the token, and how the cursor is expressed."""

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_OLDP_", extra="ignore")

    base_url: str = DEFAULT_BASE_URL
    api_token: SecretStr | None = None
    page_size: int = 100
    ordering: str = "updated_date,id"
    since_param: str = "updated_date__gte"
    sync_mode: Literal["auto", "keyset", "date_windows"] = Field("auto", description=(
        "keyset needs ordering/filtering by updated_date (the live API has neither); date_windows "
        "walks decision-date windows; auto tries keyset and falls back for good on a contract failure."))
    max_pages: int = Field(PAGINATE_UNTIL, description=(
        "Deepest page the server serves (oldp PAGINATE_UNTIL): a date window holds at most "
        "max_pages × page_size records."))
    window_days: int = Field(31, description="Initial span of a date window (adapts to the density).")
    overlap_days: int = Field(60, description=(
        "An incremental date-window pass re-reads this many days before the newest decision date seen."))
    full_rescan_days: int = Field(30, description=(
        "Start a date-window pass from the beginning when the last full one is older (0 = never again)."))


@dataclass(frozen=True)
class ApiParams:
    """Query parameters carrying the keyset cursor (the server must honour them; we verify)."""

    ordering: str = "updated_date,id"
    since_param: str = "updated_date__gte"
    page_size: int = 100
    max_pages: int = PAGINATE_UNTIL  # the server's page cap (date-window mode sizes windows by it)

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be in 1..{MAX_PAGE_SIZE}, got {self.page_size}")
        if self.max_pages < 1:
            raise ValueError(f"max_pages must be at least 1, got {self.max_pages}")

    @property
    def window_capacity(self) -> int:
        """How many records of one filter the server lets us page through."""
        return self.max_pages * self.page_size


@dataclass(frozen=True)
class WindowConfig:
    """Shape of the date-window walk (``LEXPIPE_OLDP_*``; see the module docstring)."""

    window_days: int = 31
    overlap_days: int = 60
    full_rescan_days: int = 30
    max_rereads: int = 2
    max_span_days: int = 3660

    def __post_init__(self) -> None:
        if self.window_days < 1 or self.overlap_days < 0 or self.full_rescan_days < 0:
            raise ValueError(f"invalid date-window settings: {self}")


@dataclass(frozen=True)
class OldpPaths:
    """Where this connector keeps its state and data under ``$LEXPIPE_HOME``.

        state/openlegaldata/cases_cursor.json   the persisted cursor (atomic JSON)
        state/openlegaldata/cases.lock          one sync at a time (flock; freed by the kernel on death)
        caselaw/de/openlegaldata/                CaseStore: cases/, quarantine/, courts.parquet
        raw/                                     RawLandingZone: every page body, content-addressed
    """

    home: Path

    @property
    def state_dir(self) -> Path:
        return self.home / "state" / SOURCE

    @property
    def cursor_path(self) -> Path:
        return self.state_dir / "cases_cursor.json"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / "cases.lock"

    @property
    def store_root(self) -> Path:
        return self.home / "caselaw" / "de" / SOURCE

    @property
    def raw(self) -> Path:
        return self.home / "raw"


# -- errors -------------------------------------------------------------------------------------


class OpenLegalDataError(Exception):
    """The sync stopped; the cursor still points at the last fully committed page."""


class CursorContractError(OpenLegalDataError):
    """The server's page is not sorted by (updated_date, id) or lies below the cursor filter, or
    (date windows) holds a record whose decision date is outside the requested window."""


class PageFormatError(OpenLegalDataError):
    """A page body whose envelope (count/next/results) cannot be read at all."""


class SyncLockedError(OpenLegalDataError):
    """Another sync holds the lock for this LEXPIPE_HOME."""


# -- timestamps and keys ------------------------------------------------------------------------


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 text → aware UTC datetime; naive values are taken as UTC; anything else → None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


@dataclass(frozen=True, order=True)
class CaseKey:
    """A record's position in the (updated_date, id) order; ``raw`` is echoed back to the API."""

    updated: datetime
    case_id: int
    raw: str = field(compare=False)


def case_key(obj: Any) -> CaseKey | None:
    """The ordering key if ``id`` and ``updated_date`` are readable (even if the record is not)."""
    if not isinstance(obj, dict):
        return None
    cid, raw = obj.get("id"), obj.get("updated_date")
    if type(cid) is not int:
        return None
    updated = parse_timestamp(raw)
    return CaseKey(updated, cid, raw) if updated is not None else None


# -- the persisted cursor -----------------------------------------------------------------------


@dataclass
class SyncCursor:
    """Last committed key ``(updated_date, case_id)`` and the page of its filter to ask next.

    ``page`` > 1 only while walking a run of records sharing ``updated_date``.
    ``complete`` is True when the last sync reached the end of the list.

    Date-window mode (``mode == "date_windows"``) uses ``window_lo``/``window_hi`` (ISO dates,
    None = unbounded), ``page`` within the window, ``window_count`` (the window's ``count``),
    ``window_keys`` (records read in the window so far, for the completeness check),
    ``window_rereads``, ``window_days`` (the current span), ``max_date_seen`` (newest decision
    date read: where the next incremental pass starts, minus the overlap), ``pass_full`` (this
    pass started from the beginning) and ``last_full_scan_at``.
    """

    updated_date: str | None = None
    case_id: int | None = None
    page: int = 1
    complete: bool = False
    pages_committed: int = 0
    last_completed_at: str | None = None
    format: int = 2
    mode: str = "keyset"
    window_lo: str | None = None
    window_hi: str | None = None
    window_count: int | None = None
    window_keys: list[str] = field(default_factory=list)
    window_rereads: int = 0
    window_days: int = 0
    windows_done: int = 0
    max_date_seen: str | None = None
    pass_full: bool = False
    last_full_scan_at: str | None = None

    @property
    def key(self) -> CaseKey | None:
        if self.updated_date is None or self.case_id is None:
            return None
        updated = parse_timestamp(self.updated_date)
        if updated is None:
            raise OpenLegalDataError(f"persisted cursor has an unreadable updated_date "
                                     f"{self.updated_date!r}")
        return CaseKey(updated, self.case_id, self.updated_date)


class CursorStore:
    """The cursor as one JSON file, replaced atomically (temp + fsync + rename)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> SyncCursor:
        if not self.path.exists():
            return SyncCursor()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            # Unlike a cache, a lost cursor silently means "start over"; refuse instead.
            raise OpenLegalDataError(f"unreadable cursor {self.path}: {exc}") from exc
        known = {f for f in SyncCursor.__dataclass_fields__}
        return SyncCursor(**{k: v for k, v in data.items() if k in known})

    def save(self, cursor: SyncCursor) -> None:
        atomic_write_json(self.path, asdict(cursor))


# -- page parsing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawRecord:
    """One element of ``results``: parsed ``obj`` or the JSON ``error``, plus its text."""

    index: int
    text: str
    obj: Any = None
    error: str | None = None


@dataclass(frozen=True)
class SourceProbe:
    url: str
    count: int
    newest_date: str | None
    newest_id: Any

    @property
    def fingerprint(self) -> str:
        """Changes when a decision is added or removed (count) or a newer one appears."""
        return f"{self.count}:{self.newest_date}:{self.newest_id}"


@dataclass(frozen=True)
class ParsedPage:
    records: list[RawRecord]
    next_url: str | None
    count: int | None
    salvaged: bool = False  # the body was not valid JSON; records were split one by one


def parse_page(body: bytes) -> ParsedPage:
    """Read a DRF page record by record, keeping each record's exact text.

    The envelope and every record are decoded with the C JSON scanner (``raw_decode``), one value
    at a time. A record that is not valid JSON (say an invalid ``\\'`` escape) is delimited by
    a string- and bracket-aware scan instead and returned with its ``error``: one bad record does
    not cost the page. Raises ``PageFormatError`` when the envelope itself cannot be read.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PageFormatError(f"page body is not UTF-8: {exc}") from None
    try:
        envelope, records = _walk_envelope(text)
    except (ValueError, IndexError) as exc:
        raise PageFormatError(f"not a paginated JSON list: {exc}; body starts with "
                              f"{text[:60]!r}") from None
    if records is None:
        raise PageFormatError("page is JSON but not a paginated list (no 'results' array)")
    return ParsedPage(records, _next_url(envelope.get("next")), _count(envelope.get("count")),
                      salvaged=any(r.error is not None for r in records))


_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


def _walk_envelope(text: str) -> tuple[dict[str, Any], list[RawRecord] | None]:
    i = _skip_ws(text, 0)
    if not text.startswith("{", i):
        raise ValueError("body is not a JSON object")
    envelope: dict[str, Any] = {}
    records: list[RawRecord] | None = None
    i = _skip_ws(text, i + 1)
    if text.startswith("}", i):
        i += 1
    else:
        while True:
            key, i = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                raise ValueError(f"object key is not a string at offset {i}")
            i = _skip_ws(text, i)
            if not text.startswith(":", i):
                raise ValueError(f"expected ':' at offset {i}")
            i = _skip_ws(text, i + 1)
            if key == "results" and text.startswith("[", i):
                records, i = _walk_results(text, i)
            else:
                envelope[key], i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text.startswith(",", i):
                i = _skip_ws(text, i + 1)
                continue
            if text.startswith("}", i):
                i += 1
                break
            raise ValueError(f"expected ',' or '}}' at offset {i}")
    if _skip_ws(text, i) != len(text):
        raise ValueError(f"trailing data at offset {i}")
    return envelope, records


def _walk_results(text: str, i: int) -> tuple[list[RawRecord], int]:
    records: list[RawRecord] = []
    i = _skip_ws(text, i + 1)
    if text.startswith("]", i):
        return records, i + 1
    while True:
        start = i
        try:
            obj, i = _DECODER.raw_decode(text, start)
            records.append(RawRecord(len(records), text[start:i], obj))
        except ValueError:
            i = _value_end(text, start)  # ValueError here: cannot even delimit it → envelope
            piece = text[start:i]
            try:
                json.loads(piece)
                error = "not valid JSON"
            except ValueError as exc:  # the message with positions relative to the record
                error = str(exc)
            records.append(RawRecord(len(records), piece, error=error))
        i = _skip_ws(text, i)
        if text.startswith(",", i):
            i = _skip_ws(text, i + 1)
            continue
        if text.startswith("]", i):
            return records, i + 1
        raise ValueError(f"expected ',' or ']' in results at offset {i}")


def _next_url(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise PageFormatError(f"'next' is neither a URL nor null: {value!r}")


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    """Index past the string starting at ``text[i] == '"'``; any backslash escapes one char."""
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == '"':
            return j + 1
        else:
            j += 1
    raise ValueError("unterminated string")


def _value_end(text: str, i: int) -> int:
    """Index past the (possibly invalid) JSON value at ``i``, tracking strings and brackets."""
    if i >= len(text):
        raise ValueError("unexpected end of body")
    ch = text[i]
    if ch == '"':
        return _string_end(text, i)
    if ch in "{[":
        depth, j = 0, i
        while j < len(text):
            ch = text[j]
            if ch == '"':
                j = _string_end(text, j)
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ValueError("unterminated object or array")
    j = i
    while j < len(text) and text[j] not in ",}]" + _WS:
        j += 1
    if j == i:
        raise ValueError(f"unexpected {ch!r} at offset {i}")
    return j


# -- record validation --------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    """Optional text field: strings as sent ('' → None); other scalars as JSON text."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _required_text(obj: Mapping[str, Any], name: str, reasons: list[str]) -> str | None:
    if name not in obj:
        reasons.append(f"{name}: missing")
    elif obj[name] is None:
        reasons.append(f"{name}: null")
    elif not isinstance(obj[name], str):
        reasons.append(f"{name}: expected text, got {type(obj[name]).__name__}")
    elif not obj[name].strip():
        reasons.append(f"{name}: empty")
    else:
        return obj[name]
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _extra(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def validate_case(obj: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """API record → the CASES row fields it determines, or None and every reason it is refused.

    Required: integer ``id``; ``court`` (object with integer ``id``, or a bare integer);
    non-empty ``file_number``; ISO ``date``; ISO ``updated_date``; non-empty ``content``.
    Optional fields with unreadable values become null and keep their value in ``extra_json``.
    """
    if not isinstance(obj, dict):
        return None, [f"record is not a JSON object (got {type(obj).__name__})"]
    reasons: list[str] = []
    extra = _extra(obj, _CASE_FIELDS)

    cid = obj.get("id")
    if "id" not in obj:
        reasons.append("id: missing")
    elif cid is None:
        reasons.append("id: null")
    elif type(cid) is not int or cid <= 0:
        reasons.append(f"id: expected a positive integer, got {_short(cid)}")

    court = obj.get("court")
    court_id: int | None = None
    court_obj: dict[str, Any] | None = None
    if "court" not in obj or court is None:
        reasons.append("court: missing" if "court" not in obj else "court: null")
    elif type(court) is int:
        court_id = court
    elif isinstance(court, dict) and type(court.get("id")) is int:
        court_id, court_obj = court["id"], court
    else:
        reasons.append(f"court: expected an object with an integer 'id' or an integer, "
                       f"got {_short(court)}")

    file_number = _required_text(obj, "file_number", reasons)

    decision_date: date | None = None
    raw_date = _required_text(obj, "date", reasons)
    if raw_date is not None:
        try:
            decision_date = date.fromisoformat(raw_date.strip())
        except ValueError:
            reasons.append(f"date: not an ISO date (YYYY-MM-DD): {_short(raw_date)}")

    updated_raw = _required_text(obj, "updated_date", reasons)
    updated = parse_timestamp(updated_raw) if updated_raw is not None else None
    if updated_raw is not None and updated is None:
        reasons.append(f"updated_date: not an ISO timestamp: {_short(updated_raw)}")

    content = _required_text(obj, "content", reasons)

    if reasons:
        return None, reasons

    created = parse_timestamp(obj.get("created_date"))
    if obj.get("created_date") not in (None, "") and created is None:
        extra["created_date"] = obj["created_date"]
    row = {
        "source": SOURCE,
        "case_id": cid,
        "slug": _text(obj.get("slug")),
        "court_id": court_id,
        "court_name": _text(court_obj.get("name")) if court_obj else None,
        "court_slug": _text(court_obj.get("slug")) if court_obj else None,
        "court_jurisdiction": _text(court_obj.get("jurisdiction")) if court_obj else None,
        "court_level_of_appeal": _text(court_obj.get("level_of_appeal")) if court_obj else None,
        "court_json": (json.dumps(court_obj, ensure_ascii=False, sort_keys=True)
                       if court_obj else None),
        "file_number": file_number,
        "date": decision_date,
        "created_date": created,
        "updated_date": updated,
        "updated_date_raw": updated_raw,
        "type": _text(obj.get("type")),
        "ecli": _text(obj.get("ecli")),
        "content": content,
        "content_sha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),  # type: ignore[union-attr]
        "record_sha256": record_sha256(obj),
        "extra_json": json.dumps(extra, ensure_ascii=False, sort_keys=True),
    }
    return row, []


def record_sha256(obj: Any) -> str:
    """Hash of the record as sent, independent of key order and whitespace.

    Covers every field (not just ``updated_date`` + content): a server-side bulk ``update()``
    changes fields without touching Django's ``auto_now`` ``updated_date``."""
    canon = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def validate_court(obj: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """API court → COURTS row fields, or None and reasons (required: integer id, name)."""
    if not isinstance(obj, dict):
        return None, [f"record is not a JSON object (got {type(obj).__name__})"]
    reasons: list[str] = []
    if type(obj.get("id")) is not int:
        reasons.append("id: missing" if "id" not in obj
                       else f"id: expected an integer, got {_short(obj.get('id'))}")
    name = _required_text(obj, "name", reasons)
    if reasons:
        return None, reasons
    extra = _extra(obj, _COURT_FIELDS)
    updated = parse_timestamp(obj.get("updated_date"))
    if obj.get("updated_date") not in (None, "") and updated is None:
        extra["updated_date"] = obj["updated_date"]
    row = {"source": SOURCE, "court_id": obj["id"], "name": name,
           **{k: _text(obj.get(k)) for k in ("code", "slug", "court_type", "city", "state",
                                             "jurisdiction", "level_of_appeal")},
           "updated_date": updated,
           "extra_json": json.dumps(extra, ensure_ascii=False, sort_keys=True)}
    return row, []


def _record_id(record: RawRecord) -> str | None:
    obj = record.obj
    if isinstance(obj, dict):
        value = obj.get("id", obj.get("pk"))
        if isinstance(value, (int, str)) and not isinstance(value, bool) and value != "":
            return str(value)
        return None
    match = _ID_GUESS.search(record.text) if record.error else None
    return match.group(1) if match else None


# -- HTTP side ----------------------------------------------------------------------------------


def api_params(oldp: OpenLegalDataSettings) -> ApiParams:
    return ApiParams(oldp.ordering, oldp.since_param, oldp.page_size, oldp.max_pages)


def window_config(oldp: OpenLegalDataSettings) -> WindowConfig:
    return WindowConfig(window_days=oldp.window_days, overlap_days=oldp.overlap_days,
                        full_rescan_days=oldp.full_rescan_days)


class OpenLegalDataApi:
    """Builds list URLs and GETs them politely, adding the token header per request."""

    def __init__(self, client: PoliteHttpClient, base_url: str = DEFAULT_BASE_URL, *,
                 api_token: SecretStr | str | None = None, params: ApiParams = ApiParams()) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")
        self._token = SecretStr(api_token) if isinstance(api_token, str) else api_token
        self.params = params

    @classmethod
    def from_settings(cls, settings: Any, oldp: OpenLegalDataSettings | None = None,
                      **client_overrides: Any) -> "OpenLegalDataApi":
        """Polite client from ``core.settings.Settings`` (user agent, rate limit, retries)
        + ``LEXPIPE_OLDP_*``. No validator cache: list pages are keyed by cursor, not revisited."""
        oldp = oldp or OpenLegalDataSettings()
        client = PoliteHttpClient.from_settings(settings, cache_path=None, **client_overrides)
        return cls(client, oldp.base_url, api_token=oldp.api_token, params=api_params(oldp))

    def __repr__(self) -> str:  # never show the token, even masked, in a repr
        return f"OpenLegalDataApi(base_url={self.base_url!r}, params={self.params!r})"

    def cases_url(self, since: str | None, page: int) -> str:
        query: dict[str, str | int] = {"ordering": self.params.ordering,
                                       "page_size": self.params.page_size}
        if since is not None:
            query[self.params.since_param] = since
        if page > 1:
            query["page"] = page
        return str(httpx.URL(f"{self.base_url}/cases/", params=query))

    def window_url(self, lo: str | None, hi: str | None, page: int) -> str:
        """A page of the decision-date window ``[lo, hi]`` (inclusive; None = unbounded)."""
        query: dict[str, str | int] = {"ordering": "date", "page_size": self.params.page_size}
        if lo is not None:
            query["date_after"] = lo
        if hi is not None:
            query["date_before"] = hi
        if page > 1:
            query["page"] = page
        return str(httpx.URL(f"{self.base_url}/cases/", params=query))

    def courts_url(self, offset: int = 0) -> str:
        """A page of ``/courts/``: ``limit``/``offset`` (the live view pages with the project's
        default ``CappedLimitOffsetPagination``, not ``page``/``page_size`` like ``/cases/``)."""
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        query: dict[str, str | int] = {"limit": self.params.page_size}
        if offset:
            query["offset"] = offset
        return str(httpx.URL(f"{self.base_url}/courts/", params=query))

    def follow_courts_link(self, next_url: str, offset: int) -> str:
        """The URL of the next ``/courts/`` page: the server's ``next`` link when it stays on this
        API (same scheme, host, port and path — the token header goes wherever we follow) and
        moves forward to ``offset`` (records read so far); else the ``limit``/``offset`` URL we
        compute ourselves, with a warning naming the link we did not follow."""
        ours = httpx.URL(self.courts_url(offset))
        try:
            link = httpx.URL(next_url)
            link_offset = int(link.params.get("offset", ""))
        except (httpx.InvalidURL, ValueError):
            link, link_offset = None, -1
        if (link is not None and (link.scheme, link.host, link.port, link.path.rstrip("/"))
                == (ours.scheme, ours.host, ours.port, ours.path.rstrip("/")) and link_offset == offset):
            return str(link)
        log.warning("openlegaldata courts: not following next link %s (expected %s at offset %d); "
                    "using %s", redact_url(next_url), redact_url(str(ours.copy_with(query=None))),
                    offset, redact_url(str(ours)))
        return str(ours)

    def probe_url(self) -> str:
        """One record, newest decision date first: ``ordering=-date`` is what the live API honours."""
        return str(httpx.URL(f"{self.base_url}/cases/", params={"ordering": "-date", "page_size": 1}))

    def probe(self) -> "SourceProbe":
        """What a change watcher compares between polls: the total count and the newest decision.

        One small request; it cannot see edits of older records (the sync's overlap window and
        full rescans catch those), but a new or removed decision changes it."""
        url = self.probe_url()
        body, _headers = self.get(url)
        try:
            page = parse_page(body)
        except PageFormatError as exc:
            raise PageFormatError(f"{url}: {exc}") from exc
        newest = next((r.obj for r in page.records if isinstance(r.obj, dict)), None)
        if page.count is None:
            raise PageFormatError(f"{url}: the page has no count")
        return SourceProbe(url=url, count=page.count,
                           newest_date=_text(newest.get("date")) if newest else None,
                           newest_id=newest.get("id") if newest else None)

    def get(self, url: str) -> tuple[bytes, dict[str, str]]:
        headers = {"Accept": "application/json"}
        if self._token is not None and self._token.get_secret_value():
            headers["Authorization"] = f"Token {self._token.get_secret_value()}"
        res = self.client.get(url, headers=headers, conditional=False)
        return res.content, res.headers


# -- the sync -----------------------------------------------------------------------------------


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


class _SyncLock:
    """Exclusive flock on a file: the kernel releases it when the process dies (even SIGKILL)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> "_SyncLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SyncLockedError(f"another Open Legal Data sync holds {self.path}") from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


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
        with _SyncLock(self.paths.lock_path):
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
                                    headers=headers, suffix=_PAGE_SUFFIX)
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
            self.store.write_quarantine([self._page_quarantine(body, url, page, raw_sha,
                                                               str(exc))])
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
                refused.append(self._record_quarantine("case", rec, reasons, url, page, raw_sha))
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
            body, source_url=url, act_id=CASES_ACT_ID, headers=headers, suffix=_PAGE_SUFFIX,
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
                    f"{redact_url(url)}: record {rec.index} (id {_record_id(rec)}) has date {d}, "
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

        ``/courts/`` pages by ``limit``/``offset`` (see ``OpenLegalDataApi.courts_url``): the
        first request asks ``limit=page_size``, later ones follow the server's ``next`` link
        (checked by ``follow_courts_link``) until it is null. All or nothing: the snapshot is
        replaced only when the pages' ``count`` stayed the same, the records read add up to it
        and no court came twice — otherwise the list changed under the offsets (a court added,
        removed or renamed moves the others across pages), a court may have been skipped, and
        the sync stops with ``OpenLegalDataError`` leaving the previous snapshot in place. Bad
        courts are quarantined (kind ``court``); an unreadable page (kind ``page``) stops the sync.
        Returns the number of courts written.
        """
        with _SyncLock(self.paths.lock_path):
            return self._sync_courts(max_pages)

    def _sync_courts(self, max_pages: int) -> int:
        rows: dict[int, dict[str, Any]] = {}
        offset, count = 0, None
        url = self.api.courts_url(0)
        for request_no in range(1, max_pages + 1):
            body, headers = self.api.get(url)
            fetched_at = self._now()
            landed = self.landing.store(body, source_url=url, act_id=COURTS_ACT_ID,
                                        version=f"offset={offset}", headers=headers, suffix=_PAGE_SUFFIX)
            try:
                parsed = parse_page(body)
                if parsed.count is None:
                    raise PageFormatError("no integer 'count' in the page; the court list cannot be "
                                          "checked for completeness without it")
            except PageFormatError as exc:
                self.store.write_quarantine([self._page_quarantine(body, url, request_no,
                                                                   landed.sha256, str(exc))])
                raise PageFormatError(f"{redact_url(url)}: {exc}") from None
            if count is not None and parsed.count != count:
                raise OpenLegalDataError(
                    f"{redact_url(url)}: the court list changed while paging (count {count}, now "
                    f"{parsed.count}); the courts snapshot was not replaced, run the sync again")
            count = parsed.count
            refused = []
            for rec in parsed.records:
                row, reasons = ((None, [f"not valid JSON: {rec.error}"]) if rec.error
                                else validate_court(rec.obj))
                if row is None:
                    refused.append(self._record_quarantine("court", rec, reasons, url, request_no,
                                                           landed.sha256))
                elif row["court_id"] in rows:
                    raise OpenLegalDataError(
                        f"{redact_url(url)}: court {row['court_id']} was already read on an earlier "
                        "page: the list moved under the offsets, so another court may have been "
                        "skipped; the courts snapshot was not replaced, run the sync again")
                else:
                    rows[row["court_id"]] = {**row, "source_url": url, "raw_sha256": landed.sha256,
                                             "fetched_at": fetched_at}
            self.store.write_quarantine(refused)
            offset += len(parsed.records)
            if parsed.next_url is None:
                break
            if not parsed.records:
                raise OpenLegalDataError(f"{redact_url(url)}: an empty page with a next link "
                                         f"({redact_url(parsed.next_url)}); the walk would not advance")
            url = self.api.follow_courts_link(parsed.next_url, offset)
        else:
            raise OpenLegalDataError(f"court list longer than {max_pages} pages of "
                                     f"{self.api.params.page_size}")
        if offset != count:
            raise OpenLegalDataError(
                f"{redact_url(url)}: {offset} court record(s) read, but the list counts {count}; "
                "the courts snapshot was not replaced, run the sync again")
        self.store.write_courts(sorted(rows.values(), key=lambda r: r["court_id"]))
        log.info("openlegaldata courts: %d court(s) in %d page(s), %d quarantined", len(rows),
                 request_no, offset - len(rows))
        return len(rows)

    # -- quarantine rows -----------------------------------------------------------------------

    def _record_quarantine(self, kind: str, rec: RawRecord, reasons: list[str], url: str,
                           page: int, raw_sha: str) -> dict[str, Any]:
        return {"quarantine_id": hashlib.sha256(f"{kind}\n{rec.text}".encode()).hexdigest(),
                "source": SOURCE, "kind": kind, "record_id": _record_id(rec), "reasons": reasons,
                "raw_record": rec.text, "source_url": url, "page": page,
                "record_index": rec.index, "raw_sha256": raw_sha, "quarantined_at": self._now()}

    def _page_quarantine(self, body: bytes, url: str, page: int, raw_sha: str,
                         reason: str) -> dict[str, Any]:
        return {"quarantine_id": hashlib.sha256(b"page\n" + body).hexdigest(), "source": SOURCE,
                "kind": "page", "record_id": None, "reasons": [reason],
                "raw_record": body[:_PAGE_EXCERPT].decode("utf-8", errors="replace"),
                "source_url": url, "page": page, "record_index": None, "raw_sha256": raw_sha,
                "quarantined_at": self._now()}


def _checkpoint(hook: Checkpoint | None, stage: str, page: PageReport) -> None:
    if hook is not None:
        hook(stage, page)


def iter_quarantine_reasons(store: CaseStore) -> Iterator[tuple[str, str | None, list[str]]]:
    """(kind, record id, reasons) per quarantined record: a convenience for reports and tests."""
    table = store.quarantine()
    for kind, rid, reasons in zip(table.column("kind").to_pylist(),
                                  table.column("record_id").to_pylist(),
                                  table.column("reasons").to_pylist()):
        yield kind, rid, reasons


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
