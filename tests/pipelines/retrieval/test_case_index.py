"""Court decisions as the ``de:cases`` collection: synced samples → chunks → the embedded backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from core.layout import Layout
from pipelines.case_law.chunks import case_chunks
from pipelines.retrieval.case_index import CASES_ACT, case_documents, case_index_step, case_unit_id
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest


@pytest.fixture(scope="module")
def chunks(sample_dir: Path, tmp_path_factory):
    cases, quarantine = synced_cases(sample_dir, tmp_path_factory.mktemp("oldp"))
    return cases, quarantine, case_chunks(cases)


@pytest.fixture(scope="module")
def indexed(chunks, tmp_path_factory):
    layout = Layout(tmp_path_factory.mktemp("home"))
    encoder = get_encoder("hashing")
    report = case_index_step(layout, chunks[2], courts={}, encoder=encoder)
    return layout, encoder, report


def test_documents_are_decisions_with_their_place(chunks):
    cases, _, table = chunks
    version, docs = case_documents(table, courts={3: "Bundesgerichtshof"})
    assert version == max(cases["date"].to_pylist()).isoformat()
    assert set(docs["act_id"].to_pylist()) == {CASES_ACT}
    assert set(docs["article_id"].to_pylist()) == {case_unit_id(r["source"], r["case_id"], r["slug"])
                                                   for r in cases.to_pylist()}
    assert docs.num_rows == table.num_rows and len(set(docs["chunk_id"].to_pylist())) == docs.num_rows
    heads = dict(zip(docs["chunk_id"].to_pylist(), docs["heading_path"].to_pylist()))
    assert heads["de:case:bgh-2018-04-10-4-str-32817#1"].endswith("Beschluss vom 10.04.2018 · 4 StR 328/17 · Gründe")
    # the hash covers what is embedded: a different heading must give a different cache key
    _, renamed = case_documents(table, courts={c: "Gericht X" for c in cases["court_id"].to_pylist()})
    assert docs["content_hash"].to_pylist() != renamed["content_hash"].to_pylist()


def test_quarantined_records_never_reach_the_index(chunks, indexed):
    _, quarantine, _ = chunks
    layout, encoder, report = indexed
    backend = open_embedded_backend(layout, encoder=encoder, lang="de", rerank=False)
    hits = backend.search(SearchRequest("Urteil Beschluss Gericht", k=50, retriever="bm25",
                                        filters=Filters(act_ids=(CASES_ACT,))))
    cases, _, table = chunks
    assert {h.article_id for h in hits} == {case_unit_id(r["source"], r["case_id"], r["slug"])
                                            for r in cases.to_pylist()}  # every stored decision, no other
    bad_ids = {r["record_id"] for r in quarantine.to_pylist() if r["kind"] == "case" and r["record_id"]}
    assert len(quarantine) >= 10 and bad_ids
    assert not bad_ids & {str(c) for c in table["case_id"].to_pylist()}
    assert report.documents == table.num_rows and report.act_id == CASES_ACT


@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_a_decision_is_found_by_its_subject(indexed, retriever):
    layout, encoder, _ = indexed
    backend = open_embedded_backend(layout, encoder=encoder, lang="de", rerank=False)
    hits = backend.search(SearchRequest("Anhörungsrüge wegen Verletzung des rechtlichen Gehörs im Revisionsverfahren",
                                        k=3, retriever=retriever, filters=Filters(act_ids=(CASES_ACT,))))
    assert hits[0].article_id == "de:case:bgh-2018-04-10-4-str-32817"
    assert len({h.article_id for h in hits}) == len(hits)  # one hit per decision


def test_reindexing_the_same_sync_is_idempotent(chunks, indexed):
    layout, encoder, first = indexed
    again = case_index_step(layout, chunks[2], encoder=encoder)
    assert again.version == first.version and again.embedded == 0 and again.cached == first.documents
