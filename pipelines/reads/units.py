"""A unit at a date: the wording in force, from the newest held version on or before the date.

Any level can be asked for by its version-free id — structure (``pl:kc:book:PIERWSZA:title:II``),
article (``pl:kc:art:22^1``, ``de:bgb:par:433``), paragraph (``…:par:1``, ``…:abs:1``), point
(``…:pt:3``, ``…:nr:2``), letter (``…:lit:a``). The answer names the version it was read from.

The held version's ``text`` is the reading in force on the version date. When that version announces
a change (ISAP ``< >`` wording with its effective date), ``text_pending`` is the announced wording of
the unit and ``pending_effective_date`` its date; ``pending_applies`` says the asked date is on or after
it, i.e. the announced wording is the one in force on that date as far as the held versions tell. The
corpus keeps the announced wording per article; a paragraph, point or letter is cut out of it by its
marker (``§ 1^1.``, ``(2)``, ``3)``, ``a)``), the way the benchmark staleness check reads it. A unit that
exists only in an announced wording (a paragraph an amendment adds) is answered with status
``pending``, no text in force, and that wording.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from pipelines.reads.corpus import STRUCTURE_LEVELS, CorpusReader, VersionIndex, act_id_of_unit
from pipelines.reads.dates import parse_day
from pipelines.reads.errors import UnknownUnit
from pipelines.statutes.diff import editorial_form, word_diff

# Unit markers at the start of a line of an article text (superscripts written ^N).
_NUM = r"\d+[a-z]?(?:\^\d+)?"
_MARKERS: dict[str, tuple] = {
    "par": (lambda n: rf"^§\s*{re.escape(n)}\.", rf"^§\s*{_NUM}\."),
    "ust": (lambda n: rf"^{re.escape(n)}\.", rf"^{_NUM}\."),
    "abs": (lambda n: rf"^\({re.escape(n)}\)", rf"^\({_NUM}\)"),
    "pt": (lambda n: rf"^{re.escape(n)}\)", rf"^{_NUM}\)"),
    "nr": (lambda n: rf"^{re.escape(n)}\.", rf"^{_NUM}\."),
    "lit": (lambda n: rf"^{re.escape(n)}\)", rf"^(?:[a-z]{{1,2}}(?:\^\d+)?|{_NUM})\)"),
}
_SUBUNIT = re.compile(r":(par|ust|abs|pt|nr|lit):([^:]+)")
_LEVEL_OF_KIND = {"par": "paragraph", "ust": "paragraph", "abs": "paragraph", "pt": "point", "nr": "point",
                  "lit": "letter"}


@dataclass(frozen=True)
class PathEntry:
    level: str
    number: str | None
    heading: str | None
    id: str


@dataclass(frozen=True)
class UnitAtDate:
    unit_id: str
    act_id: str
    level: str  # book … section | article | paragraph | point | letter
    number: str | None
    as_of: str
    version: str  # the held version the answer is read from: the newest on or before as_of
    next_version: str | None  # the next held version (the wording may change there); None: the newest
    newest_version: str
    covered: bool  # as_of is on or after the oldest held version (else the read is refused)
    status: str  # in_force | repealed | pending (only in an announced wording)
    status_note: str | None
    heading: str | None  # structure units
    title: str | None  # the article's own heading, where the act prints one (German §§)
    text: str | None  # the wording in force on the version date (None: structure unit, or pending only)
    text_pending: str | None  # the announced wording, when the version announces a change of this unit
    pending_effective_date: str | None
    pending_note: str | None
    pending_applies: bool  # as_of >= pending_effective_date: the announced wording is in force on as_of
    article_id: str | None
    path: list[PathEntry] = field(default_factory=list)  # from the top level down to the unit's parent
    path_text: str | None = None
    children: list[str] = field(default_factory=list)  # ids of the units directly below


def cut_unit(article_text: str, article_id: str, unit_id: str) -> str | None:
    """The text of sub-unit ``unit_id`` cut out of its article's whole text (from its marker at a line
    start to the next marker of the same kind); None when a level of the id is not found."""
    text = article_text
    for kind, number in _SUBUNIT.findall(unit_id[len(article_id):]):
        own, any_ = _MARKERS[kind]
        m = re.search(own(number), text, re.M)
        if m is None:
            return None
        nxt = re.compile(any_, re.M).search(text, m.end())
        text = text[m.start():nxt.start() if nxt else len(text)].strip()
    return text


def _norm(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


class UnitState(NamedTuple):
    """A unit as one version holds it: what a change between two versions is computed from."""

    text: str
    status: str
    text_pending: str | None
    pending_effective_date: dt.date | None


def unit_state(idx: VersionIndex, unit_id: str) -> UnitState | None:
    """The unit in this version (None when absent). For articles the ARTICLES row; below, the node's
    text and status (repealed with its article) and its part of the article's announced wording."""
    art_id = idx.article_of(unit_id)
    art = idx.articles.get(art_id) if art_id else None
    if unit_id == art_id and art is not None:
        return UnitState(art["text"] or "", art["status"], art["text_pending"] or None, art["pending_effective_date"])
    node = idx.nodes.get(unit_id)
    if node is None:
        only = _pending_only(idx, unit_id)
        if only is None:
            return None
        return UnitState("", "pending", only[0], only[1]["pending_effective_date"])
    status = "repealed" if art is not None and art["status"] == "repealed" else (node.status or "in_force")
    pending, eff = None, None
    if art is not None and art["text_pending"]:
        cut = cut_unit(art["text_pending"], art_id, unit_id)
        if cut is not None and _norm(cut) != _norm(node.text):
            pending, eff = cut, art["pending_effective_date"]
    return UnitState(node.text or "", status, pending, eff)


