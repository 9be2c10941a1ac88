"""Character-level PDF reading: pages → typed lines (body, footnote, header, footer).

Why character level: ISAP prints superscript article numbers (``Art. 22¹``) in a smaller, raised
font, so plain text extraction yields ``Art. 221.``. Footnotes and the running header/footer are
also told apart by size and position, not by text. Why pypdfium2 and not pdfplumber: pdfplumber
(pdfminer) needs ~0.18 s per page for ``page.chars`` on these files, pdfium ~0.02 s; the 242-page
Civil Code must parse in ≤ 10 s. ``pdfplumber`` remains available as a cross-check engine
(:func:`read_chars_pdfplumber`), and tests assert both engines give the same lines.
"""

from __future__ import annotations

import ctypes
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

SUPERSCRIPT_RATIO = 0.85  # a char smaller than this × the line's body size and raised is a superscript
SUPERSCRIPT_MIN_RISE = 1.5  # points above the line's baseline
NEW_LINE_DY = 6.0  # a baseline jump larger than this starts a new line (superscripts rise ~4 pt)
BODY_MIN_SIZE = 11.0  # ISAP body text is 12 pt; footnotes 10 pt, header 9 pt, superscripts 8 pt
# A gap wider than this × the font size between two glyphs of one line is a word space, also when
# the text layer has no space character there. Measured on the seven ISAP unified texts (3.0 M
# pairs of neighbouring glyphs on one baseline with no space character between them, gap = next
# origin − (previous origin + advance), pdfium's loose char box): the letters of a word sit at most
# 0.04 em apart in body text (0.5 pt at 12 pt), 0.09 em in the 10 pt footnotes; spaces pdfium
# lost are 0.13–0.19 em ("rejonowy|miejsca" 1.53 pt, "rejonowy|może" 1.72, "W|razie" 1.87,
# "§ 2,|sąd" 2.28), after a footnote reference 0.25 em and more. Between 0.1 and 0.13 em lies only
# the letter-spaced title "U S T AWA" of page 1 (A|W 0.117 em; pdfium spaces the other letters),
# now "U S T A W A"; the footnote list's "30)dyrektywy" (0.08–0.09 em) stays as it was.
WORD_GAP_EM = 0.1
# The footnote separator: a thin horizontal rule, 144 pt (2 in) long, at the left of the text
# column above the footnotes of a page. Measured on the seven ISAP unified texts: every page with
# footnotes has exactly one (113 pages), no page without footnotes has one; the only other rule
# is the running header's (397–411 pt, above the text). Its length band leaves that rule out.
FOOTNOTE_RULE_MAX_HEIGHT = 2.0
FOOTNOTE_RULE_LENGTH = (0.1, 0.4)  # × the page width (144 pt of 595)
HEADER_ZONE = 70.0  # the running header (and its rule) sits within this distance of the page top

SOFT_HYPHEN = "\u00ad"
SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
# letters of superscript numbers (k.p. ``Art. 18³ᵃ``, ``DZIAŁ CZTERNASTYᴬ``): Unicode modifier letters;
# q and the capitals C F Q S X Y Z have none, a number using them is shown as ``^…``
SUPERSCRIPT_LETTERS = dict(zip("abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW",
                               "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ"))


class PdfReadError(ValueError):
    """The file is not a readable PDF (truncated, not a PDF, no text layer)."""


@dataclass(slots=True)
class Char:
    text: str
    size: float
    x: float
    y: float  # baseline origin, PDF coordinates (0 = page bottom)
    bold: bool
    x1: float | None = None  # right edge of the glyph's advance (origin + advance width), when known


@dataclass(slots=True)
class Line:
    page: int  # 1-based page number
    y: float  # baseline of the line's body characters
    x0: float
    size: float  # dominant font size
    bold: bool  # the line's first word is bold (article heads, headings)
    zone: str  # body | note | margin | footnote | header | footer
    text: str  # superscripts as ``^N``; footnote references removed
    footnote_refs: list[str] = field(default_factory=list)
    starts_with_ref: bool = False  # the line opens with a superscript ``N)``: a footnote's first line


