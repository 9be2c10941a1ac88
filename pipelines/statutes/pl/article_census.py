"""An independent census of the articles in an ISAP unified-text PDF: which numbers, in what order.

Why it exists: :mod:`pipelines.statutes.pl.parser` reads articles through the character-level
layout reader :mod:`pipelines.pdf_lines`. A bug shared by the two (a superscript read as a digit,
a head taken for body text, a page region misfiled) would be invisible to tests that only look at
the parser's output. This module derives the article set a second way, importing neither of them
(only the standard library and ``pypdfium2``), so that ``bench/article_sets.py`` and
``tests/pipelines/statutes/pl/test_article_census.py`` can compare the two lists. It is a check,
not a second parser: it finds article heads and nothing else (no text, no paragraphs, no
hierarchy).

How it reads a page:

* The text is pdfium's plain text (``get_text_range``), split at pdfium's line breaks. pdfium
  also breaks the line *after a superscript run* (the baseline changes back), so ``Art. 18³ᵃ.``
  comes out as ``"Art. 183a\\r\\n. § 1. …"`` and a superscript in running text becomes a line of
  its own. Consecutive pieces on the same baseline (within :data:`SAME_LINE_DY`) and running on to
  the right are therefore joined back into one visual line.
* Plain text cannot tell ``18¹`` from ``181``: both are ``"181"``. Each character's font size and
  origin (``FPDFText_GetFontSize``, ``FPDFText_GetCharOrigin``) decide: in these PDFs body text is
  12 pt, superscripts ~8 pt raised ~4.6 pt (footnotes 10 pt with 6.5 pt references). A run of
  smaller, raised characters right after a digit is part of the number and is written ``^run``
  (``18^3a``, ``109^1``, ``1153^10``); any other small raised run (``cywilny1)``,
  ``Art. 1059.5``) is a footnote reference and is dropped.
* The running header sits above the wide rule at the top of every page and the footnotes below the
  short rule (~144 pt) at the bottom; both are found among the page's path objects. Lines there
  are ignored, as are lines whose ``Art`` is smaller than the page's body size (footnotes, margin
  notes, structural notes).
* A head is a visual line that *starts* with ``Art. N.`` (optionally ``<Art.`` / ``[Art.``, the
  ISAP marks of text entering / leaving force). Cross-references (``art. 5``, lower case, or mid-
  line) never match.
* Repealed ranges: a head ``Art. 266–280.`` and a structural note ``(zawierający art. 397–404 –
  uchylony)`` / ``(zawierający art. 295¹ i art. 295² – uchylony)`` are expanded to each number
  (:func:`expand_range`) and kept apart from the printed heads (``repealed``).
* The numbering run (printed heads plus expanded ranges, in document order) is checked for gaps:
  each number must be a natural successor of the previous one (``N+1``, ``N`` + next letter,
  ``N^k+1`` …, see :func:`successors`). A skipped number is reported as a :class:`Gap`, never
  guessed. A number printed twice (``[Art. 560²`` … followed by ``<Art. 560²`` …: the version
  leaving force and the one replacing it) is listed once in ``numbers`` and reported in
  ``duplicates``.

What it does not handle (by design or not yet seen in the sample files):

* Interior superscripts of a range: ``art. 1089–1095¹`` expands to 1089 … 1095, 1095^1; a
  repealed 1091^1 inside it cannot be known and is not listed.
* Numbers written other than ``digits[letters][^digits[letters]]`` (Roman numerals, ``Art. 1a¹``
  where the letter is itself raised before the digit).
* A footnote reference printed as a superscript directly after an article number with no ``)``
  (it would be read as a superscript of the number; the gap check would then flag it).
* Two-column layouts, scanned PDFs (no text layer), heads split over two lines.
* Whether an article is in force: ``(uchylony)`` heads are counted like any other head.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw

SAME_LINE_DY = 6.0  # pieces whose baselines differ by less belong to one visual line (sup rise ~4.6)
SUPERSCRIPT_RATIO = 0.85  # smaller than this × the line's body size …
SUPERSCRIPT_RISE = 1.5  # … and raised by more than this (pt) is a superscript
BODY_RATIO = 0.9  # a head's "Art" must be at least this × the page's body size

NUMBER = r"\d+[a-z]*(?:\^\d+[a-z]*)?"
HEAD_RE = re.compile(rf"^(?P<mark>[<\[])?Art\.\s*(?P<num>{NUMBER})(?:\s*[–-]\s*(?P<last>{NUMBER}))?\.")
NOTE_RE = re.compile(r"\(zawieraj\w*\s+(?P<body>art\..*?)\s*[–-]\s*(?:uchylon|pominięt|skreślon)\w*\s*\)")
NOTE_ITEM_RE = re.compile(rf"(?P<num>{NUMBER})(?:\s*[–-]\s*(?P<last>{NUMBER}))?")
NUMBER_RE = re.compile(r"^(\d+)([a-z]*)(?:\^(\d+)([a-z]*))?$")
LABEL_RE = re.compile(r"^(?:KSIĘGA|CZĘŚĆ|TYTUŁ|DZIAŁ|Rozdział|Oddział)\s+\S")
HEADER_RE = re.compile(r"^©\s*Kancelaria Sejmu")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# ----------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class Head:
    number: str  # as the project writes it: 18^3a
    page: int  # 1-based
    mark: str  # "", "<" (text entering force) or "[" (text leaving force)
    bold: bool  # the "A" of "Art." is set bold (every head in the sample files is)
    text: str  # the visual line, first 80 characters


@dataclass(frozen=True)
class RepealedRange:
    first: str
    last: str
    numbers: tuple[str, ...]  # first … last expanded (see expand_range)
    page: int
    source: str  # "head" (Art. 266–280.) or "note" ((zawierający art. 397–404 – uchylony))
    text: str


@dataclass(frozen=True)
class Gap:
    after: str  # "" when the run does not start at 1
    before: str
    page: int  # where ``before`` is
    kind: str = "gap"  # "gap": numbers skipped; "order": ``before`` does not sort after ``after``
    # structural units printed between the two numbers as repealed without naming their articles
    # ("DZIAŁ JEDENASTY (uchylony)", "Rozdział IIa (uchylony)"): the likely home of the missing
    # numbers, shown to the reader; the gap is still reported
    notes: tuple[str, ...] = ()


@dataclass
class ArticleCensus:
    path: Path
    pages: int
    heads: list[Head]  # every printed head, document order (a duplicate printed twice is here twice)
    numbers: list[str]  # printed heads, document order, each number once
    repealed: list[RepealedRange]
    gaps: list[Gap]
    duplicates: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)  # numbers + expanded ranges, document order

    def pages_of(self, number: str) -> list[int]:
        return [h.page for h in self.heads if h.number == number]


# ----------------------------------------------------------------------------------------------
# numbers


def split_number(number: str) -> tuple[int, str, int | None, str]:
    """``18^3a`` → ``(18, "", 3, "a")``; ``10ba`` → ``(10, "ba", None, "")``."""
    m = NUMBER_RE.match(number)
    if not m:
        raise ValueError(f"not an article number: {number!r}")
    return int(m.group(1)), m.group(2), int(m.group(3)) if m.group(3) else None, m.group(4) or ""


def join_number(base: int, letters: str = "", sup: int | None = None, sup_letters: str = "") -> str:
    return f"{base}{letters}" + (f"^{sup}{sup_letters}" if sup is not None else "")


def sort_key(number: str) -> tuple[int, str, int, str]:
    base, letters, sup, sup_letters = split_number(number)
    return base, letters, -1 if sup is None else sup, sup_letters


def _next_letters(letters: str) -> set[str]:
    """Letter suffixes that may follow ``letters``: ``""`` → a; ``c`` → ca, d; ``ca`` → caa, cb, d."""
    if not letters:
        return {"a"}
    out = {letters + "a"}
    for k, ch in enumerate(letters):
        if ch < "z":
            out.add(letters[:k] + chr(ord(ch) + 1))
    return out


def successors(number: str) -> set[str]:
    """The numbers that may directly follow ``number`` without skipping one: the next base, the next
    letter, the next superscript, the next superscript letter (a run may end at any level)."""
    base, letters, sup, sup_letters = split_number(number)
    out = {join_number(base + 1)}
    out |= {join_number(base, lt) for lt in _next_letters(letters)}
    out.add(join_number(base, letters, 1 if sup is None else sup + 1))
    if sup is not None:
        out |= {join_number(base, letters, sup, lt) for lt in _next_letters(sup_letters)}
    return out


def _letter_range(first: str, last: str) -> list[str] | None:
    if len(first) <= 1 and len(last) == 1 and (first or "a") <= last:
        return [""] * (not first) + [chr(c) for c in range(ord(first or "a"), ord(last) + 1)]
    return None


def expand_range(first: str, last: str) -> tuple[str, ...]:
    """Every number from ``first`` to ``last``, both included.

    ``266``–``280`` → 266 … 280; ``479^1``–``479^27`` → 479^1 … 479^27; ``10a``–``10c`` → 10a,
    10b, 10c; ``284``–``290^1`` → 284 … 290, 290^1 (superscripts of the numbers *inside* a range are
    unknowable and not listed). An unusual pair (letters on both ends with different bases) gives
    just the two ends."""
    b1, l1, s1, sl1 = split_number(first)
    b2, l2, s2, sl2 = split_number(last)
    if first == last:
        return (first,)
    if sort_key(last) < sort_key(first):
        return first, last
    if b1 == b2 and l1 == l2:
        if s1 == s2:  # letters of one superscript (or of no superscript)
            lets = _letter_range(sl1, sl2)
            return tuple(join_number(b1, l1, s1, lt) for lt in lets) if lets else (first, last)
        if sl1 or sl2:
            return first, last
        return tuple(join_number(b1, l1, s) for s in range(s1 or 0, s2 + 1) if s or s1 is None)
    if b1 == b2 and s1 is None and s2 is None and not sl1 and not sl2:
        lets = _letter_range(l1, l2)
        return tuple(join_number(b1, lt) for lt in lets) if lets else (first, last)
    if b1 == b2 or l2 or sl2:
        return first, last
    out = [first] + [join_number(b) for b in range(b1 + 1, b2 + 1)]
    if s2 is not None:
        out += [join_number(b2, "", s) for s in range(1, s2 + 1)]
    return tuple(out)


def find_gaps(sequence: list[tuple[str, int]], notes: dict[int, tuple[str, ...]] | None = None) -> list[Gap]:
    """(number, page) in document order → the places where the run skips or goes backwards.
    ``notes``: index in ``sequence`` → repealed-unit lines printed just before that number."""
    notes = notes or {}
    gaps: list[Gap] = []
    prev = ""
    for i, (number, page) in enumerate(sequence):
        if not prev:
            if number != "1":
                gaps.append(Gap("", number, page, "gap", notes.get(i, ())))
        elif sort_key(number) <= sort_key(prev):
            gaps.append(Gap(prev, number, page, "order", notes.get(i, ())))
        elif number not in successors(prev):
            gaps.append(Gap(prev, number, page, "gap", notes.get(i, ())))
        prev = number
    return gaps


# ----------------------------------------------------------------------------------------------
# reading


@dataclass
class _Char:
    ch: str
    size: float  # 0 for pdfium's generated characters
    x: float
    y: float
    bold: bool


def _rules(page) -> tuple[float | None, float | None]:
    """(y of the header rule, y of the footnote rule) from the page's thin horizontal paths: the
    header rule spans the text column near the top; the footnote rule is short (~144 pt)."""
    width, height = page.get_size()
    header = footnote = None
    for obj in page.get_objects(filter=[pdfium_raw.FPDF_PAGEOBJ_PATH], max_depth=3):
        left, bottom, right, top = obj.get_bounds()
        if top - bottom > 2:
            continue
        if right - left > 0.5 * width and bottom > 0.85 * height:
            header = bottom if header is None else min(header, bottom)
        elif 0.1 * width < right - left < 0.4 * width and bottom < 0.85 * height:
            footnote = top if footnote is None else max(footnote, top)
    return header, footnote


def _page_chars(textpage) -> list[list[_Char]]:
    """pdfium's text of one page as pieces split at its line breaks, each char with size and origin."""
    n = textpage.count_chars()
    text = textpage.get_text_range(0, n) if n else ""
    same = len(text) == n
    x, y = ctypes.c_double(), ctypes.c_double()
    pieces: list[list[_Char]] = [[]]
    for j in range(n):
        ch = text[j] if same else chr(pdfium_raw.FPDFText_GetUnicode(textpage, j))
        if ch in "\r\n":
            if pieces[-1]:
                pieces.append([])
            continue
        generated = pdfium_raw.FPDFText_IsGenerated(textpage, j)
        pdfium_raw.FPDFText_GetCharOrigin(textpage, j, x, y)
        if generated:
            if ch == " ":
                pieces[-1].append(_Char(" ", 0.0, x.value, y.value, False))
            continue
        size = pdfium_raw.FPDFText_GetFontSize(textpage, j)
        bold = pdfium_raw.FPDFText_GetFontWeight(textpage, j) >= 600
        pieces[-1].append(_Char(ch, size, x.value, y.value, bold))
    return [p for p in pieces if any(c.size > 0 for c in p)]


