"""PoliteHttpClient against a real local HTTP server (pytest-httpserver / raw sockets)."""

from __future__ import annotations

import json
import logging
import random
import socket
import struct
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from connectors.http import (HttpFetchError, PoliteHttpClient, RateLimiter, TruncatedBodyError,
                             parse_retry_after)

BODY = b"%PDF-1.7\n" + b"x" * 5000 + b"\n%%EOF\n"


def make_client(tmp_path: Path, sleeps: list[float] | None = None, **kw: Any) -> PoliteHttpClient:
    opts: dict[str, Any] = dict(user_agent="lexpipe-tests/0 (+https://example.invalid)",
                                timeout_s=2.0, max_retries=3, backoff_base_s=0.5,
                                backoff_max_s=8.0, min_interval_s=0.0,
                                cache_path=tmp_path / "http_cache.json",
                                sleep=(sleeps.append if sleeps is not None else lambda s: None),
                                rng=random.Random(7))
    opts.update(kw)
    return PoliteHttpClient(**opts)


def sequence(*responses: Response | Callable[[Request], Response]) -> Callable[[Request], Response]:
    """A handler answering successive requests with successive responses (last one repeats)."""
    calls = {"n": 0}

    def handler(request: Request) -> Response:
        item = responses[min(calls["n"], len(responses) - 1)]
        calls["n"] += 1
        return item(request) if callable(item) and not isinstance(item, Response) else item

    return handler


def truncated(body: bytes, declared: int) -> Response:
    """A response announcing ``declared`` bytes but sending only ``body`` (server then closes)."""
    resp = Response(body, content_type="application/pdf")
    resp.headers["Content-Length"] = str(declared)
    return resp