@dataclass(slots=True)
class PageChars:
    number: int
    width: float
    height: float
    chars: list[Char]
    # top of the footnote separator rule (PDF coordinates), None when the page has none
    footnote_rule: float | None = None


def footnote_rule(width: float, height: float, rules: Iterable[tuple[float, float, float, float]]) -> float | None:
    """The top of the page's footnote separator among its path boxes ``(left, bottom, right, top)``:
    thin, horizontal, 10–40 % of the page width long, below the running header (the header's rule
    spans the column near the top). Not only near the bottom: a page filled by a footnote continued
    from the one before has its rule right under the header (k.p. 2025 p. 2: 749 pt of 842). The
    highest one when there are several."""
    found = None
    lo, hi = FOOTNOTE_RULE_LENGTH
    for left, bottom, right, top in rules:
        if top - bottom <= FOOTNOTE_RULE_MAX_HEIGHT and lo * width < right - left < hi * width \
                and bottom < height - HEADER_ZONE:
            found = top if found is None else max(found, top)
    return found


def _path_boxes_pdfium(page) -> list[tuple[float, float, float, float]]:
    """Bounding boxes of the page's top-level path objects (rules are drawn as filled paths)."""
    import pypdfium2.raw as raw

    boxes = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for k in range(raw.FPDFPage_CountObjects(page.raw)):
        obj = raw.FPDFPage_GetObject(page.raw, k)
        if raw.FPDFPageObj_GetType(obj) != raw.FPDF_PAGEOBJ_PATH:
            continue
        if raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            boxes.append((left.value, bottom.value, right.value, top.value))
    return boxes


# ----------------------------------------------------------------------------------------------
# engines


def _open_pdfium(path: Path):
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:  # truncated, encrypted, not a PDF
        raise PdfReadError(f"{path}: not a readable PDF ({exc})") from exc


def page_count(path: Path) -> int:
    doc = _open_pdfium(path)
    try:
        return len(doc)
    finally:
        doc.close()


def is_word_gap(prev: Char, nxt: Char) -> bool:
    """Is there a word space between two neighbouring glyphs that the text layer does not spell?

    True when ``nxt`` stands on ``prev``'s line, more than :data:`WORD_GAP_EM` of its size to the
    right of ``prev``'s advance. Never before a superscript (a smaller, raised glyph): a footnote
    reference is dropped from the text and a superscript number must stay glued to its base
    (``Art. 109^1``); after one it counts, so the word that follows a reference keeps its space
    (k.p. art. 173 "Socjalnej⁸⁾ określi", where the only separator is the gap after ``8)``)."""
    if prev.x1 is None or prev.size <= 0 or nxt.size <= 0:
        return False
    return (abs(nxt.y - prev.y) <= NEW_LINE_DY and nxt.size >= prev.size * SUPERSCRIPT_RATIO
            and nxt.x - prev.x1 > WORD_GAP_EM * nxt.size)


