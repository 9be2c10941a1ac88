"""Append-only, idempotent Parquet store for case-law records and their quarantine.

Why this shape: an incremental sync may die anywhere (SIGKILL, power loss) and is then simply run
again from its last saved cursor, so it re-sends whatever it wrote after that cursor. The store
must absorb that without duplicates or corruption:

* every batch becomes one Parquet file, written to a temp file and renamed into place (readers see
  a whole file or none; temp names start with '.' and are never read);
* the file is named by a hash of the batch's *content* (ingestion timestamps excluded), so writing
  the same batch again finds the file present and writes nothing;
* readers deduplicate: one row per case id, the newest ``updated_date`` wins (a later fetch breaks
  ties), and one quarantine row per ``quarantine_id``;
* writers skip versions already stored: ``versions()`` indexes (case id, ``record_sha256``), so a
  record read again unchanged (an overlap window, a page re-fetched after a crash) is not appended.

    <root>/cases/part-<sha>.parquet        schemas.cases.CASES
    <root>/quarantine/part-<sha>.parquet   schemas.cases.QUARANTINE
    <root>/courts.parquet                  schemas.cases.COURTS (a full snapshot, replaced whole)

The batch writer (``write_batch``), the part listing (``parts_of``) and the quarantine reader
(``read_quarantine``) are module functions so that stores of other providers with the same
append-only shape (``connectors.saos.store.JudgmentStore``) share them instead of copying them.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from core.atomic import atomic_write_bytes
from schemas.arrow import conform
from schemas.cases import CASES, COURTS, QUARANTINE

# Columns that differ between two deliveries of the same data; they never name a batch.
VOLATILE_COLUMNS = frozenset({"fetched_at", "quarantined_at", "source_url", "raw_sha256", "page",
                              "record_index"})
_VOLATILE = VOLATILE_COLUMNS


def _table(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    return conform(pa.Table.from_pylist(list(rows), schema=schema), schema)


def _batch_name(rows: Sequence[dict[str, Any]],
                name_excludes: frozenset[str] = VOLATILE_COLUMNS) -> str:
    """Content hash of a batch, independent of row order and of the ``name_excludes`` columns
    (by default: when/where it was fetched)."""
    canon = sorted(json.dumps({k: v for k, v in row.items() if k not in name_excludes},
                              sort_keys=True, default=str, ensure_ascii=False) for row in rows)
    digest = hashlib.sha256("\n".join(canon).encode("utf-8")).hexdigest()
    return f"part-{digest[:40]}.parquet"


def write_batch(folder: Path, rows: Sequence[dict[str, Any]], schema: pa.Schema, *,
                name_excludes: frozenset[str] = VOLATILE_COLUMNS) -> Path | None:
    """Write ``rows`` as one content-named Parquet part of ``folder`` (atomic, idempotent).

    The rows are conformed to ``schema`` before the file is named, so a bad row never lands. The
    file is named by a hash of the rows without the ``name_excludes`` columns: writing the same
    batch again finds the file present and writes nothing. Returns the part, or None for no rows.
    Shared by every append-only store of this shape (``CaseStore``, ``connectors.saos.store``).
    """
    if not rows:
        return None
    table = _table(rows, schema)  # validate before naming: a bad row never lands
    path = Path(folder) / _batch_name(rows, name_excludes)
    if not path.exists():
        atomic_write_bytes(path, _parquet_bytes(table))
    return path


def parts_of(folder: Path) -> list[Path]:
    """The Parquet parts of ``folder`` in name order (temp files start with '.', never listed)."""
    folder = Path(folder)
    return sorted(folder.glob("part-*.parquet")) if folder.exists() else []


def read_quarantine(parts: Sequence[Path]) -> pa.Table:
    """QUARANTINE rows of ``parts``: one row per quarantine_id (its first sighting), sorted by
    kind, record id, quarantine id."""
    table = _concat([pq.read_table(p, schema=QUARANTINE) for p in parts], QUARANTINE, None)
    if table.num_rows == 0:
        return table
    table = table.sort_by([("quarantined_at", "ascending")])
    seen: set[str] = set()
    keep = []
    for i, qid in enumerate(table.column("quarantine_id").to_pylist()):
        if qid not in seen:
            seen.add(qid)
            keep.append(i)
    table = table.take(pa.array(keep, pa.int64()))
    return table.sort_by([("kind", "ascending"), ("record_id", "ascending"),
                          ("quarantine_id", "ascending")])


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


class CaseStore:
    """Cases, quarantine and courts of one provider under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.cases_dir = self.root / "cases"
        self.quarantine_dir = self.root / "quarantine"
        self.courts_path = self.root / "courts.parquet"

    # -- writing ------------------------------------------------------------------------------

    def write_cases(self, rows: Sequence[dict[str, Any]]) -> Path | None:
        """Append one batch (schema CASES). Returns its file, or None for an empty batch."""
        return self._write_part(self.cases_dir, rows, CASES)

    def write_quarantine(self, rows: Sequence[dict[str, Any]]) -> Path | None:
        """Append refused records (schema QUARANTINE); repeats are collapsed on read."""
        return self._write_part(self.quarantine_dir, rows, QUARANTINE)

    def write_courts(self, rows: Sequence[dict[str, Any]]) -> Path:
        """Replace the courts snapshot atomically (the court list is small and synced whole)."""
        atomic_write_bytes(self.courts_path, _parquet_bytes(_table(rows, COURTS)))
        return self.courts_path

    def _write_part(self, folder: Path, rows: Sequence[dict[str, Any]],
                    schema: pa.Schema) -> Path | None:
        return write_batch(folder, rows, schema)

    # -- reading ------------------------------------------------------------------------------

    def case_parts(self) -> list[Path]:
        return parts_of(self.cases_dir)

    def quarantine_parts(self) -> list[Path]:
        return parts_of(self.quarantine_dir)

    def all_case_rows(self, columns: Iterable[str] | None = None) -> pa.Table:
        """Every stored row, duplicates included (for audits and tests)."""
        return _concat([pq.read_table(p, columns=_cols(columns), schema=CASES)
                        for p in self.case_parts()], CASES, columns)

    def cases(self, columns: Iterable[str] | None = None) -> pa.Table:
        """The current view: one row per case id, the newest ``updated_date`` (then the newest
        ``fetched_at``) wins; sorted by case id.

        Only the three key columns of every part are read to pick the winners; the requested
        columns are then read part by part, so memory follows the result, not the history.
        """
        parts = self.case_parts()
        best: dict[int, tuple[Any, Any, int, int]] = {}
        for p_idx, path in enumerate(parts):
            keys = pq.read_table(path, columns=["case_id", "updated_date", "fetched_at"])
            ids = keys.column("case_id").to_pylist()
            upd = keys.column("updated_date").to_pylist()
            fet = keys.column("fetched_at").to_pylist()
            for r_idx, (cid, u, f) in enumerate(zip(ids, upd, fet)):
                cand = (u, f, p_idx, r_idx)
                if cid not in best or cand[:2] > best[cid][:2]:
                    best[cid] = cand
        by_part: dict[int, list[tuple[int, int]]] = {}
        for cid, (_, _, p_idx, r_idx) in best.items():
            by_part.setdefault(p_idx, []).append((r_idx, cid))
        tables = []
        for p_idx, picks in sorted(by_part.items()):
            picks.sort()
            table = pq.read_table(parts[p_idx], columns=_cols(columns), schema=CASES)
            tables.append(table.take(pa.array([r for r, _ in picks], pa.int64())))
        result = _concat(tables, CASES, columns)
        return result.sort_by([("case_id", "ascending")]) if "case_id" in result.column_names \
            else result

    def versions(self) -> "VersionIndex":
        """Which record versions are stored: (case id, ``record_sha256``) of every row.

        Reads two small columns of every part; the sync asks it once and then keeps it current,
        so a re-read record (overlap windows, a page fetched again after a crash) is recognised
        as unchanged and never appended twice."""
        index = VersionIndex()
        for path in self.case_parts():
            keys = pq.read_table(path, columns=["case_id", "record_sha256"])
            index.add_many(zip(keys.column("case_id").to_pylist(),
                               keys.column("record_sha256").to_pylist()))
        return index

    def quarantine(self) -> pa.Table:
        """One row per quarantine_id (its first sighting), sorted by kind, record id, id."""
        return read_quarantine(self.quarantine_parts())

    def courts(self) -> pa.Table:
        if not self.courts_path.exists():
            return COURTS.empty_table()
        return pq.read_table(self.courts_path, schema=COURTS)