def raw_get(port: int, path: str) -> bytes:
    """What really goes over the wire (headers + body) until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


# -- happy path ---------------------------------------------------------------------------------


def test_get_returns_body_and_sends_user_agent(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_data(
        BODY, content_type="application/pdf", headers={"Set-Cookie": "session=abc"})
    with make_client(tmp_path) as client:
        res = client.get(httpserver.url_for("/doc.pdf"))
    assert (res.status, res.content, res.not_modified, res.attempts) == (200, BODY, False, 1)
    assert res.headers["content-type"] == "application/pdf"
    assert "set-cookie" not in res.headers
    request = httpserver.log[0][0]
    assert request.headers["User-Agent"].startswith("lexpipe-tests/0")


# -- retries ------------------------------------------------------------------------------------


def test_429_honours_retry_after_then_succeeds(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(sequence(
        Response("slow down", status=429, headers={"Retry-After": "3"}),
        Response(BODY, content_type="application/pdf")))
    sleeps: list[float] = []
    res = make_client(tmp_path, sleeps).get(httpserver.url_for("/doc.pdf"))
    assert res.content == BODY and res.attempts == 2
    assert sleeps == [3.0]
    assert len(httpserver.log) == 2


def test_retry_after_is_capped_by_backoff_max(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(sequence(
        Response("", status=503, headers={"Retry-After": "3600"}), Response(BODY)))
    sleeps: list[float] = []
    make_client(tmp_path, sleeps, backoff_max_s=8.0).get(httpserver.url_for("/doc.pdf"))
    assert sleeps == [8.0]


def test_parse_retry_after_seconds_and_http_date() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("7", now=now) == 7.0
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0  # past → now
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


def test_500_until_retries_exhausted_raises(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_data("boom", status=500)
    sleeps: list[float] = []
    url = httpserver.url_for("/doc.pdf")
    with pytest.raises(HttpFetchError) as err:
        make_client(tmp_path, sleeps, max_retries=2).get(url)
    assert (err.value.url, err.value.attempts, err.value.status) == (url, 3, 500)
    assert url in str(err.value) and "3 attempt" in str(err.value) and "500" in str(err.value)
    assert len(httpserver.log) == 3
    # exponential backoff with jitter in [cap/2, cap]: caps 0.5, 1.0
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


def test_404_is_not_retried(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/missing").respond_with_data("nope", status=404)
    with pytest.raises(HttpFetchError) as err:
        make_client(tmp_path).get(httpserver.url_for("/missing"))
    assert err.value.status == 404 and not err.value.retryable and err.value.attempts == 1
    assert len(httpserver.log) == 1


def test_truncated_body_is_retried_then_raises(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(
        lambda r: truncated(BODY[:1000], len(BODY)))
    wire = raw_get(httpserver.port, "/doc.pdf")
    head, _, body = wire.partition(b"\r\n\r\n")
    assert f"Content-Length: {len(BODY)}".encode() in head and len(body) == 1000  # really short
    httpserver.clear_log()

    sleeps: list[float] = []
    with pytest.raises(HttpFetchError) as err:
        make_client(tmp_path, sleeps, max_retries=1).get(httpserver.url_for("/doc.pdf"))
    assert err.value.status is None and "RemoteProtocolError" in err.value.reason
    assert err.value.attempts == 2 and len(httpserver.log) == 2 and len(sleeps) == 1


def test_truncated_body_then_complete_succeeds(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(sequence(
        truncated(BODY[:10], len(BODY)), Response(BODY)))
    res = make_client(tmp_path).get(httpserver.url_for("/doc.pdf"))
    assert res.content == BODY and res.attempts == 2


def test_content_length_mismatch_detected_without_h11(tmp_path: Path) -> None:
    """The explicit byte count check, for transports that do not police Content-Length."""
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Length": "99"}, content=b"short")

    with pytest.raises(HttpFetchError) as err:
        make_client(tmp_path, max_retries=0,
                    transport=httpx.MockTransport(handler)).get("http://example.invalid/x")
    assert TruncatedBodyError.__name__ in err.value.reason


def flaky_server(first: str) -> Iterator[tuple[int, list[str]]]:
    """Raw socket server: the first connection is reset ("reset") or never answered ("stall");
    the second one gets BODY. Raw sockets make the failure exact and independent of werkzeug."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    events: list[str] = []
    held: list[socket.socket] = []

    def serve() -> None:
        for i in range(2):
            conn, _ = srv.accept()
            conn.recv(65536)
            if i == 0 and first == "reset":
                events.append("reset")
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # linger 0 → RST
            elif i == 0:
                events.append("stalled")
                held.append(conn)  # keep it open, say nothing
            else:
                events.append("served")
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                             b"Connection: close\r\n\r\n" % len(BODY) + BODY)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1], events
    for conn in held:
        conn.close()
    srv.close()


@pytest.fixture
def resetting_server() -> Iterator[tuple[int, list[str]]]:
    yield from flaky_server("reset")


@pytest.fixture
def stalling_server() -> Iterator[tuple[int, list[str]]]:
    yield from flaky_server("stall")


def test_connection_reset_is_retried(resetting_server: tuple[int, list[str]],
                                     tmp_path: Path) -> None:
    port, events = resetting_server
    sleeps: list[float] = []
    res = make_client(tmp_path, sleeps).get(f"http://127.0.0.1:{port}/doc.pdf")
    assert res.content == BODY and res.attempts == 2
    assert events == ["reset", "served"] and len(sleeps) == 1


def test_read_timeout_is_retried(stalling_server: tuple[int, list[str]], tmp_path: Path) -> None:
    port, events = stalling_server
    sleeps: list[float] = []
    res = make_client(tmp_path, sleeps, timeout_s=0.2).get(f"http://127.0.0.1:{port}/doc.pdf")
    assert res.content == BODY and res.attempts == 2
    assert events == ["stalled", "served"] and len(sleeps) == 1


# -- conditional requests -----------------------------------------------------------------------


def etag_handler(etag: str) -> Callable[[Request], Response]:
    def handler(request: Request) -> Response:
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        return Response(BODY, headers={"ETag": etag})
    return handler


