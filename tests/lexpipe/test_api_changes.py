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


@pytest.mark.parametrize("params,message", [
    ({"since": "yesterday"}, "ISO 8601"), ({"act": "KC"}, "act must look like"),
])
def test_bad_parameters_are_400(client, params, message):
    r = client.get("/changes", params=params)
    assert r.status_code == 400 and message in r.json()["detail"]


def test_a_tampered_cursor_is_400(client):
    cursor = client.get("/changes", params={"limit": 1}).json()["next_cursor"]
    head, body, check = cursor.split(".")
    for bad in (cursor[:-3], f"{head}.{body[:-2]}AA.{check}", cursor + "x"):
        for path in ("/changes", "/changes.atom"):
            r = client.get(path, params={"since": bad})
            assert r.status_code == 400 and "invalid cursor" in r.json()["detail"], (bad, r.text)


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
    assert client.get("/changes/kc/2020-01-01").status_code == 400
