"""Elasticsearch-only mechanics against a real Elasticsearch 9 cluster (``ELASTICSEARCH_URL``).

What every backend must do (retrievers, filters, versions, ``as_of``, 4xx errors, idempotent
reloads) is checked on this cluster by test_backend_conformance.py; this module keeps what only
Elasticsearch has: the mapping as the cluster stores it, alias moves, retention, failure cleanup
and server-side RRF. A few real Kodeks cywilny articles, the project analyser and hashed
vectors; every index lives under a random prefix and is deleted afterwards. One German case: the
first articles of the Grundgesetz from the sample (``de/gesetze/gg.md``) in a ``de:gg`` index
opened like the index assets open it, analysed with the cluster's built-in ``german`` analyser.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from typing import Any

import pyarrow as pa
import pytest

ES_URL = os.environ.get("ELASTICSEARCH_URL")
if not ES_URL:
    pytest.skip("ELASTICSEARCH_URL not set: no Elasticsearch cluster to test against", allow_module_level=True)

from elasticsearch import ApiError  # noqa: E402

from pipelines.retrieval.analyzers import get_analyzer  # noqa: E402
from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend  # noqa: E402
from pipelines.retrieval.elasticsearch.errors import IndexLoadError  # noqa: E402
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings  # noqa: E402
from pipelines.retrieval.elasticsearch.documents import chunk_documents  # noqa: E402
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


def chunks(version: str, marker: str = "") -> pa.Table:
    return pa.table({
        "chunk_id": [f"{a}#0" for a, *_ in ARTICLES], "article_id": [a for a, *_ in ARTICLES],
        "act_id": ["pl:kc"] * len(ARTICLES), "version": [dt.date.fromisoformat(version)] * len(ARTICLES),
        "chunk_index": [0] * len(ARTICLES), "heading_path": [h for _, h, _, _ in ARTICLES],
        "text": [t + (f" {marker}" if marker else "") for _, _, t, _ in ARTICLES],
        "status": [s for *_, s in ARTICLES]})


def vectors(table: pa.Table):
    return ENC.encode_passages(table["text"].to_pylist())


def documents(version: str) -> list[dict[str, Any]]:
    table = chunks(version)
    return list(chunk_documents(table, vectors(table), get_analyzer("pl")))


@pytest.fixture
def backend_factory():
    prefix = f"lexpipe-it-{uuid.uuid4().hex[:8]}"
    made: list[ElasticsearchBackend] = []

    def make(act: str = "pl:kc", **overrides) -> ElasticsearchBackend:
        lang = act.split(":", 1)[0]
        opts = dict(url=ES_URL, index_prefix=prefix, number_of_replicas=0, bulk_chunk_size=2,
                    bulk_initial_backoff_s=0.5, vector_dims=ENC.dim, language=lang)
        opts.update(overrides)
        b = ElasticsearchBackend.from_settings(act, ElasticsearchSettings(**opts),
                                               encode_query=lambda q: ENC.encode_queries([q])[0],
                                               analyzer=get_analyzer(lang))
        made.append(b)
        return b

    yield make
    if made:
        client = made[0].client
        names = list(client.indices.get(index=f"{prefix}-*", allow_no_indices=True, ignore_unavailable=True).body)
        if names:
            client.indices.delete(index=names, ignore_unavailable=True)


def test_mapping_as_stored_and_serving_alias(backend_factory):
    backend = backend_factory()
    table = chunks(V1)
    report = backend.build("pl:kc", V1, table, vectors(table))
    assert report.documents == table.num_rows
    assert backend.client.count(index=backend.serving_alias)["count"] == table.num_rows
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {report.table}

    mapping = backend.client.indices.get_mapping(index=report.table).body[report.table]["mappings"]
    props = mapping["properties"]
    vec = props["vector"]
    assert vec["type"] == "dense_vector" and vec["dims"] == ENC.dim and vec["similarity"] == "cosine"
    assert vec["index_options"]["type"] == "int8_hnsw"
    expected = "polish" if backend.detect_stempel() else "lexpipe_plain"
    assert props["text"]["analyzer"] == expected
    assert props["text_bigrams"]["analyzer"] == es_schema.BIGRAM_ANALYZER
    tokens = backend.client.indices.analyze(index=report.table, field="text_bigrams", text="Ab_cd ef_gh").body["tokens"]
    assert [t["token"] for t in tokens] == ["Ab_cd", "ef_gh"]  # whitespace only, case kept
    # the injection-looking query is just text
    backend.search(SearchRequest('"*:( OR AND title:x', retriever="bm25"))


def test_alias_switch_retention_and_failures(backend_factory):
    backend = backend_factory(keep_versions=2)
    first = backend.load_version(documents(V1), version=V1)
    t2 = chunks(V2, marker="xqzmarker")
    second = backend.build("pl:kc", V2, t2, vectors(t2))
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {second.table}
    assert backend.versions() == [V1, V2]
    assert backend.search(SearchRequest("xqzmarker", retriever="bm25", filters=Filters(version=V1))) == []

    # a rejected document (object into a keyword field): named, new index gone, alias untouched
    bad = documents(V3)
    bad[1]["number"] = {"not": "a keyword"}
    with pytest.raises(IndexLoadError) as err:
        backend.load_version(bad, version=V3, suffix="bad")
    assert bad[1]["chunk_id"] in str(err.value)
    assert not backend.client.indices.exists(index=backend.index_name(V3, "bad"))
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {second.table}

    third = backend.load_version(documents(V3), version=V3)
    assert third.deleted_indices == [first.index]
    assert not backend.client.indices.exists(index=first.index)
    assert backend.versions() == [V2, V3]


def test_server_side_rrf_when_licensed(backend_factory):
    backend = backend_factory(server_side_rrf=True)
    table = chunks(V1)
    backend.build("pl:kc", V1, table, vectors(table))
    quote = ARTICLES[3][2]
    try:
        hits = backend.search(SearchRequest(quote, retriever="hybrid"))
    except ApiError as exc:
        if exc.meta.status == 403 or "license" in str(exc).lower():
            pytest.skip(f"cluster licence does not allow the rrf retriever: {exc}")
        raise
    assert hits[0].article_id == "pl:kc:art:22^1" and hits[0].sources == {"hybrid": 1}


def test_german_act_with_the_german_analyser(backend_factory, sample_dir, monkeypatch):
    from pipelines.statutes.de.build import build_german_chunks
    from pipelines.statutes.de.markdown import parse_markdown
    from pipelines.statutes.de.tables import articles_table
    from pipelines.retrieval.index_build import open_elasticsearch_backend

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
    assert report.table.startswith(f"{prefix}-de-gg-{gg.version.isoformat()}-")
    assert set(backend.client.indices.get_alias(name=f"{prefix}-de-gg").body) == {report.table}

    mapping = backend.client.indices.get_mapping(index=report.table).body[report.table]["mappings"]
    assert mapping["properties"]["text"]["analyzer"] == "german"
    assert mapping["_meta"]["lexpipe"]["lang"] == "de"
    assert mapping["_meta"]["lexpipe"]["encoder"] == ENC.id  # searches with another encoder are refused
    tokens = [t["token"] for t in backend.client.indices.analyze(
        index=report.table, field="text", text="Die Würde des Menschen").body["tokens"]]
    # Lucene's GermanAnalyzer: German stop words dropped, umlauts normalised, light stemming
    assert tokens and not {"die", "des"} & set(tokens) and all(t.isascii() for t in tokens)

    hits = backend.search(SearchRequest("Die Würde des Menschen ist unantastbar", k=3, retriever="bm25",
                                        filters=Filters(act_ids=("de:gg",))))
    assert hits[0].article_id == "de:gg:art:1" and hits[0].act_id == "de:gg"
    with pytest.raises(SearchError, match="unknown act 'pl:kc'"):
        backend.search(SearchRequest("Würde", retriever="bm25", filters=Filters(act_ids=("pl:kc",))))
