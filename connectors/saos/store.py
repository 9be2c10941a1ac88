"""Append-only, idempotent Parquet store of SAOS judgments (``SAOS_JUDGMENTS``) and their
quarantine (``QUARANTINE``).

Why this shape (the same as ``connectors.case_store``, whose batch writer and quarantine reader it
shares): a sync may die anywhere and is then run again from its last saved cursor, re-sending what
it wrote after that cursor. So every batch is one Parquet file written to a temp name and renamed
(readers see a whole file or none), named by a hash of its content (writing the same batch again
writes nothing), and readers resolve duplicates.

What differs from the Open Legal Data store, and why: a SAOS dump record carries no modification
time (``sinceModificationDate`` filters server-side only), so versions of one judgment are ordered
by *when we fetched them*: the reader keeps the newest fetch per ``judgment_id``. For the same
reason a record is "unchanged" only when it equals the newest stored version (not any stored one):
a judgment changed and then changed back is stored again, and so is the newest. Batch names hash
every column, fetch time included, so such a revert never collides with its older identical batch;
re-writing the very same batch (same rows, same fetch) is still a no-op.

    <root>/judgments/part-<sha>.parquet    schemas.cases.SAOS_JUDGMENTS
    <root>/quarantine/part-<sha>.parquet   schemas.cases.QUARANTINE (one row per quarantine_id on read)
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.case_store import concat_tables, parts_of, read_quarantine, write_batch
from schemas.cases import QUARANTINE, SAOS_JUDGMENTS

_KEY_COLUMNS = ["judgment_id", "fetched_at", "record_sha256"]


class JudgmentStore:
    """Judgments and quarantine of the SAOS dump under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.judgments_dir = self.root / "judgments"
        self.quarantine_dir = self.root / "quarantine"

    # -- writing ------------------------------------------------------------------------------

    def write_judgments(self, rows: Sequence[dict[str, Any]]) -> Path | None:
        """Append one batch (schema SAOS_JUDGMENTS). Returns its file, or None for no rows."""
        return write_batch(self.judgments_dir, rows, SAOS_JUDGMENTS, name_excludes=frozenset())

    def write_quarantine(self, rows: Sequence[dict[str, Any]]) -> Path | None:
        """Append refused records (schema QUARANTINE); repeats are collapsed on read."""
        return write_batch(self.quarantine_dir, rows, QUARANTINE)

    # -- reading ------------------------------------------------------------------------------

    def judgment_parts(self) -> list[Path]:
        return parts_of(self.judgments_dir)

    def quarantine_parts(self) -> list[Path]:
        return parts_of(self.quarantine_dir)

    def all_judgment_rows(self, columns: Iterable[str] | None = None) -> pa.Table:
        """Every stored row, every version (for audits and tests)."""
        cols = list(columns) if columns is not None else None
        return concat_tables([pq.read_table(p, columns=cols, schema=SAOS_JUDGMENTS)
                              for p in self.judgment_parts()], SAOS_JUDGMENTS, cols)

    def judgments(self, columns: Iterable[str] | None = None) -> pa.Table:
        """The current view: one row per judgment id, its newest fetch; sorted by judgment id.

        Only the key columns of every part are read to pick the winners (ties of ``fetched_at``
        go to the later part in name order, then the later row: deterministic); the requested
        columns are then read part by part, so memory follows the result, not the history.
        """
        cols = list(columns) if columns is not None else None
        parts = self.judgment_parts()
        best: dict[int, tuple[Any, int, int]] = {}
        for p_idx, path in enumerate(parts):
            keys = pq.read_table(path, columns=["judgment_id", "fetched_at"])
            for r_idx, (jid, fetched) in enumerate(zip(keys.column("judgment_id").to_pylist(),
                                                       keys.column("fetched_at").to_pylist())):
                cand = (fetched, p_idx, r_idx)
                if jid not in best or cand > best[jid]:
                    best[jid] = cand
        by_part: dict[int, list[int]] = {}
        for _, p_idx, r_idx in best.values():
            by_part.setdefault(p_idx, []).append(r_idx)
        tables = [pq.read_table(parts[p_idx], columns=cols, schema=SAOS_JUDGMENTS)
                  .take(pa.array(sorted(rows), pa.int64()))
                  for p_idx, rows in sorted(by_part.items())]
        result = concat_tables(tables, SAOS_JUDGMENTS, cols)
        if "judgment_id" in result.column_names:
            return result.sort_by([("judgment_id", "ascending")])
        return result

    def versions(self) -> "LatestVersions":
        """The newest stored version (fetch time, ``record_sha256``) of every judgment.

        Reads three small columns of every part; the sync asks once per run and keeps it current,
        so a record read again unchanged (an overlap, a page fetched again after a crash) is
        recognised and never appended twice."""
        index = LatestVersions()
        for path in self.judgment_parts():
            keys = pq.read_table(path, columns=_KEY_COLUMNS)
            for jid, fetched, sha in zip(*(keys.column(c).to_pylist() for c in _KEY_COLUMNS)):
                index.add(jid, sha, fetched)
        return index

    def quarantine(self) -> pa.Table:
        """One row per quarantine_id (its first sighting), sorted by kind, record id, id."""
        return read_quarantine(self.quarantine_parts())


class LatestVersions:
    """Newest stored version per judgment id: tells a record ``new``, ``updated`` or
    ``unchanged`` (equal to the newest stored version)."""

    def __init__(self) -> None:
        self._latest: dict[int, tuple[datetime, str]] = {}

    def add(self, judgment_id: int, record_sha256: str, fetched_at: datetime) -> None:
        known = self._latest.get(judgment_id)
        if known is None or fetched_at >= known[0]:
            self._latest[judgment_id] = (fetched_at, record_sha256)

    def classify(self, judgment_id: int, record_sha256: str) -> str:
        known = self._latest.get(judgment_id)
        if known is None:
            return "new"
        return "unchanged" if known[1] == record_sha256 else "updated"

    def __len__(self) -> int:
        return len(self._latest)
