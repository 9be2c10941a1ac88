"""Bulk export of a published version: one table as Parquet (the published file, byte for byte) or as
JSON Lines (one row per line, dates as ``YYYY-MM-DD``, timestamps ISO 8601, lists and structs as
JSON), streamed.

Tables: ``acts``, ``articles``, ``nodes``, ``chunks`` and ``diff`` (the version's diff table against
the previous held version). The ETag is stable: a hash of the act, version, table, format, the
version's source sha256 and the sha256 of the published file — the same bytes give the same ETag
across restarts and machines, and a re-publication that changes the file changes it.

Byte ranges (:func:`parse_range`): one ``bytes=`` range per request. A Parquet export streams the file
slice; a JSONL export is produced once (then kept in a bounded in-memory cache) to know its length.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from pipelines.reads.cache import ByteBudgetLRU
from pipelines.reads.corpus import CorpusReader
from pipelines.reads.errors import BadRange, InvalidRead, UnknownTable
from pipelines.reads.versions import EXPORT_TABLES

FORMATS = {"parquet": "application/vnd.apache.parquet", "jsonl": "application/x-ndjson"}
EXPORT_VERSION = "1"  # bump when the JSONL rendering changes: every ETag changes with it
_CHUNK = 64 * 1024
_BATCH_ROWS = 512
_JSONL_CACHE = ByteBudgetLRU(128 * 1024 * 1024)


@dataclass(frozen=True)
class Export:
    act_id: str
    version: str
    table: str
    format: str  # parquet | jsonl
    path: Path  # the published Parquet file the export is read from
    filename: str  # pl_kc_2025-11-13_articles.jsonl
    media_type: str
    etag: str  # quoted, strong

    def stream(self) -> Iterator[bytes]:
        """The whole export, in pieces (no piece larger than a row batch)."""
        if self.format == "parquet":
            yield from _file_slice(self.path, 0, self.path.stat().st_size - 1)
        else:
            yield from _jsonl_stream(self.path)

    def size(self) -> int:
        """Length in bytes (a JSONL export is produced once for it, then cached)."""
        return self.path.stat().st_size if self.format == "parquet" else len(self.content())

    def content(self) -> bytes:
        if self.format == "parquet":
            return self.path.read_bytes()
        hit = _JSONL_CACHE.get(self.etag)
        if hit is None:
            hit = b"".join(_jsonl_stream(self.path))
            _JSONL_CACHE.put(self.etag, hit)
        return hit

    def slice(self, start: int, end: int) -> Iterator[bytes]:
        """Bytes ``start`` … ``end`` (inclusive), in pieces."""
        if self.format == "parquet":
            yield from _file_slice(self.path, start, end)
        else:
            data = self.content()
            for i in range(start, end + 1, _CHUNK):
                yield data[i:min(i + _CHUNK, end + 1)]


def _file_slice(path: Path, start: int, end: int) -> Iterator[bytes]:
    with path.open("rb") as fh:
        fh.seek(start)
        left = end - start + 1
        while left > 0:
            piece = fh.read(min(_CHUNK, left))
            if not piece:
                return
            left -= len(piece)
            yield piece


def _default(value):
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot render {type(value).__name__} as JSON")


def jsonl_line(row: dict) -> bytes:
    return (json.dumps(row, ensure_ascii=False, default=_default, separators=(",", ":")) + "\n").encode()


def _jsonl_stream(path: Path) -> Iterator[bytes]:
    for batch in pq.ParquetFile(path).iter_batches(batch_size=_BATCH_ROWS):
        yield b"".join(jsonl_line(r) for r in batch.to_pylist())


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for piece in iter(lambda: fh.read(1 << 20), b""):
            h.update(piece)
    return h.hexdigest()


def _table_file(reader: CorpusReader, act_id: str, version: str, table: str) -> Path:
    if table == "diff":
        versions = reader.versions(act_id)
        i = versions.index(version)
        prev = versions[i - 1] if i else None
        names = reader.diff_names(act_id, version)
        name = f"diff_from_{prev}" if prev and f"diff_from_{prev}" in names else (names[-1] if names else None)
        if name is None:
            raise UnknownTable(f"{act_id} version {version} has no diff table (it is the first held version)")
        return reader.table_path(act_id, version, name)
    return reader.table_path(act_id, version, table)


def export(reader: CorpusReader, act_id: str, version: str, table: str = "articles", fmt: str = "parquet") -> Export:
    """The export of one table of a held version (UnknownAct / UnknownVersion / UnknownTable: not found;
    an unknown format: InvalidRead)."""
    reader.act(act_id)
    reader.require_version(act_id, version)
    if table not in EXPORT_TABLES:
        raise UnknownTable(f"no table {table[:40]!r} to export; tables: {', '.join(EXPORT_TABLES)}")
    if fmt not in FORMATS:
        raise InvalidRead(f"format must be one of {', '.join(FORMATS)}, got {fmt[:40]!r}")
    path = _table_file(reader, act_id, version, table)
    file_sha = reader.cache.get(path, "sha256", _sha256_file)
    source = reader.manifest(act_id, version).get("source_sha256") or ""
    tag = hashlib.sha256(f"{act_id}|{version}|{table}|{fmt}|{EXPORT_VERSION}|{source}|{file_sha}".encode()).hexdigest()
    filename = f"{act_id.replace(':', '_')}_{version}_{path.stem if table == 'diff' else table}.{fmt}"
    return Export(act_id, version, table, fmt, path, filename, FORMATS[fmt], f'"{tag[:40]}"')


_RANGE = re.compile(r"^(\d*)-(\d*)$")


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """``Range: bytes=…`` → (first, last) byte, inclusive; None to send the whole body (no header, or a
    unit other than bytes, which HTTP says to ignore). BadRange for a malformed, multiple or
    unsatisfiable range."""
    if not header or not header.strip().lower().startswith("bytes="):
        return None
    spec = header.strip()[6:].strip()
    if "," in spec:
        raise BadRange(f"one byte range per request, got {header[:80]!r}", size)
    m = _RANGE.match(spec)
    if not m or not (m[1] or m[2]):
        raise BadRange(f"malformed range {header[:80]!r}: use bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX", size)
    if not m[1]:  # suffix: the last N bytes
        n = int(m[2])
        if n == 0 or size == 0:
            raise BadRange(f"range {header[:80]!r} selects no byte of the {size}-byte body", size)
        return max(0, size - n), size - 1
    first = int(m[1])
    last = int(m[2]) if m[2] else size - 1
    if first >= size:
        raise BadRange(f"range {header[:80]!r} starts beyond the {size}-byte body", size)
    if last < first:
        raise BadRange(f"range {header[:80]!r} ends before it starts", size)
    return first, min(last, size - 1)
