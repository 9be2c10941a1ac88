"""Embeddings cached by (encoder id, chunk content hash): a corpus refresh re-embeds only chunks
whose text (or heading path) changed. Stored as Parquet shards, one per write, under
``$LEXPIPE_HOME/cache/embeddings/<encoder id>/`` — append-only, so a crash loses at most a batch."""

from __future__ import annotations

import io
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from core.atomic import atomic_write_bytes
from pipelines.retrieval.encoders import Encoder


@dataclass
class EmbedStats:
    chunks: int
    cached: int
    computed: int
    seconds: float

    @property
    def chunks_per_s(self) -> float:
        return self.computed / self.seconds if self.computed and self.seconds else 0.0


class EmbeddingCache:
    def __init__(self, root: Path, encoder_id: str, dim: int):
        self.dir = Path(root) / encoder_id
        self.dim = dim
        self._mem: dict[str, np.ndarray] | None = None

    def _load(self) -> dict[str, np.ndarray]:
        if self._mem is None:
            self._mem = {}
            for shard in sorted(self.dir.glob("*.parquet")) if self.dir.exists() else []:
                t = pq.read_table(shard)
                vecs = t["vector"].combine_chunks().flatten().to_numpy().reshape(-1, self.dim)
                for h, v in zip(t["content_hash"].to_pylist(), vecs):
                    self._mem[h] = v
        return self._mem

    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        mem = self._load()
        return {h: mem[h] for h in hashes if h in mem}

    def put_many(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        if not len(hashes):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        table = pa.table({"content_hash": list(hashes),
                          "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), self.dim)})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        atomic_write_bytes(self.dir / f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.parquet", buf.getvalue())
        mem = self._load()
        for h, v in zip(hashes, vectors):
            mem[h] = v

    def __len__(self) -> int:
        return len(self._load())


def passage_text(heading_path: str, text: str) -> str:
    """What the encoder sees for a chunk: its heading path gives context a bare § lacks."""
    return f"{heading_path}\n{text}" if heading_path else text


def embed_chunks(chunks: pa.Table, encoder: Encoder, cache: EmbeddingCache, *, batch_size: int = 32,
                 progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, EmbedStats]:
    """Vectors aligned with ``chunks`` rows; only cache misses go through the encoder."""
    t0 = time.perf_counter()
    hashes = chunks["content_hash"].to_pylist()
    found = cache.get_many(hashes)
    missing = [i for i, h in enumerate(hashes) if h not in found]
    headings, texts = chunks["heading_path"].to_pylist(), chunks["text"].to_pylist()
    done = 0
    for k in range(0, len(missing), batch_size):
        idx = missing[k:k + batch_size]
        vecs = encoder.encode_passages([passage_text(headings[i], texts[i]) for i in idx])
        cache.put_many([hashes[i] for i in idx], vecs)
        done += len(idx)
        if progress:
            progress(done, len(missing))
    found = cache.get_many(hashes)
    out = np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, encoder.dim), np.float32)
    return out, EmbedStats(len(hashes), len(hashes) - len(missing), len(missing), time.perf_counter() - t0)