def test_etag_cached_and_304_reported_as_not_modified(httpserver: HTTPServer,
                                                      tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(etag_handler('"v1"'))
    url = httpserver.url_for("/doc.pdf")
    first = make_client(tmp_path).get(url)
    assert first.status == 200 and not first.not_modified
    cache = json.loads((tmp_path / "http_cache.json").read_text())
    assert cache[url]["etag"] == '"v1"'

    second = make_client(tmp_path).get(url)  # a new client: validators come from the file
    assert second.not_modified and second.status == 304 and second.content == b""
    assert "If-None-Match" not in httpserver.log[0][0].headers
    assert httpserver.log[1][0].headers["If-None-Match"] == '"v1"'


def test_last_modified_sent_as_if_modified_since(httpserver: HTTPServer, tmp_path: Path) -> None:
    lm = "Wed, 13 Nov 2025 10:00:00 GMT"
    httpserver.expect_request("/doc.pdf").respond_with_handler(sequence(
        Response(BODY, headers={"Last-Modified": lm}), Response(status=304)))
    client = make_client(tmp_path)
    client.get(httpserver.url_for("/doc.pdf"))
    assert client.get(httpserver.url_for("/doc.pdf")).not_modified
    assert httpserver.log[1][0].headers["If-Modified-Since"] == lm


def test_unconditional_get_sends_no_validators(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_handler(etag_handler('"v1"'))
    client = make_client(tmp_path)
    client.get(httpserver.url_for("/doc.pdf"))
    res = client.get(httpserver.url_for("/doc.pdf"), conditional=False)
    assert res.status == 200 and res.content == BODY
    assert "If-None-Match" not in httpserver.log[1][0].headers


def test_corrupt_cache_file_is_ignored(httpserver: HTTPServer, tmp_path: Path) -> None:
    (tmp_path / "http_cache.json").write_text("{not json")
    httpserver.expect_request("/doc.pdf").respond_with_handler(etag_handler('"v1"'))
    assert make_client(tmp_path).get(httpserver.url_for("/doc.pdf")).content == BODY
    assert json.loads((tmp_path / "http_cache.json").read_text())  # rewritten, valid


# -- rate limit ---------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_rate_limit_spaces_requests(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_data(BODY)
    clock = FakeClock()
    client = make_client(tmp_path, min_interval_s=1.5, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        client.get(httpserver.url_for("/doc.pdf"))
    assert clock.sleeps == [1.5, 1.5]
    clock.now += 10  # idle long enough: no wait
    client.get(httpserver.url_for("/doc.pdf"))
    assert clock.sleeps == [1.5, 1.5]
    assert len(httpserver.log) == 4


def test_rate_limiter_is_thread_safe() -> None:
    interval, n = 0.03, 8
    limiter = RateLimiter(interval)
    start = time.monotonic()
    times: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        limiter.wait()
        with lock:
            times.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # the k-th request to start may not start before k intervals have passed
    for k, t in enumerate(sorted(times)):
        assert t - start >= k * interval - 1e-3, (k, t - start)


# -- secrets ------------------------------------------------------------------------------------


def test_authorization_header_never_logged(httpserver: HTTPServer, tmp_path: Path,
                                           caplog: pytest.LogCaptureFixture) -> None:
    httpserver.expect_request("/doc.pdf").respond_with_data("boom", status=502)
    caplog.set_level(logging.DEBUG)  # includes httpx/httpcore debug logs
    client = make_client(tmp_path, max_retries=1,
                         default_headers={"Authorization": "Bearer SECRET-TOKEN"})
    with pytest.raises(HttpFetchError) as err:
        client.get(httpserver.url_for("/doc.pdf"))
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer SECRET-TOKEN"  # it was sent
    assert "retrying" in caplog.text
    assert "SECRET-TOKEN" not in caplog.text and "SECRET-TOKEN" not in str(err.value)


def test_url_credentials_redacted_in_errors(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500)

    client = make_client(tmp_path, max_retries=0, transport=httpx.MockTransport(handler))
    with pytest.raises(HttpFetchError) as err:
        client.get("http://user:PASSWORD@example.invalid/x")
    assert "PASSWORD" not in str(err.value) and "example.invalid/x" in str(err.value)
