"""Official exam PDFs → questions and answer key (pipelines/benchmarks/exam_pdf.py).

Acceptance: all 150 questions and 150 answer-key rows of the 2025 bar/legal-adviser exam; where
the compiled JSONL has the same question, PDF and JSONL agree on text, options, answer and legal
basis; superscript articles in the answer key come out as ``^N`` (the JSONL has none of them).
Bad inputs are built from the real files by copying page subsets with pdfium.
"""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from pipelines.benchmarks.exam_jsonl import load_exam_jsonl
from pipelines.benchmarks.exam_pdf import (
    ExamPdfError,
    exam_pdf_pairs,
    load_exam_pdfs,
    parse_answer_key_pdf,
    parse_question_pdf,
)
from pipelines.benchmarks.records import normalize_text

STEM = "2025-09-27_adwokacki_radcowy"

# every answer-key row whose legal basis prints a superscript number, as it must come out
SUPERSCRIPT_ROWS = {
    29: "art. 75^1 § 1 k.c.",
    40: "art. 454^1 k.c.",
    69: "art. 117^3 § 2 k.p.c.",
    70: "art. 183^15 § 1 k.p.c.",
    71: "art. 191^1 § 4 k.p.c.",
    73: "art. 394^2 § 1^1 pkt 1 k.p.c.",
    76: "art. 458^6 § 1 k.p.c.",
    83: "art. 113^3 k.r. i o.",
    84: "art. 119^1 § 1 k.r. i o.",
    100: "art. 300^73 § 1 k.s.h.",
    102: "art. 23^1 § 4 k.p.",
    147: "art. 32^1 ust. 4 ustawy z dnia 6 lipca 1982 r. o radcach prawnych",
    148: "art. 33^10 ust. 3 ustawy z dnia 6 lipca 1982 r. o radcach prawnych",
    149: "art. 35^1 ust. 1 ustawy z dnia 6 lipca 1982 r. o radcach prawnych",
}


@pytest.fixture(scope="module")
def pdf_dir(sample_dir: Path) -> Path:
    return sample_dir / "pl" / "exam-pdfs"


@pytest.fixture(scope="module")
def questions(pdf_dir: Path):
    return parse_question_pdf(pdf_dir / f"{STEM}_questions.pdf")


@pytest.fixture(scope="module")
def answer_key(pdf_dir: Path):
    return parse_answer_key_pdf(pdf_dir / f"{STEM}_answers.pdf")


@pytest.fixture(scope="module")
def exam(pdf_dir: Path, sample_dir: Path):
    return load_exam_pdfs(pdf_dir / f"{STEM}_questions.pdf", pdf_dir / f"{STEM}_answers.pdf", sample_dir=sample_dir)


def subset(src: Path, pages: list[int], out: Path) -> Path:
    """A real PDF made of some pages of ``src``."""
    dst = pdfium.PdfDocument.new()
    source = pdfium.PdfDocument(str(src))
    dst.import_pages(source, pages)
    dst.save(str(out))
    dst.close()
    source.close()
    return out


# --------------------------------------------------------------------------- questions


def test_all_150_questions(questions):
    assert [q.number for q in questions] == list(range(1, 151))
    assert all(len(q.options) == 3 and [o.letter for o in q.options] == ["A", "B", "C"] for q in questions)
    assert questions[0].question == ("Zgodnie z Kodeksem karnym, czyn zabroniony uważa się za popełniony w "
                                     "miejscu, w którym:")
    assert questions[0].options[2].text == "zatrzymano sprawcę czynu zabronionego."
    assert questions[-1].options[2].text == "Rzecznika Praw Obywatelskich odwołuje Prezydent Rzeczypospolitej Polskiej."


def test_no_running_title_or_cover_text_leaks(questions):
    texts = [q.question for q in questions] + [o.text for q in questions for o in q.options]
    assert not [t for t in texts if "EGZAMIN WSTĘPNY" in t or "Pouczenie" in t or "Nr kodu" in t]
    assert not [t for t in texts if re.search(r"\s{2,}|^\s|\s$", t)]


# --------------------------------------------------------------------------- answer key


def test_all_150_answer_rows(answer_key):
    assert [r.number for r in answer_key] == list(range(1, 151))
    assert {r.answer for r in answer_key} == {"A", "B", "C"}
    assert answer_key[0].legal_basis == "art. 6 § 2 k.k."
    assert answer_key[5].legal_basis == "art. 32 i art. 39 pkt 1 k.k."


