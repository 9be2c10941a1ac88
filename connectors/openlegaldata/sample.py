"""The Open Legal Data list API, answered in-process from the sample files (the offline source).

Why an API emulator rather than a second reader: the offline default must exercise the *same* code
path as the live sync — URL building, politeness, landing of raw page bodies, page parsing,
validation, quarantine, the case store and the cursor — so that what the embedded default shows
is what the live connector does. ``SampleOpenLegalData.transport()`` is an ``httpx.MockTransport``
handed to ``PoliteHttpClient``: no socket, no network, and nothing downstream knows the difference.
The loopback test server (``tests/fake_openlegaldata.py``) wraps the same emulator and adds fault
injection.

``<sample_dir>/de/openlegaldata/`` holds Django fixture dumps (``[{"model": "cases.case", "pk": …,
"fields": {…}}]``), loose records in other shapes (openJur exports, an old serializer with
``"id": null``) and one file that is not even valid JSON. They become what ``GET /api/cases/``
returns:

* fixture cases become API records: ``id`` = pk, ``court`` = the court object from
  ``courts.json`` (or just ``{"id": …}`` when the sample has no such court), the API fields, and
  every other fixture field passed through as a field the connector does not know (schema drift);
* every other file is served verbatim as one element of ``results`` — the invalid-JSON file is
  spliced in as raw text, so that page's body is not valid JSON either;
* a record's server-side sort keys are its own ``updated_date`` / ``date`` when readable (ISO),
  else fixed synthetic ones (as if the database held values the payload does not show), placed
  between the April and the December 2018 cases so malformed records show up mid-stream.

Server behaviours (``behaviour``), after the ``openlegaldata/oldp`` sources (see the module
docstring of ``connectors/openlegaldata/sync.py`` for the files):

``"live"`` (default)
    ``CaseViewSet``: DRF ``OrderingFilter`` with ``ordering_fields = ("date",)`` — unknown
    ordering terms are dropped silently and, with none left, the model's default ``-date``
    applies; ``CaseAPIFilter`` has a ``date`` ``DateFromToRangeFilter`` (``date_after`` /
    ``date_before``, inclusive) and no ``updated_date`` filter — unknown query parameters are
    ignored; ``SmallResultsSetPagination`` caps ``page_size`` at 1000 and refuses pages beyond
    ``PAGINATE_UNTIL`` (10) with a 404.
``"keyset"``
    A server that also honours ``ordering=updated_date,id`` and ``updated_date__gte`` (what the
    connector's preferred keyset mode needs).
``"ignore"``
    Ignores every ordering and filter parameter and lists by id.

Ties of the requested order are broken by id, or shuffled per request with ``shuffle_ties``
(SQL gives no order among equal sort keys; MySQL's ``ORDER BY date LIMIT … OFFSET …`` may
return ties in a different order on each request).

``GET /api/courts/`` is answered as ``oldp/api/views.py`` ``CourtViewSet`` does, which sets no
``pagination_class`` and so pages with the project default, ``oldp.api.CappedLimitOffsetPagination``
(DRF ``LimitOffsetPagination`` with ``default_limit = 50``, ``max_limit = 1000``, and a 404 for an
``offset`` above ``PAGINATE_UNTIL × max_limit``): ``limit``/``offset`` query parameters, ``page``
and ``page_size`` ignored, ``next``/``previous`` links carrying ``limit`` and ``offset`` (DRF's
``replace_query_param``: every query parameter kept, sorted), an offset past the end an empty
``results`` list (not a 404). Records are ``CourtSerializer`` objects in the view's order
(``Court.objects.all().order_by("name")``): the fixture's fields the serializer names (``id`` = pk);
fixture fields it does not name (``aliases``, ``wikipedia_title``) are not served, and serializer
fields the older fixture lacks (``homepage``, ``review_status``, …) are served as null.
"""

from __future__ import annotations

import json
import math
import random
import threading
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, Mapping
from urllib.parse import urlencode

import httpx

from connectors.sample_transport import emulator_transport

