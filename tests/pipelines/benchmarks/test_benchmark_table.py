"""All sources → one benchmark table, de-duplicated and validated (pipelines/benchmarks/benchmark_table.py,
schemas BENCHMARK_QUESTIONS and benchmark_questions_suite)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from pipelines.benchmarks.benchmark_table import (
    build_benchmark_table,
    dedup_questions,
    load_all_questions,
    questions_to_table,
    table_stats,
    validate_benchmark_table,
)
from pipelines.benchmarks.legal_basis import UnitRef, parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option, normalize_text
from schemas.arrow import BENCHMARK_QUESTIONS
from schemas.expectations import benchmark_questions_suite

PDF_SOURCE = "pl/exam-pdfs/2025-09-27_adwokacki_radcowy_questions.pdf"


@pytest.fixture(scope="module")
def table(benchmark_table: pa.Table) -> pa.Table:
    """build_benchmark_table(sample_dir), built once per session (conftest.py)."""
    return benchmark_table


@pytest.fixture(scope="module")
def rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def test_schema(table: pa.Table):
    assert table.schema.equals(BENCHMARK_QUESTIONS, check_metadata=True)


def test_counts_per_source(table: pa.Table, rows: list[dict]):
    stats = table_stats(table)
    per_source = stats["rows_per_source"]
    assert per_source[PDF_SOURCE] == 150  # first source: all of it kept
    assert "pl/exams/2025/adwokacki_radcowy.jsonl" not in per_source  # all 69 are in the PDF
    assert per_source["de/gerlayqa/bgb_dev.json"] == 2154
    assert stats["rows_per_benchmark"] == {"pl_exams": 2418, "gerlayqa": 2154}
    assert stats["duplicates_dropped"] == 2343 + 150 - 2418
    assert stats["refs_unresolved"] == 0
    assert stats["refs_in_corpus"] > 750 and stats["refs_outside_corpus"] > stats["refs_in_corpus"]
    assert stats["superscript_refs"] == 14  # all from the PDF answer key


def test_order_and_ids(rows: list[dict]):
    assert [r["source_format"] for r in rows[:150]] == ["pdf"] * 150
    assert rows[-1]["benchmark"] == "gerlayqa"
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["text_hash"] for r in rows}) == len(rows)


def test_duplicates_are_recorded_on_the_kept_row(rows: list[dict]):
    by_id = {r["id"]: r for r in rows}
    q1 = by_id[f"pl_exams:{PDF_SOURCE}#1"]
    assert q1["also_in"] == ["pl_exams:pl/exams/2025/adwokacki_radcowy.jsonl#1"]
    pdf_also = [a for r in rows if r["source"] == PDF_SOURCE for a in r["also_in"]]
    assert len([a for a in pdf_also if "2025/adwokacki_radcowy.jsonl" in a]) == 69


def test_same_stem_with_other_options_is_another_item(rows: list[dict]):
    stems = {}
    for r in rows:
        if r["benchmark"] == "pl_exams":
            stems.setdefault(normalize_text(r["question"]), []).append(r)
    variants = [v for v in stems.values() if len(v) > 1]
    assert len(variants) > 100
    assert all(len({tuple(o["text"] for o in r["options"]) for r in v}) == len(v) for v in variants)


def test_gold_refs_join_the_corpus(rows: list[dict], kc_parsed: dict):
    """Every in-corpus gold unit id exists in the parsed Civil Code (ids are scheme-compatible):
    parse_statute of the 2025-11-13 sample PDF, parsed once per session (conftest.py)."""
    parsed = kc_parsed["2025-11-13"]
    assert parsed.version == dt.date(2025, 11, 13)
    ids = {a.id for a in parsed.articles} | {u.id for a in parsed.articles for u in a.units}
    in_corpus = [g for r in rows for g in r["gold_refs"] if g["in_corpus"]]
    assert {g["act_id"] for g in in_corpus} == {"pl:kc", "pl:kpc", "pl:kp", "pl:kk"}  # the registry's Polish acts
    refs = [g for g in in_corpus if g["act_id"] == "pl:kc"]
    assert len(refs) > 750
    assert sorted({g["unit_id"] for g in refs} - ids) == []
    assert {"pl:kc:art:75^1:par:1", "pl:kc:art:454^1"} <= {g["unit_id"] for g in refs}


def test_valid_table_passes_the_suite(table: pa.Table):
    report = validate_benchmark_table(table, min_rows=4000)
    assert report.success, report.summary()
    assert report.evaluated == len(benchmark_questions_suite(min_rows=4000).expectations)


def test_sources_can_be_left_out(sample_dir: Path):
    qs = load_all_questions(sample_dir, include_pdfs=False, include_gerlayqa=False)
    assert {q.source_format for q in qs} == {"jsonl"} and len(qs) == 2343


def test_missing_source_is_an_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="exam-pdfs: exam PDF directory not found"):
        build_benchmark_table(tmp_path)


# --------------------------------------------------------------------------- suite on synthetic rows


def exam_q(n: int, **over) -> BenchmarkQuestion:
    fields = dict(benchmark="pl_exams", source="pl/exams/2030/notarialny.jsonl", source_format="jsonl",
                  question_id=str(n), language="pl", question=f"Pytanie numer {n}?", legal_basis="art. 5 k.c.",
                  gold_refs=parse_legal_basis("art. 5 k.c."),
                  options=[Option("A", "tak"), Option("B", "nie"), Option("C", f"może {n}")], gold_option="A",
                  year=2030, exam="notarialny")
    fields.update(over)
    return BenchmarkQuestion(**fields)


def lay_q(n: int) -> BenchmarkQuestion:
    return BenchmarkQuestion(benchmark="gerlayqa", source="de/gerlayqa/bgb_dev.json", source_format="json",
                             question_id=str(n), language="de", question=f"Frage {n}?", legal_basis="§ 1",
                             gold_refs=[UnitRef("de:bgb", "de:bgb:par:1", "de:bgb:par:1", False, "§ 1")])


def failed(questions: list[BenchmarkQuestion], min_rows: int | None = None) -> set[str]:
    report = validate_benchmark_table(questions_to_table(questions), min_rows=min_rows)
    return {f"{f.expectation}({f.column})" if f.column else f.expectation for f in report.failed}


def test_synthetic_valid():
    assert failed([exam_q(1), exam_q(2), lay_q(0)]) == set()


@pytest.mark.parametrize("defect, expected", [
    (dict(gold_option="D"), {"expect_column_values_to_be_in_set(gold_option_listed)"}),
    (dict(gold_refs=[]), {"expect_column_values_to_be_between(gold_ref_count)"}),
    (dict(gold_refs=parse_legal_basis("art. 5")), {"expect_column_values_to_be_between(unresolved_ref_count)"}),
    (dict(options=[Option("A", "tak")]), {"expect_column_values_to_be_between(option_count)"}),
    (dict(options=None, gold_option=None), {"expect_column_values_to_be_between(option_count)",
                                            "expect_column_values_to_not_be_null(gold_option)"}),
    (dict(language="en"), {"expect_column_values_to_be_in_set(language)"}),
    (dict(question_id="x"), {"expect_column_values_to_match_regex(question_id)"}),
])
def test_suite_catches(defect: dict, expected: set[str]):
    assert failed([exam_q(1), exam_q(2, **defect), lay_q(0)]) == expected


def test_suite_catches_duplicates_and_short_tables():
    twice = [exam_q(1), exam_q(1, source="pl/exams/2031/notarialny.jsonl")]
    assert failed(twice) == {"expect_column_values_to_be_unique(text_hash)"}
    assert failed(dedup_questions(twice)) == set()
    assert failed([exam_q(1)], min_rows=2) == {"expect_table_row_count_to_be_between"}


def test_every_benchmark_expectation_has_a_reason():
    for e in benchmark_questions_suite(min_rows=1).expectations:
        assert (e.meta or {}).get("reason"), f"{e.expectation_type} has no reason"
