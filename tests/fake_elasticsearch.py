"""A loopback stand-in for Elasticsearch 9 (``pytest-httpserver``): answers the endpoints the
backend uses — index create/get/delete, ``_bulk``, ``_aliases``, ``_alias``, ``_count``,
``_search`` (canned rankings per kind), scroll scans — and records every request so tests can
check the exact bodies the real elasticsearch-py 9.x client sends. Shared by the backend's
request tests and the search-index asset test (``tests/`` is on ``sys.path`` via conftest)."""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from typing import Any

from werkzeug import Request, Response

COMPAT_JSON = "application/vnd.elasticsearch+json;compatible-with=9"
PRODUCT = {"X-Elastic-Product": "Elasticsearch"}


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
        self.alias_responses: list[dict] = []  # canned (stale) GET _alias answers, served first
        self.scrolls: dict[str, list[dict]] = {}  # scroll id → pages not yet fetched
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
        if parts == ["_search", "scroll"]:
            return self._scroll(rec)
        if len(parts) == 2 and parts[1] == "_alias" and m == "GET":
            if self.alias_responses:
                return self._reply(self.alias_responses.pop(0))
            names = self._resolve(parts[0], strict=rec.args.get("ignore_unavailable") != "true") or []
            return self._reply({n: {"aliases": {a: {} for a in sorted(self.indices[n]["aliases"])}} for n in names})
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
            if "scroll" in rec.args:
                return self._scan_start(names, rec)
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

    def _scan_start(self, names: list[str], rec: Recorded) -> Response:
        body = rec.json
        assert body["sort"] == "_doc" and body["query"] == {"match_all": {}}, body
        fields = body["_source"]
        docs = [{"_index": n, "_id": cid, "_source": {k: v for k, v in d.items() if k in fields}}
                for n in names for cid, d in self.indices[n]["docs"].items()]
        docs.reverse()  # scan order is arbitrary: the client must restore document order itself
        size = body["size"]
        pages = [docs[i:i + size] for i in range(0, len(docs), size)] or [[]]
        sid = f"scroll-{len(self.scrolls)}"
        self.scrolls[sid] = pages[1:] + [[]]
        return self._reply({"_scroll_id": sid, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
                            "hits": {"hits": pages[0]}})

    def _scroll(self, rec: Recorded) -> Response:
        if rec.method == "DELETE":
            ids = rec.json["scroll_id"]
            for sid in [ids] if isinstance(ids, str) else ids:
                self.scrolls.pop(sid, None)
            return self._reply({"succeeded": True, "num_freed": 1})
        sid = rec.json["scroll_id"]
        page = self.scrolls[sid].pop(0)
        return self._reply({"_scroll_id": sid, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
                            "hits": {"hits": page}})

    def _search(self, names: list[str], body: dict) -> Response:
        all_docs = [d for n in names for d in self.indices[n]["docs"].values()]
        if "aggs" in body:  # as_of resolution: newest version <= lte
            lte = next(c["range"]["version_date"]["lte"] for c in body["query"]["bool"]["filter"] if "range" in c)
            versions = sorted({d["version"] for d in all_docs if d["version_date"] <= lte}, reverse=True)
            buckets = [{"key": v, "doc_count": 1} for v in versions[:1]]
            return self._reply({"hits": {"hits": []}, "aggregations": {"latest": {"buckets": buckets}}})
        pinned = {v["version"] for k, v in walk(body) if k == "term" and "version" in v}
        docs = {d["chunk_id"]: d for d in all_docs if not pinned or d["version"] in pinned}
        kind = "rrf" if "retriever" in body else "dense" if "knn" in body else "bm25"
        fields = body.get("_source")
        hits = []
        for i, cid in enumerate(self.rankings[kind]):
            if cid in docs:
                src = {k: v for k, v in docs[cid].items() if fields is None or k in fields}
                hits.append({"_index": names[0], "_id": cid, "_score": 10.0 - i, "_source": src})
        return self._reply({"took": 1, "timed_out": False, "hits": {"hits": hits[: body.get("size", 10)]}})


def walk(node: Any):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)
