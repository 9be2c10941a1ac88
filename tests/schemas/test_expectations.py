"""The articles suite on rows read from a Markdown source (no page): the PDF-reading checks stay on
rows with a page, the Markdown residue checks take their place on rows without one.

The PDF side (every residue kind, the missing path, sort_key order) is tested on Polish rows in
tests/pipelines/test_validation.py; this file checks the split between the two."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from pipelines.validation import validate_table
from schemas.arrow import ARTICLES, from_rows
from schemas.expectations import MARKDOWN_RESIDUE_PATTERNS, RESIDUE_PATTERNS, articles_suite

VERSION = dt.date(2022, 3, 26)


def row(ordinal: int, number: str, text: str, *, page: int | None = None, path: list | None = None) -> dict:
    return {
        "id": f"de:xg:par:{number}", "act_id": "de:xg", "version": VERSION, "ordinal": ordinal, "number": number,
        "number_display": f"§ {number}", "title": None, "sort_key": int(number) * 1000, "path": path or [],
        "path_text": f"§ {number}", "text": text, "text_pending": None, "pending_effective_date": None,
        "pending_note": None, "paragraphs": [], "status": "in_force", "status_note": None, "page_start": page,
        "page_end": page, "footnotes": [], "content_hash": f"h{number}",
    }


def table(rows: list[dict]) -> pa.Table:
    return from_rows(rows, ARTICLES)


def labels(report) -> set[str]:
    return {f.label() for f in report.failed}


# German wording a PDF residue pattern would flag: an ISO date, brackets, "(CO2)", "< 5 mg"
GERMAN = ["Ausfertigungsdatum: 1998-06-25\nFundstelle: BGBl II: 2006, 1252",
          "Sozialgesetzbuch [SGB IX] Kohlendioxid (CO2) unter < 5 mg je Liter.",
          "Der Entwurf stammt von dem Künstler Friedrich Brenner aus Diedorf."]


def test_markdown_rows_outside_any_structure_and_with_german_wording_pass():
    rows = [row(i, str(i + 1), text) for i, text in enumerate(GERMAN)]  # no page, no path: a flat act
    report = validate_table(table(rows), articles_suite(None, 0.02, allow_pending=True), name="articles")
    assert report.success, report.summary()


def test_the_same_rows_read_from_a_pdf_fail_the_pdf_checks():
    rows = [row(i, str(i + 1), text, page=1) for i, text in enumerate(GERMAN)]
    report = validate_table(table(rows), articles_suite(None, 0.02, allow_pending=True), name="articles")
    assert labels(report) == {"expect_column_values_to_be_between(path_depth)",
                              "expect_column_values_to_not_match_regex(text) [date_footer]",
                              "expect_column_values_to_not_match_regex(text) [footnote_marker]",
                              "expect_column_values_to_not_match_regex(text) [isap_marker]"}
    assert set(RESIDUE_PATTERNS) >= {"date_footer", "footnote_marker", "isap_marker"}


@pytest.mark.parametrize("check,text", [
    ("footnote_reference", "Die Verordnung[^F816356_01] tritt in Kraft."),
    ("emphasis_marker", "**Abschnitt A:** Fertigkeiten"),
    ("placeholder_heading", "(XXXX) Abbildung der Münze"),
])
def test_markdown_residue_is_caught(check, text):
    rows = [row(0, "1", "Text."), row(1, "2", text), row(2, "3", "Text.")]
    report = validate_table(table(rows), articles_suite(None, 0.02, allow_pending=True), name="articles")
    assert labels(report) == {f"expect_column_values_to_not_match_regex(text) [{check}]"}
    assert report.failed[0].examples == ["de:xg:par:2"]
    assert MARKDOWN_RESIDUE_PATTERNS[check][1] in report.summary()
    # on a row read from a PDF the Markdown checks do not apply
    pdf_rows = [row(i, r["number"], r["text"], page=1, path=[{"level": "book", "number": "1", "heading": "",
                                                                "id": "de:xg:book:1"}]) for i, r in enumerate(rows)]
    pdf_report = validate_table(table(pdf_rows), articles_suite(None, 0.02, allow_pending=True), name="articles")
    assert not {f.check for f in pdf_report.failed} & set(MARKDOWN_RESIDUE_PATTERNS)
