"""Expectation suites (schemas/expectations.py) run by pipelines/validation.py on synthetic tables.

Each defect test starts from a table that passes (``test_valid_*``) and changes one thing, then
checks that exactly the intended expectation fails and that the summary names the row and reason.
"""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa
import pytest

from pipelines import validation
from pipelines.validation import ValidationReport, prepare_articles_frame, validate_table
from schemas.arrow import ARTICLES, CHUNKS, NODES, from_rows
from schemas.expectations import RESIDUE_PATTERNS, articles_suite, chunks_suite, count_bounds, nodes_suite

VERSION = dt.date(2025, 1, 1)
PATH = [{"level": "book", "number": "PIERWSZA", "heading": "Część ogólna", "id": "pl:kc:book:1"},
        {"level": "title", "number": "I", "heading": "Przepisy wstępne", "id": "pl:kc:book:1/title:I"}]


def article(ordinal: int, number: str, sort_key: int, **over) -> dict:
    row = {
        "id": f"pl:kc:art:{number}", "act_id": "pl:kc", "version": VERSION, "ordinal": ordinal,
        "number": number, "number_display": number.replace("^1", "¹"), "sort_key": sort_key,
        "path": PATH, "path_text": "KSIĘGA PIERWSZA Część ogólna › TYTUŁ I Przepisy wstępne",
        "text": f"Art. {number}. Przepis numer {number} stosuje się odpowiednio do umów.",
        "text_pending": None, "pending_effective_date": None, "pending_note": None,
        "paragraphs": [{"id": f"pl:kc:art:{number}:par:", "number": "", "text": "x", "status": "in_force"}],
        "status": "in_force", "status_note": None, "page_start": 1, "page_end": 1,
        "footnotes": [], "content_hash": f"hash-{number}",
    }
    row.update(over)
    return row


def article_rows(n: int) -> list[dict]:
    """n valid articles 1..n in document order."""
    return [article(i, str(i + 1), (i + 1) * 1000) for i in range(n)]


def articles(rows: list[dict]) -> pa.Table:
    return from_rows(rows, ARTICLES)


def chunk_rows(n: int, token_count: int = 50) -> list[dict]:
    return [{
        "chunk_id": f"pl:kc:art:{i + 1}#0", "article_id": f"pl:kc:art:{i + 1}", "act_id": "pl:kc",
        "version": VERSION, "chunk_index": 0, "chunk_count": 1, "heading_path": "KSIĘGA PIERWSZA › Art. 1",
        "text": "Zdanie pierwsze. Zdanie drugie.", "token_count": token_count, "status": "in_force",
        "content_hash": f"c{i}",
    } for i in range(n)]


def failed_labels(report: ValidationReport) -> set[str]:
    return {f.label() for f in report.failed}


@pytest.fixture(scope="module", autouse=True)
def warm_gx():
    """Pay the GX import and context creation once, so per-test timings show validation only."""
    started = time.perf_counter()
    validation._batch_definition()
    print(f"\nGX import + ephemeral context: {time.perf_counter() - started:.1f}s")


# --------------------------------------------------------------------------- articles


def test_valid_articles_pass():
    report = validate_table(articles(article_rows(12)), articles_suite(previous_count=12), name="articles")
    assert report.success, report.summary()
    assert report.failed == []
    assert report.summary().startswith("articles: all ")
    assert report.evaluated == len(articles_suite(previous_count=12).expectations)


def test_every_expectation_has_a_reason():
    for suite in (articles_suite(previous_count=10), chunks_suite(50, 400), nodes_suite()):
        for e in suite.expectations:
            assert (e.meta or {}).get("reason"), f"{suite.name}: {e.expectation_type} has no reason"


def test_suites_build_before_any_gx_context_exists():
    """add_expectation() needs an active GX context; the builders must not (Dagster builds suites first)."""
    from great_expectations.data_context.data_context.context_factory import project_manager

    current = project_manager.get_current_project()
    project_manager.set_project(None)
    try:
        assert len(articles_suite(previous_count=10).expectations) == 28  # 22 + 6 Markdown residue checks
        assert len(chunks_suite(50, 400).expectations) == 6
        assert len(nodes_suite().expectations) == 4
    finally:
        project_manager.set_project(current)


