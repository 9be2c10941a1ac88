"""The representation store of a language: one Parquet file of texts, their analysed tokens and
vectors, under ``$LEXPIPE_HOME/index/representations/<lang>/``, and its in-memory index.

Why its own small store and not rows of the statute index: the texts are not statute text (a hit
must never show an exam question as if it were the law), they belong to an article across all its
versions (an exam question about art. 415 k.c. is about art. 415 in any version), and they are
rebuilt from training material on their own schedule. The file is written to a staging directory
and promoted by one rename, so a reader sees the old store or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.retrieval.memory_bm25 import MemoryBM25

FILE = "representations.parquet"
ARTICLES = "article_vectors.parquet"  # one unit vector per held article: the mean of its chunks' vectors
MANIFEST = "manifest.json"


def store_dir(home: Path, lang: str) -> Path:
    return Path(home) / "index" / "representations" / lang


def schema(dim: int) -> pa.Schema:
    """Columns of the store; ``dim`` 0: a store without vectors (searched by BM25 only)."""
    return pa.schema([
        pa.field("rep_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("article_id", pa.string()),  # null: about an act the corpus does not hold
        pa.field("act_id", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("text", pa.string(), nullable=False),
        pa.field("tokens", pa.string(), nullable=False),  # analysed tokens, space-joined
        *([pa.field("vector", pa.list_(pa.float32(), dim), nullable=False)] if dim else []),
    ])


def write_store(home: Path, lang: str, rows: Sequence[dict], vectors: np.ndarray | None, manifest: dict,
                article_vectors: tuple[list[str], np.ndarray] | None = None) -> Path:
    """Write the store atomically: a staging directory, then one rename over ``current``
    (``vectors`` None: a BM25-only store; ``article_vectors``: (article ids, unit vectors))."""
    if vectors is not None and len(rows) != len(vectors):
        raise ValueError(f"{len(rows)} representations but {len(vectors)} vectors")
    root = store_dir(home, lang)
    root.mkdir(parents=True, exist_ok=True)
    stage = root / f".staging-{os.getpid()}-{time.time_ns()}"
    stage.mkdir()
    try:
        dim = 0 if vectors is None else int(vectors.shape[1]) if len(vectors) else int(manifest.get("dim", 384))
        cols = {name: [r.get(name) for r in rows] for name in ("rep_id", "kind", "article_id", "act_id", "year",
                                                                 "text", "tokens")}
        arrays = {k: pa.array(v, type=schema(dim).field(k).type) for k, v in cols.items()}
        if dim:
            flat = pa.array(np.asarray(vectors, dtype=np.float32).ravel(), type=pa.float32())
            arrays["vector"] = pa.FixedSizeListArray.from_arrays(flat, dim)
        table = pa.table(arrays, schema=schema(dim))
        pq.write_table(table, stage / FILE)
        if article_vectors is not None and len(article_vectors[0]):
            ids, av = article_vectors
            flat_a = pa.array(np.asarray(av, dtype=np.float32).ravel(), type=pa.float32())
            pq.write_table(pa.table({"article_id": pa.array(ids, pa.string()),
                                     "vector": pa.FixedSizeListArray.from_arrays(flat_a, int(av.shape[1]))}),
                           stage / ARTICLES)
        (stage / MANIFEST).write_text(json.dumps({**manifest, "rows": len(rows), "dim": dim}, indent=1,
                                                 ensure_ascii=False) + "\n", encoding="utf-8")
        current = root / "current"
        old = root / f".old-{time.time_ns()}"
        if current.exists():
            current.rename(old)
        stage.rename(current)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return root / "current"


def read_manifest(home: Path, lang: str) -> dict | None:
    p = store_dir(home, lang) / "current" / MANIFEST
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


@dataclass
class RepresentationIndex:
    """The store in memory: BM25 postings of the analysed texts and unit vectors, one row each."""
    rep_ids: list[str]
    kinds: np.ndarray  # object array
    article_ids: np.ndarray  # object array; None for outside rows
    act_ids: np.ndarray
    years: np.ndarray
    texts: list[str]
    tokens: list[str]
    vectors: np.ndarray | None  # unit rows, float32; None in a BM25-only store
    manifest: dict = field(default_factory=dict)
    article_pos: dict[str, int] = field(default_factory=dict)  # article id → row of ``article_vectors``
    article_vectors: np.ndarray | None = None  # unit mean chunk vector per held article
    _bm25: MemoryBM25 | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, path: Path) -> "RepresentationIndex":
        path = Path(path)
        t = pq.read_table(path / FILE)
        n = t.num_rows
        vecs = None
        if "vector" in t.column_names:
            vecs = t["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(n, -1).astype(np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1.0, norms)
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8")) if (path / MANIFEST).exists() else {}
        pos, avecs = {}, None
        if (path / ARTICLES).exists():
            a = pq.read_table(path / ARTICLES)
            pos = {aid: i for i, aid in enumerate(a["article_id"].to_pylist())}
            avecs = a["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(a.num_rows, -1)
            avecs = avecs.astype(np.float32)
        return cls(t["rep_id"].to_pylist(), np.asarray(t["kind"].to_pylist(), dtype=object),
                   np.asarray(t["article_id"].to_pylist(), dtype=object), np.asarray(t["act_id"].to_pylist(), dtype=object),
                   np.asarray([y if y is not None else -1 for y in t["year"].to_pylist()]), t["text"].to_pylist(),
                   t["tokens"].to_pylist(), vecs, manifest, pos, avecs)

    @classmethod
    def open(cls, home: Path, lang: str) -> "RepresentationIndex | None":
        """The language's current store, or None when the pipeline has not built one."""
        path = store_dir(home, lang) / "current"
        return cls.load(path) if (path / FILE).exists() else None

    def __len__(self) -> int:
        return len(self.rep_ids)

    def bm25(self) -> MemoryBM25:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = MemoryBM25.from_token_strings(self.tokens)
            return self._bm25

    def mask(self, kinds: Iterable[str] | None = None, acts: Iterable[str] | None = None,
             exclude: np.ndarray | None = None, articles_only: bool = True) -> np.ndarray:
        """Rows of ``kinds`` (all when None) about articles of ``acts`` (any when None); ``exclude`` a
        boolean row mask to leave out (a training question's own fold)."""
        m = np.ones(len(self), dtype=bool)
        if kinds is not None:
            m &= np.isin(self.kinds, list(kinds))
        if articles_only:
            m &= self.article_ids != None  # noqa: E711 (elementwise on an object array)
        if acts is not None:
            m &= np.isin(self.act_ids, list(acts))
        if exclude is not None:
            m &= ~exclude
        return m

    def dense_scores(self, query_vector: np.ndarray) -> np.ndarray:
        if self.vectors is None:
            raise ValueError("this representation store holds no vectors")
        q = np.asarray(query_vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        return np.einsum("ij,j->i", self.vectors, q)  # no BLAS thread pool (see table_context.exact_dense)

    def article_scores(self, query_vector: np.ndarray, articles: Sequence[str]) -> list[tuple[str, float]]:
        """Cosine of the query to each of ``articles``' mean chunk vector, best first (articles
        without a vector left out): a whole-article view the paragraph-level dense leg lacks."""
        if self.article_vectors is None:
            return []
        known = [a for a in articles if a in self.article_pos]
        if not known:
            return []
        q = np.asarray(query_vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        s = np.einsum("ij,j->i", self.article_vectors[[self.article_pos[a] for a in known]], q)
        return [(known[i], float(s[i])) for i in np.argsort(-s, kind="stable")]

    def best_per_article(self, scores: np.ndarray, mask: np.ndarray, k: int) -> list[tuple[str, float]]:
        """(article, its best row score) for the ``k`` best articles among the rows of ``mask`` with
        a positive score."""
        idx = np.flatnonzero(mask & (scores > 0))
        if not len(idx):
            return []
        idx = idx[np.argsort(-scores[idx], kind="stable")]
        out: dict[str, float] = {}
        for i in idx:
            a = self.article_ids[i]
            if a not in out:
                out[a] = float(scores[i])
                if len(out) == k:
                    break
        return list(out.items())
