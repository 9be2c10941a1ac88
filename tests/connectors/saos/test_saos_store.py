"""The judgment store: content-named idempotent batches, the newest fetch of a judgment wins
(a change reverted is stored again), the schema holds, the quarantine collapses repeats."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from connectors.saos import JudgmentStore, validate_judgment
from schemas.cases import QUARANTINE, SAOS_JUDGMENTS

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def judgment(saos_dir: Path, index: int = 0, **changes: Any) -> dict[str, Any]:
    item = json.loads((saos_dir / "judgments-page-347.json").read_text("utf-8"))["items"][index]
    row, reasons = validate_judgment({**item, **changes})
    assert row is not None, reasons
    return row


def fetched(row: dict[str, Any], at: datetime, page: int = 0) -> dict[str, Any]:
    return {**row, "source_url": f"http://x/api/dump/judgments?pageNumber={page}",
            "raw_sha256": "0" * 64, "page": page, "fetched_at": at}


def test_batches_are_idempotent_and_the_newest_fetch_wins(saos_dir: Path, tmp_path: Path) -> None:
    store = JudgmentStore(tmp_path / "store")
    a, b = judgment(saos_dir), judgment(saos_dir, keywords=["zmienione"])
    first = store.write_judgments([fetched(a, T0)])
    assert store.write_judgments([fetched(a, T0)]) == first  # the very same batch: no new file
    assert len(store.judgment_parts()) == 1 and store.write_judgments([]) is None

    versions = store.versions()
    assert versions.classify(a["judgment_id"], a["record_sha256"]) == "unchanged"
    assert versions.classify(b["judgment_id"], b["record_sha256"]) == "updated"
    assert versions.classify(1, "x") == "new"

    store.write_judgments([fetched(b, T0 + timedelta(days=1))])
    store.write_judgments([fetched(a, T0 + timedelta(days=2))])  # changed back: stored again
    assert len(store.judgment_parts()) == 3
    current = store.judgments(columns=["judgment_id", "record_sha256", "keywords"])
    assert current.to_pylist() == [{"judgment_id": a["judgment_id"], "record_sha256": a["record_sha256"],
                                    "keywords": a["keywords"]}]
    assert store.versions().classify(a["judgment_id"], a["record_sha256"]) == "unchanged"
    assert store.all_judgment_rows().num_rows == 3
    assert store.judgments().schema.equals(SAOS_JUDGMENTS, check_metadata=False)


def test_current_view_is_sorted_and_empty_store_reads(saos_dir: Path, tmp_path: Path) -> None:
    store = JudgmentStore(tmp_path / "store")
    assert store.judgments().num_rows == 0 and store.quarantine().num_rows == 0
    assert store.judgments(columns=["judgment_id"]).column_names == ["judgment_id"]
    rows = [fetched(judgment(saos_dir, i), T0) for i in (5, 0, 3)]
    store.write_judgments(rows[:2])
    store.write_judgments(rows[2:])
    ids = store.judgments(columns=["judgment_id"]).column("judgment_id").to_pylist()
    assert ids == sorted(r["judgment_id"] for r in rows)
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError)):
        store.write_judgments([{**rows[0], "judgment_id": None}])  # non-null stays non-null


def test_quarantine_keeps_one_row_per_record(tmp_path: Path) -> None:
    store = JudgmentStore(tmp_path / "store")
    row = {"quarantine_id": "q1", "source": "saos", "kind": "judgment", "record_id": "7",
           "reasons": ["id: missing"], "raw_record": "{}", "source_url": "http://x", "page": 0,
           "record_index": 3, "raw_sha256": "0" * 64, "quarantined_at": T0}
    store.write_quarantine([row])
    store.write_quarantine([{**row, "quarantined_at": T0 + timedelta(days=1), "page": 4}])
    table = store.quarantine()
    assert table.schema.equals(QUARANTINE, check_metadata=False)
    assert table.num_rows == 1 and table.column("page").to_pylist() == [0]  # the first sighting
