"""Polish statutes (ISAP unified-text PDFs) → hierarchy nodes and article records.

Hierarchy: KSIĘGA / CZĘŚĆ / TYTUŁ / DZIAŁ / Rozdział / Oddział → Art. → § (or ``ust.``) →
point ``1)`` → letter ``a)``. Input is the typed line stream of :mod:`pipelines.pdf_lines`, so
superscripts are already ``^N`` (``^3a`` when the superscript ends in letters), and headers,
footers and footnotes are already separated from the text.

Written against the whole ISAP family, not one file: the Civil Code (k.c.), the Code of Civil
Procedure (k.p.c.), the Labour Code (k.p.) and the Criminal Code (k.k.), in layouts from 2016 to
2026. Positions are measured from the document's own text margin (56.6 pt in the older layout,
70.9 pt in the newer), not in absolute points.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.statutes.pl import isap_markers
from pipelines.pdf_lines import BODY_MIN_SIZE, SOFT_HYPHEN, Line, read_lines
from pipelines.statutes.model import Node
from schemas.acts import Act, registry

# pl-isap-3: the word spaces pdfium drops are read from the glyph gaps (pdf_lines.is_word_gap)
# pl-isap-4: small print below the footnote separator rule is footnote, also a footnote continued
# from the page before without its number (k.p. art. 3 / art. 5 had the EU directive list's end)
# pl-isap-5: a unit named rather than numbered with no heading line of its own (k.k. CZĘŚĆ OGÓLNA /
# SZCZEGÓLNA / WOJSKOWA) has its printed name as its heading, no longer an empty one
PARSER_VERSION = "pl-isap-5"

LEVEL_WORDS = {"KSIĘGA": "book", "CZĘŚĆ": "part", "TYTUŁ": "title", "DZIAŁ": "division",
               "Rozdział": "chapter", "Oddział": "section"}
LEVEL_RANK = {lvl: i for i, lvl in enumerate(LEVEL_WORDS.values())}
# k.p. counts its DZIAŁY up to PIĘTNASTY; feminine forms number KSIĘGA / CZĘŚĆ
ORDINAL_WORDS = ("PIERWSZA|PIERWSZY|DRUGA|DRUGI|TRZECIA|TRZECI|CZWARTA|CZWARTY|PIĄTA|PIĄTY|SZÓSTA|SZÓSTY|"
                 "SIÓDMA|SIÓDMY|ÓSMA|ÓSMY|DZIEWIĄTA|DZIEWIĄTY|DZIESIĄTA|DZIESIĄTY|JEDENASTA|JEDENASTY|"
                 "DWUNASTA|DWUNASTY|TRZYNASTA|TRZYNASTY|CZTERNASTA|CZTERNASTY|PIĘTNASTA|PIĘTNASTY|"
                 "SZESNASTA|SZESNASTY|SIEDEMNASTA|SIEDEMNASTY|OSIEMNASTA|OSIEMNASTY|DZIEWIĘTNASTA|"
                 "DZIEWIĘTNASTY|DWUDZIESTA|DWUDZIESTY")
# units named rather than numbered: k.k. CZĘŚĆ OGÓLNA / SZCZEGÓLNA / WOJSKOWA, k.p.c. TYTUŁ WSTĘPNY.
# Right after another label such a line is that label's heading (k.c. "KSIĘGA PIERWSZA / CZĘŚĆ OGÓLNA").
NAMED_UNITS = ("OGÓLNA", "SZCZEGÓLNA", "WOJSKOWA", "WSTĘPNA", "WSTĘPNY")
LABEL_RE = re.compile(
    r"^(?P<word>KSIĘGA|CZĘŚĆ|TYTUŁ|DZIAŁ|Rozdział|Oddział)\s+"
    # Roman or Arabic, with a letter suffix printed in either case (k.p.c. "DZIAŁ IIA" in 2023 is
    # "DZIAŁ IIa" … "IIDA"/"IIda" across versions) and a superscript (k.p. "DZIAŁ CZTERNASTY^A")
    rf"(?P<num>(?:(?:[IVXLC]+|\d+)(?:[a-z]{{1,2}}|(?![IVXLC])[A-Z][A-Z]?)?|{ORDINAL_WORDS}|{'|'.join(NAMED_UNITS)})"
    r"(?:\^[0-9A-Za-z]+)?)(?![\w])\s*(?P<rest>.*)$")
# an article, paragraph or point number: 5, 5a, 43ba (k.k.), 22^1, 18^3a, 18^3ca (k.p.)
NUM = r"\d+[a-z]{0,2}(?:\^\d+[a-z]{0,2})?"
ART_RE = re.compile(rf"^(?P<mark>[<\[])?Art\.\s*(?P<num>{NUM})\.\s*(?P<rest>.*)$")
# "Art. 266–280." (k.p.): a block of numbers that the act no longer contains, printed as a head
ART_RANGE_RE = re.compile(rf"^(?P<mark>[<\[])?Art\.\s*{NUM}\s*[–-]\s*{NUM}\.")
PAR_RE = re.compile(rf"^(?P<mark>[<\[])?§\s*(?P<num>{NUM})\.(?P<close>[>\]])?\s*(?P<rest>.*)$")
# "ust." numbering (most statutes outside the codes): "1. Tekst…" at the paragraph indent
UST_RE = re.compile(rf"^(?P<mark>[<\[])?(?P<num>{NUM})\.(?P<close>[>\]])?\s+(?P<rest>.*)$")
POINT_RE = re.compile(rf"^(?P<mark>[<\[])?(?P<num>{NUM})\)\s+(?P<rest>.*)$")
LETTER_RE = re.compile(r"^(?P<mark>[<\[])?(?P<num>[a-z](?:\^\d+)?)\)\s+(?P<rest>.*)$")
REPEALED_RE = re.compile(r"^\((uchylony|uchylona|uchylone|utracił moc|utraciła moc|utraciły moc|pominięty|pominięta|skreślony)\)\.?$")
# what a list item before the next one ends with; "4) (uchylony)" too (k.k. art. 39: without it
# "5) (uchylony)" … "7) świadczenie pieniężne;" were glued onto point 4)
LIST_INTRO_END = re.compile(r"(:|;|,|\.|\b(oraz|lub|albo|i|a także)|\((uchylony|uchylona|uchylone|pominięty|pominięta|skreślony)\))$")

# Horizontal positions, in points right of the document's text margin (see text_margin). Measured: k.c. and k.k. margin 56.6, article heads and "§" at 82.2; k.p. 2016
# 59.6 / 85.1; k.p.c. 2024 and k.p. 2025 70.9 / 96.4; structural labels are centred (≥ 120 pt in).
HEAD_INDENT = (13.0, 43.0)  # an article head or a paragraph starts in this band
LABEL_MIN_INDENT = 43.0  # a structural label starts right of this

PARAGRAPH_TAGS = {"§": "par", "ust.": "ust"}  # paragraph unit → the tag in unit ids (…:art:5:ust:1)


class StatuteParseError(ValueError):
    """The PDF parsed, but is not the expected act or has no recognisable structure."""


@dataclass(frozen=True)
class ActSpec:
    """What we expect to find in the PDF (used to refuse a PDF of a different act): the parser's
    view of a registry row (``schemas/acts.toml``), made by :func:`act_spec`."""
    act_id: str  # pl:kc
    title: str  # Kodeks cywilny
    short_name: str  # k.c.
    eli: str  # DU/1964/93
    display_address: str  # Dz. U. 1964 Nr 16 poz. 93
    paragraph_unit: str = "§"  # § (the codes) or ust. (most other statutes): how paragraphs are numbered

    def __post_init__(self) -> None:
        if self.paragraph_unit not in PARAGRAPH_TAGS:
            raise StatuteParseError(f"{self.act_id}: paragraph unit {self.paragraph_unit!r} is not one of "
                                    f"{list(PARAGRAPH_TAGS)} (an ISAP unified text numbers paragraphs so)")

    @classmethod
    def of(cls, act: Act) -> "ActSpec":
        if act.layout != "isap":
            raise StatuteParseError(f"{act.id}: layout {act.layout!r} is not an ISAP unified text")
        return cls(act.id, act.title, act.citation, act.address, act.display_address, act.paragraph_unit)


def act_spec(act_id: str) -> ActSpec:
    """The spec of a registry act (KeyError naming the registry's acts when it is unknown)."""
    return ActSpec.of(registry().get(act_id))


@dataclass
class Article:
    id: str
    number: str
    path: list[Node]
    raw_lines: list[tuple[Line, str]]  # (line, text) — text has the "Art. N." prefix removed
    page_start: int
    page_end: int
    margin_lines: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # ISAP margin notes
    footnote_refs: list[str] = field(default_factory=list)
    pending_whole: bool = False
    raw: str = ""  # unit lines with ISAP markers (see _assemble)
    head_mark: str = ""  # "[" or "<" when the head itself is marked: "[Art. 289." / "<Art. 289."
    # indices of raw_lines that open a logical line whatever their shape: the second head of an
    # article printed twice, "[Art. 289. old wording]" then "<Art. 289. new wording>" (k.p.c. 2024)
    breaks: set[int] = field(default_factory=set)
    # set by parse_statute when some number of the act needs the finer key (see number_sort_key)
    refined_key: bool = False
    # filled by finish()
    text: str = ""
    text_pending: str | None = None
    pending_effective_date: dt.date | None = None
    status: str = "in_force"
    status_note: str = ""
    paragraphs: list[Node] = field(default_factory=list)
    units: list[Node] = field(default_factory=list)  # paragraph/point/letter nodes, document order
    content_hash: str = ""

    @property
    def sort_key(self) -> int:
        key, finer = number_sort_key(self.number)
        return key * 1000 + finer if self.refined_key else key


def number_sort_key(number: str) -> tuple[int, int]:
    """(key, finer) of an article number. ``key`` is the published ``base*1000 + superscript (+ the
    letter's rank)``: 22^1 → 22001, 5a → 5001. It cannot order numbers that sit between two of
    those integers, 18^3 < 18^3a < 18^3ca < 18^3d < 18^4 (k.p., k.p.c.) or 43b < 43ba < 43c (k.k.);
    ``finer`` (0–728: first extra letter × 27 + second) does. An act that has such numbers is keyed
    ``key*1000 + finer`` throughout, any other keeps ``key`` (the Civil Code's published keys)."""
    base, _, sup = number.partition("^")
    digits = re.match(r"\d+", base)
    letters = base[digits.end():] if digits else ""
    sup_m = re.match(r"(\d*)([a-z]*)", sup)
    sup_digits, sup_letters = sup_m.group(1), sup_m.group(2)
    key = int(digits.group()) * 1000 + (int(sup_digits) if sup_digits else 0) + (ord(letters[0]) - 96 if letters else 0)
    extra = sup_letters or letters[1:]
    finer = sum((ord(c) - 96) * 27 ** (1 - i) for i, c in enumerate(extra[:2]))
    return key, finer


@dataclass
class ParsedStatute:
    spec: ActSpec
    version: dt.date
    pages: int
    title: str
    based_on: str
    articles: list[Article]
    structure: list[Node]  # book..section nodes in document order
    footnotes: dict[str, str]
    # the page count the running header prints ("©Kancelaria Sejmu s. 1/148" → 148; None when no
    # page has that header): a PDF with fewer pages than it says it has lost its end
    printed_pages: int | None = None


# ----------------------------------------------------------------------------------------------
# text assembly


class Dehyphenator:
    """Joins words broken across lines. A break is a hyphen at line end; whether the hyphen is
    part of the word (``społeczno-gospodarczy``) is decided by the document's own vocabulary."""

    def __init__(self, lines: list[str]):
        words = Counter()
        for ln in lines:
            words.update(w.lower() for w in re.findall(r"[\wąćęłńóśźż-]+", ln))
        self.words = words

    def join(self, left: str, right: str) -> str:
        if not left:
            return right
        if left.endswith(SOFT_HYPHEN):
            return left[:-1] + right
        m = re.search(r"(\w+)-$", left)
        if m and right[:1].islower():
            head = m.group(1)
            tail = re.match(r"[\wąćęłńóśźż]+", right)
            tail_s = tail.group() if tail else ""
            joined, hyphened = (head + tail_s).lower(), f"{head}-{tail_s}".lower()
            if self.words[hyphened] > self.words[joined] or (
                    self.words[joined] == 0 and self.words[hyphened] == 0 and head.lower() in _COMPOUND_HEADS):
                return left + right
            return left[:-1] + right
        return f"{left} {right}"


# first parts of Polish hyphenated compounds that should keep their hyphen when broken at line end
_COMPOUND_HEADS = {"społeczno", "gospodarczo", "cywilno", "administracyjno", "finansowo", "prawno",
                   "techniczno", "organizacyjno", "rolno", "naukowo", "polsko", "handlowo"}


# ----------------------------------------------------------------------------------------------
# parsing


def parse_statute(path: Path, version: dt.date, spec: ActSpec | str, *,
                  workers: int = 2, pages: list[list[Line]] | None = None) -> ParsedStatute:
    """Parse one unified-text PDF of the act ``spec`` (an :class:`ActSpec` or a registry act id).
    Raises PdfReadError / StatuteParseError with the file name."""
    if isinstance(spec, str):
        spec = act_spec(spec)
    if pages is None:
        first = read_lines(Path(path), workers=1, pages=[0])  # refuse a wrong or empty file early
        _check_identity(path, spec, [ln for ln in first[0] if ln.zone in ("body", "note")])
        pages = read_lines(Path(path), workers=workers)
    footnotes = _collect_footnotes(pages)
    stream = [ln for page in pages for ln in page if ln.zone in ("body", "note", "margin")]
    _check_identity(path, spec, stream)
    dehyph = Dehyphenator([ln.text for ln in stream if ln.zone != "margin"])
    title, based_on = _front_matter(pages[0] if pages else [])
    margin = text_margin(stream)
    head_lo, head_hi = margin + HEAD_INDENT[0], margin + HEAD_INDENT[1]

    structure: list[Node] = []
    stack: list[Node] = []
    articles: list[Article] = []
    seen_ids: dict[str, int] = {}
    pending_label: Node | None = None
    current: Article | None = None
    started = False
    rank = dict(LEVEL_RANK)
    outer_seen = False
    for ln in stream:
        if ln.zone == "margin":
            if started and current is not None:
                current.margin_lines.append(ln)
            continue
        text = ln.text
        label = LABEL_RE.match(text)
        # a label is centred; a bare all-caps label may also sit elsewhere (k.p.c. 2023 prints
        # "DZIAŁ IVg" in 10 pt at the margin, p. 192) — running text cites units in lower case
        centred_or_bare = ln.x0 > margin + LABEL_MIN_INDENT or (label and label.group("word").isupper()
                                                                and not label.group("rest"))
        if label and centred_or_bare and not (pending_label and label.group("num") in NAMED_UNITS):
            started = True
            level = LEVEL_WORDS[label.group("word")]
            if level in ("book", "part") and not outer_seen:
                # whichever of KSIĘGA / CZĘŚĆ comes first encloses the other: k.c. KSIĘGA › (CZĘŚĆ
                # OGÓLNA is its heading), k.p.c. CZĘŚĆ PIERWSZA › KSIĘGA PIERWSZA › TYTUŁ I
                outer_seen = True
                if level == "part":
                    rank["part"], rank["book"] = LEVEL_RANK["book"], LEVEL_RANK["part"]
            while stack and rank[stack[-1].level] >= rank[level]:
                stack.pop()
            parent = stack[-1] if stack else None
            number = _label_number(label.group("num"))
            rest = label.group("rest").strip()
            if re.fullmatch(r"[a-z]", rest):  # k.p.c. "KSIĘGA PIERWSZA a" (printed so; in the act: PIERWSZAa)
                number, rest = number + rest, ""
            node_id = f"{parent.id if parent else spec.act_id}:{level}:{number}"
            node = Node(level, number, node_id, page=ln.page,
                        parent_id=parent.id if parent else None, articles_before=len(articles))
            if REPEALED_RE.match(rest):
                node.status = "repealed"
                node.heading = rest
            elif rest:
                node.heading = rest
            structure.append(node)
            stack.append(node)
            pending_label = node
            current = None
            continue
        art = ART_RE.match(text)
        if art and ln.bold and head_lo <= ln.x0 <= head_hi:
            started = True
            pending_label = None
            number = art.group("num")
            art_id = f"{spec.act_id}:art:{number}"
            mark = art.group("mark") or ""
            if art_id in seen_ids:
                prev = articles[-1]
                # the whole article reworded: ISAP prints the expiring wording "[Art. N. …]" and
                # right after it the coming one "<Art. N. …>" — one article with two readings
                if prev.id == art_id and {prev.head_mark, mark} == {"[", "<"}:
                    prev.breaks.add(len(prev.raw_lines))
                    prev.raw_lines.append((ln, mark + art.group("rest")))
                    prev.page_end = ln.page
                    prev.footnote_refs.extend(ln.footnote_refs)
                    current = prev
                    continue
                raise StatuteParseError(
                    f"{path}: article {number} appears twice (pages {seen_ids[art_id]} and {ln.page})")
            seen_ids[art_id] = ln.page
            current = Article(art_id, number, list(stack), [], ln.page, ln.page,
                              pending_whole=mark == "<", head_mark=mark)
            current.raw_lines.append((ln, mark + art.group("rest")))
            current.footnote_refs.extend(ln.footnote_refs)
            articles.append(current)
            continue
        if ART_RANGE_RE.match(text) and ln.bold and head_lo <= ln.x0 <= head_hi:
            # numbers the act no longer contains (k.p. "Art. 266–280.", its footnote: "dział
            # dwunasty nie obejmuje art. 266–280"): no articles, like k.c. TYTUŁ IV "(zawierający
            # art. 397–404 – uchylony)"; it ends the article before it, whose text it is not
            pending_label = None
            current = None
            continue
        if not started:
            continue
        if pending_label is not None:
            # heading lines of a structural unit (may span lines); notes like "(zawierający …)" too.
            # A "(… – uchylony)" note repeals the unit when it is all the unit has ("TYTUŁ IV
            # (zawierający art. 397–404 – uchylony)"); after a name it is about something inside:
            # k.p.c. "CZĘŚĆ DRUGA POSTĘPOWANIE ZABEZPIECZAJĄCE (oznaczenie oraz tytuł księgi
            # pierwszej – uchylone)" is in force
            named = bool(pending_label.heading)
            pending_label.heading = f"{pending_label.heading} {text}".strip()
            if REPEALED_RE.match(text) or (text.startswith("(") and "uchylon" in text and not named):
                pending_label.status = "repealed"
            continue
        if current is not None:
            current.raw_lines.append((ln, text))
            current.page_end = ln.page
            current.footnote_refs.extend(ln.footnote_refs)
    if not articles:
        raise StatuteParseError(f"{path}: no articles found — not an ISAP statute text?")
    _name_named_units(structure)
    refined = any(number_sort_key(a.number)[1] for a in articles)
    _mend_split_notes(articles)
    for art in articles:
        art.refined_key = refined
        _assemble(art, spec, dehyph, margin)
    _close_article_markers(articles)
    for art in articles:
        _finish_article(art, spec, version)
    return ParsedStatute(spec, version, len(pages), title, based_on, articles, structure, footnotes,
                         printed_page_total(pages))


_LABEL_WORD = {level: word for word, level in LEVEL_WORDS.items()}


def _name_named_units(structure: list[Node]) -> None:
    """A unit named rather than numbered (k.k. ``CZĘŚĆ OGÓLNA``, ``CZĘŚĆ SZCZEGÓLNA``, ``CZĘŚĆ
    WOJSKOWA``) prints no heading line: the label is its name. Its heading is that printed name, as the
    same words are the heading of k.c. ``KSIĘGA PIERWSZA`` — not an empty string. Its id and number
    (``pl:kk:part:OGÓLNA``) and every article stay as they were."""
    for node in structure:
        if not node.heading and node.number in NAMED_UNITS:
            node.heading = f"{_LABEL_WORD[node.level]} {node.number}"


# "©Kancelaria Sejmu s. 12/148": the page and the document's page count, on every ISAP page
PAGE_OF_RE = re.compile(r"s\.\s*(\d+)\s*/\s*(\d+)\s*$")


def printed_page_total(pages: list[list[Line]]) -> int | None:
    """The page count the running headers print (the most common "s. N/<total>"), or None when
    no page has an ISAP running header. Measured: equal to the PDF's page count in all seven
    sample unified texts (k.c., k.p.c., k.p., k.k.)."""
    totals = Counter(int(m.group(2)) for page in pages for ln in page
                     if ln.zone == "header" and (m := PAGE_OF_RE.search(ln.text)))
    return totals.most_common(1)[0][0] if totals else None


def text_margin(lines: list[Line]) -> float:
    """The document's left text margin, rounded to whole points: the leftmost edge that at least
    5 % of the body-size lines start at (wrapped lines start there, heads and paragraphs are
    indented from it). Not simply the most common edge: in a short text of one-line articles the
    indent is the most common. Measured: 57 in k.c., k.k., k.p.c. 2023; 60 in k.p. 2016; 71 in
    k.p.c. 2024 and k.p. 2025."""
    edges = Counter(round(ln.x0) for ln in lines if ln.zone == "body" and ln.size >= BODY_MIN_SIZE)
    common = [x for x, n in edges.items() if n >= max(2, 0.05 * sum(edges.values()))]
    return float(min(common)) if common else 57.0


def _label_number(num: str) -> str:
    """A label's number as an id part: an upper-case letter suffix is written in lower case, so
    the unit keeps its id across versions (k.p.c. "DZIAŁ IIDA" in 2024 is "DZIAŁ IIda" in 2023)."""
    return re.sub(r"^([IVXLC]+)((?![IVXLC])[A-Z][A-Z]?)(?=\^|$)", lambda m: m[1] + m[2].lower(), num)


def _contiguous(upper: Line, lower: Line) -> bool:
    """Two margin lines of one note: same page, normal line spacing."""
    return upper.page == lower.page and 0 < upper.y - lower.y < 1.6 * lower.size


def _mend_split_notes(articles: list[Article]) -> None:
    """A margin note that starts above an article head is cut in two by it (k.p. 2025 p. 10:
    "Dodany art. 18^3ca / wejdzie w życie z" beside art. 18³ᶜ, "dn. 24.12.2025 r. …" beside
    art. 18³ᶜᵃ — neither half has the date). Give the whole note to the article it names, else to
    the one beside its first line. Measured: 0 such notes in both k.c. files, 2 in k.p.c. 2024,
    1 in k.p. 2025."""
    for a, b in zip(articles, articles[1:]):
        if not (a.margin_lines and b.margin_lines and _contiguous(a.margin_lines[-1], b.margin_lines[0])):
            continue
        i = len(a.margin_lines) - 1
        while i > 0 and _contiguous(a.margin_lines[i - 1], a.margin_lines[i]):
            i -= 1
        j = 1
        while j < len(b.margin_lines) and _contiguous(b.margin_lines[j - 1], b.margin_lines[j]):
            j += 1
        note = " ".join(ln.text for ln in a.margin_lines[i:] + b.margin_lines[:j])
        names_b = re.search(rf"\bart\.\s*{re.escape(b.number)}(?![\w^])", note)
        names_a = re.search(rf"\bart\.\s*{re.escape(a.number)}(?![\w^])", note)
        if names_b and not names_a:
            b.margin_lines[:0] = a.margin_lines[i:]
            del a.margin_lines[i:]
        else:
            a.margin_lines.extend(b.margin_lines[:j])
            del b.margin_lines[:j]


def _group_margin(lines: list[Line]) -> list[str]:
    """Margin lines → notes: a note is a run of lines on one page with normal line spacing."""
    notes: list[list[Line]] = []
    for ln in lines:
        if notes and notes[-1][-1].page == ln.page and 0 < notes[-1][-1].y - ln.y < 1.6 * ln.size:
            notes[-1].append(ln)
        else:
            notes.append([ln])
    return [" ".join(x.text for x in note) for note in notes]


# the act's own address as page 1 prints it above the heading, compared without whitespace and
# case-folded: "Dz. U. 1964 Nr 16 poz. 93", "Dz.U. 1974 Nr 24 poz. 141" (k.p. 2016, whose text
# layer may also space the digits: "Dz.U. 19 74 Nr 2 4"), "Dz. U. 2019 poz. 1234" (no Nr after 2011).
# The t.j. entry ("Dz. U. z 2023 r. poz. 1550", margin) and citations ("(Dz. U. poz. 665)") have
# "z … r." or no year, so they never match.
ADDRESS_RE = re.compile(r"dz\.u\.(\d{4})(?:nr\d+)?poz\.\d+")
ENACTED_RE = re.compile(r"^z\s+dnia\s+\d{1,2}\s+\w+\s+\d{4}\s*r\.?$")


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def _title_norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("–", "-")).strip(" .,;").casefold()


