"""The API's hardening: rate limits (429 + Retry-After, an injected clock: no sleeps), the body size
limit (413), CORS only when configured, API keys as digests compared in constant time and never in a
log line (the app's, uvicorn's access and error logs), the ``lexpipe api-key`` helper."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from core.layout import Layout
from core.settings import Settings
from lexpipe.api import create_app
from lexpipe.api.security import KeyRing, TokenBuckets, hash_key, new_key
from lexpipe.cli import main

KEY, DIGEST = new_key()
AUTH = {"Authorization": f"Bearer {KEY}"}


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def app_for(tmp_path: Path, clock=None, **api):
    layout = Layout(tmp_path / "home")
    settings = Settings(home=layout.home, api_key_hashes=DIGEST, **api)
    return create_app(layout=layout, settings=settings, clock=clock, resolve=lambda host: ["93.184.215.14"])


def test_writes_are_rate_limited_per_key_with_retry_after(tmp_path):
    clock = Clock()
    c = TestClient(app_for(tmp_path, clock, api_rate_write_burst=3, api_rate_write_per_s=0.25))
    assert [c.get("/subscriptions", headers=AUTH).status_code for _ in range(3)] == [200] * 3
    r = c.get("/subscriptions", headers=AUTH)
    assert r.status_code == 429 and r.headers["Retry-After"] == "4" and "rate limit of writes" in r.json()["message"]
    assert r.json() == {"status": 429, "field": None, "message": r.json()["message"], "detail": r.json()["message"]}
    assert c.get("/changes").status_code == 200  # reads have their own bucket
    clock.t += 3.9
    assert c.get("/subscriptions", headers=AUTH).status_code == 429
    clock.t += 0.2
    assert c.get("/subscriptions", headers=AUTH).status_code == 200


def test_reads_without_a_key_are_rate_limited_per_address(tmp_path):
    clock = Clock()
    app = app_for(tmp_path, clock, api_rate_read_burst=2, api_rate_read_per_s=1)
    c = TestClient(app, client=("198.51.100.7", 40000))
    assert [c.get("/changes").status_code for _ in range(3)] == [200, 200, 429]
    assert c.get("/changes").headers["Retry-After"] == "1"
    assert TestClient(app, client=("198.51.100.8", 40000)).get("/changes").status_code == 200  # another address
    assert c.get("/changes", headers=AUTH).status_code == 200  # a valid key reads on its own bucket
    clock.t += 1
    assert c.get("/changes").status_code == 200


def test_bad_keys_from_an_address_never_throttle_a_valid_key_from_it(tmp_path):
    """The issue's repro: after 30 bad API keys from one address a valid key from the same address got
    429, even on GET /subscriptions. Failed authentication now has a bucket of its own."""
    clock = Clock()
    app = app_for(tmp_path, clock)  # the defaults: 30 failed authentications at once, then one every 2 s
    c = TestClient(app, client=("203.0.113.5", 40000))
    codes = [c.get("/subscriptions", headers={"Authorization": f"Bearer lxp_guess{i}"}).status_code
             for i in range(31)]
    assert codes == [401] * 30 + [429]  # guessing is throttled …
    r = c.get("/subscriptions", headers={"X-API-Key": "lxp_guess-again"})
    assert r.status_code == 429 and "without a valid API key" in r.json()["message"]
    assert c.post("/subscriptions", json={"url": "https://hooks.example.com/x", "act": "pl:kc"}).status_code == 429
    # … but the valid key from the same address is served, writes and reads, and so are anonymous reads
    assert c.get("/subscriptions", headers=AUTH).status_code == 200
    assert c.post("/subscriptions", json={"url": "https://hooks.example.com/x", "act": "pl:kc"},
                  headers=AUTH).status_code == 201
    assert c.get("/changes", headers=AUTH).status_code == 200
    assert c.get("/changes").status_code == 200
    clock.t += 2  # the failed-authentication bucket refills like any other
    assert c.get("/subscriptions", headers={"Authorization": "Bearer lxp_guess"}).status_code == 401


def test_a_valid_keys_limit_is_per_key_across_addresses(tmp_path):
    clock = Clock()
    other, other_digest = new_key()
    layout = Layout(tmp_path / "home")
    app = create_app(layout=layout, clock=clock, settings=Settings(
        home=layout.home, api_key_hashes=f"{DIGEST},{other_digest}", api_rate_write_burst=2,
        api_rate_write_per_s=0.1))
    a = TestClient(app, client=("192.0.2.1", 1000))
    b = TestClient(app, client=("192.0.2.2", 1000))
    assert a.get("/subscriptions", headers=AUTH).status_code == 200
    assert b.get("/subscriptions", headers=AUTH).status_code == 200  # the same key from elsewhere: same bucket
    assert a.get("/subscriptions", headers=AUTH).status_code == 429
    assert b.get("/subscriptions", headers=AUTH).status_code == 429
    # another key, from the same addresses, has its own limit
    assert [a.get("/subscriptions", headers={"X-API-Key": other}).status_code for _ in range(3)] == [200, 200, 429]


def test_per_key_bucket_across_client_addresses():
    clock = Clock()
    buckets = TokenBuckets(rate=1.0, burst=2, clock=clock)
    assert [buckets.take("key:a") for _ in range(3)] == [0.0, 0.0, 1.0]
    assert buckets.take("key:b") == 0.0
    clock.t += 0.5
    assert buckets.take("key:a") == pytest.approx(0.5)


def test_a_large_body_is_413(tmp_path):
    c = TestClient(app_for(tmp_path, api_max_body_bytes=1024))
    big = {"url": "https://hooks.example.com/x", "act": "pl:kc", "description": "x" * 2000}
    r = c.post("/subscriptions", json=big, headers=AUTH)
    assert r.status_code == 413 and "1024 bytes" in r.json()["detail"]
    r = c.post("/search", json={"q": "x" * 2000})
    assert r.status_code == 413

    def chunks():  # no Content-Length: counted while read
        yield b'{"q": "'
        for _ in range(10):
            yield b"y" * 200
        yield b'"}'

    r = c.post("/subscriptions", content=chunks(), headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 413, r.text
    assert c.post("/subscriptions", json={"url": "https://hooks.example.com/x", "act": "pl:kc"},
                  headers=AUTH).status_code == 201


def test_cors_only_when_configured(tmp_path):
    plain = TestClient(app_for(tmp_path))
    r = plain.get("/changes", headers={"Origin": "https://app.example.org"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    r = plain.options("/subscriptions", headers={"Origin": "https://app.example.org",
                                                 "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers

    cors = TestClient(app_for(tmp_path, api_cors_origins="https://app.example.org"))
    r = cors.get("/changes", headers={"Origin": "https://app.example.org"})
    assert r.headers["access-control-allow-origin"] == "https://app.example.org"
    r = cors.options("/subscriptions", headers={"Origin": "https://app.example.org",
                                                "Access-Control-Request-Method": "POST",
                                                "Access-Control-Request-Headers": "authorization,content-type"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://app.example.org"
    assert "authorization" in r.headers["access-control-allow-headers"].lower()
    r = cors.get("/changes", headers={"Origin": "https://evil.example.net"})
    assert "access-control-allow-origin" not in r.headers


def test_keys_are_digests_compared_as_such(tmp_path):
    ring = KeyRing([hash_key("k1"), hash_key("k2")])
    assert ring.owner("k2") == hash_key("k2") and ring.owner("k3") is None and ring.owner("") is None
    with pytest.raises(ValueError, match="64 hex"):
        create_app(layout=Layout(tmp_path / "h"), settings=Settings(home=tmp_path / "h", api_key_hashes="my-key"))
    keys = tmp_path / "keys.txt"
    other, other_digest = new_key()
    keys.write_text(f"# ops team\nsha256:{other_digest}\n")
    c = TestClient(create_app(layout=Layout(tmp_path / "h"), settings=Settings(home=tmp_path / "h",
                                                                               api_key_hashes_file=keys)))
    assert c.get("/subscriptions", headers={"X-API-Key": other}).status_code == 200
    assert c.get("/subscriptions", headers=AUTH).status_code == 401


def test_api_key_cli(capsys):
    assert main(["api-key"]) == 0
    out = capsys.readouterr().out
    key = out.split("key:")[1].split()[0]
    digest = out.split("sha256:")[1].split()[0]
    assert key.startswith("lxp_") and len(key) > 40 and hash_key(key) == digest


def test_an_unexpected_error_is_logged_without_the_key(tmp_path, caplog, monkeypatch):
    from pipelines.subscriptions import store

    def broken(*a, **kw):
        raise RuntimeError("the store broke")

    monkeypatch.setattr(store, "list_subscriptions", broken)
    c = TestClient(app_for(tmp_path), raise_server_exceptions=False)
    with caplog.at_level(logging.DEBUG):
        r = c.get("/subscriptions", headers=AUTH)
        c.get("/subscriptions", headers={"X-API-Key": KEY + "x"})
    assert r.status_code == 500 and KEY not in r.text
    assert "the store broke" in caplog.text and KEY not in caplog.text and DIGEST not in caplog.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_keys_never_reach_uvicorn_access_or_error_logs(tmp_path, caplog):
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(app_for(tmp_path), host="127.0.0.1", port=port, log_config=None, log_level="debug",
                            access_log=True, lifespan="off")
    server = uvicorn.Server(config)
    with caplog.at_level(logging.DEBUG):
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            for _ in range(200):
                if server.started:
                    break
                time.sleep(0.02)
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=5) as h:
                assert h.post("/subscriptions", json={"url": "https://hooks.example.com/x", "act": "pl:kc"},
                              headers=AUTH).status_code == 201
                assert h.get("/subscriptions", headers={"X-API-Key": KEY}).status_code == 200
                assert h.get("/subscriptions", headers={"Authorization": f"Bearer {KEY}z"}).status_code == 401
                assert h.get("/events/evt_" + "0" * 32, headers=AUTH).status_code == 404
        finally:
            server.should_exit = True
            thread.join(10)
    access = [r for r in caplog.records if r.name == "uvicorn.access"]
    assert len(access) >= 4  # the access log was on
    assert KEY not in caplog.text and DIGEST not in caplog.text
