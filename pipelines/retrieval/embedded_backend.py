"""The embedded (laptop) search backend: statutes in one index per language, case law in LanceDB.

Statutes: every act and version of a language in one index (:mod:`pipelines.retrieval.language_index`,
``index/embedded/statutes_<lang>``): rows carried across versions, one generation switch per
publication (readers see the old generation or the new one, never half a changeset), every
published version queryable (``as_of``, ``version``). Why not one table per act version any more
(issue 24): at 6,636 German acts that is thousands of tables, and a search over the jurisdiction
would open them all. A search resolves each act's version (current, as of a date, exact) and then:

* small scopes (up to :data:`IN_MEMORY_MAX_ROWS` visible rows: the Polish codes, a German search
  named to a few acts) are materialised once per (generation, act, version) as a *view*, named
  ``view:<generation>:<act>@<version>``, and searched exactly as a table of that version was — the
  same rows in the version's chunk order, the same in-memory BM25, dense, gAIus, reranker and
  German section fusion — so every ranking and figure of the per-version tables holds;
* large scopes (an unfiltered German search over every act) are searched over the whole index:
  BM25 over its postings with the visibility mask, dense over the rows that have vectors (the
  backfill adds them), fused (:meth:`EmbeddedBackend.language_search`).

Case-law collections (``pl:cases``, ``de:cases``: one table each, rebuilt per sync) stay LanceDB
tables with a pointer file per collection (``serving/<act>.json``), BM25 on our own analysed
tokens (LanceDB's tokenizer has no Polish stemmer), dense on normalised vectors (cosine).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from core.atomic import atomic_write_json
# shared with the Elasticsearch backend (backend_common); re-exported here for existing imports
from pipelines.retrieval.backend_common import CANDIDATES, BuildReport, TextAnalyzer, bigrams  # noqa: F401
from pipelines.retrieval.cross_act_merge import merge_acts
from pipelines.retrieval.encoders import Encoder
# HybridConfig, RRF_CONFIG and SearchError live in fusion / interface (shared with the
# Elasticsearch backend); re-exported here for existing imports
from pipelines.retrieval.fusion import RRF_CONFIG, HybridConfig, fuse  # noqa: F401
from pipelines.retrieval.interface import (  # noqa: F401
    EncoderMismatch, Filters, Hit, SearchError, SearchRequest, collapse_to_articles, encoder_mismatch,
)
from pipelines.retrieval.languages import DEFAULT_LANGUAGE, PROFILES
from pipelines.retrieval.reranker import LexicalStats, LinearReranker, rerank_legs
from pipelines.retrieval.section_fusion import (
    LEG_SPECS, SectionFusion, TableContext, dense_query, fuse_hits, leg_queries,
)

os.environ.setdefault("LANCE_LOG", "error")  # lance's deprecation chatter is not for our users
_SAFE = re.compile(r"^[A-Za-z0-9:_^.\-]+$")  # ids, statuses, versions: nothing that could escape SQL
LEG_NAMES = ("bm25", "dense", "gaius")
RESOLVED_CACHE = 64  # filters whose statute resolution is kept per generation
IN_MEMORY_MAX_ROWS = 50_000  # dense and full-text legs score tables up to this size in memory (exact)
UNION = "|"  # joins the table names of a union "table" (several acts searched as one corpus)
VIEW = "view:"  # a statute act version materialised from the language index: view:<generation>:<act>@<version>
PER_ACT_MAX = 24  # more acts than this, and more rows than IN_MEMORY_MAX_ROWS: search the language index whole


def _sql_in(column: str, values: Sequence[str]) -> str:
    for v in values:
        if not _SAFE.match(v):
            raise SearchError(f"invalid {column} value {v!r}")
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class _SnapshotIdf:
    """``long_query.CorpusIdf``'s interface over a language index snapshot (its BM25 document
    frequencies), for the key-term reduction of long questions in the large scope."""

    def __init__(self, snap):
        self.scorer = snap.scorer("terms")

    def idf(self, term: str) -> float | None:
        import math

        from pipelines.retrieval.language_index.hashing import hash_strings

        df = self.scorer._postings(int(hash_strings([term])[0]))[2]
        return None if not df else math.log((self.scorer.n + 1) / df)


def _rrf(lp) -> HybridConfig:
    """Reciprocal-rank fusion of the lexical and dense legs with the language's weights, when its
    hybrid is RRF already (German), else the default RRF."""
    return lp.hybrid if getattr(lp.hybrid, "method", None) == "rrf" else RRF_CONFIG


def where_clause(filters: Filters) -> str | None:
    parts = []
    if filters.statuses:
        parts.append(_sql_in("status", filters.statuses))
    if filters.jurisdictions:
        parts.append(_sql_in("jurisdiction", filters.jurisdictions))
    return " AND ".join(parts) or None


def vector_rows(column: pa.ChunkedArray) -> np.ndarray:
    """The rows of a vector column as a matrix, a zero row where a row has no vector yet (the
    embedding backfill fills the index act by act, so a scope of several acts mixes rows with and
    without one). ``flatten()`` alone skips the null rows, and the matrix no longer lined up with
    the rows: a hybrid search over BGB (embedded) and StGB (not yet) crashed on the reshape."""
    arr = column.combine_chunks()
    n = len(arr)
    if arr.null_count == 0:
        return arr.flatten().to_numpy().reshape(n, -1)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    dim = arr.type.list_size if pa.types.is_fixed_size_list(arr.type) else None
    present = arr.filter(pa.array(valid)).flatten().to_numpy()
    if dim is None:
        dim = present.size // max(1, int(valid.sum())) if valid.any() else 1
    out = np.zeros((n, dim), dtype=np.float32)
    if valid.any():
        out[valid] = present.reshape(-1, dim)
    return out


class EmbeddedBackend:
    def __init__(self, root: Path, *, encoder: Encoder, analyzer: TextAnalyzer, keep_versions: int = 3,
                 grace_s: float = 600.0, hybrid: HybridConfig = HybridConfig(),
                 reranker: LinearReranker | None = None, section_fusion: "SectionFusion | None" = None,
                 cross_act: str = "union"):
        import lancedb

        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.db = lancedb.connect(str(self.root / "lancedb"))
        self.encoder, self.analyzer, self.keep, self.grace_s = encoder, analyzer, keep_versions, grace_s
        self.hybrid, self.reranker = hybrid, reranker
        self.section_fusion = section_fusion  # German hybrid: reduced-query legs + §-prior (section_fusion.py)
        self._tables: dict[str, object] = {}
        self._gaius: dict[str, object] = {}
        self._lexical: dict[str, LexicalStats] = {}
        self._sections: dict[str, TableContext] = {}
        self._row_counts: dict[str, int] = {}
        self._built_with: dict[str, str | None] = {}  # table → id of the encoder that embedded it
        # hybrid legs run side by side: LanceDB and the encoder release the GIL while they work
        # several acts in one search: one corpus ("union", default), or per-act results merged
        # (``cross_act_merge.METHODS``); see cross_act_merge.py for the measurements
        self.cross_act = cross_act
        self._pool = ThreadPoolExecutor(max_workers=len(LEG_NAMES), thread_name_prefix="hybrid-leg")
        self._lock = threading.RLock()  # gaius() opens the table while holding it
        self.lang = getattr(analyzer, "lang", DEFAULT_LANGUAGE)
        self._statutes = None  # the language index, opened on first use
        self._view_generation: int | None = None
        # (generation, filters) → the statute acts' (act, version, view); the serving folder's acts by
        # its modification time: an unfiltered German query resolved 6,180 acts in ~50 ms each time
        self._resolved: OrderedDict[tuple, list[tuple[str, str, str]]] = OrderedDict()
        self._serving_acts: tuple[tuple[int, int], list[str]] | None = None

    # -- the language index (statutes) -------------------------------------------------------------
    @property
    def statutes(self):
        """The language's statute index (``<root>/statutes_<lang>``)."""
        if self._statutes is None:
            from pipelines.retrieval.language_index import LanguageIndex

            self._statutes = LanguageIndex(self.root / f"statutes_{self.lang}", self.lang)
        return self._statutes

    def snapshot(self):
        """The serving generation of the statute index; views of an older generation are dropped."""
        snap = self.statutes.snapshot()
        if snap.generation != self._view_generation:
            with self._lock:
                for cache in (self._tables, self._gaius, self._lexical, self._sections, self._row_counts,
                              self._built_with):
                    for name in [n for n in cache if VIEW in n]:
                        del cache[name]
                self._resolved.clear()
                self._view_generation = snap.generation
        return snap

    @staticmethod
    def _is_collection(act_id: str) -> bool:
        from pipelines.retrieval.languages import cases_acts

        return act_id in cases_acts()

    def _view_name(self, generation: int, act_id: str, version: str) -> str:
        return f"{VIEW}{generation}:{act_id}@{version}"

    def _view(self, name: str) -> pa.Table:
        """A view's rows, in the version's chunk order (the published chunks file's, when the home
        has it), shaped as a table of the version was (``documents``)."""
        from pipelines.retrieval.interface import Filters as _F

        generation, rest = name[len(VIEW):].split(":", 1)
        act_id, version = rest.rsplit("@", 1)
        snap = self.snapshot()
        if str(snap.generation) != generation:
            raise SearchError(f"{name}: generation {generation} is no longer served (now {snap.generation}): not found")
        t = snap.view(_F(act_ids=(act_id,), version=version))
        order = self._chunk_order(act_id, version)
        if order is not None and t.num_rows:
            pos = {c: i for i, c in enumerate(order)}
            keys = [pos.get(c, len(pos) + i) for i, c in enumerate(t["chunk_id"].to_pylist())]
            t = t.take(pa.array(np.argsort(np.asarray(keys), kind="stable")))
        for col in ("text_analyzed", "text_bigrams"):  # as a LanceDB table types them (unions concatenate both)
            if col in t.column_names and t.schema.field(col).type != pa.string():
                t = t.set_column(t.schema.get_field_index(col), col, t[col].cast(pa.string()))
        if "vector" not in t.column_names:
            dim = self.encoder.dim
            t = t.append_column("vector", pa.FixedSizeListArray.from_arrays(
                pa.array(np.zeros(t.num_rows * dim, np.float32)), dim))
        return t

    def _chunk_order(self, act_id: str, version: str) -> list[str] | None:
        """The chunk ids of a published version in file order (ties of equal scores break by it)."""
        import pyarrow.parquet as pq

        jur, slug = act_id.split(":", 1)
        path = self.root.parent.parent / "corpus" / jur / slug / version / "chunks.parquet"
        try:
            return pq.read_table(path, columns=["chunk_id"])["chunk_id"].to_pylist()
        except (FileNotFoundError, OSError):
            return None

    # -- serving state ----------------------------------------------------------------------------
    def serving_pointer(self, act_id: str) -> Path:
        """The pointer a new version of ``act_id`` is switched to serve through: the statute index's
        ``CURRENT`` file, or a collection's ``serving/<act>.json``; the Elasticsearch backend's
        counterpart is its serving alias."""
        if not self._is_collection(act_id):
            return self.statutes.root / "CURRENT"
        return self._pointer_file(act_id)

    def _pointer_file(self, act_id: str) -> Path:
        """``serving/<act>.json``: a LanceDB-table act's versions and the one served."""
        return self.root / "serving" / f"{act_id.replace(':', '_')}.json"

    def state(self, act_id: str) -> dict:
        p = self._pointer_file(act_id)
        return json.loads(p.read_text()) if p.exists() else {"serving": None, "versions": {}}

    def acts(self) -> list[str]:
        """Every act searchable here: the statute index's and the case-law collections'.

        Kept while the statute index's generation and the ``serving`` folder are the same (a
        pointer is written by a rename, which touches the folder): reading the pointers and sorting
        6,180 German acts took ~4 ms of every unfiltered query."""
        d = self.root / "serving"
        try:
            stamp = d.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = -1
        snap = self.snapshot()
        cached = self._serving_acts
        if cached is not None and cached[0] == (stamp, snap.generation):
            return list(cached[1])
        tables = [json.loads(p.read_text())["act_id"] for p in d.glob("*.json")] if stamp >= 0 else []
        acts = sorted(set(tables) | set(snap.acts()))
        self._serving_acts = ((stamp, snap.generation), acts)
        return list(acts)

    def table_of(self, act_id: str, version: str | None = None) -> str:
        """The name a search of ``act_id`` at ``version`` (default: serving) reads: a statute act's
        view of the language index, or a collection's LanceDB table (benches address legs by it)."""
        snap = self.snapshot()
        if act_id in snap.acts():
            v = version or snap.serving_version(act_id)
            if v not in snap.versions(act_id):
                raise SearchError(f"{act_id} has no indexed version {v} (have {snap.versions(act_id)})")
            return self._view_name(snap.generation, act_id, v)
        state = self.state(act_id)
        return state["versions"][version or state["serving"]]["table"]

    def serving_version(self, act_id: str) -> str | None:
        v = self.snapshot().serving_version(act_id)
        return v if v is not None else self.state(act_id)["serving"]

    # -- building ---------------------------------------------------------------------------------
    def documents(self, chunks: pa.Table, vectors: np.ndarray, jurisdiction: str) -> pa.Table:
        """Chunk rows + analysed/folded token strings + vectors: what a table stores."""
        texts = [f"{h}\n{t}" for h, t in zip(chunks["heading_path"].to_pylist(), chunks["text"].to_pylist())]
        analysed = self.analyzer.analyze_many(texts)
        n = chunks.num_rows
        if vectors.shape != (n, self.encoder.dim):
            raise ValueError(f"{n} chunks but vectors of shape {vectors.shape}")
        return pa.table({
            "chunk_id": chunks["chunk_id"], "article_id": chunks["article_id"], "act_id": chunks["act_id"],
            "jurisdiction": pa.array([jurisdiction] * n), "version": pa.array([str(v) for v in chunks["version"].to_pylist()]),
            "status": chunks["status"], "heading_path": chunks["heading_path"], "text": chunks["text"],
            "text_analyzed": pa.array([" ".join(toks) for toks in analysed]),
            "text_folded": pa.array([" ".join(self.analyzer.fold(toks)) for toks in analysed]),
            "text_bigrams": pa.array([" ".join(bigrams(toks)) for toks in analysed]),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(vectors, np.float32).ravel()), self.encoder.dim),
        })

    def build(self, act_id: str, version: str, chunks: pa.Table, vectors: np.ndarray) -> BuildReport:
        """One version into the index: a statute act's into the language index (one generation,
        its vectors with it), a case-law collection's as a LanceDB table switched to by its pointer."""
        if not self._is_collection(act_id):
            t0 = time.perf_counter()
            if vectors.shape != (chunks.num_rows, self.encoder.dim):
                raise ValueError(f"{chunks.num_rows} chunks but vectors of shape {vectors.shape}")
            writer = self.statutes.writer(self.analyzer)
            try:
                writer.add_version(act_id, version, chunks)
                if chunks.num_rows:
                    writer.set_vectors(chunks["content_hash"].to_pylist(), vectors, self.encoder.id)
                done = writer.commit()
            except BaseException:
                writer.abort()
                raise
            return BuildReport(act_id, version, f"statutes_{self.lang}@g{done.generation}", chunks.num_rows,
                               len(vectors), time.perf_counter() - t0)
        return self.build_table(act_id, version, chunks, vectors)

    def build_table(self, act_id: str, version: str, chunks: pa.Table, vectors: np.ndarray) -> BuildReport:
        """Create the version's LanceDB table, index it, check it, then switch serving to it atomically."""
        from lancedb.index import FTS

        t0 = time.perf_counter()
        docs = self.documents(chunks, vectors, act_id.split(":")[0])
        name = f"chunks__{act_id.replace(':', '_')}__{version.replace('-', '_')}__{uuid.uuid4().hex[:8]}"
        table = self.db.create_table(name, docs)
        try:
            for col in ("text_analyzed", "text_folded", "text_bigrams"):
                table.create_index(col, config=FTS(base_tokenizer="whitespace", lower_case=False, stem=False,
                                                   remove_stop_words=False, ascii_folding=False), replace=True)
            if table.count_rows() != docs.num_rows:
                raise RuntimeError(f"{name}: {table.count_rows()} rows after load, expected {docs.num_rows}")
        except BaseException:
            self.db.drop_table(name)
            raise
        self._switch(act_id, version, name, docs.num_rows)
        return BuildReport(act_id, version, name, docs.num_rows, len(vectors), time.perf_counter() - t0)

    def _switch(self, act_id: str, version: str, table: str, docs: int) -> None:
        state = self.state(act_id)
        old = state["versions"].get(version)
        now = time.time()
        state["act_id"] = act_id
        state["versions"][version] = {"table": table, "documents": docs, "encoder": self.encoder.id,
                                      "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        state["serving"] = max(state["versions"])
        kept = sorted(state["versions"])[-self.keep:]
        replaced = [state["versions"][v]["table"] for v in state["versions"] if v not in kept]
        if old and old["table"] != table:
            replaced.append(old["table"])
        state["versions"] = {v: state["versions"][v] for v in kept}
        # replaced tables are retired, not dropped: a reader that resolved one a moment ago may
        # still be scanning it; they go once the grace period has passed
        retired = state.get("retired", []) + [{"table": t, "retired_at": now} for t in replaced]
        due = [r for r in retired if now - r["retired_at"] >= self.grace_s]
        state["retired"] = [r for r in retired if r not in due]
        atomic_write_json(self._pointer_file(act_id), state)
        for r in due:
            try:
                self.db.drop_table(r["table"])
            except Exception:  # already gone
                pass

    # -- searching --------------------------------------------------------------------------------
    def _resolve(self, filters: Filters) -> list[tuple[str, str, str]]:
        """(act_id, version, table) to search, honouring act, version and as_of filters; a statute
        act's "table" is a view of the language index (``view:…``)."""
        acts = list(filters.act_ids) or self.acts()
        if filters.jurisdictions and not filters.act_ids:
            # no table of another jurisdiction can match: leave it out of the search (and of a union)
            acts = [a for a in acts if a.split(":", 1)[0] in filters.jurisdictions]
        snap = self.snapshot()
        held = set(snap.acts())
        in_index = [a for a in acts if a in held]
        out = []
        if in_index:
            out = list(self._resolve_statutes(snap, filters, tuple(in_index)))
        for act in [a for a in acts if a not in held]:
            state = self.state(act)
            if not state["versions"]:
                raise SearchError(f"unknown act {act!r} (indexed: {', '.join(self.acts()) or 'none'})")
            if filters.version:
                version = filters.version
                if version not in state["versions"]:
                    raise SearchError(f"{act} has no indexed version {version} (have {sorted(state['versions'])})")
            elif filters.as_of:
                older = [v for v in state["versions"] if v <= filters.as_of.isoformat()]
                if not older:
                    raise SearchError(f"{act} has no indexed version on or before {filters.as_of}")
                version = max(older)
            else:
                version = state["serving"]
            entry = state["versions"][version]
            with self._lock:
                self._built_with[entry["table"]] = entry.get("encoder")  # absent in pointers written before it was kept
            out.append((act, version, entry["table"]))
        return out

    def _resolve_statutes(self, snap, filters: Filters, in_index: tuple[str, ...]) -> list[tuple[str, str, str]]:
        """(act, version, view) of the statute acts ``in_index`` under ``filters`` in ``snap``, kept
        per generation and filters (a new generation clears them: :meth:`snapshot`)."""
        from dataclasses import replace as _replace

        # the acts in the index under the filters follow from the generation and the filters alone
        key = (snap.generation, filters)
        with self._lock:
            if key in self._resolved:
                self._resolved.move_to_end(key)
                return self._resolved[key]
        res = snap.resolve(_replace(filters, act_ids=in_index, jurisdictions=()))
        out = []
        for act in in_index:
            version = res.version_of(act)
            if version is None:
                if filters.act_ids and filters.as_of:
                    raise SearchError(f"{act} has no indexed version on or before {filters.as_of}")
                continue
            out.append((act, version, self._view_name(snap.generation, act, version)))
        if not out and filters.as_of:
            raise SearchError(f"no indexed version on or before {filters.as_of} of "
                              f"{', '.join(in_index[:5])}{' …' if len(in_index) > 5 else ''}")
        with self._lock:
            for _, _, name in out:
                self._built_with[name] = snap.manifest.vector_encoder
            self._resolved[key] = out
            while len(self._resolved) > RESOLVED_CACHE:
                self._resolved.popitem(last=False)
        return out

    def _check_encoder(self, act: str, version: str, table: str) -> None:
        """Refuse query vectors of another encoder than the table's (``interface.encoder_mismatch``)."""
        why = encoder_mismatch(f"{act} {version}", self._built_with.get(table), self.encoder.id)
        if why:
            raise EncoderMismatch(why)

    def _arrow(self, name: str) -> pa.Table:
        """A table's rows; for a union name (``a|b``) the rows of its tables, concatenated."""
        parts = [self._view(t) if t.startswith(VIEW) else self._table(t).to_arrow() for t in name.split(UNION)]
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="default")

    def _table(self, name: str):
        if UNION in name:
            raise ValueError(f"{name!r} is a union of tables, searched in memory only")
        with self._lock:
            if name not in self._tables:
                self._tables[name] = self.db.open_table(name)
            return self._tables[name]

    def _hits(self, rows: list[dict], score_key: str, transform: Callable[[float], float] = float) -> list[Hit]:
        return [Hit(r["chunk_id"], r["article_id"], r["act_id"], r["version"], transform(r[score_key]), i,
                    r["heading_path"], r["text"], r["status"]) for i, r in enumerate(rows, 1)]

    _COLS = ["chunk_id", "article_id", "act_id", "version", "heading_path", "text", "status"]

    def _fts(self, table: str, text: str, column: str, filters: Filters, k: int,
             columns: Sequence[str] | None = None) -> list[dict]:
        """Full-text (BM25) top ``k`` of ``column`` for the whitespace tokens of ``text``: rows with
        ``columns`` and ``_score``. Small tables are scored in memory (``table_context``), with
        LanceDB's ranking and scores; large ones by LanceDB's FTS index."""
        if self._in_memory(table):
            ctx = self.section_context(table)
            if ctx.has_tokens(column):
                where_clause(filters)  # the same validation of filter values as the LanceDB path
                wanted = columns or self._COLS
                out = []
                for chunk_id, score in ctx.full_text(column, text.split(), filters, k):
                    h = ctx.chunks[chunk_id]
                    out.append({**{c: getattr(h, c) for c in wanted}, "_score": score})
                return out
        return self.lance_fts(table, text, column, filters, k, columns)

    def lance_fts(self, table: str, text: str, column: str, filters: Filters, k: int,
                  columns: Sequence[str] | None = None) -> list[dict]:
        """Full-text search through LanceDB's FTS index."""
        from lancedb.query import MatchQuery

        q = self._table(table).search(MatchQuery(text, column), query_type="fts")
        where = where_clause(filters)
        if where:
            q = q.where(where, prefilter=True)
        return q.select([*(columns or self._COLS), "_score"]).limit(k).to_list()

    def bm25(self, table: str, query: str, filters: Filters, k: int, *, bigram_weight: float | None = None) -> list[Hit]:
        """Lexical leg: BM25 over analysed unigrams plus weighted BM25 over word bigrams
        (``bigram_weight``, default the hybrid config's)."""
        tokens = self.analyzer.analyze(query)
        if not tokens:
            return []
        rows = {r["chunk_id"]: r for r in self._fts(table, " ".join(tokens), "text_analyzed", filters, k)}
        w = self.hybrid.bigram_weight if bigram_weight is None else bigram_weight
        pairs = bigrams(tokens)
        if w and pairs:
            for r in self._fts(table, " ".join(pairs), "text_bigrams", filters, k):
                if r["chunk_id"] in rows:
                    rows[r["chunk_id"]]["_score"] += w * r["_score"]
                else:
                    rows[r["chunk_id"]] = {**r, "_score": w * r["_score"]}
        ranked = sorted(rows.values(), key=lambda r: -r["_score"])[:k]
        return self._hits(ranked, "_score")

    def dense(self, table: str, query: str, filters: Filters, k: int) -> list[Hit]:
        vec = self.encoder.encode_queries([query])[0]
        if self._in_memory(table):
            # a statute table (a few thousand chunks): an exact scan of the vectors the table context
            # holds takes ~1 ms; LanceDB's search materialising k rows with their text took 18–200 ms
            # per query. Same ranking and scores (tested).
            return self.section_context(table).exact_dense(vec, filters, k)
        return self.lance_dense(table, vec, filters, k)

    def lance_dense(self, table: str, vec: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Dense search through LanceDB (its vector index when the table has one)."""
        q = self._table(table).search(vec, vector_column_name="vector").metric("cosine")
        where = where_clause(filters)
        if where:
            q = q.where(where, prefilter=True)
        return self._hits(q.select([*self._COLS, "_distance"]).limit(k).to_list(), "_distance", lambda d: 1.0 - float(d))

    def gaius(self, table: str, query: str, filters: Filters, k: int) -> list[Hit]:
        from pipelines.retrieval.gaius import GaiusRetriever
        from pipelines.retrieval.query_prep import strip_boilerplate

        with self._lock:
            if table not in self._gaius:
                self._gaius[table] = GaiusRetriever(self._arrow(table))
        # the lead-in stripper knows Polish exam lead-ins only; other languages get the query as is
        lp = PROFILES.get(getattr(self.analyzer, "lang", DEFAULT_LANGUAGE))
        query = strip_boilerplate(query) if lp is not None and lp.strip_exam_lead_ins else query
        return self._gaius[table].search(SearchRequest(query, k, "gaius", filters))

    def lexical_stats(self, table: str) -> LexicalStats:
        """Analysed tokens and IDF of a table's chunks, for the reranker's overlap features."""
        with self._lock:
            if table not in self._lexical:
                t = self._arrow(table).select(["chunk_id", "text_analyzed"])
                self._lexical[table] = LexicalStats.from_analyzed(t["chunk_id"].to_pylist(),
                                                                  t["text_analyzed"].to_pylist())
            return self._lexical[table]

    def legs(self, table: str, query: str, filters: Filters, depth: int,
             names: Sequence[str] = LEG_NAMES) -> dict[str, list[Hit]]:
        """Each named retriever's chunk hits, computed in parallel."""
        futures = {n: self._pool.submit(getattr(self, n), table, query, filters, depth) for n in names}
        return {n: f.result() for n, f in futures.items()}

    def _in_memory(self, table: str) -> bool:
        """Whether searches score ``table`` in memory (``table_context``): up to IN_MEMORY_MAX_ROWS
        chunks (384-d vectors: 77 MB at the limit, plus texts and postings); larger tables (case-law
        collections) use LanceDB's indexes."""
        with self._lock:
            if table not in self._row_counts:
                self._row_counts[table] = sum(self._view_rows(t) if t.startswith(VIEW) else self._table(t).count_rows()
                                              for t in table.split(UNION))
            return self._row_counts[table] <= IN_MEMORY_MAX_ROWS

    def _view_rows(self, name: str) -> int:
        from pipelines.retrieval.interface import Filters as _F

        act_id, version = name[len(VIEW):].split(":", 1)[1].rsplit("@", 1)
        return int(self.snapshot().mask(_F(act_ids=(act_id,), version=version)).sum())

    def section_context(self, table: str) -> TableContext:
        with self._lock:
            if table not in self._sections:
                t = self._arrow(table)
                cols = ["chunk_id", "article_id", "act_id", "jurisdiction", "version", "heading_path", "text", "status",
                        *(c for c in TableContext.FTS_COLUMNS if c in t.column_names)]
                vectors = vector_rows(t["vector"]) if t.num_rows else None
                self._sections[table] = TableContext.from_rows(t.select(cols).to_pydict(), vectors)
            return self._sections[table]

    def section_legs(self, table: str, query: str, filters: Filters, legs: Sequence[str],
                     leg_articles: int = 100) -> dict[str, list[Hit]]:
        """The German hybrid's legs (``section_fusion.LEG_SPECS``), each on its reduction of the
        query, side by side; a leg whose reduced query is empty returns no hits."""
        ctx = self.section_context(table)
        depth = 3 * leg_articles  # chunks, collapsed to ≤ leg_articles §§
        queries = leg_queries(legs, query, self.analyzer, ctx)

        def run(leg: str) -> list[Hit]:
            spec, q = LEG_SPECS[leg], queries[leg]
            if not q.strip():
                return []
            if spec.retriever == "dense":  # exact, in memory: the same ranking as dense(), less overhead
                return ctx.exact_dense(self.encoder.encode_queries([q])[0], filters, depth)
            if spec.bigrams:
                return self.bm25(table, q, filters, depth)
            tokens = self.analyzer.analyze(q)
            if not tokens:
                return []
            rows = self._fts(table, " ".join(tokens), "text_analyzed", filters, depth, columns=["chunk_id"])
            return [ctx.hit(r["chunk_id"], float(r["_score"]), i) for i, r in enumerate(rows, 1)]

        futures = {leg: self._pool.submit(run, leg) for leg in legs}
        return {leg: f.result() for leg, f in futures.items()}

    def hybrid_search(self, table: str, query: str, filters: Filters, depth: int) -> list[Hit]:
        """The German section fusion when loaded; learned re-scoring of the legs' union when a
        reranker is loaded; else weighted fusion."""
        if self.section_fusion is not None:
            model = self.section_fusion
            leg_hits = self.section_legs(table, query, filters, model.legs, model.leg_articles)
            return fuse_hits(model, leg_hits, self.section_context(table), filters, depth)
        if self.reranker is not None:
            legs = self.legs(table, query, filters, depth)
            return rerank_legs(self.reranker, legs, self.analyzer.analyze(query), self.lexical_stats(table), depth)
        return fuse(self.hybrid, self.legs(table, query, filters, depth, self.hybrid.legs()), depth)

    def language_search(self, request: SearchRequest, acts: Sequence[str], depth: int) -> list[Hit]:
        """Chunk hits over the whole statute index of the language (the large scope): BM25 over
        its postings with the visibility mask (the query without stop words: a lay question's
        ~300 tokens are mostly story), dense over the rows that have vectors (the query's key terms
        when it is long), fused by reciprocal rank (RRF: the two legs' scores are on no common
        scale, and no model is fitted on the whole corpus). Rows without a vector are reached by
        the lexical leg alone: the embedding backfill closes that gap act by act."""
        from dataclasses import replace as _replace

        from pipelines.retrieval.long_query import drop_stopwords, key_terms
        from pipelines.retrieval.section_fusion import LONG_QUERY_WORDS

        snap = self.snapshot()
        res = snap.resolve(_replace(request.filters, act_ids=tuple(acts), jurisdictions=()))
        mask = snap.mask(res, request.filters.statuses)
        legs: dict[str, list[Hit]] = {}
        want = {"bm25": ("bm25",), "dense": ("dense",), "gaius": ("bm25",), "hybrid": ("bm25", "dense")}
        names = want.get(request.retriever, ("bm25",))
        if request.retriever == "gaius":
            raise SearchError("gaius searches a few acts (its windows are scored per chunk): name the acts")
        lp = PROFILES.get(self.lang)
        query = request.query
        if "bm25" in names:
            lexical = drop_stopwords(query, self.lang) if len(query.split()) > LONG_QUERY_WORDS else query
            terms = self.analyzer.analyze(lexical) or self.analyzer.analyze(query)
            rows = snap.bm25(terms, mask, depth)
            legs["bm25"] = self._snapshot_hits(snap, res, rows)
        if "dense" in names:
            if snap.manifest.vector_encoder and snap.manifest.vector_encoder != self.encoder.id:
                raise EncoderMismatch(encoder_mismatch(f"the {self.lang} statute index",
                                                       snap.manifest.vector_encoder, self.encoder.id)
                                      or "encoder mismatch")
            text = query
            if len(query.split()) > LONG_QUERY_WORDS:
                text = key_terms(query, self.analyzer, _SnapshotIdf(snap), 16, self.lang) or query
            rows = snap.dense(self.encoder.encode_queries([text])[0], mask, depth) if snap.manifest.vector_dim else []
            legs["dense"] = self._snapshot_hits(snap, res, rows)
        if len(legs) == 1:
            return next(iter(legs.values()))
        return fuse(RRF_CONFIG if lp is None else _rrf(lp), legs, depth)

    @staticmethod
    def _snapshot_hits(snap, res, rows: list[tuple[int, float]]) -> list[Hit]:
        found = snap.rows([r for r, _ in rows], res)
        return [Hit(d["chunk_id"], d["article_id"], d["act_id"], d["version"] or "", float(score), i,
                    d["heading_path"], d["text"], d["status"]) for i, (d, (_, score)) in enumerate(zip(found, rows), 1)]

    def search(self, request: SearchRequest) -> list[Hit]:
        """Article-level hits (best chunk per article), ranked."""
        try:
            return self._search(request)
        except (RuntimeError, OSError, ValueError) as exc:
            if isinstance(exc, SearchError) or "not found" not in str(exc).lower():
                raise
            # the table we resolved was dropped after its grace period: resolve again, once
            with self._lock:
                self._tables.clear()
                self._gaius.clear()
                self._lexical.clear()
                self._sections.clear()
                self._row_counts.clear()
            return self._search(request)

    def _union_of(self, resolved: list[tuple[str, str, str]]) -> str | None:
        """The union name of several resolved statute tables searched as one corpus, or None when
        they must be searched one by one (one table; the German section fusion, whose §-prior and
        fitted weights are per act; a union too large to score in memory)."""
        if len(resolved) < 2 or self.cross_act != "union" or self.section_fusion is not None:
            return None
        name = UNION.join(sorted(t for _, _, t in resolved))
        return name if self._in_memory(name) else None

    def _search_table(self, table: str, request: SearchRequest, depth: int) -> list[Hit]:
        if request.retriever == "hybrid":
            return self.hybrid_search(table, request.query, request.filters, depth)
        if request.retriever == "dense" and self.section_fusion is not None:
            # German: long questions reduced to key terms; scored exactly in memory over the
            # table context the hybrid keeps anyway (same ranking as dense(), without LanceDB
            # materialising 300 rows with their text: p95 227 → see BENCHMARKS.md)
            ctx = self.section_context(table)
            q = dense_query(request.query, self.analyzer, ctx.idf, getattr(self.analyzer, "lang", "de"))
            return ctx.exact_dense(self.encoder.encode_queries([q])[0], request.filters, depth)
        if request.retriever in ("bm25", "dense", "gaius"):
            return getattr(self, request.retriever)(table, request.query, request.filters, depth)
        raise SearchError(f"unknown retriever {request.retriever!r}")

    def _search(self, request: SearchRequest) -> list[Hit]:
        where_clause(request.filters)  # rejects unsafe filter values even when no leg asks LanceDB
        if request.retriever not in ("bm25", "dense", "gaius", "hybrid"):
            raise SearchError(f"unknown retriever {request.retriever!r}")
        resolved = self._resolve(request.filters)
        if request.retriever in ("hybrid", "dense"):
            checked: set = set()  # the answer depends on the table's encoder only: once per encoder
            for act, version, table in resolved:
                built_with = self._built_with.get(table, table)
                if built_with not in checked:
                    self._check_encoder(act, version, table)
                    checked.add(built_with)
        depth = max(CANDIDATES, 3 * request.k)
        views = [t for _, _, t in resolved if t.startswith(VIEW)]
        # the views' rows counted by one mask of the request's filters (a mask per view cost 26 ms
        # each: 160 s for an unfiltered German query over 6,180 acts)
        if len(views) > PER_ACT_MAX and len(views) == len(resolved) and \
                int(self.snapshot().mask(request.filters).sum()) > IN_MEMORY_MAX_ROWS:
            # a jurisdiction's whole law: one search over the language index, not thousands of views
            merged = self.language_search(request, [a for a, _, _ in resolved], depth)
            for i, h in enumerate(merged, 1):
                h.rank = i
            return collapse_to_articles(merged, request.k)
        union = self._union_of(resolved)
        if union is not None:
            # several acts as one corpus: one BM25 (IDF over all of them), one exact dense scan, one
            # gAIus index, one reranking of the legs' joint candidates — so scores of different
            # acts are on one scale (see cross_act_merge.py for why per-act scores are not)
            merged = self._search_table(union, request, depth)
        else:
            per_table = [self._search_table(table, request, depth) for _, _, table in resolved]
            merged = per_table[0] if len(per_table) == 1 else merge_acts(per_table, self.cross_act)
        for i, h in enumerate(merged, 1):
            h.rank = i
        return collapse_to_articles(merged, request.k)
