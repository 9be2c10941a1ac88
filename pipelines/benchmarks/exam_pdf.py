"""Official exam PDFs (Ministry of Justice) → benchmark questions.

Two files per exam, named ``<YYYY-MM-DD>_<exam>_questions.pdf`` and ``…_answers.pdf``:

* the question set: numbered questions (``12. Zgodnie z …``) each followed by options
  ``A.`` / ``B.`` / ``C.``; a cover page of numbered instructions comes first;
* the answer key: a ruled table *question number | correct answer | legal basis*.

Why character level (via :mod:`pipelines.pdf_lines`) and not plain text: the answer key prints
superscript article numbers (``art. 75¹ § 1 k.c.``) as a smaller raised ``1``; plain extraction
gives ``art. 751 § 1`` — a different, real article. ``pdf_lines`` renders them ``75^1``.

Why the answer key is read by table cell: a legal basis often wraps over two to four lines while
the row's number and answer sit vertically centred, on the baseline of a middle line — line-based
reading glues ``54. A`` into the middle of the basis text. The table's ruling (thin filled
rectangles) gives exact cell boxes, so each char is placed in its cell before lines are built.

Everything that could silently shift a gold answer raises :class:`ExamPdfError` naming the file:
a PDF without questions or without the ruled table, gaps in the numbering, a question without
options, an answer letter that is not one of the question's options, a question count different
from the answer-key rows (or from the count the cover page announces).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Iterable
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipelines.benchmarks.legal_basis import parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option, relative_source
from pipelines.pdf_lines import Line, PageChars, PdfReadError, page_count, page_lines, read_chars_pdfium, read_lines
from pipelines.statutes.pl.parser import Dehyphenator

BENCHMARK = "pl_exams"
FILE_RE = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})_(?P<exam>.+)_(?P<kind>questions|answers)\.pdf$")
QUESTION_RE = re.compile(r"^(?P<num>\d{1,3})\.\s+(?P<rest>\S.*)$")
OPTION_RE = re.compile(r"^(?P<letter>[A-D])\.\s+(?P<rest>\S.*)$")
ANSWER_RE = re.compile(r"^[A-D]$")
DECLARED_COUNT_RE = re.compile(r"składa\s+się\s+ze?\s+(\d+)\s+pytań", re.I)
LETTERS = "ABCD"
MIN_OPTIONS = 2
RUNNING_SHARE = 0.4  # a line (digits ignored) on at least this share of pages is a running header/footer
QUESTION_INDENT_TOL = 6.0  # points: question numbers start at one indent (71–74 pt here), options deeper
RULE_THICKNESS = 2.0  # table ruling is drawn as filled rectangles this thin (≈0.5 pt here)


class ExamPdfError(ValueError):
    """The PDF is not an exam question set / answer key, or the two do not fit together."""


@dataclass(frozen=True)
class PdfQuestion:
    number: int
    question: str
    options: tuple[Option, ...]
    page: int


@dataclass(frozen=True)
class AnswerKeyRow:
    number: int
    answer: str
    legal_basis: str  # superscripts as ^N, lines joined
    page: int


# ----------------------------------------------------------------------------------------------
# question set


def _read(path: Path) -> list[list[Line]]:
    try:
        return read_lines(Path(path), workers=1)
    except PdfReadError as exc:
        raise ExamPdfError(str(exc)) from exc


def _running_key(text: str) -> str:
    """A line with its page number removed (left on even pages, right on odd ones)."""
    return re.sub(r"\d+", "#", re.sub(r"^\d+\s+|\s+\d+$", "", text.strip()))


def _running_keys(pages: list[list[Line]]) -> set[str]:
    """Lines repeated at the top or bottom of many pages (page number ignored): the running title
    and page numbers. Only a page's first and last line are candidates, so an option text that
    recurs across questions ("nieważna,") is never mistaken for one."""
    if len(pages) < 2:
        return set()
    per_page = Counter(key for page in pages if page
                       for key in {_running_key(page[0].text), _running_key(page[-1].text)})
    need = max(2, math.ceil(RUNNING_SHARE * len(pages)))
    return {k for k, n in per_page.items() if n >= need}


def _join(dehyph: Dehyphenator, lines: list[str]) -> str:
    text = ""
    for ln in lines:
        text = dehyph.join(text, ln)
    return text.strip()


def parse_question_pdf(path: Path) -> list[PdfQuestion]:
    """Numbered questions with their options, in order.

    A question starts at a line ``N. …`` where N is the next number; the lines up to option ``A.``
    are its text; each option runs until the next letter or question. The cover page's numbered
    instructions have no options: a ``1.`` seen while the current item has none restarts the count.
    """
    path = Path(path)
    pages = _read(path)
    running = _running_keys(pages)
    stream = [ln for page in pages for i, ln in enumerate(page)
              if not (i in (0, len(page) - 1) and _running_key(ln.text) in running)
              and not re.fullmatch(r"\d+", ln.text.strip())]
    dehyph = Dehyphenator([ln.text for ln in stream])

    items: list[dict] = []  # {"number", "page", "text": [lines], "options": [[letter, [lines]]]}
    cur: dict | None = None
    for ln in stream:
        text = ln.text.strip()
        q = QUESTION_RE.match(text)
        if q:
            num = int(q.group("num"))
            expected = items[-1]["number"] + 1 if items else 1
            if num == 1 and not any(it["options"] for it in items):
                items = []  # the cover page's numbered instructions were not questions
                expected = 1
            if num == expected and (cur is None or len(cur["options"]) >= MIN_OPTIONS or num == 1):
                cur = {"number": num, "page": ln.page, "x0": ln.x0, "text": [q.group("rest")], "options": []}
                items.append(cur)
                continue
            if num != expected and cur is not None and cur["options"] \
                    and abs(ln.x0 - items[0]["x0"]) <= QUESTION_INDENT_TOL:
                # numbered like a question, at the questions' indent, but not the next number
                raise ExamPdfError(f"{path}: page {ln.page}: question numbering jumps from {expected - 1} to "
                                   f"{num} — a page is missing or the numbering was misread")
        if cur is None:
            continue
        o = OPTION_RE.match(text)
        next_letter = LETTERS[len(cur["options"])] if len(cur["options"]) < len(LETTERS) else None
        if o and o.group("letter") == next_letter:
            cur["options"].append([next_letter, [o.group("rest")]])
        elif cur["options"]:
            cur["options"][-1][1].append(text)
        else:
            cur["text"].append(text)

    questions = [it for it in items if it["options"]]
    if not questions:
        raise ExamPdfError(f"{path}: no exam questions found (expected numbered questions with options "
                           "'A.', 'B.', … — is this an exam question set?)")
    for it in items:
        if len(it["options"]) < MIN_OPTIONS:
            raise ExamPdfError(f"{path}: question {it['number']} (page {it['page']}) has "
                               f"{len(it['options'])} option(s); expected at least {MIN_OPTIONS}")
    out = [PdfQuestion(it["number"], _join(dehyph, it["text"]),
                       tuple(Option(letter, _join(dehyph, lines)) for letter, lines in it["options"]), it["page"])
           for it in items]
    cover = DECLARED_COUNT_RE.search(" ".join(ln.text for ln in pages[0])) if pages else None
    declared = int(cover.group(1)) if cover else None
    if declared is not None and declared != len(out):
        raise ExamPdfError(f"{path}: the cover page announces {declared} questions but {len(out)} were found "
                           f"(last: {out[-1].number}, page {out[-1].page})")
    return out


# ----------------------------------------------------------------------------------------------
# answer key


def _rules(path: Path) -> dict[int, tuple[list[float], list[float]]]:
    """Per 0-based page: (x of vertical rules, y of horizontal rules), sorted and de-duplicated."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    out: dict[int, tuple[list[float], list[float]]] = {}
    doc = pdfium.PdfDocument(str(path))
    try:
        for i in range(len(doc)):
            page = doc[i]
            xs: set[float] = set()
            ys: set[float] = set()
            for obj in page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH]):
                x0, y0, x1, y1 = obj.get_bounds()
                if y1 - y0 <= RULE_THICKNESS and x1 - x0 >= 10:
                    ys.add(round((y0 + y1) / 2, 0))
                elif x1 - x0 <= RULE_THICKNESS and y1 - y0 >= 5:
                    xs.add(round((x0 + x1) / 2, 0))
            page.close()
            out[i] = (_dedup(xs), _dedup(ys))
    finally:
        doc.close()
    return out