class VersionIndex:
    """Stored versions per case id: tells a record ``new``, ``updated`` or ``unchanged``."""

    def __init__(self) -> None:
        self._by_case: dict[int, set[str]] = {}

    def add(self, case_id: int, record_sha256: str) -> None:
        self._by_case.setdefault(case_id, set()).add(record_sha256)

    def add_many(self, pairs: Iterable[tuple[int, str]]) -> None:
        for cid, sha in pairs:
            self.add(cid, sha)

    def classify(self, case_id: int, record_sha256: str) -> str:
        seen = self._by_case.get(case_id)
        if seen is None:
            return "new"
        return "unchanged" if record_sha256 in seen else "updated"

    def __len__(self) -> int:
        return len(self._by_case)


def _cols(columns: Iterable[str] | None) -> list[str] | None:
    return list(columns) if columns is not None else None


def concat_tables(tables: list[pa.Table], schema: pa.Schema,
                  columns: Iterable[str] | None) -> pa.Table:
    """``tables`` concatenated, or the empty ``schema`` table (``columns`` of it) when none."""
    return _concat(tables, schema, columns)


def _concat(tables: list[pa.Table], schema: pa.Schema, columns: Iterable[str] | None) -> pa.Table:
    if tables:
        return pa.concat_tables(tables)
    empty = schema.empty_table()
    return empty.select(list(columns)) if columns is not None else empty
