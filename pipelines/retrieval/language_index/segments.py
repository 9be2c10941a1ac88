"""Segments: the rows a commit added, with their postings, written once into ``segments/<id>/``.

Immutable files of a segment (n rows):

* ``rows.arrow``      Arrow IPC, uncompressed (rows are taken at random): chunk_id, article_id,
                      act_id, heading_path, text, status, content_hash, token_count, chunk_index,
                      chunk_count
* ``terms.arrow``     Arrow IPC, zstd, batches of 8,192 rows: text_analyzed (the analysed terms,
                      space-joined; read in bulk only: views, merges, re-layouts, dead-row df)
* ``act.npy``         int32[n]  the act's number (the manifest's ``acts[...]["ord"]``)
* ``seq_from.npy``    int32[n]  index of the act version where the row's content first appears
* ``status.npy``      int16[n]  code into the manifest's ``statuses``
* ``key.npy``         uint64[n] hash of (chunk_id, content_hash, status): the carry-over key
* ``chash.npy``       uint64[n] hash of content_hash (vectors are keyed by content)
* ``<field>.len.npy`` and the postings of both fields (``postings.py``)

Per generation that changed them (the manifest names which): ``seq_to.gNNNNNNNN.npy`` (int32[n]:
index of the version where the row stopped, OPEN while open, DEAD once tombstoned) — copy-on-write,
so a reader of an older generation keeps its own — ``dead.gNNNNNNNN.npz`` (df that the segment's
tombstoned rows still hold in its postings, per field) and vector parts ``vec.gNNNNNNNN.npy``
(float32[m, dim]) + ``vecrows.gNNNNNNNN.npy`` (int32[m] rows), one part per commit that added
vectors to the segment.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from pipelines.retrieval.language_index import postings as P
from pipelines.retrieval.language_index.files import load_array, load_table, save_array, save_batches, save_table
from pipelines.retrieval.language_index.versions import DEAD

ROW_COLUMNS = ("chunk_id", "article_id", "act_id", "heading_path", "text", "status", "content_hash",
               "token_count", "chunk_index", "chunk_count", "text_analyzed")
DISPLAY_COLUMNS = ROW_COLUMNS[:-1]
TERMS_BATCH = 8192
ARRAYS = {"act": np.int32, "seq_from": np.int32, "status": np.int16, "key": np.uint64, "chash": np.uint64}


def gen_file(stem: str, generation: int, ext: str = "npy") -> str:
    return f"{stem}.g{generation:08d}.{ext}"


def segment_files() -> list[str]:
    names = ["rows.arrow", "terms.arrow", *(f"{a}.npy" for a in ARRAYS)]
    for f in P.FIELDS:
        names.append(f"{f}.len.npy")
        names.extend(f"{f}.{part}.npy" for part in ("hash", "off", "doc", "tf"))
    return names


def write_segment(folder: Path, rows: pa.Table, arrays: dict[str, np.ndarray], seq_to: np.ndarray,
                  generation: int) -> dict:
    """Write a new segment; its manifest entry (``live``/``len`` filled by the caller's stats)."""
    n = rows.num_rows
    if any(len(a) != n for a in arrays.values()) or len(seq_to) != n:
        raise ValueError(f"segment {folder.name}: {n} rows but arrays of other lengths")
    folder.mkdir(parents=True, exist_ok=False)
    save_table(folder / "rows.arrow", rows.select(list(DISPLAY_COLUMNS)))
    save_batches(folder / "terms.arrow", rows.column("text_analyzed"), "text_analyzed", TERMS_BATCH)
    for name, dtype in ARRAYS.items():
        save_array(folder / f"{name}.npy", np.asarray(arrays[name], dtype=dtype))
    postings, lengths = P.build(rows.column("text_analyzed"))
    for f in P.FIELDS:
        save_array(folder / f"{f}.len.npy", lengths[f])
        postings[f].save(folder, f)
    seq_name = gen_file("seq_to", generation)
    save_array(folder / seq_name, np.asarray(seq_to, dtype=np.int32))
    return {"id": folder.name, "rows": n, "files": segment_files(), "seq_to": seq_name, "dead": None, "vectors": []}


class Segment:
    """Read side of one segment as a manifest entry names it (arrays memory-mapped on first use)."""

    def __init__(self, root: Path, entry: dict):
        self.entry = entry
        self.folder = Path(root) / "segments" / entry["id"]
        self.rows = int(entry["rows"])

    @functools.cached_property
    def table(self) -> pa.Table:
        return load_table(self.folder / "rows.arrow")

    def array(self, name: str) -> np.ndarray:
        return self._arrays[name]

    @functools.cached_property
    def _arrays(self) -> dict[str, np.ndarray]:
        out = {name: load_array(self.folder / f"{name}.npy") for name in ARRAYS}
        for f in P.FIELDS:
            out[f"{f}.len"] = load_array(self.folder / f"{f}.len.npy")
        return out

    @functools.cached_property
    def seq_to(self) -> np.ndarray:
        return load_array(self.folder / self.entry["seq_to"])

    @functools.cached_property
    def postings(self) -> dict[str, P.Postings]:
        return {f: P.Postings.load(self.folder, f) for f in P.FIELDS}

    @functools.cached_property
    def dead_df(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per field (sorted hashes, df held by tombstoned rows); empty without tombstones."""
        if not self.entry.get("dead"):
            return {f: (np.zeros(0, np.uint64), np.zeros(0, np.int64)) for f in P.FIELDS}
        with np.load(self.folder / self.entry["dead"], allow_pickle=False) as z:
            return {f: (z[f"{f}_hash"], z[f"{f}_df"]) for f in P.FIELDS}

    def vector_parts(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(rows, vectors) of each vector part, memory-mapped."""
        return [(load_array(self.folder / p["rows"]), load_array(self.folder / p["vec"]))
                for p in self.entry.get("vectors", [])]

    @functools.cached_property
    def _terms(self):
        return pa.ipc.open_file(pa.memory_map(str(self.folder / "terms.arrow"), "r"))

    def terms_of(self, local_rows: np.ndarray) -> pa.Array:
        """The stored term strings (``text_analyzed``) of rows, in the given order (only the
        batches holding them are decompressed)."""
        local = np.asarray(local_rows, np.int64)
        if not len(local):
            return pa.array([], pa.large_string())
        batch = local // TERMS_BATCH
        order = np.argsort(local, kind="stable")
        parts = []
        for b in np.unique(batch):
            sel = np.sort(local[batch == b]) - b * TERMS_BATCH
            parts.append(self._terms.get_batch(int(b)).column(0).take(pa.array(sel)))
        inverse = np.empty(len(local), np.int64)
        inverse[order] = np.arange(len(local))
        return pa.concat_arrays(parts).take(pa.array(inverse))

    @functools.cached_property
    def _batch_starts(self) -> np.ndarray:
        """First row of each record batch of ``rows.arrow`` (a segment written per act holds one
        batch per act: 6,180 in the initial load's)."""
        return np.concatenate(([0], np.cumsum([b.num_rows for b in self._display_batches(())]))).astype(np.int64)

    @functools.cached_property
    def _batches_by_columns(self) -> dict[tuple[str, ...], list[pa.RecordBatch]]:
        return {}

    def _display_batches(self, columns: tuple[str, ...]) -> list[pa.RecordBatch]:
        """The record batches of the columns (zero-copy views of the mapped file), kept per segment."""
        cache = self._batches_by_columns
        if columns not in cache:
            cache[columns] = (self.table.select(list(columns)) if columns else self.table).to_batches()
        return cache[columns]

    def _take_display(self, local: np.ndarray, display: list[str]) -> pa.Table:
        """Rows of the display columns, in the given order, taken batch by batch.

        Why: ``Table.take`` over the memory-mapped table's 6,180 chunks took ~37 ms for 100 rows
        (Arrow walks every chunk), two such takes per query: half of an unfiltered lexical query over
        all German federal law (145 ms, cProfile); per batch it is the rows' batches only."""
        batches = self._display_batches(tuple(display))
        if len(batches) <= 1:
            return self.table.select(display).take(pa.array(local))
        b = np.searchsorted(self._batch_starts, local, side="right") - 1
        order = np.argsort(b, kind="stable")
        parts = []
        for bi in np.unique(b):
            sel = local[b == bi] - self._batch_starts[bi]
            parts.append(batches[int(bi)].take(pa.array(sel)))
        taken = pa.Table.from_batches(parts, schema=batches[0].schema).combine_chunks()
        inverse = np.empty(len(local), np.int64)
        inverse[order] = np.arange(len(local))
        return taken.take(pa.array(inverse))

    def take(self, local_rows: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Stored columns of rows (``text_analyzed`` included when asked for), in the given order."""
        local = np.asarray(local_rows, np.int64)
        display = [c for c in columns if c != "text_analyzed"]
        if not display:
            return pa.table({"text_analyzed": self.terms_of(local)})
        t = self._take_display(local, display)
        if "text_analyzed" in columns:
            t = t.append_column("text_analyzed", self.terms_of(local))
        return t.select(list(columns))


def write_dead(folder: Path, generation: int, texts: pa.ChunkedArray) -> str | None:
    """The dead-row df file of a segment whose tombstoned rows have term strings ``texts``."""
    if not len(texts):
        return None
    arrays = {}
    postings, _ = P.build(texts)
    for f in P.FIELDS:
        arrays[f"{f}_hash"] = postings[f].hash
        arrays[f"{f}_df"] = postings[f].df().astype(np.int64)
    name = gen_file("dead", generation, "npz")
    tmp = folder / f".{name}.tmp.npz"
    np.savez(tmp, **arrays)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    tmp.replace(folder / name)
    return name


def write_vectors(folder: Path, generation: int, rows: np.ndarray, vectors: np.ndarray) -> dict:
    """A vector part: ``vectors[i]`` is row ``rows[i]`` of the segment."""
    order = np.argsort(rows, kind="stable")
    vec, rws = gen_file("vec", generation), gen_file("vecrows", generation)
    save_array(folder / vec, np.asarray(vectors, np.float32)[order])
    save_array(folder / rws, np.asarray(rows, np.int32)[order])
    return {"vec": vec, "rows": rws, "n": int(len(rows))}


def merge_segments(root: Path, sources: Sequence[Segment], seq_tos: Sequence[np.ndarray], new_id: str,
                   generation: int) -> tuple[dict, list[np.ndarray]]:
    """One segment of the live rows of ``sources`` (adjacent, in row order), tombstoned rows
    dropped; ``seq_tos`` are the sources' current seq_to arrays. Returns the new entry and, per
    source, its row map (old local row → new local row, −1 dropped)."""
    folder = Path(root) / "segments" / new_id
    maps, tables, arrays, seq_parts = [], [], {a: [] for a in ARRAYS}, []
    vec_rows, vec_vals, dim = [], [], None
    start = 0
    for seg, seq_to in zip(sources, seq_tos):
        keep = np.asarray(seq_to) != DEAD
        row_map = np.full(seg.rows, -1, dtype=np.int64)
        idx = np.flatnonzero(keep)
        row_map[idx] = np.arange(start, start + len(idx))
        maps.append(row_map)
        tables.append(seg.take(idx, ROW_COLUMNS))
        for a in ARRAYS:
            arrays[a].append(np.asarray(seg.array(a))[idx])
        seq_parts.append(np.asarray(seq_to)[idx])
        for rws, vecs in seg.vector_parts():
            new = row_map[np.asarray(rws, np.int64)]
            ok = new >= 0
            vec_rows.append(new[ok])
            vec_vals.append(np.asarray(vecs)[ok])
            dim = vecs.shape[1]
        start += len(idx)
    folder.mkdir(parents=True, exist_ok=False)
    table = pa.concat_tables(tables)
    save_table(folder / "rows.arrow", table.select(list(DISPLAY_COLUMNS)))
    save_batches(folder / "terms.arrow", table.column("text_analyzed"), "text_analyzed", TERMS_BATCH)
    for a, dtype in ARRAYS.items():
        save_array(folder / f"{a}.npy", np.concatenate(arrays[a]).astype(dtype) if arrays[a] else np.zeros(0, dtype))
    for f in P.FIELDS:
        lens = [np.asarray(seg.array(f"{f}.len"))[m >= 0] for seg, m in zip(sources, maps)]
        save_array(folder / f"{f}.len.npy", np.concatenate(lens).astype(np.int32))
        P.merge([(seg.postings[f], m) for seg, m in zip(sources, maps)]).save(folder, f)
    seq_name = gen_file("seq_to", generation)
    save_array(folder / seq_name, np.concatenate(seq_parts).astype(np.int32))
    entry = {"id": new_id, "rows": start, "files": segment_files(), "seq_to": seq_name, "dead": None, "vectors": []}
    if vec_rows and sum(len(r) for r in vec_rows):
        entry["vectors"].append(write_vectors(folder, generation, np.concatenate(vec_rows),
                                              np.concatenate(vec_vals).reshape(-1, dim)))
    return entry, maps