def _dedup(values: set[float], tol: float = 1.5) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def _cell_lines(chars: list, pc: PageChars) -> list[str]:
    """Lines of one table cell, built by pdf_lines from the cell's chars alone (superscripts → ^N)."""
    return [ln.text for ln in page_lines(PageChars(pc.number, pc.width, pc.height, chars))]


def _check_readable(path: Path) -> None:
    if not path.is_file():
        raise ExamPdfError(f"{path}: file not found")
    try:
        if page_count(path) == 0:
            raise ExamPdfError(f"{path}: PDF has no pages")
    except PdfReadError as exc:
        raise ExamPdfError(str(exc)) from exc


def parse_answer_key_pdf(path: Path) -> list[AnswerKeyRow]:
    """Rows of the ruled answer-key table: number, answer letter, legal basis (``^N`` superscripts)."""
    path = Path(path)
    _check_readable(path)
    rules = {i: r for i, r in _rules(path).items() if len(r[0]) >= 4 and len(r[1]) >= 2}
    pages = read_chars_pdfium(path, list(rules))  # only pages with a ruled grid
    cells: list[tuple[int, list[list[str]]]] = []  # (page, [lines per cell]) per table row, document order
    for pc in pages:
        xs, ys = rules[pc.number - 1]
        grid: dict[tuple[int, int], list] = {}
        for c in pc.chars:
            col = next((k for k in range(len(xs) - 1) if xs[k] <= c.x < xs[k + 1]), None)
            row = next((k for k in range(len(ys) - 1) if ys[k] <= c.y < ys[k + 1]), None)
            if col is not None and row is not None:
                grid.setdefault((row, col), []).append(c)
        for row in sorted({r for r, _ in grid}, reverse=True):  # PDF y grows upwards: top row first
            lines = [_cell_lines(grid.get((row, col), []), pc) for col in range(len(xs) - 1)]
            if any(lines):
                cells.append((pc.number, lines))
    if not cells:
        raise ExamPdfError(f"{path}: no answer-key table found (expected a ruled table: question number | "
                           "answer | legal basis)")
    widths = Counter(len(t) for _, t in cells)
    if widths.most_common(1)[0][0] != 3:
        raise ExamPdfError(f"{path}: the answer-key table has {widths.most_common(1)[0][0]} columns, expected 3 "
                           "(question number | answer | legal basis)")
    dehyph = Dehyphenator([ln for _, row in cells for cell in row for ln in cell])
    rows: list[AnswerKeyRow] = []
    for page, cell_lines in cells:
        texts = [_join(dehyph, lines) for lines in cell_lines]
        num = re.fullmatch(r"(\d{1,3})\.?", texts[0])
        if not num:
            if rows:  # a header row is fine before the first answer, not in the middle of the table
                raise ExamPdfError(f"{path}: page {page}: table row {texts!r} has no question number")
            continue
        number, answer, basis = int(num.group(1)), texts[1].strip(), re.sub(r"\s+", " ", texts[2]).strip()
        expected = rows[-1].number + 1 if rows else 1
        if number != expected:
            raise ExamPdfError(f"{path}: page {page}: answer-key row {number} follows row {expected - 1}; "
                               "rows must be numbered 1, 2, 3, … without gaps")
        if not ANSWER_RE.match(answer):
            raise ExamPdfError(f"{path}: page {page}: answer-key row {number} has answer {answer!r}, "
                               "expected one letter A–D")
        if not basis:
            raise ExamPdfError(f"{path}: page {page}: answer-key row {number} has no legal basis")
        rows.append(AnswerKeyRow(number, answer, basis, page))
    if not rows:
        raise ExamPdfError(f"{path}: the table has no numbered answer rows — is this an answer key?")
    return rows


