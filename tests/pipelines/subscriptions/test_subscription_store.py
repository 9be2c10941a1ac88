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
                                           UnknownTarget, create_subscription, delete_subscription,
                                           get_subscription, list_subscriptions)

URL = "https://consumer.example/hooks/lexpipe"


def test_the_three_kinds_and_what_the_api_sees(kc_home):
    home = kc_home  # a unit subscription is checked against the held versions
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


@pytest.mark.parametrize("request_, message, field", [
    ({"url": URL}, "act_id must look like", "act"),
    ({"url": URL, "act_id": "xx:nope"}, "unknown act", "act"),
    ({"url": URL, "unit_id": "pl:kc"}, "unit_id must look like", "unit_id"),
    ({"url": URL, "unit_id": "pl:kc:art:415", "act_id": "pl:kp"}, "not of act pl:kp", "act"),
    ({"url": URL, "unit_id": "pl:kc:art:415", "query": "x"}, "not both", "query"),
    ({"url": URL, "act_id": "pl:kc", "query": " "}, "query is empty", "query"),
    ({"url": URL, "act_id": "pl:kc", "query": "umowa", "k": 0}, "k must be between", "k"),
    ({"url": URL, "act_id": "pl:kc", "query": "umowa", "retriever": "magic"}, "unknown retriever", "retriever"),
    ({"url": URL, "act_id": "pl:kc", "k": 5}, "k applies to a query", "k"),
    ({"url": "ftp://consumer.example/x", "act_id": "pl:kc"}, "http", "url"),
    ({"url": "https://consumer.example/x#frag", "act_id": "pl:kc"}, "fragment", "url"),
    ({"url": "https://user:pass@consumer.example/x", "act_id": "pl:kc"}, "must not carry credentials", "url"),
    ({"url": "https://consumer.example/x y", "act_id": "pl:kc"}, "spaces", "url"),
    ({"url": "https://consumer.example:70000/x", "act_id": "pl:kc"}, "not a URL", "url"),
    ({"url": URL, "act_id": "pl:kc", "secret": "short"}, "secret must be", "secret"),
    ({"url": URL, "act_id": "pl:kc", "secret": " leading space 0123456789"}, "printable ASCII", "secret"),
])
def test_invalid_requests_are_refused_with_a_reason(home, request_, message, field):
    with pytest.raises(InvalidSubscription, match=message) as refused:
        create_subscription(home, **request_)
    assert refused.value.field == field
    assert list_subscriptions(home) == []


@pytest.mark.parametrize("unit_id", ["pl:kc:art:99999", "pl:kc:art:415:par:9", "pl:kc:book:SIÓDMA"])
def test_a_unit_no_held_version_has_is_refused(kc_home, unit_id):
    with pytest.raises(UnknownTarget, match="no held version of pl:kc") as refused:
        create_subscription(kc_home, url=URL, unit_id=unit_id)
    assert refused.value.field == "unit_id" and list_subscriptions(kc_home) == []


def test_a_unit_of_an_act_with_no_held_version_cannot_be_checked(kc_home):
    with pytest.raises(UnknownTarget, match="no version of pl:kp is held"):
        create_subscription(kc_home, url=URL, unit_id="pl:kp:art:1")
    # units of every kind that a held version has: in force, repealed, structure, only announced
    for unit in ("pl:kc:art:2", "pl:kc:book:PIERWSZA:title:II", "pl:kc:art:647^1:par:1^1"):
        assert create_subscription(kc_home, url=URL, unit_id=unit).subscription.unit_id == unit


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