def test_duplicate_id_is_named():
    rows = article_rows(8)
    rows[5]["id"] = rows[4]["id"]  # pl:kc:art:5 twice
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert not report.success
    assert failed_labels(report) == {"expect_column_values_to_be_unique(id)"}
    f = report.failed[0]
    assert f.unexpected_count == 2 and f.examples == ["pl:kc:art:5"]
    s = report.summary()
    assert "expect_column_values_to_be_unique(id): 2 rows, e.g. pl:kc:art:5 (reason:" in s  # listed once
    assert "join key" in s


@pytest.mark.parametrize("empty", ["", "  \n ", None])
def test_in_force_article_needs_text(empty):
    rows = article_rows(6)
    rows[3]["text"] = empty
    report = validate_table(articles(rows), articles_suite(), name="articles")
    expected = ("expect_column_values_to_not_be_null(text)" if empty is None
                else "expect_column_values_to_match_regex(text)")
    assert failed_labels(report) == {expected}
    assert report.failed[0].examples == ["pl:kc:art:4"]
    assert "only repealed articles may be empty" in report.summary()


@pytest.mark.parametrize("empty", ["", None])
def test_repealed_article_may_be_empty(empty):
    rows = article_rows(6)
    rows[3].update(text=empty, status="repealed", status_note="(uchylony)")
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert report.success, report.summary()


def test_unknown_status_fails():
    rows = article_rows(4)
    rows[1]["status"] = "pending"
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert failed_labels(report) == {"expect_column_values_to_be_in_set(status)"}
    assert report.failed[0].examples == ["pl:kc:art:2"]


def test_required_article_columns_not_null():
    """One row per required column set to null; each not-null expectation must name its row.

    (Arrow accepts nulls in non-nullable fields when building from rows, so the suite must check.)
    """
    rows = article_rows(7)
    required = ["number", "status", "content_hash", "sort_key", "id"]
    for row, col in zip(rows[1:], required):
        row[col] = None
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert {f.label() for f in report.failed} >= {f"expect_column_values_to_not_be_null({c})" for c in required}
    for i, col in enumerate(required, start=1):
        f = report.failed_expectation("expect_column_values_to_not_be_null", col)
        assert f.unexpected_count == 1, col
        # a null id cannot name its row: the report falls back to the row position
        assert f.examples == ([rows[i]["id"]] if col != "id" else [f"row {i}"]), col


# One validation per column (GX costs ~40 ms per expectation): each row carries one kind of residue,
# and each residue expectation must name exactly its rows.
RESIDUE_CASES = [  # (text, residue checks it must trip)
    ("Umowa zobowiązuje. ©Kancelaria Sejmu s. 5/242", {"running_header", "page_marker"}),
    ("Umowa zobowiązuje. s. 5/242", {"page_marker"}),
    ("Umowa zobowiązuje.\n2025-01-15\ndo świadczenia.", {"date_footer"}),
    ("Kodeks cywilny1) reguluje stosunki.", {"footnote_marker"}),
    ("Umowa <zobowiązuje do świadczenia.", {"isap_marker"}),
    ("Umowa zobowiązuje> do świadczenia.", {"isap_marker"}),
    ("Umowa [zobowiązuje] do świadczenia.", {"isap_marker"}),
]


@pytest.mark.parametrize("column", ["text", "text_pending"])
def test_pdf_residue_is_caught(column):
    rows = article_rows(len(RESIDUE_CASES) + 2)  # first and last article stay clean
    expected: dict[str, list[str]] = {}
    for row, (text, checks) in zip(rows[1:], RESIDUE_CASES):
        row[column] = text
        for check in checks:
            expected.setdefault(check, []).append(row["id"])
    assert set(expected) == set(RESIDUE_PATTERNS)  # every residue kind is exercised
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert not report.success
    assert failed_labels(report) == {f"expect_column_values_to_not_match_regex({column}) [{c}]" for c in expected}
    summary = report.summary()
    for f in report.failed:
        assert f.examples == expected[f.check], f.check
        assert f.unexpected_count == len(expected[f.check])
        assert RESIDUE_PATTERNS[f.check][1] in summary
        assert f"e.g. {expected[f.check][0]}" in summary
    assert expected["page_marker"] == ["pl:kc:art:2", "pl:kc:art:3"]  # the header row trips both checks


