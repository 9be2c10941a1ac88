"""Crash safety of the outbox: an event written before a crash is delivered by the next run, with the
same event id; a run killed mid-POST is resent after its lease expires (at least once, never lost).

The crash matrix (docs/subscriptions.md#crash-safety-the-outbox): real ``lexpipe notify`` and ``lexpipe
serve`` processes, receivers on 127.0.0.1, SIGKILLed at each step of catching up, delivering, redelivering
and sending a test event (crash_driver.py picks the step; mid-POST the receiver itself kills the sender);
then the next ``lexpipe notify`` runs, and every event is delivered at least once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.layout import Layout
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
    notify(Layout(home), "pl:kc", "2025-11-13", settings=Settings(home=home, webhook_timeout_s=30,
                                                                  api_webhook_allow_networks="127.0.0.1"))
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


# ----------------------------------------------------------------------------------------------
# the crash matrix: real `lexpipe notify` and `lexpipe serve` processes, SIGKILLed at each step

DRIVER = Path(__file__).with_name("crash_driver.py")
OUTBOX = "pipelines.subscriptions.outbox:Outbox"
LEASE_S = 3.0  # LEXPIPE_WEBHOOK_TIMEOUT_S 2 + LEXPIPE_WEBHOOK_LEASE_MARGIN_S 1: a dead sender's event waits this long


def _env(home: Path, **extra: str) -> dict[str, str]:
    from lexpipe.api.security import hash_key

    return {**os.environ, "PYTHONPATH": str(REPO), "LEXPIPE_HOME": str(home), "LEXPIPE_ENCODER": "hashing",
            "LEXPIPE_ELASTICSEARCH_URL": "", "LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1",
            "LEXPIPE_WEBHOOK_TIMEOUT_S": "2", "LEXPIPE_WEBHOOK_LEASE_MARGIN_S": "1",
            "LEXPIPE_WEBHOOK_BACKOFF_BASE_S": "0.2", "LEXPIPE_WEBHOOK_BACKOFF_MAX_S": "0.5",
            "LEXPIPE_WEBHOOK_RUN_BUDGET_S": "20", "LEXPIPE_WEBHOOK_WORKER_INTERVAL_S": "0.2",
            "LEXPIPE_API_KEY_HASHES": hash_key(API_KEY), **extra}


API_KEY = "lxp_crash-test-key-0123456789abcdefghijklmnop"


def _cli(home: Path, *argv: str, crash_at: str | None = None, **env: str) -> subprocess.Popen:
    """``lexpipe <argv>`` in a process of its own (through the crash driver when a step is chosen)."""
    extra = {"CRASH_AT": crash_at} if crash_at else {}
    cmd = [sys.executable, str(DRIVER), *argv, "--home", str(home)]
    return subprocess.Popen(cmd, cwd=REPO, env=_env(home, **extra, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def _killed(proc: subprocess.Popen, timeout_s: float = 300) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError("the process was not killed at its step: " + out.decode()[-3000:]) from None
    assert proc.returncode == -signal.SIGKILL, out.decode()[-3000:]
    return out.decode()


def _recover(home: Path) -> str:
    """The delivery worker as any deployment runs it: ``lexpipe notify`` (once: catch-up, then deliver,
    waiting for leases a dead sender left to expire)."""
    done = subprocess.run([sys.executable, "-m", "lexpipe.cli", "notify", "--once", "--no-search", "--home",
                           str(home)], cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``lexpipe serve`` on a free port of 127.0.0.1 (optionally set to die at a step)."""

    def __init__(self, home: Path, crash_at: str | None = None):
        self.port = _free_port()
        self.proc = _cli(home, "serve", "--port", str(self.port), crash_at=crash_at)
        self.base = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout_s: float = 240) -> "Server":
        import httpx

        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            assert self.proc.poll() is None, self.proc.stdout.read().decode()[-3000:]
            try:
                if httpx.get(f"{self.base}/changes", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError("lexpipe serve did not start")

    def post(self, path: str):
        import httpx

        return httpx.post(f"{self.base}{path}", headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def _world(home: Path, rx: Receiver) -> str:
    """Two published versions and one act subscription (made before them) at the receiver."""
    from lexpipe.api.security import hash_key

    _publish(home)
    return SubscriptionStore(Layout(home), clock=lambda: PAST).create(  # owned by the API key the tests use
        url=rx.url, act_id="pl:kc", secret=SECRET, owner=hash_key(API_KEY)).subscription.id


def _all_delivered(home: Path, rx: Receiver) -> list[str]:
    """Every event of the outbox is delivered, and the receiver got each (verified) at least once."""
    events = Outbox(Layout(home)).events()
    assert events and {e.status for e in events} == {"delivered"}, [(e.id, e.status, e.last_error) for e in events]
    got = [r.event_id for r in rx.received]
    assert all(verify(SECRET, r.headers, r.body) for r in rx.received)
    assert {e.id for e in events} <= set(got)
    return got


# (step, where the process dies): the worker, `lexpipe notify`, over a publication nobody notified yet
WORKER_STEPS = [
    ("catch-up, before the outbox write", f"{OUTBOX}.add:before"),
    ("catch-up, after the outbox write", f"{OUTBOX}.add:after"),
    ("after the claim (lease written)", f"{OUTBOX}.claim:after"),
    ("after logging the attempt, before the POST", f"{OUTBOX}.start_attempt:after"),
    ("during the POST (the receiver kills it)", None),
    ("after the 2xx, before recording it", f"{OUTBOX}.finish_attempt:before"),
    ("after recording the delivery", f"{OUTBOX}.finish_attempt:after"),
]


@pytest.mark.parametrize("step,crash_at", WORKER_STEPS, ids=[s for s, _ in WORKER_STEPS])
def test_the_delivery_worker_killed_at_each_step_loses_no_event(tmp_path, step, crash_at):
    """``lexpipe notify`` SIGKILLed at each step of catching up and delivering; the next ``lexpipe
    notify`` delivers every event at least once, with the same id and body."""
    home = tmp_path / "home"
    with Receiver() as rx:
        _world(home, rx)
        proc: list[subprocess.Popen] = []
        if crash_at is None:
            rx.then(Answer(200, before=lambda: (os.kill(proc[0].pid, signal.SIGKILL), proc[0].wait(60))))
        proc.append(_cli(home, "notify", "--no-search", crash_at=crash_at))
        _killed(proc[0])
        before = len(rx.received)
        _recover(home)
        got = _all_delivered(home, rx)
    from collections import Counter

    ids = sorted(e.id for e in Outbox(Layout(home)).events())
    assert len(ids) == 2  # the act subscription hears of both publications (the first version too)
    sent = Counter(got)
    if crash_at in (f"{OUTBOX}.add:before", f"{OUTBOX}.add:after", f"{OUTBOX}.claim:after",
                    f"{OUTBOX}.start_attempt:after"):
        assert before == 0 and sent == {i: 1 for i in ids}  # nothing had been sent: each sent once, by the recovery
    elif crash_at == f"{OUTBOX}.finish_attempt:after":
        assert sent == {i: 1 for i in ids}  # recorded before the kill: never sent again
    else:  # received, never recorded: sent again, the same event (receivers de-duplicate on the id)
        assert before == 1 and sorted(sent.values()) == [1, 2]
        twice = [r.body for r in rx.received if sent[r.event_id] == 2]
        assert len(twice) == 2 and twice[0] == twice[1]
    logs = {i: [a.outcome for a in delivery.delivery_log(Layout(home), i)] for i in ids}
    for i, log in logs.items():
        assert log[-1] == "delivered" and log.count("delivered") == 1, (i, log)
    print(f"\n[crash matrix] lexpipe notify | {step} | received before the kill: {before} | after recovery: "
          f"{sorted(sent.values())} | attempt logs: {sorted(logs.values())}")


SERVER_STEPS = [
    ("redeliver: after putting it back in line", "redeliver", f"{OUTBOX}.requeue:after"),
    ("redeliver: during the POST (the receiver kills it)", "redeliver", None),
    ("test event: after the outbox write", "test", f"{OUTBOX}.add:after"),
    ("test event: during the POST (the receiver kills it)", "test", None),
]


@pytest.mark.parametrize("step,request_,crash_at", SERVER_STEPS, ids=[s for s, _, _ in SERVER_STEPS])
def test_the_server_killed_at_each_step_loses_no_event(tmp_path, step, request_, crash_at):
    """``lexpipe serve`` SIGKILLed inside ``POST /events/{id}/redeliver`` and ``POST
    /subscriptions/{id}/test``: the event is left pending (the issue: "neither redelivered nor
    delivered by any command"); ``lexpipe notify`` delivers it, and a restarted server redelivers a
    stuck one once its lease expired (409 with Retry-After while a sender may still hold it)."""
    import httpx

    home = tmp_path / "home"
    with Receiver() as rx:
        sub = _world(home, rx)
        eid = None
        if request_ == "redeliver":  # a dead-lettered event to redeliver
            rx.then(410)
            notify(Layout(home), "pl:kc", "2025-11-13", settings=webhook_settings(home))
            (dead,) = Outbox(Layout(home)).events(status="dead")
            eid = dead.id
        server = Server(home, crash_at=crash_at)
        try:
            server.wait_ready()
            if crash_at is None:
                rx.then(Answer(200, before=lambda: (os.kill(server.proc.pid, signal.SIGKILL), server.proc.wait(60))))
            path = f"/events/{eid}/redeliver" if request_ == "redeliver" else f"/subscriptions/{sub}/test"
            with pytest.raises(httpx.HTTPError):  # the server died answering
                server.post(path)
            _killed(server.proc)
        finally:
            server.stop()
        (left,) = [e for e in Outbox(Layout(home)).events() if e.status != "delivered"]
        assert left.status == "pending"
        if request_ == "redeliver" and crash_at is None:
            # the repro: a restarted server redelivers the stuck event (409 while its lease lasts)
            again = Server(home).wait_ready()
            try:
                early = again.post(f"/events/{left.id}/redeliver")
                print(f"\n[crash matrix] restarted lexpipe serve: redeliver of the stuck event → {early.status_code} "
                      f"Retry-After {early.headers.get('retry-after')}")
                if early.status_code == 409:
                    assert int(early.headers["Retry-After"]) <= LEASE_S + 1
                    time.sleep(LEASE_S + 0.5)
                    early = again.post(f"/events/{left.id}/redeliver")
                assert early.status_code == 200 and early.json()["status"] == "delivered", early.text
            finally:
                again.stop()
        _recover(home)
        got = _all_delivered(home, rx)
    assert left.id in got
    if request_ == "test":
        assert left.type == "ping"
    print(f"\n[crash matrix] lexpipe serve | {step} | left: {left.status}, lease {'held' if left.lease_until else 'none'} "
          f"| received {got.count(left.id)}x after recovery | log: "
          f"{[a.outcome for a in delivery.delivery_log(Layout(home), left.id)]}")
