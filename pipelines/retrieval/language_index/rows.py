"""Row contents: what a version of an act holds, as the index stores it.

A :class:`Content` is the chunks of one act version in the stored row layout (``ROW_COLUMNS``:
the analysed terms as one space-joined string per chunk, ``text_analyzed``) and two 64-bit keys: ``key`` = hash of (chunk_id, content_hash,
status) — the spec's carry-over key: a chunk of the new version whose key is among the act's open
rows keeps that row (no new row, no re-embedding) — and ``chash`` = hash of content_hash, which
vectors are looked up by. It comes either from a CHUNKS table (``schemas.arrow.CHUNKS``: a new
version) or from rows already in the index (an act re-laid out from its own rows when a version
arrives out of order).
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import blake2b
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.retrieval.language_index.postings import join_terms
from pipelines.retrieval.language_index.segments import ROW_COLUMNS

CHUNK_COLUMNS = ("chunk_id", "article_id", "act_id", "heading_path", "text", "status", "content_hash",
                 "token_count", "chunk_index", "chunk_count")
SEP = "\x1f"
_TYPES = {"chunk_id": pa.string(), "article_id": pa.string(), "act_id": pa.string(), "heading_path": pa.string(),
          "text": pa.string(), "status": pa.string(), "content_hash": pa.string(), "token_count": pa.int32(),
          "chunk_index": pa.int32(), "chunk_count": pa.int32(), "text_analyzed": pa.large_string()}
ROW_SCHEMA = pa.schema([(c, _TYPES[c]) for c in ROW_COLUMNS])


@dataclass
class Content:
    table: pa.Table  # ROW_COLUMNS (``text_analyzed``: the terms joined by single spaces)
    key: np.ndarray  # uint64
    chash: np.ndarray  # uint64

    def __len__(self) -> int:
        return self.table.num_rows

    def take(self, idx: Sequence[int] | np.ndarray) -> "Content":
        idx = np.asarray(idx, dtype=np.int64)
        return Content(self.table.take(pa.array(idx)), self.key[idx], self.chash[idx])

    @staticmethod
    def concat(parts: Sequence["Content"]) -> "Content":
        parts = [p for p in parts if len(p)]
        if not parts:
            return empty_content()
        return Content(pa.concat_tables([p.table for p in parts]),
                       np.concatenate([p.key for p in parts]), np.concatenate([p.chash for p in parts]))


def empty_content() -> Content:
    return Content(ROW_SCHEMA.empty_table(), np.zeros(0, np.uint64), np.zeros(0, np.uint64))


def hash64(values: Sequence[str]) -> np.ndarray:
    """64-bit BLAKE2b of each string (row keys: no composition needed, ~1 µs a row)."""
    return np.fromiter((int.from_bytes(blake2b(v.encode(), digest_size=8).digest(), "little") for v in values),
                       dtype=np.uint64, count=len(values))


def keys_of(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(carry-over key, content key) hashes of every row."""
    chunk_ids = table.column("chunk_id").to_pylist()
    hashes = table.column("content_hash")
    statuses = table.column("status").to_pylist()
    key = hash64([f"{c}{SEP}{h}{SEP}{s or ''}" for c, h, s in zip(chunk_ids, hashes.to_pylist(), statuses)])
    return key, content_keys(hashes)


_NIBBLE = np.zeros(256, np.uint64)
_NIBBLE[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16, dtype=np.uint64)
_SHIFTS = np.arange(60, -4, -4, dtype=np.uint64)


def content_keys(hashes: Sequence[str] | pa.Array | pa.ChunkedArray) -> np.ndarray:
    """64-bit keys of content hashes: the first 64 bits of a sha256 hex digest (the CHUNKS
    content_hash) read as they are, vectorised; anything else through BLAKE2b."""
    arr = hashes if isinstance(hashes, (pa.Array, pa.ChunkedArray)) else pa.array(list(hashes), pa.string())
    if not len(arr):
        return np.zeros(0, np.uint64)
    if not pc.all(pc.match_substring_regex(arr, "^[0-9a-f]{64}$")).as_py():
        return hash64(arr.to_pylist())
    head = pc.utf8_slice_codeunits(arr, 0, 16)
    if isinstance(head, pa.ChunkedArray):
        head = head.combine_chunks()
    head = head.cast(pa.large_binary())
    start = np.frombuffer(head.buffers()[1], np.int64)[head.offset]
    data = np.frombuffer(head.buffers()[2], np.uint8)[start:start + 16 * len(head)].reshape(-1, 16)
    return np.bitwise_or.reduce(_NIBBLE[data] << _SHIFTS, axis=1)


def analysed_text(table: pa.Table) -> list[str]:
    """What the analyser sees of each chunk: ``heading_path + "\\n" + text`` (as today's backend)."""
    return [f"{h}\n{t}" for h, t in zip(table.column("heading_path").to_pylist(), table.column("text").to_pylist())]


def from_chunks(act_id: str, version: str, chunks: pa.Table, analysed: Sequence[Sequence[str]] | None,
                analyzer) -> Content:
    """A version's content from its CHUNKS table; ``analysed``: the terms of each chunk's
    heading_path + "\\n" + text (lists of terms, or an Arrow string array of the terms joined by
    single spaces), else the analyser's."""
    where = f"{act_id} {version}"
    names = set(chunks.column_names)
    missing = [c for c in CHUNK_COLUMNS if c not in names]
    if missing:
        raise ValueError(f"{where}: chunks lack columns {missing} (expected the CHUNKS schema of schemas/arrow.py)")
    n = chunks.num_rows
    acts = set(chunks.column("act_id").unique().to_pylist())
    if acts - {act_id}:
        raise ValueError(f"{where}: chunks of other acts {sorted(str(a) for a in acts - {act_id})}")
    if pc.count(chunks.column("chunk_id").unique()).as_py() != n:
        counts = pc.value_counts(chunks.column("chunk_id"))
        dup = next(str(c["values"]) for c in counts.to_pylist() if c["counts"] > 1)
        raise ValueError(f"{where}: chunk_id {dup!r} appears more than once")
    for c in ("chunk_id", "article_id", "text", "content_hash"):
        if chunks.column(c).null_count:
            raise ValueError(f"{where}: column {c} has nulls")
    if analysed is None:
        if analyzer is None:
            raise ValueError(f"{where}: no analysed terms and no analyser to compute them")
        analysed = analyzer.analyze_many(analysed_text(chunks))
    elif len(analysed) != n:
        raise ValueError(f"{where}: {len(analysed)} analysed term lists for {n} chunks")
    cols = {c: chunks.column(c) if chunks.schema.field(c).type == _TYPES[c] else chunks.column(c).cast(_TYPES[c])
            for c in CHUNK_COLUMNS}
    if isinstance(analysed, (pa.Array, pa.ChunkedArray)):  # already joined by single spaces (a stored column)
        col = analysed if analysed.type == pa.large_string() else analysed.cast(pa.large_string())
        cols["text_analyzed"] = pc.fill_null(col, "") if col.null_count else col
    else:
        cols["text_analyzed"] = join_terms(analysed)
    table = pa.table(cols, schema=ROW_SCHEMA)
    key, chash = keys_of(table)
    return Content(table, key, chash)
