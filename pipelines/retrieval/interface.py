"""One search interface for every backend and retriever.

A *document* is one retrieval chunk (schemas.arrow.CHUNKS) plus article fields a consumer needs;
results are ranked per chunk and collapsed to articles by :func:`collapse_to_articles`, because
legal consumers cite articles, not chunks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal, Protocol, Sequence

RetrieverName = Literal["bm25", "dense", "hybrid", "gaius"]
RETRIEVERS: tuple[str, ...] = ("bm25", "dense", "hybrid", "gaius")


class SearchError(ValueError):
    """A request the index cannot answer (unknown act, no version on that date, unknown
    retriever): every backend raises it or a subclass, and the search service answers 4xx."""


class EncoderMismatch(SearchError):
    """The index's vectors come from another encoder than the one this server encodes queries with
    (``encoder_mismatch`` says why): the server's configuration, not the caller's request (503)."""


def encoder_mismatch(where: str, built_with: str | None, encoder_id: str | None) -> str | None:
    """Why a dense or hybrid search of ``where`` must be refused, or None: query vectors from another
    encoder than the one that embedded the index rank noise, silently. Indexes without a record
    (built before it was kept) and backends that do not know their encoder are not checked."""
    if not built_with or not encoder_id or built_with == encoder_id:
        return None
    return (f"{where} was indexed with the {built_with} encoder, but this search encodes queries with "
            f"{encoder_id}: open the backend with the encoder the index was built with (LEXPIPE_ENCODER), "
            "or rebuild the index")


@dataclass(frozen=True)
class Filters:
    """Structured filters; every backend must apply them (never string-built queries)."""
    act_ids: tuple[str, ...] = ()  # e.g. ("pl:kc",)
    jurisdictions: tuple[str, ...] = ()  # e.g. ("pl",)
    statuses: tuple[str, ...] = ()  # e.g. ("in_force",); empty = any
    version: str | None = None  # exact corpus version "2025-11-13"
    as_of: dt.date | None = None  # newest version with version <= as_of


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 10
    retriever: str = "hybrid"
    filters: Filters = field(default_factory=Filters)


@dataclass
class Hit:
    chunk_id: str
    article_id: str
    act_id: str
    version: str
    score: float
    rank: int  # 1-based
    heading_path: str = ""
    text: str = ""
    status: str = ""
    sources: dict[str, int] = field(default_factory=dict)  # retriever → rank it came from (fusion)


class Retriever(Protocol):
    """Ranked chunk hits for a request; ``retriever`` names which ranking (bm25/dense/gaius)."""

    def search(self, request: SearchRequest) -> list[Hit]: ...


def collapse_to_articles(hits: Sequence[Hit], k: int) -> list[Hit]:
    """Best chunk per article, in rank order, re-ranked 1..k."""
    seen: set[str] = set()
    out: list[Hit] = []
    for h in sorted(hits, key=lambda h: h.rank):
        if h.article_id in seen:
            continue
        seen.add(h.article_id)
        out.append(h)
        if len(out) == k:
            break
    for i, h in enumerate(out, 1):
        h.rank = i
    return out