def test_legitimate_text_is_not_residue():
    """Points '1)', 'lit. a)', superscripts '^1' and dates in words must not trip the residue checks."""
    rows = article_rows(3)
    rows[1]["text"] = ("§ 1. Zgodnie z art. 109^1 § 2 pkt 1) i lit. a) ustawy z dnia 23 kwietnia 1964 r. "
                       "(Dz. U. z 2024 r. poz. 1061) oraz ust. 3/4 umowa wygasa.")
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert report.success, report.summary()


def test_superscript_misread_breaks_sort_key_order():
    # 109, 109^1, then "1091" (a superscript read as a digit), then 110: 1091000 > 110000.
    rows = [
        article(0, "109", 109_000),
        article(1, "109^1", 109_001),
        article(2, "1091", 1_091_000),
        article(3, "110", 110_000),
    ]
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert failed_labels(report) == {"expect_column_values_to_be_increasing(sort_key)"}
    f = report.failed[0]
    assert f.unexpected_count == 1
    assert f.examples == ["pl:kc:art:110 (after pl:kc:art:1091)"]
    assert "pl:kc:art:1091" in report.summary() and "misread" in report.summary()


def test_sort_key_is_checked_in_ordinal_order_not_row_order():
    rows = article_rows(5)
    shuffled = [rows[i] for i in (3, 0, 4, 2, 1)]  # row order != document order
    assert validate_table(articles(shuffled), articles_suite(), name="articles").success
    rows[2]["sort_key"] = rows[1]["sort_key"]  # equal keys: not strictly increasing
    report = validate_table(articles(rows), articles_suite(), name="articles")
    assert failed_labels(report) == {"expect_column_values_to_be_increasing(sort_key)"}
    assert report.failed[0].examples == ["pl:kc:art:3 (after pl:kc:art:2)"]


@pytest.mark.parametrize("path", [None, []])
def test_article_without_path(path):
    rows = article_rows(5)
    rows[4]["path"] = path
    table = articles(rows)
    assert prepare_articles_frame(table)["path_depth"].tolist() == [2, 2, 2, 2, 0]
    report = validate_table(table, articles_suite(), name="articles")
    assert failed_labels(report) == {"expect_column_values_to_be_between(path_depth)"}
    assert report.failed[0].examples == ["pl:kc:art:5"]
    assert "hierarchy" in report.summary()


def test_article_count_tolerance():
    table = articles(article_rows(50))
    assert count_bounds(100, 0.02) == (98, 102)
    assert count_bounds(51, 0.02) == (50, 52)
    assert validate_table(table, articles_suite(previous_count=51), name="articles").success  # -1.96 %
    for previous in (52, 40):  # 50 is -3.8 % of 52, +25 % of 40
        report = validate_table(table, articles_suite(previous_count=previous), name="articles")
        assert failed_labels(report) == {"expect_table_row_count_to_be_between"}, previous
        f = report.failed[0]
        assert f.observed == 50
        lo, hi = count_bounds(previous, 0.02)
        assert f"observed 50, expected {lo}..{hi}" in report.summary()
        assert "±2%" in report.summary()
    assert validate_table(table, articles_suite(previous_count=60, tolerance=0.2), name="articles").success


def test_preparation_follows_the_suite_not_the_report_name():
    report = validate_table(articles(article_rows(3)), articles_suite(), name="articles 2025-11-13")
    assert report.success, report.summary()
    assert report.summary().startswith("articles 2025-11-13: all ")


def test_examples_are_capped_at_ten():
    rows = article_rows(15)
    for r in rows:
        r["text"] += " ©"
    report = validate_table(articles(rows), articles_suite(), name="articles")
    f = report.failed_expectation("expect_column_values_to_not_match_regex", "text")
    assert f.unexpected_count == 15
    assert len(f.examples) == 10 and f.examples[0] == "pl:kc:art:1"
    assert f.truncated
    assert "pl:kc:art:10, ..." in f.describe()


