"""gAIus over Elasticsearch: the chunk rows of one physical index, scored client-side.

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
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from elasticsearch import Elasticsearch
from elasticsearch.helpers import scan

from pipelines.retrieval.gaius import GaiusRetriever
from schemas import elasticsearch as es_schema


class GaiusIndexCache:
    """``GaiusRetriever`` per physical index, loaded on first use."""

    def __init__(self, client: Elasticsearch, *, page_size: int = 500, keep_alive: str = "2m",
                 capacity: int = 3) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.client = client
        self.page_size = page_size
        self.keep_alive = keep_alive
        self.capacity = capacity
        self._retrievers: OrderedDict[str, GaiusRetriever] = OrderedDict()
        # one lock for loads and lookups: two first searches of a version must not scan it twice
        self._lock = threading.Lock()

    def __contains__(self, index: str) -> bool:
        return index in self._retrievers

    def get(self, index: str) -> GaiusRetriever:
        with self._lock:
            retriever = self._retrievers.get(index)
            if retriever is None:
                retriever = GaiusRetriever(self.rows(index))
                self._retrievers[index] = retriever
                while len(self._retrievers) > self.capacity:
                    self._retrievers.popitem(last=False)
            else:
                self._retrievers.move_to_end(index)
            return retriever

    def discard(self, index: str) -> None:
        with self._lock:
            self._retrievers.pop(index, None)

    def rows(self, index: str) -> dict[str, list[Any]]:
        """Columns of every chunk of ``index``, in document order (``position``; documents loaded
        without one follow, by chunk id), so gAIus ties break as on the embedded backend."""
        hits = scan(self.client, index=index, size=self.page_size, scroll=self.keep_alive,
                    query={"query": {"match_all": {}}, "_source": list(es_schema.GAIUS_SOURCE_FIELDS)})
        sources = [h.get("_source") or {} for h in hits]
        sources.sort(key=lambda s: (s.get("position") is None, s.get("position") or 0, s.get("chunk_id", "")))
        return {f: [s.get(f) for s in sources] for f in es_schema.GAIUS_SOURCE_FIELDS if f != "position"}
