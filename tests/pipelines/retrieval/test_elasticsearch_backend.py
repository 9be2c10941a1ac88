"""Elasticsearch backend against a loopback fake that records and answers what the real
elasticsearch-py 9.x client sends (compat headers, product check, NDJSON bulk)."""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from elasticsearch import Elasticsearch, UnsupportedProductError
from werkzeug import Request, Response

from pipelines.retrieval.elasticsearch_backend import (
    BulkLoadError, ElasticsearchBackend, ElasticsearchSettings, IndexLoadError,
)
from pipelines.retrieval.fusion import rrf
from pipelines.retrieval.interface import Filters, Hit, SearchRequest
from schemas import elasticsearch as es_schema

COMPAT_JSON = "application/vnd.elasticsearch+json;compatible-with=9"
PRODUCT = {"X-Elastic-Product": "Elasticsearch"}
SERVING = "lexpipe-chunks-pl-kc"
HISTORY = "lexpipe-chunks-pl-kc-all"
NASTY = '"*:( OR AND title:x'


@dataclass
class Recorded:
    method: str
    path: str
    args: dict[str, str]
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None

    @property
    def ndjson(self) -> list[Any]:
        return [json.loads(line) for line in self.raw.decode().splitlines() if line.strip()]


class FakeElasticsearch:
    """In-memory stand-in for the endpoints the backend uses; every request is recorded."""

    def __init__(self, httpserver):
        self.requests: list[Recorded] = []
        self.indices: dict[str, dict[str, Any]] = {}
        self.plugins: list[str] = []
        self.product_header = True
        self.bulk_top_level_429 = 0  # answer this many _bulk requests with a whole-request 429
        self.item_429: dict[str, int] = {}  # chunk id → times to reject it with 429
        self.item_reject: dict[str, tuple[int, dict]] = {}  # chunk id → permanent item error
        self.count_delta = 0
        self.fail_aliases = False
        self.rankings: dict[str, list[str]] = {"bm25": [], "dense": [], "rrf": []}
        self._clock = 1_700_000_000_000
        httpserver.expect_request(re.compile(r"^/.*$")).respond_with_handler(self.handle)

    # ------------------------------------------------------------------ helpers
    def of(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    def aliases_of(self, alias: str) -> set[str]:
        return {n for n, i in self.indices.items() if alias in i["aliases"]}

    def _reply(self, body: Any, status: int = 200) -> Response:
        headers = dict(PRODUCT) if self.product_header else {}
        return Response(json.dumps(body), status=status, headers=headers, content_type=COMPAT_JSON)

    def _error(self, status: int, type_: str, reason: str) -> Response:
        return self._reply({"error": {"type": type_, "reason": reason}, "status": status}, status)

    def _resolve(self, expr: str, strict: bool = True) -> list[str] | None:
        out: list[str] = []
        for part in expr.split(","):
            if any(c in part for c in "*?"):
                out += [n for n, i in self.indices.items()
                        if fnmatch.fnmatch(n, part) or any(fnmatch.fnmatch(a, part) for a in i["aliases"])]
            elif part in self.indices:
                out.append(part)
            elif self.aliases_of(part):
                out += sorted(self.aliases_of(part))
            elif strict:
                return None
        return sorted(set(out))

    # ------------------------------------------------------------------ dispatch
    def handle(self, request: Request) -> Response:
        rec = Recorded(request.method, request.path, dict(request.args), dict(request.headers),
                       request.get_data())
        self.requests.append(rec)
        parts = [p for p in request.path.split("/") if p]
        m = request.method
        if parts == ["_nodes", "plugins"]:
            return self._reply({"nodes": {"node-1": {"name": "n1", "plugins": [
                {"name": p, "version": "9.1.0"} for p in self.plugins]}}})
        if parts == ["_bulk"]:
            return self._bulk(rec)
        if parts == ["_aliases"] and m == "POST":
            return self._update_aliases(rec.json["actions"])
        if len(parts) == 1 and m == "PUT":
            return self._create(parts[0], rec.json)
        if len(parts) == 1 and m == "GET":
            names = self._resolve(parts[0], strict=rec.args.get("ignore_unavailable") != "true")
            if names is None:
                return self._error(404, "index_not_found_exception", f"no such index [{parts[0]}]")
            return self._reply({n: self._describe(n) for n in names})
        if len(parts) == 1 and m == "DELETE":
            names = self._resolve(parts[0], strict=rec.args.get("ignore_unavailable") != "true")
            if names is None:
                return self._error(404, "index_not_found_exception", f"no such index [{parts[0]}]")
            for n in names:
                del self.indices[n]
            return self._reply({"acknowledged": True})
        if len(parts) == 2 and parts[1] == "_refresh":
            return self._reply({"_shards": {"total": 1, "successful": 1, "failed": 0}})
        if len(parts) == 2 and parts[1] == "_count":
            names = self._resolve(parts[0]) or []
            n = sum(len(self.indices[i]["docs"]) for i in names) + self.count_delta
            return self._reply({"count": n, "_shards": {"total": 1, "successful": 1, "failed": 0}})
        if len(parts) == 2 and parts[1] == "_search":
            names = self._resolve(parts[0])
            if names is None:
                return self._error(404, "index_not_found_exception", f"no such index [{parts[0]}]")
            return self._search(names, rec.json)
        if len(parts) == 3 and parts[1] == "_alias" and m == "HEAD":
            ok = parts[0] in self.indices and parts[2] in self.indices[parts[0]]["aliases"]
            return Response(status=200 if ok else 404, headers=PRODUCT)
        return self._error(400, "fake_unsupported", f"{m} {request.path}")

    def _describe(self, name: str) -> dict[str, Any]:
        i = self.indices[name]
        return {"aliases": {a: {} for a in sorted(i["aliases"])}, "mappings": i["body"]["mappings"],
                "settings": {"index": {"creation_date": str(i["created"]), "number_of_shards": "1"}}}

    def _create(self, name: str, body: dict) -> Response:
        if name in self.indices:
            return self._error(400, "resource_already_exists_exception", f"index [{name}] already exists")
        self._clock += 1000
        self.indices[name] = {"body": body, "aliases": set(), "docs": {}, "created": self._clock}
        return self._reply({"acknowledged": True, "shards_acknowledged": True, "index": name})

    def _bulk(self, rec: Recorded) -> Response:
        if self.bulk_top_level_429 > 0:
            self.bulk_top_level_429 -= 1
            return self._error(429, "es_rejected_execution_exception", "rejected execution of bulk")
        lines = rec.ndjson
        items, errors = [], False
        for action, source in zip(lines[0::2], lines[1::2]):
            op, meta = next(iter(action.items()))
            idx, _id = meta["_index"], meta["_id"]
            if self.item_429.get(_id, 0) > 0:
                self.item_429[_id] -= 1
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": 429, "error": {
                    "type": "es_rejected_execution_exception", "reason": "write queue full"}}})
            elif _id in self.item_reject:
                status, err = self.item_reject[_id]
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": status, "error": err}})
            elif idx not in self.indices:
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": 404, "error": {
                    "type": "index_not_found_exception", "reason": idx}}})
            else:
                self.indices[idx]["docs"][_id] = source
                items.append({op: {"_index": idx, "_id": _id, "status": 201, "result": "created"}})
        return self._reply({"took": 3, "errors": errors, "items": items})

    def _update_aliases(self, actions: list[dict]) -> Response:
        if self.fail_aliases:
            return self._error(500, "fake_failure", "alias update failed")
        for a in actions:  # validate everything first: the real call is atomic
            op, spec = next(iter(a.items()))
            if spec["index"] not in self.indices:
                return self._error(404, "index_not_found_exception", spec["index"])
            if op == "remove" and spec["alias"] not in self.indices[spec["index"]]["aliases"]:
                return self._error(404, "aliases_not_found_exception", spec["alias"])
        for a in actions:
            op, spec = next(iter(a.items()))
            aliases = self.indices[spec["index"]]["aliases"]
            (aliases.add if op == "add" else aliases.discard)(spec["alias"])
        return self._reply({"acknowledged": True, "errors": False})

    def _search(self, names: list[str], body: dict) -> Response:
        all_docs = [d for n in names for d in self.indices[n]["docs"].values()]
        if "aggs" in body:  # as_of resolution: newest version <= lte
            lte = next(c["range"]["version_date"]["lte"] for c in body["query"]["bool"]["filter"] if "range" in c)
            versions = sorted({d["version"] for d in all_docs if d["version_date"] <= lte}, reverse=True)
            buckets = [{"key": v, "doc_count": 1} for v in versions[:1]]
            return self._reply({"hits": {"hits": []}, "aggregations": {"latest": {"buckets": buckets}}})
        pinned = {v["version"] for k, v in _walk(body) if k == "term" and "version" in v}
        docs = {d["chunk_id"]: d for d in all_docs if not pinned or d["version"] in pinned}
        kind = "rrf" if "retriever" in body else "dense" if "knn" in body else "bm25"
        fields = body.get("_source")
        hits = []
        for i, cid in enumerate(self.rankings[kind]):
            if cid in docs:
                src = {k: v for k, v in docs[cid].items() if fields is None or k in fields}
                hits.append({"_index": names[0], "_id": cid, "_score": 10.0 - i, "_source": src})
        return self._reply({"took": 1, "timed_out": False, "hits": {"hits": hits[: body.get("size", 10)]}})


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
    assert "text_analyzed" in props and "text_folded" in props

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