def _check_identity(path: Path, spec: ActSpec, stream: list[Line]) -> None:
    """Refuse a PDF of another act. Page 1 of an ISAP unified text prints the act's address
    (usually; k.p.c. 2023 is named after its t.j. entry and prints none), then "USTAWA / z dnia … /
    <title>". The title must equal the act's title — equal, not contain: "Kodeks cywilny" must
    not accept "Kodeks postępowania cywilnego", nor "Kodeks karny" "Kodeks karny wykonawczy" — and
    an address, when printed, must be the act's."""
    page1 = [ln for ln in stream if ln.page == 1 and ln.zone == "body"]
    if not re.sub(r"\s+", "", " ".join(ln.text for ln in page1)):
        raise StatuteParseError(f"{path}: the first page has no text layer (empty or scanned PDF)")
    front: list[Line] = []  # page 1 above the first article or the preamble
    for ln in page1:
        if ART_RE.match(ln.text) or ln.text.startswith("Preambuła"):
            break
        front.append(ln)
    addresses = [m.group() for m in ADDRESS_RE.finditer(_flat(" ".join(ln.text for ln in front)))]
    heading = _heading(front)
    want_title = _title_norm(spec.title)
    if heading:
        title_ok = _title_norm(heading) == want_title
    else:  # no "z dnia" line: the title must be one whole line of the front matter
        title_ok = any(_title_norm(ln.text) == want_title for ln in front)
    address_ok = not addresses or _flat(spec.display_address) in addresses
    if not (title_ok and address_ok):
        printed = next((ln.text for ln in front if ADDRESS_RE.search(_flat(ln.text))), None)
        raise StatuteParseError(
            f"{path}: not {spec.title} ({spec.display_address}); page 1 prints "
            f"{('the address ' + repr(printed)) if printed else 'no Dz. U. address'} and the title "
            f"{(heading or ' '.join(ln.text for ln in front)[:80])!r}")