def test_multi_line_cells_are_joined(answer_key):
    by = {r.number: r for r in answer_key}
    # the number sits on a middle line of these cells; line-based reading would glue it into the text
    assert by[54].legal_basis == ("art. 19g ust. 1 ustawy z dnia 21 czerwca 2001 r. o ochronie praw lokatorów "
                                  "mieszkaniowym zasobie gminy i o zmianie Kodeksu cywilnego")
    assert by[57].legal_basis == ("art. 5 ust. 2 ustawy z dnia 22 maja 2003 r. o ubezpieczeniach obowiązkowych, "
                                  "Ubezpieczeniowym Funduszu Gwarancyjnym i Polskim Biurze Ubezpieczycieli "
                                  "Komunikacyjnych")
    assert by[150].legal_basis == ("art. 7 ust. 1 pkt 1 i ust. 3 ustawy z dnia 15 lipca 1987 r. o Rzeczniku "
                                   "Praw Obywatelskich")
    assert not [r for r in answer_key if re.search(r"\b\d{1,3}\. [ABC]\b", r.legal_basis)]


def test_superscripts_come_out_as_caret(answer_key):
    by = {r.number: r.legal_basis for r in answer_key}
    assert {n: by[n] for n in SUPERSCRIPT_ROWS} == SUPERSCRIPT_ROWS
    assert {n for n, basis in by.items() if "^" in basis} == set(SUPERSCRIPT_ROWS)
    # the plain-text misreads of the two Civil Code ones (751 and 4541 are other, real articles)
    assert not [b for b in by.values() if re.search(r"art\. (751 § 1|4541) k\.c\.", b)]


def test_superscript_refs_become_corpus_ids(exam):
    by = {int(q.question_id): q for q in exam}
    assert [r.unit_id for r in by[29].gold_refs] == ["pl:kc:art:75^1:par:1"]
    assert [r.unit_id for r in by[40].gold_refs] == ["pl:kc:art:454^1"]
    assert by[29].gold_refs[0].in_corpus and by[40].gold_refs[0].in_corpus
    assert [r.unit_id for r in by[73].gold_refs] == ["pl:kpc:art:394^2:par:1^1:pt:1"]
    assert by[73].gold_refs[0].in_corpus  # k.p.c. is a registry act since issue 14
    superscript = [r for q in exam for r in q.gold_refs if "^" in (r.unit_id or "")]
    assert len(superscript) == len(SUPERSCRIPT_ROWS)


# --------------------------------------------------------------------------- PDF vs JSONL


def test_pdf_agrees_with_jsonl(exam, sample_dir: Path):
    """Every JSONL question of the same exam is in the PDF under the same number, with the same
    (normalised) text, options, answer and legal basis."""
    jsonl = load_exam_jsonl(sample_dir / "pl" / "exams" / "2025" / "adwokacki_radcowy.jsonl", sample_dir=sample_dir)
    assert len(jsonl) == 69
    pdf = {q.question_id: q for q in exam}
    for j in jsonl:
        p = pdf[j.question_id]
        assert normalize_text(p.question) == normalize_text(j.question), j.question_id
        assert [(o.letter, normalize_text(o.text)) for o in p.options] == \
            [(o.letter, normalize_text(o.text)) for o in j.options], j.question_id
        assert p.gold_option == j.gold_option, j.question_id
        assert normalize_text(p.legal_basis) == normalize_text(j.legal_basis), j.question_id
        assert [r.unit_id for r in p.gold_refs] == [r.unit_id for r in j.gold_refs], j.question_id


def test_pdf_has_what_jsonl_dropped(exam, sample_dir: Path):
    jsonl_ids = {q.question_id for q in load_exam_jsonl(sample_dir / "pl" / "exams" / "2025" / "adwokacki_radcowy.jsonl")}
    extra = [q for q in exam if q.question_id not in jsonl_ids]
    assert len(extra) == 150 - 69
    assert {"29", "40"} <= {q.question_id for q in extra}  # the superscript Civil Code questions


def test_exam_metadata(exam):
    q = exam[0]
    assert (q.benchmark, q.source_format, q.language, q.year, q.exam, str(q.exam_date)) == (
        "pl_exams", "pdf", "pl", 2025, "adwokacki_radcowy", "2025-09-27")
    assert q.source == f"pl/exam-pdfs/{STEM}_questions.pdf"
    assert q.id == f"pl_exams:pl/exam-pdfs/{STEM}_questions.pdf#1"


