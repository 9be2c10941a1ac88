"""Record validation at the storage limits: a record the store could not write (an id beyond
int64, text with a lone surrogate escape) is refused with a reason, never accepted — accepted,
it would fail the page's batch on every restart and stop the sync for good."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from connectors.saos import validate_judgment
from fake_saos import FakeSaos  # tests/, on sys.path via conftest
from saos_helpers import SAMPLE_JUDGMENTS, make_sync


def real_record(saos_dir: Path) -> dict[str, Any]:
    return json.loads((saos_dir / "judgments-page-347.json").read_text("utf-8"))["items"][0]


def test_every_real_record_is_valid_and_unstorable_ones_are_refused(saos_dir: Path) -> None:
    for n in (347, 355):
        items = json.loads((saos_dir / f"judgments-page-{n}.json").read_text("utf-8"))["items"]
        assert all(validate_judgment(i)[0] is not None for i in items)
    base = real_record(saos_dir)
    row, reasons = validate_judgment({**base, "id": 2**63})
    assert row is None and reasons == ["id: expected a positive integer (at most 2^63-1), got 9223372036854775808"]
    assert validate_judgment({**base, "id": 2**63 - 1})[0] is not None
    row, reasons = validate_judgment({**base, "division": {"id": -2**64}})
    assert row is None and reasons[0].startswith("division: expected an object with an integer 'id'")
    surrogate = json.loads('{"t": "<p>wyrok \\ud800 z uzasadnieniem w sprawie</p>"}')["t"]
    row, reasons = validate_judgment({**base, "textContent": surrogate})
    assert row is None and reasons[0].startswith("record holds text that is not valid Unicode")


def test_unstorable_records_are_quarantined_and_the_sync_completes(httpserver: HTTPServer,
                                                                   fake: FakeSaos,
                                                                   saos_dir: Path,
                                                                   tmp_path: Path) -> None:
    base = json.dumps(real_record(saos_dir), ensure_ascii=False)
    huge = base.replace('"id": 283463', '"id": 99999999999999999999', 1)
    lone = base.replace('"id": 283463', '"id": 990010', 1).replace("<p", "<p title=\\\"\\udc00\\\"", 1)
    fake.api.insert(5, huge, record={"judgmentDate": "2011-04-28"})
    fake.api.insert(150, lone, record={"judgmentDate": "2011-06-14"})
    sync = make_sync(httpserver, tmp_path / "home")
    report = sync.sync()
    assert report.complete and report.new == SAMPLE_JUDGMENTS and report.quarantined == 2
    refused = {r["raw_record"]: r["reasons"] for r in sync.store.quarantine().to_pylist()}
    assert refused[huge][0].startswith("id: expected a positive integer")
    assert refused[lone][0].startswith("record holds text that is not valid Unicode")
