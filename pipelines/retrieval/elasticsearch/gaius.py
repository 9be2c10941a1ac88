"""gAIus over Elasticsearch: the chunk rows of one search scope, scored client-side — and, from the
same scan, the reranker's lexical statistics and the German section fusion's table context.

Why client-side: gAIus (:mod:`pipelines.retrieval.gaius`) slides a query-length window over every
chunk's characters and counts equal positions. No Elasticsearch query expresses that, and a
script query would run the whole alignment in Painless for every document on every search. A
version of the Civil Code is ~450k characters, so the rows of a small scope fit in memory: they
are read once with ``helpers.scan`` (bounded pages, only the fields the scorers read) and kept.

What a scope is: the rows a search sees — one generation of the language index, the acts it names
(or all of them) and the version each act resolves to (newest, as of a date, or exact). A
published generation never changes, so the key (physical index, generation, acts and their
versions) can never go stale; two searches as of different dates that resolve every act to the
same version share one entry. The cache is LRU-bounded because each entry holds tens of MB of
indicator arrays; scopes larger than ``max_scope_rows`` are never loaded (the search answers them
with BM25 and kNN alone).

The reranker (:mod:`pipelines.retrieval.reranker`) needs every chunk's analysed tokens and their
IDF over the scope (:class:`~pipelines.retrieval.reranker.LexicalStats`), exactly what the
embedded backend reads from ``text_analyzed``; the scan reads it too, so one scan per scope serves
gAIus, the reranker and the section fusion, and they are evicted together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Hashable, Mapping

from elasticsearch import Elasticsearch
from elasticsearch.helpers import scan

from pipelines.retrieval.gaius import GaiusRetriever
from pipelines.retrieval.reranker import LexicalStats
from schemas import elasticsearch as es_schema

ANALYZED_FIELD = "text_analyzed"  # scanned for the reranker's LexicalStats, not read by gAIus


@dataclass
class ScopeScan:
    """What one scan of a scope yields: its gAIus scorer, its lexical statistics, and (built on
    first use, German hybrid only) the section fusion's table context."""
    gaius: GaiusRetriever
    lexical: LexicalStats
    rows: dict[str, list[Any]] | None = None  # kept only until the section context is built
    section: Any = None  # table_context.TableContext


class ScopeCache:
    """:class:`ScopeScan` per scope key, loaded on first use (one scan)."""

    def __init__(self, client: Elasticsearch, *, page_size: int = 500, keep_alive: str = "2m",
                 capacity: int = 3) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.client = client
        self.page_size = page_size
        self.keep_alive = keep_alive
        self.capacity = capacity
        self._entries: OrderedDict[Hashable, ScopeScan] = OrderedDict()
        # one lock for loads and lookups: two first searches of a scope must not scan it twice
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, key: Hashable, index: str, query: dict[str, Any], versions: Mapping[str, str]) -> ScopeScan:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                rows = self.rows(index, query, versions)
                analyzed = rows.pop(ANALYZED_FIELD)
                entry = ScopeScan(GaiusRetriever(rows), LexicalStats.from_analyzed(rows["chunk_id"], analyzed),
                                  rows={**rows, ANALYZED_FIELD: analyzed})
                self._entries[key] = entry
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
            return entry

    def section(self, entry: ScopeScan):
        """The German hybrid's ``TableContext`` of a scope (IDF for key terms, each §'s first
        chunk), built from the same scan on first use."""
        from pipelines.retrieval.table_context import TableContext

        with self._lock:
            if entry.section is None:
                entry.section = TableContext.from_rows(entry.rows)
                entry.rows = None
            return entry.section

    def discard_index(self, index: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if isinstance(k, tuple) and k and k[0] == index]:
                del self._entries[key]

    def rows(self, index: str, query: dict[str, Any], versions: Mapping[str, str]) -> dict[str, list[Any]]:
        """Columns of every row the scope shows, in document order (act, first version, position
        in that version's chunks: ties of gAIus break as on the embedded backend), each with the
        version its act resolves to."""
        hits = scan(self.client, index=index, size=self.page_size, scroll=self.keep_alive,
                    query={"query": query, "_source": list(es_schema.GAIUS_SOURCE_FIELDS)})
        sources = [h.get("_source") or {} for h in hits]
        sources.sort(key=lambda s: (s.get("act_id", ""), s.get("version_from", ""), s.get("position") is None,
                                    s.get("position") or 0, s.get("chunk_id", "")))
        cols = {f: [s.get(f) for s in sources] for f in es_schema.GAIUS_SOURCE_FIELDS
                if f not in ("position", "version_from")}
        cols["version"] = [versions.get(a, "") for a in cols["act_id"]]
        cols[ANALYZED_FIELD] = [a or "" for a in cols[ANALYZED_FIELD]]
        return cols
