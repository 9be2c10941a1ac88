"""Record validation: schema drift tolerated, every reason a record is refused listed."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from connectors.openlegaldata import case_key, validate_case


def test_validate_case_tolerates_drift_and_lists_every_problem() -> None:
    base = {"id": 7, "court": 3, "file_number": "1 C 2/20", "date": "2020-02-03",
            "updated_date": "2020-02-04T05:06:07.123456+01:00", "content": "<p>x</p>",
            "created_date": "yesterday", "brand_new_field": {"nested": [1]}}
    row, reasons = validate_case(base)
    assert reasons == [] and row is not None
    assert row["court_id"] == 3 and row["court_json"] is None
    assert row["updated_date"] == datetime(2020, 2, 4, 4, 6, 7, 123456, tzinfo=timezone.utc)
    assert row["created_date"] is None
    assert json.loads(row["extra_json"]) == {"brand_new_field": {"nested": [1]},
                                             "created_date": "yesterday"}

    row, reasons = validate_case({"id": True, "court": {"id": "3"}, "file_number": " ",
                                  "date": None, "updated_date": "soon", "content": 5})
    assert row is None and reasons == [
        "id: expected a positive integer, got True",
        "court: expected an object with an integer 'id' or an integer, got {'id': '3'}",
        "file_number: empty", "date: null", "updated_date: not an ISO timestamp: 'soon'",
        "content: expected text, got int"]
    assert validate_case([1, 2]) == (None, ["record is not a JSON object (got list)"])
    # the ordering key needs only id + updated_date, so refused records still move the cursor
    assert case_key({"id": 9, "updated_date": "2020-01-01T00:00:00Z"}) is not None
    assert case_key({"id": "9", "updated_date": "2020-01-01T00:00:00Z"}) is None