def reading(state: UnitState | None) -> str | None:
    """The text a change is diffed on: in force, plus the announced wording (as the diff asset reads)."""
    if state is None:
        return None
    text = state.text
    if state.text_pending:
        text += f"\n[from {state.pending_effective_date or 'a date not given'}:]\n{state.text_pending}"
    return text


def classify(old: UnitState | None, new: UnitState | None) -> str | None:
    """The diff asset's kinds for one unit: added | changed | repealed | removed | editorial; None when
    the unit reads the same in both versions (or is in neither)."""
    if old is None and new is None:
        return None
    if old is None:
        return "added"
    if new is None:
        return "removed"
    if old == new:
        return None
    if new.status == "repealed" and old.status != "repealed":
        return "repealed"
    if editorial_form(reading(old)) == editorial_form(reading(new)):
        return "editorial"
    return "changed"


def unit_change_diff(old: UnitState | None, new: UnitState | None) -> str:
    return word_diff(reading(old) or "", reading(new) or "") if new is not None else ""


def _pending_only(idx: VersionIndex, unit_id: str) -> tuple[str, dict] | None:
    """(wording, article row) of a unit that only the announced wording of its article has."""
    rest = unit_id
    while True:
        m = re.search(r":(?:par|ust|abs|pt|nr|lit):[^:]+$", rest)
        if m is None:
            return None
        rest = rest[:m.start()]
        if rest in idx.nodes or rest in idx.articles:
            art_id = idx.article_of(rest)
            art = idx.articles.get(art_id) if art_id else None
            if art is None or not art["text_pending"]:
                return None
            cut = cut_unit(art["text_pending"], art_id, unit_id)
            return (cut, art) if cut else None


def pending_only_ids(idx: VersionIndex, article_id: str) -> list[str]:
    """Ids of the paragraphs that only the article's announced wording has (an amendment adds them)."""
    art = idx.articles.get(article_id)
    if art is None or not art["text_pending"]:
        return []
    kids = idx.children.get(article_id, ())
    m = _SUBUNIT.match(kids[0][len(article_id):]) if kids else None
    kind = m[1] if m and m[1] in ("par", "ust", "abs") else "par"
    numbers = re.findall(_MARKERS[kind][1].replace(_NUM, f"({_NUM})"), art["text_pending"], re.M)
    return [u for u in (f"{article_id}:{kind}:{n}" for n in numbers) if u not in idx.nodes]


