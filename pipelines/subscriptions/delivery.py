"""Delivering the outbox: a signed POST per attempt, retries with backoff, a log, dead letters.

One attempt: claim a due event (a lease, so one process sends it at a time), log the attempt as
in flight, POST the stored body with fresh signature headers (:mod:`.signing`) and a timeout
(``LEXPIPE_WEBHOOK_TIMEOUT_S``; redirects are not followed), then record the answer:

* 2xx — delivered; never sent again.
* 5xx, 429, 408, a timeout or a connection error — retried after an exponential backoff
  (``LEXPIPE_WEBHOOK_BACKOFF_BASE_S`` · 2^(n-1), at most ``LEXPIPE_WEBHOOK_BACKOFF_MAX_S``, "equal
  jitter": half of it fixed, half random) or after the receiver's ``Retry-After`` (seconds or an
  HTTP date) when that is longer; after ``LEXPIPE_WEBHOOK_MAX_ATTEMPTS`` failed attempts the event
  is parked in the dead-letter list.
* any other status (4xx, 3xx) — the receiver refused it; retrying cannot help: parked at once.

A run keeps attempting until nothing it is responsible for is due within its budget
(``LEXPIPE_WEBHOOK_RUN_BUDGET_S``); retries due later stay pending in the outbox for the next run.
Time and sleep are injected (:class:`Clock`), so tests exercise minutes of backoff in
milliseconds.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import random
import time
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from core.layout import Layout
from core.settings import Settings, get_settings
from pipelines.subscriptions import db
from pipelines.subscriptions.outbox import Attempt, Outbox, OutboxEvent
from pipelines.subscriptions.signing import signed_headers
from pipelines.subscriptions.store import SubscriptionStore

log = logging.getLogger("lexpipe.webhooks")
USER_AGENT = "lexpipe-webhooks/1 (+docs/subscriptions.md)"
RETRY_AFTER_MAX_S = 86400.0  # a Retry-After beyond a day is read as a day
LEASE_MARGIN_S = 30.0


class Clock(Protocol):
    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class EventNotFound(LookupError):
    """No event with that id in the outbox."""


class NotDeadLettered(ValueError):
    """Only a dead-lettered event can be redelivered (a pending one is retried anyway, a delivered
    one was received)."""


@dataclass
class RunReport:
    attempts: int = 0
    delivered: int = 0
    retried: int = 0  # attempts that failed and were scheduled again
    dead_lettered: int = 0
    cancelled: int = 0


def origin(url: str) -> str:
    """What a log line may show of a URL: scheme and host (a path or query can hold a token)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """``Retry-After``: delay seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds: float | None = float(value)
    except ValueError:
        seconds = None
    if seconds is None:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        seconds = when.timestamp() - now
    return min(max(0.0, seconds), RETRY_AFTER_MAX_S)


def retryable(status: int | None) -> bool:
    """No answer (timeout, connection error), 408, 429 and 5xx are worth another attempt."""
    return status is None or status in (408, 429) or status >= 500


class Deliverer:
    """Works the outbox of one home. ``client``/``transport``: the HTTP client (tests may pass a
    transport); ``clock``: time and sleep; ``rng``: the jitter's random source."""

    def __init__(self, layout: Layout, *, settings: Settings | None = None, client: httpx.Client | None = None,
                 clock: Clock | None = None, rng: random.Random | None = None):
        self.layout = layout
        self.settings = settings or get_settings()
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()
        self._client = client
        self.outbox = Outbox(layout)
        self.store = SubscriptionStore(layout)

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=httpx.Timeout(self.settings.webhook_timeout_s),
                                        follow_redirects=False, headers={"User-Agent": USER_AGENT})
        return self._client

    @property
    def lease_s(self) -> float:
        return self.settings.webhook_timeout_s + LEASE_MARGIN_S

    def close(self) -> None:
        self.outbox.close()
        self.store.close()

    def backoff(self, failed: int) -> float:
        """Delay after the ``failed``-th failed attempt: exponential, capped, equal jitter."""
        s = self.settings
        delay = min(s.webhook_backoff_max_s, s.webhook_backoff_base_s * 2 ** max(0, failed - 1))
        return delay / 2 + self.rng.random() * delay / 2

    # -- one attempt --------------------------------------------------------------------------------
    def attempt(self, ev: OutboxEvent) -> str:
        """POST one claimed event and record the outcome (delivered | retry | dead | cancelled)."""
        secret = self.store.secret_of(ev.subscription_id)
        if secret is None:  # deleted after the event was claimed
            with db.transaction(self.outbox.conn) as c:
                c.execute("UPDATE events SET status = 'cancelled', lease_until = NULL WHERE id = ?", (ev.id,))
            return "cancelled"
        started = self.clock.time()
        n = self.outbox.start_attempt(ev.id, started_at=started)
        body = ev.body.encode("utf-8")
        headers = signed_headers(secret, event_id=ev.id, event_type=ev.type, body=body, timestamp=int(started),
                                 attempt=n)
        status, error, retry_after = None, None, None
        t0 = time.perf_counter()
        try:
            with self.client.stream("POST", ev.url, content=body, headers=headers) as resp:
                status = resp.status_code
                retry_after = retry_after_seconds(resp.headers.get("Retry-After"), self.clock.time())
        except httpx.TimeoutException:
            error = f"timeout after {self.settings.webhook_timeout_s:g} s"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        duration_ms = round((time.perf_counter() - t0) * 1000, 1)
        now = self.clock.time()
        failed = ev.attempts + 1
        next_at = None
        if status is not None and 200 <= status < 300:
            outcome = "delivered"
        elif not retryable(status):
            outcome, error = "dead", error or f"HTTP {status}: refused by the receiver, not retried"
        elif failed >= self.settings.webhook_max_attempts:
            outcome = "dead"
            error = (error or f"HTTP {status}") + f" (attempt {failed} of {self.settings.webhook_max_attempts})"
        else:
            outcome = "retry"
            next_at = now + max(self.backoff(failed), retry_after or 0.0)
        self.outbox.finish_attempt(ev.id, n, outcome=outcome, duration_ms=duration_ms, status_code=status,
                                   error=error, now=now, next_attempt_at=next_at)
        what = f"HTTP {status}" if status is not None else error
        wait = f", next attempt in {next_at - now:.1f} s" if next_at is not None else ""
        (log.info if outcome == "delivered" else log.warning)(
            f"{ev.id} → {origin(ev.url)} attempt {n}: {what} in {duration_ms:.0f} ms ({outcome}{wait})")
        return outcome

    # -- a run ----------------------------------------------------------------------------------
    def run(self, *, ids: list[str] | None = None, budget_s: float | None = None) -> RunReport:
        """Attempt every due pending event (of ``ids``, or all), waiting for retries that fall due
        within ``budget_s`` (default ``LEXPIPE_WEBHOOK_RUN_BUDGET_S``)."""
        report = RunReport()
        if not db.exists(self.layout):
            return report
        budget = self.settings.webhook_run_budget_s if budget_s is None else budget_s
        deadline = self.clock.time() + budget
        ids = list(ids) if ids is not None else None
        while True:
            ev = self.outbox.claim(now=self.clock.time(), lease_s=self.lease_s, ids=ids)
            if ev is not None:
                outcome = self.attempt(ev)
                report.attempts += outcome != "cancelled"
                report.delivered += outcome == "delivered"
                report.retried += outcome == "retry"
                report.dead_lettered += outcome == "dead"
                report.cancelled += outcome == "cancelled"
                continue
            due = self.outbox.next_due(ids=ids)
            if due is None or due > deadline:
                return report
            self.clock.sleep(max(0.05, due - self.clock.time()))


