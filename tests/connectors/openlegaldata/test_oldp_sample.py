"""The offline source: the emulator answers ``/courts/`` like the live API, and the offline sync
runs the same code on the samples as the live one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oldp_helpers import QUARANTINED_IDS, VALID_IDS


def test_courts_endpoint_answers_like_the_live_limit_offset_pagination(oldp_dir: Path) -> None:
    """The emulator's /courts/ is DRF LimitOffsetPagination as oldp configures it (default 50,
    max 1000, deep offsets refused), ordered by name, CourtSerializer records."""
    from connectors.openlegaldata.sample import COURT_API_FIELDS, COURTS_PATH, SampleOpenLegalData

    api = SampleOpenLegalData(oldp_dir.parent.parent)
    base = "http://api.test/api/courts/"

    def get(**args: str) -> dict[str, Any]:
        reply = api.respond(COURTS_PATH, args, base)
        assert reply.status == 200, reply.body
        return json.loads(reply.body)

    names = sorted(c["fields"]["name"] for c in json.loads((oldp_dir / "courts.json").read_text()))
    whole = get()  # no limit: default_limit 50 > 13 courts
    assert (whole["count"], whole["next"], whole["previous"]) == (13, None, None)
    assert [c["name"] for c in whole["results"]] == names  # order_by("name")
    assert all(tuple(c) == COURT_API_FIELDS for c in whole["results"])
    bgh = next(c for c in whole["results"] if c["code"] == "BGH")
    assert (bgh["id"], bgh["slug"], bgh["state"], bgh["homepage"]) == (1168, "bgh", 29, None)

    middle = get(limit="5", offset="5")
    assert [c["name"] for c in middle["results"]] == names[5:10]
    assert middle["next"] == base + "?limit=5&offset=10"
    assert middle["previous"] == base + "?limit=5"  # offset - limit <= 0: DRF drops the offset
    last = get(limit="5", offset="10", search="x")  # other parameters kept in the links, sorted
    assert len(last["results"]) == 3 and last["next"] is None
    assert last["previous"] == base + "?limit=5&offset=5&search=x"
    assert get(limit="5", offset="99")["results"] == []  # past the end: empty, not a 404
    assert len(get(limit="0")["results"]) == 13 and len(get(limit="-3")["results"]) == 13  # → default
    assert len(get(limit="5000")["results"]) == 13  # capped at max_limit, not refused
    deep = api.respond(COURTS_PATH, {"offset": "10001"}, base)
    assert deep.status == 404 and b"Offset 10001 exceeds maximum of 10000" in deep.body

    # what the old page-number walk asked: page/page_size are ignored, every "page" is the first
    small = SampleOpenLegalData(oldp_dir.parent.parent, courts_default_limit=4)
    first = json.loads(small.respond(COURTS_PATH, {"page_size": "5"}, base).body)
    second = json.loads(small.respond(COURTS_PATH, {"page_size": "5", "page": "2"}, base).body)
    assert [c["id"] for c in first["results"]] == [c["id"] for c in second["results"]]
    assert len(first["results"]) == 4 and first["next"] == base + "?limit=4&offset=4&page_size=5"


def test_offline_source_runs_the_same_sync_on_the_samples(sample_dir: Path, oldp_dir: Path,
                                                          tmp_path: Path) -> None:
    from connectors.openlegaldata import OpenLegalDataSettings, case_sync_from_settings
    from connectors.openlegaldata.sample import SAMPLE_BASE_URL
    from core.settings import Settings

    settings = Settings(home=tmp_path / "home", sample_dir=sample_dir, offline=True)
    sync = case_sync_from_settings(settings, OpenLegalDataSettings())
    report = sync.sync_cases()
    assert report.complete and report.mode == "date_windows" and report.mode_switch
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS
    assert sorted(r for r in sync.store.quarantine().column("record_id").to_pylist() if r) == \
        QUARANTINED_IDS
    for page in report.pages:  # landed like live pages, labelled as the sample stand-in
        side = json.loads(sync.landing.get(page.raw_sha256).sidecar_path.read_text())
        assert side["source_url"].startswith(SAMPLE_BASE_URL)

    again = case_sync_from_settings(settings, OpenLegalDataSettings()).sync_cases()
    assert again.complete and again.new == again.updated == 0 and again.mode_switch is None
    assert len(sync.store.all_case_rows()) == len(VALID_IDS)
