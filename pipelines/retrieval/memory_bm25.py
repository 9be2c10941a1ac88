"""BM25 over one table's analysed token column, in memory: LanceDB's full-text scoring, exactly.

Why: a statute table holds a few thousand chunks. A LanceDB full-text query over it costs 10–25 ms
of CPU (plus 50–200 ms when the machine is busy), most of it planning and materialising rows; the
same scores from posting arrays in memory cost well under a millisecond. On two cores that CPU is
what the query encoder of a hybrid search needs at the same moment, so the full-text legs of the
embedded backend score small tables here (``EmbeddedBackend._fts``) and keep LanceDB for large ones.

The scoring is LanceDB's (lance ``BM25Scorer``: k1 = 1.2, b = 0.75, idf = ln(1 + (N − n + 0.5) /
(n + 0.5)), query tokens counted with their repeats, whitespace tokens as indexed); a test holds
the two to the same hits and scores.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

K1, B = 1.2, 0.75


@dataclass(frozen=True)
class MemoryBM25:
    """Per-term postings (row indices, BM25 term weights) and IDF of one token column."""

    postings: dict[str, tuple[np.ndarray, np.ndarray]]
    idf: dict[str, float]
    rows: int

    @classmethod
    def from_token_strings(cls, texts: Iterable[str | None]) -> "MemoryBM25":
        """``texts``: one whitespace-joined token string per row (as the FTS index was built)."""
        counts = [Counter((t or "").split()) for t in texts]
        n = len(counts)
        lengths = np.fromiter((sum(c.values()) for c in counts), dtype=np.float64, count=n)
        avgdl = float(lengths.mean()) if n and lengths.sum() else 1.0
        norm = K1 * (1 - B + B * lengths / avgdl)
        rows_of: dict[str, list[int]] = {}
        tf_of: dict[str, list[int]] = {}
        for i, c in enumerate(counts):
            for term, tf in c.items():
                rows_of.setdefault(term, []).append(i)
                tf_of.setdefault(term, []).append(tf)
        postings, idf = {}, {}
        for term, rows in rows_of.items():
            r = np.asarray(rows, dtype=np.int32)
            tf = np.asarray(tf_of[term], dtype=np.float64)
            postings[term] = (r, (tf * (K1 + 1) / (tf + norm[r])).astype(np.float32))
            idf[term] = math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
        return cls(postings, idf, n)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 of every row for the query ``tokens`` (0 where no token occurs)."""
        out = np.zeros(self.rows, dtype=np.float32)
        for term, times in Counter(tokens).items():
            hit = self.postings.get(term)
            if hit is not None:
                out[hit[0]] += np.float32(times * self.idf[term]) * hit[1]
        return out

    def top(self, tokens: Sequence[str], k: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(row, score) of the ``k`` best rows that match at least one token (and ``mask``), best
        first; equal scores in row order."""
        s = self.scores(tokens)
        ok = s > 0
        if mask is not None:
            ok &= mask
        idx = np.flatnonzero(ok)
        if len(idx) > k:
            idx = idx[np.argpartition(-s[idx], k - 1)[:k]]
        idx = idx[np.lexsort((idx, -s[idx]))]
        return [(int(i), float(s[i])) for i in idx]