def _walk(node: Any):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def _assert_no_query_syntax(body: dict) -> None:
    keys = {k for k, _ in _walk(body)}
    assert not keys & {"query_string", "simple_query_string"}, keys
    # the user's text is only ever the value of a match/multi_match "query"
    for k, v in _walk(body):
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


def test_bm25_body_is_structured_and_filtered(loaded, fake):
    backend = loaded()
    fake.rankings["bm25"] = ["pl:kc:art:3#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY, k=5, retriever="bm25", filters=FILTERS))
    (req,) = fake.of("POST", f"/{SERVING}/_search")
    body = req.json
    _assert_no_query_syntax(body)
    should = body["query"]["bool"]["should"]
    assert should[0]["multi_match"]["query"] == NASTY
    assert should[0]["multi_match"]["fields"] == ["text^1", "heading_path^0.5"]
    assert {"match": {"text_analyzed": {"query": NASTY.lower() + " analyzed", "boost": 1.0}}} in should
    assert {"match": {"text_folded": {"query": NASTY.lower() + " folded", "boost": 0.5}}} in should
    assert body["query"]["bool"]["filter"] == [
        {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}}, {"terms": {"status": ["in_force"]}},
    ]
    assert body["size"] == 5 and "vector" not in body["_source"]
    assert [(h.chunk_id, h.rank, h.sources) for h in hits] == [
        ("pl:kc:art:3#0", 1, {"bm25": 1}), ("pl:kc:art:1#0", 2, {"bm25": 2})]
    h = hits[0]
    assert isinstance(h, Hit) and h.article_id == "pl:kc:art:3" and h.act_id == "pl:kc"
    assert h.version == "2025-11-13" and h.status == "in_force" and h.text.startswith("Przepis 3")
    assert h.heading_path.endswith("Art. 3") and h.score == 10.0


