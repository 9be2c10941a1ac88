"""The ELI listing: the year listing read over a real HTTP server, the offline listing of the held
PDFs (titles read from page 1), and the catalogue it writes, which the registry holds — a curated
row enriching a listed act, a listed act without one becoming an act of its own."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from connectors.eli import HttpEliSource, InvalidMetadataError, SampleEliSource
from connectors.eli_listing import (ListingError, act_id_for_eli, changeset_key, parse_changeset_key,
                                    polish_changeset, update_catalogue)
from connectors.http import PoliteHttpClient
from core.layout import Layout
from pipelines.statutes.pl.front_page import paragraph_unit, read_front_page
from schemas.acts import registry
from schemas.catalogue import load_catalogue
from registry_rows import KC as KC_ROW  # tests/, on sys.path via conftest

ITEMS = [  # shaped like GET /eli/acts/DU/2024 (YearItemResource), plus a field we do not know
    {"ELI": "DU/2024/1", "address": "WDU20240000001", "publisher": "DU", "year": 2024, "pos": 1, "volume": 0,
     "title": "Ustawa z dnia 1 grudnia 2023 r. o przykładach", "displayAddress": "Dz.U. 2024 poz. 1",
     "promulgation": "2024-01-02", "announcementDate": "2024-01-02", "changeDate": "2024-05-06T10:00:00",
     "textPDF": True, "textHTML": True, "type": "Ustawa", "status": "obowiązujący", "someFutureField": 1},
    {"ELI": "DU/2024/2", "title": "Rozporządzenie Ministra …", "displayAddress": "Dz.U. 2024 poz. 2",
     "changeDate": "2024-01-03T09:00:00", "textPDF": True, "type": "Rozporządzenie", "status": "obowiązujący"},
    {"ELI": "DU/2024/3", "title": "Ustawa z dnia 2 grudnia 2023 r. - Kodeks przykładów",
     "displayAddress": "Dz.U. 2024 poz. 3", "changeDate": "2024-02-01T09:00:00", "textPDF": True,
     "type": "Ustawa", "status": "uchylony"},
]


def _listing(items, total=None):
    return {"totalCount": len(items) if total is None else total, "offset": 0, "count": len(items), "items": items}


@pytest.fixture
def http_source(httpserver: HTTPServer, tmp_home: Layout) -> HttpEliSource:
    client = PoliteHttpClient(user_agent="lexpipe-tests/0", timeout_s=5.0, max_retries=0, backoff_base_s=0.1,
                              backoff_max_s=0.1, min_interval_s=0.0, cache_path=tmp_home.raw / "http_cache.json",
                              sleep=lambda s: None, rng=random.Random(1))
    return HttpEliSource(client, httpserver.url_for("/eli"))


def test_year_listing_over_http_and_what_is_catalogued(httpserver: HTTPServer, http_source, tmp_home: Layout):
    httpserver.expect_request("/eli/acts/DU/2024").respond_with_json(_listing(ITEMS))
    listed = http_source.listing(2024)
    assert [i.eli for i in listed] == ["DU/2024/1", "DU/2024/2", "DU/2024/3"]
    first = listed[0]
    assert (first.version, first.short_title, first.raw["someFutureField"]) == ("2024-05-06", "o przykładach", 1)
    assert [i.catalogued for i in listed] == [True, False, False]  # a statute in force; no regulation, no repealed act
    update = update_catalogue(tmp_home.home, http_source, [2024])
    assert update.added == ["DU/2024/1"] and update.years == [2024]
    cat = load_catalogue(tmp_home.catalogue("eli"))
    (entry,) = cat.acts
    assert (entry.id, entry.address, entry.title, entry.present) == ("pl:du2024_1", "DU/2024/1", "o przykładach", True)
    assert entry.extra["display_address"] == "Dz.U. 2024 poz. 1" and entry.first_seen == entry.last_changed == "2024-05-06"
    act = registry(tmp_home.home).get("pl:du2024_1")
    assert (act.curated, act.source, act.layout, act.title, act.display_address) == (
        False, "eli", "isap", "o przykładach", "Dz.U. 2024 poz. 1")


def test_listing_pages_by_offset_and_stops_when_the_server_ignores_it(httpserver: HTTPServer, http_source):
    httpserver.expect_request("/eli/acts/DU/2024", query_string="").respond_with_json(_listing(ITEMS[:2], total=3))
    httpserver.expect_request("/eli/acts/DU/2024", query_string="offset=2").respond_with_json(
        {"totalCount": 3, "offset": 2, "count": 1, "items": ITEMS[2:]})
    assert [i.eli for i in http_source.listing(2024)] == ["DU/2024/1", "DU/2024/2", "DU/2024/3"]
    httpserver.clear()
    httpserver.expect_request("/eli/acts/DU/2025").respond_with_json(_listing(ITEMS[:2], total=5))
    assert len(http_source.listing(2025)) == 2  # the same page again: no endless walk


@pytest.mark.parametrize("body, problem", [
    (_listing(ITEMS) | {"count": 7}, "'count' says 7 items, the listing has 3"),
    ({"acts": []}, "a listing has an 'items' list"),
    (_listing([{"title": "no ELI"}]), "items[0]: no 'ELI'"),
    (_listing([ITEMS[0] | {"changeDate": "yesterday"}]), "items[0] (DU/2024/1): unparseable changeDate"),
])
def test_a_bad_listing_is_refused_naming_the_url_and_item(httpserver: HTTPServer, http_source, body, problem):
    httpserver.expect_request("/eli/acts/DU/2024").respond_with_json(body)
    with pytest.raises(InvalidMetadataError) as err:
        http_source.listing(2024)
    assert problem in str(err.value) and "/eli/acts/DU/2024" in str(err.value)


def test_ids_and_changeset_keys():
    assert act_id_for_eli("DU/1997/553") == "pl:du1997_553" and act_id_for_eli("MP/2020/12") == "pl:mp2020_12"
    with pytest.raises(ValueError, match="not an ELI"):
        act_id_for_eli("1997/553")
    assert changeset_key("2026-07-28", "du1997_553") == "2026-07-28_du1997_553"
    assert parse_changeset_key("2026-07-28_du1997_553") == ("2026-07-28", "du1997_553")
    assert parse_changeset_key("2025-11-13_kc") == ("2025-11-13", "kc")
    with pytest.raises(ValueError, match="not a Polish changeset key"):
        parse_changeset_key("0124-100ac536")
    cs = polish_changeset("pl:kc", "DU/1964/93", "2025-11-13", title="Kodeks cywilny")
    assert (cs.key, cs.jurisdiction, cs.source, cs.kind, cs.date) == ("2025-11-13_kc", "pl", "eli", "eli", "2025-11-13")
    assert [(m.act_id, m.address, m.version) for m in cs.members] == [("pl:kc", "DU/1964/93", "2025-11-13")]


def test_offline_listing_reads_page_one_of_the_held_pdfs(sample_dir: Path):
    src = SampleEliSource(sample_dir, front_page=read_front_page)
    assert src.listing_years() == [1964, 1974, 1997]
    listed = {i.eli: i for y in src.listing_years() for i in src.listing(y)}
    assert sorted(listed) == ["DU/1964/296", "DU/1964/93", "DU/1974/141", "DU/1997/553"]
    shipped = {a.address: a for a in registry().curated().of_source("eli")}
    flat = lambda s: "".join(s.split()).casefold()  # noqa: E731
    for eli, item in listed.items():  # page 1 says what the curated rows say
        assert item.short_title == shipped[eli].title
        assert item.title == shipped[eli].official_title
        assert flat(item.display_address) == flat(shipped[eli].display_address)
        assert item.catalogued and item.file.startswith(shipped[eli].sample_stem)
    assert listed["DU/1964/93"].version == "2025-11-13"  # the newest visible text state
    # k.p.c. 2023 prints no address on page 1: with the 2024 text visible, the listing takes the
    # address that one prints; alone, the Dz. U. form of its ELI (which page 1 cannot contradict)
    assert flat(listed["DU/1964/296"].display_address) == flat("Dz. U. 1964 Nr 43 poz. 296")
    older = src.restricted(["2023-08-16"]).listing(1964)
    assert [(i.eli, i.version, i.display_address) for i in older] == [("DU/1964/296", "2023-08-16",
                                                                        "Dz. U. 1964 poz. 296")]
    with pytest.raises(ListingError, match="needs a page-1 reader"):
        SampleEliSource(sample_dir).listing(1964)


def test_paragraph_unit_is_read_from_the_pdf(sample_dir: Path):
    assert paragraph_unit(sample_dir / "pl" / "isap" / "D19970553Lj_2026-07-28.pdf") == "§"


def test_catalogue_without_a_curated_row_and_with_one(sample_dir: Path, tmp_home: Layout, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    src = SampleEliSource(sample_dir, front_page=read_front_page)
    # the shipped registry: every listed act has a curated row, which keeps its id and forms
    update = update_catalogue(tmp_home.home, src, src.listing_years())
    assert sorted(update.added) == ["DU/1964/296", "DU/1964/93", "DU/1974/141", "DU/1997/553"]
    reg = registry(tmp_home.home)
    assert reg.ids("pl") == ("pl:kc", "pl:kpc", "pl:kp", "pl:kk")
    assert reg.get("pl:kk").path == "D19970553Lj_2026-07-28.pdf" and reg.get("pl:kk").citation == "k.k."
    # unchanged listing: the file is not rewritten, nothing is new
    stamp = tmp_home.catalogue("eli").stat().st_mtime_ns
    again = update_catalogue(tmp_home.home, src, src.listing_years())
    assert again.added == [] and again.changed == [] and tmp_home.catalogue("eli").stat().st_mtime_ns == stamp
    # a registry without the Kodeks karny row: the listed act is an act of its own
    (tmp_path / "acts.toml").write_text(KC_ROW, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(tmp_path / "acts.toml"))
    reg = registry(tmp_home.home)
    assert reg.ids("pl") == ("pl:kc", "pl:du1964_296", "pl:du1974_141", "pl:du1997_553")
    kk = reg.get("pl:du1997_553")
    assert (kk.curated, kk.title, kk.address, kk.display_address, kk.sample_stem, kk.official_title) == (
        False, "Kodeks karny", "DU/1997/553", "Dz. U. 1997 Nr 88 poz. 553", "D19970553Lj",
        "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny")
    assert reg.get("pl:kc").curated and reg.get("pl:kc").citation == "k.c."
    # the source stops listing an act of a listed year: kept, marked as no longer present
    later = src.restricted(["2024-12-19", "2025-11-13", "2023-08-16", "2024-02-16"])
    gone = update_catalogue(tmp_home.home, later, [1964, 1974, 1997])
    entries = {e.address: e for e in gone.catalogue.acts}
    assert entries["DU/1997/553"].present is False and entries["DU/1974/141"].present is False
    assert entries["DU/1964/93"].present and json.loads(tmp_home.catalogue("eli").read_text())["source"] == "eli"
