"""The offline source: the shared pages answered as the live dump API pages them (re-sliced by
pageSize/pageNumber, links self/prev/next, filters, 400 for bad parameters), and the offline sync
running the same code on them through the settings' sample_dir."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from connectors.saos import SAMPLE_BASE_URL, SAMPLE_MODIFIED_AT, SaosSettings, SampleSaos
from connectors.saos import judgment_sync_from_settings
from connectors.saos.sample import DUMP_PATH
from core.settings import Settings
from fake_saos import CONNECTOR_PAGES  # tests/, on sys.path via conftest

BASE = "http://api.test" + DUMP_PATH


def published_items(saos_dir: Path) -> list[dict[str, Any]]:
    """The items of the shared pages in the order of their page numbers."""
    items: list[dict[str, Any]] = []
    for n in CONNECTOR_PAGES:
        items += json.loads((saos_dir / f"judgments-page-{n}.json").read_text("utf-8"))["items"]
    return items


def every_item(saos_dir: Path) -> list[dict[str, Any]]:
    """The items of every held page."""
    items: list[dict[str, Any]] = []
    for path in saos_dir.glob("judgments-page-*.json"):
        items += json.loads(path.read_text("utf-8"))["items"]
    return items


def get(api: SampleSaos, **args: str) -> dict[str, Any]:
    reply = api.respond(DUMP_PATH, args, BASE)
    assert reply.status == 200, reply.body
    return json.loads(reply.body)


def links(page: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {link["rel"]: dict(parse_qsl(urlsplit(link["href"]).query)) for link in page["links"]}


def walk(api: SampleSaos, **args: str) -> list[dict[str, Any]]:
    """Every page of a query, following the next links."""
    pages, number = [], 0
    while True:
        page = get(api, **{**args, "pageNumber": str(number)})
        pages.append(page)
        if "next" not in links(page):
            return pages
        assert links(page)["next"]["pageNumber"] == str(number + 1)
        number += 1


@pytest.mark.parametrize("size,pages", [(100, 2), (10, 20), (30, 7)])
def test_pages_are_the_shared_items_resliced_by_page_size(saos_dir: Path, size: int,
                                                          pages: int) -> None:
    api = SampleSaos(saos_dir.parent.parent, CONNECTOR_PAGES)
    walked = walk(api, pageSize=str(size))
    assert len(walked) == pages
    assert [i for p in walked for i in p["items"]] == published_items(saos_dir)
    first, last = links(walked[0]), links(walked[-1])
    assert set(first) == {"self", "next"} and set(last) == {"self", "prev"}  # no next at the end
    assert first["self"] == {"pageSize": str(size), "pageNumber": "0"}
    assert walked[-1]["links"][0]["href"].startswith(BASE + "?pageSize=")  # our own base URL
    assert walked[0]["queryTemplate"]["pageSize"]["value"] == size and walked[0]["info"] is None


def test_date_window_and_modification_time_filters(saos_dir: Path) -> None:
    api = SampleSaos(saos_dir.parent.parent, CONNECTOR_PAGES)
    window = [i for p in walk(api, pageSize="100", judgmentStartDate="2011-05-04",
                              judgmentEndDate="2011-06-13") for i in p["items"]]
    expected = [i for i in published_items(saos_dir) if "2011-05-04" <= i["judgmentDate"] <= "2011-06-13"]
    assert window == expected and 0 < len(window) < 200
    assert links(get(api, judgmentStartDate="2011-05-04"))["self"]["judgmentStartDate"] == "2011-05-04"

    # every sample record counts as modified at SAMPLE_MODIFIED_AT; the filter is inclusive
    at = SAMPLE_MODIFIED_AT.strftime("%Y-%m-%dT%H:%M:%S.000")
    later = (SAMPLE_MODIFIED_AT + timedelta(milliseconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    assert len(get(api, pageSize="100", sinceModificationDate=at)["items"]) == 100
    assert get(api, sinceModificationDate=later)["items"] == []
    api.touch(13408, datetime(2025, 3, 1, tzinfo=timezone.utc), keywords=["nowe"])
    page = get(api, sinceModificationDate="2025-01-01T00:00:00.000")
    assert [(i["id"], i["keywords"]) for i in page["items"]] == [(13408, ["nowe"])]
    assert links(page)["self"]["sinceModificationDate"] == "2025-01-01T00:00:00.000"
    assert "next" not in links(page)


@pytest.mark.parametrize("args,prop", [
    ({"pageSize": "9"}, "pageSize"), ({"pageSize": "101"}, "pageSize"),
    ({"pageSize": "ten"}, "pageSize"), ({"pageNumber": "-1"}, "pageNumber"),
    ({"judgmentStartDate": "2011-13-01"}, "judgmentStartDate"),
    ({"judgmentEndDate": "1.5.2011"}, "judgmentEndDate"),
    ({"sinceModificationDate": "2025-01-01"}, "sinceModificationDate"),  # no time: refused
    ({"withGenerated": "maybe"}, "withGenerated"),
    ({"page": "2"}, "page"),  # @RestrictParamsNames: unknown parameters are refused
])
def test_invalid_parameters_answer_400_as_the_live_api(saos_dir: Path, args: dict[str, str],
                                                       prop: str) -> None:
    reply = SampleSaos(saos_dir.parent.parent, CONNECTOR_PAGES).respond(DUMP_PATH, args, BASE)
    assert reply.status == 400
    error = json.loads(reply.body)["error"]
    assert error["httpStatus"] == "400" and error["propertyName"] == prop


def test_defaults_and_a_page_past_the_end(saos_dir: Path) -> None:
    api = SampleSaos(saos_dir.parent.parent, CONNECTOR_PAGES)
    assert len(get(api)["items"]) == 20  # pageSize absent (or 0): the server's default 20
    assert len(get(api, pageSize="0")["items"]) == 20
    beyond = get(api, pageSize="100", pageNumber="5")
    assert beyond["items"] == [] and set(links(beyond)) == {"self", "prev"}
    assert api.respond("/api/dump/courts", {}, BASE).status == 404


def test_offline_sync_reads_the_shared_pages_through_the_settings(sample_dir: Path, saos_dir: Path,
                                                                  tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", sample_dir=sample_dir, offline=True)
    started = time.perf_counter()
    sync = judgment_sync_from_settings(settings)
    report = sync.sync()
    seconds = time.perf_counter() - started
    held = every_item(saos_dir)  # the settings' source serves every held page
    assert report.complete and len(report.pages) == -(-len(held) // 100)
    assert (report.new, report.updated, report.quarantined) == (len(held), 0, 0)
    table = sync.store.judgments()
    assert table.num_rows == len(held) and sync.store.quarantine().num_rows == 0
    assert table.column("judgment_id").to_pylist() == sorted(i["id"] for i in held)
    for page in report.pages:  # landed like live pages, labelled as the sample stand-in
        side = json.loads(sync.landing.get(page.raw_sha256).sidecar_path.read_text())
        assert side["source_url"].startswith(SAMPLE_BASE_URL + DUMP_PATH)
        assert side["act_id"] == "pl:saos:judgments"
    print(f"offline sync of the shared pages: {table.num_rows} judgments stored, "
          f"{sync.store.quarantine().num_rows} quarantined, {seconds:.2f} s")

    again = judgment_sync_from_settings(settings).sync()  # incremental: nothing modified since
    assert again.complete and len(again.pages) == 1 and again.records == 0
    assert "sinceModificationDate=" in again.pages[0].url

    small = judgment_sync_from_settings(Settings(home=tmp_path / "small", sample_dir=sample_dir),
                                        SaosSettings(page_size=50)).sync()
    assert small.complete and len(small.pages) == -(-len(held) // 50) and small.new == len(held)
