"""A loopback stand-in for the Open Legal Data API serving the real sample files as DRF pages.

Why: the connector must be tested against real bytes over a real socket, including the malformed
samples, without network. ``<sample_dir>/de/openlegaldata/`` holds Django fixture dumps
(``[{"model": "cases.case", "pk": …, "fields": {…}}]``), loose records in other shapes (openJur
exports, an old serializer with ``"id": null``) and one file that is not even valid JSON. This
server turns them into what ``GET /api/cases/`` returns:

* fixture cases become API records: ``id`` = pk, ``court`` = the court object from ``courts.json``
  (or just ``{"id": …}`` when the sample has no such court), the API fields, and every other
  fixture field passed through as a field the connector does not know (schema drift);
* every other file is served verbatim as one element of ``results`` — the invalid-JSON file is
  spliced in as raw text, so that page's body is not valid JSON either;
* rows are sorted by ``(updated_date, id)`` and filtered by ``updated_date__gte`` like a server
  honouring the connector's cursor parameters. Records without a readable ``updated_date`` get a
  fixed server-side position (as if the database had a timestamp the payload lacks), between the
  April and the December 2018 cases, so malformed records show up mid-stream.

Faults (429 with Retry-After, 503, a connection dropped mid-body, a 200 HTML page) can be injected
at given request numbers; ``hold_at`` parks a request so a test can kill the client meanwhile.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlencode

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

CASES_PATH = "/api/cases/"
COURTS_PATH = "/api/courts/"
_API_CASE_FIELDS = ("slug", "file_number", "date", "created_date", "updated_date", "type", "ecli",
                    "content")
_SYNTHETIC_BASE = datetime(2018, 8, 1, tzinfo=timezone.utc)


def _ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass
class Row:
    """One served record: its server-side sort key and the exact text put into ``results``."""

    updated: datetime
    row_id: int
    body: str
    source_file: str
    case_id: int | None = None


@dataclass
class Fault:
    action: str  # "429" | "503" | "drop" | "html"
    retry_after: str | None = None


@dataclass
class Hold:
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class FakeOpenLegalData:
    def __init__(self, sample_dir: Path, *, token: str | None = None,
                 honour_cursor: bool = True) -> None:
        self.folder = Path(sample_dir) / "de" / "openlegaldata"
        self.token = token
        self.honour_cursor = honour_cursor
        self.courts = {c["pk"]: {"id": c["pk"], **c["fields"]}
                       for c in json.loads((self.folder / "courts.json").read_text("utf-8"))
                       if c.get("model") == "courts.court"}
        self.rows: list[Row] = []
        self._load()
        self.faults: dict[int, Fault] = {}
        self.holds: dict[int, Hold] = {}
        self.requests: list[dict[str, str]] = []  # query args of every /cases/ request
        self.request_times: list[float] = []  # time.monotonic() at arrival, same order
        self._lock = threading.Lock()

    # -- sample → API -------------------------------------------------------------------------

    def _court_minimal(self, court_id: int) -> dict[str, Any]:
        court = self.courts.get(court_id)
        if court is None:
            return {"id": court_id}
        return {k: court.get(k) for k in ("id", "name", "slug", "city", "state")}

    def api_case(self, entry: dict[str, Any]) -> dict[str, Any]:
        fields = dict(entry["fields"])
        record: dict[str, Any] = {"id": entry["pk"],
                                  "court": self._court_minimal(fields.pop("court"))}
        for name in _API_CASE_FIELDS:
            record[name] = fields.pop(name, None)
        record.update(fields)  # fixture-only fields: unknown to the connector, must be kept
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
                        self.rows.append(Row(_ts(record["updated_date"]) or _SYNTHETIC_BASE,
                                             record["id"], json.dumps(record, ensure_ascii=False),
                                             path.name, case_id=record["id"]))
                continue
            rid = data.get("id") if isinstance(data, dict) else None
            updated = _ts(data.get("updated_date")) if isinstance(data, dict) else None
            if updated is None or type(rid) is not int:
                synthetic += 1
                updated = _SYNTHETIC_BASE + timedelta(seconds=synthetic)
            self.rows.append(Row(updated, rid if type(rid) is int else 900_000 + synthetic, text,
                                 path.name))

    def touch(self, case_id: int, updated_date: str, *, content: str | None = None) -> None:
        """Simulate an edit on the server: a new updated_date (and optionally new content)."""
        row = next(r for r in self.rows if r.case_id == case_id)
        record = json.loads(row.body)
        record["updated_date"] = updated_date
        if content is not None:
            record["content"] = content
        row.body = json.dumps(record, ensure_ascii=False)
        row.updated = _ts(updated_date)  # type: ignore[assignment]

    def delete(self, case_id: int) -> None:
        """Simulate a case removed on the server."""
        self.rows = [r for r in self.rows if r.case_id != case_id]

    # -- faults -------------------------------------------------------------------------------

    def fail(self, request_no: int, action: str, *, retry_after: str | None = None) -> None:
        self.faults[request_no] = Fault(action, retry_after)

    def hold_at(self, request_no: int) -> Hold:
        self.holds[request_no] = hold = Hold()
        return hold

    # -- HTTP ---------------------------------------------------------------------------------

    def install(self, httpserver: HTTPServer) -> None:
        httpserver.expect_request(CASES_PATH).respond_with_handler(self.handle_cases)
        httpserver.expect_request(COURTS_PATH).respond_with_handler(self.handle_courts)

    def _unauthorized(self, request: Request) -> Response | None:
        if self.token is not None and request.headers.get("Authorization") != f"Token {self.token}":
            return Response(json.dumps({"detail": "Invalid token."}), status=401,
                            content_type="application/json")
        return None

    def handle_cases(self, request: Request) -> Response:
        with self._lock:
            self.requests.append(dict(request.args))
            self.request_times.append(time.monotonic())
            request_no = len(self.requests)
        hold = self.holds.get(request_no)
        if hold is not None:
            hold.arrived.set()
            hold.release.wait(30)
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        rows = list(self.rows)
        since = request.args.get("updated_date__gte")
        if self.honour_cursor and request.args.get("ordering") == "updated_date,id":
            rows.sort(key=lambda r: (r.updated, r.row_id))
        else:  # like DRF with an unknown ordering field: the default (id) order
            rows.sort(key=lambda r: r.row_id)
        if since is not None and self.honour_cursor:
            floor = _ts(since)
            if floor is None:
                return Response(json.dumps({"updated_date__gte": ["Enter a valid date/time."]}),
                                status=400, content_type="application/json")
            rows = [r for r in rows if r.updated >= floor]
        body = self._page(request, [r.body for r in rows])
        if body is None:
            return Response(json.dumps({"detail": "Invalid page."}), status=404,
                            content_type="application/json")
        fault = self.faults.get(request_no)
        if fault is not None:
            return self._faulty(fault, body)
        return Response(body, content_type="application/json")

    def handle_courts(self, request: Request) -> Response:
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        bodies = [json.dumps(c, ensure_ascii=False) for _, c in sorted(self.courts.items())]
        body = self._page(request, bodies)
        if body is None:
            return Response(json.dumps({"detail": "Invalid page."}), status=404,
                            content_type="application/json")
        return Response(body, content_type="application/json")

    @staticmethod
    def _page(request: Request, bodies: list[str]) -> bytes | None:
        """DRF PageNumberPagination over pre-serialized records (spliced in verbatim)."""
        size = min(int(request.args.get("page_size", 10)), 1000)
        page = int(request.args.get("page", 1))
        pages = max(1, math.ceil(len(bodies) / size))
        if not 1 <= page <= pages:
            return None
        base = request.base_url

        def link(p: int) -> str | None:
            if not 1 <= p <= pages:
                return None
            args = {k: v for k, v in request.args.items() if k != "page"}
            if p > 1:
                args["page"] = str(p)
            return f"{base}?{urlencode(args)}"

        chunk = bodies[(page - 1) * size: page * size]
        head = json.dumps({"count": len(bodies), "next": link(page + 1),
                           "previous": link(page - 1)})
        return (head[:-1] + ', "results": [' + ", ".join(chunk) + "]}").encode("utf-8")

    @staticmethod
    def _faulty(fault: Fault, body: bytes) -> Response:
        if fault.action == "429":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            return Response(json.dumps({"detail": "Request was throttled."}), status=429,
                            headers=headers, content_type="application/json")
        if fault.action == "503":
            return Response("Service Unavailable", status=503)
        if fault.action == "html":
            return Response("<html><body><h1>502 Bad Gateway</h1></body></html>", status=200,
                            content_type="text/html")
        if fault.action == "drop":
            def half() -> Iterator[bytes]:
                yield body[: len(body) // 2]
                raise ConnectionAbortedError("injected: connection dropped mid-page")

            resp = Response(half(), content_type="application/json")
            resp.headers["Content-Length"] = str(len(body))
            return resp
        raise ValueError(f"unknown fault {fault.action!r}")

    # -- expectations -------------------------------------------------------------------------

    def served_case_ids(self) -> list[int]:
        return sorted(r.case_id for r in self.rows if r.case_id is not None)