def _heading(front: list[Line]) -> str:
    """The title under "z dnia … r.": the bold lines that follow it, up to a unit label."""
    for i, ln in enumerate(front):
        if ENACTED_RE.match(ln.text):
            title = []
            for nxt in front[i + 1:]:
                if not nxt.bold or LABEL_RE.match(nxt.text):
                    break
                title.append(nxt.text)
            return " ".join(title)
    return ""


def _front_matter(page: list[Line]) -> tuple[str, str]:
    margin = " ".join(ln.text for ln in page if ln.zone == "margin")
    based_on = ""
    m = re.search(r"Opracowano na\s+podstawie:\s*(.*)$", margin)
    if m:
        based_on = m.group(1).strip()
    titles = [ln.text for ln in page if ln.zone == "body" and ln.footnote_refs]
    return (titles[0] if titles else ""), based_on


def _collect_footnotes(pages: list[list[Line]]) -> dict[str, str]:
    """Footnote number → text. A footnote block that opens without a number continues the last
    footnote of the page before (k.p.: footnote 1, the EU directives, runs over pages 1–3)."""
    notes: dict[str, str] = {}
    cur: str | None = None
    for page in pages:
        lines = [ln for ln in page if ln.zone == "footnote"]
        if not lines:
            cur = None
        for ln in lines:
            if ln.starts_with_ref and ln.footnote_refs:
                cur = ln.footnote_refs[0]
                notes[cur] = ln.text
            elif cur is not None:
                notes[cur] = f"{notes[cur]} {ln.text}"
    return notes