CASES_PATH = "/api/cases/"
COURTS_PATH = "/api/courts/"
SAMPLE_BASE_URL = "http://openlegaldata.sample.invalid/api"  # never resolved: served in-process
PAGINATE_UNTIL = 10  # oldp settings.py: PAGINATE_UNTIL = 10  # Max. number of pages
MAX_PAGE_SIZE = 1000
COURTS_DEFAULT_LIMIT = 50  # oldp.api.CappedLimitOffsetPagination.default_limit
COURTS_MAX_LIMIT = 1000  # oldp.api.CappedLimitOffsetPagination.max_limit
# oldp/apps/courts/serializers.py CourtSerializer.Meta.fields, in order
COURT_API_FIELDS = ("id", "name", "court_type", "city", "state", "code", "slug", "description", "image",
                    "homepage", "street_address", "postal_code", "address_locality", "telephone",
                    "fax_number", "jurisdiction", "level_of_appeal", "created_date", "updated_date",
                    "review_status")
BULK_EXPORT_URL = "https://static.openlegaldata.io/dumps/"
Behaviour = Literal["live", "keyset", "ignore"]

_API_CASE_FIELDS = ("slug", "file_number", "date", "created_date", "updated_date", "type", "ecli",
                    "content")
_SYNTHETIC_UPDATED = datetime(2018, 8, 1, tzinfo=timezone.utc)
_SYNTHETIC_DATE = date(2018, 8, 1)
_ORDERING_FIELDS: dict[str, frozenset[str]] = {
    "live": frozenset({"date"}),
    "keyset": frozenset({"date", "updated_date", "id"}),
    "ignore": frozenset(),
}


