"""``LEXPIPE_SAOS_*`` settings: read from the environment, validated as the API requires, turned
into the dump query; where the connector's files live under ``$LEXPIPE_HOME``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from connectors.saos import DumpQuery, SaosPaths, SaosSettings, dump_query
from connectors.saos.settings import overlap


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"PAGE_SIZE": "10", "JUDGMENT_START_DATE": "2011-01-01",
                        "JUDGMENT_END_DATE": "2011-12-31", "WITH_GENERATED": "false",
                        "OVERLAP_HOURS": "6", "MIN_INTERVAL_S": "2.5"}.items():
        monkeypatch.setenv(f"LEXPIPE_SAOS_{name}", value)
    saos = SaosSettings()
    assert saos.base_url == "https://www.saos.org.pl" and saos.min_interval_s == 2.5
    assert dump_query(saos) == DumpQuery(None, "2011-01-01", "2011-12-31", 10, False)
    assert overlap(saos) == timedelta(hours=6)
    for bad in ({"page_size": 5}, {"page_size": 101}, {"overlap_hours": -1},
                {"judgment_start_date": "2012-01-01", "judgment_end_date": "2011-01-01"}):
        with pytest.raises(ValidationError):
            SaosSettings(**bad)


def test_paths_under_the_home(tmp_path: Path) -> None:
    paths = SaosPaths(tmp_path)
    assert paths.store_root == tmp_path / "caselaw" / "pl" / "saos" / "store"
    assert paths.cursor_path == tmp_path / "state" / "saos" / "judgments_cursor.json"
    assert paths.lock_path == tmp_path / "state" / "saos" / "judgments.lock"
    assert paths.raw == tmp_path / "raw"
