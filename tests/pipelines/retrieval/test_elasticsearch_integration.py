"""Elasticsearch-only mechanics against a real Elasticsearch 9.1+ cluster (``ELASTICSEARCH_URL``).

What every backend must do (retrievers, filters, versions, ``as_of``, 4xx errors, idempotent
reloads) is checked on this cluster by test_backend_conformance.py; this module keeps what only
Elasticsearch has: the language index as the cluster stores it (mapping, the alias and its
generation filter), publications seen by readers only after the swap, a rejected document failing
a publication before the swap, a killed writer's leftovers discarded by the next one, the cleanup
of old generations, rows without vectors and their backfill (a closed copy keeps its vector:
``_source.exclude_vectors: false``), a rebuild into a new physical index, server-side RRF, German
with the cluster's ``german`` analyser and the court-decision collection. A few real Kodeks
cywilny articles, the project analyser and hashed vectors; every index lives under a random prefix
and is deleted afterwards.
"""

from __future__ import annotations

import datetime as dt
import os
import time
import uuid

import numpy as np
import pyarrow as pa
import pytest

ES_URL = os.environ.get("ELASTICSEARCH_URL")
if not ES_URL:
    pytest.skip("ELASTICSEARCH_URL not set: no Elasticsearch cluster to test against", allow_module_level=True)

from elasticsearch import ApiError  # noqa: E402

from pipelines.retrieval.analyzers import get_analyzer  # noqa: E402
from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend  # noqa: E402
from pipelines.retrieval.elasticsearch.errors import IndexLoadError, IndexLocked  # noqa: E402
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings  # noqa: E402
from pipelines.retrieval.encoders import HashingEncoder  # noqa: E402
from pipelines.retrieval.interface import Filters, SearchError, SearchRequest  # noqa: E402
from schemas import elasticsearch as es_schema  # noqa: E402

ENC = HashingEncoder()
V1, V2, V3 = "2025-11-13", "2026-01-01", "2026-02-01"

