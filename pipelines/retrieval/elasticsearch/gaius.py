"""gAIus over Elasticsearch: the chunk rows of one physical index, scored client-side — and, from
the same scan, the reranker's lexical statistics of that index.

Why client-side: gAIus (:mod:`pipelines.retrieval.gaius`) slides a query-length window over every
chunk's characters and counts equal positions. No Elasticsearch query expresses that, and a
script query would run the whole alignment in Painless for every document on every search. A
version of the Civil Code is ~450k characters, so its rows fit in memory: they are read once per
physical index with ``helpers.scan`` (bounded pages, only the fields the scorer reads) and the
:class:`~pipelines.retrieval.gaius.GaiusRetriever` is kept.

Why keyed by *physical* index: an index never changes after its aliases point at it (a reload
builds a new index), so a cached retriever can never go stale; a version switch simply resolves
another index name. The cache is LRU-bounded because each retriever holds tens of MB of
precomputed indicator arrays.

The reranker (:mod:`pipelines.retrieval.reranker`) needs every chunk's analysed tokens and their
IDF over the version (:class:`~pipelines.retrieval.reranker.LexicalStats`), exactly what the
embedded backend reads from its table's ``text_analyzed`` column. The scan therefore also reads
``text_analyzed`` and both objects are built from it and kept in the same LRU entry: one scan per
physical index serves gAIus and the reranker, and both are evicted together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch
from elasticsearch.helpers import scan

from pipelines.retrieval.gaius import GaiusRetriever
from pipelines.retrieval.reranker import LexicalStats
from schemas import elasticsearch as es_schema

ANALYZED_FIELD = "text_analyzed"  # scanned for the reranker's LexicalStats, not read by gAIus


@dataclass
class IndexScan:
    """What one scan of a physical index yields: its gAIus scorer, its lexical statistics, and (built
    on first use, German hybrid only) the section fusion's table context."""
    gaius: GaiusRetriever
    lexical: LexicalStats
    rows: dict[str, list[Any]] | None = None  # kept only until the section context is built
    section: Any = None  # section_fusion.TableContext


class GaiusIndexCache:
    """``GaiusRetriever`` and ``LexicalStats`` per physical index, loaded on first use (one scan)."""

    def __init__(self, client: Elasticsearch, *, page_size: int = 500, keep_alive: str = "2m",
                 capacity: int = 3) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.client = client
        self.page_size = page_size
        self.keep_alive = keep_alive
        self.capacity = capacity
        self._entries: OrderedDict[str, IndexScan] = OrderedDict()
        # one lock for loads and lookups: two first searches of a version must not scan it twice
        self._lock = threading.Lock()

    def __contains__(self, index: str) -> bool:
        return index in self._entries

    def entry(self, index: str) -> IndexScan:
        with self._lock:
            entry = self._entries.get(index)
            if entry is None:
                rows = self.rows(index)
                analyzed = rows.pop(ANALYZED_FIELD, None) or [None] * len(rows["chunk_id"])
                entry = IndexScan(GaiusRetriever(rows), LexicalStats.from_analyzed(rows["chunk_id"], analyzed),
                                  rows={**rows, ANALYZED_FIELD: [a or "" for a in analyzed]})
                self._entries[index] = entry
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(index)
            return entry

    def get(self, index: str) -> GaiusRetriever:
        """The gAIus scorer of ``index``."""
        return self.entry(index).gaius

    def lexical(self, index: str) -> LexicalStats:
        """Analysed tokens and IDF of every chunk of ``index`` (the reranker's overlap features)."""
        return self.entry(index).lexical

    def section(self, index: str):
        """The German hybrid's ``section_fusion.TableContext`` of ``index`` (IDF for key terms, each
        §'s first chunk), built from the same scan on first use."""
        from pipelines.retrieval.section_fusion import TableContext

        entry = self.entry(index)
        with self._lock:
            if entry.section is None:
                entry.section = TableContext.from_rows(entry.rows)
                entry.rows = None
            return entry.section

    def discard(self, index: str) -> None:
        with self._lock:
            self._entries.pop(index, None)

    def rows(self, index: str) -> dict[str, list[Any]]:
        """Columns of every chunk of ``index`` (``GAIUS_SOURCE_FIELDS`` but ``position``), in document
        order (``position``; documents loaded without one follow, by chunk id), so gAIus ties break
        as on the embedded backend."""
        hits = scan(self.client, index=index, size=self.page_size, scroll=self.keep_alive,
                    query={"query": {"match_all": {}}, "_source": list(es_schema.GAIUS_SOURCE_FIELDS)})
        sources = [h.get("_source") or {} for h in hits]
        sources.sort(key=lambda s: (s.get("position") is None, s.get("position") or 0, s.get("chunk_id", "")))
        return {f: [s.get(f) for s in sources] for f in es_schema.GAIUS_SOURCE_FIELDS if f != "position"}