def _ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _day(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


@dataclass
class Row:
    """One served record: its server-side sort keys and the exact text put into ``results``."""

    updated: datetime
    decided: date
    row_id: int
    body: str
    source_file: str
    case_id: int | None = None


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"


def _json_reply(status: int, obj: Any) -> Reply:
    return Reply(status, json.dumps(obj).encode("utf-8"))


class SampleOpenLegalData:
    """``/api/cases/`` and ``/api/courts/`` over the sample folder (read-only; loaded once)."""

    def __init__(self, sample_dir: Path, *, behaviour: Behaviour = "live",
                 page_cap: int = PAGINATE_UNTIL, shuffle_ties: bool = False,
                 seed: int = 0, courts_default_limit: int = COURTS_DEFAULT_LIMIT) -> None:
        if behaviour not in _ORDERING_FIELDS:
            raise ValueError(f"behaviour must be one of {sorted(_ORDERING_FIELDS)}, got {behaviour!r}")
        self.folder = Path(sample_dir) / "de" / "openlegaldata"
        if not self.folder.is_dir():
            raise FileNotFoundError(f"Open Legal Data sample folder {self.folder} does not exist "
                                    "(set LEXPIPE_SAMPLE_DIR)")
        self.behaviour: Behaviour = behaviour
        self.page_cap = page_cap
        self.courts_default_limit = courts_default_limit  # /courts/ without a usable ``limit``
        self.shuffle_ties = shuffle_ties
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        courts_file = self.folder / "courts.json"
        try:
            courts = json.loads(courts_file.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{courts_file}: cannot read the court fixtures: {exc}") from exc
        self.courts = {c["pk"]: {"id": c["pk"], **c["fields"]}
                       for c in courts if isinstance(c, dict) and c.get("model") == "courts.court"}
        self.rows: list[Row] = []
        self._load()

    # -- sample → API -------------------------------------------------------------------------

    def _court_minimal(self, court_id: int) -> dict[str, Any]:
        court = self.courts.get(court_id)
        if court is None:
            return {"id": court_id}
        return {k: court.get(k) for k in ("id", "name", "slug", "city", "state")}

    def api_case(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A ``cases.case`` fixture entry as the API serializes it (unknown fields passed on)."""
        fields = dict(entry["fields"])
        record: dict[str, Any] = {"id": entry["pk"],
                                  "court": self._court_minimal(fields.pop("court"))}
        for name in _API_CASE_FIELDS:
            record[name] = fields.pop(name, None)
        record.update(fields)
        return record

    def _load(self) -> None:
        synthetic = 0
        for path in sorted(self.folder.glob("*.json")):
            if path.name == "courts.json":
                continue
            text = path.read_text("utf-8").strip()
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, list):
                for entry in data:
                    if isinstance(entry, dict) and entry.get("model") == "cases.case":
                        record = self.api_case(entry)
                        self.rows.append(Row(
                            _ts(record["updated_date"]) or _SYNTHETIC_UPDATED,
                            _day(record["date"]) or _SYNTHETIC_DATE, record["id"],
                            json.dumps(record, ensure_ascii=False), path.name,
                            case_id=record["id"]))
                continue
            obj = data if isinstance(data, dict) else {}
            rid, updated, decided = obj.get("id"), _ts(obj.get("updated_date")), _day(obj.get("date"))
            if updated is None or type(rid) is not int or decided is None:
                synthetic += 1
            self.rows.append(Row(
                updated or _SYNTHETIC_UPDATED + timedelta(seconds=synthetic),
                decided or _SYNTHETIC_DATE + timedelta(days=synthetic),
                rid if type(rid) is int else 900_000 + synthetic, text, path.name))

    # -- requests -----------------------------------------------------------------------------

    def respond(self, path: str, args: Mapping[str, str], base_url: str) -> Reply:
        """Answer ``GET path?args`` (``base_url`` is used for the ``next``/``previous`` links)."""
        if path.rstrip("/") == CASES_PATH.rstrip("/"):
            return self.cases(args, base_url)
        if path.rstrip("/") == COURTS_PATH.rstrip("/"):
            return self.courts_page(args, base_url)
        return _json_reply(404, {"detail": "Not found."})

    def api_court(self, court: Mapping[str, Any]) -> dict[str, Any]:
        """A ``courts.court`` fixture (``{"id": pk, **fields}``) as ``CourtSerializer`` sends it."""
        return {name: court.get(name) for name in COURT_API_FIELDS}

    def courts_page(self, args: Mapping[str, str], base_url: str) -> Reply:
        """``GET /api/courts/``: ``CappedLimitOffsetPagination`` over the courts ordered by name."""
        courts = sorted(self.courts.values(), key=lambda c: (str(c.get("name") or ""), c["id"]))
        bodies = [json.dumps(self.api_court(c), ensure_ascii=False) for c in courts]
        return self._limit_offset_page(args, base_url, bodies)

    def cases(self, args: Mapping[str, str], base_url: str) -> Reply:
        rows = list(self.rows)
        if self.behaviour != "ignore":
            window = self._date_window(args)
            if isinstance(window, Reply):
                return window
            lo, hi = window
            rows = [r for r in rows if (lo is None or r.decided >= lo)
                    and (hi is None or r.decided <= hi)]
        if self.behaviour == "keyset" and "updated_date__gte" in args:
            floor = _ts(args["updated_date__gte"])
            if floor is None:
                return _json_reply(400, {"updated_date__gte": ["Enter a valid date/time."]})
            rows = [r for r in rows if r.updated >= floor]
        rows = self._order(rows, args.get("ordering", ""))
        return self._page(args, base_url, [r.body for r in rows])

    @staticmethod
    def _date_window(args: Mapping[str, str]) -> tuple[date | None, date | None] | Reply:
        bounds: list[date | None] = []
        for name in ("date_after", "date_before"):
            raw = args.get(name)
            if raw in (None, ""):
                bounds.append(None)
                continue
            parsed = _day(raw)
            if parsed is None:
                return _json_reply(400, {"date": ["Enter a valid date."]})
            bounds.append(parsed)
        return bounds[0], bounds[1]

    def _order(self, rows: list[Row], ordering: str) -> list[Row]:
        """DRF OrderingFilter: keep the allowed terms; none left → the view's default order."""
        allowed = _ORDERING_FIELDS[self.behaviour]
        terms = [t.strip() for t in ordering.split(",") if t.strip().lstrip("-") in allowed]
        if not terms:
            terms = ["-date"] if self.behaviour == "live" else ["id"]
        rows = sorted(rows, key=lambda r: r.row_id)
        if self.shuffle_ties:
            with self._lock:
                self._random.shuffle(rows)
        for term in reversed(terms):  # stable sorts, least significant term first
            name = term.lstrip("-")
            key = {"date": lambda r: r.decided, "updated_date": lambda r: r.updated,
                   "id": lambda r: r.row_id}[name]
            rows.sort(key=key, reverse=term.startswith("-"))
        return rows

    def _page(self, args: Mapping[str, str], base_url: str, bodies: list[str]) -> Reply:
        """DRF ``PageNumberPagination`` over pre-serialized records (spliced in verbatim)."""
        try:
            size = max(1, min(int(args.get("page_size", 10)), MAX_PAGE_SIZE))
        except ValueError:
            size = 10
        try:
            page = int(args.get("page", 1))
        except ValueError:
            return _json_reply(404, {"detail": "Invalid page."})
        if page > self.page_cap:
            return _json_reply(404, {"detail": f"Page {page} exceeds maximum of {self.page_cap}. "
                                               f"For bulk access use {BULK_EXPORT_URL}"})
        pages = max(1, math.ceil(len(bodies) / size))
        if not 1 <= page <= pages:
            return _json_reply(404, {"detail": "Invalid page."})

        def link(p: int) -> str | None:
            if not 1 <= p <= pages:
                return None
            query = {k: v for k, v in args.items() if k != "page"}
            if p > 1:
                query["page"] = str(p)
            return f"{base_url}?{urlencode(query)}"

        chunk = bodies[(page - 1) * size: page * size]
        head = json.dumps({"count": len(bodies), "next": link(page + 1),
                           "previous": link(page - 1)})
        return Reply(200, (head[:-1] + ', "results": [' + ", ".join(chunk) + "]}").encode("utf-8"))

    def _limit_offset_page(self, args: Mapping[str, str], base_url: str, bodies: list[str]) -> Reply:
        """DRF ``LimitOffsetPagination`` as ``oldp.api.CappedLimitOffsetPagination`` configures it.

        ``limit``: a positive integer, capped at ``max_limit``; absent, zero, negative or not a
        number → ``default_limit`` (DRF ``_positive_int(strict=True)``). ``offset``: a non-negative
        integer, anything else → 0; above ``PAGINATE_UNTIL × max_limit`` → 404 (oldp
        ``_reject_deep_offset``, which reads the raw parameter and ignores non-integers)."""
        raw_offset = args.get("offset")
        max_offset = self.page_cap * COURTS_MAX_LIMIT
        try:
            deep = raw_offset is not None and int(raw_offset) > max_offset
        except ValueError:
            deep = False
        if deep:
            return _json_reply(404, {"detail": f"Offset {int(raw_offset)} exceeds maximum of {max_offset}. "  # type: ignore[arg-type]
                                               f"For bulk access use {BULK_EXPORT_URL}"})
        try:
            limit = int(args["limit"])
            if limit <= 0:
                raise ValueError
            limit = min(limit, COURTS_MAX_LIMIT)
        except (KeyError, ValueError):
            limit = self.courts_default_limit
        try:
            offset = int(args["offset"])
            if offset < 0:
                raise ValueError
        except (KeyError, ValueError):
            offset = 0
        count = len(bodies)

        def link(new_offset: int | None) -> str:
            query = {**args, "limit": str(limit)}  # replace_query_param: all kept, keys sorted
            if new_offset is None:
                query.pop("offset", None)  # remove_query_param
            else:
                query["offset"] = str(new_offset)
            return f"{base_url}?{urlencode(sorted(query.items()))}"

        nxt = None if offset + limit >= count else link(offset + limit)
        prev = None if offset <= 0 else link(None if offset - limit <= 0 else offset - limit)
        chunk = [] if count == 0 or offset > count else bodies[offset:offset + limit]
        head = json.dumps({"count": count, "next": nxt, "previous": prev})
        return Reply(200, (head[:-1] + ', "results": [' + ", ".join(chunk) + "]}").encode("utf-8"))

    # -- in-process transport -----------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        """An httpx transport answering every GET from the samples (for ``PoliteHttpClient``)."""
        return emulator_transport(self)

    def served_case_ids(self) -> list[int]:
        return sorted(r.case_id for r in self.rows if r.case_id is not None)
