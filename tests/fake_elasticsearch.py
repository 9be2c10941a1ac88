"""A loopback stand-in for Elasticsearch 9 (``pytest-httpserver``): answers the endpoints the
backend uses and records every request so tests can check the exact bodies the real
elasticsearch-py 9.x client sends. Shared by the backend's request tests and the asset tests
(``tests/`` is on ``sys.path`` via conftest).

What it implements, as the real cluster does it:

* indices (create, get, delete, settings, ``_mapping`` ``_meta``), aliases with filters
  (``POST /_aliases`` applied atomically: every action validated first; ``GET /_alias/<name>``);
* documents: ``_bulk`` (index / create / update with a partial ``doc`` / delete; per-item 429s
  and rejections on demand, whole-request 429s), ``_create``, ``_doc`` GET / PUT / DELETE with
  ``if_seq_no`` / ``if_primary_term`` (409 on a mismatch);
* what is searchable: writes are real-time for GET but visible to ``_search``, ``_count``, scans
  and ``*_by_query`` only after a refresh when the index's ``refresh_interval`` is ``-1`` (the
  publication switches refreshes off), so a test fails if the backend forgets one;
* queries are evaluated: ``bool`` (filter / must / must_not / should), ``term``, ``terms``,
  ``range``, ``ids``, ``exists``, ``match_all``; ``match`` / ``multi_match`` match every document
  (the fake runs no BM25), ``knn`` only documents with a vector; the ranking of ``_search`` comes
  from canned lists per kind (``rankings``: chunk ids), restricted to the matching documents, and
  without one from a crude score (shared query tokens; cosine for ``knn``; RRF of both);
* ``_delete_by_query``, ``_update_by_query`` (the one Painless form the backend sends:
  ``ctx._source.<field> = params.<name>``), ``_reindex``, scroll scans, ``collapse``,
  ``_source`` includes / ``exclude_vectors``.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from dataclasses import dataclass
from typing import Any

from werkzeug import Request, Response

COMPAT_JSON = "application/vnd.elasticsearch+json;compatible-with=9"
PRODUCT = {"X-Elastic-Product": "Elasticsearch"}
SCRIPT_RE = re.compile(r"^\s*ctx\._source\.(\w+)\s*=\s*params\.(\w+)\s*;?\s*$")


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


def walk(node: Any):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def _values(doc: dict, field: str) -> list[Any]:
    v = doc.get(field)
    if v is None:
        return []
    return list(v) if isinstance(v, list) else [v]


def _cmp(a: Any, b: Any) -> tuple[Any, Any]:
    if isinstance(a, bool) or isinstance(b, bool):
        return a, b
    if isinstance(a, (int, float)) and isinstance(b, str):
        return a, float(b)
    if isinstance(a, str) and isinstance(b, (int, float)):
        return a, str(b)
    return a, b


def matches(doc: dict, doc_id: str, query: dict | None) -> bool:
    """Whether ``doc`` matches ``query`` (the clause kinds the backend sends)."""
    if not query:
        return True
    (kind, spec), = query.items()
    if kind == "match_all":
        return True
    if kind in ("match", "multi_match"):
        return True  # no text scoring here: every document matches, rankings come from the test
    if kind == "bool":
        def clauses(name):
            c = spec.get(name) or []
            return c if isinstance(c, list) else [c]
        if not all(matches(doc, doc_id, c) for c in clauses("filter") + clauses("must")):
            return False
        if any(matches(doc, doc_id, c) for c in clauses("must_not")):
            return False
        should = clauses("should")
        return not should or any(matches(doc, doc_id, c) for c in should)
    if kind == "term":
        (field, value), = spec.items()
        value = value["value"] if isinstance(value, dict) else value
        return value in _values(doc, field)
    if kind == "terms":
        (field, values), = spec.items()
        return bool(set(map(json.dumps, _values(doc, field))) & set(map(json.dumps, values)))
    if kind == "range":
        (field, bounds), = spec.items()
        vals = _values(doc, field)
        if not vals:
            return False
        for v in vals:
            ok = True
            for op, b in bounds.items():
                x, y = _cmp(v, b)
                ok &= {"gt": x > y, "gte": x >= y, "lt": x < y, "lte": x <= y}.get(op, True)
            if ok:
                return True
        return False
    if kind == "ids":
        return doc_id in spec["values"]
    if kind == "exists":
        return doc.get(spec["field"]) is not None
    raise AssertionError(f"fake Elasticsearch: unsupported query {kind!r}: {query}")


class FakeElasticsearch:
    """In-memory stand-in for the endpoints the backend uses; every request is recorded."""

    def __init__(self, httpserver):
        self.requests: list[Recorded] = []
        self.indices: dict[str, dict[str, Any]] = {}
        self.plugins: list[str] = []
        self.product_header = True
        self.bulk_top_level_429 = 0  # answer this many _bulk requests with a whole-request 429
        self.item_429: dict[str, int] = {}  # doc id (or chunk id) → times to reject it with 429
        self.item_reject: dict[str, tuple[int, dict]] = {}  # doc id (or chunk id) → permanent item error
        self.count_delta = 0  # added to the _count answers (of bodies containing count_delta_for)
        self.count_delta_for: str | None = None
        self.fail_aliases = False
        self.rankings: dict[str, list[str]] = {"bm25": [], "dense": [], "rrf": []}
        self.alias_responses: list[dict] = []  # canned (stale) GET _alias answers, served first
        self.scrolls: dict[str, list[dict]] = {}  # scroll id → pages not yet fetched
        self._clock = 1_700_000_000_000
        self._seq = 0
        httpserver.expect_request(re.compile(r"^/.*$")).respond_with_handler(self.handle)

    # ------------------------------------------------------------------ helpers
    def of(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    def aliases_of(self, alias: str) -> set[str]:
        return {n for n, i in self.indices.items() if alias in i["aliases"]}

    def alias_filter(self, alias: str) -> Any:
        (index,) = self.aliases_of(alias)
        return self.indices[index]["aliases"][alias].get("filter")

    def docs(self, index: str, **where: Any) -> dict[str, dict]:
        """The live documents of ``index`` (all, or those whose fields equal ``where``)."""
        return {i: d for i, d in self.indices[index]["docs"].items()
                if all(d.get(k) == v for k, v in where.items())}

    def chunk_ids(self, index: str) -> list[str]:
        """The chunk ids of the chunk documents of ``index`` (what ``rankings`` are made of)."""
        return list(dict.fromkeys(d["chunk_id"] for d in self.indices[index]["docs"].values()
                                  if d.get("doc_kind") == "chunk"))

    def visible(self, alias: str, **where: Any) -> dict[str, dict]:
        """The documents a reader of ``alias`` sees (its filter applied)."""
        (index,) = self.aliases_of(alias)
        flt = self.indices[index]["aliases"][alias].get("filter")
        return {i: d for i, d in self.docs(index, **where).items() if matches(d, i, flt)}

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

    def _alias_filter(self, expr: str) -> dict | None:
        """The filter of ``expr`` when it names one filtered alias (applied to reads through it)."""
        if expr in self.indices or "," in expr or "*" in expr:
            return None
        specs = [i["aliases"][expr] for i in self.indices.values() if expr in i["aliases"]]
        return specs[0].get("filter") if len(specs) == 1 else None

    @staticmethod
    def _and(query: dict | None, flt: dict | None) -> dict | None:
        if flt is None:
            return query
        return {"bool": {"filter": [flt] + ([query] if query else [])}}

    def _searchable(self, name: str) -> dict[str, dict]:
        """What search sees: live documents, or the last refresh's when refreshes are off."""
        i = self.indices[name]
        return i["docs"] if i["settings_refresh"] != "-1" else i["searchable"]

    def _refresh(self, name: str) -> None:
        i = self.indices[name]
        i["searchable"] = copy.deepcopy(i["docs"])

    def _bump(self, name: str, doc_id: str) -> tuple[int, int]:
        self._seq += 1
        self.indices[name]["seq"][doc_id] = (self._seq, 1)
        return self._seq, 1

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
        if parts == ["_reindex"] and m == "POST":
            return self._reindex(rec.json)
        if parts[:2] == ["_search", "scroll"] or parts == ["_search", "scroll"]:
            return self._scroll(rec)
        if len(parts) == 2 and parts[0] == "_alias" and m == "GET":
            if self.alias_responses:
                return self._reply(self.alias_responses.pop(0))
            names = sorted(self.aliases_of(parts[1]))
            if not names:
                return self._reply({"error": f"alias [{parts[1]}] missing", "status": 404}, 404)
            return self._reply({n: {"aliases": {parts[1]: self.indices[n]["aliases"][parts[1]]}} for n in names})
        if len(parts) == 1 and m == "PUT":
            return self._create(parts[0], rec.json)
        if len(parts) == 1 and m in ("GET", "HEAD"):
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
        if parts and parts[0] not in self.indices and not parts[0].startswith("_") \
                and self._resolve(parts[0]) in (None, []):
            return self._error(404, "index_not_found_exception", f"no such index [{parts[0]}]")
        if len(parts) == 2 and parts[1] == "_refresh":
            for n in self._resolve(parts[0]) or []:
                self._refresh(n)
            return self._reply({"_shards": {"total": 1, "successful": 1, "failed": 0}})
        if len(parts) == 2 and parts[1] == "_settings" and m == "PUT":
            value = (rec.json.get("index") or {}).get("refresh_interval")
            for n in self._resolve(parts[0]) or []:
                if value is not None:
                    if self.indices[n]["settings_refresh"] == "-1" and value != "-1":
                        self._refresh(n)
                    elif value == "-1":
                        self._refresh(n)  # what was written so far became searchable before
                    self.indices[n]["settings_refresh"] = str(value)
            return self._reply({"acknowledged": True})
        if len(parts) == 2 and parts[1] == "_mapping" and m == "GET":
            return self._reply({n: {"mappings": self.indices[n]["body"]["mappings"]} for n in self._resolve(parts[0]) or []})
        if len(parts) == 2 and parts[1] == "_mapping" and m == "PUT":
            for n in self._resolve(parts[0]) or []:
                self.indices[n]["body"]["mappings"]["_meta"] = rec.json["_meta"]
            return self._reply({"acknowledged": True})
        if len(parts) == 2 and parts[1] == "_count":
            names = self._resolve(parts[0]) or []
            q = self._and((rec.json or {}).get("query"), self._alias_filter(parts[0]))
            n = sum(1 for i in names for d_id, d in self._searchable(i).items() if matches(d, d_id, q))
            if self.count_delta_for is None or self.count_delta_for in rec.raw.decode().replace(" ", ""):
                n += self.count_delta
            return self._reply({"count": n, "_shards": {"total": 1, "successful": 1, "failed": 0}})
        if len(parts) == 2 and parts[1] in ("_delete_by_query", "_update_by_query"):
            return self._by_query(parts[0], parts[1], rec)
        if len(parts) == 2 and parts[1] == "_search":
            names = self._resolve(parts[0])
            if names is None:
                return self._error(404, "index_not_found_exception", f"no such index [{parts[0]}]")
            body = dict(rec.json or {})
            flt = self._alias_filter(parts[0])
            if flt is not None:
                assert "knn" not in body and "retriever" not in body, "fake: filtered-alias kNN not modelled"
                body["query"] = self._and(body.get("query"), flt)
            if "scroll" in rec.args:
                return self._scan_start(names, rec, body)
            return self._search(names, body)
        if len(parts) == 3 and parts[1] in ("_create", "_doc"):
            return self._doc(parts[0], parts[1], parts[2], rec)
        if len(parts) == 3 and parts[1] == "_alias" and m == "HEAD":
            ok = parts[0] in self.indices and parts[2] in self.indices[parts[0]]["aliases"]
            return Response(status=200 if ok else 404, headers=PRODUCT)
        return self._error(400, "fake_unsupported", f"{m} {request.path}")

    def _describe(self, name: str) -> dict[str, Any]:
        i = self.indices[name]
        return {"aliases": copy.deepcopy(i["aliases"]), "mappings": i["body"]["mappings"],
                "settings": {"index": {"creation_date": str(i["created"]),
                                       "number_of_shards": str(i["body"]["settings"].get("number_of_shards", 1))}}}

    def _create(self, name: str, body: dict) -> Response:
        if name in self.indices:
            return self._error(400, "resource_already_exists_exception", f"index [{name}] already exists")
        self._clock += 1000
        self.indices[name] = {"body": body, "aliases": {}, "docs": {}, "searchable": {}, "seq": {},
                              "settings_refresh": "1s", "created": self._clock}
        return self._reply({"acknowledged": True, "shards_acknowledged": True, "index": name})

    def _check_strict(self, name: str, source: dict) -> str | None:
        props = ((self.indices[name]["body"].get("mappings") or {}).get("properties") or {})
        if props and (self.indices[name]["body"]["mappings"].get("dynamic") == "strict"):
            unknown = sorted(set(source) - set(props))
            if unknown:
                return f"mapping set to strict, dynamic introduction of [{unknown[0]}] is not allowed"
        for name, value in source.items():
            if isinstance(value, dict) and (props.get(name) or {}).get("type") in ("keyword", "text", "integer", "date"):
                return f"failed to parse field [{name}] of type [{props[name]['type']}]"
        return None

    def _doc(self, index: str, kind: str, doc_id: str, rec: Recorded) -> Response:
        i = self.indices[index]
        m = rec.method
        if m == "GET":
            if doc_id not in i["docs"]:
                return self._reply({"_index": index, "_id": doc_id, "found": False}, 404)
            seq, term = i["seq"][doc_id]
            return self._reply({"_index": index, "_id": doc_id, "found": True, "_seq_no": seq, "_primary_term": term,
                                "_source": i["docs"][doc_id]})
        cas = ("if_seq_no" in rec.args, rec.args.get("if_seq_no"), rec.args.get("if_primary_term"))
        if cas[0] and (doc_id not in i["docs"] or i["seq"][doc_id] != (int(cas[1]), int(cas[2]))):
            return self._error(409, "version_conflict_engine_exception", f"[{doc_id}]: version conflict")
        if m == "DELETE":
            if doc_id not in i["docs"]:
                return self._reply({"_index": index, "_id": doc_id, "result": "not_found"}, 404)
            del i["docs"][doc_id]
            if rec.args.get("refresh") == "true":
                self._refresh(index)
            return self._reply({"_index": index, "_id": doc_id, "result": "deleted"})
        if kind == "_create" and doc_id in i["docs"]:
            return self._error(409, "version_conflict_engine_exception", f"[{doc_id}]: document already exists")
        why = self._check_strict(index, rec.json)
        if why:
            return self._error(400, "strict_dynamic_mapping_exception", why)
        i["docs"][doc_id] = rec.json
        seq, term = self._bump(index, doc_id)
        if rec.args.get("refresh") == "true":
            self._refresh(index)
        return self._reply({"_index": index, "_id": doc_id, "_seq_no": seq, "_primary_term": term,
                            "result": "created"}, 201)

    def _bulk(self, rec: Recorded) -> Response:
        if self.bulk_top_level_429 > 0:
            self.bulk_top_level_429 -= 1
            return self._error(429, "es_rejected_execution_exception", "rejected execution of bulk")
        lines = rec.ndjson
        items, errors, k = [], False, 0
        while k < len(lines):
            (op, meta), = lines[k].items()
            body = lines[k + 1] if op != "delete" else None
            k += 1 if op == "delete" else 2
            idx, _id = meta["_index"], meta["_id"]
            cid = (body or {}).get("chunk_id") if op in ("index", "create") else None
            key = _id if _id in self.item_429 or _id in self.item_reject else cid
            if key is not None and self.item_429.get(key, 0) > 0:
                self.item_429[key] -= 1
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": 429, "error": {
                    "type": "es_rejected_execution_exception", "reason": "write queue full"}}})
                continue
            if key is not None and key in self.item_reject:
                status, err = self.item_reject[key]
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": status, "error": err}})
                continue
            if idx not in self.indices:
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": 404, "error": {
                    "type": "index_not_found_exception", "reason": idx}}})
                continue
            docs = self.indices[idx]["docs"]
            if op == "delete":
                found = docs.pop(_id, None) is not None
                items.append({op: {"_index": idx, "_id": _id, "status": 200 if found else 404,
                                   "result": "deleted" if found else "not_found"}})
                continue
            if op == "update":
                if _id not in docs:
                    errors = True
                    items.append({op: {"_index": idx, "_id": _id, "status": 404, "error": {
                        "type": "document_missing_exception", "reason": f"[{_id}]: document missing"}}})
                    continue
                new = {**docs[_id], **body["doc"]}
            else:
                if op == "create" and _id in docs:
                    errors = True
                    items.append({op: {"_index": idx, "_id": _id, "status": 409, "error": {
                        "type": "version_conflict_engine_exception", "reason": "document already exists"}}})
                    continue
                new = body
            why = self._check_strict(idx, new)
            if why:
                errors = True
                items.append({op: {"_index": idx, "_id": _id, "status": 400, "error": {
                    "type": "strict_dynamic_mapping_exception", "reason": why}}})
                continue
            docs[_id] = new
            self._bump(idx, _id)
            items.append({op: {"_index": idx, "_id": _id, "status": 200 if op == "update" else 201,
                               "result": "updated" if op == "update" else "created"}})
        return self._reply({"took": 3, "errors": errors, "items": items})

    def _update_aliases(self, actions: list[dict]) -> Response:
        if self.fail_aliases:
            return self._error(500, "fake_failure", "alias update failed")
        for a in actions:  # validate everything first: the real call is atomic
            (op, spec), = a.items()
            if spec["index"] not in self.indices:
                return self._error(404, "index_not_found_exception", spec["index"])
            if op == "remove" and spec["alias"] not in self.indices[spec["index"]]["aliases"]:
                return self._error(404, "aliases_not_found_exception", spec["alias"])
        for a in actions:
            (op, spec), = a.items()
            aliases = self.indices[spec["index"]]["aliases"]
            if op == "add":
                aliases[spec["alias"]] = {k: v for k, v in spec.items() if k == "filter"}
            else:
                aliases.pop(spec["alias"], None)
        return self._reply({"acknowledged": True, "errors": False})

    def _by_query(self, expr: str, kind: str, rec: Recorded) -> Response:
        body = rec.json or {}
        names = self._resolve(expr) or []
        done = 0
        script = body.get("script")
        if script is not None:
            m = SCRIPT_RE.match(script["source"])
            assert m, f"fake Elasticsearch: unsupported script {script['source']!r}"
        for n in names:
            searchable = self._searchable(n)
            hits = [d_id for d_id, d in searchable.items() if matches(d, d_id, body.get("query"))]
            docs = self.indices[n]["docs"]
            for d_id in hits:
                if d_id not in docs:
                    continue
                if kind == "_delete_by_query":
                    del docs[d_id]
                else:
                    docs[d_id] = {**docs[d_id], m.group(1): script["params"][m.group(2)]}
                    self._bump(n, d_id)
                done += 1
            if rec.args.get("refresh") == "true":
                self._refresh(n)
        key = "deleted" if kind == "_delete_by_query" else "updated"
        return self._reply({"took": 1, "total": done, key: done, "failures": []})

    def _reindex(self, body: dict) -> Response:
        src, dest = body["source"]["index"], body["dest"]["index"]
        n = 0
        for d_id, d in self._searchable(src).items():
            if matches(d, d_id, body["source"].get("query")):
                self.indices[dest]["docs"][d_id] = copy.deepcopy(d)
                self._bump(dest, d_id)
                n += 1
        self._refresh(dest)
        return self._reply({"took": 1, "total": n, "created": n, "failures": []})

    @staticmethod
    def _source_of(doc: dict, spec: Any) -> dict:
        if spec is None or spec is True:
            return dict(doc)
        if isinstance(spec, list):
            return {k: v for k, v in doc.items() if k in spec}
        if isinstance(spec, dict):
            out = dict(doc)
            if spec.get("includes"):
                out = {k: v for k, v in out.items() if k in spec["includes"]}
            return out
        return {}

    def _scan_start(self, names: list[str], rec: Recorded, body: dict) -> Response:
        assert body["sort"] == "_doc", body
        docs = [{"_index": n, "_id": d_id, "_source": self._source_of(d, body.get("_source"))}
                for n in names for d_id, d in self._searchable(n).items() if matches(d, d_id, body.get("query"))]
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
        if "retriever" in body:
            kind = "rrf"
            children = body["retriever"]["rrf"]["retrievers"]
            std = next(c.get("retriever", c) for c in children if "standard" in c.get("retriever", c))
            query = std["standard"]["query"]
            knn = None
        elif "knn" in body:
            kind, knn = "dense", body["knn"]
            query = knn.get("filter")
        else:
            kind, knn, query = "bm25", None, body.get("query")
        pool = [(n, d_id, d) for n in names for d_id, d in self._searchable(n).items()
                if matches(d, d_id, query) and (knn is None or d.get("vector") is not None)]
        size = body.get("size", 10)
        if kind == "bm25" and not any(k in ("match", "multi_match") for k, _ in walk(query or {})):
            hits = [{"_index": n, "_id": d_id, "_score": 1.0, "_source": self._source_of(d, body.get("_source"))}
                    for n, d_id, d in pool]  # a plain filter query (catalogue, ids, lookups)
            if "collapse" in body:
                seen, kept = set(), []
                for h in hits:
                    v = h["_source"].get(body["collapse"]["field"])
                    if v not in seen:
                        seen.add(v)
                        kept.append(h)
                hits = kept
            return self._reply({"took": 1, "timed_out": False, "hits": {"hits": hits[:size]}})
        if not self.rankings.get(kind):  # no canned ranking: a crude one of our own
            scored = self._score(kind, body, knn, query, pool)
            hits = [{"_index": n, "_id": d_id, "_score": sc, "_source": self._source_of(d, body.get("_source"))}
                    for sc, n, d_id, d in scored]
            return self._reply({"took": 1, "timed_out": False, "hits": {"hits": hits[:size]}})
        by_chunk: dict[str, list] = {}
        for n, d_id, d in pool:
            by_chunk.setdefault(d.get("chunk_id"), []).append((n, d_id, d))
        hits = []
        for i, cid in enumerate(self.rankings[kind]):
            for n, d_id, d in by_chunk.get(cid, []):
                hits.append({"_index": n, "_id": d_id, "_score": 10.0 - i,
                             "_source": self._source_of(d, body.get("_source"))})
        return self._reply({"took": 1, "timed_out": False, "hits": {"hits": hits[:size]}})

    @staticmethod
    def _lexical(query: dict | None, d: dict) -> float:
        """Boost × shared distinct tokens of every match / multi_match clause (not BM25: an order
        good enough for tests that set no ``rankings``)."""
        score = 0.0
        for k, v in walk(query or {}):
            if k == "match":
                (field, spec), = v.items()
                q = spec["query"] if isinstance(spec, dict) else spec
                boost = spec.get("boost", 1.0) if isinstance(spec, dict) else 1.0
                score += boost * len(set(str(q).lower().split()) & set(str(d.get(field) or "").lower().split()))
            elif k == "multi_match":
                words = set(str(v["query"]).lower().split())
                for f in v["fields"]:
                    name, _, boost = f.partition("^")
                    score += float(boost or 1) * len(words & set(str(d.get(name) or "").lower().split()))
        return score

    def _score(self, kind: str, body: dict, knn: dict | None, query: dict | None, pool: list) -> list:
        def cosine(a, b):
            na = sum(x * x for x in a) ** 0.5 or 1.0
            nb = sum(x * x for x in b) ** 0.5 or 1.0
            return sum(x * y for x, y in zip(a, b)) / na / nb
        if kind == "dense":
            scored = [(cosine(knn["query_vector"], d["vector"]), n, d_id, d) for n, d_id, d in pool]
            return sorted(scored, key=lambda t: -t[0])[: knn["k"]]
        if kind == "bm25":
            scored = [(self._lexical(query, d), n, d_id, d) for n, d_id, d in pool]
            return sorted([t for t in scored if t[0] > 0], key=lambda t: -t[0])
        r = body["retriever"]["rrf"]
        children = [c.get("retriever", c) for c in r["retrievers"]]
        k_knn = next(c["knn"] for c in children if "knn" in c)
        lexical = sorted([(self._lexical(query, d), d_id) for n, d_id, d in pool], key=lambda t: -t[0])
        dense = sorted([(cosine(k_knn["query_vector"], d["vector"]), d_id) for n, d_id, d in pool
                        if d.get("vector") is not None], key=lambda t: -t[0])[: k_knn["k"]]
        fused: dict[str, float] = {}
        for ranking in ([i for s, i in lexical if s > 0], [i for _s, i in dense]):
            for rank, d_id in enumerate(ranking, 1):
                fused[d_id] = fused.get(d_id, 0.0) + 1.0 / (r["rank_constant"] + rank)
        by_id = {d_id: (n, d) for n, d_id, d in pool}
        return sorted([(sc, by_id[i][0], i, by_id[i][1]) for i, sc in fused.items()], key=lambda t: -t[0])
