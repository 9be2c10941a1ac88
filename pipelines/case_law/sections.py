"""Split a decision's clean text into its sections (Tenor, Tatbestand, Entscheidungsgründe, …).

Why headings only: German decisions announce their parts with fixed words — Leitsatz, Tenor,
Tatbestand, Entscheidungsgründe / Gründe, Rechtsmittelbelehrung — printed as a heading line
(``<h2>Tenor</h2>``, ``## Gründe``, juris ``<h4>Leitsatz</h4>``) or as a paragraph of its own,
sometimes letter-spaced ("T e n o r", "G r ü n d e :", "L e i t s a t z" in BVerfG pages). A line
is a section heading when, after undoing the letter spacing and dropping a trailing colon, it *is*
one of these words — never when the word merely occurs in a sentence. Text before the first heading
is the ``rubrum`` (court, parties, file number); a decision without any heading is one ``body``
section, so every character of the text belongs to exactly one section.

Outline numbers inside the reasons ("I.", "II.", "A.") are not sections: they differ from court to
court and carry no fixed meaning.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipelines.case_law.html_text import CleanText

# canonical name → the heading words (lower case, letter spacing undone) that open it
SECTION_HEADINGS: dict[str, tuple[str, ...]] = {
    "leitsatz": ("leitsatz", "leitsätze", "leitsaetze", "amtlicher leitsatz", "amtliche leitsätze"),
    "orientierungssatz": ("orientierungssatz", "orientierungssätze"),
    "tenor": ("tenor", "urteilsformel", "entscheidungsformel", "beschlussformel"),
    "tatbestand": ("tatbestand", "sachverhalt"),
    "entscheidungsgruende": ("entscheidungsgründe", "entscheidungsgruende"),
    "gruende": ("gründe", "gruende", "beschlussgründe"),
    "tatbestand_und_entscheidungsgruende": ("tatbestand und entscheidungsgründe",
                                            "sachverhalt und entscheidungsgründe"),
    "rechtsmittelbelehrung": ("rechtsmittelbelehrung", "rechtsbehelfsbelehrung",
                              "rechtsmittelbelehrungen", "rechtsbehelfsbelehrungen"),
    "normenkette": ("normenkette",),
    "abweichende_meinung": ("abweichende meinung", "sondervotum"),
}
_LOOKUP = {word: name for name, words in SECTION_HEADINGS.items() for word in words}
FALLBACK = "body"
BEFORE_FIRST = "rubrum"
MAX_HEADING_CHARS = 60  # a heading line is short; a sentence that happens to be "Gründe" is not


@dataclass(frozen=True)
class Section:
    """``text[start:end]`` is the whole section (heading line included); ``body_start`` is where
    its content starts (after the heading line and its newline)."""

    name: str  # canonical: tenor | tatbestand | entscheidungsgruende | gruende | leitsatz | … | rubrum | body
    label: str  # the heading as printed ("G r ü n d e :"), "" for rubrum/body
    start: int
    end: int
    body_start: int
    index: int  # 0-based position in the decision


def _unspace(line: str) -> str:
    """'T e n o r' → 'tenor', 'G r ü n d e :' → 'gründe', 'Entscheidungsgründe:' → 'entscheidungsgründe'."""
    s = unicodedata.normalize("NFC", line).strip().rstrip(":.").strip()
    tokens = s.split(" ")
    # letter spacing: runs of single letters separated by single spaces, words split by 2+ spaces
    if len(tokens) >= 3 and sum(len(t) == 1 for t in tokens if t) >= 0.7 * len([t for t in tokens if t]):
        words = re.split(r"\s{2,}", s)
        s = " ".join(w.replace(" ", "") for w in words)
    return re.sub(r"\s+", " ", s).lower()


def heading_name(line: str) -> str | None:
    """The canonical section a line opens, or None when it is not a section heading."""
    if not line or len(line) > MAX_HEADING_CHARS * 2:
        return None
    key = _unspace(line)
    if len(key) > MAX_HEADING_CHARS:
        return None
    return _LOOKUP.get(key)


def split_sections(clean: CleanText) -> list[Section]:
    """Sections of a decision, in order, covering the whole text without overlap."""
    text = clean.text
    heads: list[tuple[int, int, str, str]] = []  # (line start, line end, name, label)
    for b in clean.blocks:
        if b.rn:  # a numbered paragraph is content, whatever it says
            continue
        line = text[b.start:b.end]
        name = heading_name(line)
        if name:
            heads.append((b.start, b.end, name, line.strip()))
    if not text:
        return []
    if not heads:
        return [Section(FALLBACK, "", 0, len(text), 0, 0)]
    sections: list[Section] = []
    if heads[0][0] > 0:
        sections.append(Section(BEFORE_FIRST, "", 0, heads[0][0] - 1, 0, 0))
    for k, (start, end, name, label) in enumerate(heads):
        stop = heads[k + 1][0] - 1 if k + 1 < len(heads) else len(text)  # -1: the newline before the next heading
        body_start = min(end + 1, stop) if end < stop else stop
        sections.append(Section(name, label, start, max(stop, end), body_start, len(sections)))
    return [Section(s.name, s.label, s.start, s.end, s.body_start, i) for i, s in enumerate(sections)]
