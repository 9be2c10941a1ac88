"""Crash safety of the outbox: an event written before a crash is delivered by the next run, with the
same event id; a run killed mid-POST is resent after its lease expires (at least once, never lost)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pipelines.subscriptions import delivery
from pipelines.subscriptions.events import notify
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.store import SubscriptionStore
from subscription_fixtures import PAST, SECRET, Answer, FakeClock, Receiver, webhook_settings, write_publication
from pipelines.subscriptions.signing import verify

REPO = Path(__file__).resolve().parents[3]


class Crash(BaseException):
    """The process dying right after the outbox commit (no ``except Exception`` catches it)."""


def _publish(home: Path) -> None:
    write_publication(home, "pl:kc", "2024-12-19", "2025-01-01T00:00:00+00:00")
    write_publication(home, "pl:kc", "2025-11-13", "2025-11-14T08:00:00+00:00", previous="2024-12-19",
                      diff=[("pl:kc:art:709^2", "changed", "[-na piśmie-] {+w formie dokumentowej+}")])


def test_a_crash_after_the_outbox_write_loses_nothing(home, monkeypatch: pytest.MonkeyPatch):
    _publish(home.home)
    with Receiver() as rx:
        SubscriptionStore(home, clock=lambda: PAST).create(url=rx.url, act_id="pl:kc", secret=SECRET)
        real_add = Outbox.add

        def add_then_crash(self, events, *, now):
            written = real_add(self, events, now=now)
            raise Crash(f"killed after writing {written}")

        monkeypatch.setattr(Outbox, "add", add_then_crash)
        with pytest.raises(Crash):
            notify(home, "pl:kc", "2025-11-13", settings=webhook_settings(home.home))
        monkeypatch.setattr(Outbox, "add", real_add)
        assert rx.received == []  # nothing was sent …
        pending = Outbox(home).events(status="pending")
        assert len(pending) == 1  # … but the event is in the outbox
        # the next run (the outbox sensor's delivery job) delivers it
        report = delivery.deliver_due(home, settings=webhook_settings(home.home))
        assert report.delivered == 1
        assert [r.event_id for r in rx.received] == [pending[0].id]
        assert verify(SECRET, rx.received[0].headers, rx.received[0].body)
        # notifying the same publication again writes and sends nothing new
        again = notify(home, "pl:kc", "2025-11-13", settings=webhook_settings(home.home))
        assert (again.events, again.new, again.delivered, again.attempts) == (1, 0, 1, 0)
    assert len(rx.received) == 1


_SENDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from core.layout import Layout
    from core.settings import Settings
    from pipelines.subscriptions.events import notify

    home = Path(sys.argv[1])
    notify(Layout(home), "pl:kc", "2025-11-13", settings=Settings(home=home, webhook_timeout_s=30))
    print("not killed")
""")


def test_a_sender_killed_mid_request_is_resent_with_the_same_event_id(home):
    _publish(home.home)
    with Receiver() as rx:
        SubscriptionStore(home, clock=lambda: PAST).create(url=rx.url, act_id="pl:kc", secret=SECRET)
        proc: list[subprocess.Popen] = []

        def kill_sender():
            os.kill(proc[0].pid, signal.SIGKILL)
            proc[0].wait(timeout=30)

        rx.then(Answer(200, before=kill_sender))
        proc.append(subprocess.Popen([sys.executable, "-c", _SENDER, str(home.home)], cwd=REPO,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        out, err = proc[0].communicate(timeout=120)
        assert proc[0].returncode == -signal.SIGKILL, err.decode()[-2000:]
        assert b"not killed" not in out
        assert len(rx.received) == 1
        first = rx.received[0].event_id
        ev = Outbox(home).get(first)
        assert ev is not None and ev.status == "pending" and ev.lease_until is not None  # claimed, never recorded
        # a run before the lease expires leaves it alone (the sender might still be answering) …
        assert delivery.Deliverer(home, settings=webhook_settings(home.home, webhook_run_budget_s=0.0)).run().attempts == 0
        # … the next run after it delivers the same event again
        later = FakeClock(start=time.time() + 120)  # the sender leased it for 30 s + 30 s
        d = delivery.Deliverer(home, settings=webhook_settings(home.home, webhook_run_budget_s=0.0), clock=later)
        assert d.run().delivered == 1
        d.close()
    assert [r.event_id for r in rx.received] == [first, first]
    assert rx.received[0].body == rx.received[1].body
    assert [a.outcome for a in delivery.delivery_log(home, first)] == ["interrupted", "delivered"]
