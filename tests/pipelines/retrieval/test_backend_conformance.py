"""One behaviour, every backend: the same assertions on the embedded (LanceDB) backend and, when
``ELASTICSEARCH_URL`` points at a cluster, the Elasticsearch backend.

Data: real Kodeks cywilny chunks of both sample versions, cut to a small table by reading only
the pages of the opening titles (Art. 1–55) and of leasing (Art. 709¹–709¹⁸, whose Art. 709²
changed between the versions); vectors from the model-free HashingEncoder, so the suite is fast
and deterministic. Mechanics only one backend has (Elasticsearch aliases, bulk retries; LanceDB
table retirement) are tested in that backend's own module.

Hybrid runs twice: with the configured fusion, and with a reranker (the same index reopened with a
small LinearReranker trained here on synthetic groups, as ``index_build.load_reranker`` would
hand one to either backend), so the reranker path meets the same assertions on both backends.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import uuid
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipelines.retrieval.embedded_backend import EmbeddedBackend
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.interface import Filters, Hit, SearchError, SearchRequest
from pipelines.retrieval.reranker import FEATURES, LinearReranker, train_listwise

OLD, NEW = "2024-12-19", "2025-11-13"
RETRIEVERS = ("bm25", "dense", "gaius", "hybrid")
# (retriever, reranked): every retriever as configured, and hybrid once more through a reranker
CASES = [pytest.param(r, False, id=r) for r in RETRIEVERS] + [pytest.param("hybrid", True, id="hybrid-reranked")]
ES_URL = os.environ.get("ELASTICSEARCH_URL")
ENC = HashingEncoder()
# 0-based PDF pages read per version; articles wholly inside a run (not cut at its ends) are kept
PAGES = {OLD: (range(0, 12), range(140, 147)), NEW: (range(0, 12), range(145, 152))}
KONSUMENT = "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej"
LEASING_OLD = "umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności"


# ---------------------------------------------------------------------- data

def _articles(pdf: Path, version: str) -> pa.Table:
    from pipelines.pdf_lines import read_lines
    from pipelines.statutes.pl.parser import parse_statute
    from pipelines.statutes.pl.tables import articles_table

    runs = PAGES[version]
    pages = read_lines(pdf, workers=1, pages=[p for run in runs for p in run])
    table = articles_table(parse_statute(pdf, dt.date.fromisoformat(version), "pl:kc", pages=pages))
    keep = [any((run.start == 0 or start > run.start + 1) and end < run.stop for run in runs)
            for start, end in zip(table["page_start"].to_pylist(), table["page_end"].to_pylist())]
    return table.filter(pa.array(keep))


@pytest.fixture(scope="module")
def kc_chunks(sample_dir) -> dict[str, pa.Table]:
    """Version → real chunk rows (a few hundred), parsed from the sample PDFs."""
    from pipelines.chunking import build_chunks

    out = {}
    for version in (OLD, NEW):
        articles = _articles(sample_dir / "pl" / "isap" / f"D19640093Lj_{version}.pdf", version)
        ids = set(articles["id"].to_pylist())
        assert {"pl:kc:art:1", "pl:kc:art:2", "pl:kc:art:22^1", "pl:kc:art:709^2"} <= ids, sorted(ids)
        out[version] = build_chunks(articles, max_tokens=256)
    assert "na piśmie" in _text(out[OLD], "pl:kc:art:709^2") and "na piśmie" not in _text(out[NEW], "pl:kc:art:709^2")
    return out


def _text(chunks: pa.Table, article_id: str) -> str:
    return " ".join(chunks.filter(pc.equal(chunks["article_id"], article_id))["text"].to_pylist())


def _vectors(chunks: pa.Table):
    from pipelines.retrieval.embedding_cache import passage_text

    return ENC.encode_passages([passage_text(h, t) for h, t in
                                zip(chunks["heading_path"].to_pylist(), chunks["text"].to_pylist())])


# ---------------------------------------------------------------------- backends

def _train_reranker() -> LinearReranker:
    """A quickly trained listwise model: on synthetic candidate lists the relevant one is the
    best by query coverage, n-gram overlap and the lexical/dense/gAIus z-scores (with noise)."""
    rng = np.random.default_rng(7)
    truth = np.zeros(len(FEATURES))
    for name, w in (("coverage", 2.0), ("bigram_overlap", 1.0), ("bm25_z", 1.0), ("dense_z", 0.5), ("gaius_z", 0.5)):
        truth[FEATURES.index(name)] = w
    groups = []
    for _ in range(60):
        x = rng.normal(size=(15, len(FEATURES)))
        y = np.zeros(15)
        y[int(np.argmax(x @ truth + 0.3 * rng.normal(size=15)))] = 1.0
        groups.append((x, y))
    model = train_listwise(groups, iters=300, provenance={"encoder": ENC.id, "trained_on": "synthetic"})
    assert int(np.argmax(model.weights)) == FEATURES.index("coverage")
    return model


RERANKER = _train_reranker()


def with_reranker(backend, model: LinearReranker = RERANKER):
    """The same loaded index, opened again with a reranker: hybrid = legs → rerank_legs."""
    if isinstance(backend, EmbeddedBackend):
        return EmbeddedBackend(backend.root, encoder=ENC, analyzer=_analyzer(), reranker=model)
    from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend

    return ElasticsearchBackend(backend.client, "pl:kc", settings=backend.settings, encode_query=backend.encode_query,
                                analyzer=backend.analyzer, reranker=model)


def _analyzer():
    from pipelines.retrieval.analyzers import get_analyzer

    return get_analyzer("pl")


@pytest.fixture(scope="module", params=["embedded", "elasticsearch"])
def make_backend(request, tmp_path_factory) -> Callable[[], object]:
    """Factory of empty backends of one kind (Elasticsearch ones under a throwaway index prefix,
    deleted at the end of the module)."""
    if request.param == "embedded":
        root = tmp_path_factory.mktemp("embedded")
        counter = iter(range(1_000))
        yield lambda: EmbeddedBackend(root / str(next(counter)), encoder=ENC, analyzer=_analyzer())
        return
    if not ES_URL:
        pytest.skip("ELASTICSEARCH_URL not set")
    from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend
    from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings

    prefix = f"lexpipe-conf-{uuid.uuid4().hex[:8]}"
    made: list[ElasticsearchBackend] = []

    def make() -> ElasticsearchBackend:
        settings = ElasticsearchSettings(url=ES_URL, index_prefix=f"{prefix}-{len(made)}", number_of_replicas=0,
                                         vector_dims=ENC.dim, bulk_initial_backoff_s=0.5)
        made.append(ElasticsearchBackend.from_settings(
            "pl:kc", settings, encode_query=lambda q: ENC.encode_queries([q])[0], analyzer=_analyzer()))
        return made[-1]

    yield make
    if made:
        client = made[0].client
        names = list(client.indices.get(index=f"{prefix}-*", allow_no_indices=True, ignore_unavailable=True).body)
        if names:
            client.indices.delete(index=names, ignore_unavailable=True)


def load(backend, chunks: pa.Table, version: str):
    return backend.build("pl:kc", version, chunks, _vectors(chunks))


@pytest.fixture(scope="module")
def loaded(make_backend, kc_chunks):
    """A backend with both versions loaded, oldest first (read-only for the tests using it)."""
    backend = make_backend()
    for version in (OLD, NEW):
        load(backend, kc_chunks[version], version)
    return backend


@pytest.fixture(scope="module")
def reranked(loaded):
    backend = with_reranker(loaded)
    assert backend.reranker is RERANKER and loaded.reranker is None
    return backend


@pytest.fixture(scope="module")
def backend_for(loaded, reranked) -> Callable[[bool], object]:
    return lambda rerank: reranked if rerank else loaded


def search(backend, q: str, retriever: str = "hybrid", k: int = 10, **filters) -> list[Hit]:
    return backend.search(SearchRequest(q, k, retriever, Filters(**filters)))


def assert_article_hits(hits: list[Hit], k: int) -> None:
    """The documented hit contract (pipelines.retrieval.interface.Hit), collapsed to articles."""
    assert hits and len(hits) <= k
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.article_id for h in hits}) == len(hits)  # best chunk per article
    for h in hits:
        assert isinstance(h, Hit)
        assert h.chunk_id.startswith(h.article_id + "#") and h.article_id.startswith("pl:kc:art:")
        assert h.act_id == "pl:kc" and h.version in (OLD, NEW)
        assert isinstance(h.score, float) and math.isfinite(h.score)
        assert isinstance(h.heading_path, str) and "Art. " in h.heading_path
        assert isinstance(h.text, str) and h.status in ("in_force", "repealed")
        assert isinstance(h.sources, dict)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


# ---------------------------------------------------------------------- searching

@pytest.mark.parametrize("retriever,rerank", CASES)
def test_every_retriever_returns_article_level_hits(backend_for, retriever, rerank):
    hits = search(backend_for(rerank), "osoba prawna Skarb Państwa", retriever, k=7)
    assert_article_hits(hits, 7)
    assert {h.version for h in hits} == {NEW}  # the serving version by default


@pytest.mark.parametrize("retriever,rerank", CASES)
def test_verbatim_quote_ranks_its_article_first(backend_for, retriever, rerank):
    hits = search(backend_for(rerank), KONSUMENT, retriever)
    assert hits[0].article_id == "pl:kc:art:22^1", [h.article_id for h in hits[:5]]


@pytest.mark.parametrize("rerank", [False, True], ids=["fusion", "reranked"])
def test_hybrid_fuses_the_legs_and_says_which(backend_for, rerank):
    hits = search(backend_for(rerank), f"Zgodnie z Kodeksem cywilnym, {KONSUMENT.lower()}", "hybrid")
    assert hits[0].article_id == "pl:kc:art:22^1"
    assert {"bm25", "dense"} <= set(hits[0].sources) <= {"bm25", "dense", "gaius"}
    assert all(h.sources and set(h.sources) <= {"bm25", "dense", "gaius"} for h in hits)


@pytest.mark.parametrize("retriever,rerank", CASES)
def test_filters_apply(backend_for, retriever, rerank):
    loaded = backend_for(rerank)
    repealed = search(loaded, "uchylony", retriever, k=20, statuses=("repealed",))
    assert_article_hits(repealed, 20)
    assert {h.status for h in repealed} == {"repealed"}
    in_force = search(loaded, "uchylony osoba prawna", retriever, k=20, statuses=("in_force",))
    assert in_force and {h.status for h in in_force} == {"in_force"}
    hits = search(loaded, "osoba prawna", retriever, act_ids=("pl:kc",), jurisdictions=("pl",))
    assert hits and {h.act_id for h in hits} == {"pl:kc"}
    assert search(loaded, "osoba prawna", retriever, jurisdictions=("de",)) == []


@pytest.mark.parametrize("retriever,rerank", CASES)
def test_version_and_as_of_select_what_is_searched(backend_for, retriever, rerank):
    loaded = backend_for(rerank)
    assert {h.version for h in search(loaded, LEASING_OLD, retriever)} == {NEW}
    pinned = search(loaded, LEASING_OLD, retriever, version=OLD)
    assert pinned and {h.version for h in pinned} == {OLD}
    then = search(loaded, LEASING_OLD, retriever, as_of=dt.date(2025, 1, 31))
    assert then and {h.version for h in then} == {OLD}
    assert {h.version for h in search(loaded, LEASING_OLD, retriever, as_of=dt.date(2025, 11, 13))} == {NEW}
    if retriever != "dense":  # the hashed vectors are not meant to rank this precisely
        assert then[0].article_id == "pl:kc:art:709^2" and "na piśmie" in then[0].text


@pytest.mark.parametrize("filters,message", [
    ({"act_ids": ("pl:kk",)}, "unknown act"),
    ({"act_ids": ("pl:kc", "pl:kk")}, "unknown act"),
    ({"as_of": dt.date(2000, 1, 1)}, "on or before"),
    ({"version": "1999-01-01"}, "no indexed version"),
])
def test_unanswerable_requests_raise_the_4xx_error(loaded, reranked, filters, message):
    from pipelines.retrieval.service import InvalidRequest, SearchService

    for retriever in RETRIEVERS:
        with pytest.raises(SearchError, match=message):
            search(loaded, "umowa", retriever, **filters)
    with pytest.raises(SearchError, match=message):
        search(reranked, "umowa", "hybrid", **filters)
    service = SearchService(loaded)  # what the API and CLI turn into 400 / exit 2
    with pytest.raises(InvalidRequest, match=message):
        service.search("umowa", acts=list(filters.get("act_ids", ())), as_of=filters.get("as_of"),
                       version=filters.get("version"))


def test_health_view(loaded):
    assert loaded.acts() == ["pl:kc"] and loaded.serving_version("pl:kc") == NEW


# ---------------------------------------------------------------------- loading

def _snapshot(backend, reranked=None, **filters) -> list[list[tuple[str, str, str]]]:
    cases = [(backend, r) for r in RETRIEVERS] + ([(reranked, "hybrid")] if reranked is not None else [])
    return [[(h.article_id, h.chunk_id, h.version) for h in search(b, q, r, **filters)]
            for q in (KONSUMENT, "osoba prawna Skarb Państwa", LEASING_OLD) for b, r in cases]


def test_versions_switch_serving_and_a_reload_is_idempotent(make_backend, kc_chunks):
    backend = make_backend()
    first = load(backend, kc_chunks[OLD], OLD)
    assert (first.act_id, first.version, first.documents, first.vectors) == ("pl:kc", OLD, kc_chunks[OLD].num_rows,
                                                                               kc_chunks[OLD].num_rows)
    assert backend.serving_version("pl:kc") == OLD
    assert {h.version for h in search(backend, LEASING_OLD, "bm25")} == {OLD}
    with pytest.raises(SearchError, match="no indexed version"):
        search(backend, LEASING_OLD, version=NEW)

    load(backend, kc_chunks[NEW], NEW)  # a newer version takes over serving…
    assert backend.serving_version("pl:kc") == NEW
    assert {h.version for h in search(backend, LEASING_OLD, "hybrid")} == {NEW}
    for filters in ({"version": OLD}, {"as_of": dt.date(2025, 11, 12)}):  # …the older one stays queryable
        hits = search(backend, LEASING_OLD, "bm25", **filters)
        assert hits[0].article_id == "pl:kc:art:709^2" and {h.version for h in hits} == {OLD}

    reranked = with_reranker(backend)  # its per-table/per-index lexical stats must follow the reload
    before, before_old = _snapshot(backend, reranked), _snapshot(backend, reranked, version=OLD)
    again = load(backend, kc_chunks[NEW], NEW)  # the same version once more
    assert again.documents == kc_chunks[NEW].num_rows
    assert backend.serving_version("pl:kc") == NEW
    assert _snapshot(backend, reranked) == before and _snapshot(backend, reranked, version=OLD) == before_old


# ---------------------------------------------------------------------- one analysis

def test_elasticsearch_documents_carry_the_embedded_analysed_columns(kc_chunks, tmp_path):
    """Both lexical legs read the same strings: the documents bulk-loaded into Elasticsearch
    equal the embedded table's columns (runs without a cluster: pure document building)."""
    from pipelines.retrieval.elasticsearch.documents import chunk_documents

    chunks = kc_chunks[NEW]
    vectors = _vectors(chunks)
    embedded = EmbeddedBackend(tmp_path, encoder=ENC, analyzer=_analyzer()).documents(chunks, vectors, "pl").to_pylist()
    docs = list(chunk_documents(chunks, vectors, _analyzer()))
    assert len(docs) == len(embedded) == chunks.num_rows
    columns = ("chunk_id", "article_id", "act_id", "jurisdiction", "version", "status", "heading_path", "text",
               "text_analyzed", "text_folded", "text_bigrams")
    assert [{c: d[c] for c in columns} for d in docs] == [{c: e[c] for c in columns} for e in embedded]
    assert [d["position"] for d in docs] == list(range(len(docs)))
    assert any("_" in d["text_bigrams"] for d in docs)
