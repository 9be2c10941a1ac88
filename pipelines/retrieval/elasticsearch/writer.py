"""The one writer of an Elasticsearch language index: a changeset staged as generation G+1 inside
the index, made visible by ONE alias swap.

The same calls as the embedded engine's ``language_index.IndexWriter`` — ``add_version``,
``replace_act``, ``drop_act``, ``set_vectors``, ``commit`` / ``abort``, a context manager that
commits on success and aborts on error — so the index asset and the CLI drive either backend.

How a publication stays invisible until it is published (spec, "Generations"): every document
carries ``gen_from`` / ``gen_to``; readers of generation G filter ``gen_from <= G < gen_to``.
The writer

* adds documents with ``gen_from = G+1`` — new rows, and the closed COPY of a row whose interval
  changes (readers of G keep the original);
* retires a document by setting its ``gen_to = G+1`` — the only field of a G-visible document it
  ever writes, and one readers of G still pass (G+1 > G);
* streams both to ``_bulk`` while the changeset is added (a changeset of 6,183 acts is ~700,000
  documents: nothing is kept but each act's row keys and intervals), 429s retried with backoff;
* at ``commit``: refresh, a count check (visible at G+1 = visible at G − retired + added), then
  the alias filter swapped to G+1 in one ``_aliases`` call, then ``delete_by_query`` of what
  generations older than ``keep_generations`` alone could see.

A failed bulk item, a failed count or any error before the swap aborts: the staged documents are
deleted, the retired ones restored, and G keeps serving. A writer killed half-way leaves staged
documents no reader sees; the next writer removes them before it starts (``discard_staged``). One
writer at a time: a lease document in the index (:meth:`IndexLifecycle.acquire`).
"""

from __future__ import annotations

import copy as copy_module
import datetime as dt
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
from elasticsearch import Elasticsearch
from elasticsearch.helpers import scan, streaming_bulk

from pipelines.retrieval.backend_common import normalise_version, version_date
from pipelines.retrieval.elasticsearch import intervals as iv
from pipelines.retrieval.elasticsearch.catalog import CATALOG_FIELDS, entry_of
from pipelines.retrieval.elasticsearch.documents import chunk_documents, vector_rows
from pipelines.retrieval.elasticsearch.errors import BulkLoadError, ElasticsearchBackendError, IndexLoadError
from pipelines.retrieval.elasticsearch.lifecycle import IndexLifecycle, Lease
from pipelines.retrieval.elasticsearch.names import response_body
from pipelines.retrieval.elasticsearch.visibility import OPEN_GEN, generation_clauses
from schemas import elasticsearch as es_schema

if TYPE_CHECKING:
    from pipelines.retrieval.backend_common import TextAnalyzer

log = logging.getLogger(__name__)

ROW_BATCH = 200  # acts whose rows one state scan reads
FETCH_BATCH = 500  # documents per ids / content-hash lookup


@dataclass
class CommitReport:
    """What a publication changed (the embedded writer's fields, plus Elasticsearch's own)."""
    generation: int
    changed: bool
    acts_changed: int = 0
    rows_added: int = 0
    rows_closed: int = 0
    rows_kept: int = 0
    rows_tombstoned: int = 0
    versions_added: int = 0
    versions_unchanged: int = 0
    vectors_added: int = 0
    rows: int = 0  # chunk documents in the physical index after the publication (all generations)
    live_rows: int = 0  # chunk documents the new generation shows
    seconds: float = 0.0
    index: str = ""
    alias: str = ""
    documents_written: int = 0
    documents_retired: int = 0
    documents_cleaned: int = 0
    alias_actions: list[dict[str, Any]] = field(default_factory=list)
    cleanup_errors: list[str] = field(default_factory=list)
    acts: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


