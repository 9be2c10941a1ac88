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

Every federal act, both eras of the format. The initial import ("Stand 2.7.2012") writes
``Title: !!python/unicode '…'`` without ``jurabk``, and some of its files print a footnote reference
and the long title above the ``---`` (:func:`split_front_matter`); the act id is ``de:<slug>`` with
the repository folder ``<letter>/<slug>/index.md`` exactly (``de:1-dm-goldmuenzg``), the
abbreviation the ``jurabk`` or the ``# Title (ABBR)`` heading's. The article-level units (ARTICLES
rows) and their ids, version-free and the same in both eras:

* ``§ N`` → ``de:x:par:N``; ``Art N``, ``Art. N``, ``Artikel N`` (a treaty act), Roman ``Art II`` →
  ``de:x:art:N``;
* an Artikel followed by §§ before the next Artikel holds them (an omnibus act: ``Art 97 -
  Übergangsvorschriften`` then ``§ 1``): it is a structure node ``de:x:art:97`` (level ``part``) and
  its §§ are ``de:x:art:97:par:1`` — the § 1 of three Artikel are three units; only the container
  scopes the id, never the Abschnitt a § sits in;
* in an act without § or Art before its Anlagen: a numbered heading (``I.``, ``1.``, ``A.``) →
  ``de:x:nr:I``; an Anlage or Anhang → ``de:x:anl:1`` / ``de:x:anh:1`` (unnumbered ``de:x:anl``),
  holding every heading up to the next one as lines of its text, or, when §§ follow it, their
  container (``de:x:anl:1:par:3``); text under any other heading (``(XXXX)``, ``Geltungsbereich``)
  → the act's text unit ``de:x:text`` (Nummern below it: ``de:x:text:nr:1``);
* Eingangsformel, Präambel, Schlussformel (Schlußformel) → ``de:x:eingangsformel``, ``…:praeambel``,
  ``…:schlussformel``;
* an act the source prints no text of (a treaty published in BGBl. II: title and metadata only) →
  one ``de:x:text`` row holding the metadata as printed (``GermanStatute.metadata_only``).

A number printed twice keeps the wording: a placeholder ("§ 55 (weggefallen)", a "-") gives way to
the same number with text; two texts are both kept, the second as ``…'``. In an act with §§, the
Anlagen are not parsed (``GermanStatute.annexes``), as before. ``order_key`` (ARTICLES ``sort_key``)
follows the printed numbers and starts a new segment where the printed order goes back
(:func:`order_keys`). Measured with ``bench/german_catalogue_parse.py``: every act of both commits
parses (6,183 in 2012, 6,636 in 2022), see BENCHMARKS.md.

What both German parsers share lives beside this module: the model (:class:`~pipelines.statutes.de.model.Section`,
:class:`~pipelines.statutes.de.model.GermanStatute`) in :mod:`pipelines.statutes.de.model`, the
Absatz/Nummer/Buchstabe builder (:func:`~pipelines.statutes.de.structure.build_units` over
:class:`~pipelines.statutes.de.structure.Block`) and the heading rules in
:mod:`pipelines.statutes.de.structure`; the Arrow builders (``articles_table``, ``nodes_table``,
``acts_table``) producing ``schemas.arrow`` ARTICLES / NODES / ACTS tables in
:mod:`pipelines.statutes.de.tables`.

Schema notes: the § title ("Teilkündigung des Vermieters") is ARTICLES ``title``, the last element
of ``path_text`` (``… › § 573b Teilkündigung des Vermieters``) and the ``heading`` of the article
node in NODES. Structural levels use :data:`~pipelines.statutes.de.structure.STRUCTURE_LEVELS` names,
all of them in ``schemas.arrow.LEVELS`` (:data:`~pipelines.statutes.de.structure.LEVELS_NOT_IN_SCHEMA`
stays as a guard and is empty).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from pipelines.statutes.de.model import (
    DeNode, GermanAct, GermanStatute, GermanStatuteError, Section, german_acts, unit_number_key,
)
from pipelines.statutes.de.structure import (
    ABS_RE, LIT_RE, NR_RE, REPEALED_RE, Block, StructureHeading, StructureStack, build_units, finish_section,
    join_wrapped, parse_section_heading, parse_structure_heading, range_sections, section_id, strip_repealed,
)

PARSER_VERSION = "de-6"  # de-2: content_hash over normalised text; de-3: structure headings keep their notes;
#                          de-4: the publisher's footnotes ("-----" area, "\*)" notes and references) out of
#                          the text; a "-" body alone is a repealed unit (GG 2012 Art. 49); de-5: every
#                          federal act (both eras, folder slugs, containers, Nr/Anlage/text units); de-6: an
#                          Anlage's "(zu § …)" note printed above its heading goes into the heading


# ----------------------------------------------------------------------------------------------
# Markdown


