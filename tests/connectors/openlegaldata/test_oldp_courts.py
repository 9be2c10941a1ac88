"""The court list sync: limit/offset paging like the live ``/courts/``, links checked before they
are followed, quarantine of bad courts, and all or nothing when the list moves under the offsets."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from connectors.openlegaldata import OpenLegalDataError, PageFormatError
from fake_openlegaldata import FakeOpenLegalData  # tests/, on sys.path via conftest
from oldp_helpers import TOKEN, make_sync
from core.layout import Layout
from schemas.cases import COURTS


def test_courts_snapshot(httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout,
                         oldp_dir: Path) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    # limit/offset like the live /courts/ (CappedLimitOffsetPagination), following the next links
    assert fake.court_requests == [{"limit": "5"}, {"limit": "5", "offset": "5"},
                                   {"limit": "5", "offset": "10"}]
    courts = sync.store.courts()
    assert courts.schema.equals(COURTS, check_metadata=False)
    rows = {r["court_id"]: r for r in courts.to_pylist()}
    assert sorted(rows) == sorted(c["pk"] for c in json.loads((oldp_dir / "courts.json").read_text()))
    assert (rows[1168]["name"], rows[1168]["code"], rows[1168]["state"]) == (
        "Bundesgerichtshof", "BGH", "29")
    extra = json.loads(rows[1166]["extra_json"])  # CourtSerializer fields the COURTS schema lacks
    assert extra["description"] == "" and "homepage" in extra and "review_status" in extra
    assert "aliases" not in extra  # a fixture field CourtSerializer does not serve
    assert rows[1]["updated_date"] == datetime(2018, 1, 30, 13, 23, 40, 675000, tzinfo=timezone.utc)
    # every page landed, labelled by its offset
    urls = sorted(json.loads(p.read_text())["source_url"] for p in sync.paths.raw.rglob("*.json"))
    assert [u.split("?")[1] for u in urls] == ["limit=5", "limit=5&offset=10", "limit=5&offset=5"]


def test_courts_sync_pages_past_the_servers_default_page(oldp_dir: Path, httpserver: HTTPServer,
                                                        tmp_path: Path) -> None:
    """A server whose default page (4) is shorter than the list: the sync must page by
    limit/offset. The old page/page_size walk got the same first page on every request here
    (page numbers are ignored by LimitOffsetPagination) and never reached the other courts."""
    fake = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, courts_default_limit=4)
    fake.install(httpserver)
    sync = make_sync(httpserver, tmp_path / "home", page_size=4)
    assert sync.sync_courts(max_pages=10) == 13
    assert [r.get("offset", "0") for r in fake.court_requests] == ["0", "4", "8", "12"]
    assert all(r["limit"] == "4" and "page" not in r and "page_size" not in r for r in fake.court_requests)
    assert len(sync.store.courts()) == 13


def test_courts_next_link_to_another_host_is_not_followed(oldp_dir: Path, httpserver: HTTPServer,
                                                          tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """The token goes with every request: a next link off the API is replaced by our own URL."""
    fake = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN)
    fake.install(httpserver)
    page = json.loads(fake.api.respond("/api/courts/", {"limit": "5"}, httpserver.url_for("/api/courts/")).body)
    page["next"] = "http://collector.invalid/api/courts/?limit=5&offset=5"
    fake.court_bodies[1] = json.dumps(page).encode()
    sync = make_sync(httpserver, tmp_path / "home", page_size=5)
    assert sync.sync_courts() == 13
    assert fake.court_requests[1] == {"limit": "5", "offset": "5"}  # computed, on the API's host
    assert "not following next link http://collector.invalid/api/courts/" in caplog.text


def test_malformed_courts_page_stops_and_keeps_the_previous_snapshot(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    before = sync.store.courts_path.read_bytes()

    fake.fail_courts(5, "html")  # the second page of the next sync is an HTML error page with 200
    with pytest.raises(PageFormatError, match=r"/api/courts/\?limit=5&offset=5: not a paginated JSON list"):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before  # all or nothing
    [page] = [r for r in sync.store.quarantine().to_pylist() if r["kind"] == "page"]
    assert page["source_url"].endswith("/api/courts/?limit=5&offset=5") and "502 Bad Gateway" in page["raw_record"]
    assert page["page"] == 2 and page["reasons"][0].startswith("not a paginated JSON list")

    # a page without its count cannot be checked for completeness
    fake.court_bodies[7] = b'{"next": null, "previous": null, "results": []}'
    with pytest.raises(PageFormatError, match="no integer 'count'"):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before


def test_bad_court_records_are_quarantined_and_the_rest_kept(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout) -> None:
    url = httpserver.url_for("/api/courts/")
    body = fake.api.respond("/api/courts/", {"limit": "5"}, url).body.decode()
    page = json.loads(body)
    first, second = page["results"][0], page["results"][1]
    # one court without a name, one record that is not valid JSON (an invalid \' escape)
    broken = body.replace(json.dumps(first, ensure_ascii=False),
                          json.dumps({**first, "name": None}, ensure_ascii=False))
    broken = broken.replace(json.dumps(second["name"], ensure_ascii=False),
                            json.dumps(second["name"], ensure_ascii=False)[:-1] + "\\'\"")
    fake.court_bodies[1] = broken.encode()
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 11
    refused = {r["record_id"]: r["reasons"] for r in sync.store.quarantine().to_pylist() if r["kind"] == "court"}
    assert refused[str(first["id"])] == ["name: null"]
    assert refused[str(second["id"])][0].startswith("not valid JSON: Invalid \\escape")
    assert {first["id"], second["id"]}.isdisjoint(sync.store.courts()["court_id"].to_pylist())


@pytest.mark.parametrize("edit,problem", [
    ("delete", r"the court list changed while paging \(count 13, now 12\)"),
    ("rename", r"court \d+ was already read on an earlier page"),
])
def test_court_list_changing_under_the_offsets_keeps_the_previous_snapshot(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout, edit: str,
        problem: str) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    before = sync.store.courts_path.read_bytes()
    first_page = json.loads(fake.api.respond("/api/courts/", {"limit": "5"}, "http://x/").body)["results"]
    moved = first_page[0]["id"]  # "Amtsgericht Aalen", first by name

    def change() -> None:  # between the first and the second page of the next sync
        if edit == "delete":
            del fake.api.courts[moved]
        else:  # renamed so that it sorts last: it shows up again, and a court slides onto page 1
            fake.api.courts[moved] = {**fake.api.courts[moved], "name": "Zentrales Gericht"}

    fake.court_edits[5] = change
    with pytest.raises(OpenLegalDataError, match=problem):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before
