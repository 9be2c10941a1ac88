"""Subscriptions: create (validated), list, get, delete; the secret is returned once and never shown."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pipelines.subscriptions import db
from pipelines.subscriptions.events import Event
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.store import (InvalidSubscription, SubscriptionNotFound, SubscriptionStore,
                                           create_subscription, delete_subscription, get_subscription,
                                           list_subscriptions)

URL = "https://consumer.example/hooks/lexpipe"


def test_the_three_kinds_and_what_the_api_sees(home):
    act = create_subscription(home, url=URL, act_id="pl:kc")
    unit = create_subscription(home, url=URL, unit_id="pl:kc:art:415", secret="s" * 20, owner="key-hash-1")
    query = create_subscription(home, url=URL, act_id="pl:kc", query="  umowa leasingu forma  ", k=5,
                                description="leasing")
    assert [c.subscription.kind for c in (act, unit, query)] == ["act", "unit", "query"]
    assert act.secret.startswith("whsec_") and len(act.secret) > 40  # generated when not given
    assert unit.secret == "s" * 20 and unit.subscription.act_id == "pl:kc"
    assert query.subscription.query == "umowa leasingu forma" and query.subscription.retriever == "hybrid"
    assert query.to_dict()["secret"] == query.secret  # shown once, at creation
    listed = list_subscriptions(home)
    assert [s.id for s in listed] == [c.subscription.id for c in (act, unit, query)]
    for s in listed:  # never the secret again
        assert "secret" not in s.to_dict() and "whsec_" not in json.dumps(s.to_dict()) and "s" * 20 not in repr(s)
    assert list_subscriptions(home, owner="key-hash-1") == [unit.subscription]
    assert get_subscription(home, unit.subscription.id).unit_id == "pl:kc:art:415"
    with pytest.raises(SubscriptionNotFound):
        get_subscription(home, unit.subscription.id, owner="someone-else")
    # the file holds secrets: only its owner may read it
    assert stat.S_IMODE(os.stat(db.db_path(home)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(db.subscriptions_dir(home)).st_mode) == 0o700


@pytest.mark.parametrize("request_, message", [
    ({"url": URL}, "act_id must look like"),
    ({"url": URL, "act_id": "xx:nope"}, "unknown act"),
    ({"url": URL, "unit_id": "pl:kc"}, "unit_id must look like"),
    ({"url": URL, "unit_id": "pl:kc:art:415", "act_id": "pl:kp"}, "not of act pl:kp"),
    ({"url": URL, "unit_id": "pl:kc:art:415", "query": "x"}, "not both"),
    ({"url": URL, "act_id": "pl:kc", "query": " "}, "query is empty"),
    ({"url": URL, "act_id": "pl:kc", "query": "umowa", "k": 0}, "k must be between"),
    ({"url": URL, "act_id": "pl:kc", "query": "umowa", "retriever": "magic"}, "unknown retriever"),
    ({"url": URL, "act_id": "pl:kc", "k": 5}, "k applies to a query"),
    ({"url": "ftp://consumer.example/x", "act_id": "pl:kc"}, "http"),
    ({"url": "https://consumer.example/x#frag", "act_id": "pl:kc"}, "fragment"),
    ({"url": URL, "act_id": "pl:kc", "secret": "short"}, "secret must be"),
])
def test_invalid_requests_are_refused_with_a_reason(home, request_, message):
    with pytest.raises(InvalidSubscription, match=message):
        create_subscription(home, **request_)
    assert list_subscriptions(home) == []


def test_delete_cancels_undelivered_events(home):
    store = SubscriptionStore(home)
    sub = store.create(url=URL, act_id="pl:kc").subscription
    ev = Event("evt_x", sub.id, "act.changed", "pl:kc", "2024-12-19", "2025-11-13", URL, "2025-01-01T00:00:00Z", {})
    Outbox(home).add([ev], now=0.0)
    assert delete_subscription(home, sub.id) == 1
    assert Outbox(home).get("evt_x").status == "cancelled"
    assert list_subscriptions(home) == []
    with pytest.raises(SubscriptionNotFound):
        delete_subscription(home, sub.id)


def test_reading_an_empty_home_creates_nothing(home):
    assert list_subscriptions(home) == [] and not db.subscriptions_dir(home).exists()
