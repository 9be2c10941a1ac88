"""The acts a generation of a language index holds: their versions in order (``doc_kind = act``).

Why documents in the same index, with generations like the chunks: a publication changes an
act's rows and its version list together, and the alias swap must make both visible at once; a
reader that resolved generation G reads the catalogue of G, never a newer one.

A catalogue never changes once its generation is published, so a reader keeps it per (physical
index, generation) and asks the cluster only for what it has not read yet: the acts a search
names or hits (one ``terms`` query), or every act once (a scan) when a search spans them all.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable

from elasticsearch import Elasticsearch
from elasticsearch.helpers import scan

from pipelines.retrieval.backend_common import version_as_of
from pipelines.retrieval.elasticsearch.names import response_body
from pipelines.retrieval.elasticsearch.visibility import generation_clauses

CATALOG_FIELDS = ["act_id", "versions", "chunks"]
TERMS_BATCH = 1_000


@dataclass(frozen=True)
class ActEntry:
    act_id: str
    versions: tuple[str, ...]  # oldest first
    chunks: int  # rows the newest version shows
    doc_id: str = ""

    @property
    def newest(self) -> str | None:
        return self.versions[-1] if self.versions else None

    def as_of(self, day: dt.date | str) -> str | None:
        return version_as_of(self.versions, day)


def entry_of(hit: dict) -> ActEntry:
    s = hit.get("_source") or {}
    return ActEntry(s["act_id"], tuple(s.get("versions") or ()), int(s.get("chunks") or 0), hit.get("_id", ""))


class Catalog:
    """The act entries of generation ``generation`` of physical index ``index``."""

    def __init__(self, client: Elasticsearch, index: str, generation: int, *, page_size: int = 500,
                 keep_alive: str = "2m"):
        self.client, self.index, self.generation = client, index, generation
        self.page_size, self.keep_alive = page_size, keep_alive
        self._entries: dict[str, ActEntry | None] = {}
        self._complete = False
        self._lock = threading.Lock()

    def _query(self, acts: Iterable[str] | None = None) -> dict:
        clauses = generation_clauses(self.generation, "act")
        if acts is not None:
            clauses.append({"terms": {"act_id": sorted(acts)}})
        return {"bool": {"filter": clauses}}

    def get(self, acts: Iterable[str]) -> dict[str, ActEntry]:
        """The entries of ``acts`` that the generation holds (unknown acts are left out)."""
        acts = set(acts)
        with self._lock:
            missing = sorted(a for a in acts if a not in self._entries) if not self._complete else []
            for i in range(0, len(missing), TERMS_BATCH):
                batch = missing[i:i + TERMS_BATCH]
                resp = response_body(self.client.search(index=self.index, query=self._query(batch), size=len(batch),
                                                        source=CATALOG_FIELDS, track_total_hits=False))
                found = {e.act_id: e for e in map(entry_of, resp.get("hits", {}).get("hits", []))}
                for a in batch:
                    self._entries[a] = found.get(a)
            return {a: e for a in acts if (e := self._entries.get(a)) is not None}

    def all(self) -> dict[str, ActEntry]:
        """Every act of the generation (one scan, then kept)."""
        with self._lock:
            if not self._complete:
                hits = scan(self.client, index=self.index, size=self.page_size, scroll=self.keep_alive,
                            query={"query": self._query(), "_source": CATALOG_FIELDS})
                entries = {e.act_id: e for e in map(entry_of, hits)}
                self._entries = {**{a: None for a in self._entries}, **entries}
                self._complete = True
            return {a: e for a, e in self._entries.items() if e is not None}


class CatalogCache:
    """Catalogues per (physical index, generation), the newest few kept (LRU)."""

    def __init__(self, client: Elasticsearch, *, capacity: int = 3, page_size: int = 500, keep_alive: str = "2m"):
        self.client, self.capacity, self.page_size, self.keep_alive = client, capacity, page_size, keep_alive
        self._items: OrderedDict[tuple[str, int], Catalog] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, index: str, generation: int) -> Catalog:
        key = (index, generation)
        with self._lock:
            cat = self._items.get(key)
            if cat is None:
                cat = self._items[key] = Catalog(self.client, index, generation, page_size=self.page_size,
                                                 keep_alive=self.keep_alive)
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(key)
            return cat
