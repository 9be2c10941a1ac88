"""The SAOS dump API client: dump URLs, polite GETs, and the checks on a page's links.

Why a module of its own: everything that knows the API's URL shapes is here, so the sync never
builds or follows a URL itself. A dump page says which query it answered (``self``) and where the
next page is (``next``). We follow ``next`` only after checking it names *our* query with the page
number plus one: the cursor, which survives a crash, stores only the page number, so the link and
the cursor must agree or a restart would page differently from an uninterrupted run. A link to
another query (the server dropped a filter, clamped the page size, jumped pages) stops the sync
(``ContractError``); a link to another origin for the same query (a proxy rewriting the host) is
not followed: we ask our own URL for the same page instead, with a warning.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from connectors.http import PoliteHttpClient, redact_url
from connectors.saos.errors import ContractError
from connectors.saos.pages import DumpPage
from connectors.saos.sample import DUMP_PATH
from connectors.saos.settings import DEFAULT_BASE_URL, DumpQuery, SaosSettings

log = logging.getLogger(__name__)


class SaosApi:
    """Builds dump URLs, GETs them politely and checks the links of the pages they return."""

    def __init__(self, client: PoliteHttpClient, base_url: str = DEFAULT_BASE_URL) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")

    @classmethod
    def from_settings(cls, settings: Any, saos: SaosSettings | None = None,
                      **client_overrides: Any) -> "SaosApi":
        """Polite client from ``core.settings.Settings`` (user agent) + ``LEXPIPE_SAOS_*`` (rate
        limit, retries, backoff, timeout). No validator cache: dump pages are not revisited."""
        saos = saos or SaosSettings()
        kwargs: dict[str, Any] = dict(
            user_agent=settings.user_agent, timeout_s=saos.timeout_s, max_retries=saos.max_retries,
            backoff_base_s=saos.backoff_base_s, backoff_max_s=saos.backoff_max_s,
            min_interval_s=saos.min_interval_s, cache_path=None)
        kwargs.update(client_overrides)
        return cls(PoliteHttpClient(**kwargs), saos.base_url)

    def __repr__(self) -> str:
        return f"SaosApi(base_url={self.base_url!r})"

    @property
    def dump_endpoint(self) -> str:
        return f"{self.base_url}{DUMP_PATH}"

    def dump_url(self, query: DumpQuery, page: int) -> str:
        """Page ``page`` (0-based) of the dump for ``query``."""
        return str(httpx.URL(self.dump_endpoint, params=query.params(page)))

    def get(self, url: str) -> tuple[bytes, dict[str, str]]:
        res = self.client.get(url, headers={"Accept": "application/json"}, conditional=False)
        return res.content, res.headers

    # -- link checks --------------------------------------------------------------------------

    def check_self(self, page: DumpPage, query: DumpQuery, page_no: int) -> None:
        """The page's ``self`` link, when present, must name the query and page we asked for."""
        if page.self_url is not None:
            self._same_query(page.self_url, query, page_no, "self")

    def follow_next(self, page: DumpPage, query: DumpQuery, page_no: int) -> str | None:
        """The URL of page ``page_no + 1``, or None when the page has no ``next`` link (the end
        of the dump for this query). Raises ``ContractError`` when the link names another query."""
        link = page.next_url
        if link is None:
            return None
        parsed = self._same_query(link, query, page_no + 1, "next")
        ours = httpx.URL(self.dump_url(query, page_no + 1))
        if (parsed.scheme, parsed.host, parsed.port) != (ours.scheme, ours.host, ours.port):
            log.warning("saos: not following next link %s to another origin; asking %s",
                        redact_url(link), redact_url(str(ours)))
            return str(ours)
        return link

    def _same_query(self, link: str, query: DumpQuery, page_no: int, rel: str) -> httpx.URL:
        try:
            url = httpx.URL(link)
        except httpx.InvalidURL as exc:
            raise ContractError(f"unreadable {rel} link {link!r}: {exc}") from None
        want = {k: v.lower() if k == "withGenerated" else v for k, v in query.params(page_no)}
        got = {k: v.lower() if k == "withGenerated" else v for k, v in url.params.multi_items()}
        if len(url.params.multi_items()) != len(got):
            raise ContractError(f"{rel} link {redact_url(link)} repeats a parameter")
        if url.path.rstrip("/") != DUMP_PATH or got != want:
            diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            raise ContractError(
                f"the page's {rel} link {redact_url(link)} does not name the query asked for "
                f"(page {page_no} of {self.dump_url(query, page_no)}); differs in "
                f"{', '.join(diff) or 'path'}. Paging on would skip or repeat records.")
        return url