# ----------------------------------------------------------------------------------------------
# what the orchestrators and the API call


def deliver_due(layout: Layout, *, settings: Settings | None = None, budget_s: float | None = None,
                clock: Clock | None = None) -> RunReport:
    """Attempt every pending event that is due (retries, events a crashed run left behind)."""
    d = Deliverer(layout, settings=settings, clock=clock)
    try:
        return d.run(budget_s=budget_s)
    finally:
        d.close()


def pending_due(layout: Layout, *, now: float | None = None) -> int:
    """How many pending events may be attempted now (the outbox sensor asks this)."""
    if not db.exists(layout):
        return 0
    outbox = Outbox(layout)
    try:
        now = time.time() if now is None else now
        return outbox.conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending' AND next_attempt_at <= ? "
                                   "AND (lease_until IS NULL OR lease_until <= ?)", (now, now)).fetchone()[0]
    finally:
        outbox.close()


def dead_letters(layout: Layout, *, subscription_id: str | None = None) -> list[OutboxEvent]:
    """The dead-letter list: events parked after too many failed attempts or a refusal."""
    outbox = Outbox(layout)
    try:
        return outbox.events(status="dead", subscription_id=subscription_id)
    finally:
        outbox.close()


def delivery_log(layout: Layout, event_id: str) -> list[Attempt]:
    """Every attempt of an event: time, status code or error, duration, outcome."""
    outbox = Outbox(layout)
    try:
        return outbox.attempts(event_id)
    finally:
        outbox.close()


def event_status(layout: Layout, event_id: str) -> OutboxEvent:
    outbox = Outbox(layout)
    try:
        ev = outbox.get(event_id)
    finally:
        outbox.close()
    if ev is None:
        raise EventNotFound(f"no event {event_id!r}")
    return ev


def redeliver(layout: Layout, event_id: str, *, deliver: bool = True, settings: Settings | None = None,
              deliverer: Deliverer | None = None) -> OutboxEvent:
    """Put a dead-lettered event back in the outbox with a fresh attempt budget and (``deliver``)
    attempt it now. :class:`EventNotFound`, :class:`NotDeadLettered`."""
    ev = event_status(layout, event_id)
    if ev.status != "dead":
        raise NotDeadLettered(f"{event_id} is {ev.status}, not dead-lettered")
    d = deliverer or Deliverer(layout, settings=settings)
    try:
        d.outbox.requeue(event_id, now=d.clock.time())
        if deliver:
            d.run(ids=[event_id])
    finally:
        if deliverer is None:
            d.close()
    return event_status(layout, event_id)
