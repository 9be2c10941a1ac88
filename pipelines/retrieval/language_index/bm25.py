"""BM25 over a snapshot's segment postings: ``memory_bm25.MemoryBM25``'s scores, exactly.

The scoring is LanceDB's (k1 = 1.2, b = 0.75, idf = ln(1 + (N − n + 0.5) / (n + 0.5)), query
terms counted with their repeats), with N, avgdl and each term's n over the live rows of the index
— every version of every act, tombstoned rows left out — so a score does not depend on which
versions a request sees, and equals MemoryBM25's over the same rows when all of them are visible
(a test holds the two to the same rows and scores). The arithmetic is MemoryBM25's step for step
(float64 norms and term weights cast to float32, float32 accumulation in the query's term order),
so the scores are bit-identical, not only close, and ties break the same way (row order).

Why scipy's ``csc_matvec`` kernel: accumulating a term into the score array is one pass in C over
its postings (``y[row] += w · c`` in float32, MemoryBM25's operation exactly) instead of numpy's
three (gather, add, scatter): on the whole German corpus (1.42 M rows, ~5 M postings per GerLayQA
question) CPU per query p50 / p95 went from 66 / 99 to 41 / 60 ms, and to 26 / 41 with the sampled
top-k threshold of :func:`top_masked` (numpy stays the fallback where the kernel is missing).

Why per-term weights cached per snapshot: a term's weights depend on the generation's avgdl, so
they cannot be stored at build time; a GerLayQA question has ~60 distinct terms, a dozen of them
function words with 10⁵–10⁶ postings each, and recomputing those weights per query dominated the
query time. The cache keeps the most recently used terms' (rows, weights) up to a byte budget.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from typing import Sequence

import numpy as np

from pipelines.retrieval.language_index.hashing import hash_strings
from pipelines.retrieval.memory_bm25 import B, K1

try:  # scipy's sparse matrix-vector kernel: y += A·x over one column = y[rows] += w·c, in C
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
except ImportError:  # pragma: no cover - scipy is a dependency; its private module may move
    _csc_matvec = None

CACHE_BYTES = 256 * 2**20


class FieldScorer:
    """BM25 of one field (``terms`` or ``bigrams``) over a snapshot's segments."""

    def __init__(self, field: str, segments: Sequence, bases: np.ndarray, lengths: np.ndarray, live: np.ndarray,
                 cache_bytes: int = CACHE_BYTES):
        self.field = field
        self.segments, self.bases = list(segments), np.asarray(bases, np.int64)
        self.rows = int(self.bases[-1]) if len(self.bases) else 0
        self.n = int(live.sum())
        total = float(lengths[live].astype(np.float64).sum())
        avgdl = total / self.n if self.n and total else 1.0
        self.avgdl = avgdl
        # MemoryBM25's expression, element for element
        self.norm = K1 * (1 - B + B * lengths.astype(np.float64) / avgdl)
        self._cache: OrderedDict[int, tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
        self._cache_bytes, self._budget = 0, cache_bytes
        self._lock = threading.Lock()

    def _postings(self, h: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(global rows, float32 weights, live df) of one term hash; cached."""
        with self._lock:
            hit = self._cache.get(h)
            if hit is not None:
                self._cache.move_to_end(h)
                return hit
        rows, weights, df = [], [], 0
        for seg, base in zip(self.segments, self.bases):
            p = seg.postings[self.field].lookup(h)
            if p is None:
                continue
            docs, tf = p
            r = (docs.astype(np.int64) + base).astype(np.int32)
            tf = tf.astype(np.float64)
            rows.append(r)
            weights.append((tf * (K1 + 1) / (tf + self.norm[r])).astype(np.float32))
            dead_h, dead_df = seg.dead_df[self.field]
            dead = 0
            if len(dead_h):
                i = int(np.searchsorted(dead_h, np.uint64(h)))
                if i < len(dead_h) and int(dead_h[i]) == h:
                    dead = int(dead_df[i])
            df += len(docs) - dead
        if rows:
            out = (np.concatenate(rows) if len(rows) > 1 else rows[0],
                   np.concatenate(weights) if len(weights) > 1 else weights[0], df)
        else:
            out = (np.zeros(0, np.int32), np.zeros(0, np.float32), 0)
        size = out[0].nbytes + out[1].nbytes
        with self._lock:
            if h not in self._cache and size <= self._budget:
                self._cache[h] = out
                self._cache_bytes += size
                while self._cache_bytes > self._budget:
                    _, old = self._cache.popitem(last=False)
                    self._cache_bytes -= old[0].nbytes + old[1].nbytes
        return out

    def idf(self, df: int) -> float:
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 of every row (float32; 0 where no term occurs; tombstoned rows carry scores too:
        the caller's mask drops them)."""
        out = np.zeros(self.rows, dtype=np.float32)
        counts = Counter(terms)
        if not counts:
            return out
        hashes = hash_strings(list(counts)).tolist()
        for h, times in zip(hashes, counts.values()):
            rows, w, df = self._postings(h)
            if df <= 0 or not len(rows):
                continue
            c = np.float32(times * self.idf(df))
            if _csc_matvec is not None:
                _csc_matvec(self.rows, 1, np.array([0, len(rows)], np.int32), rows, w, np.array([c], np.float32), out)
            else:
                out[rows] += c * w
        return out

    def top(self, terms: Sequence[str], k: int, mask: np.ndarray) -> list[tuple[int, float]]:
        """(row, score) of the ``k`` best rows in ``mask`` that match a term, best first; equal
        scores in row order (``MemoryBM25.top``)."""
        return top_masked(self.scores(terms), mask, k)


def top_masked(scores: np.ndarray, mask: np.ndarray, k: int, sample_step: int = 16) -> list[tuple[int, float]]:
    """:func:`top_k` of the rows in ``mask`` with a positive score. A long question touches
    nearly every row, so a plain partition of all of them cost as much as the scoring; a threshold
    from every 16th score cuts them to a few times ``k`` first. Exact: when at least ``k`` rows
    reach the threshold, every row of the true top ``k`` (ties included) reaches it too; otherwise
    the plain path runs."""
    n = len(scores)
    if k > 0 and n > 64 * k:
        sample = scores[::sample_step]
        sample = sample[mask[::sample_step] & (sample > 0)]
        m = max(1, (4 * k) // sample_step)
        if len(sample) > m:
            t = np.partition(sample, len(sample) - m)[len(sample) - m]
            ok = scores >= t
            ok &= mask
            idx = np.flatnonzero(ok)
            if len(idx) >= k:
                return top_k(scores, idx, k)
    ok = scores > 0
    ok &= mask
    return top_k(scores, np.flatnonzero(ok), k)


def top_k(scores: np.ndarray, idx: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(row, score) of the ``k`` best of rows ``idx`` (ascending), best first, equal scores in row
    order — also at the k-th place, where ``MemoryBM25.top``'s argpartition picks any of a tie."""
    if k <= 0:
        return []
    if len(idx) > k:
        v = scores[idx]
        kth = v[np.argpartition(-v, k - 1)[k - 1]]
        above, tied = idx[v > kth], idx[v == kth]
        idx = np.concatenate((above, tied[:k - len(above)]))
    idx = idx[np.lexsort((idx, -scores[idx]))]
    return [(int(i), float(scores[i])) for i in idx]
