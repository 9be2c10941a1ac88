"""The API client: the polite client's rate limit, the token (never logged, never retried when
refused) and the change probe."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from connectors.http import HttpFetchError, PoliteHttpClient
from connectors.openlegaldata import OldpPaths
from fake_openlegaldata import FakeOpenLegalData  # tests/, on sys.path via conftest
from oldp_helpers import TOKEN, make_sync


# -- politeness and secrets ---------------------------------------------------------------------


def test_rate_limit_spaces_requests(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                    tmp_path: Path) -> None:
    import time

    # gaps are seen by the server, so they carry scheduling jitter on a busy machine: a wide
    # interval with a half-interval floor (unthrottled requests arrive milliseconds apart)
    sync = make_sync(httpserver, tmp_path / "home", min_interval_s=0.2, sleep=time.sleep)
    sync.sync_cases()
    gaps = [b - a for a, b in zip(fake.request_times, fake.request_times[1:])]
    assert len(gaps) >= 5 and min(gaps) >= 0.1 and sum(gaps) / len(gaps) >= 0.19


def test_token_never_logged_and_wrong_token_not_retried(httpserver: HTTPServer,
                                                        fake: FakeOpenLegalData,
                                                        tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # includes httpx/httpcore debug logs
    good = make_sync(httpserver, tmp_path / "good")
    good.sync_cases()
    assert TOKEN not in caplog.text and TOKEN not in repr(good.api)
    for path in (tmp_path / "good").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path

    with pytest.raises(HttpFetchError) as err:
        make_sync(httpserver, tmp_path / "bad", token="wrong-SECRET-x").sync_cases()
    assert err.value.status == 401 and not err.value.retryable and err.value.attempts == 1
    assert "wrong-SECRET-x" not in caplog.text and "wrong-SECRET-x" not in str(err.value)
    assert not OldpPaths(tmp_path / "bad").cursor_path.exists()


# -- the change probe ---------------------------------------------------------------------------


@pytest.mark.parametrize("body,problem", [
    (b'{"results": []}', "has no count"),  # a page without its count cannot fingerprint the source
    (b"<html>maintenance</html>", "not a paginated JSON list"),  # an HTML error page
])
def test_probe_refuses_malformed_pages(httpserver: HTTPServer, body: bytes, problem: str) -> None:
    from connectors.openlegaldata import OpenLegalDataApi, OpenLegalDataError

    httpserver.expect_request("/api/cases/").respond_with_data(body, content_type="application/json")
    client = PoliteHttpClient(user_agent="lexpipe-tests/0 (+https://example.invalid)", timeout_s=5.0,
                              max_retries=0, min_interval_s=0.0, sleep=lambda s: None)
    api = OpenLegalDataApi(client, httpserver.url_for("/api"))
    with pytest.raises(OpenLegalDataError, match=problem) as err:
        api.probe()
    assert "/api/cases/?ordering=-date" in str(err.value)  # the error names the request


def test_probe_fingerprint_of_a_real_page(httpserver: HTTPServer) -> None:
    from connectors.openlegaldata import OpenLegalDataApi

    body = {"count": 2, "next": None, "previous": None,
            "results": [{"id": 68, "date": "2018-04-09", "file_number": "VI ZR 194/17"}]}
    httpserver.expect_request("/api/cases/", query_string={"ordering": "-date", "page_size": "1"}).respond_with_json(body)
    client = PoliteHttpClient(user_agent="lexpipe-tests/0 (+https://example.invalid)", timeout_s=5.0,
                              max_retries=0, min_interval_s=0.0, sleep=lambda s: None)
    probe = OpenLegalDataApi(client, httpserver.url_for("/api")).probe()
    assert probe.fingerprint == "2:2018-04-09:68"
