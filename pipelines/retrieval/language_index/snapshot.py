"""A snapshot: one generation of a language index, opened for reading.

Visibility (docs/search.md, "One index per language"): a request resolves one version index
S[act] per act — the exact version if the filters name one, else the version in force ``as_of``
(day semantics, ``versions.in_force``), else the act's newest — and a row is visible iff it is
live and ``seq_from <= S[act] < seq_to`` and it passes the act, jurisdiction and status filters.
A hit reports the act's version at S[act], not the version that introduced the row.

Row ids are positions in the snapshot's concatenated segments: stable within a snapshot, not
across generations (a merge renumbers), so a caller keeps ids and the snapshot together.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from pipelines.retrieval.interface import Filters, SearchError
from pipelines.retrieval.language_index import segments as S
from pipelines.retrieval.language_index.bm25 import CACHE_BYTES, FieldScorer, top_k
from pipelines.retrieval.language_index.manifest import Manifest
from pipelines.retrieval.language_index.postings import FIELDS, bigram_strings
from pipelines.retrieval.language_index.versions import DEAD, in_force

MASK_CACHE = 8  # masks kept per snapshot (the unfiltered one is asked for by most requests)
RESOLUTION_CACHE = 256  # resolved filters kept per snapshot


@dataclass(frozen=True)
class Resolution:
    """The version index each act is read at (−1: none of its rows visible)."""
    seq: np.ndarray  # int32 per act number
    key: str  # identifies (generation, seq): the cache key of anything built from the visible rows
    _act_ord: dict = field(repr=False, default_factory=dict)  # act_id → number (the snapshot's)
    _versions: list = field(repr=False, default_factory=list)  # act number → its version ids

    def version_of(self, act_id: str) -> str | None:
        o = self._act_ord.get(act_id)
        if o is None or self.seq[o] < 0:
            return None
        return self._versions[o][self.seq[o]]

    @property
    def versions(self) -> dict[str, str]:
        """act_id → its resolved version, for every act with visible rows."""
        return {a: self._versions[o][self.seq[o]] for a, o in self._act_ord.items() if self.seq[o] >= 0}


class Snapshot:
    def __init__(self, root: Path, manifest: Manifest, cache_bytes: int = CACHE_BYTES):
        self.root, self.manifest = Path(root), manifest
        self.generation = manifest.generation
        self.segments = [S.Segment(self.root, e) for e in manifest.segments]
        self.bases = np.concatenate(([0], np.cumsum([s.rows for s in self.segments]))).astype(np.int64)
        self.n_rows = int(self.bases[-1])
        cat = lambda xs, d: np.concatenate(xs).astype(d) if xs else np.zeros(0, d)  # noqa: E731
        self.act = cat([np.asarray(s.array("act")) for s in self.segments], np.int32)
        self.seq_from = cat([np.asarray(s.array("seq_from")) for s in self.segments], np.int32)
        self.seq_to = cat([np.asarray(s.seq_to) for s in self.segments], np.int32)
        self.status = cat([np.asarray(s.array("status")) for s in self.segments], np.int16)
        self.live = self.seq_to != DEAD
        self.n_live = int(self.live.sum())
        n_ords = max([a["ord"] for a in manifest.acts.values()], default=-1) + 1
        self._act_ids: list[str | None] = [None] * n_ords
        for act_id, a in manifest.acts.items():
            self._act_ids[a["ord"]] = act_id
        self._act_jur = np.array([(a or "").split(":", 1)[0] for a in self._act_ids], dtype=object)
        for seg in self.segments:  # map everything now: a file collected later stays readable
            seg.postings, seg.table, seg._terms, seg.dead_df
        self._vectors
        self._cache_bytes = cache_bytes
        self._masks: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._resolutions: OrderedDict[tuple, Resolution] = OrderedDict()
        self._lock = threading.Lock()

    # -- acts and versions ------------------------------------------------------------------------
    def acts(self) -> list[str]:
        """Acts with at least one version (dropped acts are not)."""
        return sorted(a for a, e in self.manifest.acts.items() if e["versions"])

    def versions(self, act_id: str) -> list[str]:
        e = self.manifest.acts.get(act_id)
        return list(e["versions"]) if e else []

    def serving_version(self, act_id: str) -> str | None:
        v = self.versions(act_id)
        return v[-1] if v else None

    @functools.cached_property
    def _version_table(self):
        """Per act number its version ids, and all versions' days flattened in act order (for a
        vectorised as-of: ~6,600 acts resolved in well under a millisecond)."""
        n = len(self._act_ids)
        versions: list[list[str]] = [[] for _ in range(n)]
        for act_id, e in self.manifest.acts.items():
            versions[e["ord"]] = list(e["versions"])
        counts = np.array([len(v) for v in versions], np.int64)
        days = np.array([np.datetime64(v[:10], "D").astype(np.int64) for vs in versions for v in vs], np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        by_version: dict[str, list[tuple[int, int]]] = {}
        for o, vs in enumerate(versions):
            for i, v in enumerate(vs):
                by_version.setdefault(v, []).append((o, i))
        juris = np.array([(a or "").split(":", 1)[0] for a in self._act_ids], dtype=object)
        return versions, counts, days, starts, by_version, juris

    def resolve(self, filters: Filters = Filters()) -> Resolution:
        """S[act] for every act (−1 = no rows), per the filters' act, jurisdiction, version and
        as_of. An act named in ``act_ids`` that the index does not hold, or that lacks the exact
        version asked for, is a SearchError; without ``act_ids`` such acts simply show nothing.
        Cached per filters (statuses aside) for the snapshot's life."""
        ck = (tuple(filters.act_ids), tuple(filters.jurisdictions), filters.version, filters.as_of)
        with self._lock:
            hit = self._resolutions.get(ck)
            if hit is not None:
                self._resolutions.move_to_end(ck)
                return hit
        versions, counts, days, starts, by_version, juris = self._version_table
        named = set(filters.act_ids)
        for act_id in named:
            if not self.versions(act_id):
                raise SearchError(f"unknown act {act_id!r} (indexed: {len(self.acts())} acts)")
        n = len(self._act_ids)
        if filters.version:
            seq = np.full(n, -1, np.int32)
            for o, i in by_version.get(filters.version, []):
                seq[o] = i
            for act_id in named:
                if seq[self.manifest.acts[act_id]["ord"]] < 0:
                    raise SearchError(f"{act_id} has no indexed version {filters.version} "
                                      f"(have {self.versions(act_id)})")
        elif filters.as_of:
            d = np.datetime64(filters.as_of.isoformat(), "D").astype(np.int64)
            le = (days <= d).astype(np.int64)
            csum = np.concatenate(([0], np.cumsum(le)))
            seq = (csum[starts + counts] - csum[starts] - 1).astype(np.int32)  # last version on or before d
        else:
            seq = (counts - 1).astype(np.int32)
        if named:
            keep = np.zeros(n, bool)
            keep[[self.manifest.acts[a]["ord"] for a in named]] = True
            seq[~keep] = -1
        if filters.jurisdictions:
            seq[~np.isin(juris, list(filters.jurisdictions))] = -1
        key = f"g{self.generation}:" + hashlib.blake2b(seq.tobytes(), digest_size=8).hexdigest()
        act_ord = {a: e["ord"] for a, e in self.manifest.acts.items()}
        res = Resolution(seq, key, act_ord, versions)
        with self._lock:
            self._resolutions[ck] = res
            while len(self._resolutions) > RESOLUTION_CACHE:
                self._resolutions.popitem(last=False)
        return res

    def _resolution(self, filters: Filters | Resolution | None) -> Resolution:
        if isinstance(filters, Resolution):
            return filters
        return self.resolve(filters or Filters())

    # -- visibility ---------------------------------------------------------------------------------
    def mask(self, filters: Filters | Resolution | None = None, statuses: Sequence[str] = ()) -> np.ndarray:
        """Visible rows (bool per row). ``statuses``: a status filter when ``filters`` is a
        Resolution (a Filters carries its own)."""
        if isinstance(filters, Filters):
            statuses = filters.statuses
        res = self._resolution(filters)
        ck = (res.key, tuple(sorted(statuses)))
        with self._lock:
            hit = self._masks.get(ck)
            if hit is not None:
                self._masks.move_to_end(ck)
                return hit
        s = res.seq[self.act] if len(res.seq) else np.full(self.n_rows, -1, np.int32)
        m = (s >= 0) & (self.seq_from <= s) & (s < self.seq_to)  # a tombstoned row: seq_to = −1
        if statuses:
            codes = [i for i, st in enumerate(self.manifest.statuses) if st in set(statuses)]
            m &= np.isin(self.status, codes)
        m.setflags(write=False)
        with self._lock:
            self._masks[ck] = m
            while len(self._masks) > MASK_CACHE:
                self._masks.popitem(last=False)
        return m

    # -- scoring ------------------------------------------------------------------------------------
    @functools.cached_property
    def _scorers(self) -> dict[str, FieldScorer]:
        out = {}
        for f in FIELDS:
            lengths = np.concatenate([np.asarray(s.array(f"{f}.len")) for s in self.segments]) \
                if self.segments else np.zeros(0, np.int32)
            out[f] = FieldScorer(f, self.segments, self.bases, lengths, self.live, self._cache_bytes)
        return out

    def scorer(self, field: str = "terms") -> FieldScorer:
        if field not in FIELDS:
            raise ValueError(f"unknown field {field!r}; fields: {FIELDS}")
        return self._scorers[field]

    def bm25(self, terms: Sequence[str], mask: np.ndarray | None = None, k: int = 100,
             field: str = "terms") -> list[tuple[int, float]]:
        """(row, BM25) of the ``k`` best rows in ``mask`` (default: every live row) for analysed
        ``terms``; ``field="bigrams"`` takes bigram terms (``postings.bigram_strings(terms)``)."""
        return self.scorer(field).top(terms, k, self.live if mask is None else mask)

    def bm25_bigrams(self, terms: Sequence[str], mask: np.ndarray | None = None, k: int = 100) -> list[tuple[int, float]]:
        """BM25 of the bigram field for a query's analysed unigram ``terms``."""
        return self.bm25(bigram_strings(terms), mask, k, field="bigrams")

    @functools.cached_property
    def _vectors(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(global rows, unit vectors) per vector part."""
        out = []
        for seg, base in zip(self.segments, self.bases):
            for rows, vecs in seg.vector_parts():
                out.append((np.asarray(rows, np.int64) + base, vecs))
        return out

    def has_vector(self) -> np.ndarray:
        out = np.zeros(self.n_rows, dtype=bool)
        for rows, _ in self._vectors:
            out[rows] = True
        return out

    def dense(self, query_vector: np.ndarray, mask: np.ndarray | None = None, k: int = 100) -> list[tuple[int, float]]:
        """(row, cosine) of the ``k`` nearest rows in ``mask`` among the rows with vectors; exact
        (einsum, not ``@``: BLAS's thread pool starves the query encoder, see table_context.py)."""
        mask = self.live if mask is None else mask
        q = np.asarray(query_vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        rows_all, scores_all = [], []
        for rows, vecs in self._vectors:
            ok = mask[rows]
            if not ok.any():
                continue
            v = vecs if ok.all() else np.asarray(vecs)[ok]
            rows_all.append(rows if ok.all() else rows[ok])
            scores_all.append(np.einsum("ij,j->i", v, q))
        if not rows_all:
            return []
        rows = np.concatenate(rows_all)
        scores = np.concatenate(scores_all)
        order = np.argsort(rows, kind="stable")
        rows, scores = rows[order], scores[order]
        full = np.zeros(self.n_rows, np.float32)
        full[rows] = scores
        return top_k(full, rows, k)

    # -- rows -----------------------------------------------------------------------------------------
    def _take(self, row_ids: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Stored columns of rows (any order), in that order."""
        row_ids = np.asarray(row_ids, np.int64)
        if len(row_ids) and (row_ids.min() < 0 or row_ids.max() >= self.n_rows):
            raise IndexError(f"row ids outside 0..{self.n_rows - 1}")
        seg_of = np.searchsorted(self.bases, row_ids, side="right") - 1
        parts, positions = [], []
        for si in np.unique(seg_of):
            sel = np.flatnonzero(seg_of == si)
            local = row_ids[sel] - self.bases[si]
            parts.append(self.segments[si].take(local, columns))
            positions.append(sel)
        if not parts:
            return pa.table({c: pa.array([], type=self._schema().field(c).type) for c in columns})
        table = pa.concat_tables(parts)
        order = np.argsort(np.concatenate(positions), kind="stable")
        return table.take(pa.array(order))

    def _schema(self) -> pa.Schema:
        from pipelines.retrieval.language_index.rows import ROW_SCHEMA
        return ROW_SCHEMA

    def rows(self, row_ids: Sequence[int], filters: Filters | Resolution | None = None) -> list[dict]:
        """Display fields of rows, ``version`` = the act's version as ``filters`` resolve it."""
        res = self._resolution(filters)
        cols = ["chunk_id", "article_id", "act_id", "heading_path", "text", "status", "content_hash"]
        out = self._take(np.asarray(list(row_ids), np.int64), cols).to_pylist()
        for r, rid in zip(out, row_ids):
            r["row"] = int(rid)
            r["version"] = res.version_of(r["act_id"])
            r["status"] = r["status"] or ""
        return out

    def view(self, filters: Filters | Resolution | None = None, statuses: Sequence[str] = ()) -> pa.Table:
        """The visible rows as one table (the small-scope path: feed it to ``TableContext``):
        chunk fields, ``jurisdiction``, ``version`` (resolved), ``text_analyzed``, ``text_bigrams``,
        ``vector`` (null where the row has none) and ``row`` (the snapshot's row id)."""
        res = self._resolution(filters)
        m = self.mask(filters, statuses)
        ids = np.flatnonzero(m)
        t = self._take(ids, list(S.ROW_COLUMNS))
        acts = t.column("act_id").to_pylist()
        bigrams = [" ".join(bigram_strings(s.split())) if s else "" for s in t.column("text_analyzed").to_pylist()]
        t = t.append_column("jurisdiction", pa.array([a.split(":", 1)[0] for a in acts], pa.string()))
        t = t.append_column("version", pa.array([res.version_of(a) for a in acts], pa.string()))
        t = t.append_column("text_bigrams", pa.array(bigrams, pa.large_string()))
        t = t.append_column("row", pa.array(ids, pa.int64()))
        dim = self.manifest.vector_dim
        if dim:
            vec = np.zeros((len(ids), dim), np.float32)
            pos = np.full(self.n_rows, -1, np.int64)
            pos[ids] = np.arange(len(ids))
            has = np.zeros(len(ids), dtype=bool)
            for rows, vecs in self._vectors:
                sel = m[rows]
                if sel.any():
                    vec[pos[rows[sel]]] = np.asarray(vecs)[sel]
                    has[pos[rows[sel]]] = True
            arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), dim, mask=pa.array(~has))
            t = t.append_column("vector", arr)
        return t

    # -- stats ----------------------------------------------------------------------------------------
    def stats(self) -> dict:
        kinds: dict[str, int] = {}
        for seg in self.segments:
            names = list(seg.entry["files"]) + [seg.entry["seq_to"]] + ([seg.entry["dead"]] if seg.entry.get("dead") else [])
            names += [n for p in seg.entry.get("vectors", []) for n in (p["vec"], p["rows"])]
            for name in names:
                kind = _kind(name)
                kinds[kind] = kinds.get(kind, 0) + (seg.folder / name).stat().st_size
        return {"generation": self.generation, "rows": self.n_rows, "live_rows": self.n_live,
                "acts": len(self.acts()), "segments": len(self.segments),
                "vectors": int(sum(len(r) for r, _ in self._vectors)), "vector_dim": self.manifest.vector_dim,
                "bytes": dict(sorted(kinds.items())), "bytes_total": sum(kinds.values())}


def _kind(name: str) -> str:
    if name == "rows.arrow":
        return "rows"
    if name == "terms.arrow":
        return "term strings"
    stem = name.split(".")[0]
    if stem in ("terms", "bigrams"):
        part = name.split(".")[1]
        return f"{stem} lengths" if part == "len" else f"{stem} postings"
    if stem in ("vec", "vecrows"):
        return "vectors"
    if stem in ("seq_to", "dead"):
        return "state"
    return "row arrays"