# ----------------------------------------------------------------------------------------------
# article body → units and readings


def _unit_start(text: str, ln: Line, first: bool, prev_text: str, in_points: bool, *,
                par_re: re.Pattern = PAR_RE, par_x: tuple[float, float] = (70.0, float("inf"))
                ) -> tuple[str, re.Match] | None:
    """Is this physical line the start of a § (ust.) / point / letter? Indentation and list context
    matter: wrapped lines also start at the left margin, so a bare ``2) `` is only a point when
    it continues a list, and a paragraph starts at the paragraph indent (``par_x``, from the
    document's margin: a wrapped line may begin "§ 2 stosuje się", an ust. line "2. …")."""
    m = par_re.match(text)
    if m and (first or par_x[0] <= ln.x0 <= par_x[1]):
        return "paragraph", m
    m = POINT_RE.match(text)
    if m and (first or prev_text.endswith(":") or in_points) and LIST_INTRO_END.search(prev_text or ":"):
        return "point", m
    m = LETTER_RE.match(text)
    if m and (prev_text.endswith(":") or in_points) and LIST_INTRO_END.search(prev_text or ":"):
        return "letter", m
    return None


def _assemble(art: Article, spec: ActSpec, dehyph: Dehyphenator, margin: float = 57.0) -> None:
    """Physical lines → ``art.raw``: one line per unit ("§ 1. …", "1) …"), hyphenation joined,
    ISAP markers still in; margin lines → ``art.notes``."""
    art.notes = _group_margin(art.margin_lines)
    if spec.paragraph_unit == "ust.":
        # "1." is also how a wrapped line may begin: only at the paragraph indent
        par_re, par_x = UST_RE, (margin + HEAD_INDENT[0], margin + HEAD_INDENT[1])
    else:
        par_re, par_x = PAR_RE, (margin + HEAD_INDENT[0], float("inf"))
    # 1. physical lines → logical unit lines ("§ 1. …", "1) …"), hyphenation joined
    units: list[str] = []
    prev = ""
    in_points = False
    for i, (ln, text) in enumerate(art.raw_lines):
        start = _unit_start(text, ln, i == 0, prev, in_points, par_re=par_re, par_x=par_x) if text else None
        if i == 0 or i in art.breaks:
            units.append(text)  # the "Art. N." line opens the article (or its second reading) whatever follows
            in_points = False
        elif start is not None:
            in_points = start[0] in ("point", "letter")
            units.append(text)
        else:
            units[-1] = dehyph.join(units[-1], text)
        prev = units[-1]
    art.raw = "\n".join(u.strip() for u in units if u.strip())