def level_of(unit_id: str) -> str:
    kinds = _SUBUNIT.findall(unit_id)
    return _LEVEL_OF_KIND[kinds[-1][0]] if kinds else "article"


def unit_at(reader: CorpusReader, unit_id: str, as_of: str | dt.date | None = None) -> UnitAtDate:
    """The unit as in force on ``as_of`` (default today). UnknownAct / UnknownUnit (not found), BadDate
    (malformed date), NotCovered (before the oldest held version)."""
    act_id = act_id_of_unit(unit_id)
    reader.act(act_id)
    day = parse_day(as_of)
    version, nxt = reader.version_at(act_id, day)
    versions = reader.versions(act_id)
    idx = reader.index(act_id, version)
    common = dict(unit_id=unit_id, act_id=act_id, as_of=day.isoformat(), version=version, next_version=nxt,
                  newest_version=versions[-1], covered=True)
    if not idx.has(unit_id):
        only = _pending_only(idx, unit_id)
        if only is not None:
            wording, art = only
            eff = art["pending_effective_date"]
            anc = idx.ancestors(art["id"]) + [idx.nodes[art["id"]]] if art["id"] in idx.nodes else []
            return UnitAtDate(**common, level=level_of(unit_id), number=unit_id.rsplit(":", 1)[-1],
                              status="pending", status_note=None, heading=None, title=None, text=None,
                              text_pending=wording, pending_effective_date=eff.isoformat() if eff else None,
                              pending_note=art["pending_note"], pending_applies=bool(eff and day >= eff),
                              article_id=art["id"], path=[_entry(n) for n in anc], path_text=art["path_text"])
        held_in = [v for v in versions if v != version and unit_state(reader.index(act_id, v), unit_id) is not None]
        if held_in:
            raise UnknownUnit(f"{unit_id} is not in {act_id} version {version} (in force on {day.isoformat()}); "
                              f"it is in version(s) {', '.join(held_in)}")
        raise UnknownUnit(f"unknown unit {unit_id!r}: no held version of {act_id} ({', '.join(versions)}) has it")
    node = idx.nodes.get(unit_id)
    art_id = idx.article_of(unit_id)
    art = idx.articles.get(art_id) if art_id else None
    level = node.level if node else "article"
    state = unit_state(idx, unit_id) if level not in STRUCTURE_LEVELS else None
    pending, eff, note = None, None, None
    if state is not None and state.text_pending:
        pending, eff, note = state.text_pending, state.pending_effective_date, art["pending_note"] if art else None
    elif art is not None and art["text_pending"] and level != "article":
        # the article announces a change but this unit's part of it could not be located, or reads the same
        cut = cut_unit(art["text_pending"], art_id, unit_id)
        if cut is None:
            eff, note = art["pending_effective_date"], art["pending_note"]
    is_article = level == "article"
    return UnitAtDate(
        **common, level=level, number=(node.number if node else art["number"]),
        status=state.status if state else (node.status or "in_force"),
        status_note=art["status_note"] if is_article and art else None,
        heading=node.heading if node and level in STRUCTURE_LEVELS else None,
        title=art.get("title") if is_article and art else None,
        text=state.text if state else None, text_pending=pending,
        pending_effective_date=eff.isoformat() if eff else None, pending_note=note,
        pending_applies=bool(eff and pending is not None and day >= eff), article_id=art_id,
        path=[_entry(n) for n in idx.ancestors(unit_id)],
        path_text=art["path_text"] if art else (" › ".join(_label(n) for n in idx.ancestors(unit_id) + [node])),
        children=list(idx.children.get(unit_id, ())))


def _entry(n) -> PathEntry:
    return PathEntry(n.level, n.number, n.heading, n.id)


def _label(n) -> str:
    return " ".join(x for x in (n.level.capitalize(), n.number or "", n.heading or "") if x)
