"""A loopback stand-in for the SAOS dump API serving the real sample pages with links.

Why: the connector must be tested against real bytes over a real socket, including malformed
records and broken pages, without network. The pages come from ``connectors.saos.sample`` (the
offline source's emulator: the shared pages re-sliced by ``pageSize``/``pageNumber``, ``links``
self/prev/next, the date and modification-time filters, 400s for bad parameters); this wrapper
puts them behind a real HTTP server (``pytest_httpserver``) and adds what only tests need:

* faults at given request numbers: 429 with Retry-After, 500/503, a slow answer (for client
  timeouts), a connection dropped mid-body, a 200 HTML page and a JSON page without ``items``
  (malformed envelopes), or any rewrite of the body (e.g. a ``next`` link to another query);
* ``add_malformed`` puts the standard malformed records into the dump (missing id, missing date,
  missing text, HTML with no text, wrong types, not valid JSON) at positions spread over pages;
* ``touch`` / ``delete`` simulate edits and removals on the server;
* a log of every request's query and arrival time, and ``hold_at`` parking a request.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from connectors.saos.sample import DUMP_PATH, SampleSaos

__all__ = ["CONNECTOR_PAGES", "FakeSaos", "Malformed", "DUMP_PATH"]


@dataclass
class Fault:
    action: str  # "429" | "500" | "503" | "slow" | "drop" | "html" | "no_items" | "rewrite"
    retry_after: str | None = None
    delay_s: float = 0.0
    rewrite: Callable[[bytes], bytes] | None = None


@dataclass
class Hold:
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Malformed:
    """A malformed record put into the dump, and the reasons the validator must give."""

    label: str
    text: str
    record_id: str | None
    reasons: tuple[str, ...]  # every reason expected (prefixes, for messages with positions)


# where add_malformed puts them in the dump order: over pages 0, 1 and 2 of 100 (206 records)
MALFORMED_POSITIONS = (3, 41, 99, 120, 160, 203)


def malformed_records(base: dict[str, Any]) -> list[Malformed]:
    """The standard malformed records, made from a real record ``base`` so that only the broken
    part differs (the rest of each record is valid)."""

    def variant(jid: int | None, drop: tuple[str, ...] = (), **changes: Any) -> str:
        rec = copy.deepcopy(base)
        rec.pop("id")
        for name in drop:
            rec.pop(name)
        rec.update(changes)
        if jid is not None:
            rec = {"id": jid, **rec}
        return json.dumps(rec, ensure_ascii=False)

    invalid_json = ('{"id": 990006, "courtType": "COMMON", "judgmentType": "SENTENCE", '
                    '"judgmentDate": "2011-05-05", "textContent": "<p>cytat z \\q akt</p>"}')
    return [
        Malformed("missing id", variant(None), None, ("id: missing",)),
        Malformed("missing date", variant(990002, drop=("judgmentDate",)), "990002",
                  ("judgmentDate: missing",)),
        Malformed("missing text", variant(990003, drop=("textContent",)), "990003",
                  ("textContent: missing",)),
        Malformed("HTML with no text", variant(990004, textContent="<div> <p>&nbsp;</p><br/></div>"),
                  "990004", ("textContent: the HTML yields no text (0 visible characters)",)),
        Malformed("wrong types", variant(990005, judgmentDate=20110429, courtCases="II AKa 1/11",
                                         keywords="prawo karne"), "990005",
                  ("judgmentDate: expected text, got int",
                   "courtCases: expected a list of objects, got 'II AKa 1/11'",
                   "keywords: expected a list of text, got 'prawo karne'")),
        Malformed("not valid JSON", invalid_json, "990006", ("not valid JSON: Invalid \\escape",)),
    ]


# The two pages the connector's tests are calibrated on (206 records with the malformed ones); the
# other shared pages (added for learning citation contexts) would only make them slower.
CONNECTOR_PAGES = (347, 355)


class FakeSaos:
    def __init__(self, sample_dir: Path, pages: tuple[int, ...] = CONNECTOR_PAGES) -> None:
        self.api = SampleSaos(sample_dir, pages)
        self.faults: dict[int, Fault] = {}
        self.holds: dict[int, Hold] = {}
        self.requests: list[dict[str, str]] = []  # query args of every dump request
        self.request_times: list[float] = []  # time.monotonic() at arrival, same order
        self.malformed: list[Malformed] = []
        self._lock = threading.Lock()

    # -- the dump -----------------------------------------------------------------------------

    def add_malformed(self) -> list[Malformed]:
        """Put the standard malformed records into the dump (206 records in all)."""
        base = json.loads(self.api.rows[0].body)
        self.malformed = malformed_records(base)
        for position, bad in zip(MALFORMED_POSITIONS, self.malformed):
            record = {"judgmentDate": "2011-05-05"} if bad.label == "not valid JSON" else None
            self.api.insert(position, bad.text, record=record)
        return self.malformed

    def touch(self, judgment_id: int, modified_at: datetime, **fields: Any) -> None:
        self.api.touch(judgment_id, modified_at, **fields)

    def delete(self, judgment_id: int) -> None:
        self.api.delete(judgment_id)

    def served_judgment_ids(self) -> list[int]:
        return self.api.served_judgment_ids()

    # -- faults -------------------------------------------------------------------------------

    def fail(self, request_no: int, action: str, *, retry_after: str | None = None,
             delay_s: float = 0.0, rewrite: Callable[[bytes], bytes] | None = None) -> None:
        self.faults[request_no] = Fault(action, retry_after, delay_s, rewrite)

    def hold_at(self, request_no: int) -> Hold:
        self.holds[request_no] = hold = Hold()
        return hold

    def pages_asked(self) -> list[int]:
        """``pageNumber`` of every request so far, retries included."""
        return [int(r.get("pageNumber", 0)) for r in self.requests]

    # -- HTTP ---------------------------------------------------------------------------------

    def install(self, httpserver: HTTPServer) -> None:
        httpserver.expect_request(DUMP_PATH).respond_with_handler(self.handle)

    def handle(self, request: Request) -> Response:
        with self._lock:
            self.requests.append(dict(request.args))
            self.request_times.append(time.monotonic())
            request_no = len(self.requests)
        hold = self.holds.get(request_no)
        if hold is not None:
            hold.arrived.set()
            hold.release.wait(30)
        reply = self.api.respond(request.path, dict(request.args), request.base_url)
        fault = self.faults.get(request_no)
        if fault is not None and reply.status == 200:
            return self._faulty(fault, reply.body)
        return Response(reply.body, status=reply.status, content_type=reply.content_type)

    @staticmethod
    def _faulty(fault: Fault, body: bytes) -> Response:
        json_type = "application/json;charset=UTF-8"
        if fault.action == "429":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            return Response(json.dumps({"error": {"httpStatus": "429"}}), status=429,
                            headers=headers, content_type=json_type)
        if fault.action in ("500", "503"):
            return Response(json.dumps({"error": {"httpStatus": fault.action,
                                                  "reason": "INTERNAL ERROR"}}),
                            status=int(fault.action), content_type=json_type)
        if fault.action == "slow":
            time.sleep(fault.delay_s)
            return Response(body, status=200, content_type=json_type)
        if fault.action == "html":
            return Response("<html><body><h1>502 Bad Gateway</h1></body></html>", status=200,
                            content_type="text/html")
        if fault.action == "no_items":
            return Response(json.dumps({"links": [], "info": {"maintenance": True}}), status=200,
                            content_type=json_type)
        if fault.action == "rewrite" and fault.rewrite is not None:
            return Response(fault.rewrite(body), status=200, content_type=json_type)
        if fault.action == "drop":
            def half() -> Iterator[bytes]:
                yield body[: len(body) // 2]
                raise ConnectionAbortedError("injected: connection dropped mid-page")

            resp = Response(half(), content_type=json_type)
            resp.headers["Content-Length"] = str(len(body))
            return resp
        raise ValueError(f"unknown fault {fault.action!r}")