def _close_article_markers(articles: list[Article]) -> None:
    """A marked head ("<Art. 908^1. …") opens a marker for the whole article. Where the article
    ends without closing it, it closes there (k.p.c. 2024 art. 908¹: the closing ">" is missing) —
    unless the marker runs on into the following articles, which then end with the closer that
    nothing opened in them (k.p. 2025: "<Art. 302^1. … Art. 302^2. … ZUS.>", added together; the
    margin note "Dodany art. 302^1 i 302^2 wejdą w życie …" sits beside the first only)."""
    for i, art in enumerate(articles):
        if not art.head_mark or 0 not in isap_markers.unmatched(art.raw)[0]:
            continue
        closer = isap_markers.OPENERS[art.head_mark]
        for j in range(i + 1, len(articles)):
            nxt = articles[j]
            stray = isap_markers.unmatched(nxt.raw)[1]
            if stray and nxt.raw[stray[0]] == closer:
                break
            if nxt.head_mark or isap_markers.has_markers(nxt.raw):
                j = i
                break
        else:
            j = i
        art.raw += closer
        for nxt in articles[i + 1:j + 1]:
            nxt.raw = art.head_mark + nxt.raw + (closer if nxt is not articles[j] else "")
            nxt.head_mark, nxt.pending_whole = art.head_mark, art.head_mark == "<"
            nxt.notes = nxt.notes or list(art.notes)


