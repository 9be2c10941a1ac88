"""Delivering the outbox: a signed POST per attempt, retries with backoff, a log, dead letters.

One attempt: claim a due event (a lease of ``LEXPIPE_WEBHOOK_TIMEOUT_S`` +
``LEXPIPE_WEBHOOK_LEASE_MARGIN_S``, so one process sends it at a time), log the attempt as
in flight, POST the stored body with fresh signature headers (:mod:`.signing`) and a timeout
(``LEXPIPE_WEBHOOK_TIMEOUT_S``; redirects are not followed), then record the answer:

* 2xx — delivered; never sent again.
* 5xx, 429, 408, a timeout or a connection error — retried after an exponential backoff
  (``LEXPIPE_WEBHOOK_BACKOFF_BASE_S`` · 2^(n-1), at most ``LEXPIPE_WEBHOOK_BACKOFF_MAX_S``, "equal
  jitter": half of it fixed, half random) or after the receiver's ``Retry-After`` (seconds or an
  HTTP date) when that is longer; after ``LEXPIPE_WEBHOOK_MAX_ATTEMPTS`` failed attempts the event
  is parked in the dead-letter list.
* any other status (4xx, 3xx) — the receiver refused it; retrying cannot help: parked at once.

Where it connects: the receiver's host is resolved once per connection and every address checked
(:mod:`.addresses`; private, loopback, link-local … are refused unless allowed) and the socket goes to
exactly a checked address (:mod:`.transport`): a name that resolved to a public address when the
subscription was made and to ``10.0.0.7`` now (DNS rebinding) is refused, never posted to, and the
event dead-lettered with the reason.

A run sends with a bounded pool (``LEXPIPE_WEBHOOK_CONCURRENCY`` senders), one subscription per
sender at a time, so a hanging receiver delays only its own events. It keeps attempting until
nothing it is responsible for is due within its budget (``LEXPIPE_WEBHOOK_RUN_BUDGET_S``); retries
due later stay pending in the outbox for the next run (the ``webhook_outbox`` sensor, ``lexpipe
notify``).
Time and sleep are injected (:class:`Clock`), so tests exercise minutes of backoff in
milliseconds.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import random
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from core.layout import Layout
from core.settings import Settings, get_settings
from pipelines.subscriptions import db
from pipelines.subscriptions.addresses import AddressGuard, AddressRefused, HostNotFound, Resolver
from pipelines.subscriptions.outbox import Attempt, Outbox, OutboxEvent
from pipelines.subscriptions.signing import signed_headers
from pipelines.subscriptions.store import SubscriptionStore
from pipelines.subscriptions.transport import guarded_client

log = logging.getLogger("lexpipe.webhooks")
USER_AGENT = "lexpipe-webhooks/1 (+docs/subscriptions.md)"
RETRY_AFTER_MAX_S = 86400.0  # a Retry-After beyond a day is read as a day


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


class NotRedeliverable(ValueError):
    """A delivered event was received and a cancelled one's subscription is gone: neither is sent
    again. ``status``: the event's."""

    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status