def _baseline(piece: list[_Char]) -> tuple[float, float]:
    """(body size, baseline y) of a piece: the y of its largest characters."""
    size = max(c.size for c in piece)
    ys = sorted(c.y for c in piece if c.size >= size * SUPERSCRIPT_RATIO)
    return size, ys[len(ys) // 2]


def _visual_lines(pieces: list[list[_Char]]) -> list[list[_Char]]:
    """Join pieces that pdfium split at a superscript back into the visual line they belong to."""
    lines: list[list[_Char]] = []
    for piece in pieces:
        if lines:
            prev = lines[-1]
            _, prev_y = _baseline(prev)
            _, y = _baseline(piece)
            last_x = max(c.x for c in prev if c.size > 0)
            first_x = min(c.x for c in piece if c.size > 0)
            if abs(y - prev_y) < SAME_LINE_DY and first_x >= last_x - 1.0:
                prev.extend(piece)
                continue
        lines.append(list(piece))
    return lines


def render(line: list[_Char]) -> str:
    """A visual line's text: a superscript run right after a digit becomes ``^run``; other
    superscript runs (footnote references) are dropped."""
    size, base_y = _baseline(line)
    out: list[str] = []
    i = 0
    while i < len(line):
        c = line[i]
        if not (0 < c.size < size * SUPERSCRIPT_RATIO and c.y - base_y > SUPERSCRIPT_RISE):
            out.append(c.ch)
            i += 1
            continue
        j = i
        while j < len(line) and 0 < line[j].size < size * SUPERSCRIPT_RATIO and line[j].y - base_y > SUPERSCRIPT_RISE:
            j += 1
        raw_run = "".join(ch.ch for ch in line[i:j])
        run = raw_run.strip()
        before = "".join(out)
        if run and not run.endswith(")") and before[-1:].isdigit() and re.fullmatch(r"\d+[a-z]*", run):
            out.append("^" + run)
        # keep words apart: "art. 295¹ i art. 295²", "art. 191¹ w toku", "pracy1) określi"
        if j < len(line) and (raw_run[-1:].isspace() or line[j].ch.isalnum() or line[j].ch == "§"):
            out.append(" ")
        i = j
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _page_body_size(lines: list[list[_Char]]) -> float:
    counts: dict[float, int] = {}
    for line in lines:
        for c in line:
            if c.size > 0 and not c.ch.isspace():
                counts[round(c.size, 1)] = counts.get(round(c.size, 1), 0) + 1
    return max(counts, key=counts.get) if counts else 0.0


def match_head(text: str) -> re.Match | None:
    """The head regex on one rendered visual line (``Art. 18^3a.``, ``Art. 266–280.``, ``<Art. 5.``)."""
    return HEAD_RE.match(text)


def note_numbers(text: str) -> list[tuple[str, str]]:
    """``(zawierający art. 397–404 – uchylony)`` → ``[("397", "404")]``; ``art. 295^1 i art. 295^2``
    → two single numbers (as ``(n, n)``)."""
    out = []
    for note in NOTE_RE.finditer(text):
        for item in NOTE_ITEM_RE.finditer(note.group("body")):
            out.append((item.group("num"), item.group("last") or item.group("num")))
    return out


def article_numbers(pdf_path: Path | str) -> ArticleCensus:
    """The census of one ISAP unified-text PDF (see the module docstring)."""
    path = Path(pdf_path)
    doc = pdfium.PdfDocument(str(path))
    heads: list[Head] = []
    repealed: list[RepealedRange] = []
    events: list[tuple[str, int, tuple[str, ...]]] = []  # (number, page, unit notes before it)
    unit_notes: list[str] = []  # repealed structural units seen since the last number
    try:
        n_pages = len(doc)
        for index in range(n_pages):
            page_no = index + 1
            page = doc[index]
            header_y, footnote_y = _rules(page)
            textpage = page.get_textpage()
            lines = _visual_lines(_page_chars(textpage))
            body_size = _page_body_size(lines)
            note_buffer = ""  # a structural note may run over two visual lines
            label = ""  # the structural label line just read (its "(uchylony)" may follow)
            for line in lines:
                _, y = _baseline(line)
                if header_y is not None and y > header_y:
                    continue
                if footnote_y is not None and y < footnote_y:
                    continue
                text = render(line)
                if HEADER_RE.match(text) or DATE_RE.match(text):
                    continue
                printed = [c for c in line if c.size > 0 and not c.ch.isspace()]
                head = match_head(text)
                if head and printed[0].size >= BODY_RATIO * body_size:
                    number, last = head.group("num"), head.group("last")
                    if last:
                        numbers = expand_range(number, last)
                        repealed.append(RepealedRange(number, last, numbers, page_no, "head", text[:80]))
                    else:
                        a = printed[1] if head.group("mark") else printed[0]
                        heads.append(Head(number, page_no, head.group("mark") or "", a.bold, text[:80]))
                        numbers = (number,)
                    events.extend((n, page_no, tuple(unit_notes)) for n in numbers)
                    unit_notes, note_buffer, label = [], "", ""
                    continue
                if LABEL_RE.match(text):
                    label = text
                    if "uchylon" in text:
                        unit_notes.append(text)
                    continue
                if note_buffer or text.startswith("("):
                    note_buffer = f"{note_buffer} {text}".strip()
                    found = note_numbers(note_buffer)
                    if found:
                        for a_num, b_num in found:
                            numbers = expand_range(a_num, b_num)
                            repealed.append(RepealedRange(a_num, b_num, numbers, page_no, "note", note_buffer[:80]))
                            events.extend((n, page_no, tuple(unit_notes)) for n in numbers)
                            unit_notes = []
                        note_buffer = ""
                    elif note_buffer.endswith(")") or len(note_buffer) > 200:
                        if label and "uchylon" in note_buffer:
                            unit_notes.append(f"{label} {note_buffer}")
                        note_buffer = ""
                else:
                    note_buffer = ""
                label = ""
            textpage.close()
            page.close()
    finally:
        doc.close()

    numbers: list[str] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    for h in heads:
        if h.number in seen:
            duplicates.append(h.number)
        else:
            seen.add(h.number)
            numbers.append(h.number)
    covered: list[tuple[str, int]] = []
    seen_covered: set[str] = set()
    notes: dict[int, tuple[str, ...]] = {}
    for number, page_no, before in events:
        if number in seen_covered:
            continue
        seen_covered.add(number)
        if before:
            notes[len(covered)] = before
        covered.append((number, page_no))
    return ArticleCensus(path, n_pages, heads, numbers, repealed, find_gaps(covered, notes), duplicates,
                         [n for n, _ in covered])