# Real article texts (version 2025-11-13).
ARTICLES = [
    ("pl:kc:art:1", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 1",
     "Kodeks niniejszy reguluje stosunki cywilnoprawne między osobami fizycznymi i osobami prawnymi.", "in_force"),
    ("pl:kc:art:2", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 2", "(uchylony)", "repealed"),
    ("pl:kc:art:3", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 3",
     "Ustawa nie ma mocy wstecznej, chyba że to wynika z jej brzmienia lub celu.", "in_force"),
    ("pl:kc:art:22^1", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ I Osoby fizyczne › Art. 22¹",
     "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej niezwiązanej "
     "bezpośrednio z jej działalnością gospodarczą lub zawodową.", "in_force"),
    ("pl:kc:art:33", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ II Osoby prawne › Art. 33",
     "Osobami prawnymi są Skarb Państwa i jednostki organizacyjne, którym przepisy szczególne przyznają "
     "osobowość prawną.", "in_force"),
]


def chunks(version: str, marker: str = "", marked: tuple[int, ...] = (0, 1, 2, 3, 4)) -> pa.Table:
    return pa.table({
        "chunk_id": [f"{a}#0" for a, *_ in ARTICLES], "article_id": [a for a, *_ in ARTICLES],
        "act_id": ["pl:kc"] * len(ARTICLES), "version": [dt.date.fromisoformat(version)] * len(ARTICLES),
        "chunk_index": [0] * len(ARTICLES), "heading_path": [h for _, h, _, _ in ARTICLES],
        "text": [t + (f" {marker}" if marker and i in marked else "") for i, (_, _, t, _) in enumerate(ARTICLES)],
        "status": [s for *_, s in ARTICLES]})


def vectors(table: pa.Table):
    return ENC.encode_passages(table["text"].to_pylist())


@pytest.fixture
def backend_factory():
    prefix = f"lexpipe-it-{uuid.uuid4().hex[:8]}"
    made: list[ElasticsearchBackend] = []

    def make(lang: str = "pl", **overrides) -> ElasticsearchBackend:
        opts = dict(url=ES_URL, index_prefix=prefix, number_of_replicas=0, bulk_chunk_size=2,
                    bulk_initial_backoff_s=0.5, vector_dims=ENC.dim)
        opts.update(overrides)
        b = ElasticsearchBackend.from_settings(lang, ElasticsearchSettings(**opts),
                                               encode_query=lambda q: ENC.encode_queries([q])[0],
                                               analyzer=get_analyzer(lang), encoder_id=ENC.id)
        made.append(b)
        return b

    yield make
    if made:
        client = made[0].client
        names = list(client.indices.get(index=f"{prefix}-*", allow_no_indices=True, ignore_unavailable=True).body)
        if names:
            client.indices.delete(index=names, ignore_unavailable=True)


def served(backend) -> tuple[str, int]:
    s = backend.lifecycle.served()
    return s.index, s.generation


def count(backend, query: dict) -> int:
    index, _ = served(backend)
    return backend.client.count(index=index, query=query)["count"]


def test_the_language_index_as_stored(backend_factory):
    backend = backend_factory()
    table = chunks(V1)
    report = backend.build("pl:kc", V1, table, vectors(table))
    alias = backend.serving_pointer("pl:kc")
    assert report.table == f"{alias}-1" and report.documents == table.num_rows
    stored = backend.client.indices.get_alias(name=alias).body
    assert list(stored) == [report.table]
    flt = stored[report.table]["aliases"][alias]["filter"]
    assert {"range": {"gen_from": {"lte": 1}}} in flt["bool"]["filter"]  # generation 1, as the cluster keeps it
    # through the alias: exactly the chunk documents of generation 1 (no act entry, no lease)
    assert backend.client.count(index=alias)["count"] == table.num_rows

    mapping = backend.client.indices.get_mapping(index=report.table).body[report.table]["mappings"]
    props = mapping["properties"]
    vec = props["vector"]
    assert vec["type"] == "dense_vector" and vec["dims"] == ENC.dim and vec["similarity"] == "cosine"
    assert vec["index_options"]["type"] == "int8_hnsw"
    assert props["text"]["analyzer"] == ("polish" if backend.lifecycle.detect_stempel() else "lexpipe_plain")
    assert props["version_from"]["type"] == "keyword" and props["valid_from"]["type"] == "date"
    assert mapping["_meta"]["lexpipe"]["schema_version"] == es_schema.SCHEMA_VERSION
    assert mapping["_meta"]["lexpipe"]["encoder"] == ENC.id
    tokens = backend.client.indices.analyze(index=report.table, field="text_bigrams", text="Ab_cd ef_gh").body["tokens"]
    assert [t["token"] for t in tokens] == ["Ab_cd", "ef_gh"]  # whitespace only, case kept
    hits = backend.search(SearchRequest(ARTICLES[3][2], retriever="bm25"))
    assert hits[0].article_id == "pl:kc:art:22^1" and hits[0].version == V1
    backend.search(SearchRequest('"*:( OR AND title:x', retriever="bm25"))  # the injection-looking query is just text


def test_versions_generations_and_a_failed_publication(backend_factory):
    backend = backend_factory(keep_generations=1)
    backend.build("pl:kc", V1, chunks(V1), vectors(chunks(V1)))
    t2 = chunks(V2, marker="xqzmarker", marked=(3,))
    backend.build("pl:kc", V2, t2, vectors(t2))
    assert served(backend)[1] == 2 and backend.versions("pl:kc") == [V1, V2]
    assert backend.search(SearchRequest("xqzmarker", retriever="bm25"))[0].article_id == "pl:kc:art:22^1"
    assert backend.search(SearchRequest("xqzmarker", retriever="bm25", filters=Filters(version=V1))) == []
    assert backend.search(SearchRequest("xqzmarker", retriever="bm25", filters=Filters(as_of=dt.date(2025, 12, 31)))) == []
    old = backend.search(SearchRequest(ARTICLES[3][2], retriever="bm25", filters=Filters(as_of=dt.date(2025, 12, 31))))
    assert old[0].version == V1 and "xqzmarker" not in old[0].text
    # the closed copy of art. 22^1 carries its vector: read back with exclude_vectors: false
    closed = backend.client.search(index=served(backend)[0], size=1, source={"exclude_vectors": False}, query={
        "bool": {"filter": [{"term": {"chunk_id": "pl:kc:art:22^1#0"}}, {"term": {"version_to": V2}},
                            {"term": {"gen_from": 2}}]}}).body["hits"]["hits"]
    assert closed and len(closed[0]["_source"]["vector"]) == ENC.dim

    # a rejected document (an object into a keyword field): the publication fails before the swap
    bad = chunks(V3, marker="zzq")
    with backend.writer() as w:
        w.add_version("pl:kc", V3, bad, vectors=vectors(bad))
        staged = next(r for r in w._dirty if r.ref.state == "buffered")
        staged.ref.doc["number"] = {"not": "a keyword"}  # the cluster rejects this one item
        with pytest.raises(IndexLoadError) as err:
            w.commit()
    assert err.value.step == "bulk" and served(backend)[1] == 2
    assert count(backend, {"range": {"gen_from": {"gt": 2}}}) == 0  # nothing staged is left
    assert count(backend, {"range": {"gen_to": {"gt": 2, "lt": 2**31 - 1}}}) == 0  # nothing stays retired
    t3 = chunks(V3, marker="zzq", marked=(0,))
    report = backend.publish([("pl:kc", V3, t3, None, vectors(t3))])
    assert report.generation == 3 and report.documents_cleaned > 0  # keep_generations=1: gen_to <= 2 deleted
    assert count(backend, {"range": {"gen_to": {"lte": 2}}}) == 0


def test_readers_see_the_old_generation_until_the_swap(backend_factory):
    backend = backend_factory(flush_docs=1)
    backend.build("pl:kc", V1, chunks(V1), vectors(chunks(V1)))
    w = backend.writer()
    t2 = chunks(V2, marker="qqmarker")
    w.add_version("pl:kc", V2, t2, vectors=vectors(t2))
    backend.client.indices.refresh(index=served(backend)[0])  # staged documents searchable: still invisible
    assert backend.search(SearchRequest("qqmarker", retriever="bm25")) == []
    assert backend.serving_version("pl:kc") == V1
    w.commit()
    assert {h.version for h in backend.search(SearchRequest("qqmarker", retriever="bm25"))} == {V2}


def test_a_killed_writer_is_taken_over_and_discarded(backend_factory):
    backend = backend_factory(lock_ttl_s=1.0)
    backend.build("pl:kc", V1, chunks(V1), vectors(chunks(V1)))
    killed = backend.writer()
    killed.add_version("pl:kc", V2, chunks(V2, marker="killed"))
    killed._flush()
    with pytest.raises(IndexLocked):
        backend_factory(lock_ttl_s=600.0).writer()
    time.sleep(1.5)
    with backend.writer() as w:
        assert not w.commit().changed
    assert count(backend, {"range": {"gen_from": {"gt": 1}}}) == 0
    assert backend.search(SearchRequest("killed", retriever="bm25")) == []


def test_rows_without_vectors_and_the_backfill(backend_factory):
    backend = backend_factory()
    table = chunks(V1)
    backend.build("pl:kc", V1, table, None)
    assert backend.search(SearchRequest(ARTICLES[3][2], retriever="dense")) == []  # no vector yet
    assert backend.search(SearchRequest(ARTICLES[3][2], retriever="hybrid"))[0].article_id == "pl:kc:art:22^1"
    rows = [h["_source"] for h in backend.client.search(
        index=served(backend)[0], size=10, query={"term": {"doc_kind": "chunk"}}).body["hits"]["hits"]]
    with backend.writer() as w:  # the embedding backfill: vectors by content hash
        hashes = [r["content_hash"] for r in rows]
        w.set_vectors(hashes, ENC.encode_passages([r["text"] for r in rows]), encoder_id=ENC.id)
        report = w.commit()
    assert report.vectors_added == len(hashes) and report.generation == 2
    assert len(backend.search(SearchRequest("osoba", retriever="dense", k=10))) == len(hashes)


def test_a_rebuild_moves_the_alias_to_a_new_physical_index(backend_factory):
    backend = backend_factory()
    first = backend.build("pl:kc", V1, chunks(V1), vectors(chunks(V1))).table
    with backend.writer(rebuild=True) as w:
        w.add_version("pl:kc", V1, chunks(V1))
        report = w.commit()
    assert report.index != first and not backend.client.indices.exists(index=first)
    assert served(backend) == (report.index, 2)
    hits = backend.search(SearchRequest(ARTICLES[3][2], retriever="dense"))
    assert hits and hits[0].article_id == "pl:kc:art:22^1"  # the vectors came back by content hash


def test_server_side_rrf_when_licensed(backend_factory):
    backend = backend_factory(server_side_rrf=True)
    backend.build("pl:kc", V1, chunks(V1), vectors(chunks(V1)))
    try:
        hits = backend.search(SearchRequest(ARTICLES[3][2], retriever="hybrid"))
    except ApiError as exc:
        if exc.meta.status == 403 or "license" in str(exc).lower():
            pytest.skip(f"cluster licence does not allow the rrf retriever: {exc}")
        raise
    assert hits[0].article_id == "pl:kc:art:22^1" and hits[0].sources == {"hybrid": 1}


def test_german_statutes_and_decisions_with_the_german_analyser(backend_factory, sample_dir, monkeypatch):
    from pipelines.retrieval.index_build import open_elasticsearch_backend
    from pipelines.statutes.de.build import build_german_chunks
    from pipelines.statutes.de.markdown import parse_markdown
    from pipelines.statutes.de.tables import articles_table

    gg = parse_markdown(sample_dir / "de" / "gesetze" / "gg.md")
    arts = articles_table(gg)
    table = build_german_chunks(arts.filter(pa.array([n in {"1", "2", "3", "4", "5"} for n in arts["number"].to_pylist()])),
                                max_tokens=256)
    prefix = backend_factory().settings.index_prefix  # the fixture deletes <prefix>-* afterwards
    monkeypatch.setenv("LEXPIPE_ES_INDEX_PREFIX", prefix)
    monkeypatch.setenv("LEXPIPE_ES_NUMBER_OF_REPLICAS", "0")
    backend = open_elasticsearch_backend(ES_URL, act_id="de:gg", encoder=ENC)  # as the index assets open it
    report = backend.build("de:gg", gg.version.isoformat(), table, ENC.encode_passages(
        [f"{h}\n{t}" for h, t in zip(table["heading_path"].to_pylist(), table["text"].to_pylist())]))
    assert report.table == f"{prefix}-statutes-de-1"
    mapping = backend.client.indices.get_mapping(index=report.table).body[report.table]["mappings"]
    assert mapping["properties"]["text"]["analyzer"] == "german" and mapping["_meta"]["lexpipe"]["lang"] == "de"
    tokens = [t["token"] for t in backend.client.indices.analyze(
        index=report.table, field="text", text="Die Würde des Menschen").body["tokens"]]
    assert tokens and not {"die", "des"} & set(tokens) and all(t.isascii() for t in tokens)
    hits = backend.search(SearchRequest("Die Würde des Menschen ist unantastbar", k=3, retriever="bm25",
                                        filters=Filters(act_ids=("de:gg",))))
    assert hits[0].article_id == "de:gg:art:1" and hits[0].act_id == "de:gg"
    with pytest.raises(SearchError, match="not a 'de' act"):
        backend.search(SearchRequest("Würde", retriever="bm25", filters=Filters(act_ids=("pl:kc",))))
    cases = pa.table({"chunk_id": ["de:case:bgh-1#0"], "article_id": ["de:case:bgh-1"], "act_id": ["de:cases"],
                      "version": [dt.date(2018, 4, 10)], "chunk_index": [0],
                      "heading_path": ["Bundesgerichtshof · Beschluss vom 10.04.2018"],
                      "text": ["Die Anhörungsrüge wird zurückgewiesen."], "status": ["decided"]})
    assert backend.build("de:cases", "2018-04-10", cases, vectors(cases)).table == f"{prefix}-cases-de-1"
    assert backend.acts() == ["de:cases", "de:gg"]
    found = backend.search(SearchRequest("Anhörungsrüge", retriever="bm25", filters=Filters(act_ids=("de:cases",))))
    assert [h.article_id for h in found] == ["de:case:bgh-1"]
