"""Compiled exam JSONL → benchmark questions (pipelines/benchmarks/exam_jsonl.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.benchmarks.exam_jsonl import ExamJsonlError, load_exam_jsonl, load_exam_jsonl_dir
from pipelines.benchmarks.records import Option


def test_one_file(sample_dir: Path):
    qs = load_exam_jsonl(sample_dir / "pl" / "exams" / "2025" / "notarialny.jsonl", sample_dir=sample_dir)
    assert len(qs) == 54
    q = qs[0]
    assert (q.benchmark, q.source, q.source_format, q.question_id, q.language, q.year, q.exam) == (
        "pl_exams", "pl/exams/2025/notarialny.jsonl", "jsonl", "1", "pl", 2025, "notarialny")
    assert q.question == "Zgodnie z Kodeksem cywilnym, każdy człowiek ma zdolność prawną:"
    assert q.options == [Option("A", "od chwili ukończenia 18 lat,"), Option("B", "od chwili ukończenia 13 lat,"),
                         Option("C", "od chwili urodzenia.")]
    assert q.gold_option == "C"
    assert q.legal_basis == "art. 8 § 1 k.c."
    assert [r.unit_id for r in q.gold_refs] == ["pl:kc:art:8:par:1"]
    assert q.id == "pl_exams:pl/exams/2025/notarialny.jsonl#1"


def test_all_years(sample_dir: Path):
    qs = load_exam_jsonl_dir(sample_dir / "pl" / "exams", sample_dir=sample_dir)
    assert len(qs) == 2343
    years = [q.year for q in qs]
    assert years == sorted(years) and set(years) == set(range(2012, 2024)) | {2025}
    assert len({q.id for q in qs}) == len(qs)
    assert all(q.gold_refs and q.gold_option in {o.letter for o in q.options} for q in qs)


def write(tmp_path: Path, *records: object) -> Path:
    d = tmp_path / "2030"
    d.mkdir(exist_ok=True)
    f = d / "notarialny.jsonl"
    f.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    return f


GOOD = {"id": 3, "question": "Pytanie?", "choices": {"A": "tak", "B": "nie"}, "answer": "B",
        "legal_basis": "art. 5 k.c."}


def test_year_and_exam_fall_back_to_the_path(tmp_path: Path):
    (q,) = load_exam_jsonl(write(tmp_path, GOOD), sample_dir=tmp_path)
    assert (q.year, q.exam, q.source) == (2030, "notarialny", "2030/notarialny.jsonl")


@pytest.mark.parametrize("bad, reason", [
    ("{not json", r"notarialny\.jsonl:2: not valid JSON"),
    ({**GOOD, "legal_basis": ""}, r"notarialny\.jsonl:2: missing legal_basis"),
    ({**GOOD, "answer": "C"}, r"notarialny\.jsonl:2: answer 'C' is not one of the choices"),
    ({**GOOD, "choices": []}, r"notarialny\.jsonl:2: 'choices' must be a non-empty object"),
])
def test_bad_line_names_file_and_line(tmp_path: Path, bad: object, reason: str):
    with pytest.raises(ExamJsonlError, match=reason):
        load_exam_jsonl(write(tmp_path, GOOD, bad))


def test_missing_dir(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="exam JSONL directory not found"):
        load_exam_jsonl_dir(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no <year>/"):
        load_exam_jsonl_dir(tmp_path)
