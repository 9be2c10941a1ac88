"""``/changes`` (JSON, paged by cursor), ``/changes.atom`` and ``/changes/{act}/{version}`` over the
real published k.c. (two versions): open reads, 400 for a bad or altered cursor, 404 for a version
that is not published."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.layout import Layout
from core.settings import Settings
from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def client(corpus_home: Path) -> TestClient:
    return TestClient(create_app(layout=Layout(corpus_home), settings=Settings()))  # the feed only reads


def test_the_feed_lists_both_publications_oldest_first(client):
    r = client.get("/changes")
    assert r.status_code == 200, r.text
    page = r.json()
    assert [(e["act_id"], e["version"]) for e in page["entries"]] == [("pl:kc", OLD), ("pl:kc", NEW)]
    first, second = page["entries"]
    assert first["first_version"] and first["from_version"] is None and first["changes"] == []
    assert second["from_version"] == OLD and second["counts"]["changed"] >= 1
    assert any(c["unit_id"] == "pl:kc:art:709^2" for c in second["changes"])
    assert page["has_more"] is False and page["next_cursor"] == second["cursor"]
    assert page["next"].endswith("since=" + second["cursor"]) and "Link" not in r.headers


def test_paging_by_cursor(client):
    r = client.get("/changes", params={"limit": 1})
    page = r.json()
    assert [e["version"] for e in page["entries"]] == [OLD] and page["has_more"]
    assert r.headers["Link"] == f'<{page["next"]}>; rel="next"'
    nxt = client.get(page["next"].removeprefix("http://testserver")).json()
    assert [e["version"] for e in nxt["entries"]] == [NEW] and not nxt["has_more"]
    after = client.get("/changes", params={"since": nxt["next_cursor"]}).json()
    assert after["entries"] == [] and after["next_cursor"] == nxt["next_cursor"]  # poll again with it


def test_since_a_timestamp_and_one_act(client):
    assert len(client.get("/changes", params={"since": "2000-01-01T00:00:00Z", "act": "pl:kc"}).json()["entries"]) == 2
    assert client.get("/changes", params={"since": "2999-01-01T00:00:00Z"}).json()["entries"] == []
    assert client.get("/changes", params={"act": "de:bgb"}).json()["entries"] == []


@pytest.mark.parametrize("params,status,field,message", [
    ({"since": "yesterday"}, 422, "since", "RFC 3339 timestamp"),
    ({"since": "2025-02-30"}, 422, "since", "RFC 3339 timestamp"),
    ({"act": "KC"}, 422, "act", "an act id like pl:kc"),
    ({"act": "pl:zz"}, 404, "act", "unknown act 'pl:zz'"),  # the issue: 200 with an empty page
])
def test_bad_parameters(client, params, status, field, message):
    for path in ("/changes", "/changes.atom"):
        r = client.get(path, params=params)
        assert r.status_code == status and r.json()["field"] == field and message in r.json()["message"], r.text


def test_since_empty_or_a_date_or_any_rfc_3339_timestamp(client):
    every = client.get("/changes").json()["entries"]
    assert client.get("/changes", params={"since": ""}).json()["entries"] == every
    assert client.get("/changes", params={"since": "2000-01-01"}).json()["entries"] == every
    assert client.get("/changes", params={"since": "2000-01-01t00:00:00.123456789+02:00"}).json()["entries"] == every


def test_a_tampered_cursor_is_404(client):
    """A cursor shaped like one but not issued by the feed names no position: 404 (a malformed one 422)."""
    cursor = client.get("/changes", params={"limit": 1}).json()["next_cursor"]
    head, body, check = cursor.split(".")
    for bad in (f"{head}.{body[:-2]}AA.{check}", f"{head}.{body}.{check[:-2]}AA"):
        for path in ("/changes", "/changes.atom"):
            r = client.get(path, params={"since": bad})
            assert r.status_code == 404 and "invalid cursor" in r.json()["message"], (bad, r.text)
    for bad in (cursor[:-3], cursor + "x"):
        r = client.get("/changes", params={"since": bad})
        assert r.status_code == 422 and r.json()["field"] == "since", (bad, r.text)


def test_limit_out_of_range_is_422(client):
    assert client.get("/changes", params={"limit": 0}).status_code == 422
    assert client.get("/changes", params={"limit": 501}).status_code == 422


def test_atom(client):
    r = client.get("/changes.atom")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
    feed = ET.fromstring(r.content)
    entries = feed.findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}title").text.split()[1] for e in entries] == [NEW, OLD]  # newest first
    link = entries[0].find(f"{ATOM}link").get("href")
    assert link == f"http://testserver/changes/pl:kc/{NEW}"
    paged = ET.fromstring(client.get("/changes.atom", params={"since": "2000-01-01T00:00:00Z", "limit": 1}).content)
    nxt = [li.get("href") for li in paged.findall(f"{ATOM}link") if li.get("rel") == "next"]
    assert nxt and "since=c1." in nxt[0]


def test_one_publication_and_404s(client):
    r = client.get(f"/changes/pl:kc/{NEW}")
    assert r.status_code == 200 and r.json()["from_version"] == OLD and r.json()["version"] == NEW
    for path in ("/changes/pl:kc/2020-01-01", "/changes/de:bgb/2024-11-28"):
        r = client.get(path)
        assert r.status_code == 404 and "not published" in r.json()["detail"]
    assert client.get("/changes/kc/2020-01-01").status_code == 422
    r = client.get("/changes/pl:kc/2025-02-30")  # the issue: 404 "not published"
    assert (r.status_code, r.json()["field"]) == (422, "version") and "real date" in r.json()["message"]
    r = client.get("/changes/pl:zz/2025-11-13")
    assert (r.status_code, r.json()["field"]) == (404, "act")
