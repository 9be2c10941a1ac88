"""Delivery against a real receiver on 127.0.0.1: retries with backoff, Retry-After, timeouts, the
attempt log, dead letters and redelivery, no retry on a refusal. Backoffs pass on a fake clock;
only the timeout scenario waits (under a second)."""

from __future__ import annotations

import json
import random

import pytest

from pipelines.subscriptions import delivery
from pipelines.subscriptions.delivery import Deliverer, NotDeadLettered, retry_after_seconds
from pipelines.subscriptions.events import Event, event_id
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.signing import verify
from pipelines.subscriptions.store import SubscriptionStore
from subscription_fixtures import PAST, SECRET, Answer, FakeClock, Receiver, webhook_settings


def _event_for(home, url: str, *, to_version: str = "2025-11-13") -> Event:
    """A subscription at ``url`` and one event of it in the outbox (as notify writes it)."""
    sub = SubscriptionStore(home, clock=lambda: PAST).create(url=url, act_id="pl:kc", secret=SECRET).subscription
    eid = event_id(sub.id, "pl:kc", "2024-12-19", to_version)
    payload = {"id": eid, "type": "act.changed", "act_id": "pl:kc", "from_version": "2024-12-19",
               "to_version": to_version, "changes": [{"unit_id": "pl:kc:art:709^2", "change": "changed",
                                                      "word_diff": "[-na piśmie-] {+w formie dokumentowej+}"}]}
    ev = Event(eid, sub.id, "act.changed", "pl:kc", "2024-12-19", to_version, url, "2025-11-13T00:00:00Z", payload)
    outbox = Outbox(home)
    assert outbox.add([ev], now=0.0) == [eid]
    outbox.close()
    return ev


def _deliverer(home, clock: FakeClock, **settings) -> Deliverer:
    return Deliverer(home, settings=webhook_settings(home.home, **settings), clock=clock, rng=random.Random(7))


def test_a_failing_receiver_is_retried_until_it_recovers_and_gets_the_event_once(home):
    with Receiver() as rx:
        rx.then(500, Answer(200, delay_s=0.8), Answer(429, {"Retry-After": "30"}), 200)
        ev = _event_for(home, rx.url)
        clock = FakeClock()
        d = _deliverer(home, clock)
        report = d.run()
        rx.wait_for(4)
    assert (report.attempts, report.delivered, report.retried, report.dead_lettered) == (4, 1, 3, 0)
    # the receiver saw the same event four times (one was cut by the timeout): same id and body
    assert [r.event_id for r in rx.received] == [ev.id] * 4
    assert {r.body for r in rx.received} == {ev.body.encode()}
    assert [r.headers["Lexpipe-Delivery-Attempt"] for r in rx.received] == ["1", "2", "3", "4"]
    ok = rx.received[-1]
    assert verify(SECRET, ok.headers, ok.body, now=clock.time())
    assert not verify("another-secret-0123456789", ok.headers, ok.body, now=clock.time())
    assert json.loads(ok.body)["changes"][0]["unit_id"] == "pl:kc:art:709^2"
    # exponential backoff with jitter (1 s, then 2 s, each in [d/2, d]); the 429's Retry-After: 30 s
    assert 0.5 <= clock.sleeps[0] <= 1.0 and 1.0 <= clock.sleeps[1] <= 2.0 and clock.sleeps[2] >= 30.0
    # every attempt logged: status or error, duration, outcome
    log = delivery.delivery_log(home, ev.id)
    assert [(a.attempt, a.status_code, a.outcome) for a in log] == [
        (1, 500, "retry"), (2, None, "retry"), (3, 429, "retry"), (4, 200, "delivered")]
    assert "timeout" in log[1].error and log[1].duration_ms >= 400
    assert all(a.duration_ms is not None and a.started_at for a in log)
    assert delivery.event_status(home, ev.id).status == "delivered"
    # delivered is final: another run sends nothing
    with Receiver() as rx2:
        assert d.run().attempts == 0
    assert rx2.received == []
    d.close()


def test_a_receiver_that_keeps_failing_is_dead_lettered_then_redelivered(home):
    with Receiver(default=Answer(503)) as rx:
        ev = _event_for(home, rx.url)
        clock = FakeClock()
        d = _deliverer(home, clock)
        report = d.run()
        assert (report.attempts, report.dead_lettered) == (4, 1)  # LEXPIPE_WEBHOOK_MAX_ATTEMPTS=4
        assert len(rx.received) == 4
        dead = delivery.dead_letters(home)
        assert [e.id for e in dead] == [ev.id]
        assert dead[0].attempts == 4 and dead[0].last_status == 503 and "attempt 4 of 4" in dead[0].last_error
        assert "body" not in dead[0].to_dict() and "secret" not in json.dumps(dead[0].to_dict())
        assert [a.outcome for a in delivery.delivery_log(home, ev.id)] == ["retry"] * 3 + ["dead"]
        # parked: a run does not touch it any more
        assert d.run().attempts == 0 and len(rx.received) == 4
        # the receiver is fixed; an operator redelivers the parked event
        rx.default = Answer(200)
        after = delivery.redeliver(home, ev.id, deliverer=d)
    assert after.status == "delivered"
    assert [r.event_id for r in rx.received] == [ev.id] * 5
    assert verify(SECRET, rx.received[-1].headers, rx.received[-1].body, now=clock.time())
    assert [a.outcome for a in delivery.delivery_log(home, ev.id)][-1] == "delivered"
    assert delivery.dead_letters(home) == []
    with pytest.raises(NotDeadLettered):
        delivery.redeliver(home, ev.id, deliverer=d)
    d.close()


