"""A real webhook receiver on 127.0.0.1 for the subscription tests, a fake clock and the shared
test settings.

Why our own server instead of pytest-httpserver: a scripted answer may hold the connection
longer than the client's timeout, or kill the sending process mid-request; a threading
``http.server`` does both in a few lines, and records every request with the answer it got.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

PAST = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)  # subscriptions "created" before the session's corpus
SECRET = "test-secret-0123456789abcdef"


def webhook_settings(home: Path, **over):
    """Short timeouts and a small attempt budget; backoffs are slept on a fake clock. The receivers
    listen on 127.0.0.1, which the delivery's address guard refuses unless allowed."""
    from core.settings import Settings

    return Settings(**{"home": home, "webhook_timeout_s": 0.5, "webhook_max_attempts": 4,
                       "webhook_backoff_base_s": 1.0, "webhook_backoff_max_s": 8.0, "webhook_run_budget_s": 3600.0,
                       "api_webhook_allow_networks": "127.0.0.1", **over})


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # hold the request this long before answering (a client timeout)
    before: Callable[[], None] | None = None  # run on arrival (e.g. kill the sender)


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    answer: Answer
    at: float = field(default_factory=time.monotonic)  # when it arrived (monotonic seconds)

    @property
    def event_id(self) -> str:
        return self.headers.get("Lexpipe-Event-Id", "")


class Receiver:
    """Answers POSTs from a script (``then(...)``), then with ``default``; records every request."""

    def __init__(self, default: Answer | None = None):
        self.default = default or Answer(200)
        self.script: list[Answer] = []
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    answer = receiver.script.pop(0) if receiver.script else receiver.default
                    receiver.received.append(Received(dict(self.headers.items()), body, answer))
                if answer.before:
                    answer.before()
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                try:
                    self.send_response(answer.status)
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the client gave up (timeout) or died: nothing to answer
                    pass

            def log_message(self, *args):  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks/lexpipe"

    def then(self, *answers: Answer | int) -> "Receiver":
        self.script += [a if isinstance(a, Answer) else Answer(a) for a in answers]
        return self

    def wait_for(self, n: int, timeout_s: float = 30.0) -> None:
        end = time.monotonic() + timeout_s
        while len(self.received) < n and time.monotonic() < end:
            time.sleep(0.02)


class FakeClock:
    """Time that only moves when slept on: backoffs of minutes pass at once; ``sleeps`` records them."""

    def __init__(self, start: float | None = None):
        self.now = time.time() if start is None else start
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


def write_publication(home: Path, act_id: str, version: str, published_at: str, *,
                      diff: list[tuple[str, str, str]] | None = None, previous: str | None = None) -> Path:
    """A published version folder as ``published`` leaves it, reduced to what the feed reads: the
    manifest with ``published_at`` and, against ``previous``, a DIFF table of ``(article id,
    change, word diff)`` rows."""
    import json

    import pyarrow as pa

    from core.layout import Layout
    from pipelines.statutes.store import write_table

    folder = Layout(home).version_dir(act_id, version)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"act_id": act_id, "version": version,
                                                      "published_at": published_at}))
    if previous is not None:
        rows = diff or []
        d = dt.date.fromisoformat
        table = pa.table({
            "act_id": [act_id] * len(rows), "from_version": [d(previous)] * len(rows),
            "to_version": [d(version)] * len(rows), "article_id": [r[0] for r in rows],
            "number": [r[0].rsplit(":", 1)[-1] for r in rows], "change": [r[1] for r in rows],
            "old_text": [None if r[1] == "added" else f"old {r[0]}" for r in rows],
            "new_text": [None if r[1] == "removed" else f"new {r[0]}" for r in rows],
            "old_hash": [None] * len(rows), "new_hash": [None] * len(rows), "unified_diff": [r[2] for r in rows]})
        write_table(folder / f"diff_from_{previous}.parquet", table, "diff")
    return folder
