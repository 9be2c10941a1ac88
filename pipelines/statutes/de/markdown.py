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
from pathlib import Path
from typing import Iterable

from pipelines.statutes.de.model import GermanAct, GermanStatute, GermanStatuteError, Section, german_acts
from pipelines.statutes.de.structure import (
    ABS_RE, LIT_RE, NR_RE, REPEALED_RE, Block, StructureHeading, StructureStack, build_units, join_wrapped,
    parse_section_heading, parse_structure_heading, range_sections, section_id, strip_repealed,
)

PARSER_VERSION = "de-4"  # de-2: content_hash over normalised text; de-3: structure headings keep their notes;
#                          de-4: the publisher's footnotes ("-----" area, "\*)" notes and references) out of
#                          the text; a "-" body alone is a repealed unit (GG 2012 Art. 49)


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


def _front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    m = FRONT_MATTER_RE.match(text)
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
    if "\\*)" in line:  # the publisher's footnote reference "\*)" (its note: _markdown_blocks)
        line = _STAR_REF_RE.sub("", line)
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


def _markdown_blocks(lines: list[str], vocabulary: set[str] | None = None
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
        return re.sub(r"\s+", " ", text).strip()

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


def parse_markdown(path: Path, *, act: GermanAct | None = None, version: dt.date | None = None) -> GermanStatute:
    """Parse one bundestag/gesetze law. ``act`` defaults to the registry's German act of the front
    matter slug (:func:`~pipelines.statutes.de.model.german_acts`; ``de:<slug>`` for other laws); ``version`` to the latest amending act's date in the
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
        act = german_acts().get(slug) or GermanAct(f"de:{re.sub(r'[^a-z0-9]+', '', slug)}",
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
    pending_refs: list[tuple[Section, list[str], list[str]]] = []  # (§, [^id] references, publisher notes)
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
        blocks, defs, publisher = _markdown_blocks(body_lines, vocabulary)
        notes.update(defs)
        if in_annex or re.match(r"^(Anhang|Anlage)\b", heading):
            in_annex = True  # appendices (Einigungsvertrag Maßgaben, …) are not units of the act
            annexes.append(heading)
            continue
        parsed = parse_section_heading(heading)
        if parsed:
            kind, number, op, last, stitle = parsed
            stitle, repealed = strip_repealed(stitle)
            if op:
                body_repealed = any(REPEALED_RE.match(b.text.strip()) for b in blocks)
                for s in range_sections(act, kind, number, last, op, repealed=repealed or body_repealed,
                                        path=stack.path):
                    add(s)
                continue
            s = Section(section_id(act, kind, number), number, kind, stitle, stack.path)
            if repealed:
                s.status, s.status_note = "repealed", "(weggefallen)"
            elif blocks and all(b.text.strip() in DASHES for b in blocks):
                # "-" as the whole body is how the source prints a repealed unit: under "§ 23
                # (weggefallen)" and, in the 2012 Grundgesetz, under a bare "Art 49" (2020: "Art 49
                # (weggefallen)"); the same repeal, shown another way
                s.status, s.status_note = "repealed", blocks[0].text.strip()
            refs = list(dict.fromkeys(r.strip("[]^") for ln in body_lines if not _FOOTDEF_RE.match(ln.strip())
                                      for r in _FOOTREF_RE.findall(ln)))
            build_units(s, blocks)
            # a note printed in the §'s body that no reference of it points to is still its note
            # (older files: "[^…_001]" under § 651 BGB 2012, the rule area of § 850f ZPO 2012)
            own = [text for nid, text in defs if nid not in refs]
            pending_refs.append((s, refs, own + publisher))
            add(s)
            continue
        if heading in ("Eingangsformel", "Präambel"):
            s = Section(section_id(act, "preamble", heading), heading, "preamble", "", stack.path)
            build_units(s, blocks)
            s.footnotes = list(publisher)
            add(s)
            continue
        sh = parse_structure_heading(heading)
        if sh is None:  # an unlabelled heading without " - ": a group heading
            sh = StructureHeading("group", "", "", heading)
        node = stack.push(sh, depth=depth, articles_before=len(sections))
        node.notes = [text for _, text in defs] + publisher  # notes printed under a structure heading belong to it
    for s, refs, publisher in pending_refs:
        s.footnotes = list(dict.fromkeys([notes[r] for r in refs if r in notes] + publisher))
    if not any(s.kind in ("§", "Art") for s in sections):
        raise GermanStatuteError(f"{path}: not a law: no '§ N' or 'Art N' headings found")
    return GermanStatute(act, version, path, "markdown", title, sections, stack.nodes, based_on=based_on,
                         annexes=annexes, parse_seconds=time.perf_counter() - t0)


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