FRONT_MATTER_RE = re.compile(r"\A---\s*\n(?P<yaml>.*?)\n---\s*\n", re.S)
_HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_FOOTREF_RE = re.compile(r"\[\^[^\]]+\]")
_FOOTDEF_RE = re.compile(r"^\[\^(?P<id>[^\]]+)\]:\s*(?P<text>.*)$")
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>\"'])")
_DATE_RE = re.compile(r"\bv\.\s*(\d{1,2})\.(\d{1,2})\.(\d{4})")
# the publisher's footnotes (juris, in the older bundestag/gesetze files): a rule "-----" under the
# last Absatz, then the notes; a note "\*) Zum Stichtag …" printed with a hanging indent; the
# reference "\*)" in the text or heading
_RULE_RE = re.compile(r"^-{3,}\s*$")
DASHES = ("-", "–")  # a unit body of only these: the source's placeholder of a repealed unit
_STAR_NOTE_RE = re.compile(r"^\\\*\)\s*(?P<text>.*)$")
_STAR_REF_RE = re.compile(r"[ \t]*\\\*\)")
_BULLET_RE = re.compile(r"^[*\-+]\s+(?P<rest>.*)$", re.S)
_NR_LINE_RE = re.compile(r"^\s*\d+[a-z]?\.\s")
_LIT_LINE_RE = re.compile(r"^\s*[a-z]{1,2}\)\s")


_LEAD_RE = re.compile(r"\A(?P<lead>(?:[^\n]*\n){1,8}?)---[ \t]*\n(?P<yaml>.*?)\n---[ \t]*\n", re.S)


@dataclass
class FrontMatter:
    """The front matter of a bundestag/gesetze file: the lines printed before it (the 2012 import
    prints a footnote reference and the act's long title above the ``---`` of some files), its YAML
    text and the body after it."""
    lead: list[str]
    yaml: str
    body: str


def split_front_matter(raw: str) -> FrontMatter | None:
    """``---`` YAML ``---`` at the top of the file, or after at most 8 lines of text (no heading
    among them: the title lines of the 2012 import); None when the file has no front matter."""
    m = FRONT_MATTER_RE.match(raw)
    if m:
        return FrontMatter([], m.group("yaml"), raw[m.end():])
    m = _LEAD_RE.match(raw)
    if m:
        lead = [ln.strip() for ln in m.group("lead").split("\n") if ln.strip()]
        if lead and not any(ln.startswith("#") for ln in lead):
            return FrontMatter(lead, m.group("yaml"), raw[m.end():])
    return None