@pytest.mark.parametrize("status", [400, 404, 410])
def test_a_refusal_is_not_retried(home, status):
    with Receiver(default=Answer(status)) as rx:
        ev = _event_for(home, rx.url)
        d = _deliverer(home, FakeClock())
        report = d.run()
    assert (report.attempts, report.retried, report.dead_lettered) == (1, 0, 1)
    assert len(rx.received) == 1
    parked = delivery.event_status(home, ev.id)
    assert parked.status == "dead" and f"HTTP {status}" in parked.last_error and "not retried" in parked.last_error
    d.close()


def test_a_connection_refused_is_retried_like_a_5xx(home):
    with Receiver() as rx:
        url = rx.url
    ev = _event_for(home, url)  # the server is gone: nothing listens on that port any more
    clock = FakeClock()
    d = _deliverer(home, clock)
    report = d.run()
    assert (report.attempts, report.dead_lettered) == (4, 1)
    log = delivery.delivery_log(home, ev.id)
    assert all(a.status_code is None and a.error for a in log)
    d.close()


def test_retries_due_after_the_run_budget_stay_pending_for_the_next_run(home):
    with Receiver() as rx:
        rx.then(Answer(503, {"Retry-After": "600"}), 200)
        ev = _event_for(home, rx.url)
        clock = FakeClock()
        d = _deliverer(home, clock, webhook_run_budget_s=60.0)
        assert d.run().attempts == 1  # the retry is 600 s away, beyond the 60 s budget
        assert delivery.event_status(home, ev.id).status == "pending"
        assert delivery.pending_due(home, now=clock.time()) == 0
        clock.advance(600)
        assert delivery.pending_due(home, now=clock.time()) == 1
        assert d.run().delivered == 1
    assert len(rx.received) == 2
    d.close()


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("30", now=0) == 30
    assert retry_after_seconds(None, now=0) is None and retry_after_seconds("soon", now=0) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 - 60) == 60
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 + 60) == 0
    assert retry_after_seconds("999999999", now=0) == delivery.RETRY_AFTER_MAX_S


def test_a_hanging_receiver_never_delays_a_healthy_one(home):
    """The issue: delivery was sequential, so one hanging receiver delayed every other subscriber by its
    timeout on every attempt. The hanging one's event is first in line; the healthy one is served
    within 1 s while the hanging one holds its sender until the timeout."""
    import threading
    import time

    with Receiver(default=Answer(200, delay_s=4.0)) as hanging, Receiver() as healthy:
        slow = _event_for(home, hanging.url)  # created first: first in line
        fast = _event_for(home, healthy.url, to_version="2025-11-14")
        d = _deliverer(home, FakeClock(), webhook_timeout_s=3.0, webhook_max_attempts=1, webhook_concurrency=4)
        started = time.monotonic()
        run = threading.Thread(target=lambda: setattr(d, "report", d.run()))
        run.start()
        healthy.wait_for(1, timeout_s=10)
        run.join(30)
        elapsed = time.monotonic() - started
    assert [r.event_id for r in healthy.received] == [fast.id]
    assert healthy.received[0].at - started < 1.0  # served at once, not after the hanging one's 3 s timeout
    assert [r.event_id for r in hanging.received] == [slow.id] and hanging.received[0].at - started < 1.0
    assert elapsed >= 3.0  # the hanging one really held its sender until the timeout
    assert (d.report.delivered, d.report.dead_lettered) == (1, 1)
    assert "timeout after 3 s" in delivery.event_status(home, slow.id).last_error
    d.close()


def test_one_subscription_is_sent_one_event_at_a_time(home):
    """Concurrency is across subscriptions: a subscriber never gets two of its events at once (a
    receiver may rely on it), and a second run sees its events as busy while a sender holds one."""
    with Receiver(default=Answer(200, delay_s=0.4)) as rx:
        sub = SubscriptionStore(home, clock=lambda: PAST).create(url=rx.url, act_id="pl:kc", secret=SECRET).subscription
        outbox = Outbox(home)
        ids = []
        for v in ("2025-11-13", "2025-11-14", "2025-11-15"):
            eid = event_id(sub.id, "pl:kc", "2024-12-19", v)
            outbox.add([Event(eid, sub.id, "act.changed", "pl:kc", "2024-12-19", v, rx.url, "2025-11-13T00:00:00Z",
                              {"id": eid})], now=0.0)
            ids.append(eid)
        first = outbox.claim(now=1.0, lease_s=60)
        assert first is not None and outbox.claim(now=1.0, lease_s=60) is None  # the subscription is busy
        outbox.conn.execute("UPDATE events SET lease_until = NULL")  # released
        outbox.close()
        d = _deliverer(home, FakeClock(), webhook_concurrency=8)
        report = d.run()
        d.close()
    assert report.delivered == 3
    arrivals = [r.at for r in rx.received]
    assert all(b - a >= 0.35 for a, b in zip(arrivals, arrivals[1:]))  # each after the previous one's answer
    assert sorted(r.event_id for r in rx.received) == sorted(ids)


def test_a_long_lived_deliverer_keeps_no_connection_of_a_past_run(home):
    """``lexpipe notify`` keeps one Deliverer for days: the senders' SQLite connections close with their run."""
    with Receiver() as rx:
        d = _deliverer(home, FakeClock(), webhook_concurrency=4)
        for v in ("2025-11-13", "2025-11-14", "2025-11-15"):
            _event_for(home, rx.url, to_version=v)
            assert d.run().delivered == 1
            assert d._opened == []  # the run's senders were released; the caller's thread opened nothing
        d.close()
    assert len(rx.received) == 3
