"""The dump client: URLs in the server's own parameter order, the self/next link checks, and
politeness through ``connectors.http`` (retries with backoff on 429/5xx and timeouts, the
rate limit, no retry of a refused parameter)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer

from connectors.http import HttpFetchError
from connectors.saos import (ContractError, DumpPage, DumpQuery, JudgmentSync, SaosApi,
                             SaosSettings, dump_query)
from core.settings import Settings
from fake_saos import FakeSaos  # tests/, on sys.path via conftest
from saos_helpers import UA, make_api, make_sync

Q = DumpQuery(since="2025-12-31T23:00:00.000", start="2011-01-01", end=None, page_size=10)


def api_at(base: str) -> SaosApi:
    from connectors.http import PoliteHttpClient

    return SaosApi(PoliteHttpClient(user_agent=UA, min_interval_s=0.0), base)


def test_dump_urls_use_the_servers_parameter_order() -> None:
    api = api_at("https://www.saos.org.pl/")
    assert api.dump_url(DumpQuery(page_size=100), 347) == \
        "https://www.saos.org.pl/api/dump/judgments?pageSize=100&pageNumber=347"
    assert api.dump_url(Q, 0) == ("https://www.saos.org.pl/api/dump/judgments?pageSize=10&pageNumber=0"
                                  "&judgmentStartDate=2011-01-01"
                                  "&sinceModificationDate=2025-12-31T23%3A00%3A00.000")
    with pytest.raises(ValueError):
        DumpQuery(page_size=101)
    with pytest.raises(ValueError):
        DumpQuery(since="2025-12-31T23:00:00")  # the API wants milliseconds


def page_with(**links: str) -> DumpPage:
    return DumpPage(records=[], links=links)


def test_the_next_link_is_followed_only_for_the_same_query_and_the_next_page() -> None:
    api = api_at("https://www.saos.org.pl")
    this, nxt = api.dump_url(Q, 4), api.dump_url(Q, 5)
    api.check_self(page_with(self=this), Q, 4)
    assert api.follow_next(page_with(self=this), Q, 4) is None  # no next: the end of the dump
    assert api.follow_next(page_with(next=nxt), Q, 4) == nxt
    # the same query from another origin (a proxy rewriting the host): our own URL instead
    proxied = nxt.replace("https://www.saos.org.pl", "http://10.0.0.7:8080")
    assert api.follow_next(page_with(next=proxied), Q, 4) == nxt

    for wrong, differs in ((api.dump_url(Q, 6), "pageNumber"),  # skips a page
                           (nxt.replace("pageSize=10", "pageSize=20"), "pageSize"),  # clamped
                           (api.dump_url(DumpQuery(None, "2011-01-01", None, 10), 5),
                            "sinceModificationDate")):  # the filter dropped
        with pytest.raises(ContractError, match=differs):
            api.follow_next(page_with(next=wrong), Q, 4)
    with pytest.raises(ContractError, match="self link"):
        api.check_self(page_with(self=api.dump_url(Q, 3)), Q, 4)


def test_429_5xx_and_a_dropped_connection_are_retried_with_backoff(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path) -> None:
    fake.fail(1, "429", retry_after="3")
    fake.fail(2, "503")
    fake.fail(4, "500")
    fake.fail(5, "drop")  # half the body, then the connection is gone
    sleeps: list[float] = []
    report = make_sync(httpserver, tmp_path / "home", sleeps=sleeps).sync()
    assert report.complete and report.new == 200
    assert fake.pages_asked() == [0, 0, 0, 1, 1, 1]  # three attempts for each page
    assert sleeps[0] == 3.0  # Retry-After honoured
    assert 0.5 <= sleeps[1] <= 1.0  # second retry of page 0: base 0.5 × 2, jitter [cap/2, cap]
    assert 0.25 <= sleeps[2] <= 0.5 and 0.5 <= sleeps[3] <= 1.0  # page 1: first and second retry
    assert len(sleeps) == 4
    landed = list((tmp_path / "home" / "raw" / "sha256").glob("??/*.json"))
    assert len(landed) == 2  # the two whole pages; the half body was never landed


def test_a_timeout_is_retried(saos_dir: Path, tmp_path: Path) -> None:
    """A page answered after the client's timeout is asked again (a threaded server, so the
    retry is not queued behind the slow answer)."""
    fake = FakeSaos(saos_dir.parent.parent)
    fake.fail(2, "slow", delay_s=0.6)
    sleeps: list[float] = []
    with HTTPServer(threaded=True) as server:
        fake.install(server)
        report = make_sync(server, tmp_path / "home", sleeps=sleeps, timeout_s=0.2).sync()
    assert report.complete and report.new == 200
    assert fake.pages_asked() == [0, 1, 1] and len(sleeps) == 1


def test_retries_exhausted_and_refused_parameters_stop_the_sync(httpserver: HTTPServer,
                                                                fake: FakeSaos,
                                                                tmp_path: Path) -> None:
    for n in (2, 3):
        fake.fail(n, "503")
    home = tmp_path / "home"
    with pytest.raises(HttpFetchError) as err:
        make_sync(httpserver, home, max_retries=1).sync()
    assert err.value.status == 503 and err.value.attempts == 2
    assert "pageNumber=1" in str(err.value)
    sync = make_sync(httpserver, home)
    assert sync.cursors.load().page == 1  # page 0 committed, page 1 not
    assert sync.sync().complete and sync.store.judgments().num_rows == 200

    api = make_api(httpserver)  # a 400 (a parameter the API refuses) is not retried
    with pytest.raises(HttpFetchError) as refused:
        api.get(api.dump_url(DumpQuery(page_size=10), 0).replace("pageSize=10", "pageSize=5"))
    assert refused.value.status == 400 and not refused.value.retryable
    assert refused.value.attempts == 1


class _Recording(httpx.BaseTransport):
    """Records the (virtual) clock when each request is actually sent."""

    def __init__(self, clock: Any) -> None:
        self.inner = httpx.HTTPTransport()
        self.clock = clock
        self.sent: list[float] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(self.clock())
        return self.inner.handle_request(request)


def test_rate_limit_from_the_settings_spaces_every_request(httpserver: HTTPServer, fake: FakeSaos,
                                                           tmp_path: Path) -> None:
    """A virtual clock that only moves when the client sleeps: the send times are exactly what
    the rate limiter and the backoff scheduled, independent of machine load."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    transport = _Recording(lambda: now[0])
    saos = SaosSettings(base_url=httpserver.url_for("/"), page_size=10, min_interval_s=2.5)
    api = SaosApi.from_settings(Settings(), saos, clock=lambda: now[0], sleep=sleep,
                                transport=transport)
    fake.fail(3, "429", retry_after="7")
    report = JudgmentSync(api, tmp_path / "home", query=dump_query(saos)).sync()
    assert report.complete and len(report.pages) == 20
    gaps = [b - a for a, b in zip(transport.sent, transport.sent[1:])]
    assert len(transport.sent) == 21  # 20 pages + the throttled attempt
    assert min(gaps) >= 2.5  # never closer than the configured interval
    assert gaps[2] == 7.0 and gaps.count(2.5) == 19  # Retry-After, then the interval again