class InFlight(NotRedeliverable):
    """A sender holds the event's lease right now; ``retry_after_s``: until the lease expires."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message, "pending")
        self.retry_after_s = retry_after_s


NotDeadLettered = NotRedeliverable  # the name before pending events could be redelivered


@dataclass
class RunReport:
    attempts: int = 0
    delivered: int = 0
    retried: int = 0  # attempts that failed and were scheduled again
    dead_lettered: int = 0
    cancelled: int = 0

    def add(self, outcome: str) -> None:
        self.attempts += outcome != "cancelled"
        self.delivered += outcome == "delivered"
        self.retried += outcome == "retry"
        self.dead_lettered += outcome == "dead"
        self.cancelled += outcome == "cancelled"


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
    """Works the outbox of one home with a bounded pool of senders (``LEXPIPE_WEBHOOK_CONCURRENCY``).

    Why a pool: a receiver that hangs holds its sender for up to ``LEXPIPE_WEBHOOK_TIMEOUT_S`` per
    attempt; with one sender every other subscriber waited that long too. Now each subscription is
    sent by at most one sender at a time (:meth:`Outbox.claim`), the others go on in parallel.

    ``client``: the HTTP client (tests may pass one over a mock transport; default: the guarded
    client, :mod:`.transport`, which checks the receiver's address at connect time); ``resolve``:
    host → addresses for that guard (tests inject a stub: no DNS); ``clock``: time and sleep;
    ``rng``: the jitter's random source; ``workers``: the pool size."""

    def __init__(self, layout: Layout, *, settings: Settings | None = None, client: httpx.Client | None = None,
                 clock: Clock | None = None, rng: random.Random | None = None, resolve: Resolver | None = None,
                 workers: int | None = None):
        self.layout = layout
        self.settings = settings or get_settings()
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()
        self.guard = AddressGuard.from_settings(self.settings, resolve)
        self.workers = max(1, workers or self.settings.webhook_concurrency)
        self._client = client
        self._client_lock = threading.Lock()
        self._local = threading.local()
        self._opened: list[tuple[int, Outbox | SubscriptionStore]] = []  # (thread, connection holder)
        self._opened_lock = threading.Lock()

    # one SQLite connection per thread: a connection is not shared between the senders
    def _own(self, kind: type):
        name = kind.__name__
        obj = getattr(self._local, name, None)
        if obj is None:
            obj = kind(self.layout)
            setattr(self._local, name, obj)
            with self._opened_lock:
                self._opened.append((threading.get_ident(), obj))
        return obj

    def _release_senders(self) -> None:
        """Close the connections the run's sender threads opened (the threads are gone with the run's
        pool; a long-lived worker would otherwise keep two per sender per run)."""
        me = threading.get_ident()
        with self._opened_lock:
            theirs = [obj for ident, obj in self._opened if ident != me]
            self._opened = [(ident, obj) for ident, obj in self._opened if ident == me]
        for obj in theirs:
            obj.close()

    @property
    def outbox(self) -> Outbox:
        return self._own(Outbox)

    @property
    def store(self) -> SubscriptionStore:
        return self._own(SubscriptionStore)

    @property
    def client(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = guarded_client(self.guard, timeout_s=self.settings.webhook_timeout_s,
                                              user_agent=USER_AGENT)
            return self._client

    @property
    def lease_s(self) -> float:
        return self.settings.webhook_timeout_s + self.settings.webhook_lease_margin_s

    def close(self) -> None:
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for _, obj in opened:
            obj.close()
        self._local = threading.local()

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
        status, error, retry_after, refused = None, None, None, False
        t0 = time.perf_counter()
        try:
            with self.client.stream("POST", ev.url, content=body, headers=headers) as resp:
                status = resp.status_code
                retry_after = retry_after_seconds(resp.headers.get("Retry-After"), self.clock.time())
        except AddressRefused as exc:  # the name resolves inside now (DNS rebinding): never sent
            error, refused = f"refused at connect time: {exc}", True
        except HostNotFound as exc:
            error = str(exc)
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
        elif refused:
            outcome = "dead"
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
        """Attempt every due pending event (of ``ids``, or all) with up to ``workers`` senders at once,
        one per subscription, waiting for retries that fall due within ``budget_s`` (default
        ``LEXPIPE_WEBHOOK_RUN_BUDGET_S``)."""
        report = RunReport()
        if not db.exists(self.layout):
            return report
        budget = self.settings.webhook_run_budget_s if budget_s is None else budget_s
        deadline = self.clock.time() + budget
        ids = list(ids) if ids is not None else None
        claims = Outbox(self.layout)  # the run's own connection: claims are made here, attempts in the senders
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="webhook")
        running: set[Future] = set()
        try:
            while True:
                while len(running) < self.workers:
                    ev = claims.claim(now=self.clock.time(), lease_s=self.lease_s, ids=ids)
                    if ev is None:
                        break
                    running.add(pool.submit(self.attempt, ev))
                due = claims.next_due(ids=ids)
                if running:
                    # wake when a sender is done (its subscription's next event may go) or a retry falls due
                    wait_s = 1.0 if due is None or len(running) >= self.workers else \
                        min(1.0, max(0.05, due - self.clock.time()))
                    done, running = wait(running, timeout=wait_s, return_when=FIRST_COMPLETED)
                    for f in done:
                        report.add(f.result())
                    continue
                if due is None or due > deadline:
                    return report
                self.clock.sleep(max(0.05, due - self.clock.time()))
        finally:
            for f in running:  # an exception above: let the attempts in flight finish and be recorded
                try:
                    report.add(f.result())
                except Exception:  # noqa: BLE001 (logged by the sender; the lease lets another run retry it)
                    log.exception("a webhook sender failed")
            pool.shutdown(wait=True)
            claims.close()
            self._release_senders()


# ----------------------------------------------------------------------------------------------
# what the orchestrators and the API call


def deliver_due(layout: Layout, *, settings: Settings | None = None, budget_s: float | None = None,
                clock: Clock | None = None, resolve: Resolver | None = None) -> RunReport:
    """Attempt every pending event that is due (retries, events a crashed run left behind)."""
    d = Deliverer(layout, settings=settings, clock=clock, resolve=resolve)
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
    """Put an event back in line and (``deliver``) attempt it now: a dead-lettered one with a fresh
    attempt budget; a pending one — waiting for a retry, or left behind by a crash (its sender died
    holding the lease) once that lease expired — due now. :class:`EventNotFound`; :class:`InFlight`
    while a sender holds its lease; :class:`NotRedeliverable` for a delivered or cancelled event."""
    d = deliverer or Deliverer(layout, settings=settings)
    try:
        now = d.clock.time()
        outcome, lease_until = d.outbox.requeue(event_id, now=now)
        if outcome == "missing":
            raise EventNotFound(f"no event {event_id!r}")
        if outcome == "in_flight":
            wait_s = max(0.0, (lease_until or now) - now)
            raise InFlight(f"{event_id} is being sent right now (its sender holds it for {wait_s:.0f} s more); "
                           f"if that sender died, redeliver after the lease expires", wait_s)
        if outcome != "requeued":
            why = "was delivered" if outcome == "delivered" else "was cancelled (its subscription was deleted)"
            raise NotRedeliverable(f"{event_id} {why}; only a dead-lettered or pending event is redelivered",
                                   outcome)
        if deliver:
            d.run(ids=[event_id])
    finally:
        if deliverer is None:
            d.close()
    return event_status(layout, event_id)
