"""The SAOS dump API, answered in-process from the sample pages (the offline source).

Why an API emulator rather than a second reader: the offline default must run the *same* code as
the live sync — URL building, politeness, landing of raw page bodies, page parsing, link checks,
validation, quarantine, the judgment store and the cursor — so what the embedded default shows is
what the live connector does. ``SampleSaos.transport()`` is an ``httpx.MockTransport`` handed to
``PoliteHttpClient``: no socket, no network. The loopback test server (``tests/fake_saos.py``)
puts the same emulator behind a real HTTP server and adds fault injection.

The dump
--------
``<sample_dir>/pl/saos/judgments-page-<N>.json`` are real pages of
``https://www.saos.org.pl/api/dump/judgments?pageSize=100&pageNumber=<N>``. Taken in the order of
their page numbers, their ``items`` concatenated are the emulated dump, in that order (the live
dump orders by ``judgmentDate`` then ``id``, which the real pages already follow; hence ids look
unordered within a page). Every item is served as the JSON text of the record as published.

What the emulator answers, after the SAOS sources (``CeON/saos``, read with the code search)
-----------------------------------------------------------------------------------------
* ``DumpJudgmentsController`` (``GET /api/dump/judgments``, ``@RestrictParamsNames``): the only
  parameters are ``pageSize``, ``pageNumber``, ``judgmentStartDate``, ``judgmentEndDate``,
  ``sinceModificationDate`` and ``withGenerated``; any other parameter name is a 400.
* ``ParametersExtractor.extractAndValidatePagination``: ``pageSize`` absent or 0 → 20, else it
  must lie in 10..100; ``pageNumber`` (default 0) must not be negative; a non-integer is a 400
  (``TypeMismatchException``). Page ``N`` is the records at offset ``N × pageSize``.
* ``RequestDumpJudgmentsParameters``: ``judgmentStartDate`` / ``judgmentEndDate`` are ISO dates
  (``yyyy-MM-dd``, inclusive bounds on ``judgmentDate``); ``sinceModificationDate`` is
  ``yyyy-MM-dd'T'HH:mm:ss.SSS`` read in UTC (``@DateTimeWithZoneFormat``, zone ``UTC``);
  ``withGenerated`` a boolean. A value that does not convert is a 400 (``BindException``).
* ``JudgmentJpqlSearchImplementor``: ``judgmentDate >= :startDate``, ``judgmentDate <= :endDate``,
  ``modificationDate >= :sinceModificationDateTime`` (inclusive). Records without a judgment date
  never match a date bound (SQL NULL).
* ``DumpJudgmentsListSuccessRepresentationBuilder``: ``links`` = ``self``, ``prev`` (page > 0) and
  ``next`` (only while more records exist: the last page has no ``next``), each the dump URL with
  ``pageSize``, ``pageNumber``, then the non-empty date/time parameters and ``withGenerated`` when
  it was sent; ``queryTemplate`` echoes the values; ``info`` is null in the published pages.
* Errors (``ControllersEntityExceptionHandler``): ``{"error": {"httpStatus": "400", "reason":
  "WRONG REQUEST PARAMETER", "propertyName": …, "message": …}}`` with status 400.

Modification times: a published record carries none (``modificationDate`` is server-side only).
The emulator takes every sample record as last modified at ``SAMPLE_MODIFIED_AT`` (2024-01-01
00:00 UTC, before any pass the sample will see), so an incremental pass over unchanged data
returns no records; ``touch`` (tests) gives a record another modification time and content.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import urlencode

import httpx

from connectors.sample_transport import emulator_transport

DUMP_PATH = "/api/dump/judgments"
SAMPLE_BASE_URL = "http://saos.sample.invalid"  # never resolved: served in-process
SAMPLE_GLOB = "judgments-page-*.json"
SAMPLE_MODIFIED_AT = datetime(2024, 1, 1, tzinfo=timezone.utc)
MIN_PAGE_SIZE = 10  # restful.api.min.page.size
MAX_PAGE_SIZE = 100  # restful.api.max.page.size
DEFAULT_PAGE_SIZE = 20  # ParametersExtractor.defaultPageSize (pageSize absent or 0)
# the parameter names, in the order the server writes them into its links
DUMP_PARAMS = ("pageSize", "pageNumber", "judgmentStartDate", "judgmentEndDate",
               "sinceModificationDate", "withGenerated")

_PAGE_FILE = re.compile(r"judgments-page-(\d+)\.json$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SINCE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$")
_BOOLEANS = {"true": True, "on": True, "yes": True, "1": True,
             "false": False, "off": False, "no": False, "0": False}
_TEMPLATE_TEXT = {
    "pageNumber": ("Represents current page number", "Not negative integer"),
    "pageSize": ("Represents maximum number of items on the page",
                 f"Any integer greater or equal to {MIN_PAGE_SIZE} and less or equal to {MAX_PAGE_SIZE}"),
    "judgmentStartDate": ("Represents the earliest allowed judgment's date on the list of items",
                          "Date in format : 'yyyy-MM-dd'"),
    "judgmentEndDate": ("Represents the latest of allowed judgment's date on the list of items",
                        "Date in format : 'yyyy-MM-dd'"),
    "sinceModificationDate": ("Allows you to select judgments which were modified later than "
                              "the specified dateTime",
                              "DateTime in format : yyyy-MM-dd'T'HH:mm:ss.SSS"),
    "withGenerated": ("Tells whether the data generated by SAOS should be added to the dump, "
                      "defaults to true", [True, False]),
}


def format_since(moment: datetime) -> str:
    """``sinceModificationDate`` as the API reads and writes it: UTC, milliseconds, no zone.

    Sub-millisecond digits are dropped (rounding down): the filter is ``>=``, so an earlier bound
    only ever re-reads, never misses."""
    if moment.tzinfo is None:
        raise ValueError("sinceModificationDate needs an aware datetime (it is sent in UTC)")
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}"


def parse_since(text: str) -> datetime | None:
    """The inverse of ``format_since``; None when ``text`` is not in that exact format."""
    if not isinstance(text, str) or not _SINCE.match(text):
        return None
    try:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def parse_day(value: Any) -> date | None:
    """An ISO ``yyyy-MM-dd`` date, else None."""
    if not isinstance(value, str) or not _DATE.match(value.strip()):
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


@dataclass
class Row:
    """One served record: its exact text in ``items`` and the server-side columns it is
    filtered by (``judgment_date``, ``modified_at``), which the text need not show."""

    body: str
    judgment_id: int | None
    judgment_date: date | None
    modified_at: datetime
    source_file: str


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json;charset=UTF-8"


def _error(property_name: str | None, message: str, status: int = 400) -> Reply:
    reason = {400: "WRONG REQUEST PARAMETER", 404: "ELEMENT DOES NOT EXIST"}.get(status, "ERROR")
    error = {"httpStatus": str(status), "reason": reason, "propertyName": property_name,
             "message": message}
    return Reply(status, json.dumps({"error": error}).encode("utf-8"))


@dataclass(frozen=True)
class DumpArgs:
    """A validated dump request."""

    page_size: int
    page_number: int
    start: date | None
    end: date | None
    since: datetime | None
    with_generated: bool | None
    raw: Mapping[str, str]


def row_of(record: Any, body: str, *, modified_at: datetime = SAMPLE_MODIFIED_AT,
           source_file: str = "") -> Row:
    """A served row for ``record`` (its id and date when readable) with the text ``body``."""
    obj = record if isinstance(record, dict) else {}
    jid = obj.get("id")
    return Row(body, jid if type(jid) is int else None, parse_day(obj.get("judgmentDate")),
               modified_at, source_file)


class SampleSaos:
    """``GET /api/dump/judgments`` over the sample pages (read-only; loaded once)."""

    def __init__(self, sample_dir: Path, pages: Iterable[int] | None = None) -> None:
        """``pages``: the page numbers to serve (default every held page). A caller that fixes
        its figures on some pages names them, so that pages added to the folder later do not
        change what it is served."""
        self.folder = Path(sample_dir) / "pl" / "saos"
        files = sorted(((int(m.group(1)), p) for p in self.folder.glob(SAMPLE_GLOB)
                        if (m := _PAGE_FILE.search(p.name))), key=lambda t: t[0])
        if pages is not None:
            wanted = set(pages)
            missing = wanted - {n for n, _ in files}
            if missing:
                raise FileNotFoundError(f"{self.folder}: no SAOS sample page "
                                        + ", ".join(f"judgments-page-{n}.json" for n in sorted(missing)))
            files = [(n, p) for n, p in files if n in wanted]
        if not files:
            raise FileNotFoundError(f"no SAOS sample pages ({SAMPLE_GLOB}) in {self.folder} "
                                    "(set LEXPIPE_SAMPLE_DIR)")
        self.page_files = [p for _, p in files]
        self._lock = threading.Lock()
        self.rows: list[Row] = []
        for path in self.page_files:
            try:
                items = json.loads(path.read_text("utf-8"))["items"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}: not a readable SAOS dump page: {exc}") from exc
            for item in items:
                self.rows.append(row_of(item, json.dumps(item, ensure_ascii=False),
                                        source_file=path.name))

    # -- server-side changes (tests) ----------------------------------------------------------

    def touch(self, judgment_id: int, modified_at: datetime, **fields: Any) -> None:
        """Simulate an edit: a new modification time and, optionally, new field values."""
        with self._lock:
            row = next(r for r in self.rows if r.judgment_id == judgment_id)
            record = json.loads(row.body)
            record.update(fields)
            self.rows[self.rows.index(row)] = row_of(record, json.dumps(record, ensure_ascii=False),
                                                     modified_at=modified_at,
                                                     source_file=row.source_file)

    def insert(self, position: int, body: str, *, record: Any = None,
               modified_at: datetime = SAMPLE_MODIFIED_AT) -> None:
        """Put a record (any text, even invalid JSON) at ``position`` of the dump order;
        ``record`` gives its server-side id and date when ``body`` cannot be read."""
        if record is None:
            try:
                record = json.loads(body)
            except ValueError:
                record = None
        with self._lock:
            self.rows.insert(position, row_of(record, body, modified_at=modified_at,
                                              source_file="(inserted)"))

    def delete(self, judgment_id: int) -> None:
        with self._lock:
            self.rows = [r for r in self.rows if r.judgment_id != judgment_id]

    def served_judgment_ids(self) -> list[int]:
        return sorted(r.judgment_id for r in self.rows if r.judgment_id is not None)

    # -- requests -----------------------------------------------------------------------------

    def respond(self, path: str, args: Mapping[str, str], base_url: str) -> Reply:
        """Answer ``GET path?args``; ``base_url`` (scheme, host, path) is used in the links."""
        if path.rstrip("/") != DUMP_PATH:
            return _error(None, f"no such resource {path}", 404)
        parsed = self.parse_args(args)
        if isinstance(parsed, Reply):
            return parsed
        with self._lock:
            rows = [r for r in self.rows if self._matches(r, parsed)]
        offset = parsed.page_number * parsed.page_size
        chunk = rows[offset: offset + parsed.page_size]
        has_more = len(rows) > offset + parsed.page_size
        links = [{"rel": "self", "href": self._link(base_url, parsed, parsed.page_number)}]
        if parsed.page_number > 0:
            links.append({"rel": "prev", "href": self._link(base_url, parsed, parsed.page_number - 1)})
        if has_more:
            links.append({"rel": "next", "href": self._link(base_url, parsed, parsed.page_number + 1)})
        head = json.dumps({"links": links})
        tail = json.dumps({"queryTemplate": self._template(parsed), "info": None})
        body = (head[:-1] + ', "items": [' + ", ".join(r.body for r in chunk) + "], "
                + tail[1:])
        return Reply(200, body.encode("utf-8"))

    @staticmethod
    def parse_args(args: Mapping[str, str]) -> DumpArgs | Reply:
        """Validate the query as the live controller does; a 400 ``Reply`` when it refuses."""
        unknown = sorted(set(args) - set(DUMP_PARAMS))
        if unknown:
            return _error(unknown[0], f"request parameter '{unknown[0]}' is not allowed")
        ints: dict[str, int] = {}
        for name, default in (("pageSize", 0), ("pageNumber", 0)):
            raw = (args.get(name) or "").strip()
            try:
                ints[name] = int(raw) if raw else default
            except ValueError:
                return _error(name, f"incorrect parameter value '{raw}'")
        size = ints["pageSize"] or DEFAULT_PAGE_SIZE
        if size < 0:
            return _error("pageSize", "may not be negative")
        if size > MAX_PAGE_SIZE:
            return _error("pageSize", f"may not be greater than {MAX_PAGE_SIZE}")
        if size < MIN_PAGE_SIZE:
            return _error("pageSize", f"may not be less than {MIN_PAGE_SIZE}")
        if ints["pageNumber"] < 0:
            return _error("pageNumber", "may not be negative")
        days: dict[str, date | None] = {}
        for name in ("judgmentStartDate", "judgmentEndDate"):
            raw = (args.get(name) or "").strip()
            days[name] = parse_day(raw) if raw else None
            if raw and days[name] is None:
                return _error(name, f"parameter '{name}' : can't have value '{raw}'")
        raw_since = (args.get("sinceModificationDate") or "").strip()
        since = parse_since(raw_since) if raw_since else None
        if raw_since and since is None:
            return _error("sinceModificationDate",
                          f"parameter 'sinceModificationDate' : can't have value '{raw_since}'")
        raw_gen = (args.get("withGenerated") or "").strip().lower()
        if raw_gen and raw_gen not in _BOOLEANS:
            return _error("withGenerated", f"parameter 'withGenerated' : can't have value '{raw_gen}'")
        return DumpArgs(size, ints["pageNumber"], days["judgmentStartDate"],
                        days["judgmentEndDate"], since, _BOOLEANS.get(raw_gen) if raw_gen else None,
                        dict(args))

    @staticmethod
    def _matches(row: Row, q: DumpArgs) -> bool:
        if q.start is not None and (row.judgment_date is None or row.judgment_date < q.start):
            return False
        if q.end is not None and (row.judgment_date is None or row.judgment_date > q.end):
            return False
        return q.since is None or row.modified_at >= q.since

    @staticmethod
    def _link(base_url: str, q: DumpArgs, page: int) -> str:
        query: list[tuple[str, str]] = [("pageSize", str(q.page_size)), ("pageNumber", str(page))]
        if q.start is not None:
            query.append(("judgmentStartDate", q.start.isoformat()))
        if q.end is not None:
            query.append(("judgmentEndDate", q.end.isoformat()))
        if q.since is not None:
            query.append(("sinceModificationDate", format_since(q.since)))
        if q.with_generated is not None:
            query.append(("withGenerated", "true" if q.with_generated else "false"))
        return f"{base_url}?{urlencode(query)}"

    @staticmethod
    def _template(q: DumpArgs) -> dict[str, Any]:
        values: dict[str, Any] = {
            "pageNumber": q.page_number, "pageSize": q.page_size,
            "judgmentStartDate": q.start.isoformat() if q.start else "",
            "judgmentEndDate": q.end.isoformat() if q.end else "",
            "sinceModificationDate": format_since(q.since) if q.since else "",
            "withGenerated": q.with_generated,
        }
        return {name: {"value": values[name], "description": text, "allowedValues": allowed}
                for name, (text, allowed) in _TEMPLATE_TEXT.items()}

    # -- in-process transport -----------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        """An httpx transport answering every GET from the samples (for ``PoliteHttpClient``)."""
        return emulator_transport(self)
