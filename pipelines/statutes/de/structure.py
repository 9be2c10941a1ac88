"""What both German parsers share between reading their source and the model: structure headings,
§ headings, Absatz/Nummer/Buchstabe units, §§ ranges, wrapped lines and normalised text.

Why a module of its own: the bundestag/gesetze Markdown parser (:mod:`~pipelines.statutes.de.markdown`)
and the gesetze-im-internet PDF parser (:mod:`~pipelines.statutes.de.pdf`) read different sources
into the same hierarchy by the same rules; the rules live here, public, so neither parser reaches
into the other's private names, and both BGB sources yield comparable sets of §§ and units
(:mod:`~pipelines.statutes.de.sources_compare`).

Each parser cuts its source into :class:`Block` pieces per § and hands them to :func:`build_units`;
structure headings go through :func:`parse_structure_heading` into a :class:`StructureStack`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from pipelines.statutes.de.model import UNIT_TAG, DeNode, GermanAct, Section, number_key, roman_value
from schemas.arrow import LEVELS

# structural levels, outermost first; "group" is an unnumbered heading (StGB "Freiheitsstrafe")
STRUCTURE_LEVELS = ("book", "part", "division", "subdivision", "title", "subtitle", "chapter", "subchapter", "group")
LEVEL_RANK = {lvl: i for i, lvl in enumerate(STRUCTURE_LEVELS)}
LEVEL_WORDS = {"Buch": "book", "Teil": "part", "Abschnitt": "division", "Unterabschnitt": "subdivision",
               "Titel": "title", "Untertitel": "subtitle", "Kapitel": "chapter", "Unterkapitel": "subchapter"}
LEVELS_NOT_IN_SCHEMA = tuple(lvl for lvl in STRUCTURE_LEVELS if lvl not in LEVELS)
_WORDS = "|".join(LEVEL_WORDS)

REPEALED_WORDS = ("weggefallen", "aufgehoben")
REPEALED_RE = re.compile(r"^\((weggefallen|aufgehoben)\)\.?$")
ABS_RE = re.compile(r"^\((?P<num>\d+[a-z]?)\)\s*(?P<rest>.*)$", re.S)
NR_RE = re.compile(r"^(?P<num>\d+[a-z]?)\.\s+(?P<rest>.*)$", re.S)
LIT_RE = re.compile(r"^(?P<num>[a-z]{1,2})\)\s+(?P<rest>.*)$", re.S)


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
# numbers, ranges and headings


def _letters(first: str, last: str) -> list[str]:
    """``b``..``k`` without ``j`` (German numbering skips it: § 1908i is followed by § 1908k)."""
    out = []
    for code in range(ord(first), ord(last) + 1):
        if chr(code) != "j" or last == "j" or first == "j":
            out.append(chr(code))
    return out


def expand_range(first: str, last: str, op: str = "bis") -> list[str]:
    """``3 bis 6`` → 3, 4, 5, 6; ``1615b bis 1615k`` → 1615b … 1615k; ``38 bis 47b`` → 38 … 47, 47a, 47b;
    ``I bis III`` → I, II, III; ``und`` (``u.``) → just the two."""
    if op in ("und", "u."):
        return [first, last]
    r1, r2 = roman_value(first), roman_value(last)
    if r1 is not None and r2 is not None:  # "Art I bis Art III"
        return [first] + [_roman(n) for n in range(r1 + 1, r2 + 1)] if r1 < r2 else [first, last]
    (n1, s1), (n2, s2) = number_key(first), number_key(last)
    if n1 >= 10 ** 9 or n2 >= 10 ** 9 or (n1, s1) > (n2, s2):
        return [first, last]
    if len(s1) > 1 or len(s2) > 1:  # "§§ 133e bis 139aa": the double letters have no known sequence
        return [first] + [str(n) for n in range(n1 + 1, n2 + 1)] + ([last] if s2 else []) if n1 < n2 \
            else [first, last]
    if n1 == n2:
        head = [first] if not s1 else []
        return head + [f"{n1}{c}" for c in _letters(s1 or "a", s2)] if s2 else [first]
    out = [first] + [str(n) for n in range(n1 + 1, n2 + 1)]
    if s2:
        out += [f"{n2}{c}" for c in _letters("a", s2)]
    return out


def _roman(n: int) -> str:
    out = ""
    for value, numeral in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + numeral, n - value
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
    m = re.match(rf"^(?P<word>{_WORDS})\s+(?P<num>\d+[a-z]?|[IVXLC]+[a-z]?(?=[\s.-]|$))\s*(?:-\s*(?P<head>.*))?$", text)
    if m:  # "Buch 1 - Allgemeiner Teil", "Abschnitt I - Der IT-Planungsrat"
        return _structure(LEVEL_WORDS[m.group("word")], m.group("num"),
                          f"{m.group('word')} {m.group('num')}", m.group("head") or "")
    m = re.match(rf"^(?P<ord>\w+)\s+(?P<word>{_WORDS})\s*(?:-\s*(?P<head>.*))?$", text)
    if m and ordinal_value(m.group("ord")) is not None:
        return _structure(LEVEL_WORDS[m.group("word")], str(ordinal_value(m.group("ord"))),
                          f"{m.group('ord')} {m.group('word')}", m.group("head") or "")
    m = re.match(rf"^(?P<num>\d+[a-z]?)\.\s+(?P<word>{_WORDS})\s*(?:-\s*(?P<head>.*))?$", text)
    if m:  # "3. Abschnitt - Übergangs- und Schlußvorschriften", "1. Titel - Grundgehalt"
        return _structure(LEVEL_WORDS[m.group("word")], m.group("num"), f"{m.group('num')}. {m.group('word')}",
                          m.group("head") or "")
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
        self._ids: set[str] = set()
        self._containers: set[str] = set()

    def push(self, h: StructureHeading, *, depth: int = 0, page: int = 0, articles_before: int = 0,
             node_id: str | None = None) -> DeNode:
        """Open a structure node under the innermost open one it nests in. ``node_id``: a container
        unit (an Artikel or Anlage holding §§) is pushed with its unit id (``de:x:art:2``); any
        heading of its depth or above closes it."""
        rank = LEVEL_RANK[h.level]
        while self.stack and (self.stack[-1][0] > depth or
                              (self.stack[-1][0] == depth and (self.stack[-1][1].id in self._containers or
                                                               node_id is not None or
                                                               LEVEL_RANK[self.stack[-1][1].level] >= rank))):
            self.stack.pop()
        parent = self.stack[-1][1] if self.stack else None
        number = h.number
        if not number and node_id is None:  # unnumbered headings: position among unnumbered siblings of that level
            key = (parent.id if parent else None, h.level)
            self._unnumbered[key] = self._unnumbered.get(key, 0) + 1
            number = str(self._unnumbered[key])
        base = parent.id if parent else self.act_id
        if node_id is not None:
            self._containers.add(node_id)
        node_id = node_id or f"{base}:{h.level}:{number}"
        while node_id in self._ids:  # a repeated label (rare): keep ids unique
            node_id += "'"
        self._ids.add(node_id)
        node = DeNode(h.level, number, node_id, heading=h.heading, status=h.status, page=page,
                      parent_id=parent.id if parent else None, articles_before=articles_before, label=h.label)
        self.nodes.append(node)
        self.stack.append((depth, node))
        return node

    def close_containers(self) -> None:
        """Close the open container unit (an Artikel or Anlage holding §§) and what nests in it: the
        next Artikel, Anlage or the Schlussformel is not inside it."""
        while self.container is not None:
            self.stack.pop()

    @property
    def container(self) -> DeNode | None:
        """The innermost open container unit (its id scopes the §§ inside: ``de:x:art:2:par:1``)."""
        return next((n for _, n in reversed(self.stack) if n.id in self._containers), None)

    @property
    def path(self) -> list[DeNode]:
        return [n for _, n in self.stack]


_NORMAL = (("\u00a0", " "), ("\ufffe", "-"), ("\u00ad", ""), *((c, '"') for c in "„“”″"), *((c, "'") for c in "‚‘’′`"),
           *((c, "-") for c in "‒–—‐−"), ("*)", ""))
_SPACE_BEFORE_RE = re.compile(r" ([,.;:)])")
_SPACE_AFTER_PAREN_RE = re.compile(r"\( ")


def normalize_text(text: str) -> str:
    """Comparable form of a text: NFC, one kind of quote/dash/space, no footnote markers.
    (Plain replaces and two compiled patterns: the whole corpus is hashed through it.)"""
    t = unicodedata.normalize("NFC", text or "")
    for char, repl in _NORMAL:  # str.replace where present: ~10x faster than str.translate with a dict
        if char in t:
            t = t.replace(char, repl)
    t = " ".join(t.split())
    if " " in t:
        t = _SPACE_BEFORE_RE.sub(r"\1", t)
    if "(" in t:
        t = _SPACE_AFTER_PAREN_RE.sub("(", t)
    return t


def strip_repealed(title: str) -> tuple[str, bool]:
    m = re.search(r"\s*\((weggefallen|aufgehoben)\)\s*$", title)
    if m:
        return title[:m.start()].strip(), True
    return title.strip(), False


def section_id(act: GermanAct, kind: str, number: str, scope: str | None = None) -> str:
    """``de:bgb:par:573b``; ``de:gg:praeambel``; inside a container unit ``scope`` (its id,
    ``de:x:art:2``) the § is ``de:x:art:2:par:1``; the text of an act without units ``de:x:text``."""
    if kind == "preamble":
        word = number.lower().replace("ä", "ae").replace("ö", "oe").replace("ü", "ue").replace("ß", "ss")
        return f"{act.act_id}:{re.sub(r'[^a-z]', '', word)}"
    if kind == "text":
        return f"{act.act_id}:text"
    base = f"{scope or act.act_id}:{UNIT_TAG[kind]}"
    return f"{base}:{number}" if number else base  # an unnumbered "Anlage": de:x:anl


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
        text = " ".join(b.text.split())
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
                   path: list[DeNode], page: int | None = None, note: str = "", scope: str | None = None
                   ) -> list[Section]:
    """One row per § of ``§§ 3 bis 6 (weggefallen)``."""
    label = f"{'§§' if kind == '§' else 'Art'} {first} {op} {last}"
    out = []
    for number in expand_range(first, last, op):
        s = Section(section_id(act, kind, number, scope), number, kind, "", list(path), page_start=page,
                    page_end=page, range_label=label)
        if repealed:
            s.status, s.status_note = "repealed", note or "(weggefallen)"
        else:
            s.status, s.status_note = "pending", "(ohne Text)"
        finish_section(s)
        out.append(s)
    return out


SECTION_HEADING_RE = re.compile(
    r"^(?:\(XXXX\)\s*)?(?P<kind>§§?|Artikel|Art\.?)\s*(?P<num>\d+[a-z]*|[IVXLC]+[a-z]?(?=\s|$))"
    r"(?:\s+(?P<op>bis|und|u\.)\s+(?:(?:§|Artikel|Art\.?)\s*)?(?P<last>\d+[a-z]*|[IVXLC]+[a-z]?(?=\s|$)))?"
    r"(?P<title>(?:\s.*)?)$")


def parse_section_heading(text: str) -> tuple[str, str, str | None, str | None, str] | None:
    """``§ 573b Teilkündigung des Vermieters`` → (kind, number, op, last, title); ``Artikel 2``
    and ``Art II`` are Artikel (a Roman number as printed); ``§§ 1 bis § 4``, ``Art 1 u. 2`` ranges."""
    m = SECTION_HEADING_RE.match(text.strip())
    if not m:
        return None
    kind = "§" if m.group("kind").startswith("§") else "Art"
    num, last = m.group("num"), m.group("last")
    if kind == "§" and (not num[0].isdigit() or (last and not last[0].isdigit())):
        return None  # Roman numbers are Artikel only
    if m.group("kind") == "§§" and not m.group("op"):
        return None
    title = (m.group("title") or "").strip()
    return kind, num, m.group("op"), last, re.sub(r"^-(\s+|$)", "", title)  # "Art 7 - Übergangsbestimmungen"


# ----------------------------------------------------------------------------------------------
# wrapped lines


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
