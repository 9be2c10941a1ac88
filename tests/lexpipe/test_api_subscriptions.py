"""``/subscriptions`` and ``/events``: create/list/get/delete scoped to the API key that created them,
the secret shown only at creation, 401 without a valid key, 422 for bad bodies and private URLs,
dead letters, event status and redelivery to a local receiver (pytest-httpserver on 127.0.0.1, allowed
by the test settings)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.layout import Layout
from core.settings import Settings
from lexpipe.api import create_app
from lexpipe.api.security import new_key
from pipelines.subscriptions.events import Event
from pipelines.subscriptions.outbox import Outbox

KEY_A, DIGEST_A = new_key()
KEY_B, DIGEST_B = new_key()
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"X-API-Key": KEY_B}


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path / "home")


@pytest.fixture
def client(layout: Layout) -> TestClient:
    settings = Settings(home=layout.home, api_key_hashes=f"{DIGEST_A},{DIGEST_B}",
                        api_webhook_allow_networks="127.0.0.1")
    return TestClient(create_app(layout=layout, settings=settings, resolve=lambda host: ["93.184.215.14"]))


def create(client, headers=A, status=201, **body) -> dict:
    r = client.post("/subscriptions", json={"url": "https://hooks.example.com/lex", **body}, headers=headers)
    assert r.status_code == status, r.text
    return r.json()


def test_create_list_get_delete(client):
    act = create(client, act="pl:kc", description="k.c.")
    unit = create(client, unit_id="pl:kc:art:415", secret="s" * 20)
    assert act["kind"] == "act" and act["secret"].startswith("whsec_") and unit["secret"] == "s" * 20
    assert unit["kind"] == "unit" and unit["act_id"] == "pl:kc" and unit["unit_id"] == "pl:kc:art:415"
    listed = client.get("/subscriptions", headers=A).json()
    assert [s["id"] for s in listed] == [act["id"], unit["id"]]
    assert all("secret" not in s for s in listed)
    one = client.get(f"/subscriptions/{act['id']}", headers=A).json()
    assert "secret" not in one and one["url"] == "https://hooks.example.com/lex" and one["description"] == "k.c."
    assert client.get("/subscriptions", params={"act": "de:bgb"}, headers=A).json() == []
    r = client.delete(f"/subscriptions/{act['id']}", headers=A)
    assert r.status_code == 204 and r.content == b""
    assert client.get(f"/subscriptions/{act['id']}", headers=A).status_code == 404
    assert client.delete(f"/subscriptions/{act['id']}", headers=A).status_code == 404


def test_query_subscription(client):
    q = create(client, query="umowa leasingu forma", act="pl:kc", k=5, retriever="bm25")
    assert (q["kind"], q["query"], q["k"], q["retriever"]) == ("query", "umowa leasingu forma", 5, "bm25")


def test_a_key_sees_only_its_own(client):
    mine = create(client, act="pl:kc")
    theirs = create(client, headers=B, act="pl:kc")
    assert [s["id"] for s in client.get("/subscriptions", headers=A).json()] == [mine["id"]]
    assert [s["id"] for s in client.get("/subscriptions", headers=B).json()] == [theirs["id"]]
    for method in ("get", "delete"):
        assert getattr(client, method)(f"/subscriptions/{theirs['id']}", headers=A).status_code == 404
    assert client.get(f"/subscriptions/{theirs['id']}/dead-letters", headers=A).status_code == 404
    assert client.get(f"/subscriptions/{theirs['id']}", headers=B).status_code == 200


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer lxp_wrong"}, {"X-API-Key": "nope"},
                                     {"Authorization": f"Basic {KEY_A}"}])
def test_401_without_a_valid_key(client, headers):
    calls = [("post", "/subscriptions", {"json": {"url": "https://x.example.com", "act": "pl:kc"}}),
             ("get", "/subscriptions", {}), ("get", "/subscriptions/sub_x", {}), ("delete", "/subscriptions/sub_x", {}),
             ("get", "/subscriptions/sub_x/dead-letters", {}), ("get", "/events/evt_x", {}),
             ("post", "/events/evt_x/redeliver", {})]
    for method, path, kw in calls:
        r = getattr(client, method)(path, headers=headers, **kw)
        assert r.status_code == 401, (method, path, r.text)
        assert r.headers["WWW-Authenticate"] == "Bearer"
    assert client.get("/changes").status_code == 200  # reads stay open


def test_no_configured_keys_refuses_every_write(layout):
    c = TestClient(create_app(layout=layout, settings=Settings(home=layout.home)))
    assert c.get("/subscriptions", headers=A).status_code == 401


@pytest.mark.parametrize("body,message", [
    ({"act": "pl:kc", "url": "ftp://x.example.com"}, "http(s) URL"),
    ({"act": "pl:xx"}, "unknown act"),
    ({}, "act_id must look like"),
    ({"unit_id": "kc415"}, "unit_id must look like"),
    ({"unit_id": "pl:kc:art:415", "query": "najem"}, "not both"),
    ({"act": "pl:kc", "k": 3}, "query subscription only"),
    ({"act": "pl:kc", "secret": "short"}, "at least 16"),
    ({"act": "pl:kc", "k": 500, "query": "x"}, "less than or equal to 100"),
    ({"act": "pl:kc", "owner": "someone-else"}, "Extra inputs"),
    ({"act": "pl:kc", "retriever": "grep", "query": "x"}, "Input should be"),
])
def test_422_for_bad_bodies(client, body, message):
    r = client.post("/subscriptions", json={"url": "https://hooks.example.com/lex", **body}, headers=A)
    assert r.status_code == 422 and message in r.text, r.text


@pytest.mark.parametrize("url", [
    "http://10.1.2.3/hook", "http://192.168.0.1/hook", "http://169.254.169.254/latest/meta-data",
    "http://[::1]/hook", "http://0.0.0.0/hook", "http://127.0.0.2:8080/hook", "http://localhost/hook",
    "http://metadata.google.internal/computeMetadata/v1/", "http://[::ffff:10.0.0.1]/hook",
])
def test_private_urls_are_refused(client, url):
    r = client.post("/subscriptions", json={"url": url, "act": "pl:kc"}, headers=A)
    assert r.status_code == 422 and ("public address" in r.json()["detail"]), r.text


def test_a_name_resolving_to_a_private_address_is_refused(layout):
    settings = Settings(home=layout.home, api_key_hashes=DIGEST_A)
    c = TestClient(create_app(layout=layout, settings=settings, resolve=lambda host: ["10.0.0.7"]))
    r = c.post("/subscriptions", json={"url": "https://internal.example.com/x", "act": "pl:kc"}, headers=A)
    assert r.status_code == 422 and "10.0.0.7" in r.json()["detail"]


def test_the_allowed_loopback_address(client):
    assert create(client, act="pl:kc", url="http://127.0.0.1:9999/hook")["url"] == "http://127.0.0.1:9999/hook"


def _dead_event(layout: Layout, sub: dict, url: str) -> str:
    outbox = Outbox(layout)
    try:
        ev = Event(id="evt_test1", subscription_id=sub["id"], type="publication", act_id="pl:kc",
                   from_version="2024-12-19", to_version="2025-11-13", url=url,
                   created_at=dt.datetime.now(dt.timezone.utc).isoformat(), payload={"hello": "world"})
        outbox.add([ev], now=time.time())
        n = outbox.start_attempt(ev.id, started_at=time.time())
        outbox.finish_attempt(ev.id, n, outcome="dead", duration_ms=3.0, status_code=410, error=None, now=time.time())
    finally:
        outbox.close()
    return ev.id


def test_dead_letters_status_and_redelivery(client, layout, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = f"http://127.0.0.1:{httpserver.port}/hook"
    sub = create(client, act="pl:kc", url=url)
    event_id = _dead_event(layout, sub, url)
    dead = client.get(f"/subscriptions/{sub['id']}/dead-letters", headers=A).json()
    assert [e["id"] for e in dead] == [event_id] and dead[0]["status"] == "dead" and dead[0]["last_status"] == 410
    status = client.get(f"/events/{event_id}", headers=A).json()
    assert status["event"]["status"] == "dead" and [a["outcome"] for a in status["attempts"]] == ["dead"]
    assert client.get(f"/events/{event_id}", headers=B).status_code == 404  # another key's event
    assert client.post(f"/events/{event_id}/redeliver", headers=B).status_code == 404
    r = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "delivered", r.text
    assert len(httpserver.log) == 1
    again = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert again.status_code == 409 and "not dead-lettered" in again.json()["detail"]
    assert client.get("/events/evt_missing", headers=A).status_code == 404
    assert client.get(f"/subscriptions/{sub['id']}/dead-letters", headers=A).json() == []


def test_a_failed_redelivery_is_answered_at_once_and_left_pending(client, layout, httpserver):
    httpserver.expect_request("/down", method="POST").respond_with_data("busy", status=503)
    url = f"http://127.0.0.1:{httpserver.port}/down"
    sub = create(client, act="pl:kc", url=url)
    event_id = _dead_event(layout, sub, url)
    started = time.monotonic()
    r = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "pending" and r.json()["next_attempt_at"], r.text
    assert time.monotonic() - started < 5  # no waiting for the retry inside the request
    attempts = client.get(f"/events/{event_id}", headers=A).json()["attempts"]
    assert [(a["status_code"], a["outcome"]) for a in attempts] == [(410, "dead"), (503, "retry")]
