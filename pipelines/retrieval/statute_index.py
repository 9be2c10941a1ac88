"""A changeset's publications into the search index of their language, in one switch.

The index step of every statute refresh (Dagster ``<jur>/statutes/search_index``, the Prefect
flows, ``lexpipe load`` / ``replay``): the (act, version) pairs the changeset published
(``corpus/<jur>/.changesets/<key>.json``) are added to the language's index — one index for every
act and version of the language (:mod:`pipelines.retrieval.language_index`: rows carried across
versions when unchanged, closed when gone) — and made visible by one generation switch, so a
reader sees the changeset whole or not at all.

It also catches up: any published version of the changeset's acts the index does not hold yet
(a run killed after publishing, before indexing) is added in version order first, so the index
converges on the corpus whatever was interrupted.

Analysis (the analyser's terms of every chunk) is the cost of a large changeset: ~137 M
characters for the whole German corpus. It runs in worker processes (two on two cores) when a
changeset has more than :data:`PARALLEL_MIN_CHUNKS` chunks; the memoised analyser
(:mod:`pipelines.retrieval.analyzers`) makes repeated words free.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa

from core.layout import Layout
from pipelines.statutes.changeset_record import published_versions
from pipelines.statutes.store import CorpusStore

PARALLEL_MIN_CHUNKS = 20_000


def index_root(layout: Layout) -> Path:
    return layout.home / "index" / "embedded"


def statute_index_root(layout: Layout, lang: str) -> Path:
    """``index/embedded/statutes_<lang>``: the language's statute index."""
    return index_root(layout) / f"statutes_{lang}"


@dataclass
class IndexChangesetReport:
    changeset: str
    language: str
    backend: str
    versions: int = 0  # act versions written (the changeset's and any caught up)
    caught_up: int = 0
    chunks: int = 0
    chunks_carried_over: int = 0  # rows the index held open: kept without analysing them again
    generation: int = 0
    rows_added: int = 0
    rows_closed: int = 0
    rows_kept: int = 0
    rows: int = 0
    vectors_added: int = 0
    analysis_seconds: float = 0.0
    commit_seconds: float = 0.0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def metadata(self) -> dict:
        return {"changeset": self.changeset, "language": self.language, "backend": self.backend,
                "act_versions": self.versions, "caught_up": self.caught_up, "chunks": self.chunks,
                "chunks_analysed": self.chunks - self.chunks_carried_over,
                "generation": self.generation, "rows_added": self.rows_added, "rows_closed": self.rows_closed,
                "rows_kept": self.rows_kept, "rows_in_index": self.rows, "vectors_added": self.vectors_added,
                "analysis_seconds": round(self.analysis_seconds, 2), "commit_seconds": round(self.commit_seconds, 2),
                "seconds": round(self.seconds, 2), **self.extra}


def _analyse_part(args: tuple[str, list[str]]) -> list[str]:
    """Worker: the analysed terms of texts, space-joined (compact to send back)."""
    from pipelines.retrieval.analyzers import get_analyzer

    lang, texts = args
    a = get_analyzer(lang)
    return [" ".join(a.analyze(t)) for t in texts]


