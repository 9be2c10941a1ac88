"""The official BGB PDF from gesetze-im-internet.de → the German node/unit schema.

Layout (``BJNR001950896_bgb_gii_*.pdf``, DejaVu Sans Condensed): every page carries the running
header "Ein Service des Bundesministeriums der Justiz … www.gesetze-im-internet.de" (8 pt) and the
footer "- Seite N von M -"; page 1 holds title (15 pt bold), Vollzitat and Stand; then the
*Inhaltsübersicht* — centred structure headings, no §§ — which must not produce units; then the
body: structure headings as a bold 12 pt label line ("Titel 3") plus bold heading line(s) at the left
margin, § headings as bold 10 pt line(s) ("§ 573b Teilkündigung des Vermieters", wrapped titles
continue in bold), text 10 pt. Absätze start "(1) " at the margin; Nummern "1." and Buchstaben
"a)" are followed by two no-break spaces and indented by ~32 pt per level, their wrapped lines hang
under the text. Amendment notes come in blocks opened by a bold "Fußnote" line, official notes as a
6.9 pt "*)" marker plus "Amtlicher Hinweis:"; both run to the next heading and go to ``footnotes``.

Reading is line-level, not character-level: pdfium's text of a page (one call) is split at its
line breaks and only the first character of each line is asked for position, size and font (bold
from the font name — these PDFs report weight 0). That keeps the 483 pages at ~1.5 s of pdfium
time, read in ``workers`` processes. A hyphen at a line end is returned by pdfium as U+FFFE with the
lines merged; gesetze-im-internet does not hyphenate words, so it is a real hyphen: kept
("Immobiliar-Verbraucherdarlehensvertrag", "öffentlich-rechtlich"), or "Erklärungs- oder" before a
conjunction; the document's own vocabulary decides the rare other cases.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import re
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.statutes.de.model import DeNode, GermanAct, GermanStatute, GermanStatuteError, Section, german_acts
from pipelines.statutes.de.structure import (
    CONJUNCTIONS, REPEALED_RE, Block, StructureHeading, StructureStack, build_units, parse_section_heading,
    parse_structure_heading, range_sections, section_id, strip_repealed,
)
from pipelines.pdf_lines import PdfReadError

PARSER_VERSION = "de-gii-3"  # de-gii-2: content_hash over normalised text; de-gii-3: suspended-compound
# hyphen at a line end ("und -⏎restrukturierungsgesetz"), NODES order of structure nodes after §§ ranges,
# official notes of structure headings kept (DeNode.notes)

HEADER_RE = re.compile(r"^(Ein Service des Bundesministeriums der Justiz|Justiz\s*\S\s*www\.gesetze-im-internet\.de)")
FOOTER_RE = re.compile(r"^-\s*Seite\s+\d+\s+von\s+\d+\s*-$")
LABEL_RE = re.compile(r"^(Buch|Teil|Abschnitt|Unterabschnitt|Titel|Untertitel|Kapitel|Unterkapitel)\s+\d+[a-z]?$")
NBSP = "\u00a0"
HYPHEN_MARK = "\ufffe"  # pdfium: hyphen at a line end, lines merged
# a line ending in "<word>- und -": the second half of a suspended compound ("-restrukturierungsgesetz")
# starts on the next line; a lone "-" after other words is a dash ("Zeitraum - Jahr, … -⏎bestimmt")
SUSPENDED_TAIL_RE = re.compile(r"\w-\s+(?:und|oder|bis|sowie|bzw\.)\s+-$")

LEFT_MARGIN = 60.0  # x below this: the text column's left edge (48.5 pt)
TEXT_X = 48.5
MARKER_X = 50.9
INDENT = 32.4  # one list level
BLOCK_GAP = 15.0  # baseline distance above which a new block starts (line pitch 12 pt, blocks ≥ 17 pt)
STRUCTURE_SIZE = 11.5  # structure headings 12 pt; § headings and text 10 pt
MARKER_SIZE = 8.0  # "*)" footnote markers are 6.9 pt


@dataclass(slots=True)
class GiiLine:
    page: int  # 1-based
    y: float  # baseline of the first character (PDF coordinates, 0 = bottom)
    x0: float
    size: float
    bold: bool
    text: str  # as extracted; no-break spaces kept (they mark list items)
    zone: str = "body"  # body | header | footer


# ----------------------------------------------------------------------------------------------
# reading


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise PdfReadError(f"{path}: file not found")
    with path.open("rb") as fh:
        if b"%PDF-" not in fh.read(1024):
            raise PdfReadError(f"{path}: not a PDF (no %PDF- header)")


def _open(path: Path):
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise PdfReadError(f"{path}: not a readable PDF ({exc})") from exc


def _read_chunk(args: tuple[str, list[int]]) -> list[list[GiiLine]]:
    import pypdfium2.raw as raw

    path, pages = args
    doc = _open(Path(path))
    buf = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    x = ctypes.c_double()
    y = ctypes.c_double()
    out: list[list[GiiLine]] = []
    try:
        for i in pages:
            page = doc[i]
            height = page.get_height()
            tp = page.get_textpage()
            n = tp.count_chars()
            text = tp.get_text_range(0, n) if n else ""
            if len(text) != n:  # keep indices aligned with pdfium's char indices
                text = "".join(chr(raw.FPDFText_GetUnicode(tp, j)) for j in range(n))
            lines: list[GiiLine] = []
            for m in re.finditer(r"[^\r\n]+", text):
                s = m.group()
                lead = len(s) - len(s.lstrip(" \t"))
                if lead == len(s):
                    continue
                j = m.start() + lead
                raw.FPDFText_GetCharOrigin(tp, j, x, y)
                raw.FPDFText_GetFontInfo(tp, j, buf, len(buf), ctypes.byref(flags))
                size = raw.FPDFText_GetFontSize(tp, j)
                font = buf.value.decode("latin-1", "replace")
                ln = GiiLine(i + 1, round(y.value, 2), round(x.value, 2), round(size, 2),
                             "Bold" in font or "bold" in font, s[lead:].rstrip())
                if ln.y > height - 40 and ln.size < 9 and HEADER_RE.match(ln.text):
                    ln.zone = "header"
                elif ln.y < 40 and FOOTER_RE.match(ln.text.strip()):
                    ln.zone = "footer"
                lines.append(ln)
            tp.close()
            page.close()
            out.append(lines)
    finally:
        doc.close()
    return out


def read_gii_lines(path: Path, *, workers: int = 2, pages: list[int] | None = None) -> list[list[GiiLine]]:
    """Typed lines of every page (0-based ``pages`` to restrict), read in ``workers`` processes."""
    path = Path(path)
    _check_file(path)
    doc = _open(path)
    total = len(doc)
    doc.close()
    if total == 0:
        raise PdfReadError(f"{path}: PDF has no pages")
    wanted = list(range(total)) if pages is None else list(pages)
    workers = max(1, min(workers, os.cpu_count() or 1, len(wanted) // 40 or 1))
    if workers == 1:
        return _read_chunk((str(path), wanted))
    size = -(-len(wanted) // workers)
    chunks = [wanted[k:k + size] for k in range(0, len(wanted), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(_read_chunk, [(str(path), c) for c in chunks]))
    return [p for part in parts for p in part]


# ----------------------------------------------------------------------------------------------
# identity and front matter


def _check_identity(path: Path, act: GermanAct, page1: list[GiiLine]) -> str:
    body = [ln for ln in page1 if ln.zone == "body"]
    if not page1:
        raise GermanStatuteError(f"{path}: the first page has no text layer (empty or scanned PDF)")
    if not any(ln.zone == "header" for ln in page1):
        first = body[0].text if body else page1[0].text
        raise GermanStatuteError(
            f"{path}: not a gesetze-im-internet.de PDF: no 'www.gesetze-im-internet.de' running header on "
            f"page 1 (first line reads {first[:80]!r})")
    title_size = max((ln.size for ln in body), default=0)
    title = " ".join(ln.text for ln in body if ln.size == title_size)
    if act.title.lower() not in title.lower() or f"({act.abbreviation})".lower() not in title.lower():
        raise GermanStatuteError(f"{path}: not the {act.title} ({act.abbreviation}): the title on page 1 reads {title!r}")
    return title


_DATE_RE = re.compile(r"\bv\.\s*(\d{1,2})\.(\d{1,2})\.(\d{4})")


def _version(path: Path, front: list[GiiLine]) -> dt.date | None:
    m = re.search(r"(\d{4}-\d{2}-\d{2})\.pdf$", path.name)
    if m:
        try:
            return dt.date.fromisoformat(m.group(1))
        except ValueError:
            pass
    stand = " ".join(ln.text for ln in front)
    dates = []
    for d, mo, y in _DATE_RE.findall(stand):
        try:
            dates.append(dt.date(int(y), int(mo), int(d)))
        except ValueError:
            pass
    return max(dates) if dates else None


# ----------------------------------------------------------------------------------------------
# text assembly


class Joiner:
    """Joins wrapped lines; decides what a hyphen at a line end (U+FFFE or '-') means."""

    def __init__(self, texts: list[str]):
        big = "\n".join(texts).replace(HYPHEN_MARK, " ").lower()
        self.words: Counter[str] = Counter(re.findall(r"[\w-]+", big))

    def _hyphen(self, head: str, tail: str) -> str:
        word = re.match(r"[\w.]+", tail)
        nxt = word.group() if word else ""
        if nxt.lower() in CONJUNCTIONS or tail[:1] in (",", ";"):
            return f"{head}- {tail}" if tail[:1] not in (",", ";") else f"{head}-{tail}"
        h = re.search(r"(\w+)$", head)
        if h and nxt and nxt[:1].islower():
            joined, hyphened = (h.group(1) + nxt).lower(), f"{h.group(1)}-{nxt}".lower()
            if self.words[joined] > self.words[hyphened]:
                return head + tail
        return f"{head}-{tail}"

    def fix(self, text: str) -> str:
        """U+FFFE inside a (merged) line."""
        while HYPHEN_MARK in text:
            head, _, tail = text.partition(HYPHEN_MARK)
            text = self._hyphen(head, tail.lstrip())
        return text

    def join(self, left: str, right: str) -> str:
        if not left:
            return right
        if left.endswith(HYPHEN_MARK) or (left.endswith("-") and left[-2:-1].isalpha()):
            return self._hyphen(left[:-1], right)
        if SUSPENDED_TAIL_RE.search(left) and right[:1].islower():
            # "Unternehmensstabilisierungs- und -⏎restrukturierungsgesetz": the leading hyphen of a
            # compound's second half wrapped alone; a space there would split the word (§ 204)
            return left + right
        return f"{left} {right}"


def _clean(text: str) -> str:
    return re.sub(r"[ \u00a0]+", " ", text).strip()


def _pdf_blocks(lines: list[GiiLine], joiner: Joiner) -> list[Block]:
    """Body lines of one § → blocks, by markers, indentation and vertical gaps."""
    blocks: list[Block] = []
    content_level = -1  # content level of the open block
    prev: GiiLine | None = None
    for ln in lines:
        t = joiner.fix(ln.text.strip(" "))
        gap = prev is None or prev.page != ln.page or prev.y - ln.y > BLOCK_GAP
        same_page_gap = prev is not None and prev.page == ln.page and prev.y - ln.y > BLOCK_GAP
        m_abs = re.match(r"^\((?P<num>\d+[a-z]?)\)(?:\s|(?=\())", t)  # "(4)(weggefallen)" too
        m_nr = re.match(rf"^(?P<num>\d+[a-z]?)\.{NBSP}", t)
        m_lit = re.match(rf"^(?P<num>[a-z]{{1,2}})\){NBSP}", t)
        prev = ln
        if m_abs and ln.x0 < LEFT_MARGIN and gap:
            blocks.append(Block("abs", m_abs.group("num"), _clean(t), 0))
            content_level = 0
            continue
        if m_nr or m_lit:
            nesting = max(0, round((ln.x0 - MARKER_X) / INDENT))
            m = m_nr or m_lit
            blocks.append(Block("nr" if m_nr else "lit", m.group("num"), _clean(t), nesting))
            content_level = nesting + 1
            continue
        level = max(0, round((ln.x0 - TEXT_X) / INDENT))
        if blocks and level == content_level and not same_page_gap:
            blocks[-1].text = joiner.join(blocks[-1].text, _clean(t))
            continue
        blocks.append(Block("text", "", _clean(t), level))
        content_level = level
    return blocks


# ----------------------------------------------------------------------------------------------
# parsing


@dataclass
class _Pending:
    """A § heading (or a §§ range) with the lines that follow it."""
    heading: GiiLine
    kind: str
    number: str
    op: str | None
    last: str | None
    title: str
    path: list[DeNode]
    lines: list[GiiLine] = field(default_factory=list)
    notes: list[list[str]] = field(default_factory=list)
    title_open: bool = True


def _own_note(note: list[str], cur: _Pending | None, struct: DeNode | None,
              struct_notes: dict[str, list[list[str]]]) -> None:
    """A note block belongs to the open § or, before the first § under a structure heading, to
    that heading (an "Amtlicher Hinweis" on a Titel); otherwise (front matter) to nobody."""
    if cur is not None:
        cur.notes.append(note)
    elif struct is not None:
        struct_notes.setdefault(struct.id, []).append(note)


def parse_gii_pdf(path: Path, *, act: GermanAct | None = None, version: dt.date | None = None,
                  workers: int = 2) -> GermanStatute:
    """Parse a gesetze-im-internet.de PDF of ``act`` (the registry's BGB by default).

    ``version`` defaults to the date in the file name (``…_2024-11-28.pdf``: the text state
    downloaded), else to the latest "G v. …" date of the Stand line. Raises
    :class:`~pipelines.pdf_lines.PdfReadError` for unreadable files and
    :class:`~pipelines.statutes.de.model.GermanStatuteError` for a PDF of something else; both
    name the file and the reason."""
    t0 = time.perf_counter()
    act = act if act is not None else german_acts()["bgb"]
    path = Path(path)
    first = read_gii_lines(path, workers=1, pages=[0])[0]
    title = _check_identity(path, act, first)
    pages = read_gii_lines(path, workers=workers)
    stream = [ln for page in pages for ln in page if ln.zone == "body"]
    joiner = Joiner([ln.text for ln in stream])

    stack = StructureStack(act.act_id)
    pendings: list[_Pending] = []
    front: list[GiiLine] = []
    mode = "front"  # front | toc | body
    cur: _Pending | None = None
    note: list[str] | None = None  # the open footnote block
    struct_open: DeNode | None = None  # structure node whose heading lines may follow
    struct_last: DeNode | None = None  # structure node after which no § heading came yet (owns notes)
    struct_notes: dict[str, list[list[str]]] = {}  # structure node id → its note blocks
    unit_word = "§" if act.unit == "§" else "Art"
    for i, ln in enumerate(stream):
        text = joiner.fix(ln.text.strip(" " + NBSP))
        at_margin = ln.x0 < LEFT_MARGIN
        is_label = ln.bold and at_margin and ln.size >= STRUCTURE_SIZE and LABEL_RE.match(text)
        is_section = ln.bold and at_margin and ln.size < STRUCTURE_SIZE and text.startswith(unit_word) \
            and parse_section_heading(text) is not None
        if mode != "body":
            if text == "Inhaltsübersicht" and at_margin:
                mode = "toc"
                continue
            if not (is_label or is_section):
                if mode == "front":
                    front.append(ln)
                continue
            mode = "body"
        if ln.size < MARKER_SIZE:  # "*)" footnote marker
            nxt = stream[i + 1].text.strip(" " + NBSP) if i + 1 < len(stream) else ""
            if text.startswith("*)") and nxt.startswith("Amtlicher Hinweis"):
                note = []
                _own_note(note, cur, struct_last, struct_notes)
            continue
        if is_label:
            sh = parse_structure_heading(text)
            struct_open = struct_last = stack.push(sh, page=ln.page, articles_before=len(pendings))
            cur, note = None, None
            continue
        if ln.bold and at_margin and ln.size >= STRUCTURE_SIZE:
            if struct_open is not None:  # heading line(s) under the label
                struct_open.heading = f"{struct_open.heading} {text}".strip()
                struct_open.status = "repealed" if REPEALED_RE.match(struct_open.heading) else struct_open.status
            else:  # an unlabelled heading
                struct_open = struct_last = stack.push(StructureHeading("group", "", "", text), page=ln.page,
                                                       articles_before=len(pendings))
            cur, note = None, None
            continue
        struct_open = None
        if is_section:
            kind, number, op, last, stitle = parse_section_heading(text)
            cur = _Pending(ln, kind, number, op, last, stitle, stack.path)
            pendings.append(cur)
            note, struct_last = None, None
            continue
        if ln.bold and at_margin and text == "Fußnote":
            note = ["Fußnote:"]
            _own_note(note, cur, struct_last, struct_notes)
            continue
        if note is not None:
            note.append(_clean(joiner.fix(text)))
            continue
        if cur is None:
            continue  # text between a structure heading and its first § (none in the BGB)
        if ln.bold and at_margin and cur.title_open and not cur.lines:
            cur.title = joiner.join(cur.title, text)  # wrapped § title
            continue
        cur.title_open = False
        cur.lines.append(ln)
    if mode != "body" or not pendings:
        raise GermanStatuteError(f"{path}: no {unit_word} headings found after the table of contents")

    sections: list[Section] = []
    seen: dict[str, int] = {}
    first_section: list[int] = []  # pending index → index of its first Section (a range expands to many)
    for p in pendings:
        first_section.append(len(sections))
        stitle, repealed = strip_repealed(p.title)
        notes = [re.sub(r"\s+", " ", " ".join(n)).strip() for n in p.notes if n]
        notes = [n for n in notes if n and n != "Fußnote:"]
        page_end = p.lines[-1].page if p.lines else p.heading.page
        if p.op:
            body = " ".join(ln.text for ln in p.lines).strip()
            new = range_sections(act, p.kind, p.number, p.last, p.op, repealed=repealed or bool(REPEALED_RE.match(body)),
                                 path=p.path, page=p.heading.page)
        else:
            s = Section(section_id(act, p.kind, p.number), p.number, p.kind, stitle, p.path,
                        page_start=p.heading.page, page_end=page_end)
            if repealed:
                s.status, s.status_note = "repealed", "(weggefallen)"
            build_units(s, _pdf_blocks(p.lines, joiner))
            new = [s]
        for s in new:
            s.footnotes = notes
            if s.id in seen:
                raise GermanStatuteError(f"{path}: {s.label} appears twice (pages {seen[s.id]} and {s.page_start})")
            seen[s.id] = s.page_start or 0
            sections.append(s)
    for node in stack.nodes:
        node.notes = [n for n in (re.sub(r"\s+", " ", " ".join(x)).strip() for x in struct_notes.get(node.id, []))
                      if n and n != "Fußnote:"]
        # structure nodes counted *headings* before them; NODES orders them by *sections* before them
        node.articles_before = (first_section[node.articles_before] if node.articles_before < len(first_section)
                                else len(sections))
    version = version or _version(path, front)
    if version is None:
        raise GermanStatuteError(f"{path}: no text-state date (file name …_YYYY-MM-DD.pdf or Stand line); pass version=")
    based_on = " ".join(ln.text.strip() for ln in front if ln.text.strip().startswith(("Stand:", "zuletzt geändert")))
    return GermanStatute(act, version, path, "pdf", title, sections, stack.nodes, based_on=based_on,
                         pages=len(pages), parse_seconds=time.perf_counter() - t0)
