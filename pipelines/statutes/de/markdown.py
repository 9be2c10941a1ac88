"""German federal statutes (bundestag/gesetze Markdown) → lexpipe's node/unit schema.

Input: one law per file as published by https://github.com/bundestag/gesetze — YAML front matter
(``Title``, ``jurabk``, ``slug``), a ``#`` title, a definition list of metadata (Ausfertigungsdatum,
Zuletzt geändert durch …), then Markdown headings for the structure and the units.

Hierarchy: Buch / Teil / Abschnitt / Unterabschnitt / Titel / Untertitel / Kapitel / Unterkapitel
→ § (or Art. in the Grundgesetz) → Absatz ``(1)`` → Nummer ``1.`` → Buchstabe ``a)`` (a double
letter ``aa)`` is a letter nested in its letter). Ids follow the Polish scheme with German unit tags:
``de:bgb:par:573b``, ``de:bgb:par:573b:abs:1``, ``…:abs:1:nr:2``, ``…:nr:2:lit:a``, ``de:gg:art:3``;
structure ``de:bgb:book:2:division:8:title:5:subtitle:2``.

The heading depth of the Markdown is not the hierarchy level (the BGB puts Kapitel, Unterkapitel and
§§ all at ``######``), so structure nests by heading depth first and by level rank on ties.
``(XXXX) §§ 3 bis 6 (weggefallen)`` headings become one repealed row per §, so both BGB sources
(this and :mod:`pipelines.statutes.de.pdf`) yield comparable sets of §§.

This module also holds what both German parsers share: the model (:class:`Section`,
:class:`GermanStatute`), the Absatz/Nummer/Buchstabe builder (:func:`build_units` over
:class:`Block`), and the Arrow builders (:func:`articles_table`, :func:`nodes_table`,
:func:`acts_table`) producing ``schemas.arrow`` ARTICLES / NODES / ACTS tables.

Schema notes: the § title ("Teilkündigung des Vermieters") is ARTICLES ``title``, the last element
of ``path_text`` (``… › § 573b Teilkündigung des Vermieters``) and the ``heading`` of the article
node in NODES. Structural levels use :data:`STRUCTURE_LEVELS` names, all of them in
``schemas.arrow.LEVELS`` (:data:`LEVELS_NOT_IN_SCHEMA` stays as a guard and is empty).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from pipelines.statutes.model import Node
from schemas.arrow import ACTS, ARTICLES, LEVELS, NODES, from_rows

PARSER_VERSION = "de-3"  # de-2: content_hash over normalised text; de-3: structure headings keep their notes


class GermanStatuteError(ValueError):
    """The file is not a German statute of the expected kind (message names the file and why)."""


@dataclass(frozen=True)
class GermanAct:
    act_id: str  # de:bgb
    abbreviation: str  # BGB (jurabk)
    title: str  # Bürgerliches Gesetzbuch
    unit: str = "§"  # "§" or "Art" (Grundgesetz)


KNOWN_ACTS: dict[str, GermanAct] = {
    "bgb": GermanAct("de:bgb", "BGB", "Bürgerliches Gesetzbuch"),
    "gg": GermanAct("de:gg", "GG", "Grundgesetz für die Bundesrepublik Deutschland", "Art"),
    "hgb": GermanAct("de:hgb", "HGB", "Handelsgesetzbuch"),
    "stgb": GermanAct("de:stgb", "StGB", "Strafgesetzbuch"),
    "stpo": GermanAct("de:stpo", "StPO", "Strafprozeßordnung"),
    "zpo": GermanAct("de:zpo", "ZPO", "Zivilprozessordnung"),
}

# structural levels, outermost first; "group" is an unnumbered heading (StGB "Freiheitsstrafe")
STRUCTURE_LEVELS = ("book", "part", "division", "subdivision", "title", "subtitle", "chapter", "subchapter", "group")
LEVEL_RANK = {lvl: i for i, lvl in enumerate(STRUCTURE_LEVELS)}
LEVEL_WORDS = {"Buch": "book", "Teil": "part", "Abschnitt": "division", "Unterabschnitt": "subdivision",
               "Titel": "title", "Untertitel": "subtitle", "Kapitel": "chapter", "Unterkapitel": "subchapter"}
LEVELS_NOT_IN_SCHEMA = tuple(lvl for lvl in STRUCTURE_LEVELS if lvl not in LEVELS)
UNIT_TAG = {"§": "par", "Art": "art"}
_WORDS = "|".join(LEVEL_WORDS)

REPEALED_WORDS = ("weggefallen", "aufgehoben")
REPEALED_RE = re.compile(r"^\((weggefallen|aufgehoben)\)\.?$")
ABS_RE = re.compile(r"^\((?P<num>\d+[a-z]?)\)\s*(?P<rest>.*)$", re.S)
NR_RE = re.compile(r"^(?P<num>\d+[a-z]?)\.\s+(?P<rest>.*)$", re.S)
LIT_RE = re.compile(r"^(?P<num>[a-z]{1,2})\)\s+(?P<rest>.*)$", re.S)


# ----------------------------------------------------------------------------------------------
# model


@dataclass
class DeNode(Node):
    """A :class:`~pipelines.statutes.pl.parser.Node` plus the label as printed, and for a
    structure heading its official notes ("Amtlicher Hinweis: Dieser Titel dient der Umsetzung …"),
    kept so a parse loses no source text (:mod:`pipelines.statutes.de.source_fidelity`)."""
    label: str = ""  # "Buch 1", "Erster Abschnitt", "I.", "§ 573b", "(1)", "1.", "a)"
    notes: list[str] = field(default_factory=list)


@dataclass
class Section:
    """One § (or Art.): the article-level unit."""
    id: str
    number: str  # "573b"; "Präambel" for the GG preamble
    kind: str  # "§" | "Art" | "preamble"
    title: str
    path: list[DeNode]
    text: str = ""
    status: str = "in_force"  # in_force | repealed | pending (a placeholder without text)
    status_note: str = ""
    paragraphs: list[DeNode] = field(default_factory=list)
    units: list[DeNode] = field(default_factory=list)  # paragraph/point/letter nodes, document order
    footnotes: list[str] = field(default_factory=list)
    page_start: int | None = None
    page_end: int | None = None
    range_label: str = ""  # "§§ 3 bis 6" when the row comes from a range heading
    content_hash: str = ""

    @property
    def label(self) -> str:
        if self.kind == "preamble":
            return self.number
        return f"Art. {self.number}" if self.kind == "Art" else f"§ {self.number}"

    @property
    def sort_key(self) -> int | None:
        return section_sort_key(self.number)


@dataclass
class GermanStatute:
    act: GermanAct
    version: dt.date
    source: Path
    source_format: str  # markdown | pdf
    title: str
    sections: list[Section]
    structure: list[DeNode]
    based_on: str = ""  # "Zuletzt geändert durch …" / "Stand: …"
    pages: int | None = None
    annexes: list[str] = field(default_factory=list)  # headings of annexes not parsed (Anhang EV)
    parse_seconds: float = 0.0

    def section(self, number: str) -> Section:
        for s in self.sections:
            if s.number == number:
                return s
        raise KeyError(f"{self.act.act_id}: no {self.act.unit} {number}")

    def unit(self, unit_id: str) -> DeNode:
        """A paragraph/point/letter node by id (``de:bgb:par:573b:abs:1:nr:2``)."""
        for s in self.sections:
            if unit_id.startswith(s.id + ":"):
                for u in s.units:
                    if u.id == unit_id:
                        return u
        raise KeyError(f"{self.act.act_id}: no unit {unit_id}")


@dataclass
class Block:
    """A logical piece of a section body, the common input of :func:`build_units`.

    ``kind`` abs | nr | lit | text. ``level``: for nr/lit the list nesting (0 = top-level list), for
    text the container it belongs to (0 = the Absatz or §, k = the open list item of nesting k-1).
    """
    kind: str
    number: str
    text: str
    level: int = 0


# ----------------------------------------------------------------------------------------------
# shared helpers


def section_sort_key(number: str) -> int | None:
    m = re.match(r"^(\d+)([a-z]*)$", number)
    if not m:
        return None
    letters = m.group(2)
    return int(m.group(1)) * 1000 + sum((ord(c) - 96) * 27 ** i for i, c in enumerate(reversed(letters)))


def number_key(number: str) -> tuple[int, str]:
    m = re.match(r"^(\d+)([a-z]*)$", number)
    return (int(m.group(1)), m.group(2)) if m else (10 ** 9, number)


def _letters(first: str, last: str) -> list[str]:
    """``b``..``k`` without ``j`` (German numbering skips it: § 1908i is followed by § 1908k)."""
    out = []
    for code in range(ord(first), ord(last) + 1):
        if chr(code) != "j" or last == "j" or first == "j":
            out.append(chr(code))
    return out


def expand_range(first: str, last: str, op: str = "bis") -> list[str]:
    """``3 bis 6`` → 3, 4, 5, 6; ``1615b bis 1615k`` → 1615b … 1615k; ``38 bis 47b`` → 38 … 47, 47a, 47b;
    ``und`` → just the two."""
    if op == "und":
        return [first, last]
    (n1, s1), (n2, s2) = number_key(first), number_key(last)
    if n1 >= 10 ** 9 or n2 >= 10 ** 9 or (n1, s1) > (n2, s2):
        return [first, last]
    if n1 == n2:
        head = [first] if not s1 else []
        return head + [f"{n1}{c}" for c in _letters(s1 or "a", s2)] if s2 else [first]
    out = [first] + [str(n) for n in range(n1 + 1, n2 + 1)]
    if s2:
        out += [f"{n2}{c}" for c in _letters("a", s2)]
    return out


_ORD_UNITS = {"erst": 1, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5, "sechst": 6, "siebent": 7,
              "siebt": 7, "acht": 8, "neunt": 9, "zehnt": 10, "elft": 11, "zwölft": 12}
_CARDINAL = {"ein": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sech": 6, "sechs": 6, "sieb": 7,
             "sieben": 7, "acht": 8, "neun": 9}
_TENS = {"zwanzigst": 20, "dreißigst": 30, "vierzigst": 40, "fünfzigst": 50}


def ordinal_value(word: str) -> int | None:
    """``Erster`` → 1, ``Siebenter`` → 7, ``Dreizehnter`` → 13, ``Neunundzwanzigster`` → 29."""
    w = re.sub(r"(er|es|e|en|em)$", "", word.lower())
    if w in _ORD_UNITS:
        return _ORD_UNITS[w]
    if w in _TENS:
        return _TENS[w]
    m = re.match(r"^(\w+?)zehnt$", w)
    if m and m.group(1) in _CARDINAL:
        return 10 + _CARDINAL[m.group(1)]
    m = re.match(r"^(\w+?)und(\w+)$", w)
    if m and m.group(1) in _CARDINAL and m.group(2) in _TENS:
        return _CARDINAL[m.group(1)] + _TENS[m.group(2)]
    return None


@dataclass
class StructureHeading:
    level: str
    number: str
    label: str
    heading: str
    status: str = "in_force"


def parse_structure_heading(text: str) -> StructureHeading | None:
    """``Buch 1 - Allgemeiner Teil``, ``Erster Abschnitt - Kaufleute``, ``I. - Die Grundrechte``,
    ``Freiheitsstrafe -`` (unnumbered), ``Titel 3`` (heading on the next lines, PDF)."""
    text = text.strip()
    m = re.match(rf"^(?P<word>{_WORDS})\s+(?P<num>\d+[a-z]?)\s*(?:-\s*(?P<head>.*))?$", text)
    if m:
        return _structure(LEVEL_WORDS[m.group("word")], m.group("num"),
                          f"{m.group('word')} {m.group('num')}", m.group("head") or "")
    m = re.match(rf"^(?P<ord>\w+)\s+(?P<word>{_WORDS})\s*(?:-\s*(?P<head>.*))?$", text)
    if m and ordinal_value(m.group("ord")) is not None:
        return _structure(LEVEL_WORDS[m.group("word")], str(ordinal_value(m.group("ord"))),
                          f"{m.group('ord')} {m.group('word')}", m.group("head") or "")
    m = re.match(r"^(?P<num>[IVXLC]+\s?[a-z]?)\.\s*-\s*(?P<head>.*)$", text)
    if m:  # Grundgesetz: "IV a. - Gemeinsamer Ausschuß" (its Abschnitte)
        num = m.group("num").replace(" ", "")
        return _structure("division", num, f"{num}.", m.group("head"))
    m = re.match(r"^(?P<head>.+?)\s+-\s*$", text)
    if m:  # unnumbered: "Allgemeiner Teil - ", "Freiheitsstrafe - "
        head = m.group("head")
        return _structure("part" if head.endswith(" Teil") else "group", "", "", head)
    return None


def _structure(level: str, number: str, label: str, heading: str) -> StructureHeading:
    heading = heading.strip()
    status = "in_force"
    if re.fullmatch(r"\((weggefallen|aufgehoben)\)", heading):
        status = "repealed"
    return StructureHeading(level, number, label, heading, status)


class StructureStack:
    """Open structural units; a new heading closes deeper or same-rank ones."""

    def __init__(self, act_id: str):
        self.act_id = act_id
        self.stack: list[tuple[int, DeNode]] = []  # (markdown depth or 0, node)
        self.nodes: list[DeNode] = []
        self._unnumbered: dict[tuple[str | None, str], int] = {}

    def push(self, h: StructureHeading, *, depth: int = 0, page: int = 0, articles_before: int = 0) -> DeNode:
        rank = LEVEL_RANK[h.level]
        while self.stack and (self.stack[-1][0] > depth or
                              (self.stack[-1][0] == depth and LEVEL_RANK[self.stack[-1][1].level] >= rank)):
            self.stack.pop()
        parent = self.stack[-1][1] if self.stack else None
        number = h.number
        if not number:  # unnumbered headings: position among unnumbered siblings of that level
            key = (parent.id if parent else None, h.level)
            self._unnumbered[key] = self._unnumbered.get(key, 0) + 1
            number = str(self._unnumbered[key])
        base = parent.id if parent else self.act_id
        node_id = f"{base}:{h.level}:{number}"
        while any(n.id == node_id for n in self.nodes):  # a repeated label (rare): keep ids unique
            node_id += "'"
        node = DeNode(h.level, number, node_id, heading=h.heading, status=h.status, page=page,
                      parent_id=parent.id if parent else None, articles_before=articles_before, label=h.label)
        self.nodes.append(node)
        self.stack.append((depth, node))
        return node

    @property
    def path(self) -> list[DeNode]:
        return [n for _, n in self.stack]


def normalize_text(text: str) -> str:
    """Comparable form of a text: NFC, one kind of quote/dash/space, no footnote markers."""
    t = unicodedata.normalize("NFC", text or "")
    t = t.replace("\u00a0", " ").replace("\ufffe", "-").replace("\u00ad", "")
    t = re.sub(r"[„“”″]", '"', t)
    t = re.sub(r"[‚‘’′`]", "'", t)
    t = re.sub(r"[‒–—‐−]", "-", t)
    t = re.sub(r"\*\)", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s+([,.;:)])", r"\1", t)
    t = re.sub(r"\(\s+", "(", t)
    return t


def _strip_repealed(title: str) -> tuple[str, bool]:
    m = re.search(r"\s*\((weggefallen|aufgehoben)\)\s*$", title)
    if m:
        return title[:m.start()].strip(), True
    return title.strip(), False


def section_id(act: GermanAct, kind: str, number: str) -> str:
    if kind == "preamble":
        return f"{act.act_id}:{re.sub(r'[^a-z]', '', number.lower().replace('ä', 'ae'))}"
    return f"{act.act_id}:{UNIT_TAG[kind]}:{number}"


def build_units(section: Section, blocks: list[Block]) -> None:
    """Blocks → ``section.text``, ``section.paragraphs`` and ``section.units`` (Absatz → Nummer →
    Buchstabe), status and content hash. Unit text includes nested units (like Polish paragraphs)."""
    blocks = [b for b in blocks if b.text.strip() and b.text.strip() not in ("-", "–")]
    if len(blocks) == 1 and blocks[0].kind == "text" and REPEALED_RE.match(blocks[0].text.strip()):
        section.status, section.status_note = "repealed", blocks[0].text.strip()
        blocks = []
    par: DeNode | None = None
    open_items: list[tuple[int, DeNode]] = []  # (list nesting, item), outermost first
    units: list[DeNode] = []
    lines: list[str] = []
    seen: set[str] = set()

    def unique(unit_id: str) -> str:  # a second list restarting at "1." in the same Absatz: 1'
        while unit_id in seen:
            unit_id += "'"
        seen.add(unit_id)
        return unit_id

    for b in blocks:
        text = re.sub(r"\s+", " ", b.text).strip()
        lines.append(text)
        if b.kind == "abs":
            par = DeNode("paragraph", b.number, unique(f"{section.id}:abs:{b.number}"), text=text,
                         parent_id=section.id, page=section.page_start or 0, label=f"({b.number})")
            m = ABS_RE.match(text)
            if m and REPEALED_RE.match(m.group("rest").strip()):
                par.status = "repealed"
            open_items = []
            units.append(par)
            section.paragraphs.append(par)
            continue
        if b.kind in ("nr", "lit"):
            while open_items and open_items[-1][0] >= b.level:
                open_items.pop()
            parent_id = open_items[-1][1].id if open_items else (par.id if par else section.id)
            tag, unit_level = ("nr", "point") if b.kind == "nr" else ("lit", "letter")
            node = DeNode(unit_level, b.number, unique(f"{parent_id}:{tag}:{b.number}"), text=text,
                          parent_id=parent_id, page=section.page_start or 0,
                          label=f"{b.number}." if b.kind == "nr" else f"{b.number})")
            m = (NR_RE if b.kind == "nr" else LIT_RE).match(text)
            if m and REPEALED_RE.match(m.group("rest").strip()):
                node.status = "repealed"
            for anc in ([par] if par else []) + [n for _, n in open_items]:
                anc.text += "\n" + text
            open_items.append((b.level, node))
            units.append(node)
            continue
        # free text: belongs to the list item whose content it is indented under, else to the Absatz
        while open_items and open_items[-1][0] >= b.level:
            open_items.pop()
        for anc in ([par] if par else []) + [n for _, n in open_items]:
            anc.text += "\n" + text
    section.units = units
    section.text = "\n".join(lines)
    finish_section(section)


def finish_section(section: Section) -> None:
    if section.status == "in_force" and not section.text:
        section.status = "pending" if not section.status_note else section.status
    # over normalised wording: the two BGB sources print the same text with other quotes/dashes/
    # spaces, and a version diff must list amendments, not typography
    payload = "\x00".join([normalize_text(section.title), normalize_text(section.text), section.status])
    section.content_hash = hashlib.sha256(payload.encode()).hexdigest()


def range_sections(act: GermanAct, kind: str, first: str, last: str, op: str, *, repealed: bool,
                   path: list[DeNode], page: int | None = None, note: str = "") -> list[Section]:
    """One row per § of ``§§ 3 bis 6 (weggefallen)``."""
    label = f"{'§§' if kind == '§' else 'Art'} {first} {op} {last}"
    out = []
    for number in expand_range(first, last, op):
        s = Section(section_id(act, kind, number), number, kind, "", list(path), page_start=page,
                    page_end=page, range_label=label)
        if repealed:
            s.status, s.status_note = "repealed", note or "(weggefallen)"
        else:
            s.status, s.status_note = "pending", "(ohne Text)"
        finish_section(s)
        out.append(s)
    return out


SECTION_HEADING_RE = re.compile(
    r"^(?:\(XXXX\)\s*)?(?P<kind>§§?|Art\.?)\s*(?P<num>\d+[a-z]*)"
    r"(?:\s+(?P<op>bis|und)\s+(?P<last>\d+[a-z]*))?(?P<title>(?:\s.*)?)$")


def parse_section_heading(text: str) -> tuple[str, str, str | None, str | None, str] | None:
    """``§ 573b Teilkündigung des Vermieters`` → (kind, number, op, last, title)."""
    m = SECTION_HEADING_RE.match(text.strip())
    if not m:
        return None
    kind = "§" if m.group("kind").startswith("§") else "Art"
    if m.group("kind") == "§§" and not m.group("op"):
        return None
    return kind, m.group("num"), m.group("op"), m.group("last"), (m.group("title") or "").strip()


# ----------------------------------------------------------------------------------------------
# Markdown


_FRONT_RE = re.compile(r"\A---\s*\n(?P<yaml>.*?)\n---\s*\n", re.S)
_HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_FOOTREF_RE = re.compile(r"\[\^[^\]]+\]")
_FOOTDEF_RE = re.compile(r"^\[\^(?P<id>[^\]]+)\]:\s*(?P<text>.*)$")
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>\"'])")
_DATE_RE = re.compile(r"\bv\.\s*(\d{1,2})\.(\d{1,2})\.(\d{4})")


def _front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    m = _FRONT_RE.match(text)
    if not m:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: no YAML front matter (--- … ---)")
    import yaml

    try:
        meta = yaml.safe_load(m.group("yaml"))
    except yaml.YAMLError as exc:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: front matter is not YAML ({exc})") from exc
    if not isinstance(meta, dict) or not meta.get("Title") or not (meta.get("jurabk") or meta.get("slug")):
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: front matter lacks Title and jurabk/slug")
    return {k: str(v) for k, v in meta.items() if v is not None}, text[m.end():]


def _unescape(line: str) -> str:
    if "[^" in line:
        line = _FOOTREF_RE.sub("", line)
    if "*" in line:
        line = line.replace("**", "")
    return _ESCAPE_RE.sub(r"\1", line) if "\\" in line else line


_WIDE_GAP_RE = re.compile(r"(?<=[^\W\d_]) {5,}(?=([a-zäöüß]+))")


def markdown_vocabulary(body: str) -> set[str]:
    """Lower-case words standing alone in the text (not right after a wide gap)."""
    return set(re.findall(r"\b[a-zäöüß]+\b", re.sub(r"(?<=\w) {5,}[a-zäöüß]+", " ", body)))


def close_wide_gaps(line: str, vocabulary: set[str] | None) -> str:
    """The Markdown renders some inline elements of the source as a run of spaces inside a word
    ("Reichs             behörden"). A wide gap before a lower-case piece that never stands alone
    in the document is closed; before a real word ("Deutschland              in der") it is one space."""
    if vocabulary is None or "     " not in line:
        return line
    return _WIDE_GAP_RE.sub(lambda m: " " if m.group(1) in vocabulary else "", line)


def _markdown_blocks(lines: list[str], vocabulary: set[str] | None = None) -> tuple[list[Block], list[tuple[str, str]]]:
    """Body lines of one heading → blocks (and footnote definitions ``(id, text)``).

    Pandoc lists: ``1.  text`` with continuation indented by 4, nested ``a)`` items indented by 4
    more, free text inside an item indented like its content; blocks are separated by blank lines.
    """
    groups: list[list[str]] = []
    cur: list[str] = []
    for ln in lines:
        if ln.strip():
            cur.append(ln.rstrip())
        elif cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    blocks: list[Block] = []
    notes: list[tuple[str, str]] = []
    in_note = False  # the previous group was (part of) a footnote definition
    for g in groups:
        first = g[0]
        d = _FOOTDEF_RE.match(first.strip())
        if d:
            body = " ".join([d.group("text")] + [x.strip() for x in g[1:]])
            notes.append((d.group("id"), re.sub(r"\s+", " ", _unescape(body)).strip()))
            in_note = True
            continue
        if in_note and first.startswith("    "):
            # a footnote's own paragraphs ("2.  der Richtlinie 77/187/EWG …") are indented under it:
            # they continue the note, they are no Nummer of the § or heading above it
            body = " ".join(x.strip() for x in g)
            nid, prev = notes[-1]
            notes[-1] = (nid, re.sub(r"\s+", " ", f"{prev} {_unescape(body)}").strip())
            continue
        in_note = False
        if all(_FOOTREF_RE.fullmatch(x.strip()) for x in g):
            continue
        indent = len(first) - len(first.lstrip(" "))
        text = ""
        for x in g:
            text = join_wrapped(text, _unescape(close_wide_gaps(x.strip(), vocabulary)))
        if not text:
            continue
        m = re.match(r"^[*\-+]\s+(?P<rest>.*)$", text)
        if m:  # a bullet (oath formulas): free text of its container
            blocks.append(Block("text", "", m.group("rest"), indent // 4))
            continue
        m = ABS_RE.match(text)
        if m and indent == 0:
            blocks.append(Block("abs", m.group("num"), text, 0))
            continue
        m = NR_RE.match(text)
        if m and re.match(r"^\s*\d+[a-z]?\.\s", first):
            blocks.append(Block("nr", m.group("num"), text, indent // 4))
            continue
        m = LIT_RE.match(text)
        if m and re.match(r"^\s*[a-z]{1,2}\)\s", first):
            blocks.append(Block("lit", m.group("num"), text, indent // 4))
            continue
        blocks.append(Block("text", "", text, indent // 4))
    return blocks, notes


CONJUNCTIONS = {"und", "oder", "bis", "sowie", "beziehungsweise", "bzw.", "noch", "als", "wie"}


def join_wrapped(left: str, right: str) -> str:
    """Join two wrapped lines. Neither source hyphenates words, so a hyphen at a line end is part of
    the text: "SEPA-⏎Firmenlastschrift" → "SEPA-Firmenlastschrift", but "Rechts-⏎und" → "Rechts- und"."""
    if not left or not right:
        return left or right
    if left.endswith("-") and left[-2:-1].isalpha():
        word = re.match(r"[\w.]+", right)
        if right[:1].isalnum() and not (word and word.group().lower() in CONJUNCTIONS):
            return left + right
    return f"{left} {right}"


def _metadata(lines: list[str]) -> dict[str, list[str]]:
    """The definition list after the title: ``Term\\n:   value`` pairs."""
    out: dict[str, list[str]] = {}
    term = None
    for ln in lines:
        if ln.startswith(":") and term:
            out.setdefault(term, []).append(ln.lstrip(":").strip())
        elif ln.strip() and not ln.startswith(" "):
            term = ln.strip()
    return out


def _version_from_metadata(meta: dict[str, list[str]]) -> dt.date | None:
    dates = []
    for key, values in meta.items():
        if key.startswith(("Zuletzt geändert", "Änderung durch", "Stand", "Neugefasst")):
            for v in values:
                for d, mo, y in _DATE_RE.findall(v):
                    try:
                        dates.append(dt.date(int(y), int(mo), int(d)))
                    except ValueError:
                        pass
    return max(dates) if dates else None


def parse_markdown(path: Path, *, act: GermanAct | None = None, version: dt.date | None = None) -> GermanStatute:
    """Parse one bundestag/gesetze law. ``act`` defaults to :data:`KNOWN_ACTS` by the front matter
    slug (or ``de:<slug>`` for other laws); ``version`` to the latest amending act's date in the
    metadata. Raises :class:`GermanStatuteError` naming the file and the reason."""
    t0 = time.perf_counter()
    path = Path(path)
    if not path.is_file():
        raise GermanStatuteError(f"{path}: file not found")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GermanStatuteError(f"{path}: not a UTF-8 text file ({exc.reason})") from exc
    meta, body = _front_matter(raw, path)
    slug = (meta.get("slug") or meta.get("jurabk") or "").lower()
    if act is None:
        act = KNOWN_ACTS.get(slug) or GermanAct(f"de:{re.sub(r'[^a-z0-9]+', '', slug)}",
                                                 meta.get("jurabk", slug.upper()), meta["Title"])
    elif meta.get("jurabk", "").lower() != act.abbreviation.lower() and slug != act.act_id.split(":")[-1]:
        raise GermanStatuteError(f"{path}: not the {act.title} ({act.abbreviation}): front matter names "
                                 f"{meta.get('Title')!r} ({meta.get('jurabk')})")

    lines = body.split("\n")
    # split into (heading, body lines)
    sections_raw: list[tuple[int, str, list[str]]] = []
    pre: list[str] = []
    for ln in lines:
        h = _HEADING_RE.match(ln)
        if h:
            sections_raw.append((len(h.group("hashes")), _unescape(h.group("text")).strip(), []))
        elif sections_raw:
            sections_raw[-1][2].append(ln)
        else:
            pre.append(ln)
    if not sections_raw or sections_raw[0][0] != 1:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: no '# Title' heading after the front matter")
    title = sections_raw[0][1]
    metadata = _metadata(sections_raw[0][2])
    version = version or _version_from_metadata(metadata) or _date_from_meta(meta.get("Ausfertigungsdatum"))
    if version is None:
        raise GermanStatuteError(f"{path}: no text-state date in the metadata (Zuletzt geändert durch …); pass version=")
    based_on = "; ".join(metadata.get("Zuletzt geändert durch", []) or metadata.get("Stand", []))

    stack = StructureStack(act.act_id)
    sections: list[Section] = []
    notes: dict[str, str] = {}
    pending_refs: list[tuple[Section, list[str]]] = []
    annexes: list[str] = []
    seen: dict[str, int] = {}
    in_annex = False

    def add(s: Section) -> None:
        if s.id in seen:
            raise GermanStatuteError(f"{path}: {s.label} appears twice")
        seen[s.id] = len(sections)
        sections.append(s)

    vocabulary = markdown_vocabulary(body)
    for depth, heading, body_lines in sections_raw[1:]:
        blocks, defs = _markdown_blocks(body_lines, vocabulary)
        notes.update(defs)
        if in_annex or re.match(r"^(Anhang|Anlage)\b", heading):
            in_annex = True  # appendices (Einigungsvertrag Maßgaben, …) are not units of the act
            annexes.append(heading)
            continue
        parsed = parse_section_heading(heading)
        if parsed:
            kind, number, op, last, stitle = parsed
            stitle, repealed = _strip_repealed(stitle)
            if op:
                body_repealed = any(REPEALED_RE.match(b.text.strip()) for b in blocks)
                for s in range_sections(act, kind, number, last, op, repealed=repealed or body_repealed,
                                        path=stack.path):
                    add(s)
                continue
            s = Section(section_id(act, kind, number), number, kind, stitle, stack.path)
            if repealed:
                s.status, s.status_note = "repealed", "(weggefallen)"
            refs = list(dict.fromkeys(r.strip("[]^") for ln in body_lines if not _FOOTDEF_RE.match(ln.strip())
                                      for r in _FOOTREF_RE.findall(ln)))
            build_units(s, blocks)
            pending_refs.append((s, refs))
            add(s)
            continue
        if heading in ("Eingangsformel", "Präambel"):
            s = Section(section_id(act, "preamble", heading), heading, "preamble", "", stack.path)
            build_units(s, blocks)
            add(s)
            continue
        sh = parse_structure_heading(heading)
        if sh is None:  # an unlabelled heading without " - ": a group heading
            sh = StructureHeading("group", "", "", heading)
        node = stack.push(sh, depth=depth, articles_before=len(sections))
        node.notes = [text for _, text in defs]  # notes printed under a structure heading belong to it
    for s, refs in pending_refs:
        s.footnotes = [notes[r] for r in refs if r in notes]
    if not any(s.kind in ("§", "Art") for s in sections):
        raise GermanStatuteError(f"{path}: not a law: no '§ N' or 'Art N' headings found")
    return GermanStatute(act, version, path, "markdown", title, sections, stack.nodes, based_on=based_on,
                         annexes=annexes, parse_seconds=time.perf_counter() - t0)


def _date_from_meta(value: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def parse_markdown_dir(directory: Path, slugs: Iterable[str] = tuple(KNOWN_ACTS)) -> dict[str, GermanStatute]:
    """All laws ``<slug>.md`` of a bundestag/gesetze folder, keyed by act id."""
    out = {}
    for slug in slugs:
        st = parse_markdown(Path(directory) / f"{slug}.md", act=KNOWN_ACTS.get(slug))
        out[st.act.act_id] = st
    return out


# ----------------------------------------------------------------------------------------------
# Arrow tables (ARTICLES / NODES / ACTS of schemas.arrow)


def structure_label(n: DeNode) -> str:
    return f"{n.label} {n.heading}".strip()


def section_label(s: Section) -> str:
    return f"{s.label} {s.title}".strip()


def articles_table(st: GermanStatute) -> pa.Table:
    rows = []
    for i, s in enumerate(st.sections):
        rows.append({
            "id": s.id, "act_id": st.act.act_id, "version": st.version, "ordinal": i,
            "number": s.number, "number_display": s.label, "title": s.title or None,
            # front matter (GG Eingangsformel, Präambel) sorts by position before Art. 1 (1000)
            "sort_key": s.sort_key if s.sort_key is not None or s.kind != "preamble" else i,
            "path": [{"level": n.level, "number": n.number, "heading": n.heading, "id": n.id} for n in s.path],
            "path_text": " › ".join([structure_label(n) for n in s.path] + [section_label(s)]),
            "text": s.text, "text_pending": None, "pending_effective_date": None, "pending_note": None,
            "paragraphs": [{"id": p.id, "number": p.number, "text": p.text, "status": p.status} for p in s.paragraphs],
            "status": s.status, "status_note": s.status_note or None,
            "page_start": s.page_start, "page_end": s.page_end, "footnotes": s.footnotes,
            "content_hash": s.content_hash,
        })
    return from_rows(rows, ARTICLES)


def nodes_table(st: GermanStatute) -> pa.Table:
    """Every unit in document order; article nodes carry the § title in ``heading``."""
    act, ver = st.act.act_id, st.version
    rows: list[dict] = []

    def add(node_id, level, number, heading, text, parent_id, status, page) -> None:
        rows.append({"id": node_id, "act_id": act, "version": ver, "level": level, "number": number,
                     "heading": heading, "text": text, "parent_id": parent_id, "ordinal": len(rows),
                     "status": status, "page": page})

    structure = iter(st.structure)
    nxt = next(structure, None)
    for i, s in enumerate([*st.sections, None]):
        while nxt is not None and (s is None or nxt.articles_before <= i):
            add(nxt.id, nxt.level, nxt.number, nxt.heading, None, nxt.parent_id, nxt.status, nxt.page or None)
            nxt = next(structure, None)
        if s is None:
            break
        add(s.id, "article", s.number, s.title, s.text, s.path[-1].id if s.path else None, s.status, s.page_start)
        for u in s.units:
            add(u.id, u.level, u.number, None, u.text, u.parent_id, u.status, s.page_start)
    return from_rows(rows, NODES)


def acts_table(st: GermanStatute, *, source_sha256: str | None = None, source_url: str | None = None) -> pa.Table:
    if source_sha256 is None:
        source_sha256 = hashlib.sha256(Path(st.source).read_bytes()).hexdigest()
    return from_rows([{
        "act_id": st.act.act_id, "jurisdiction": "de", "eli": None, "title": st.title or st.act.title,
        "short_name": st.act.abbreviation, "version": st.version, "based_on": st.based_on or None,
        "source_url": source_url, "source_sha256": source_sha256, "pages": st.pages,
        "article_count": len(st.sections), "parser_version": PARSER_VERSION,
        "parsed_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
    }], ACTS)