def read_chars_pdfium(path: Path, pages: Sequence[int]) -> list[PageChars]:
    """Chars of the given 0-based pages via pdfium's text page (fast path).

    Word spaces: pdfium's text page has most of the spaces the PDF spells and adds ("generates")
    its own where it sees a gap, but it drops some space characters, and then two words are
    glued: the space after a raised footnote reference, which pdfium replaces by a generated line
    break (dropped here like every generated line break; k.p. 2025 art. 220 "Socjalnej⁹⁾ oraz"),
    and a space set in another size or overlapping its neighbours (k.p.c. 2023 art. 205
    "rejonowy może": an 8 pt space between 12 pt words; pdfplumber sees both). What stays is the
    gap, so a space is added wherever :func:`is_word_gap` finds one between two glyphs with no
    space between them."""
    import pypdfium2.raw as raw

    doc = _open_pdfium(path)
    out: list[PageChars] = []
    x = ctypes.c_double()
    y = ctypes.c_double()
    box = raw.FS_RECTF()
    try:
        for i in pages:
            page = doc[i]
            width, height = page.get_size()
            tp = page.get_textpage()
            n = tp.count_chars()
            text = tp.get_text_range(0, n) if n else ""
            chars: list[Char] = []
            prev: Char | None = None  # the last glyph, unless a space followed it
            # get_text_range may drop/merge chars; fall back to per-char unicode when lengths differ
            per_char = len(text) != n
            for j in range(n):
                if raw.FPDFText_IsGenerated(tp, j):
                    ch = text[j] if not per_char else chr(raw.FPDFText_GetUnicode(tp, j))
                    if ch == " ":  # keep generated word gaps, drop generated line breaks
                        raw.FPDFText_GetCharOrigin(tp, j, x, y)
                        chars.append(Char(" ", 0.0, x.value, y.value, False))
                        prev = None
                    continue
                ch = chr(raw.FPDFText_GetUnicode(tp, j)) if per_char else text[j]
                if ch in "\r\n\x00":
                    continue
                if ch in "\ufffe\ufffd\u00ad\u0002":  # pdfium's soft hyphen (a word broken at line end)
                    ch = SOFT_HYPHEN
                raw.FPDFText_GetCharOrigin(tp, j, x, y)
                raw.FPDFText_GetLooseCharBox(tp, j, box)
                size = raw.FPDFText_GetFontSize(tp, j)
                weight = raw.FPDFText_GetFontWeight(tp, j)
                c = Char(ch, size, x.value, y.value, weight >= 600, box.right)
                if ch.isspace():
                    prev = None
                else:
                    if prev is not None and is_word_gap(prev, c):
                        chars.append(Char(" ", 0.0, prev.x1, c.y, False))
                    prev = c
                chars.append(c)
            tp.close()
            rule = footnote_rule(width, height, _path_boxes_pdfium(page))
            page.close()
            out.append(PageChars(i + 1, width, height, chars, rule))
    finally:
        doc.close()
    return out


def read_chars_pdfplumber(path: Path, pages: Sequence[int]) -> list[PageChars]:
    """Same contract as :func:`read_chars_pdfium` via pdfplumber (slow; used as a cross-check)."""
    import pdfplumber

    out: list[PageChars] = []
    with pdfplumber.open(str(path)) as pdf:
        for i in pages:
            page = pdf.pages[i]
            chars = []
            prev: Char | None = None
            for c in page.chars:
                # pdfplumber has no generated spaces: insert one wherever is_word_gap sees one
                y = page.height - c["bottom"] + (c["size"] * 0.216)  # bottom→baseline (Times descent)
                ch = Char(c["text"], float(c["size"]), float(c["x0"]), y, "Bold" in c["fontname"], float(c["x1"]))
                if ch.text.isspace():
                    prev = None
                else:
                    if prev is not None and is_word_gap(prev, ch):
                        chars.append(Char(" ", 0.0, prev.x1, y, False))
                    prev = ch
                chars.append(ch)
            h = float(page.height)
            rule = footnote_rule(float(page.width), h, [(float(o["x0"]), h - float(o["bottom"]), float(o["x1"]),
                                                         h - float(o["top"])) for o in page.rects + page.lines])
            out.append(PageChars(i + 1, float(page.width), h, chars, rule))
    return out


# ----------------------------------------------------------------------------------------------
# chars → lines


def _segments(chars: list[Char]) -> list[list[Char]]:
    """Split the char stream into line segments where the baseline jumps."""
    segs: list[list[Char]] = []
    cur: list[Char] = []
    ref_y = None
    for c in chars:
        if ref_y is None or abs(c.y - ref_y) > NEW_LINE_DY:
            if cur:
                segs.append(cur)
            cur = [c]
            ref_y = c.y
            continue
        cur.append(c)
        if c.size > 0 and c.size >= max((d.size for d in cur), default=0):
            ref_y = c.y  # follow the body baseline, not a leading superscript
    if cur:
        segs.append(cur)
    return segs


