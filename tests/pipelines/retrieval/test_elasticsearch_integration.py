"""Conformance checks against a real Elasticsearch 9 cluster (``ELASTICSEARCH_URL``).

Loads a small real sample of Kodeks cywilny chunks (first 50 rows of the published
``chunks.parquet`` when available, else a few embedded articles) with hashed vectors, then checks
exact-sentence retrieval, filters, alias switching, ``as_of``, retention and failure cleanup.
Every index lives under a random prefix and is deleted afterwards.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import unicodedata
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ES_URL = os.environ.get("ELASTICSEARCH_URL")
if not ES_URL:
    pytest.skip("ELASTICSEARCH_URL not set: no Elasticsearch cluster to test against", allow_module_level=True)

from elasticsearch import ApiError  # noqa: E402

from pipelines.retrieval.elasticsearch_backend import (  # noqa: E402
    ElasticsearchBackend, ElasticsearchSettings, IndexLoadError,
)
from pipelines.retrieval.interface import Filters, SearchRequest, collapse_to_articles  # noqa: E402

DIMS = 384
V1, V2, V3 = "2025-11-13", "2026-01-01", "2026-02-01"
CHUNKS = Path(os.environ.get("LEXPIPE_ES_SAMPLE_CHUNKS", ".lexpipe/corpus/pl/kc/2025-11-13/chunks.parquet"))

# Used when no published corpus is at hand (real article texts, version 2025-11-13).
EMBEDDED = [
    ("pl:kc:art:1#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 1",
     "Kodeks niniejszy reguluje stosunki cywilnoprawne między osobami fizycznymi i osobami prawnymi.", "in_force"),
    ("pl:kc:art:2#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 2", "(uchylony)", "repealed"),
    ("pl:kc:art:3#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne › Art. 3",
     "Ustawa nie ma mocy wstecznej, chyba że to wynika z jej brzmienia lub celu.", "in_force"),
    ("pl:kc:art:8#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ I Osoby fizyczne › Art. 8",
     "§ 1. Każdy człowiek od chwili urodzenia ma zdolność prawną.\n§ 2. (uchylony)", "in_force"),
    ("pl:kc:art:22^1#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ I Osoby fizyczne › Art. 22¹",
     "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej niezwiązanej "
     "bezpośrednio z jej działalnością gospodarczą lub zawodową.", "in_force"),
    ("pl:kc:art:33#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ II Osoby prawne › Art. 33",
     "Osobami prawnymi są Skarb Państwa i jednostki organizacyjne, którym przepisy szczególne przyznają "
     "osobowość prawną.", "in_force"),
    ("pl:kc:art:35#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ II Osoby prawne › Art. 35",
     "Powstanie, ustrój i ustanie osób prawnych określają właściwe przepisy; w wypadkach i w zakresie w "
     "przepisach tych przewidzianych organizację i sposób działania osoby prawnej reguluje także jej statut.",
     "in_force"),
    ("pl:kc:art:43^1#0", "KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ II Osoby › DZIAŁ III Przedsiębiorcy › Art. 43¹",
     "Przedsiębiorcą jest osoba fizyczna, osoba prawna i jednostka organizacyjna, o której mowa w art. 33^1 "
     "§ 1, prowadząca we własnym imieniu działalność gospodarczą lub zawodową.", "in_force"),
]


def fold(s: str) -> str:
    s = s.replace("ł", "l").replace("Ł", "L")
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def analyze(s: str) -> tuple[str, str]:
    """Stand-in for the project's analyser: used at index AND query time, as the backend requires."""
    analyzed = " ".join(re.findall(r"\w+", s.lower()))
    return analyzed, fold(analyzed)


def hashed_vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIMS)
    return (v / np.linalg.norm(v)).tolist()


def base_rows() -> list[dict[str, Any]]:
    if CHUNKS.is_file():
        import pyarrow.parquet as pq
        rows = pq.read_table(CHUNKS).slice(0, 50).to_pylist()
        return [{k: r[k] for k in ("chunk_id", "article_id", "act_id", "heading_path", "text", "status",
                                   "chunk_index", "content_hash")} for r in rows]
    return [{"chunk_id": c, "article_id": c.split("#")[0], "act_id": "pl:kc", "heading_path": h, "text": t,
             "status": s} for c, h, t, s in EMBEDDED]


def make_docs(version: str, rows: list[dict[str, Any]], marker: str | None = None) -> list[dict[str, Any]]:
    docs = []
    for r in rows:
        text = r["text"] + (f" {marker}" if marker else "")
        analyzed, folded = analyze(r["heading_path"] + " " + text)
        docs.append({**r, "text": text, "jurisdiction": r["act_id"].split(":")[0], "version": version,
                     "number": r["article_id"].rsplit(":", 1)[-1], "text_analyzed": analyzed,
                     "text_folded": folded, "vector": hashed_vector(text)})
    return docs


@pytest.fixture
def backend_factory():
    prefix = f"lexpipe-it-{uuid.uuid4().hex[:8]}"
    made: list[ElasticsearchBackend] = []

    def make(**overrides) -> ElasticsearchBackend:
        opts = dict(url=ES_URL, index_prefix=prefix, number_of_replicas=0, bulk_chunk_size=20,
                    bulk_initial_backoff_s=0.5, vector_dims=DIMS)
        opts.update(overrides)
        b = ElasticsearchBackend.from_settings("pl:kc", ElasticsearchSettings(**opts),
                                               encode_query=hashed_vector, analyze_query=analyze)
        made.append(b)
        return b

    yield make
    if made:
        client = made[0].client
        names = list(client.indices.get(index=f"{prefix}-*", allow_no_indices=True, ignore_unavailable=True).body)
        if names:
            client.indices.delete(index=names, ignore_unavailable=True)


