"""A changeset's act versions into the Elasticsearch index of their language, as ONE publication
(``statute_index.index_changeset``'s Elasticsearch branch: the same steps as the embedded one).

What it writes: every published version of the changeset's acts the index does not hold yet
(a run killed after publishing, before indexing, is caught up), oldest first per act, analysed
once (by ``analyse`` — ``statute_index`` passes its ``analyse_chunks``, worker processes for large
changesets — else in this process by the writer), with the vectors
the embedding cache already has (``cache/embeddings/<encoder>``, keyed by content hash) and none
for the rest — the embedding backfill adds them later (``ElasticsearchIndexWriter.set_vectors``)
and hybrid search uses kNN where they exist, BM25 everywhere. The rows of the changeset's held
acts are read in a few scans (``prefetch``) before the versions are added.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import pyarrow as pa

from core.layout import Layout

# (tables, language) -> per table, per chunk, its analysed terms
Analyse = Callable[[list[pa.Table], str], list[list[list[str]]]]


def cached_vectors(layout: Layout, encoder, tables: Sequence[pa.Table]) -> list[list]:
    """Per table, per chunk: its cached vector (by content hash) or None."""
    from pipelines.retrieval.embedding_cache import EmbeddingCache
    from pipelines.retrieval.index_build import embedding_root

    cache = EmbeddingCache(embedding_root(layout), encoder.id, encoder.dim)
    out = []
    for t in tables:
        hashes = t["content_hash"].to_pylist() if "content_hash" in t.column_names else [None] * t.num_rows
        found = cache.get_many([h for h in hashes if h])
        out.append([found.get(h) if h else None for h in hashes])
    return out


def pending_versions(store, acts: Sequence[str], indexed: Callable[[str], list[str]]) -> list[tuple[str, str]]:
    """(act, version) of every published version of ``acts`` the index does not hold, oldest first."""
    out = []
    for act in acts:
        have = set(indexed(act))
        out += [(act, v) for v in store.published_versions(act) if v not in have]
    return out


def publish_changeset(layout: Layout, lang: str, acts: Sequence[str], *, search, report: Any,
                      log: Callable[[str], None] | None = None, analyse: Analyse | None = None) -> Any:
    """Publish what ``acts`` have published and the language index does not hold (see the module
    docstring); ``search`` is the ``SearchConfig`` resource (cluster URL, encoder, versions kept),
    ``report`` the caller's ``IndexChangesetReport`` (filled in and returned)."""
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.statutes.changeset_record import published_versions
    from pipelines.statutes.store import CorpusStore

    t0 = time.perf_counter()
    acts = sorted(acts)
    if not acts:
        report.seconds = time.perf_counter() - t0
        return report
    encoder = get_encoder(search.encoder)
    backend = search.open_backend(layout, act_id=acts[0], encoder=encoder)
    snap = backend.snapshot()
    store = CorpusStore(layout)
    todo = pending_versions(store, acts, snap.versions)
    pairs = set(published_versions(layout, acts[0].split(":", 1)[0], report.changeset))
    report.caught_up = len([p for p in todo if p not in pairs])
    tables = [store.read(a, v, "chunks", published_only=True) for a, v in todo]
    report.chunks = sum(t.num_rows for t in tables)
    ta = time.perf_counter()
    analysed = analyse(tables, lang) if analyse is not None and tables else [None] * len(tables)
    vectors = cached_vectors(layout, encoder, tables) if tables else []
    report.analysis_seconds = time.perf_counter() - ta
    if log:
        log(f"{report.changeset}: {len(todo)} act versions, {report.chunks} chunks analysed in "
            f"{report.analysis_seconds:.1f} s ({sum(v is not None for vs in vectors for v in vs)} cached vectors)")
    collection = backend.collection_of(acts[0])
    if not todo:  # the index holds every published version already: no publication
        report.generation = snap.generations.get(collection, 0)
        report.seconds = time.perf_counter() - t0
        return report
    tc = time.perf_counter()
    with backend.writer(collection) as w:
        w.prefetch(acts)
        for (act, version), table, terms, vecs in zip(todo, tables, analysed, vectors):
            w.add_version(act, version, table, terms, vectors=vecs)
        done = w.commit()
    report.commit_seconds = time.perf_counter() - tc
    report.versions = len(todo)
    report.generation = done.generation
    report.rows_added, report.rows_closed, report.rows_kept = done.rows_added, done.rows_closed, done.rows_kept
    report.rows, report.vectors_added = done.live_rows, done.vectors_added
    report.extra.update({"index": done.index, "alias": done.alias, "documents_written": done.documents_written,
                         "documents_retired": done.documents_retired, "documents_cleaned": done.documents_cleaned})
    report.seconds = time.perf_counter() - t0
    if log:
        log(f"{report.changeset}: generation {done.generation} of {done.alias}: {done.rows_added} rows added, "
            f"{done.rows_closed} closed, {done.rows_kept} kept; {done.live_rows} visible documents "
            f"({report.seconds:.1f} s)")
    return report