def _render(seg: list[Char]) -> tuple[str, float, float, bool, list[str], bool]:
    """Text of one line: superscript digit runs become ``^N``; ``N)`` superscripts are footnote refs."""
    body_size = max((c.size for c in seg), default=0.0)
    body = [c for c in seg if c.size >= body_size * SUPERSCRIPT_RATIO]
    base_y = sorted(c.y for c in body)[len(body) // 2] if body else 0.0
    parts: list[str] = []
    refs: list[str] = []
    starts_with_ref = False
    i = 0
    n = len(seg)
    while i < n:
        c = seg[i]
        is_sup = 0 < c.size < body_size * SUPERSCRIPT_RATIO and c.y - base_y > SUPERSCRIPT_MIN_RISE
        if not is_sup:
            parts.append(c.text)
            i += 1
            continue
        j = i
        run = []
        while j < n and (
            (0 < seg[j].size < body_size * SUPERSCRIPT_RATIO and seg[j].y - base_y > SUPERSCRIPT_MIN_RISE)
            or (seg[j].size == 0 and j + 1 < n and seg[j + 1].size < body_size * SUPERSCRIPT_RATIO and seg[j + 1].y - base_y > SUPERSCRIPT_MIN_RISE)
        ):
            run.append(seg[j].text)
            j += 1
        sup = "".join(run).strip()
        if not sup:  # a space set in a smaller size (pdfplumber reads k.p.c. 2023 p. 83 "rejonowy może" so)
            parts.append(" ")
            i = j
            continue
        before = "".join(parts)
        # numbering (Art. 109^1, § 2^1, Rozdział I^1) sits right after a digit or Roman numeral,
        # with no gap; anything else — "cywilny1)", "Art. 1059.5" — is a footnote reference
        # (``Art. 18³ᵃ`` → ``18^3a``: the run may end in letters). A run of letters alone is numbering
        # too when it follows a word (k.p. ``DZIAŁ CZTERNASTYᴬ``): ISAP numbers its footnotes, so
        # a letter is never a footnote reference
        last = before[-1:]
        is_number = bool(sup) and not sup.endswith(")") and last != "" and (
            last.isdigit() or last in "IVXLC" or (sup.isalpha() and last.isalpha()))
        if sup and not is_number:
            if not before.strip():
                starts_with_ref = True
            refs.append(sup.rstrip(")"))
        elif sup:
            parts.append("^" + sup.replace(" ", ""))
            nxt = seg[j].text if j < n else ""
            if nxt.isalnum() or nxt == "§":
                parts.append(" ")
        i = j
    text = re.sub(r"\s+", " ", "".join(parts)).strip()
    # a soft hyphen only matters at the end of a line (the word continues on the next one)
    text = text.replace(SOFT_HYPHEN, "") + (SOFT_HYPHEN if text.endswith(SOFT_HYPHEN) else "")
    x0 = min((c.x for c in seg if c.size > 0), default=0.0)
    # the ISAP change markers are set in regular weight before a bold head (``[Art. 479⁴⁵.`` in
    # k.p.c., ``<Art. 255b.`` in k.k.): they are not part of the first word
    first_word = [c for c in seg if c.size > 0 and c.text not in "<["][:3]
    bold = bool(first_word) and all(c.bold for c in first_word)
    return text, body_size, base_y, bold, refs, starts_with_ref


HEADER_RE = re.compile(r"^©\s*Kancelaria Sejmu\s+s\.\s*\d+\s*/\s*\d+$")
FOOTER_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def page_lines(pc: PageChars) -> list[Line]:
    """Typed, reading-ordered lines of one page.

    Zones: the running header and date footer are matched by text and position; small print in
    the right margin (x > 75 % of the width) is an ISAP margin note (announced changes); small print
    in the text column below the footnote separator rule (:func:`footnote_rule`), or from the first
    line that opens with a superscript ``N)`` downwards, is the footnote block; other small print
    in the column is a structural note (e.g. ``(zawierający art. 397–404 – uchylony)``) and stays
    with the text. The rule matters for a footnote continued from the previous page: it opens
    without its ``N)`` (the k.p. footnote 1, the list of EU directives, runs over pages 1–3; its
    rest under art. 3 / art. 5 on page 3 was read as their text).
    """
    lines: list[Line] = []
    for seg in _segments(pc.chars):
        text, size, y, bold, refs, starts = _render(seg)
        if not text:
            continue
        x0 = min((c.x for c in seg if c.size > 0), default=0.0)
        lines.append(Line(pc.number, y, x0, size, bold, "body", text, refs, starts))
    # Merge pieces written separately on the same baseline, then order top → bottom, left → right.
    lines.sort(key=lambda ln: (-round(ln.y), ln.x0))
    merged: list[Line] = []
    for ln in lines:
        prev = merged[-1] if merged else None
        if prev and abs(prev.y - ln.y) < 1.0 and (prev.size < BODY_MIN_SIZE) == (ln.size < BODY_MIN_SIZE) \
                and (ln.x0 > pc.width * 0.75) == (prev.x0 > pc.width * 0.75):
            prev.text = f"{prev.text} {ln.text}"
            prev.footnote_refs.extend(ln.footnote_refs)
            continue
        merged.append(ln)
    in_footnotes = False
    for ln in merged:
        if ln.y > pc.height - HEADER_ZONE and HEADER_RE.match(ln.text):
            ln.zone = "header"
        elif ln.y < 80 and FOOTER_RE.match(ln.text):
            ln.zone = "footer"
        elif ln.size < BODY_MIN_SIZE and ln.x0 > pc.width * 0.75:
            ln.zone = "margin"
        elif ln.size < BODY_MIN_SIZE:
            below_rule = pc.footnote_rule is not None and ln.y < pc.footnote_rule
            in_footnotes = in_footnotes or ln.starts_with_ref or below_rule
            ln.zone = "footnote" if in_footnotes else "note"
        elif in_footnotes:
            ln.zone = "footnote"  # body-size text inside a footnote block (rare)
    return merged


def _read_lines_chunk(args: tuple[str, list[int], str]) -> list[list[Line]]:
    path, pages, engine = args
    reader = read_chars_pdfium if engine == "pdfium" else read_chars_pdfplumber
    return [page_lines(pc) for pc in reader(Path(path), pages)]


def read_lines(path: Path, *, workers: int = 2, engine: str = "pdfium",
               pages: Iterable[int] | None = None) -> list[list[Line]]:
    """All pages' lines, reading pages in ``workers`` processes (pdfium is single-threaded)."""
    path = Path(path)
    if not path.exists():
        raise PdfReadError(f"{path}: file not found")
    head = path.read_bytes()[:1024]
    if b"%PDF-" not in head:
        raise PdfReadError(f"{path}: not a PDF (no %PDF- header)")
    total = page_count(path)
    if total == 0:
        raise PdfReadError(f"{path}: PDF has no pages")
    wanted = list(range(total)) if pages is None else list(pages)
    workers = max(1, min(workers, os.cpu_count() or 1, len(wanted) // 20 or 1))
    if workers == 1:
        return _read_lines_chunk((str(path), wanted, engine))
    size = -(-len(wanted) // workers)
    chunks = [wanted[k:k + size] for k in range(0, len(wanted), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(_read_lines_chunk, [(str(path), c, engine) for c in chunks]))
    return [page for part in parts for page in part]


def display_number(number: str) -> str:
    """``22^1`` → ``22¹``, ``18^3a`` → ``18³ᵃ`` (how the printed text shows it)."""
    base, _, sup = number.partition("^")
    if not sup:
        return base
    if any(c.isalpha() and c not in SUPERSCRIPT_LETTERS for c in sup):
        return number
    return base + "".join(SUPERSCRIPT_LETTERS.get(c, c) for c in sup.translate(SUPERSCRIPT_DIGITS))