def first_article(backend: ElasticsearchBackend, query: str, retriever: str, **filters) -> str | None:
    hits = backend.search(SearchRequest(query, k=10, retriever=retriever, filters=Filters(**filters)))
    arts = collapse_to_articles(hits, 10)
    return arts[0].article_id if arts else None


def test_load_mapping_and_exact_sentence_retrieval(backend_factory):
    backend = backend_factory()
    rows = base_rows()
    result = backend.load_version(make_docs(V1, rows), version=V1)
    assert result.count == len(rows)
    assert backend.client.count(index=backend.serving_alias)["count"] == len(rows)
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {result.index}

    mapping = backend.client.indices.get_mapping(index=result.index).body[result.index]["mappings"]
    vec = mapping["properties"]["vector"]
    assert vec["type"] == "dense_vector" and vec["dims"] == DIMS and vec["similarity"] == "cosine"
    assert vec["index_options"]["type"] == "int8_hnsw"
    expected = "polish" if backend.detect_stempel() else "lexpipe_plain"
    assert mapping["properties"]["text"]["analyzer"] == expected

    target = next(r for r in rows if r["status"] == "in_force" and len(r["text"]) > 60)
    sentence = re.split(r"(?<=[.;])\s", target["text"].replace("\n", " "))[0]
    assert first_article(backend, sentence, "bm25") == target["article_id"]
    assert first_article(backend, target["text"], "dense") == target["article_id"]
    assert first_article(backend, target["text"], "hybrid") == target["article_id"]
    # the injection-looking query is just text
    backend.search(SearchRequest('"*:( OR AND title:x', retriever="bm25"))


def test_filters(backend_factory):
    backend = backend_factory()
    rows = base_rows()
    backend.load_version(make_docs(V1, rows), version=V1)
    for retriever in ("bm25", "dense", "hybrid"):
        hits = backend.search(SearchRequest("uchylony osoby prawne", k=50, retriever=retriever,
                                            filters=Filters(statuses=("repealed",))))
        assert hits and {h.status for h in hits} == {"repealed"}, retriever
        assert backend.search(SearchRequest("osoby", retriever=retriever, filters=Filters(act_ids=("pl:kk",)))) == []
        assert backend.search(SearchRequest("osoby", retriever=retriever,
                                            filters=Filters(jurisdictions=("de",)))) == []
        hits = backend.search(SearchRequest("osoby", retriever=retriever,
                                            filters=Filters(act_ids=("pl:kc",), jurisdictions=("pl",))))
        assert hits and {h.act_id for h in hits} == {"pl:kc"}


def test_alias_switch_as_of_retention_and_failures(backend_factory):
    backend = backend_factory(keep_versions=2)
    rows = base_rows()
    first = backend.load_version(make_docs(V1, rows), version=V1)
    second = backend.load_version(make_docs(V2, rows, marker="xqzmarker"), version=V2)
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {second.index}
    assert backend.versions() == [V1, V2]

    hits = backend.search(SearchRequest("xqzmarker", retriever="bm25"))
    assert hits and {h.version for h in hits} == {V2}
    old = backend.search(SearchRequest("xqzmarker", retriever="bm25", filters=Filters(as_of=dt.date(2025, 12, 1))))
    assert old == []  # the marker only exists in the newer version
    old = backend.search(SearchRequest("osoby prawne", retriever="bm25", filters=Filters(as_of=dt.date(2025, 12, 1))))
    assert old and {h.version for h in old} == {V1}
    pinned = backend.search(SearchRequest("osoby prawne", retriever="dense", filters=Filters(version=V1)))
    assert pinned and {h.version for h in pinned} == {V1}
    assert backend.search(SearchRequest("osoby", filters=Filters(as_of=dt.date(2000, 1, 1)))) == []

    # a rejected document (object into a keyword field): named, new index gone, alias untouched
    bad = make_docs(V3, rows)
    bad[1]["number"] = {"not": "a keyword"}
    with pytest.raises(IndexLoadError) as err:
        backend.load_version(bad, version=V3, suffix="bad")
    assert bad[1]["chunk_id"] in str(err.value)
    assert not backend.client.indices.exists(index=backend.index_name(V3, "bad"))
    assert set(backend.client.indices.get_alias(name=backend.serving_alias).body) == {second.index}

    third = backend.load_version(make_docs(V3, rows), version=V3)
    assert third.deleted_indices == [first.index]
    assert not backend.client.indices.exists(index=first.index)
    assert backend.versions() == [V2, V3]


def test_server_side_rrf_when_licensed(backend_factory):
    backend = backend_factory(server_side_rrf=True)
    rows = base_rows()
    backend.load_version(make_docs(V1, rows), version=V1)
    target = next(r for r in rows if r["status"] == "in_force" and len(r["text"]) > 60)
    try:
        hits = backend.search(SearchRequest(target["text"], retriever="hybrid"))
    except ApiError as exc:
        if exc.meta.status == 403 or "license" in str(exc).lower():
            pytest.skip(f"cluster licence does not allow the rrf retriever: {exc}")
        raise
    assert collapse_to_articles(hits, 10)[0].article_id == target["article_id"]
