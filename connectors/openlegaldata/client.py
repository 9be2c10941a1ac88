"""The Open Legal Data API client: list URLs, polite GETs with the token, the change probe.

Why a module of its own: everything that knows the API's URL shapes (``/cases/`` by keyset or
by date window, ``/courts/`` by limit/offset, the one-record probe) and holds the token is here,
so the token has one way out (the ``Authorization`` header, per request) and the syncs never
build a URL themselves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import SecretStr

from connectors.http import PoliteHttpClient, redact_url
from connectors.openlegaldata.errors import PageFormatError
from connectors.openlegaldata.pages import parse_page
from connectors.openlegaldata.records import text_or_none
from connectors.openlegaldata.settings import (DEFAULT_BASE_URL, ApiParams, OpenLegalDataSettings,
                                               api_params)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceProbe:
    url: str
    count: int
    newest_date: str | None
    newest_id: Any

    @property
    def fingerprint(self) -> str:
        """Changes when a decision is added or removed (count) or a newer one appears."""
        return f"{self.count}:{self.newest_date}:{self.newest_id}"


class OpenLegalDataApi:
    """Builds list URLs and GETs them politely, adding the token header per request."""

    def __init__(self, client: PoliteHttpClient, base_url: str = DEFAULT_BASE_URL, *,
                 api_token: SecretStr | str | None = None, params: ApiParams = ApiParams()) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")
        self._token = SecretStr(api_token) if isinstance(api_token, str) else api_token
        self.params = params

    @classmethod
    def from_settings(cls, settings: Any, oldp: OpenLegalDataSettings | None = None,
                      **client_overrides: Any) -> "OpenLegalDataApi":
        """Polite client from ``core.settings.Settings`` (user agent, rate limit, retries)
        + ``LEXPIPE_OLDP_*``. No validator cache: list pages are keyed by cursor, not revisited."""
        oldp = oldp or OpenLegalDataSettings()
        client = PoliteHttpClient.from_settings(settings, cache_path=None, **client_overrides)
        return cls(client, oldp.base_url, api_token=oldp.api_token, params=api_params(oldp))

    def __repr__(self) -> str:  # never show the token, even masked, in a repr
        return f"OpenLegalDataApi(base_url={self.base_url!r}, params={self.params!r})"

    def cases_url(self, since: str | None, page: int) -> str:
        query: dict[str, str | int] = {"ordering": self.params.ordering,
                                       "page_size": self.params.page_size}
        if since is not None:
            query[self.params.since_param] = since
        if page > 1:
            query["page"] = page
        return str(httpx.URL(f"{self.base_url}/cases/", params=query))

    def window_url(self, lo: str | None, hi: str | None, page: int) -> str:
        """A page of the decision-date window ``[lo, hi]`` (inclusive; None = unbounded)."""
        query: dict[str, str | int] = {"ordering": "date", "page_size": self.params.page_size}
        if lo is not None:
            query["date_after"] = lo
        if hi is not None:
            query["date_before"] = hi
        if page > 1:
            query["page"] = page
        return str(httpx.URL(f"{self.base_url}/cases/", params=query))

    def courts_url(self, offset: int = 0) -> str:
        """A page of ``/courts/``: ``limit``/``offset`` (the live view pages with the project's
        default ``CappedLimitOffsetPagination``, not ``page``/``page_size`` like ``/cases/``)."""
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        query: dict[str, str | int] = {"limit": self.params.page_size}
        if offset:
            query["offset"] = offset
        return str(httpx.URL(f"{self.base_url}/courts/", params=query))

    def follow_courts_link(self, next_url: str, offset: int) -> str:
        """The URL of the next ``/courts/`` page: the server's ``next`` link when it stays on this
        API (same scheme, host, port and path — the token header goes wherever we follow) and
        moves forward to ``offset`` (records read so far); else the ``limit``/``offset`` URL we
        compute ourselves, with a warning naming the link we did not follow."""
        ours = httpx.URL(self.courts_url(offset))
        try:
            link = httpx.URL(next_url)
            link_offset = int(link.params.get("offset", ""))
        except (httpx.InvalidURL, ValueError):
            link, link_offset = None, -1
        if (link is not None and (link.scheme, link.host, link.port, link.path.rstrip("/"))
                == (ours.scheme, ours.host, ours.port, ours.path.rstrip("/")) and link_offset == offset):
            return str(link)
        log.warning("openlegaldata courts: not following next link %s (expected %s at offset %d); "
                    "using %s", redact_url(next_url), redact_url(str(ours.copy_with(query=None))),
                    offset, redact_url(str(ours)))
        return str(ours)

    def probe_url(self) -> str:
        """One record, newest decision date first: ``ordering=-date`` is what the live API honours."""
        return str(httpx.URL(f"{self.base_url}/cases/", params={"ordering": "-date", "page_size": 1}))

    def probe(self) -> "SourceProbe":
        """What a change watcher compares between polls: the total count and the newest decision.

        One small request; it cannot see edits of older records (the sync's overlap window and
        full rescans catch those), but a new or removed decision changes it."""
        url = self.probe_url()
        body, _headers = self.get(url)
        try:
            page = parse_page(body)
        except PageFormatError as exc:
            raise PageFormatError(f"{url}: {exc}") from exc
        newest = next((r.obj for r in page.records if isinstance(r.obj, dict)), None)
        if page.count is None:
            raise PageFormatError(f"{url}: the page has no count")
        return SourceProbe(url=url, count=page.count,
                           newest_date=text_or_none(newest.get("date")) if newest else None,
                           newest_id=newest.get("id") if newest else None)

    def get(self, url: str) -> tuple[bytes, dict[str, str]]:
        headers = {"Accept": "application/json"}
        if self._token is not None and self._token.get_secret_value():
            headers["Authorization"] = f"Token {self._token.get_secret_value()}"
        res = self.client.get(url, headers=headers, conditional=False)
        return res.content, res.headers
