"""Court names for decisions: the real samples synced over loopback (cases and the court list),
chunked and indexed as ``de:cases``. The BGH fixtures name their court only by id 5624, which the
court list does not hold; their slugs (``bgh-2018-04-09-…``) carry the court's slug ``bgh``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from connectors.case_store import CaseStore
from connectors.openlegaldata import OldpPaths
from core.layout import Layout
from pipelines.case_law.case_build import chunk_cases_step, promote_staged, read_current, read_staged
from pipelines.case_law.court_names import CourtIndex, with_court_names
from pipelines.retrieval.case_index import case_documents
from schemas.cases import COURTS

BGH_CASES = [65, 66, 67, 68, 69]


@pytest.fixture(scope="module")
def home(sample_dir: Path, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("oldp_home")
    cases, _ = synced_cases(sample_dir, home, courts=True)
    assert cases.num_rows == 6
    return home


@pytest.fixture(scope="module")
def store(home: Path) -> CaseStore:
    return CaseStore(OldpPaths(home).store_root)


def test_bgh_samples_name_a_court_the_list_lacks(store: CaseStore) -> None:
    cases = {r["case_id"]: r for r in store.cases().to_pylist()}
    courts = {r["court_id"]: r for r in store.courts().to_pylist()}
    assert len(courts) == 13 and courts[1168]["slug"] == "bgh"
    assert {cases[c]["court_id"] for c in BGH_CASES} == {5624} and 5624 not in courts
    assert all(cases[c]["court_name"] is None and cases[c]["slug"].startswith("bgh-2018-04-")
               for c in BGH_CASES)


def test_names_from_record_court_list_and_slug(store: CaseStore) -> None:
    named, sources = with_court_names(store.cases(), store.courts())
    by_case = dict(zip(named["case_id"].to_pylist(), named["court_name"].to_pylist()))
    assert {by_case[c] for c in BGH_CASES} == {"Bundesgerichtshof"}  # by slug: bgh → court 1168
    assert by_case[1888] == "Unknown court"  # embedded in the record (court 1)
    assert sources == {"record": 1, "court_id": 0, "slug": 5, "none": 0}
    assert named["court_id"].to_pylist() == store.cases()["court_id"].to_pylist()  # ids as sent

    # a record with only an id the list has: by id, and the id wins over the slug
    row = {"court_name": None, "court_id": 1167, "slug": "bgh-2018-04-09-x", "date": dt.date(2018, 4, 9)}
    assert CourtIndex(store.courts()).name(row) == ("Bundesverfassungsgericht", "court_id")


def test_slug_rule_needs_the_decision_date_and_one_court_per_slug(store: CaseStore) -> None:
    index = CourtIndex(store.courts())
    row = {"court_name": None, "court_id": 5624, "slug": "bgh-2018-04-09-vi-zr-19417"}
    assert index.name({**row, "date": dt.date(2018, 4, 10)}) == (None, "none")  # not this case's slug
    assert index.name({**row, "date": None}) == (None, "none")
    assert index.name({**row, "date": dt.date(2018, 4, 9), "slug": None}) == (None, "none")
    twice = pa.concat_tables([store.courts(), store.courts().filter(pc.equal(
        store.courts()["court_id"], 1168)).set_column(1, COURTS.field("court_id"), pa.array([9999], pa.int64()))])
    assert CourtIndex(twice).name({**row, "date": dt.date(2018, 4, 9)}) == (None, "none")  # ambiguous
    assert CourtIndex(COURTS.empty_table()).name({**row, "date": dt.date(2018, 4, 9)}) == (None, "none")


def test_court_name_reaches_the_chunks_and_the_de_cases_heading(home: Path) -> None:
    layout = Layout(home)
    out = chunk_cases_step(layout, max_tokens=256)
    assert out.court_name_sources == {"record": 1, "court_id": 0, "slug": 5, "none": 0}
    chunks = read_staged(layout)
    names = {c: n for c, n in zip(chunks["case_id"].to_pylist(), chunks["court_name"].to_pylist())}
    assert {names[c] for c in BGH_CASES} == {"Bundesgerichtshof"}
    promote_staged(layout)
    _, docs = case_documents(read_current(layout))
    heads = dict(zip(docs["chunk_id"].to_pylist(), docs["heading_path"].to_pylist()))
    assert heads["de:case:bgh-2018-04-09-vi-zr-19417#0"].startswith(
        "Bundesgerichtshof · Beschluss vom 09.04.2018 · VI ZR 194/17 · ")
    assert heads["de:case:bgh-2018-04-10-4-str-32817#1"] == \
        "Bundesgerichtshof · Beschluss vom 10.04.2018 · 4 StR 328/17 · Gründe"


def test_without_the_court_list_the_bgh_heading_has_no_court(sample_dir: Path, tmp_path: Path) -> None:
    """The state before courts were synced: the id alone names nothing."""
    cases, _ = synced_cases(sample_dir, tmp_path / "home")
    named, sources = with_court_names(cases, COURTS.empty_table())
    assert sources == {"record": 1, "court_id": 0, "slug": 0, "none": 5}
    assert named.filter(pc.is_in(named["case_id"], pa.array(BGH_CASES)))["court_name"].null_count == 5
