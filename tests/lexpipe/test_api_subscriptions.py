"""``/subscriptions`` and ``/events``: create/list/get/delete scoped to the API key that created them,
the secret shown only at creation, 401 without a valid key, 422 for malformed bodies, 404 for an unknown
act or unit, 403 for private URLs, dead letters, event status, redelivery of dead and stuck pending
events, and the signed test event, to a local receiver (pytest-httpserver on 127.0.0.1, allowed by the
test settings). Every refusal has the one error shape."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import shutil
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.layout import Layout
from core.settings import Settings
from lexpipe.api import create_app
from lexpipe.api.security import new_key
from pipelines.reads import ReadService
from pipelines.subscriptions.events import Event
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.signing import verify

KEY_A, DIGEST_A = new_key()
KEY_B, DIGEST_B = new_key()
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"X-API-Key": KEY_B}


@pytest.fixture
def layout(corpus_home: Path, tmp_path: Path) -> Layout:
    """A writable copy of the published Civil Code: unit subscriptions are checked against it."""
    shutil.copytree(corpus_home / "corpus", tmp_path / "home" / "corpus", symlinks=True)
    return Layout(tmp_path / "home")


def settings_for(layout: Layout, **over) -> Settings:
    return Settings(**{"home": layout.home, "api_key_hashes": f"{DIGEST_A},{DIGEST_B}",
                       "api_webhook_allow_networks": "127.0.0.1", "webhook_timeout_s": 10.0, **over})


@pytest.fixture
def client(layout: Layout) -> TestClient:
    return TestClient(create_app(layout=layout, reads=ReadService.at(layout.home), settings=settings_for(layout),
                                 resolve=lambda host: ["93.184.215.14"]))


def refused(r, status: int, field: str | None, fragment: str) -> None:
    """The one error shape: status, field, message (and detail, the same message)."""
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"status", "field", "message", "detail"}, body
    assert body["status"] == status and body["field"] == field and body["detail"] == body["message"], body
    assert fragment in body["message"], body


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


SUB_X, EVT_X = "sub_" + "0" * 24, "evt_" + "0" * 32


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer lxp_wrong"}, {"X-API-Key": "nope"},
                                     {"Authorization": f"Basic {KEY_A}"}])
def test_401_without_a_valid_key(client, headers):
    calls = [("post", "/subscriptions", {"json": {"url": "https://x.example.com", "act": "pl:kc"}}),
             ("get", "/subscriptions", {}), ("get", f"/subscriptions/{SUB_X}", {}),
             ("delete", f"/subscriptions/{SUB_X}", {}), ("post", f"/subscriptions/{SUB_X}/test", {}),
             ("get", f"/subscriptions/{SUB_X}/dead-letters", {}), ("get", f"/events/{EVT_X}", {}),
             ("post", f"/events/{EVT_X}/redeliver", {}), ("get", "/subscriptions/not-an-id", {})]
    for method, path, kw in calls:
        r = getattr(client, method)(path, headers=headers, **kw)
        refused(r, 401, "Authorization", "API key")
        assert r.headers["WWW-Authenticate"] == "Bearer"
    assert client.get("/changes").status_code == 200  # reads stay open


def test_no_configured_keys_refuses_every_write(layout):
    c = TestClient(create_app(layout=layout, settings=Settings(home=layout.home)))
    assert c.get("/subscriptions", headers=A).status_code == 401


@pytest.mark.parametrize("body,field,message", [
    ({"act": "pl:kc", "url": "ftp://x.example.com"}, "url", "http(s) URL"),
    ({"act": "pl:kc", "url": "https://user:pass@hooks.example.com/lex"}, "url", "must not carry credentials"),
    ({"act": "pl:kc", "url": "https://hooks.example.com/lex#top"}, "url", "#fragment"),
    ({"act": "pl:kc", "url": "https://hooks.example.com:99999/lex"}, "url", "not a URL"),
    ({"act": "pl:kc", "url": "http://[::1]/hook"}, "url", "IPv4"),
    ({}, "act", "act is required"),
    ({"act": "PL:KC"}, "act", "an act id like pl:kc"),
    ({"unit_id": "kc415"}, "unit_id", "a unit id like pl:kc:art:415"),
    ({"unit_id": "pl:kc:art:415", "query": "najem"}, "query", "unit_id alone"),
    ({"unit_id": "pl:kc:art:415", "act": "pl:kc"}, "act", "unit_id alone"),
    ({"query": "najem"}, "act", "act is required with a query"),
    ({"act": "pl:kc", "k": 3}, "k", "query subscription only"),
    ({"act": "pl:kc", "retriever": "bm25"}, "retriever", "query subscription only"),
    ({"act": "pl:kc", "query": "   "}, "query", "nothing to search for"),
    ({"act": "pl:kc", "secret": "short"}, "secret", "16 to 256 characters"),
    ({"act": "pl:kc", "k": 500, "query": "x"}, "k", "less than or equal to 100"),
    ({"act": "pl:kc", "owner": "someone-else"}, "owner", "Extra inputs"),
    ({"act": "pl:kc", "retriever": "grep", "query": "x"}, "retriever", "Input should be"),
    ({"act": "pl:kc", "description": None}, "description", "null is not a value"),
])
def test_422_for_malformed_bodies(client, body, field, message):
    r = client.post("/subscriptions", json={"url": "https://hooks.example.com/lex", **body}, headers=A)
    refused(r, 422, field, message)
    assert client.get("/subscriptions", headers=A).json() == []


@pytest.mark.parametrize("body,field,message", [
    ({"act": "pl:xx"}, "act", "unknown act 'pl:xx'"),
    ({"unit_id": "pl:kc:art:99999"}, "unit_id", "unknown unit 'pl:kc:art:99999': no held version of pl:kc"),
    ({"unit_id": "pl:kc:art:415:par:7"}, "unit_id", "no held version of pl:kc"),
    ({"unit_id": "pl:xx:art:1"}, "unit_id", "unknown act 'pl:xx'"),
])
def test_404_for_an_act_or_unit_that_is_not_there(client, body, field, message):
    r = client.post("/subscriptions", json={"url": "https://hooks.example.com/lex", **body}, headers=A)
    refused(r, 404, field, message)
    refused(client.get("/subscriptions", params={"act": "pl:xx"}, headers=A), 404, "act", "unknown act 'pl:xx'")


@pytest.mark.parametrize("url", [
    "http://10.1.2.3/hook", "http://192.168.0.1/hook", "http://169.254.169.254/latest/meta-data",
    "http://0.0.0.0/hook", "http://127.0.0.2:8080/hook", "http://localhost/hook",
    "http://metadata.google.internal/computeMetadata/v1/",
])
def test_private_urls_are_refused(client, url):
    r = client.post("/subscriptions", json={"url": url, "act": "pl:kc"}, headers=A)
    refused(r, 403, "url", "public address")


def test_a_name_resolving_to_a_private_address_is_refused(layout):
    c = TestClient(create_app(layout=layout, settings=settings_for(layout, api_webhook_allow_networks=""),
                              resolve=lambda host: ["10.0.0.7"]))
    r = c.post("/subscriptions", json={"url": "https://internal.example.com/x", "act": "pl:kc"}, headers=A)
    refused(r, 403, "url", "10.0.0.7")


def test_a_name_that_does_not_resolve_is_404(layout):
    def nxdomain(host):
        raise OSError("Name or service not known")

    c = TestClient(create_app(layout=layout, settings=settings_for(layout), resolve=nxdomain))
    r = c.post("/subscriptions", json={"url": "https://gone.example.com/x", "act": "pl:kc"}, headers=A)
    refused(r, 404, "url", "does not resolve")


def test_the_allowed_loopback_address(client):
    assert create(client, act="pl:kc", url="http://127.0.0.1:9999/hook")["url"] == "http://127.0.0.1:9999/hook"


def _event(layout: Layout, sub: dict, url: str, *, dead: bool = True, leased_for: float | None = None) -> str:
    """An event of ``sub`` in the outbox: dead-lettered after a 410, or (``dead=False``) pending and
    claimed by a sender that died (``leased_for``: its lease's remaining seconds; negative: expired)."""
    outbox = Outbox(layout)
    try:
        ev = Event(id="evt_" + secrets.token_hex(16), subscription_id=sub["id"], type="act.changed", act_id="pl:kc",
                   from_version="2024-12-19", to_version="2025-11-13", url=url,
                   created_at=dt.datetime.now(dt.timezone.utc).isoformat(), payload={"hello": "world"})
        outbox.add([ev], now=time.time() - 600)
        if dead:
            n = outbox.start_attempt(ev.id, started_at=time.time())
            outbox.finish_attempt(ev.id, n, outcome="dead", duration_ms=3.0, status_code=410, error=None,
                                  now=time.time())
        else:  # the crash: claimed and logged in flight, never recorded
            lease = 40.0
            claimed_at = time.time() - lease + (leased_for if leased_for is not None else -60.0)
            assert outbox.claim(now=claimed_at, lease_s=lease, ids=[ev.id]) is not None
            outbox.start_attempt(ev.id, started_at=claimed_at)
    finally:
        outbox.close()
    return ev.id


def test_dead_letters_status_and_redelivery(client, layout, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = f"http://127.0.0.1:{httpserver.port}/hook"
    sub = create(client, act="pl:kc", url=url)
    event_id = _event(layout, sub, url)
    dead = client.get(f"/subscriptions/{sub['id']}/dead-letters", headers=A).json()
    assert [e["id"] for e in dead] == [event_id] and dead[0]["status"] == "dead" and dead[0]["last_status"] == 410
    status = client.get(f"/events/{event_id}", headers=A).json()
    assert status["event"]["status"] == "dead" and [a["outcome"] for a in status["attempts"]] == ["dead"]
    refused(client.get(f"/events/{event_id}", headers=B), 404, "event_id", "no event")  # another key's event
    refused(client.post(f"/events/{event_id}/redeliver", headers=B), 404, "event_id", "no event")
    r = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "delivered", r.text
    assert len(httpserver.log) == 1
    refused(client.post(f"/events/{event_id}/redeliver", headers=A), 409, "event_id", "was delivered")
    refused(client.get(f"/events/evt_{'f' * 32}", headers=A), 404, "event_id", "no event")
    refused(client.get("/events/evt_missing", headers=A), 422, "event_id", "an event id like evt_")
    assert client.get(f"/subscriptions/{sub['id']}/dead-letters", headers=A).json() == []


def test_a_failed_redelivery_is_answered_at_once_and_left_pending(client, layout, httpserver):
    httpserver.expect_request("/down", method="POST").respond_with_data("busy", status=503)
    url = f"http://127.0.0.1:{httpserver.port}/down"
    sub = create(client, act="pl:kc", url=url)
    event_id = _event(layout, sub, url)
    started = time.monotonic()
    r = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "pending" and r.json()["next_attempt_at"], r.text
    assert time.monotonic() - started < 5  # no waiting for the retry inside the request
    attempts = client.get(f"/events/{event_id}", headers=A).json()["attempts"]
    assert [(a["status_code"], a["outcome"]) for a in attempts] == [(410, "dead"), (503, "retry")]
    # pending, waiting for its backoff: redelivered now too (the issue: 409 "pending, not dead-lettered")
    httpserver.clear()
    httpserver.expect_request("/down", method="POST").respond_with_data("ok")
    r = client.post(f"/events/{event_id}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "delivered", r.text


def test_a_stuck_pending_event_left_by_a_crash_is_redelivered(client, layout, httpserver):
    """The server was killed during a redelivery: the event is pending, claimed, its attempt in flight.
    Once the lease expired, redeliver takes it over; before that it says who holds it, and for how long."""
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = f"http://127.0.0.1:{httpserver.port}/hook"
    sub = create(client, act="pl:kc", url=url)
    stuck = _event(layout, sub, url, dead=False, leased_for=-60)  # expired a minute ago
    r = client.post(f"/events/{stuck}/redeliver", headers=A)
    assert r.status_code == 200 and r.json()["status"] == "delivered", r.text
    attempts = client.get(f"/events/{stuck}", headers=A).json()["attempts"]
    assert [a["outcome"] for a in attempts] == ["interrupted", "delivered"]
    held = _event(layout, sub, url, dead=False, leased_for=25)  # a sender holds it for 25 s more
    r = client.post(f"/events/{held}/redeliver", headers=A)
    refused(r, 409, "event_id", "being sent right now")
    assert 20 <= int(r.headers["Retry-After"]) <= 26
    assert len(httpserver.log) == 1  # nothing was sent for the held one


def test_a_test_event_is_a_signed_ping(client, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = f"http://127.0.0.1:{httpserver.port}/hook"
    sub = create(client, act="pl:kc", url=url, secret="a-shared-secret-of-32-characters")
    r = client.post(f"/subscriptions/{sub['id']}/test", headers=A)
    assert r.status_code == 201, r.text
    ev = r.json()
    assert (ev["type"], ev["status"], ev["attempts"], ev["subscription_id"]) == ("ping", "delivered", 1, sub["id"])
    assert r.headers["Location"] == f"/events/{ev['id']}"
    (request, _), = httpserver.log
    body = request.get_data()
    assert verify("a-shared-secret-of-32-characters", dict(request.headers), body)
    assert request.headers["Lexpipe-Event-Type"] == "ping" and request.headers["Lexpipe-Event-Id"] == ev["id"]
    sent = json.loads(body)
    assert sent["type"] == "ping" and sent["subscription"]["id"] == sub["id"] and "no publication" in sent["message"]
    assert client.get(f"/events/{ev['id']}", headers=A).json()["event"]["status"] == "delivered"
    again = client.post(f"/subscriptions/{sub['id']}/test", headers=A).json()
    assert again["id"] != ev["id"]  # every ping is a new event
    refused(client.post(f"/subscriptions/{sub['id']}/test", headers=B), 404, "subscription_id", "no subscription")