def _yaml_loader():
    """A safe YAML loader that reads the 2012 import's ``!!python/unicode 'Title'`` tags as strings
    (the C loader: ~20 µs a file)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    for tag in ("tag:yaml.org,2002:python/unicode", "tag:yaml.org,2002:python/str"):
        Loader.add_constructor(tag, lambda loader, node: loader.construct_scalar(node))
    return Loader


_LOADER = None


def _front_matter(text: str, path: Path) -> tuple[dict[str, str], str, list[str]]:
    """(front matter, body, lead lines). Refuses a file without front matter, with front matter
    that is not YAML, or without a slug: ``jurabk``/``slug`` in the front matter or the
    ``<letter>/<slug>/index.md`` folder of the repository."""
    global _LOADER
    fm = split_front_matter(text)
    if fm is None:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: no YAML front matter (--- … ---)")
    import yaml

    if _LOADER is None:
        _LOADER = _yaml_loader()
    try:
        meta = yaml.load(fm.yaml, Loader=_LOADER)  # noqa: S506 (a safe loader plus two string tags)
    except yaml.YAMLError as exc:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: front matter is not YAML ({exc})") from exc
    if not isinstance(meta, dict):
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: front matter is not a mapping")
    meta = {str(k): str(v).strip() for k, v in meta.items() if v is not None}
    if "Title" not in meta or not (meta.get("jurabk") or meta.get("slug") or _folder_slug(path)):
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: front matter lacks Title and jurabk/slug")
    return meta, fm.body, fm.lead


def _folder_slug(path: Path) -> str | None:
    """``b/bgb/index.md`` → ``bgb``: the repository's folder name is the act's slug."""
    return path.parent.name if path.name == "index.md" and path.parent.name else None


def _unescape(line: str) -> str:
    if "[^" in line:
        line = _FOOTREF_RE.sub("", line)
    if "\\*)" in line:  # the publisher's footnote reference "\*)" (its note: _markdown_blocks)
        line = _STAR_REF_RE.sub("", line)
    if "*" in line:
        line = line.replace("**", "")
    return _ESCAPE_RE.sub(r"\1", line) if "\\" in line else line


_WIDE_GAP_RE = re.compile(r"(?<=[^\W\d_]) {5,}(?=([a-zäöüß]+))")


def markdown_vocabulary(body: str) -> set[str]:
    """Lower-case words standing alone in the text (not right after a wide gap)."""
    return set(re.findall(r"\b[a-zäöüß]+\b", re.sub(r"(?<=\w) {5,}[a-zäöüß]+", " ", body)))


class LazyVocabulary:
    """:func:`markdown_vocabulary` of a body, computed at the first wide gap that needs it (most
    files have none: the word scan of the whole file is a tenth of a parse)."""

    def __init__(self, body: str):
        self.body, self.words = body, None

    def __contains__(self, word: str) -> bool:
        if self.words is None:
            self.words = markdown_vocabulary(self.body)
        return word in self.words


def close_wide_gaps(line: str, vocabulary: set[str] | LazyVocabulary | None) -> str:
    """The Markdown renders some inline elements of the source as a run of spaces inside a word
    ("Reichs             behörden"). A wide gap before a lower-case piece that never stands alone
    in the document is closed; before a real word ("Deutschland              in der") it is one space."""
    if vocabulary is None or "     " not in line:
        return line
    return _WIDE_GAP_RE.sub(lambda m: " " if m.group(1) in vocabulary else "", line)


def _markdown_blocks(lines: list[str], vocabulary: set[str] | LazyVocabulary | None = None
                     ) -> tuple[list[Block], list[tuple[str, str]], list[str]]:
    """Body lines of one heading → blocks, footnote definitions ``(id, text)`` and the publisher's
    notes (texts).

    Pandoc lists: ``1.  text`` with continuation indented by 4, nested ``a)`` items indented by 4
    more, free text inside an item indented like its content; blocks are separated by blank lines.

    The publisher's footnotes are no text of the unit: everything after a rule line ``-----`` (the
    older files print the footnotes of a § below one, ZPO 2012 § 115, § 850c), and a paragraph
    opening with ``\\*)`` whose further lines hang indented under it (the note of a ``\\*)``
    reference, also without a rule: the Anlage zu § 850c). They go to the notes, so an edition that
    drops or rewords such a note does not change the unit's text (:func:`diff_german`).
    """
    groups: list[list[str]] = []
    cur: list[str] = []
    after_rule: list[list[str]] = []  # groups below a "-----" rule: the publisher's footnote area
    for ln in lines:
        if after_rule:
            if ln.strip():
                after_rule[-1].append(ln.rstrip())
            elif after_rule[-1]:
                after_rule.append([])
        elif _RULE_RE.match(ln):
            if cur:
                groups.append(cur)
                cur = []
            after_rule.append([])
        elif ln.strip():
            cur.append(ln.rstrip())
        elif cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    blocks: list[Block] = []
    notes: list[tuple[str, str]] = []
    publisher: list[str] = []
    in_note = False  # the previous group was (part of) a footnote definition
    in_star = False  # the previous group was (part of) a publisher's "\\*)" note

    def flat(text: str) -> str:
        return " ".join(text.split())

    for g in (g for g in after_rule if g):
        d = _FOOTDEF_RE.match(g[0].strip())
        if d:  # a [^id] note keeps its id (its reference in the text resolves to it)
            notes.append((d.group("id"), flat(_unescape(" ".join([d.group("text")] + [x.strip() for x in g[1:]])))))
            continue
        star = _STAR_NOTE_RE.match(g[0].strip())
        body = flat(_unescape(" ".join([star.group("text") if star else g[0].strip()] + [x.strip() for x in g[1:]])))
        if star or not publisher:
            publisher.append(body)
        else:  # a note's further paragraph
            publisher[-1] = flat(f"{publisher[-1]} {body}")
    for g in groups:
        first = g[0]
        d = _FOOTDEF_RE.match(first.strip())
        if d:
            body = " ".join([d.group("text")] + [x.strip() for x in g[1:]])
            notes.append((d.group("id"), flat(_unescape(body))))
            in_note = True
            continue
        star = _STAR_NOTE_RE.match(first.strip())
        if star and first.startswith("\\*)") and all(x.startswith("    ") for x in g[1:]):
            publisher.append(flat(_unescape(" ".join([star.group("text")] + [x.strip() for x in g[1:]]))))
            in_note, in_star = False, True
            continue
        if in_star and first.startswith("    "):  # the note's further paragraph, indented under it
            publisher[-1] = flat(f"{publisher[-1]} {_unescape(' '.join(x.strip() for x in g))}")
            continue
        in_star = False
        if in_note and first.startswith("    "):
            # a footnote's own paragraphs ("2.  der Richtlinie 77/187/EWG …") are indented under it:
            # they continue the note, they are no Nummer of the § or heading above it
            body = " ".join(x.strip() for x in g)
            nid, prev = notes[-1]
            notes[-1] = (nid, flat(f"{prev} {_unescape(body)}"))
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
        m = _BULLET_RE.match(text) if text[:1] in "*-+" else None
        if m:  # a bullet (oath formulas): free text of its container
            blocks.append(Block("text", "", m.group("rest"), indent // 4))
            continue
        m = ABS_RE.match(text)
        if m and indent == 0:
            blocks.append(Block("abs", m.group("num"), text, 0))
            continue
        m = NR_RE.match(text)
        if m and _NR_LINE_RE.match(first):
            blocks.append(Block("nr", m.group("num"), text, indent // 4))
            continue
        m = LIT_RE.match(text)
        if m and _LIT_LINE_RE.match(first):
            blocks.append(Block("lit", m.group("num"), text, indent // 4))
            continue
        blocks.append(Block("text", "", text, indent // 4))
    return blocks, notes, publisher


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


_TITLE_RE = re.compile(r"^(?P<title>.*?)\s*\((?P<abbr>[^()]*)\)\s*$")
_ANNEX_RE = re.compile(r"^(?:\(XXXX\)\s*)?(?P<word>Anlagen|Anlage|Anhang)\b\s*"
                       r"(?P<num>(?:\d+[a-z]?|[IVXLC]+|[A-Z])(?=[\s.:)]|$))?\.?\s*(?P<title>.*)$")
_NUMBERED_RE = re.compile(r"^(?P<num>[IVXLC]+|\d+[a-z]?|[A-Z])\.(?:\s+(?P<title>.*))?$")
FORMULAS = ("Eingangsformel", "Präambel", "Schlussformel", "Schlußformel")
PLACEHOLDER = "(XXXX)"  # bundestag/gesetze's mark of an unlabelled heading
SEGMENT = 10 ** 14  # see order_keys
CONTAINER_SCALE = 10 ** 7  # see order_keys


_ANNEX_NOTE_RE = re.compile(r"^\((?:zu|zur|zum)\s[^()]*(?:\([^()]*\)[^()]*)*\)$")


def _annex_notes_into_headings(sections_raw: list[tuple[int, str, list[str]]]) -> None:
    """An Anlage's reference note ("(zu § 2 Abs. 7 Satz 1)") printed as the last paragraph above its
    heading goes into the heading ("Anlage 2 (zu § 2 Abs. 7 Satz 1) Bescheinigung"), in place.

    Why: the converter printed it above the heading until its fixes of 2012-10-18 (``Merge branch
    'fixes'``, 80 acts, 140 notes moved into the headings). Read as printed, the note ended the unit
    before the Anlage (the Schlussformel, the last §), and that commit showed 38 such units as
    ``changed``: wording no amendment made. Both layouts now parse to the same units."""
    for i in range(1, len(sections_raw) - 1):
        depth, text, body = sections_raw[i + 1]
        m = _ANNEX_RE.match(text)
        if not m or "(zu" in text:
            continue
        prev = sections_raw[i][2]
        end = len(prev)
        while end and not prev[end - 1].strip():
            end -= 1
        start = end
        while start and prev[start - 1].strip() and end - start < 4:
            start -= 1
        if start and prev[start - 1].strip():
            continue  # the paragraph is longer than a note
        note = " ".join(ln.strip() for ln in prev[start:end])
        if not _ANNEX_NOTE_RE.match(note):
            continue
        del prev[start:end]
        cut = m.end("num") if m.group("num") else m.end("word")
        rest = text[cut:].strip()
        sections_raw[i + 1] = (depth, f"{text[:cut]} {note}" + (f" {rest}" if rest else ""), body)


@dataclass
class _Heading:
    depth: int
    text: str
    lines: list[str]
    kind: str  # unit | formula | annex | structure | numbered | placeholder | other
    parsed: object = None
    container: bool = False  # an Artikel (or Anlage) whose §§ follow it: a container unit


def _classify(depth: int, text: str, lines: list[str]) -> _Heading:
    if _ANNEX_RE.match(text):
        return _Heading(depth, text, lines, "annex", _ANNEX_RE.match(text))
    parsed = parse_section_heading(text)
    if parsed:
        return _Heading(depth, text, lines, "unit", parsed)
    if text.rstrip(":") in FORMULAS:
        return _Heading(depth, text.rstrip(":"), lines, "formula")
    sh = parse_structure_heading(text)
    if sh is not None:
        return _Heading(depth, text, lines, "structure", sh)
    if text == PLACEHOLDER:
        return _Heading(depth, text, lines, "placeholder")
    m = _NUMBERED_RE.match(text)
    if m and " - " not in text:
        return _Heading(depth, text, lines, "numbered", m)
    return _Heading(depth, text, lines, "other")


def _mark_containers(heads: list[_Heading], units_in_body: bool) -> None:
    """An Artikel followed by §§ (before the next Artikel) holds them: ``Art 97 - Übergangsvorschriften``
    then ``§ 1 Begonnene Verfahren`` (AOEG 1977), ``Art II`` then ``Abschnitt 1``, ``§ 10`` (BesVNG 1).
    In an act without §§ or Artikel before its Anlagen, an Anlage followed by §§ (before the next
    Anlage) holds them. Both scope the ids of their §§ (``de:x:art:97:par:1``)."""
    current: _Heading | None = None
    for h in heads:
        if h.kind == "unit" and h.parsed[0] == "Art":
            current = h if h.parsed[2] is None else None
        elif h.kind == "annex":
            if units_in_body:
                break  # the Anlagen of an act with §§ are not parsed (GermanStatute.annexes)
            current = h
        elif h.kind == "formula" and current is not None and current.kind == "annex":
            current = None
        elif h.kind == "unit" and h.parsed[0] == "§" and current is not None:
            current.container = True


def _is_empty(s: Section) -> bool:
    """A row without wording: a repealed or placeholder § ("§ 55 (weggefallen)", "§ 66" with "-")."""
    return s.status != "in_force" or not s.text.strip()


def _metadata_text(lines: list[str]) -> tuple[str, list[str]]:
    """The definition list under the title as text ("Ausfertigungsdatum: 1951-03-29", one line a
    term) and its footnotes: all an act holds whose text the source does not print (treaties
    published in BGBl. II: the file has the title and these lines only)."""
    out: list[str] = []
    notes: list[str] = []
    for ln in lines:
        if not ln.strip():
            continue
        d = _FOOTDEF_RE.match(ln.strip())
        if d:
            notes.append(_unescape(d.group("text")).strip())
        elif ln.startswith(":") and out:
            value = _unescape(ln.lstrip(":").strip())
            out[-1] = f"{out[-1]}: {value}" if not out[-1].endswith(": " + value) else out[-1]
        elif ln.startswith(" ") and notes:
            notes[-1] = f"{notes[-1]} {_unescape(ln.strip())}"
        elif ln.startswith(" ") and out:
            out[-1] = join_wrapped(out[-1], _unescape(ln.strip()))
        else:
            out.append(_unescape(ln.strip()))
    return "\n".join(out), notes


def order_keys(sections: list[Section], containers: dict[str, str]) -> None:
    """``order_key`` (the ARTICLES ``sort_key``) of every row, strictly increasing in document order.

    A numbered row's key is its printed number (:func:`~pipelines.statutes.de.model.unit_number_key`:
    ``§ 573b`` → 573002, ``Art II`` → 2000); in an act with container units (``containers``: row id →
    its container's number) every key is the container's number × 10^7 plus the § number (``Art 97 §
    1`` → 97000 × 10^7 + 1000), so §§ sort under their Artikel. A formula or text row follows its
    predecessor (+1; the GG's Eingangsformel and Präambel are 0 and 1). Where the printed order
    goes back — a new kind of unit (the Anlagen after the Nummern), a § printed out of order (KSVG
    prints § 52a after § 54; MTBG § 69 after §§ 70–76) — a new segment begins (+10^14), so the key
    orders rows as printed and its remainder still reads as the number. The six acts of the registry
    print their units in order: their keys are the printed numbers, as before."""
    scaled = bool(containers)
    prev, seg = -1, 0
    for s in sections:
        nat = None if s.kind in ("preamble", "text") else unit_number_key(s.number)
        if nat is not None and scaled:
            outer = containers.get(s.id)
            nat = (unit_number_key(outer) or 0) * CONTAINER_SCALE + nat if outer is not None \
                else nat * CONTAINER_SCALE
        if nat is None:
            key = prev + 1
        else:
            key = seg * SEGMENT + nat
            if key <= prev:
                seg = prev // SEGMENT + 1
                key = seg * SEGMENT + nat
        s.order_key = key
        prev = key


@dataclass
class _Open:
    """A unit still collecting text: an Anlage or a numbered heading (the headings inside it become
    lines of its text), or a run of the act's text outside any unit."""
    section: Section
    depth: int
    annex: bool = False
    blocks: list[Block] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    defs: list[tuple[str, str]] = field(default_factory=list)
    publisher: list[str] = field(default_factory=list)


class _Walk:
    """The state of one parse: the open structure, the rows so far, notes and references."""

    def __init__(self, act: GermanAct, vocabulary: LazyVocabulary, title: str):
        self.act, self.vocabulary, self.title = act, vocabulary, title
        self.stack = StructureStack(act.act_id)
        self.sections: list[Section | None] = []
        self.seen: dict[str, int] = {}
        self.notes: dict[str, str] = {}
        self.pending_refs: list[tuple[Section, list[str], list[str]]] = []
        self.annexes: list[str] = []
        self.containers: dict[str, str] = {}  # row id → number of its container unit
        self.open: _Open | None = None  # an Anlage or numbered heading collecting its sub-headings
        self.run: _Open | None = None  # the act's text outside any unit

    # rows ------------------------------------------------------------------------------------

    def add(self, s: Section) -> None:
        """Add a row. A number printed twice: a placeholder ("§ 55 (weggefallen)", a "-") beside
        the same number with text gives way to it; two texts are both kept, the second as ``…'``."""
        if s.id in self.seen:
            i = self.seen[s.id]
            old = self.sections[i]
            if old is not None and _is_empty(old) and not _is_empty(s):
                self.sections[i] = None
            elif _is_empty(s):
                return
            else:
                orig = s.id
                while s.id in self.seen:
                    s.id += "'"
                for u in s.units:  # its units follow the new id
                    u.id = s.id + u.id[len(orig):]
                    if u.parent_id and u.parent_id.startswith(orig):
                        u.parent_id = s.id + u.parent_id[len(orig):]
                if orig in self.containers:
                    self.containers[s.id] = self.containers[orig]
        self.seen[s.id] = len(self.sections)
        self.sections.append(s)

    def blocks(self, lines: list[str]) -> tuple[list[Block], list[tuple[str, str]], list[str]]:
        blocks, defs, publisher = _markdown_blocks(lines, self.vocabulary)
        self.notes.update(defs)
        return blocks, defs, publisher

    def finish(self, s: Section, blocks: list[Block], lines: list[str], defs: list[tuple[str, str]],
               publisher: list[str]) -> None:
        """Units, the "-" repeal and the notes: what every unit with a body gets."""
        if s.status == "in_force" and blocks and all(b.text.strip() in DASHES for b in blocks):
            # "-" as the whole body is how the source prints a repealed unit: under "§ 23
            # (weggefallen)" and, in the 2012 Grundgesetz, under a bare "Art 49" (2020: "Art 49
            # (weggefallen)"); the same repeal, shown another way
            s.status, s.status_note = "repealed", blocks[0].text.strip()
        refs = list(dict.fromkeys(r.strip("[]^") for ln in lines if "[^" in ln and not _FOOTDEF_RE.match(ln.strip())
                                  for r in _FOOTREF_RE.findall(ln)))
        build_units(s, blocks)
        # a note printed in the body that no reference of it points to is still its note
        # (older files: "[^…_001]" under § 651 BGB 2012, the rule area of § 850f ZPO 2012)
        own = [text for nid, text in defs if nid not in refs]
        self.pending_refs.append((s, refs, own + publisher))

    # open units and text runs -----------------------------------------------------------------

    def close(self) -> None:
        for o in (self.open, self.run):
            if o is not None:
                self.finish(o.section, o.blocks, o.lines, o.defs, o.publisher)
                self.add(o.section)
        self.open = self.run = None

    def start(self, s: Section, h: _Heading, *, annex: bool = False) -> None:
        self.close()
        self.open = _Open(s, h.depth, annex)
        self.extend(self.open, h, None)

    def extend(self, o: _Open, h: _Heading, heading_line: str | None) -> None:
        blocks, defs, publisher = self.blocks(h.lines)
        if heading_line:
            o.blocks.append(Block("text", "", heading_line, 0))
        o.blocks += blocks
        o.lines += h.lines
        o.defs += defs
        o.publisher += publisher

    def text_run(self, h: _Heading, heading_line: str | None, scope: str | None = None) -> None:
        """Text outside any unit: the act's text unit ``de:x:text`` (or ``<container>:text``, the
        own text of an Artikel holding §§); the headings inside it are lines of it."""
        if self.run is None:
            if heading_line is None and not any(b.text.strip() for b in _markdown_blocks(h.lines, self.vocabulary)[0]):
                self.blocks(h.lines)  # nothing to hold; its footnote definitions still count
                return
            sid = f"{scope}:text" if scope else section_id(self.act, "text", "text")
            self.run = _Open(Section(sid, "text", "text", self.title if not scope else "", self.stack.path), h.depth)
        self.extend(self.run, h, heading_line)

    def end_run(self) -> None:
        if self.run is not None:
            o, self.run = self.run, None
            self.finish(o.section, o.blocks, o.lines, o.defs, o.publisher)
            self.add(o.section)

    # headings ---------------------------------------------------------------------------------

    def container(self, h: _Heading, kind: str, number: str, label: str, title: str, status: str) -> None:
        """An Artikel (Anlage) that holds §§: a structure node with the unit's id; its own text, if
        any, is the row ``<id>:text``."""
        self.stack.close_containers()
        node = self.stack.push(StructureHeading("part", number, label, title, status), depth=h.depth,
                               articles_before=len(self.sections), node_id=section_id(self.act, kind, number))
        blocks, defs, publisher = _markdown_blocks(h.lines, self.vocabulary)
        if any(b.text.strip() for b in blocks):
            self.text_run(_Heading(h.depth, "", h.lines, "other"), None, scope=node.id)
            self.end_run()
        else:
            self.notes.update(defs)
            node.notes = [text for _, text in defs] + publisher

    def unit(self, h: _Heading) -> None:
        kind, number, op, last, stitle = h.parsed
        stitle, repealed = strip_repealed(stitle)
        if kind == "Art":
            self.stack.close_containers()  # Artikel do not nest in Artikel
        if h.container:
            self.container(h, "Art", number, f"Art {number}", stitle, "repealed" if repealed else "in_force")
            return
        holder = self.stack.container if kind == "§" else None
        scope = holder.id if holder is not None else None
        blocks, defs, publisher = self.blocks(h.lines)
        if op:
            body_repealed = any(REPEALED_RE.match(b.text.strip()) for b in blocks)
            for s in range_sections(self.act, kind, number, last, op, repealed=repealed or body_repealed,
                                    path=self.stack.path, scope=scope):
                if holder is not None:
                    self.containers[s.id] = holder.number
                self.add(s)
            return
        s = Section(section_id(self.act, kind, number, scope), number, kind, stitle, self.stack.path,
                    display=f"Artikel {number}" if h.text.startswith(("Artikel", "(XXXX) Artikel")) else "")
        if holder is not None:
            self.containers[s.id] = holder.number
        if repealed:
            s.status, s.status_note = "repealed", "(weggefallen)"
        self.finish(s, blocks, h.lines, defs, publisher)
        self.add(s)

    def formula(self, h: _Heading, *, after_units: bool) -> None:
        if after_units:
            self.stack.close_containers()  # the Schlussformel is the act's, not its last Artikel's
        s = Section(section_id(self.act, "preamble", h.text), h.text, "preamble", "", self.stack.path)
        blocks, defs, publisher = self.blocks(h.lines)
        build_units(s, blocks)
        s.footnotes = list(publisher)
        self.add(s)

    def structure(self, h: _Heading, sh: StructureHeading) -> DeNode:
        node = self.stack.push(sh, depth=h.depth, articles_before=len(self.sections))
        _, defs, publisher = self.blocks(h.lines)
        node.notes = [text for _, text in defs] + publisher  # notes printed under a structure heading belong to it
        return node


def parse_markdown(path: Path, *, act: GermanAct | None = None, version: dt.date | None = None) -> GermanStatute:
    """Parse one bundestag/gesetze law (both eras of the format: the 2012 import and the 2022 files).

    ``act`` defaults to the registry's German act of the slug (:func:`~pipelines.statutes.de.model.german_acts`),
    else ``de:<slug>``; the slug is the repository folder of ``<letter>/<slug>/index.md`` exactly
    (``de:1-dm-goldmuenzg``, ``de:bimschv_11_2004``), else the front matter's ``slug``. ``version``
    defaults to the latest amending act's date in the metadata, else the Ausfertigungsdatum. Raises
    :class:`GermanStatuteError` naming the file and the reason."""
    t0 = time.perf_counter()
    path = Path(path)
    if not path.is_file():
        raise GermanStatuteError(f"{path}: file not found")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GermanStatuteError(f"{path}: not a UTF-8 text file ({exc.reason})") from exc
    meta, body, lead = _front_matter(raw, path)

    lines = body.split("\n")
    # split into (heading, body lines)
    sections_raw: list[tuple[int, str, list[str]]] = []
    for ln in lines:
        h = _HEADING_RE.match(ln) if ln.startswith("#") else None
        if h:
            sections_raw.append((len(h.group("hashes")), _unescape(h.group("text")).strip(), []))
        elif sections_raw:
            sections_raw[-1][2].append(ln)
    if not sections_raw or sections_raw[0][0] != 1:
        raise GermanStatuteError(f"{path}: not a bundestag/gesetze law: no '# Title' heading after the front matter")
    heading = sections_raw[0][1]
    m = _TITLE_RE.match(heading)
    heading_title, heading_abbr = (m.group("title").strip(), m.group("abbr").strip()) if m else (heading, "")
    lead_title = " ".join(ln for ln in lead if not _FOOTREF_RE.fullmatch(ln)).strip()
    title = meta.get("Title") or heading_title or lead_title or heading_abbr
    abbreviation = meta.get("jurabk") or heading_abbr
    slug = _folder_slug(path) or meta.get("slug") or ""
    if act is None:
        slug = slug or re.sub(r"[^a-z0-9_-]+", "", (meta.get("jurabk") or "").lower())
        act = german_acts().get(slug) or GermanAct(f"de:{slug}", abbreviation or slug.upper(), title)
    elif (meta.get("jurabk") or heading_abbr).lower() != act.abbreviation.lower() and \
            slug != act.act_id.split(":", 1)[-1]:
        raise GermanStatuteError(f"{path}: not the {act.title} ({act.abbreviation}): front matter names "
                                 f"{title!r} ({abbreviation or slug})")
    metadata = _metadata(sections_raw[0][2])
    version = version or _version_from_metadata(metadata) or _date_from_meta(
        (metadata.get("Ausfertigungsdatum") or [None])[0])
    if version is None:
        raise GermanStatuteError(f"{path}: no text-state date in the metadata (Zuletzt geändert durch …, "
                                 "Ausfertigungsdatum); pass version=")
    based_on = "; ".join(metadata.get("Zuletzt geändert durch", []) or metadata.get("Stand", []))

    _annex_notes_into_headings(sections_raw)
    heads = [_classify(d, t, b) for d, t, b in sections_raw[1:]]
    first_annex = next((i for i, h in enumerate(heads) if h.kind == "annex"), len(heads))
    units_in_body = any(h.kind == "unit" for h in heads[:first_annex])
    _mark_containers(heads, units_in_body)
    w = _Walk(act, LazyVocabulary(body), title)
    if units_in_body:
        _walk_sectioned(w, heads)
    else:
        _walk_unsectioned(w, heads)
    w.close()
    sections = [s for s in w.sections if s is not None]
    metadata_only = False
    if not sections:  # the source prints no text of the act: its title and metadata are what it holds
        text, footnotes = _metadata_text(sections_raw[0][2])
        if not text:
            raise GermanStatuteError(f"{path}: not a law: neither units nor text nor metadata")
        s = Section(section_id(act, "text", "text"), "text", "text", title, [], text=text)
        s.footnotes = footnotes
        finish_section(s)
        sections, metadata_only = [s], True
    for s, refs, publisher in w.pending_refs:
        s.footnotes = list(dict.fromkeys([w.notes[r] for r in refs if r in w.notes] + publisher))
    order_keys(sections, w.containers)
    # the title as printed ("Bürgerliches Gesetzbuch (BGB)"); a heading without its title ("#  (AgrarAusbV)",
    # the 2012 import) takes the act's title
    printed = heading if heading_title else (f"{title} ({heading_abbr})" if heading_abbr else title)
    return GermanStatute(act, version, path, "markdown", printed, sections, w.stack.nodes,
                         based_on=based_on, annexes=w.annexes, parse_seconds=time.perf_counter() - t0,
                         metadata_only=metadata_only)


def _walk_sectioned(w: _Walk, heads: list[_Heading]) -> None:
    """An act of §§ or Artikel: its units, containers, formulas and structure; everything from the
    first Anlage or Anhang on is listed in ``annexes`` and not parsed (as before)."""
    in_annex = False
    seen_unit = False
    for h in heads:
        if in_annex or h.kind == "annex":
            in_annex = True  # appendices (Einigungsvertrag Maßgaben, …) are not units of the act
            w.annexes.append(h.text)
            continue
        if h.kind == "unit":
            w.unit(h)
            seen_unit = True
        elif h.kind == "formula":
            # "Eingangsformel", "Präambel" before the units; "Schlussformel" after them
            w.formula(h, after_units=seen_unit)
        else:
            sh = h.parsed if h.kind == "structure" else StructureHeading("group", "", "", h.text)
            w.structure(h, sh)


def _annex_unit(w: _Walk, h: _Heading) -> None:
    m = h.parsed
    kind = "Anhang" if m.group("word") == "Anhang" else "Anlage"
    number, title = m.group("num") or "", m.group("title").strip()
    display = f"{kind} {number}".strip()
    if m.group("word") == "Anlagen":  # "Anlagen 1 bis 3i, 4 und 5": one unit
        number, title, display = "", f"{m.group('num') or ''} {title}".strip(), "Anlagen"
    w.close()
    w.stack.close_containers()
    if h.container:
        w.container(h, kind, number, display, title, "in_force")
        return
    w.start(Section(section_id(w.act, kind, number), number, kind, title, w.stack.path, display=display), h,
            annex=True)


def _line(h: _Heading) -> str | None:
    """A heading inside a unit as a line of its text, without the "(XXXX)" mark of an unlabelled one."""
    text = h.text[len(PLACEHOLDER):].strip() if h.text.startswith(PLACEHOLDER) else h.text
    return text or None


def _walk_unsectioned(w: _Walk, heads: list[_Heading]) -> None:
    """An act without §§ or Artikel before its Anlagen: numbered headings ("I.", "1.") are units,
    each Anlage (Anhang) is a unit holding every heading to the next one (or a container of the §§
    it prints), the formulas are units, and text under any other heading is the act's text unit."""
    seen_unit = False
    for h in heads:
        o = w.open
        if o is not None and h.kind not in ("annex", "formula", "unit") and (o.annex or h.depth > o.depth):
            w.extend(o, h, _line(h))  # a heading inside the unit
            continue
        if h.kind == "annex":
            _annex_unit(w, h)
        elif h.kind == "unit":
            w.close()
            w.unit(h)
        elif h.kind == "formula":
            w.close()
            w.formula(h, after_units=seen_unit)
        elif h.kind == "numbered":
            num, title = h.parsed.group("num"), (h.parsed.group("title") or "").strip()
            title, repealed = strip_repealed(title)
            holder = w.stack.container
            s = Section(section_id(w.act, "Nr", num, holder.id if holder else None), num, "Nr", title,
                        w.stack.path)
            if holder is not None:
                w.containers[s.id] = holder.number
            if repealed:
                s.status, s.status_note = "repealed", "(weggefallen)"
            w.start(s, h)
        elif h.kind == "structure":
            w.close()
            w.structure(h, h.parsed)
            w.text_run(_Heading(h.depth, "", h.lines, "other"), None)
        else:  # "(XXXX)" or an unnumbered heading: text of the act, the heading a line of it
            if w.open is not None:
                w.close()
            w.text_run(h, _line(h))
        seen_unit = seen_unit or h.kind in ("annex", "unit", "numbered")


def _date_from_meta(value: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def parse_markdown_dir(directory: Path, slugs: Iterable[str] | None = None) -> dict[str, GermanStatute]:
    """All laws ``<slug>.md`` of a bundestag/gesetze folder, keyed by act id (``slugs`` default: every
    German act of the registry, :func:`~pipelines.statutes.de.model.german_acts`)."""
    acts = german_acts()
    out = {}
    for slug in (acts if slugs is None else slugs):
        st = parse_markdown(Path(directory) / f"{slug}.md", act=acts.get(slug))
        out[st.act.act_id] = st
    return out