class _Ref:
    """The writer's handle of one row: where its document is and what must still be written.

    ``existing``: a document of generation <= G (``doc_id``); ``buffered``: a new document whose
    content is ``doc`` (written at the next flush); ``copy``: a new document with the content of
    ``source_id``'s (fetched at the next flush); ``written``: a document of G+1 already sent;
    ``dropped``: a staged row removed before it was written."""
    __slots__ = ("state", "doc_id", "doc", "source_id", "has_vector", "content_hash")

    def __init__(self, state: str, doc_id: str, *, doc: dict | None = None, source_id: str | None = None,
                 has_vector: bool = False, content_hash: str = ""):
        self.state, self.doc_id, self.doc, self.source_id = state, doc_id, doc, source_id
        self.has_vector, self.content_hash = has_vector, content_hash


@dataclass
class _Act:
    act_id: str
    versions: list[str]
    rows: list[iv.Row]
    entry_id: str | None = None  # its catalogue document at G
    changed: bool = False
    dropped: bool = False


class ElasticsearchIndexWriter:
    """Stage changes to one Elasticsearch language index, then :meth:`commit` them as one
    generation (or :meth:`abort`). Holds the index's lease from construction to commit/abort.

    ``rebuild``: write a complete new physical index (a full reindex: every act must be added
    again), switched to by the same swap; the old physical index is deleted after it.
    """

    def __init__(self, lifecycle: IndexLifecycle, analyzer: "TextAnalyzer | None", *, rebuild: bool = False,
                 encoder_id: str | None = None):
        self.lifecycle = lifecycle
        self.client: Elasticsearch = lifecycle.client
        self.settings = lifecycle.settings
        self.names = lifecycle.names
        self.analyzer = analyzer
        self.encoder_id = encoder_id
        self.rebuild = rebuild
        self._t0 = time.perf_counter()
        self._open = False
        served = lifecycle.ensure()
        self._lease: Lease | None = lifecycle.acquire(served.index)
        self._refresh_off = False
        try:
            lifecycle.drop_others(keep=served.index)  # a killed rebuild's index, never aliased
            lifecycle.discard_staged(served.index, served.generation)
            migrated = None if rebuild else lifecycle.migrate()
            if migrated is not None:  # the lease went with the old index
                self._lease = lifecycle.acquire(migrated)
                served = lifecycle.served()
            self.served_index, self.G = served.index, served.generation
            self.gen = self.G + 1
            if rebuild:
                count = int(response_body(self.client.count(index=served.index))["count"])
                self.index = lifecycle.create_physical(expected_docs=count)
            else:
                self.index = served.index
            if self.settings.publish_refresh_interval is not None:
                lifecycle.set_refresh_interval(self.index, self.settings.publish_refresh_interval)
                self._refresh_off = True
            self._meta = lifecycle.meta(self.index)
            self._acts: dict[str, _Act] = {}
            self._entries = {} if rebuild else self._read_catalog()
            self._buffer: list[dict[str, Any]] = []
            self._dirty: list[iv.Row] = []
            self._ids: set[str] = set()
            self._retired: set[str] = set()
            self._written = self._deleted = self._retired_acts = self._written_acts = 0
            self._vectors: dict[str, list[float]] = {}  # content hash -> vector, from set_vectors / add_version
            self._vector_encoder: str | None = None
            self._index_has_vectors = self._count([{"term": {"has_vector": True}}]) > 0
            self._vectors_written = False
            self.report = CommitReport(self.G, False, index=self.index, alias=self.names.alias)
            self._open = True
        except BaseException:
            self._close(discard=True)
            raise

    # -- context manager ---------------------------------------------------------------------------
    def __enter__(self) -> "ElasticsearchIndexWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self._open:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("this writer has committed or aborted; open a new one")

    # -- reading the generation G -----------------------------------------------------------------
    def _count(self, clauses: list[dict[str, Any]], generation: int | None = None, kind: str = "chunk",
               index: str | None = None) -> int:
        query = {"bool": {"filter": [*generation_clauses(self.G if generation is None else generation, kind),
                                     *clauses]}}
        return int(response_body(self.client.count(index=index or self.served_index, query=query))["count"])

    def _read_catalog(self) -> dict[str, Any]:
        hits = scan(self.client, index=self.served_index, size=self.settings.scan_page_size,
                    scroll=self.settings.scan_keep_alive,
                    query={"query": {"bool": {"filter": generation_clauses(self.G, "act")}},
                           "_source": CATALOG_FIELDS})
        return {e.act_id: e for e in map(entry_of, hits)}

    def prefetch(self, act_ids: Iterable[str]) -> None:
        """Read the rows of many held acts in few scans (``ROW_BATCH`` acts per scan) before their
        versions are added: a refresh of thousands of acts then costs tens of requests, not one
        scan per act."""
        self._check_open()
        todo = sorted({a for a in act_ids if a not in self._acts and a in self._entries})
        for i in range(0, len(todo), ROW_BATCH):
            self._load(todo[i:i + ROW_BATCH])

    def _load(self, act_ids: Sequence[str]) -> None:
        rows: dict[str, list[iv.Row]] = {a: [] for a in act_ids}
        hits = scan(self.client, index=self.served_index, size=self.settings.scan_page_size,
                    scroll=self.settings.scan_keep_alive,
                    query={"query": {"bool": {"filter": [*generation_clauses(self.G),
                                                         {"terms": {"act_id": list(act_ids)}}]}},
                           "_source": ["act_id", *es_schema.STATE_SOURCE_FIELDS]})
        for h in hits:
            s = h["_source"]
            ref = _Ref("existing", h["_id"], has_vector=bool(s.get("has_vector")), content_hash=s.get("content_hash", ""))
            rows[s["act_id"]].append(iv.Row((s["chunk_id"], s.get("content_hash", ""), s.get("status") or ""),
                                            s["version_from"], s["version_to"], ref))
        for a in act_ids:
            entry = self._entries.get(a)
            self._acts[a] = _Act(a, list(entry.versions) if entry else [], rows[a], entry.doc_id if entry else None)

    def _act(self, act_id: str) -> _Act:
        if act_id.split(":", 1)[0] == act_id:
            raise ValueError(f"invalid act id {act_id!r}: expected '<jurisdiction>:<slug>'")
        if act_id not in self._acts:
            if act_id in self._entries:
                self._load([act_id])
            else:
                self._acts[act_id] = _Act(act_id, [], [])
        return self._acts[act_id]

    # -- staging -----------------------------------------------------------------------------------
    def _new_id(self, chunk_id: str, version_from: str) -> str:
        base = f"{chunk_id}@{version_from}@g{self.gen}"
        doc_id, n = base, 1
        while doc_id in self._ids:
            n += 1
            doc_id = f"{base}~{n}"
        self._ids.add(doc_id)
        return doc_id

    def _retire(self, doc_id: str, kind: str = "chunk") -> None:
        if doc_id in self._retired:
            return
        self._retired.add(doc_id)
        self._buffer.append({"_op_type": "update", "_index": self.index, "_id": doc_id,
                             "doc": {"gen_to": self.gen}})
        if kind == "chunk":
            self.report.documents_retired += 1
        else:
            self._retired_acts += 1

    def _reinterval(self, row: iv.Row, vf: str, vt: str) -> None:
        ref = row.ref
        if ref.state == "existing":
            self._retire(ref.doc_id)
            row.ref = _Ref("copy", self._new_id(row.key[0], vf), source_id=ref.doc_id, has_vector=ref.has_vector,
                           content_hash=ref.content_hash)
            self._dirty.append(row)
        elif ref.state == "written":
            self._buffer.append({"_op_type": "update", "_index": self.index, "_id": ref.doc_id,
                                 "doc": interval_fields(vf, vt)})
        row.version_from, row.version_to = vf, vt

    def _remove(self, act: _Act, row: iv.Row) -> None:
        ref = row.ref
        if ref.state == "existing":
            self._retire(ref.doc_id)
        elif ref.state == "written":
            self._buffer.append({"_op_type": "delete", "_index": self.index, "_id": ref.doc_id})
            self._deleted += 1
        else:  # buffered / copy: never written
            ref.state = "dropped"

    def _copy(self, act: _Act, row: iv.Row, vf: str, vt: str) -> None:
        ref = row.ref
        doc_id = self._new_id(row.key[0], vf)
        if ref.state == "buffered":
            new = _Ref("buffered", doc_id, doc=copy_module.copy(ref.doc), has_vector=ref.has_vector,
                       content_hash=ref.content_hash)
        else:
            source = ref.source_id if ref.state == "copy" else ref.doc_id
            new = _Ref("copy", doc_id, source_id=source, has_vector=ref.has_vector, content_hash=ref.content_hash)
        clone = iv.Row(row.key, vf, vt, new)
        act.rows.append(clone)
        self._dirty.append(clone)

    def _apply(self, act: _Act, plan: iv.Plan, docs: Sequence[dict[str, Any]] | None = None) -> None:
        """Carry out a plan of :mod:`.intervals` (copies first: they read the rows as they were)."""
        for row, vf, vt in plan.copies:
            self._copy(act, row, vf, vt)
        for row, vf, vt in plan.reinterval:
            self._reinterval(row, vf, vt)
        if plan.remove:
            gone = {id(row) for row in plan.remove}
            for row in plan.remove:
                self._remove(act, row)
            act.rows = [r for r in act.rows if id(r) not in gone]
        for i, vf, vt in plan.new:
            d = docs[i]  # type: ignore[index]
            ref = _Ref("buffered", self._new_id(d["chunk_id"], vf), doc=d, has_vector="vector" in d,
                       content_hash=d["content_hash"])
            row = iv.Row((d["chunk_id"], d["content_hash"], d.get("status") or ""), vf, vt, ref)
            act.rows.append(row)
            self._dirty.append(row)
        r = self.report
        r.rows_added += len(plan.new) + len(plan.copies)
        r.rows_closed += len(plan.reinterval)
        r.rows_tombstoned += len(plan.remove)
        r.rows_kept += plan.kept
        if plan.changed:
            act.changed = True
        if len(self._dirty) + len(self._buffer) >= self.settings.flush_docs:
            self._flush()

    # -- the public API ----------------------------------------------------------------------------
    def add_version(self, act_id: str, version: str | dt.date, chunks: pa.Table,
                    analysed: Sequence[Sequence[str]] | None = None, vectors: Any = None) -> None:
        """Publish one version of an act (``chunks``: its CHUNKS rows; ``analysed``: the terms of
        each chunk's ``heading_path + "\\n" + text``, else the analyser's; ``vectors``: an
        (n, dims) array, a sequence with None for chunks not embedded yet, or None). A version the
        act already holds with the same content changes nothing; one older than the act's newest is
        inserted (only rows whose content differs there change)."""
        self._check_open()
        v = normalise_version(version)
        where = f"{act_id} {v}"
        acts = set(chunks.column("act_id").unique().to_pylist()) if chunks.num_rows else set()
        if acts - {act_id}:
            raise ValueError(f"{where}: chunks of other acts {sorted(str(a) for a in acts - {act_id})}")
        docs = chunk_documents(chunks, vector_rows(vectors, chunks.num_rows, self.settings.vector_dims),
                               self.analyzer, analysed)
        self._add(self._act(act_id), v, docs)

    def _add(self, act: _Act, v: str, docs: list[dict[str, Any]]) -> None:
        keys = [(d["chunk_id"], d["content_hash"], d.get("status") or "") for d in docs]
        try:
            plan, versions = iv.apply_version(act.rows, act.versions, v, keys)
        except ValueError as exc:
            raise ValueError(f"{act.act_id}: {exc}") from None
        if v in act.versions and not plan.changed:
            self.report.versions_unchanged += 1
        elif v not in act.versions:
            self.report.versions_added += 1
            act.changed = True  # the catalogue lists the new version even when no row changes
        self._want_vectors(act, v, docs)
        act.versions = versions
        act.dropped = False
        self._apply(act, plan, docs)

    def _want_vectors(self, act: _Act, v: str, docs: list[dict[str, Any]]) -> None:
        """Vectors given for chunks whose rows are kept but have none yet: the rows get them at
        commit (as ``set_vectors`` would)."""
        given = {d["content_hash"]: d["vector"] for d in docs if "vector" in d}
        if not given:
            return
        self._vector_encoder = self._vector_encoder or self.encoder_id
        for row in act.rows:
            if row.visible_at(v) and not row.ref.has_vector and row.ref.content_hash in given:
                self._vectors.setdefault(row.ref.content_hash, given[row.ref.content_hash])

    def replace_act(self, act_id: str, versions: Sequence[tuple]) -> None:
        """The act's complete history: ``(version, chunks)``, ``(version, chunks, analysed)`` or
        ``(version, chunks, analysed, vectors)`` per version, in any order. The same history as held
        changes nothing; otherwise every row of the act is retired and the versions added again in
        order (vectors of unchanged content are found again by content hash)."""
        self._check_open()
        layout: dict[str, list[dict[str, Any]]] = {}
        for item in versions:
            item = tuple(item)
            v, chunks, analysed, vectors = (*item, None, None)[:4]
            v = normalise_version(v)
            if v in layout:
                raise ValueError(f"{act_id}: version {v} given twice")
            layout[v] = chunk_documents(chunks, vector_rows(vectors, chunks.num_rows, self.settings.vector_dims),
                                        self.analyzer, analysed)
        act = self._act(act_id)
        if act.versions == sorted(layout) and all(
                sorted(r.key for r in iv.visible_at(act.rows, w)) ==
                sorted((d["chunk_id"], d["content_hash"], d.get("status") or "") for d in layout[w])
                for w in act.versions):
            self.report.versions_unchanged += len(act.versions)
            return
        self._apply(act, iv.Plan(remove=list(act.rows)))
        act.versions = []
        for v in sorted(layout):
            self._add(act, v, layout[v])

    def drop_act(self, act_id: str) -> None:
        """Remove an act: its rows are retired, it leaves ``acts()``."""
        self._check_open()
        if act_id not in self._entries and act_id not in self._acts:
            raise ValueError(f"unknown act {act_id!r}")
        act = self._act(act_id)
        self._apply(act, iv.Plan(remove=list(act.rows)))
        act.versions, act.dropped, act.changed = [], True, True

    def set_vectors(self, content_hashes: Sequence[str], vectors: np.ndarray, encoder_id: str | None = None) -> None:
        """Dense vectors by content hash (``embedding_cache``'s key): every row of the new generation
        with that content and no vector yet gets it at commit — rows added in this publication
        included (the embedding backfill)."""
        self._check_open()
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(content_hashes):
            raise ValueError(f"{len(content_hashes)} content hashes but vectors of shape {arr.shape}")
        if arr.shape[1] != self.settings.vector_dims:
            raise ValueError(f"vectors of dimension {arr.shape[1]}, the index holds {self.settings.vector_dims}")
        held = self._meta.get("encoder")
        enc = encoder_id or self.encoder_id
        if enc and held and enc != held:
            raise ValueError(f"vectors of encoder {enc}, the index holds {held}'s")
        self._vector_encoder = enc or self._vector_encoder
        for h, row in zip(content_hashes, arr):
            self._vectors[h] = row.tolist()

    # -- writing -----------------------------------------------------------------------------------
    def _doc_of(self, row: iv.Row, content: Mapping[str, Any]) -> dict[str, Any]:
        src = {k: content[k] for k in es_schema.DOC_FIELDS if k in content and content[k] is not None}
        src.update(interval_fields(row.version_from, row.version_to))
        src["gen_from"], src["gen_to"] = self.gen, OPEN_GEN
        vector = src.get("vector")
        if vector is None and row.ref.content_hash in self._vectors:
            vector = src["vector"] = self._vectors[row.ref.content_hash]
            self.report.vectors_added += 1
        if vector is None:
            src.pop("vector", None)
        src["has_vector"] = vector is not None
        row.ref.has_vector = vector is not None
        self._vectors_written |= vector is not None
        missing = [f for f in es_schema.REQUIRED_DOC_FIELDS if src.get(f) is None]
        if missing:
            raise ValueError(f"document {src.get('chunk_id', row.ref.doc_id)}: missing required fields {missing}")
        return src

    def _fetch(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Full sources (vectors included: ``exclude_vectors: false``, Elasticsearch 9.1+) by id."""
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), FETCH_BATCH):
            batch = list(ids[i:i + FETCH_BATCH])
            resp = response_body(self.client.search(index=self.index, query={"ids": {"values": batch}}, size=len(batch),
                                                    source={"exclude_vectors": False}, track_total_hits=False))
            for h in resp.get("hits", {}).get("hits", []):
                out[h["_id"]] = h.get("_source") or {}
        lost = [i for i in ids if i not in out]
        if lost:
            raise ElasticsearchBackendError(f"{len(lost)} document(s) to copy are gone: {lost[:5]}")
        return out

    def _reuse_vectors(self, rows: list[iv.Row]) -> None:
        """New rows without a vector take the one a document of the same content already has (the
        cache is keyed by content: the same text embeds to the same vector)."""
        want = sorted({r.ref.content_hash for r in rows if not r.ref.has_vector and r.ref.content_hash
                       and r.ref.content_hash not in self._vectors})
        for i in range(0, len(want), FETCH_BATCH):
            batch = want[i:i + FETCH_BATCH]
            resp = response_body(self.client.search(
                index=self.served_index, size=len(batch), track_total_hits=False,
                query={"bool": {"filter": [{"terms": {"content_hash": batch}}, {"term": {"has_vector": True}}]}},
                collapse={"field": "content_hash"},
                source={"includes": ["content_hash", "vector"], "exclude_vectors": False}))
            for h in resp.get("hits", {}).get("hits", []):
                s = h.get("_source") or {}
                if s.get("vector") is not None:
                    self._vectors.setdefault(s["content_hash"], s["vector"])

    def _flush(self) -> None:
        """Send what is staged: buffered documents and retirements, then the copies (their sources
        read back; a copy of a document written in this publication needs a refresh first)."""
        dirty = [r for r in self._dirty if r.ref.state in ("buffered", "copy")]
        self._dirty = []
        if self._index_has_vectors:
            self._reuse_vectors(dirty)
        copies = [r for r in dirty if r.ref.state == "copy"]
        for row in dirty:
            if row.ref.state == "buffered":
                self._buffer.append({"_op_type": "index", "_index": self.index, "_id": row.ref.doc_id,
                                     "_source": self._doc_of(row, row.ref.doc)})
                row.ref.state, row.ref.doc = "written", None
                self._written += 1
        self._send()
        if copies:
            if any(r.ref.source_id in self._ids for r in copies):
                self.client.indices.refresh(index=self.index)  # a source written by this publication
            sources = self._fetch(sorted({r.ref.source_id for r in copies}))
            for row in copies:
                self._buffer.append({"_op_type": "index", "_index": self.index, "_id": row.ref.doc_id,
                                     "_source": self._doc_of(row, sources[row.ref.source_id])})
                row.ref.state, row.ref.source_id = "written", None
                self._written += 1
            self._send()
        if self._lease is not None:
            self.lifecycle.heartbeat(self._lease)

    def _send(self) -> None:
        if not self._buffer:
            return
        actions, self._buffer = self._buffer, []
        s = self.settings
        failed: list[tuple[str, int, Any]] = []
        for ok, item in streaming_bulk(
            self.client, actions,
            chunk_size=s.bulk_chunk_size, max_chunk_bytes=s.bulk_max_chunk_bytes,
            max_retries=s.bulk_max_retries, initial_backoff=s.bulk_initial_backoff_s,
            max_backoff=s.bulk_max_backoff_s,
            # False: per-item 429s are only retried when errors are not raised at once
            # (elastic/elasticsearch-py#864); the rest are collected and fail the publication
            raise_on_error=False, raise_on_exception=True, yield_ok=False,
        ):
            if not ok:
                _op, info = next(iter(item.items()))
                failed.append((str(info.get("_id")), int(info.get("status", 0)), info.get("error")))
        if failed:
            raise BulkLoadError(self.index, failed)

    def _vectors_for_existing(self) -> None:
        """Rows of generation G without a vector whose content got one (``set_vectors``): retired
        and copied with it; rows written by this publication are updated in place."""
        if not self._vectors:
            return
        hashes = sorted(self._vectors)
        for i in range(0, len(hashes), FETCH_BATCH):
            batch = hashes[i:i + FETCH_BATCH]
            hits = scan(self.client, index=self.served_index, size=self.settings.scan_page_size,
                        scroll=self.settings.scan_keep_alive,
                        query={"query": {"bool": {"filter": [*generation_clauses(self.G),
                                                             {"terms": {"content_hash": batch}},
                                                             {"term": {"has_vector": False}}]}},
                               "_source": ["act_id", *es_schema.STATE_SOURCE_FIELDS]})
            for h in hits:
                if h["_id"] in self._retired:
                    continue
                s = h["_source"]
                act = self._acts.get(s["act_id"])
                row = next((r for r in act.rows if r.ref.state == "existing" and r.ref.doc_id == h["_id"]), None) \
                    if act is not None else None
                if row is None:  # an act this publication does not otherwise touch: no state needed
                    row = iv.Row((s["chunk_id"], s.get("content_hash", ""), s.get("status") or ""), s["version_from"],
                                 s["version_to"], _Ref("existing", h["_id"], content_hash=s.get("content_hash", "")))
                self._reinterval(row, row.version_from, row.version_to)  # retire + copy (the vector is added)
        for act in self._acts.values():
            for row in act.rows:
                if row.ref.state == "written" and not row.ref.has_vector and row.ref.content_hash in self._vectors:
                    self._buffer.append({"_op_type": "update", "_index": self.index, "_id": row.ref.doc_id,
                                         "doc": {"vector": self._vectors[row.ref.content_hash], "has_vector": True}})
                    row.ref.has_vector = True
                    self.report.vectors_added += 1

    def _catalogue(self) -> None:
        keep = self.settings.keep_versions
        for act in self._acts.values():
            if keep is not None and act.changed and not act.dropped:
                plan, versions = iv.prune(act.rows, act.versions, keep)
                if plan.changed:
                    self._apply(act, plan)
                    act.versions = versions
            if not act.changed:
                continue
            if act.entry_id is not None:
                self._retire(act.entry_id, kind="act")
            if not act.dropped and act.versions:
                doc_id = f"act@{act.act_id}@g{self.gen}"
                self._buffer.append({"_op_type": "index", "_index": self.index, "_id": doc_id, "_source": {
                    "doc_kind": "act", "act_id": act.act_id, "jurisdiction": act.act_id.split(":", 1)[0],
                    "versions": act.versions, "chunks": sum(r.version_to == iv.OPEN_VERSION for r in act.rows),
                    "gen_from": self.gen, "gen_to": OPEN_GEN}})
                self._written_acts += 1
            self.report.acts.append(act.act_id)
        self.report.acts.sort()
        self.report.acts_changed = len(self.report.acts)

    # -- commit / abort ----------------------------------------------------------------------------
    def commit(self) -> CommitReport:
        """Write what is staged, check it, and swap the alias to generation G+1 in one call; the
        report says what changed. Nothing staged: no new generation (the alias is untouched)."""
        self._check_open()
        r = self.report
        step = "stage"
        try:
            self._vectors_for_existing()
            self._catalogue()
            step = "bulk"
            self._flush()
            self._send()
            if not (r.acts or self._written or r.documents_retired or self._deleted or self.rebuild):
                self._close(discard=False)  # nothing staged: no new generation, the alias untouched
                r.seconds = round(time.perf_counter() - self._t0, 3)
                return r
            step = "refresh"
            self.client.indices.refresh(index=self.index)
            step = "count"
            self._check_counts()
            step = "meta"
            self._record_encoder()
            step = "aliases"
            r.alias_actions = self.lifecycle.swap(self.index, self.gen,
                                                  self.served_index if self.index != self.served_index else None)
        except BaseException as exc:
            self._close(discard=True)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise IndexLoadError(f"publishing generation {self.gen} of {self.names.alias} failed at step '{step}': "
                                 f"{exc}; what it staged was discarded and generation {self.G} still serves",
                                 index=self.index, step=step) from exc
        r.generation, r.changed = self.gen, True
        r.documents_written = self._written
        self._close(discard=False)
        try:
            if self.rebuild:
                self.lifecycle.drop_others(keep=self.index)
            r.documents_cleaned = self.lifecycle.cleanup(self.index, self.gen)
        except Exception as exc:  # published: a failed cleanup is retried by the next publication's
            msg = f"cleanup of {self.index} after generation {self.gen} failed: {exc}"
            log.warning(msg)
            r.cleanup_errors.append(msg)
        r.seconds = round(time.perf_counter() - self._t0, 3)
        log.info("published %s generation %d: %d acts, %d documents written, %d retired", self.names.alias,
                 self.gen, r.acts_changed, r.documents_written, r.documents_retired)
        return r

    def _check_counts(self) -> None:
        r = self.report
        before = 0 if self.rebuild else self._count([])
        acts_before = 0 if self.rebuild else self._count([], kind="act")
        after = self._count([], generation=self.gen, index=self.index)
        acts_after = self._count([], generation=self.gen, kind="act", index=self.index)
        expected = before - r.documents_retired + self._written - self._deleted
        expected_acts = acts_before - self._retired_acts + self._written_acts
        if (after, acts_after) != (expected, expected_acts):
            raise ElasticsearchBackendError(
                f"count check failed for generation {self.gen} of {self.index}: {after} chunk documents visible, "
                f"{expected} expected ({before} at generation {self.G} − {r.documents_retired} retired + "
                f"{self._written - self._deleted} added); {acts_after} act entries, {expected_acts} expected")
        r.live_rows = after
        r.rows = int(response_body(self.client.count(index=self.index, query={"term": {"doc_kind": "chunk"}}))["count"])

    def _record_encoder(self) -> None:
        """The encoder of the vectors the index holds, in its mapping's ``_meta`` (searches with
        another encoder are refused)."""
        enc = self._vector_encoder or (self.encoder_id if self._vectors_written else None)
        held = self._meta.get("encoder")
        if not enc or enc == held:
            return
        if held:
            raise ElasticsearchBackendError(f"{self.index} holds vectors of encoder {held}; this publication "
                                            f"writes {enc}'s: rebuild the index (rebuild=True) to change encoder")
        self.client.indices.put_mapping(index=self.index, meta={"lexpipe": {**self._meta, "encoder": enc}})

    def abort(self) -> None:
        """Discard everything staged; the serving generation stays."""
        if self._open:
            self._close(discard=True)

    def _close(self, *, discard: bool) -> None:
        self._open = False
        try:
            if discard:
                self._buffer, self._dirty = [], []
                if getattr(self, "index", None) is not None and getattr(self, "G", None) is not None:
                    if self.rebuild and self.index != self.served_index:
                        self.client.indices.delete(index=self.index, ignore_unavailable=True)
                    else:
                        self.lifecycle.discard_staged(self.index, self.G)
            if self._refresh_off:
                self.lifecycle.set_refresh_interval(self.index, self.settings.refresh_interval)
                self._refresh_off = False
        except Exception as exc:  # the next writer discards what is left
            log.error("%s: could not discard generation %s: %s", self.names.alias, getattr(self, "gen", "?"), exc)
        finally:
            if self._lease is not None:
                try:
                    self.lifecycle.release(self._lease)
                except Exception as exc:
                    log.error("%s: could not release the lease: %s", self.names.alias, exc)
                self._lease = None


def interval_fields(version_from: str, version_to: str) -> dict[str, str]:
    """A row's interval as stored: version ids and their dates (``valid_to`` open = 9999-12-31)."""
    return {"version_from": version_from, "version_to": version_to,
            "valid_from": version_date(version_from),
            "valid_to": iv.OPEN_DATE if version_to == iv.OPEN_VERSION else version_date(version_to)}