def test_to_metadata_is_flat_ints_and_strings():
    rows = article_rows(5)
    rows[1]["id"] = rows[0]["id"]
    report = validate_table(articles(rows), articles_suite(), name="articles")
    md = report.to_metadata()
    assert all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in md.values())
    assert md["validation_result"] == "failed" and md["validation_failed"] == 1
    assert md["validation_rows"] == 5
    assert "pl:kc:art:1" in md["validation_summary"]


# --------------------------------------------------------------------------- chunks and nodes


def test_chunks_valid_and_token_bounds():
    suite = chunks_suite(min_tokens=50, max_tokens=100)  # hard bounds 1..110 (10 % margin)
    ok = chunk_rows(5)
    ok[0]["token_count"], ok[1]["token_count"] = 1, 110
    assert validate_table(from_rows(ok, CHUNKS), suite, name="chunks").success

    rows = chunk_rows(5)
    rows[3]["token_count"] = 111
    report = validate_table(from_rows(rows, CHUNKS), suite, name="chunks")
    assert failed_labels(report) == {"expect_column_values_to_be_between(token_count)"}
    assert report.failed[0].examples == ["pl:kc:art:4#0"]
    assert "1..110 tokens" in report.summary()


def test_chunks_required_columns_not_null():
    rows = chunk_rows(4)
    for row, col in zip(rows[1:], ["article_id", "text", "token_count"]):
        row[col] = None
    report = validate_table(from_rows(rows, CHUNKS), chunks_suite(50, 100), name="chunks")
    assert failed_labels(report) == {f"expect_column_values_to_not_be_null({c})"
                                     for c in ("article_id", "text", "token_count")}
    assert [f.examples for f in report.failed] == [["pl:kc:art:2#0"], ["pl:kc:art:3#0"], ["pl:kc:art:4#0"]]


def test_chunks_defects():
    rows = chunk_rows(4)
    rows[1]["chunk_id"] = rows[0]["chunk_id"]
    rows[2]["text"] = " "
    rows[3]["token_count"] = 0
    report = validate_table(from_rows(rows, CHUNKS), chunks_suite(50, 100), name="chunks")
    assert failed_labels(report) == {
        "expect_column_values_to_be_unique(chunk_id)",
        "expect_column_values_to_match_regex(text)",
        "expect_column_values_to_be_between(token_count)",
    }
    assert report.failed_expectation("expect_column_values_to_match_regex").examples == ["pl:kc:art:3#0"]
    assert "chunks: 3 of 6 expectations failed" in report.summary()


def test_nodes_level_and_unique_id():
    rows = [{"id": f"n{i}", "act_id": "pl:kc", "version": VERSION, "level": lvl, "number": "1", "heading": "",
             "text": None, "parent_id": None, "ordinal": i, "status": "in_force", "page": 1}
            for i, lvl in enumerate(["book", "title", "chapter", "article"])]
    assert validate_table(from_rows(rows, NODES), nodes_suite(), name="nodes").success
    rows[2]["level"] = "rozdział"
    rows[3]["id"] = "n0"
    rows.append({**rows[1], "id": None, "ordinal": 4})
    rows.append({**rows[1], "id": "n5", "level": None, "ordinal": 5})
    report = validate_table(from_rows(rows, NODES), nodes_suite(), name="nodes")
    assert failed_labels(report) == {"expect_column_values_to_be_in_set(level)",
                                     "expect_column_values_to_be_unique(id)",
                                     "expect_column_values_to_not_be_null(id)",
                                     "expect_column_values_to_not_be_null(level)"}
    assert report.failed_expectation("expect_column_values_to_be_in_set").examples == ["n2"]
    assert report.failed_expectation("expect_column_values_to_be_unique").examples == ["n0"]
    assert report.failed_expectation("expect_column_values_to_not_be_null", "id").examples == ["row 4"]
    assert report.failed_expectation("expect_column_values_to_not_be_null", "level").examples == ["n5"]


# --------------------------------------------------------------------------- speed


def test_context_is_reused():
    first = validation._batch_definition()
    table = articles(article_rows(300))
    started = time.perf_counter()
    report = validate_table(table, articles_suite(previous_count=300), name="articles")
    elapsed = time.perf_counter() - started
    assert validation._batch_definition() is first
    assert report.success, report.summary()
    print(f"\n300 articles, {report.evaluated} expectations: {elapsed:.2f}s")