def test_pairs(pdf_dir: Path):
    assert exam_pdf_pairs(pdf_dir) == [(pdf_dir / f"{STEM}_questions.pdf", pdf_dir / f"{STEM}_answers.pdf")]


# --------------------------------------------------------------------------- bad input


def test_not_an_exam(sample_dir: Path, tmp_path: Path):
    statute = subset(sample_dir / "pl" / "isap" / "D19640093Lj_2025-11-13.pdf", [0, 1, 2], tmp_path / "kc.pdf")
    with pytest.raises(ExamPdfError, match=r"kc\.pdf: no exam questions found"):
        parse_question_pdf(statute)
    with pytest.raises(ExamPdfError, match=r"kc\.pdf: no answer-key table found"):
        parse_answer_key_pdf(statute)


def test_swapped_files(pdf_dir: Path):
    with pytest.raises(ExamPdfError, match=r"_answers\.pdf: no exam questions found"):
        parse_question_pdf(pdf_dir / f"{STEM}_answers.pdf")
    with pytest.raises(ExamPdfError, match=r"_questions\.pdf: no answer-key table found"):
        parse_answer_key_pdf(pdf_dir / f"{STEM}_questions.pdf")


def test_not_a_pdf(tmp_path: Path):
    text = tmp_path / "notes.pdf"
    text.write_text("not a pdf")
    with pytest.raises(ExamPdfError, match=r"notes\.pdf: not a PDF"):
        parse_question_pdf(text)
    with pytest.raises(ExamPdfError, match=r"notes\.pdf: not a readable PDF"):
        parse_answer_key_pdf(text)
    with pytest.raises(ExamPdfError, match=r"missing\.pdf: file not found"):
        parse_answer_key_pdf(tmp_path / "missing.pdf")


def test_question_count_differs_from_answer_rows(pdf_dir: Path, tmp_path: Path):
    short_key = subset(pdf_dir / f"{STEM}_answers.pdf", [0], tmp_path / f"{STEM}_answers.pdf")
    with pytest.raises(ExamPdfError, match=r"_questions\.pdf has 150 questions but .*_answers\.pdf has 21 answer rows"):
        load_exam_pdfs(pdf_dir / f"{STEM}_questions.pdf", short_key)
    short_set = subset(pdf_dir / f"{STEM}_questions.pdf", [1, 2, 3], tmp_path / f"{STEM}_questions.pdf")
    with pytest.raises(ExamPdfError, match=r"has 15 questions but .* has 150 answer rows"):
        load_exam_pdfs(short_set, pdf_dir / f"{STEM}_answers.pdf")


def test_cover_count_is_checked(pdf_dir: Path, tmp_path: Path):
    first_pages = subset(pdf_dir / f"{STEM}_questions.pdf", [0, 1, 2], tmp_path / "q.pdf")
    with pytest.raises(ExamPdfError, match=r"q\.pdf: the cover page announces 150 questions but 10 were found"):
        parse_question_pdf(first_pages)


def test_missing_page_is_a_numbering_gap(pdf_dir: Path, tmp_path: Path):
    gap = subset(pdf_dir / f"{STEM}_questions.pdf", [1, 3, 4], tmp_path / "gap.pdf")
    with pytest.raises(ExamPdfError, match=r"gap\.pdf: page 2: question numbering jumps from 5 to 11"):
        parse_question_pdf(gap)
    key_gap = subset(pdf_dir / f"{STEM}_answers.pdf", [0, 2], tmp_path / "keygap.pdf")
    with pytest.raises(ExamPdfError, match=r"keygap\.pdf: page 2: answer-key row 46 follows row 21"):
        parse_answer_key_pdf(key_gap)


def test_unpaired_or_misnamed_files(tmp_path: Path, pdf_dir: Path):
    (tmp_path / f"{STEM}_questions.pdf").write_bytes((pdf_dir / f"{STEM}_questions.pdf").read_bytes())
    with pytest.raises(ExamPdfError, match=r"no matching answers PDF"):
        exam_pdf_pairs(tmp_path)
    (tmp_path / "exam.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(ExamPdfError, match=r"exam\.pdf: unexpected file name"):
        exam_pdf_pairs(tmp_path)