# ----------------------------------------------------------------------------------------------
# both files → benchmark questions


def exam_pdf_pairs(pdf_dir: Path) -> list[tuple[Path, Path]]:
    """(questions, answers) per exam in ``pdf_dir``, by date; a file without its partner is an error."""
    found: dict[tuple[str, str], dict[str, Path]] = {}
    for f in sorted(Path(pdf_dir).glob("*.pdf")):
        m = FILE_RE.match(f.name)
        if not m:
            raise ExamPdfError(f"{f}: unexpected file name; expected <YYYY-MM-DD>_<exam>_questions.pdf "
                               "or …_answers.pdf")
        found.setdefault((m.group("date"), m.group("exam")), {})[m.group("kind")] = f
    pairs = []
    for key, kinds in sorted(found.items()):
        missing = {"questions", "answers"} - set(kinds)
        if missing:
            have = next(iter(kinds.values()))
            raise ExamPdfError(f"{have}: no matching {missing.pop()} PDF for exam {key[1]} of {key[0]}")
        pairs.append((kinds["questions"], kinds["answers"]))
    return pairs


def load_exam_pdfs(questions_pdf: Path, answers_pdf: Path, *, sample_dir: Path | None = None,
                   corpus_acts: Iterable[str] | None = None) -> list[BenchmarkQuestion]:
    """One exam's questions joined with its answer key by question number.

    ``source`` is the question PDF's path relative to ``sample_dir``; ``year``, ``exam`` and
    ``exam_date`` come from the file name.
    """
    questions_pdf, answers_pdf = Path(questions_pdf), Path(answers_pdf)
    m = FILE_RE.match(questions_pdf.name)
    if not m:
        raise ExamPdfError(f"{questions_pdf}: unexpected file name; expected <YYYY-MM-DD>_<exam>_questions.pdf")
    date = dt.date.fromisoformat(m.group("date"))
    questions = parse_question_pdf(questions_pdf)
    key = parse_answer_key_pdf(answers_pdf)
    if len(questions) != len(key):
        raise ExamPdfError(f"{questions_pdf} has {len(questions)} questions but {answers_pdf} has {len(key)} "
                           "answer rows: the files do not belong together or one was misread")
    source = relative_source(questions_pdf, sample_dir)
    out = []
    for q, row in zip(questions, key):
        if q.number != row.number:  # both are checked gap-free from 1, so this cannot happen
            raise ExamPdfError(f"{questions_pdf}: question {q.number} paired with answer row {row.number}")
        if row.answer not in {o.letter for o in q.options}:
            raise ExamPdfError(f"{answers_pdf}: row {row.number} answers {row.answer} but question {q.number} in "
                               f"{questions_pdf} has options {', '.join(o.letter for o in q.options)}")
        out.append(BenchmarkQuestion(
            benchmark=BENCHMARK, source=source, source_format="pdf", question_id=str(q.number),
            language="pl", question=q.question, legal_basis=row.legal_basis,
            gold_refs=parse_legal_basis(row.legal_basis, corpus_acts=corpus_acts),
            options=list(q.options), gold_option=row.answer,
            year=date.year, exam=m.group("exam"), exam_date=date,
        ))
    return out