def _finish_article(art: Article, spec: ActSpec, version: dt.date) -> None:
    """``art.raw`` → status, the readings (in force on ``version``, pending), units, hash."""
    raw = isap_markers.repair(art.raw)

    # 2. status
    body_wo_markers = isap_markers.current_reading(raw)
    if REPEALED_RE.match(body_wo_markers.strip()):
        art.status = "repealed"
        art.status_note = body_wo_markers.strip()

    # 3. readings of ISAP markers
    text, pending, effective = isap_markers.readings(raw, art.notes, version)
    art.text, art.text_pending, art.pending_effective_date = text, pending, effective
    if art.pending_whole and pending is not None and not text:
        art.status = "pending"

    # 4. units (paragraph → point → letter) of the reading in force
    art.units, art.paragraphs = _split_units(art, art.text, spec.paragraph_unit)
    payload = "\x00".join([art.text, art.text_pending or "", art.status])
    art.content_hash = hashlib.sha256(payload.encode()).hexdigest()


def _split_units(art: Article, text: str, paragraph_unit: str = "§") -> tuple[list[Node], list[Node]]:
    """Logical lines → paragraph / point / letter nodes. An ``ust.`` is a paragraph (``schemas.arrow``
    has one paragraph level) whose id says ``ust``: ``pl:x:art:5:ust:1``."""
    par_re, tag = (UST_RE if paragraph_unit == "ust." else PAR_RE), PARAGRAPH_TAGS[paragraph_unit]
    units: list[Node] = []
    paragraphs: list[Node] = []
    par: Node | None = None
    point: Node | None = None
    for line in text.split("\n"):
        m = par_re.match(line)
        if m:
            par = Node("paragraph", m.group("num"), f"{art.id}:{tag}:{m.group('num')}",
                       text=line, parent_id=art.id, page=art.page_start)
            if REPEALED_RE.match(m.group("rest").strip()):
                par.status = "repealed"
            point = None
            units.append(par)
            paragraphs.append(par)
            continue
        m = POINT_RE.match(line)
        if m:
            parent = par.id if par else art.id
            point = Node("point", m.group("num"), f"{parent}:pt:{m.group('num')}", text=line,
                         parent_id=parent, page=art.page_start)
            if REPEALED_RE.match(m.group("rest").strip()):
                point.status = "repealed"
            units.append(point)
            if par:
                par.text += "\n" + line
            continue
        m = LETTER_RE.match(line)
        if m and point is not None:
            letter = Node("letter", m.group("num"), f"{point.id}:lit:{m.group('num')}", text=line,
                          parent_id=point.id, page=art.page_start)
            units.append(letter)
            point.text += "\n" + line
            if par:
                par.text += "\n" + line
            continue
        # continuation text after a list ("– w terminie …") or the article's lead-in
        if par is not None:
            par.text += "\n" + line
    # ids must be unique within the article (a repeated "§ 1." would be a parse error upstream)
    seen: set[str] = set()
    for u in units:
        while u.id in seen:
            u.id += "'"
        seen.add(u.id)
    return units, paragraphs

