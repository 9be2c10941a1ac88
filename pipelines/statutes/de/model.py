"""The German statute model both German parsers fill, and the German acts (from the act registry).

Why a module of its own: :mod:`~pipelines.statutes.de.markdown` (bundestag/gesetze Markdown) and
:mod:`~pipelines.statutes.de.pdf` (gesetze-im-internet PDF) produce the same :class:`GermanStatute`
of :class:`Section` rows and :class:`DeNode` units, which :mod:`~pipelines.statutes.de.tables`
writes, :mod:`~pipelines.statutes.de.sources_compare` compares and the build publishes; none of
them should depend on one parser to reach the model of the other.

Which acts are German acts is the registry's (``schemas/acts.toml``): :func:`german_acts` reads it
at call time, so a registry set for a test or a run (``$LEXPIPE_ACT_REGISTRY``) is what the
parsers, the build and the citation linker see.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.statutes.model import Node
from schemas.acts import registry


class GermanStatuteError(ValueError):
    """The file is not a German statute of the expected kind (message names the file and why)."""


@dataclass(frozen=True)
class GermanAct:
    act_id: str  # de:bgb
    abbreviation: str  # BGB (jurabk)
    title: str  # Bürgerliches Gesetzbuch
    unit: str = "§"  # "§" or "Art" (Grundgesetz)


GERMAN_UNITS = ("§", "Art")  # the numbered unit of a German act: § (most laws) or Art (Grundgesetz)


def german_acts() -> dict[str, GermanAct]:
    """Slug → :class:`GermanAct` of every German act in the registry, in registry order
    (``bgb`` → ``GermanAct("de:bgb", "BGB", "Bürgerliches Gesetzbuch", "§")``): the abbreviation is
    the registry's ``citation`` (the jurabk), the unit its ``article_unit``. Read at call time.
    A German row whose unit is not "§" or "Art" (the registry's default is the Polish "art") raises
    :class:`GermanStatuteError` naming the registry file and the act."""
    reg = registry()
    acts = reg.of_jurisdiction("de")
    for a in acts:
        if a.article_unit not in GERMAN_UNITS:
            raise GermanStatuteError(f"{reg.path or 'act registry'}: German act {a.id} needs article_unit "
                                     f"{' or '.join(map(repr, GERMAN_UNITS))}, got {a.article_unit!r}")
    return {a.slug: GermanAct(a.id, a.citation, a.title, a.article_unit) for a in acts}


# ----------------------------------------------------------------------------------------------
# model


@dataclass
class DeNode(Node):
    """A :class:`~pipelines.statutes.model.Node` plus the label as printed, and for a
    structure heading its official notes ("Amtlicher Hinweis: Dieser Titel dient der Umsetzung …"),
    kept so a parse loses no source text (:mod:`pipelines.statutes.de.source_fidelity`)."""
    label: str = ""  # "Buch 1", "Erster Abschnitt", "I.", "§ 573b", "(1)", "1.", "a)"
    notes: list[str] = field(default_factory=list)


# the article-level unit kinds (ARTICLES rows) and their id tags: § (``par``), Art./Artikel (``art``), a
# numbered heading of an act without §§ ("I.", "1.": ``nr``), Anlage (``anl``), Anhang (``anh``), the
# formulas (Eingangsformel, Präambel, Schlussformel: their own names as ids) and the text of an act
# with no numbered unit at all (``text``); see the id scheme in :mod:`pipelines.statutes.de.markdown`
SECTION_KINDS = ("§", "Art", "Nr", "Anlage", "Anhang", "preamble", "text")
UNIT_TAG = {"§": "par", "Art": "art", "Nr": "nr", "Anlage": "anl", "Anhang": "anh"}


@dataclass
class Section:
    """One article-level unit: a § (or Art.), a numbered heading, an Anlage, a formula or an act's text."""
    id: str
    number: str  # "573b"; "Präambel" for the GG preamble; "I" for "I."; "text" for an act's text
    kind: str  # one of SECTION_KINDS
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
    order_key: int | None = None  # ARTICLES sort_key when the parser sets one (Markdown: see markdown.order_keys)
    display: str = ""  # the label when the parser sets one ("I.", "AarhusÜbk" for an act's text)

    @property
    def label(self) -> str:
        if self.display:
            return self.display
        if self.kind == "preamble":
            return self.number
        if self.kind in ("Anlage", "Anhang"):
            return f"{self.kind} {self.number}".strip()
        if self.kind == "Nr":
            return f"{self.number}."
        if self.kind == "text":
            return "Text"
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
    metadata_only: bool = False  # the source prints no text: one ``text`` row holds the metadata

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


# ----------------------------------------------------------------------------------------------
# numbers


def section_sort_key(number: str) -> int | None:
    m = re.match(r"^(\d+)([a-z]*)$", number)
    if not m:
        return None
    letters = m.group(2)
    return int(m.group(1)) * 1000 + sum((ord(c) - 96) * 27 ** i for i, c in enumerate(reversed(letters)))


_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
ROMAN_RE = re.compile(r"^(?=[IVXLCDM])M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")


def roman_value(numeral: str) -> int | None:
    """``IV`` → 4, ``XIV`` → 14; None for anything that is not a Roman numeral."""
    if not numeral or not ROMAN_RE.match(numeral):
        return None
    total = 0
    for a, b in zip(numeral, numeral[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN[b] > v else v
    return total


def unit_number_key(number: str) -> int | None:
    """The natural order of a printed unit number: ``573b`` as :func:`section_sort_key`, a Roman
    ``IV`` (Artikel IV, Nummer IV.) or ``IVa`` as 4 (plus its letters), a capital ``B`` (Nummer B.) as 2.
    None for a number without an order (``Präambel``)."""
    key = section_sort_key(number)
    if key is not None:
        return key
    m = re.match(r"^([IVXLCDM]+)([a-z]?)$", number)
    if m and roman_value(m.group(1)) is not None:
        return roman_value(m.group(1)) * 1000 + (ord(m.group(2)) - 96 if m.group(2) else 0)
    if re.fullmatch(r"[A-Z]", number):
        return (ord(number) - 64) * 1000
    return None


def number_key(number: str) -> tuple[int, str]:
    m = re.match(r"^(\d+)([a-z]*)$", number)
    return (int(m.group(1)), m.group(2)) if m else (10 ** 9, number)

