"""The ``pl_cases`` group materialized in-process on the offline SAOS sample (no network), over a
copy of the session's published Civil Code corpus: judgments synced, chunked through the GX check,
indexed as ``pl:cases``, their citations linked to the held k.c. versions, and the cited-by table."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assets import pl_cases
from assets.resources import CorpusStorage, ParseConfig, SearchConfig
from corpus_fixtures import copy_published_corpus
from saos_fixtures import held_judgments


def _materialize(home: Path, sample: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*pl_cases.ASSETS, *pl_cases.CHECKS],
        resources={"storage": CorpusStorage(home=str(home)), "parse_config": ParseConfig(chunk_max_tokens=256),
                   "search_config": SearchConfig(encoder="hashing")},
        run_config={"ops": {"cases__pl__saos": {"config": {"offline": True, "sample_dir": str(sample)}}}},
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)


def _md(result: dg.ExecuteInProcessResult, node: str) -> dict:
    [mat] = result.asset_materializations_for_node(node)
    return {k: v.value for k, v in mat.metadata.items()}


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data.passed
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


@pytest.fixture(scope="module")
def materialized(tmp_path_factory, published_corpus, two_page_sample_dir: Path):
    corpus = copy_published_corpus(published_corpus, tmp_path_factory.mktemp("pl_cases"))
    return corpus.home, _materialize(corpus.home, two_page_sample_dir)


def test_sync_chunks_index_links_and_cited_by(materialized, two_page_sample_dir: Path) -> None:
    from core.layout import Layout
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.interface import Filters, SearchRequest
    from schemas.cases import PL_CASES_ACT

    home, result = materialized
    assert result.success
    assert _checks(result) == {"saos_quarantine_contract": True, "pl_case_chunks_valid": True,
                               "pl_citation_links_resolved": True}
    sync = _md(result, "cases__pl__saos")
    held = held_judgments(two_page_sample_dir)  # the offline source serves every held page
    assert (sync["stored_judgments"], sync["quarantined_total"], sync["complete"]) == (held, 0, True)
    chunks = _md(result, "cases__pl__chunks")
    assert chunks["judgments"] == held and chunks["rejected_judgments"] == 0 and chunks["chunks"] > held
    index = _md(result, "cases__pl__search_index")
    assert index["documents"] == chunks["chunks"] and index["serving_version"] == index["version"]
    links = _md(result, "cases__pl__citation_links")
    # the 2011 judgments predate every held k.c. version: nearest, never exact
    assert links["resolved_nearest"] > 100 and links["resolved_exact"] == 0
    assert links["resolved_out_of_corpus"] > 0
    table = pq.read_table(home / "caselaw" / "pl" / "citations" / "links.parquet")
    kc = [r for r in table.to_pylist() if r["act_id"] == "pl:kc" and r["resolution"] == "nearest"]
    assert kc and all(not r["exact_version"] and r["resolved_to_version"] for r in kc)
    cited = pq.read_table(home / "caselaw" / "pl" / "citations" / "cited_by.parquet")
    assert cited.num_rows == _md(result, "cases__pl__cited_by")["cited_articles"] > 0
    backend = open_embedded_backend(Layout(home), encoder=get_encoder("hashing"), lang="pl", rerank=False)
    hits = backend.search(SearchRequest("zamówienie publiczne odwołanie Krajowa Izba Odwoławcza", k=5,
                                        retriever="bm25", filters=Filters(act_ids=(PL_CASES_ACT,))))
    assert hits and all(h.act_id == PL_CASES_ACT for h in hits)
    assert len({h.article_id for h in hits}) == len(hits)  # one hit per judgment
    assert "Krajowa Izba Odwoławcza" in hits[0].heading_path


def test_rerun_is_idempotent(materialized, two_page_sample_dir: Path) -> None:
    home, _ = materialized
    before = pq.read_table(home / "caselaw" / "pl" / "citations" / "links.parquet")
    again = _materialize(home, two_page_sample_dir)
    assert again.success
    sync = _md(again, "cases__pl__saos")
    assert sync["new_judgments"] == 0 and sync["stored_judgments"] == held_judgments(two_page_sample_dir)
    assert _md(again, "cases__pl__search_index")["embedded_chunks"] == 0  # every embedding from the cache
    assert pq.read_table(home / "caselaw" / "pl" / "citations" / "links.parquet").equals(before)


def test_quarantine_contract_fails_when_a_refused_judgment_is_served(tmp_path: Path, two_page_sample_dir: Path) -> None:
    from connectors.saos import JudgmentStore, SaosPaths
    from datetime import datetime, timezone

    home = tmp_path / "home"
    result = dg.materialize([pl_cases.saos_judgments, pl_cases.saos_quarantine_contract],
                            resources={"storage": CorpusStorage(home=str(home))},
                            run_config={"ops": {"cases__pl__saos": {"config": {"offline": True,
                                                                               "sample_dir": str(two_page_sample_dir)}}}},
                            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert result.success
    store = JudgmentStore(SaosPaths(home).store_root)
    served = store.judgments(columns=["judgment_id"]).column("judgment_id").to_pylist()[0]
    store.write_quarantine([{"quarantine_id": "x" * 64, "source": "saos", "kind": "judgment",
                             "record_id": str(served), "reasons": ["textContent: the HTML yields no text"],
                             "raw_record": "{}", "source_url": "test", "page": 0, "record_index": 0,
                             "raw_sha256": "0" * 64, "quarantined_at": datetime.now(timezone.utc)}])
    check = dg.materialize([pl_cases.saos_quarantine_contract], resources={"storage": CorpusStorage(home=str(home))},
                           instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
                           selection=dg.AssetSelection.checks(pl_cases.saos_quarantine_contract))
    [evaluation] = [e.asset_check_evaluation_data for e in check.all_events
                    if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert evaluation.passed is False and str(served) in evaluation.description
