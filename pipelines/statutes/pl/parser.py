"""Polish statutes (ISAP unified-text PDFs) → hierarchy nodes and article records.

Hierarchy: KSIĘGA / CZĘŚĆ / TYTUŁ / DZIAŁ / Rozdział / Oddział → Art. → § → point ``1)`` →
letter ``a)``. Input is the typed line stream of :mod:`pipelines.pdf_lines`, so superscripts are
already ``^N``, and headers, footers and footnotes are already separated from the text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.statutes.pl import isap_markers
from pipelines.pdf_lines import SOFT_HYPHEN, Line, read_lines
from pipelines.statutes.model import Node
from schemas.acts import Act, registry

PARSER_VERSION = "pl-isap-2"

LEVEL_WORDS = {"KSIĘGA": "book", "CZĘŚĆ": "part", "TYTUŁ": "title", "DZIAŁ": "division",
               "Rozdział": "chapter", "Oddział": "section"}
LEVEL_RANK = {lvl: i for i, lvl in enumerate(LEVEL_WORDS.values())}
ORDINAL_WORDS = ("PIERWSZA|PIERWSZY|DRUGA|DRUGI|TRZECIA|TRZECI|CZWARTA|CZWARTY|PIĄTA|PIĄTY|SZÓSTA|SZÓSTY|"
                 "SIÓDMA|SIÓDMY|ÓSMA|ÓSMY|DZIEWIĄTA|DZIEWIĄTY|DZIESIĄTA|DZIESIĄTY")
LABEL_RE = re.compile(
    r"^(?P<word>KSIĘGA|CZĘŚĆ|TYTUŁ|DZIAŁ|Rozdział|Oddział)\s+"
    rf"(?P<num>(?:[IVXLC]+|\d+)[a-z]?(?:\^\d+)?|{ORDINAL_WORDS})(?![\w])\s*(?P<rest>.*)$")
ART_RE = re.compile(r"^(?P<mark>[<\[])?Art\.\s*(?P<num>\d+[a-z]?(?:\^\d+)?)\.\s*(?P<rest>.*)$")
PAR_RE = re.compile(r"^(?P<mark>[<\[])?§\s*(?P<num>\d+[a-z]?(?:\^\d+)?)\.(?P<close>[>\]])?\s*(?P<rest>.*)$")
POINT_RE = re.compile(r"^(?P<mark>[<\[])?(?P<num>\d+[a-z]?(?:\^\d+)?)\)\s+(?P<rest>.*)$")
LETTER_RE = re.compile(r"^(?P<mark>[<\[])?(?P<num>[a-z](?:\^\d+)?)\)\s+(?P<rest>.*)$")
REPEALED_RE = re.compile(r"^\((uchylony|uchylona|uchylone|utracił moc|utraciła moc|utraciły moc|pominięty|pominięta|skreślony)\)\.?$")
LIST_INTRO_END = re.compile(r"(:|;|,|\.|\b(oraz|lub|albo|i|a także))$")


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

    @classmethod
    def of(cls, act: Act) -> "ActSpec":
        if act.layout != "isap":
            raise StatuteParseError(f"{act.id}: layout {act.layout!r} is not an ISAP unified text")
        return cls(act.id, act.title, act.citation, act.address, act.display_address)


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
        base, _, sup = self.number.partition("^")
        digits = re.match(r"\d+", base)
        letter = base[digits.end():] if digits else ""
        return int(digits.group()) * 1000 + (int(sup) if sup else 0) + (ord(letter) - 96 if letter else 0)


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

    structure: list[Node] = []
    stack: list[Node] = []
    articles: list[Article] = []
    seen_ids: dict[str, int] = {}
    pending_label: Node | None = None
    current: Article | None = None
    started = False
    for ln in stream:
        if ln.zone == "margin":
            if started and current is not None:
                current.margin_lines.append(ln)
            continue
        text = ln.text
        label = LABEL_RE.match(text)
        if label and ln.x0 > 100 and not (pending_label and label.group("num") == "OGÓLNA"):
            started = True
            level = LEVEL_WORDS[label.group("word")]
            while stack and LEVEL_RANK[stack[-1].level] >= LEVEL_RANK[level]:
                stack.pop()
            parent = stack[-1] if stack else None
            node_id = f"{parent.id if parent else spec.act_id}:{level}:{label.group('num')}"
            node = Node(level, label.group("num"), node_id, page=ln.page,
                        parent_id=parent.id if parent else None, articles_before=len(articles))
            rest = label.group("rest").strip()
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
        if art and ln.bold and 70 <= ln.x0 <= 100:
            started = True
            pending_label = None
            number = art.group("num")
            art_id = f"{spec.act_id}:art:{number}"
            if art_id in seen_ids:
                raise StatuteParseError(
                    f"{path}: article {number} appears twice (pages {seen_ids[art_id]} and {ln.page})")
            seen_ids[art_id] = ln.page
            current = Article(art_id, number, list(stack), [], ln.page, ln.page,
                              pending_whole=art.group("mark") == "<")
            mark = art.group("mark") or ""
            current.raw_lines.append((ln, mark + art.group("rest")))
            current.footnote_refs.extend(ln.footnote_refs)
            articles.append(current)
            continue
        if not started:
            continue
        if pending_label is not None:
            # heading lines of a structural unit (may span lines); notes like "(zawierający …)" too
            pending_label.heading = f"{pending_label.heading} {text}".strip()
            if REPEALED_RE.match(text) or (text.startswith("(") and "uchylon" in text):
                pending_label.status = "repealed"
            continue
        if current is not None:
            current.raw_lines.append((ln, text))
            current.page_end = ln.page
            current.footnote_refs.extend(ln.footnote_refs)
    if not articles:
        raise StatuteParseError(f"{path}: no articles found — not an ISAP statute text?")
    for art in articles:
        _finish_article(art, spec, version, dehyph)
    return ParsedStatute(spec, version, len(pages), title, based_on, articles, structure, footnotes)


def _group_margin(lines: list[Line]) -> list[str]:
    """Margin lines → notes: a note is a run of lines on one page with normal line spacing."""
    notes: list[list[Line]] = []
    for ln in lines:
        if notes and notes[-1][-1].page == ln.page and 0 < notes[-1][-1].y - ln.y < 1.6 * ln.size:
            notes[-1].append(ln)
        else:
            notes.append([ln])
    return [" ".join(x.text for x in note) for note in notes]


def _check_identity(path: Path, spec: ActSpec, stream: list[Line]) -> None:
    head = " ".join(ln.text for ln in stream[:40] if ln.page == 1)
    norm = re.sub(r"\s+", " ", head)
    if not norm.strip():
        raise StatuteParseError(f"{path}: the first page has no text layer (empty or scanned PDF)")
    # spacing and case of the printed address vary across years ("Dz.U. 1974 Nr 24" vs
    # "Dz. U. 1964 Nr 16"): compare without whitespace, case-folded
    flat = re.sub(r"\s+", "", norm).casefold()
    if re.sub(r"\s+", "", spec.display_address).casefold() not in flat or spec.title.lower() not in norm.lower():
        found = re.search(r"Dz\. ?U\.[^A-Za-z]{0,40}", norm)
        raise StatuteParseError(
            f"{path}: not {spec.title} ({spec.display_address}); first page reads "
            f"{(found.group().strip() if found else norm[:80])!r}")


def _front_matter(page: list[Line]) -> tuple[str, str]:
    margin = " ".join(ln.text for ln in page if ln.zone == "margin")
    based_on = ""
    m = re.search(r"Opracowano na\s+podstawie:\s*(.*)$", margin)
    if m:
        based_on = m.group(1).strip()
    titles = [ln.text for ln in page if ln.zone == "body" and ln.footnote_refs]
    return (titles[0] if titles else ""), based_on


def _collect_footnotes(pages: list[list[Line]]) -> dict[str, str]:
    notes: dict[str, str] = {}
    for page in pages:
        cur: str | None = None
        for ln in page:
            if ln.zone != "footnote":
                continue
            if ln.starts_with_ref and ln.footnote_refs:
                cur = ln.footnote_refs[0]
                notes[cur] = ln.text
            elif cur is not None:
                notes[cur] = f"{notes[cur]} {ln.text}"
    return notes


# ----------------------------------------------------------------------------------------------
# article body → units and readings


def _unit_start(text: str, ln: Line, first: bool, prev_text: str, in_points: bool) -> tuple[str, re.Match] | None:
    """Is this physical line the start of a § / point / letter? Indentation and list context
    matter: wrapped lines also start at the left margin, so a bare ``2) `` is only a point when
    it continues a list."""
    m = PAR_RE.match(text)
    if m and (first or ln.x0 >= 70):
        return "paragraph", m
    m = POINT_RE.match(text)
    if m and (first or prev_text.endswith(":") or in_points) and LIST_INTRO_END.search(prev_text or ":"):
        return "point", m
    m = LETTER_RE.match(text)
    if m and (prev_text.endswith(":") or in_points) and LIST_INTRO_END.search(prev_text or ":"):
        return "letter", m
    return None


def _finish_article(art: Article, spec: ActSpec, version: dt.date, dehyph: Dehyphenator) -> None:
    art.notes = _group_margin(art.margin_lines)
    # 1. physical lines → logical unit lines ("§ 1. …", "1) …"), hyphenation joined
    units: list[str] = []
    prev = ""
    in_points = False
    for i, (ln, text) in enumerate(art.raw_lines):
        start = _unit_start(text, ln, i == 0, prev, in_points) if text else None
        if i == 0:
            units.append(text)  # the "Art. N." line opens the article whatever follows
        elif start is not None:
            in_points = start[0] in ("point", "letter")
            units.append(text)
        else:
            units[-1] = dehyph.join(units[-1], text)
        prev = units[-1]
    raw = "\n".join(u.strip() for u in units if u.strip())

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
    art.units, art.paragraphs = _split_units(art, art.text)
    payload = "\x00".join([art.text, art.text_pending or "", art.status])
    art.content_hash = hashlib.sha256(payload.encode()).hexdigest()


def _split_units(art: Article, text: str) -> tuple[list[Node], list[Node]]:
    units: list[Node] = []
    paragraphs: list[Node] = []
    par: Node | None = None
    point: Node | None = None
    for line in text.split("\n"):
        m = PAR_RE.match(line)
        if m:
            par = Node("paragraph", m.group("num"), f"{art.id}:par:{m.group('num')}",
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

