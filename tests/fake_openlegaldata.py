"""A loopback stand-in for the Open Legal Data API serving the real sample files as DRF pages.

Why: the connector must be tested against real bytes over a real socket, including the malformed
samples, without network. The pages themselves come from ``connectors.openlegaldata.sample``
(the offline source's emulator: sample files → API records, DRF ordering/filter/pagination
semantics of the live service or of a keyset-capable one); this wrapper puts them behind a real
HTTP server and adds what only tests need:

* faults (429 with Retry-After, 503, a connection dropped mid-body, a 200 HTML page) injected at
  given request numbers, and ``hold_at`` parking a request so a test can kill the client meanwhile;
* ``touch``/``delete`` to simulate edits and removals on the server;
* a log of every ``/cases/`` request's query and arrival time; optional token check (401);
* for ``/courts/``: a log of every request's query (``court_requests``), faults by courts request
  number (``fail_courts``), raw bodies served instead of the emulator's page (``court_bodies``)
  and server-side edits run just before a given courts request (``court_edits``).

``honour_cursor=True`` (default) is the keyset-capable server the connector prefers
(``behaviour="keyset"``); ``honour_cursor=False`` ignores every ordering/filter parameter
(``"ignore"``); ``behaviour="live"`` is what de.openlegaldata.io really does.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Iterator

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from connectors.openlegaldata.sample import (CASES_PATH, COURTS_DEFAULT_LIMIT, COURTS_PATH,
                                             PAGINATE_UNTIL, Behaviour, Row, SampleOpenLegalData,
                                             _ts)

__all__ = ["FakeOpenLegalData", "Row", "CASES_PATH", "COURTS_PATH"]


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
                 honour_cursor: bool = True, behaviour: Behaviour | None = None,
                 page_cap: int = PAGINATE_UNTIL, shuffle_ties: bool = False,
                 courts_default_limit: int = COURTS_DEFAULT_LIMIT) -> None:
        chosen = behaviour or ("keyset" if honour_cursor else "ignore")
        self.api = SampleOpenLegalData(sample_dir, behaviour=chosen, page_cap=page_cap,
                                       shuffle_ties=shuffle_ties,
                                       courts_default_limit=courts_default_limit)
        self.token = token
        self.faults: dict[int, Fault] = {}
        self.holds: dict[int, Hold] = {}
        self.requests: list[dict[str, str]] = []  # query args of every /cases/ request
        self.request_times: list[float] = []  # time.monotonic() at arrival, same order
        self.court_requests: list[dict[str, str]] = []  # query args of every /courts/ request
        self.court_faults: dict[int, Fault] = {}
        self.court_bodies: dict[int, bytes] = {}  # courts request number → body served instead
        self.court_edits: dict[int, Callable[[], None]] = {}  # courts request number → edit first
        self._lock = threading.Lock()

    @property
    def rows(self) -> list[Row]:
        return self.api.rows

    @property
    def courts(self) -> dict:
        return self.api.courts

    # -- server-side edits --------------------------------------------------------------------

    def touch(self, case_id: int, updated_date: str, *, content: str | None = None,
              decision_date: str | None = None) -> None:
        """Simulate an edit on the server: a new updated_date (optionally content / date)."""
        row = next(r for r in self.api.rows if r.case_id == case_id)
        record = json.loads(row.body)
        record["updated_date"] = updated_date
        if content is not None:
            record["content"] = content
        if decision_date is not None:
            record["date"] = decision_date
            row.decided = date.fromisoformat(decision_date)
        row.body = json.dumps(record, ensure_ascii=False)
        row.updated = _ts(updated_date)  # type: ignore[assignment]

    def add_copy(self, case_id: int, new_id: int, *, decision_date: str,
                 updated_date: str) -> None:
        """Simulate a new case on the server (a copy of ``case_id`` under ``new_id``)."""
        row = next(r for r in self.api.rows if r.case_id == case_id)
        record = json.loads(row.body)
        record.update(id=new_id, date=decision_date, updated_date=updated_date,
                      file_number=f"{record['file_number']} (copy {new_id})",
                      slug=f"{record['slug']}-copy-{new_id}")
        self.api.rows.append(Row(_ts(updated_date), date.fromisoformat(decision_date), new_id,  # type: ignore[arg-type]
                                 json.dumps(record, ensure_ascii=False), "(added)", new_id))

    def delete(self, case_id: int) -> None:
        """Simulate a case removed on the server."""
        self.api.rows = [r for r in self.api.rows if r.case_id != case_id]

    # -- faults -------------------------------------------------------------------------------

    def fail(self, request_no: int, action: str, *, retry_after: str | None = None) -> None:
        self.faults[request_no] = Fault(action, retry_after)

    def fail_courts(self, request_no: int, action: str, *, retry_after: str | None = None) -> None:
        self.court_faults[request_no] = Fault(action, retry_after)

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
        reply = self.api.cases(dict(request.args), request.base_url)
        fault = self.faults.get(request_no)
        if fault is not None and reply.status == 200:
            return self._faulty(fault, reply.body)
        return Response(reply.body, status=reply.status, content_type=reply.content_type)

    def handle_courts(self, request: Request) -> Response:
        with self._lock:
            self.court_requests.append(dict(request.args))
            request_no = len(self.court_requests)
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        if request_no in self.court_edits:
            self.court_edits[request_no]()
        if request_no in self.court_bodies:
            return Response(self.court_bodies[request_no], status=200, content_type="application/json")
        reply = self.api.respond(COURTS_PATH, dict(request.args), request.base_url)
        fault = self.court_faults.get(request_no)
        if fault is not None and reply.status == 200:
            return self._faulty(fault, reply.body)
        return Response(reply.body, status=reply.status, content_type=reply.content_type)

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
        return self.api.served_case_ids()
