"""What the SAOS connector tests share: the sample's figures, a sync against the loopback server
(``tests/fake_saos.py``), a settable clock and the snapshot two runs are compared by. The
fixtures are in conftest.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from connectors.http import PoliteHttpClient
from connectors.saos import DumpQuery, JudgmentSync, SaosApi

UA = "lexpipe-tests/0 (+https://example.invalid)"
SAMPLE_JUDGMENTS = 200  # the two shared pages, 100 records each, all valid
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


class Clock:
    """A settable ``now`` for the sync; every reading moves it on by ``step`` (distinct fetch
    times, as on a real clock), ``at`` can be set between passes."""

    def __init__(self, at: datetime = NOW, step: timedelta = timedelta(milliseconds=1)) -> None:
        self.at = at
        self.step = step

    def __call__(self) -> datetime:
        self.at += self.step
        return self.at


def make_api(httpserver: HTTPServer, *, sleeps: list[float] | None = None,
             **client_kw: Any) -> SaosApi:
    opts: dict[str, Any] = dict(user_agent=UA, timeout_s=5.0, max_retries=3, backoff_base_s=0.5,
                                backoff_max_s=8.0, min_interval_s=0.0,
                                sleep=(sleeps.append if sleeps is not None else lambda s: None))
    opts.update(client_kw)
    return SaosApi(PoliteHttpClient(**opts), httpserver.url_for("/"))


def make_sync(httpserver: HTTPServer, home: Path, *, page_size: int = 100,
              start: str | None = None, end: str | None = None, now: Any = None,
              overlap: timedelta = timedelta(hours=1), sleeps: list[float] | None = None,
              **client_kw: Any) -> JudgmentSync:
    api = make_api(httpserver, sleeps=sleeps, **client_kw)
    return JudgmentSync(api, home, query=DumpQuery(None, start, end, page_size), overlap=overlap,
                        now=now or Clock())


def snapshot(sync: JudgmentSync) -> dict[str, Any]:
    """What a consumer sees, without ingestion provenance (fetch times and URLs differ between
    runs): the current judgments (id, record hash, content), every stored version (id, record
    hash), and the quarantine (kind, record id, reasons, quarantine id)."""
    current = sync.store.judgments(columns=["judgment_id", "record_sha256", "content_sha256"])
    versions = sorted((r["judgment_id"], r["record_sha256"]) for r in
                      sync.store.all_judgment_rows(["judgment_id", "record_sha256"]).to_pylist())
    quarantine = sorted((r["kind"], r["record_id"] or "", tuple(r["reasons"]), r["quarantine_id"])
                        for r in sync.store.quarantine().to_pylist())
    return {"judgments": current.to_pylist(), "versions": versions, "quarantine": quarantine}
