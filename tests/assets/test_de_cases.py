"""``cases/openlegaldata`` materialized in-process on the offline sample source (no network):
every valid sample case stored, every malformed record quarantined with its reasons, the
quarantine contract check passing — and failing when a refused record does reach the store."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import dagster as dg
import pytest

from assets import de_cases
from assets.resources import CorpusStorage
from connectors.openlegaldata import OldpPaths, validate_case
from connectors.case_store import CaseStore

VALID_IDS = [65, 66, 67, 68, 69, 1888]
QUARANTINED_IDS = ["1889", "30534", "30535", "30540", "30541", "30737", "30738", "30739"]
MALFORMED = 10  # the eight above + the BVerfG record with "id": null + the unparseable export


@pytest.fixture
def oldp_sample(sample_dir: Path) -> Path:
    if not (sample_dir / "de" / "openlegaldata").is_dir():
        pytest.skip(f"Open Legal Data samples not found under {sample_dir}")
    return sample_dir


def _materialize(home: Path, sample: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [de_cases.openlegaldata_cases, de_cases.quarantine_contract],
        resources={"storage": CorpusStorage(home=str(home))},
        run_config={"ops": {"cases__openlegaldata": {"config": {
            "offline": True, "sample_dir": str(sample)}}}},
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=True)


def _metadata(result: dg.ExecuteInProcessResult) -> dict:
    [mat] = result.asset_materializations_for_node("cases__openlegaldata")
    return {k: v.value for k, v in mat.metadata.items()}


def _check(result: dg.ExecuteInProcessResult):
    [evaluation] = [e.asset_check_evaluation_data for e in result.all_events
                    if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    return evaluation


def test_offline_materialization_stores_valid_cases_and_quarantines_malformed(
        tmp_path: Path, oldp_sample: Path) -> None:
    home = tmp_path / "home"
    result = _materialize(home, oldp_sample)
    assert result.success
    md = _metadata(result)
    assert (md["new_cases"], md["updated_cases"], md["unchanged_cases"]) == (len(VALID_IDS), 0, 0)
    assert md["quarantined_total"] == MALFORMED and md["stored_cases"] == len(VALID_IDS)
    assert md["complete"] is True and md["mode"] == "date_windows"  # the sample behaves like the live API
    assert "does the server honour" in md["mode_switch"]
    assert md["source"] == "offline sample" and md["pages"] >= 2 and md["seconds"] >= 0
    assert md["courts"] == 13  # the court list snapshot, synced in the same pass
    assert md["cursor"]["mode"] == "date_windows" and md["cursor"]["max_date_seen"] == "2018-11-21"
    reasons = md["quarantine_reasons"]
    for problem in ("content", "not valid JSON", "id", "file_number", "updated_date", "date"):
        assert f"| {problem} |" in reasons

    store = CaseStore(OldpPaths(home).store_root)
    assert store.cases().column("case_id").to_pylist() == VALID_IDS
    quarantine = store.quarantine()
    assert quarantine.num_rows == MALFORMED
    assert sorted(r for r in quarantine.column("record_id").to_pylist() if r) == QUARANTINED_IDS
    assert all(r and all(x.strip() for x in r) for r in quarantine.column("reasons").to_pylist())

    check = _check(result)
    assert check.passed and check.metadata["quarantined_and_stored"].value == 0

    again = _materialize(home, oldp_sample)  # idempotent: the overlap re-read stores nothing
    md2 = _metadata(again)
    assert (md2["new_cases"], md2["updated_cases"]) == (0, 0) and md2["mode_switch"] == ""
    assert len(store.all_case_rows()) == len(VALID_IDS) and _check(again).passed


def test_quarantine_contract_fails_when_a_refused_record_reaches_the_store(
        tmp_path: Path, oldp_sample: Path) -> None:
    home = tmp_path / "home"
    assert _materialize(home, oldp_sample).success
    store = CaseStore(OldpPaths(home).store_root)
    # a buggy writer stores case 1889 (refused: empty content) with an older fetch time
    row, _ = validate_case({"id": 1889, "court": 1, "file_number": "X", "date": "2018-11-21",
                            "updated_date": "2018-12-05T16:30:08.018Z", "content": "<p>x</p>"})
    assert row is not None
    store.write_cases([{**row, "source_url": "http://x/", "raw_sha256": "0" * 64,
                        "fetched_at": datetime(2000, 1, 1, tzinfo=timezone.utc)}])
    no_reason, leaked, superseded = de_cases.quarantine_violations(store)
    assert (no_reason, leaked, superseded) == ([], ["1889"], [])

    result = dg.materialize([de_cases.quarantine_contract],
                            resources={"storage": CorpusStorage(home=str(home))},
                            selection=dg.AssetSelection.checks(de_cases.quarantine_contract),
                            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    check = _check(result)
    assert not check.passed and "1889" in check.description


def test_reason_summary_counts_each_problem_once_per_record() -> None:
    assert de_cases.reason_summary([["content: empty"], ["id: null", "content: missing"],
                                    ["not valid JSON: Invalid \\escape: line 1"]]) == [
        ("content", 2), ("id", 1), ("not valid JSON", 1)]


def _materialize_all(home: Path, sample: Path) -> dg.ExecuteInProcessResult:
    from assets.resources import ParseConfig, SearchConfig

    return dg.materialize(
        [*de_cases.ASSETS, *de_cases.CHECKS],
        resources={"storage": CorpusStorage(home=str(home)), "parse_config": ParseConfig(chunk_max_tokens=256),
                   "search_config": SearchConfig(encoder="hashing")},
        run_config={"ops": {"cases__openlegaldata": {"config": {"offline": True, "sample_dir": str(sample)}}}},
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)


def _md_of(result: dg.ExecuteInProcessResult, node: str) -> dict:
    [mat] = result.asset_materializations_for_node(node)
    return {k: v.value for k, v in mat.metadata.items()}


def test_sync_chunk_validate_index_and_count(tmp_path: Path, oldp_sample: Path) -> None:
    """The whole case-law chain offline: decisions reach the de:cases collection only through the
    chunk check, and the served collection finds a decision by its subject."""
    from core.layout import Layout
    from pipelines.retrieval.case_index import CASES_ACT
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.interface import Filters, SearchRequest

    home = tmp_path / "home"
    result = _materialize_all(home, oldp_sample)
    assert result.success
    chunks = _md_of(result, "cases__chunks")
    assert chunks["cases"] == len(VALID_IDS) and chunks["chunks"] > len(VALID_IDS) and chunks["rejected_cases"] == 0
    # the five BGH samples name court 5624, absent from the court list: named by their slug's court
    assert chunks["court_name_sources"] == {"record": 1, "court_id": 0, "slug": 5, "none": 0}
    checks = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data.passed
              for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    assert checks == {"quarantine_contract": True, "case_chunks_valid": True}
    index = _md_of(result, "cases__search_index")
    assert index["documents"] == chunks["chunks"] and index["serving_version"] == index["version"]
    counts = _md_of(result, "cases__citation_counts")
    assert counts["citations"] > 0 and "de:stpo:par:349" in counts["most_cited"]  # 4 StR 328/17 cites § 349 StPO
    backend = open_embedded_backend(Layout(home), encoder=get_encoder("hashing"), lang="de", rerank=False)
    hits = backend.search(SearchRequest("Anhörungsrüge Verletzung rechtlichen Gehörs Revision", k=3,
                                        retriever="bm25", filters=Filters(act_ids=(CASES_ACT,))))
    assert hits[0].article_id == "de:case:bgh-2018-04-10-4-str-32817"
    assert hits[0].heading_path.startswith("Bundesgerichtshof · Beschluss vom 10.04.2018 · 4 StR 328/17 · ")


def test_invalid_chunks_block_the_index_and_keep_the_served_collection(tmp_path: Path, oldp_sample: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.case_law import case_build
    from pipelines.retrieval.case_index import CASES_ACT

    home = tmp_path / "home"
    assert _materialize_all(home, oldp_sample).success
    served = (home / "caselaw" / "de" / "chunks" / "current" / "case_chunks.parquet").read_bytes()
    real = case_build.build_case_chunks

    def broken(cases, **kw):  # markup left in the text: what a cleaner regression would produce
        out = real(cases, **kw)
        text = out.chunks["text"].to_pylist()
        text[0] = "<div class='x'>" + text[0]
        out.chunks = out.chunks.set_column(out.chunks.schema.get_field_index("text"), "text",
                                           __import__("pyarrow").array(text))
        return out

    monkeypatch.setattr(case_build, "build_case_chunks", broken)
    result = _materialize_all(home, oldp_sample)
    checks = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data.passed
              for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    assert checks["case_chunks_valid"] is False
    assert not result.asset_materializations_for_node("cases__search_index")  # blocked by the check
    assert (home / "caselaw" / "de" / "chunks" / "current" / "case_chunks.parquet").read_bytes() == served
    state = (home / "index" / "embedded" / "serving").glob("*.json")
    assert any(CASES_ACT.replace(":", "_") in p.name or "cases" in p.name for p in state)
