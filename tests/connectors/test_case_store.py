"""The case store: idempotent batches, the newest version of a case wins, the schema holds."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest

from connectors.case_store import CaseStore
from connectors.openlegaldata import validate_case


def test_store_is_idempotent_and_newest_version_wins(tmp_path: Path) -> None:
    store = CaseStore(tmp_path / "store")
    row, _ = validate_case({"id": 1, "court": 2, "file_number": "A", "date": "2020-01-01",
                            "updated_date": "2020-01-01T00:00:00Z", "content": "old"})
    assert row is not None
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    prov = {"source_url": "http://x/1", "raw_sha256": "0" * 64, "fetched_at": t0}
    first = store.write_cases([{**row, **prov}])
    again = store.write_cases([{**row, **prov, "fetched_at": datetime.now(timezone.utc),
                                "source_url": "http://x/2"}])
    assert first == again and len(store.case_parts()) == 1
    assert store.write_cases([]) is None

    newer = {**row, "updated_date": datetime(2021, 1, 1, tzinfo=timezone.utc),
             "updated_date_raw": "2021-01-01T00:00:00Z", "content": "new"}
    store.write_cases([{**newer, **prov}])
    older_fetched_later = {**row, **prov, "fetched_at": datetime(2025, 1, 1, tzinfo=timezone.utc),
                           "file_number": "B"}
    store.write_cases([older_fetched_later])
    current = store.cases(columns=["case_id", "content"])
    assert current.to_pylist() == [{"case_id": 1, "content": "new"}]
    assert len(store.all_case_rows()) == 3
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError)):
        store.write_cases([{**row, **prov, "case_id": None}])  # a non-null column stays non-null