def analyse_chunks(tables: list[pa.Table], lang: str, *, workers: int = 2) -> list[list[list[str]]]:
    """Terms of ``heading_path + "\\n" + text`` of every chunk of each table (what the index and
    today's embedded backend analyse), in worker processes when there are many."""
    from pipelines.retrieval.analyzers import get_analyzer

    texts = [[f"{h}\n{t}" for h, t in zip(tb["heading_path"].to_pylist(), tb["text"].to_pylist())] for tb in tables]
    flat = [t for part in texts for t in part]
    if workers > 1 and len(flat) >= PARALLEL_MIN_CHUNKS:
        n = max(1, len(flat) // (workers * 8))
        parts = [flat[i:i + n] for i in range(0, len(flat), n)]
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            joined = [s for part in pool.map(_analyse_part, [(lang, p) for p in parts]) for s in part]
        terms = [s.split(" ") if s else [] for s in joined]
    else:
        a = get_analyzer(lang)
        terms = [a.analyze(t) for t in flat]
    out, i = [], 0
    for part in texts:
        out.append(terms[i:i + len(part)])
        i += len(part)
    return out


def _with_carried(terms: list[list[str]], kept: np.ndarray) -> list[list[str]]:
    """``terms`` of the analysed chunks spread back over a version's chunks; carried-over ones get
    none (the writer keeps their held row and never reads them)."""
    if not kept.any():
        return terms
    it = iter(terms)
    return [[] if k else next(it) for k in kept.tolist()]


def pending_versions(layout: Layout, acts: list[str], indexed: Callable[[str], list[str]]) -> list[tuple[str, str]]:
    """(act, version) of every published version of ``acts`` the index does not hold, oldest first
    per act."""
    store = CorpusStore(layout)
    out = []
    for act in acts:
        have = set(indexed(act))
        out += [(act, v) for v in store.published_versions(act) if v not in have]
    return out


def index_changeset(layout: Layout, jurisdiction: str, key: str, *, search=None, lang: str | None = None,
                    workers: int = 2, log: Callable[[str], None] | None = None) -> IndexChangesetReport:
    """Write what changeset ``key`` of ``jurisdiction`` published into the language's index and
    switch it (see the module docstring). ``search``: the ``SearchConfig`` resource (Elasticsearch
    when it says so, else the embedded index)."""
    from pipelines.retrieval.languages import language_of

    t0 = time.perf_counter()
    pairs = published_versions(layout, jurisdiction, key)
    lang = lang or (language_of(pairs[0][0]) if pairs else jurisdiction)
    acts = sorted({a for a, _ in pairs})
    backend = getattr(search, "backend_name", "embedded") if search is not None else "embedded"
    report = IndexChangesetReport(key, lang, backend)
    if backend == "elasticsearch":
        from pipelines.retrieval.elasticsearch.publication import publish_changeset

        return publish_changeset(layout, lang, acts, search=search, report=report, log=log,
                                 analyse=lambda tables, lg: analyse_chunks(tables, lg, workers=workers))
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.language_index import LanguageIndex

    index = LanguageIndex(statute_index_root(layout, lang), lang)
    snap = index.snapshot()
    todo = pending_versions(layout, acts, snap.versions)
    report.caught_up = len([p for p in todo if p not in set(pairs)])
    store = CorpusStore(layout)
    tables = [store.read(a, v, "chunks", published_only=True) for a, v in todo]
    report.chunks = sum(t.num_rows for t in tables)
    writer = index.writer(get_analyzer(lang))
    try:
        # analyse only what the writer will add: rows an act holds open carry over unread
        first = {}
        for i, (act, _v) in enumerate(todo):
            first.setdefault(act, i)
        kept = [writer.carried_over(act, v, t) if first[act] == i else np.zeros(t.num_rows, bool)
                for i, ((act, v), t) in enumerate(zip(todo, tables))]
        report.chunks_carried_over = int(sum(k.sum() for k in kept))
        ta = time.perf_counter()
        fresh = [t.filter(pa.array(~k)) if k.any() else t for t, k in zip(tables, kept)]
        analysed_fresh = analyse_chunks(fresh, lang, workers=workers) if tables else []
        analysed = [_with_carried(terms, k) for terms, k in zip(analysed_fresh, kept)]
        report.analysis_seconds = time.perf_counter() - ta
        if log:
            log(f"{key}: {len(todo)} act versions, {report.chunks - report.chunks_carried_over} of {report.chunks} "
                f"chunks analysed in {report.analysis_seconds:.1f} s ({report.chunks_carried_over} carried over)")
        tc = time.perf_counter()
        for (act, version), table, terms in zip(todo, tables, analysed):
            writer.add_version(act, version, table, terms)
        done = writer.commit()
    except BaseException:
        writer.abort()
        raise
    report.commit_seconds = time.perf_counter() - tc
    report.versions = len(todo)
    report.generation = done.generation
    report.rows_added, report.rows_closed, report.rows_kept = done.rows_added, done.rows_closed, done.rows_kept
    report.rows = done.live_rows if done.changed else index.snapshot().n_live
    report.vectors_added = done.vectors_added
    report.seconds = time.perf_counter() - t0
    if log:
        log(f"{key}: generation {done.generation}: {done.rows_added} rows added, {done.rows_closed} closed, "
            f"{done.rows_kept} kept; {done.live_rows} live rows in the {lang} index ({report.seconds:.1f} s)")
    return report
