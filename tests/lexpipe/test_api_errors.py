"""No input makes the read endpoints answer 500: random unit ids, dates, act ids and version names
get 200, 404 or 422 with a message. (The TestClient re-raises any server error, so a crash fails
the test rather than hiding in a status code.) An unexpected error is logged and answered 500."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lexpipe.api import create_app
from pipelines.reads import ReadService


@pytest.fixture(scope="module")
def client(corpus_home: Path) -> TestClient:
    return TestClient(create_app(reads=ReadService.at(corpus_home)))


text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#"), min_size=1, max_size=60)
ids = st.one_of(text, st.builds(lambda a, b: f"pl:kc:{a}:{b}", st.sampled_from(["art", "par", "book", "x"]), text),
                st.builds(lambda n, s: f"pl:kc:art:{n}:par:{s}", st.integers(-5, 2000), text))
dates = st.one_of(st.none(), text, st.dates().map(str), st.sampled_from(["2024-12-19", "2025-11-13", "9999-12-31",
                                                                       "0001-01-01", "2024-02-30"]))


def check(r, *also: int) -> None:
    assert r.status_code in (200, 404, 422, *also), (r.status_code, r.text)
    if r.status_code != 200:
        body = r.json()
        assert body.get("detail"), body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unit_id=ids, as_of=dates)
def test_units_never_fail(client, unit_id, as_of):
    check(client.get(f"/units/{quote(unit_id, safe=':^')}", params={} if as_of is None else {"as_of": as_of}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(act=st.one_of(text, st.sampled_from(["pl:kc", "pl:kk", "de:bgb"])), a=dates, b=dates)
def test_acts_never_fail(client, act, a, b):
    act = quote(act, safe=":")
    check(client.get(f"/acts/{act}/toc", params={} if a is None else {"as_of": a}))
    check(client.get(f"/acts/{act}/diff", params={k: v for k, v in (("from", a), ("to", b)) if v is not None}))
    check(client.get(f"/acts/{act}/versions/{quote(a or 'x', safe='')}/download",
                     headers={"Range": f"bytes={b}"} if b and b.isascii() and b.isprintable() else {}),
          206, 416)  # a held version with a Range: the part, or a malformed/unsatisfiable range (documented)


def test_units_history_never_fails(client):
    for unit_id in ("pl:kc", "pl:kc:", "::", "pl:kc:art:", "pl:kc:art:1:par:", "x" * 300, "pl:kc:art:" + "9" * 200):
        check(client.get(f"/units/{unit_id}/history"))
        check(client.get(f"/units/{unit_id}"))


def test_an_unexpected_error_is_a_logged_500(corpus_home, caplog):
    reads = ReadService.at(corpus_home)

    def broken(*_a, **_k):
        raise RuntimeError("disk on fire")

    reads.unit = broken
    r = TestClient(create_app(reads=reads), raise_server_exceptions=False).get("/units/pl:kc:art:1")
    assert r.status_code == 500 and r.json() == {"status": 500, "field": None, "message": "internal error (logged)",
                                                 "detail": "internal error (logged)"}
    assert "disk on fire" not in r.text and "unexpected error answering GET /units/pl:kc:art:1" in caplog.text


@pytest.mark.parametrize("path", ["/search", "/citations/resolve"])
@pytest.mark.parametrize("content,message", [
    (b'{"q": "\xff\xfe umowa", "text": "\xff"}', "not valid JSON in UTF-8"),  # the issue: 400 in another shape
    (b'{"q": ', "not valid JSON"),
])
def test_a_body_that_is_not_json_or_not_utf8_is_422_in_the_one_shape(client, path, content, message):
    r = client.post(path, content=content, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["field"] == "body" and message in r.json()["message"], r.text
    assert set(r.json()) == {"status", "field", "message", "detail"}


@pytest.mark.parametrize("method,path,allow", [
    ("DELETE", "/search", "GET, POST"), ("PUT", "/search", "GET, POST"), ("OPTIONS", "/search", "GET, POST"),
    ("PATCH", "/subscriptions", "GET, POST"), ("PUT", "/subscriptions/sub_" + "0" * 24, "DELETE, GET"),
    ("POST", "/units/pl:kc:art:1", "GET"), ("DELETE", "/changes", "GET"),
])
def test_405_lists_every_method_the_path_has(client, method, path, allow):
    """The issue: a 405 whose Allow header listed one method (/search has GET and POST)."""
    r = client.request(method, path)
    assert r.status_code == 405 and r.headers["allow"] == allow, (r.status_code, r.headers.get("allow"))
    assert r.json()["status"] == 405 and allow in r.json()["message"]


def test_an_unknown_path_is_404_in_the_one_shape(client):
    r = client.get("/nothing/here")
    assert r.status_code == 404 and r.json() == {"status": 404, "field": None, "message": r.json()["message"],
                                                 "detail": r.json()["message"]}
