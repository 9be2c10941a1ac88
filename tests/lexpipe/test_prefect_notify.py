"""The notify step in Prefect: the ``notify-subscribers`` flow (what ``corpus-refresh`` runs after
each publication, see test_prefect_flows.py for its place in the refresh) delivers the events of a
published version, and the ``webhook-outbox`` flow delivers what a failed attempt left due."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from core.layout import Layout
from pipelines.subscriptions.delivery import delivery_log
from pipelines.subscriptions.signing import verify
from pipelines.subscriptions.store import SubscriptionStore
from subscription_fixtures import PAST, SECRET, Answer, Receiver

NEW = "2025-11-13"


@pytest.fixture
def home(corpus_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dst = tmp_path / "home"
    for part in ("corpus", "index"):
        shutil.copytree(corpus_home / part, dst / part, symlinks=True)
    for k, v in {"LEXPIPE_ENCODER": "hashing", "LEXPIPE_ELASTICSEARCH_URL": "", "LEXPIPE_WEBHOOK_TIMEOUT_S": "5",
                 "LEXPIPE_WEBHOOK_MAX_ATTEMPTS": "3", "LEXPIPE_WEBHOOK_BACKOFF_BASE_S": "0.05",
                 "LEXPIPE_WEBHOOK_BACKOFF_MAX_S": "0.1", "LEXPIPE_WEBHOOK_RUN_BUDGET_S": "0",
                 "LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1"}.items():  # the receivers' address
        monkeypatch.setenv(k, v)
    return dst


def test_the_notify_flow_delivers_the_events_of_a_publication(prefect_server, home: Path):
    from lexpipe.prefect_flows import notify_subscribers, webhook_outbox

    layout = Layout(home)
    with Receiver() as rx:
        # the first attempt fails and asks for 3 s: the run budget is 0, so it waits in the outbox (with
        # the 0.1 s backoff alone a slow host's run still had the other event in flight when the retry
        # fell due, and retried it at once: failed 0 instead of 1)
        rx.then(Answer(503, headers={"Retry-After": "3"}))
        store = SubscriptionStore(layout, clock=lambda: PAST)
        sub = store.create(url=rx.url, secret=SECRET, unit_id="pl:kc:art:709^2").subscription
        store.create(url=rx.url, secret=SECRET, act_id="pl:kc", k=5, retriever="bm25",
                     query="umowa leasingu na piśmie pod rygorem nieważności")
        notified = notify_subscribers(act_id="pl:kc", version=NEW, home=str(home))
        assert (notified.version, notified.subscriptions, notified.events, notified.new) == (NEW, 2, 2, 2)
        assert notified.delivered + notified.failed == 2 and notified.failed == 1
        time.sleep(3.1)  # the retry falls due
        out = webhook_outbox(home=str(home))
        assert out["delivered"] == 1
    bodies = {json.loads(r.body)["type"]: r for r in rx.received if r.answer.status == 200}
    assert set(bodies) == {"unit.changed", "query.changed"}
    unit = bodies["unit.changed"]
    assert verify(SECRET, unit.headers, unit.body)
    assert json.loads(unit.body)["subscription"]["id"] == sub.id
    query = json.loads(bodies["query.changed"].body)["query"]
    assert [h["article_id"] for h in query["left"]] == ["pl:kc:art:709^2"]
    failed_first = next(r.event_id for r in rx.received if r.answer.status == 503)
    assert [a.outcome for a in delivery_log(layout, failed_first)] == ["retry", "delivered"]
