"""Validated search requests, shared by ``lexpipe search`` and the HTTP API, so both refuse the
same bad input with the same message (the API maps :class:`InvalidRequest` to 4xx)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from pipelines.retrieval.interface import RETRIEVERS, Filters, Hit, SearchError, SearchRequest

# a layperson question is long (GerLayQA dev: p99 3,291, max 4,025 characters); 100 kB is refused
MAX_QUERY_CHARS = 8000
MAX_K = 200
ACT_ID = re.compile(r"^[a-z]{2}:[a-z0-9_]{1,40}$")
STATUSES = ("in_force", "repealed", "pending")


class InvalidRequest(ValueError):
    """Bad input from a caller: never a server error."""


@dataclass
class SearchPage:
    hits: list[Hit]
    offset: int
    k: int
    retriever: str
    versions: dict[str, str]  # act → version searched


def parse_date(value: str | dt.date | None, name: str = "as_of") -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidRequest(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def build_request(query: str, *, k: int = 10, retriever: str = "hybrid", acts: list[str] | None = None,
                  statuses: list[str] | None = None, as_of: str | dt.date | None = None,
                  version: str | None = None, offset: int = 0) -> SearchRequest:
    if not isinstance(query, str) or not query.strip():
        raise InvalidRequest("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if retriever not in RETRIEVERS:
        raise InvalidRequest(f"unknown retriever {retriever!r}; use one of {', '.join(RETRIEVERS)}")
    if not 1 <= k <= MAX_K:
        raise InvalidRequest(f"k must be between 1 and {MAX_K}, got {k}")
    if not 0 <= offset <= 10 * MAX_K or offset + k > 10 * MAX_K:
        raise InvalidRequest(f"offset must be between 0 and {10 * MAX_K - k}, got {offset}")
    for a in acts or []:
        if not ACT_ID.match(a):
            raise InvalidRequest(f"act must look like 'pl:kc', got {a!r}")
    for s in statuses or []:
        if s not in STATUSES:
            raise InvalidRequest(f"status must be one of {', '.join(STATUSES)}, got {s!r}")
    if version is not None:
        parse_date(version, "version")
    return SearchRequest(query.strip(), k + offset, retriever,
                         Filters(act_ids=tuple(acts or ()), statuses=tuple(statuses or ()),
                                 version=version, as_of=parse_date(as_of)))


class SearchService:
    """Validated searches over one backend. Both backends raise ``SearchError`` (the
    Elasticsearch one a subclass of it) for requests the index cannot answer: a 4xx here."""

    def __init__(self, backend):
        self.backend = backend

    @classmethod
    def from_settings(cls, settings) -> "SearchService":
        """Over the backend ``settings`` configure (``index_build.open_backend``: Elasticsearch
        when ``elasticsearch_url`` is set, else embedded)."""
        from pipelines.retrieval.index_build import open_backend

        return cls(open_backend(settings))

    def search(self, query: str, *, offset: int = 0, **kw) -> SearchPage:
        request = build_request(query, offset=offset, **kw)
        try:
            hits = self.backend.search(request)
        except SearchError as exc:
            raise InvalidRequest(str(exc)) from exc
        page = hits[offset:offset + request.k - offset]
        versions = {h.act_id: h.version for h in hits}
        return SearchPage(page, offset, request.k - offset, request.retriever, versions)