def test_dense_body_uses_top_level_knn_with_filter(loaded, fake):
    backend = loaded()
    fake.rankings["dense"] = ["pl:kc:art:4#0"]
    hits = backend.search(SearchRequest(NASTY, k=7, retriever="dense", filters=FILTERS))
    (req,) = fake.of("POST", f"/{SERVING}/_search")
    body = req.json
    _assert_no_query_syntax(body)
    assert "query" not in body
    knn = body["knn"]
    assert knn["field"] == "vector" and knn["k"] == 7 and knn["num_candidates"] == 100
    assert knn["query_vector"] == pytest.approx(vec("query:" + NASTY))
    assert knn["filter"] == {"bool": {"filter": [
        {"terms": {"act_id": ["pl:kc"]}}, {"terms": {"jurisdiction": ["pl"]}}, {"terms": {"status": ["in_force"]}}]}}
    assert [h.chunk_id for h in hits] == ["pl:kc:art:4#0"] and hits[0].sources == {"dense": 1}


def test_hybrid_fuses_client_side_with_rrf(loaded, fake):
    backend = loaded(hybrid_window=20)
    fake.rankings["bm25"] = ["pl:kc:art:1#0", "pl:kc:art:2#0", "pl:kc:art:3#0"]
    fake.rankings["dense"] = ["pl:kc:art:3#0", "pl:kc:art:4#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY, k=3, retriever="hybrid"))
    reqs = fake.of("POST", f"/{SERVING}/_search")
    assert len(reqs) == 2
    bm25_body, knn_body = (reqs[0].json, reqs[1].json) if "query" in reqs[0].json else (reqs[1].json, reqs[0].json)
    for b in (bm25_body, knn_body):
        _assert_no_query_syntax(b)
        assert "retriever" not in b
    assert bm25_body["size"] == 20 and knn_body["knn"]["k"] == 20
    assert "filter" not in knn_body["knn"] and bm25_body["query"]["bool"]["filter"] == []

    def ranked(ids, name):
        return [Hit(c, c.split("#")[0], "pl:kc", "2025-11-13", 1.0, i) for i, c in enumerate(ids, 1)]
    expected = rrf({"bm25": ranked(fake.rankings["bm25"], "bm25"),
                    "dense": ranked(fake.rankings["dense"], "dense")}, 3)
    assert [(h.chunk_id, h.sources) for h in hits] == [(h.chunk_id, h.sources) for h in expected]
    assert hits[0].chunk_id in {"pl:kc:art:1#0", "pl:kc:art:3#0"}
    assert hits[0].sources.keys() == {"bm25", "dense"} and hits[0].text


def test_server_side_rrf_retriever_when_licensed(loaded, fake):
    backend = loaded(server_side_rrf=True, hybrid_window=30)
    fake.rankings["rrf"] = ["pl:kc:art:6#0", "pl:kc:art:1#0"]
    hits = backend.search(SearchRequest(NASTY, k=2, retriever="hybrid", filters=FILTERS))
    (req,) = fake.of("POST", f"/{SERVING}/_search")
    body = req.json
    _assert_no_query_syntax(body)
    assert "query" not in body and "knn" not in body
    r = body["retriever"]["rrf"]
    assert r["rank_window_size"] == 30 and r["rank_constant"] == 60
    standard, knn = r["retrievers"]
    assert standard["standard"]["query"]["bool"]["filter"][0] == {"terms": {"act_id": ["pl:kc"]}}
    assert knn["knn"]["field"] == "vector" and knn["knn"]["k"] == 30
    assert knn["knn"]["filter"]["bool"]["filter"][2] == {"terms": {"status": ["in_force"]}}
    assert [h.chunk_id for h in hits] == ["pl:kc:art:6#0", "pl:kc:art:1#0"]


def test_as_of_and_version_search_the_history_alias(httpserver, fake):
    backend = make_backend(httpserver)
    for v in ("2024-12-19", "2025-11-13"):
        backend.load_version(make_docs(v), version=v, suffix="h")
    fake.requests.clear()
    fake.rankings["bm25"] = ["pl:kc:art:1#0"]

    hits = backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2025, 6, 1))))
    agg_req, search_req = fake.of("POST", f"/{HISTORY}/_search")
    assert agg_req.json["size"] == 0
    assert {"range": {"version_date": {"lte": "2025-06-01"}}} in agg_req.json["query"]["bool"]["filter"]
    assert agg_req.json["aggs"]["latest"]["terms"] == {"field": "version", "size": 1, "order": {"_key": "desc"}}
    assert {"term": {"version": "2024-12-19"}} in search_req.json["query"]["bool"]["filter"]
    assert [h.version for h in hits] == ["2024-12-19"]

    fake.requests.clear()
    assert backend.search(SearchRequest("umowa", retriever="bm25", filters=Filters(as_of=dt.date(2020, 1, 1)))) == []
    assert len(fake.of("POST", r"/.*/_search")) == 1  # only the resolution query

    fake.requests.clear()
    backend.search(SearchRequest("umowa", retriever="dense", filters=Filters(version="2025-11-13")))
    (req,) = fake.of("POST", f"/{HISTORY}/_search")
    assert req.json["knn"]["filter"] == {"bool": {"filter": [{"term": {"version": "2025-11-13"}}]}}


def test_search_errors(httpserver, fake):
    backend = ElasticsearchBackend.from_settings("pl:kc", ElasticsearchSettings(url=httpserver.url_for("/")))
    with pytest.raises(ValueError, match="gaius"):
        backend.search(SearchRequest("x", retriever="gaius"))
    with pytest.raises(Exception, match="encode_query"):
        backend.search(SearchRequest("x", retriever="dense"))
    with pytest.raises(Exception, match="no version of corpus pl-kc"):
        backend.search(SearchRequest("x", retriever="bm25"))
    assert backend.search(SearchRequest("   ", retriever="bm25")) == []


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
    from pipelines.retrieval.elasticsearch_backend import analyze_query_from

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
