"""``ReadService.cited_by``: the judgments citing an article, from the tables the case-law assets write
(built here with the assets' own functions and schemas), cached per file version."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.citations.counts import CITATION_COUNTS
from pipelines.citations.pl_links import CITATION_LINKS, cited_by
from pipelines.reads import ReadService


def _link(jid: int, day: str, case: str | None, court: str, article: str | None, i: int = 0) -> dict:
    return {"judgment_id": jid, "judgment_date": dt.date.fromisoformat(day), "case_number": case,
            "court_type": court, "citation_index": i, "char_start": 0, "char_end": 5, "text": "art. 471 k.c.",
            "act_id": "pl:kc", "in_corpus": True, "unit_id": article, "article_id": article,
            "resolution": "exact", "resolved_to_version": "2024-12-19", "exact_version": True,
            "status": "in_force", "matched_id": article, "changed_since": False, "serving_version": "2025-11-13"}


def _write_pl(layout: Layout, rows: list[dict]) -> Path:
    path = layout.case_citations("pl")
    path.parent.mkdir(parents=True, exist_ok=True)
    links = pa.Table.from_pylist(rows, schema=CITATION_LINKS)
    pq.write_table(links, path.parent / "links.parquet")
    pq.write_table(cited_by(links), path)
    return path


def test_polish_judgments_listed_newest_first_with_court_and_date(tmp_path):
    layout = Layout(tmp_path)
    _write_pl(layout, [
        _link(1, "2011-04-29", "I CSK 457/10", "SUPREME", "pl:kc:art:471"),
        _link(1, "2011-04-29", "I CSK 457/10", "SUPREME", "pl:kc:art:471", 1),  # cited twice: one judgment
        _link(2, "2011-06-16", None, "COMMON", "pl:kc:art:471"),  # no case number
        _link(3, "2011-05-10", "KIO 1/11", "NATIONAL_APPEAL_CHAMBER", "pl:kc:art:6"),
        _link(4, "2011-05-11", "II K 1/11", "COMMON", None),  # no article resolved: not counted
    ])
    reads = ReadService.at(tmp_path)
    c = reads.cited_by("pl:kc:art:471")
    assert (c.held, c.citations, c.cases, c.first_date, c.last_date) == (True, 3, 2, "2011-04-29", "2011-06-16")
    assert [(j.judgment_id, j.case_number, j.court, j.date) for j in c.judgments] == [
        ("2", None, "COMMON", "2011-06-16"), ("1", "I CSK 457/10", "SUPREME", "2011-04-29")]
    assert [j.judgment_id for j in reads.cited_by("pl:kc:art:6").judgments] == ["3"]
    none = reads.cited_by("pl:kc:art:1")
    assert (none.held, none.cases, none.judgments) == (True, 0, [])


def test_cached_until_the_table_is_replaced(tmp_path):
    layout = Layout(tmp_path)
    path = _write_pl(layout, [_link(1, "2011-04-29", "I CSK 457/10", "SUPREME", "pl:kc:art:471")])
    reads = ReadService.at(tmp_path)
    assert reads.cited_by("pl:kc:art:471").cases == 1
    loads = reads.reader.cache.loads
    assert reads.cited_by("pl:kc:art:471").cases == 1 and reads.reader.cache.loads == loads
    _write_pl(layout, [_link(1, "2011-04-29", "I CSK 457/10", "SUPREME", "pl:kc:art:471"),
                       _link(9, "2012-01-02", "III CZP 1/12", "SUPREME", "pl:kc:art:471")])
    os.utime(path, ns=(1, 1))  # a new stamp even within the file system's time resolution
    assert reads.cited_by("pl:kc:art:471").cases == 2


def test_german_counts_and_a_home_without_case_law(tmp_path):
    layout = Layout(tmp_path)
    path = layout.case_citations("de")
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([
        {"unit_id": "de:bgb:par:433", "act_id": "de:bgb", "in_corpus": True, "verified": None, "citations": 8,
         "cases": 3}], schema=CITATION_COUNTS), path)
    reads = ReadService.at(tmp_path)
    c = reads.cited_by("de:bgb:par:433")
    assert (c.held, c.citations, c.cases, c.judgments) == (True, 8, 3, [])
    assert not reads.cited_by("pl:kc:art:471").held  # no Polish table in this home
    assert layout.case_citations("pl") == tmp_path / "caselaw" / "pl" / "citations" / "cited_by.parquet"
