"""``CitationResolver``: free text and a date → each citation, the units it names, their wording then.

What verifying an LLM's legal citations needs: for every ``art. 415 k.c.`` / ``§ 823 Abs. 1 BGB`` in a
text, does the corpus hold that unit at that date, and what does it say. Each unit gets a match kind
(:mod:`pipelines.resolver.matches`); the citation gets the least exact of its units'. Ids are compared
whole — no prefix, no fuzzy number matching — so ``§ 823`` never resolves to ``§ 1823``. A citation
that names no act is never given one: the held acts that have such a unit are listed as candidates.

Speed: extraction is regex scanning (both extractors together well under a millisecond per kB);
lookups are dictionary hits in the per-(act, version) indexes the reader caches, memoised per call by
:class:`~pipelines.resolver.lookup.CorpusView`; the wording comes from ``ReadService.unit``, also a
few dictionary lookups warm. Figures: ``bench/resolver.py``.
"""

from __future__ import annotations

import dataclasses

import datetime as dt
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipelines.reads import ReadService
from pipelines.reads.dates import parse_day
from pipelines.reads.errors import NotCovered, UnknownUnit
from pipelines.resolver import matches as M
from pipelines.resolver.language import Found, find_citations
from pipelines.resolver.lookup import CorpusView


@dataclass
class UnitResolution:
    unit_id: str | None  # the full id; None when no act is named (relative_id says what was cited)
    relative_id: str  # the id without the act: "art:415:par:1", "par:823:abs:1"
    match: str  # a kind of pipelines.resolver.matches
    status: str | None = None  # in_force | repealed | pending; None when not read
    version: str | None = None  # the held version read (the one in force at the date)
    text: str | None = None  # the wording in force at the date (None: not held, or only announced)
    text_pending: str | None = None  # an announced wording of the unit
    pending_effective_date: str | None = None
    article_id: str | None = None  # the article the unit belongs to (for partial: the article that exists)
    held_in: list[str] = field(default_factory=list)  # held versions that have the unit (empty: none has it)
    candidates: list[str] = field(default_factory=list)  # ambiguous: held acts' unit ids that match
    note: str | None = None  # why, in words


@dataclass
class ResolvedCitation:
    start: int
    end: int
    text: str  # text[start:end] of the input
    language: str  # pl | de: the extractor that read it
    act_id: str | None
    match: str  # the least exact of the units' kinds
    units: list[UnitResolution]
    act_text: str | None = None  # the act as printed
    printed: str | None = None  # the number as printed when it was read differently (a lost superscript)
    note: str | None = None


@dataclass
class Resolution:
    as_of: str
    language: str | None  # the text's language, given or guessed (each citation has its own too)
    citations: list[ResolvedCitation]
    counts: dict[str, int]  # citations per match kind (every kind present, zero included)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CitationResolver:
    """Resolves the citations of free text against one corpus home (keep one per process: warm reads)."""

    def __init__(self, reads: ReadService):
        self.reads = reads
        self._known: tuple[tuple, frozenset[str]] | None = None

    @classmethod
    def at(cls, home: Path | str) -> "CitationResolver":
        return cls(ReadService.at(home))

    # -- public -----------------------------------------------------------------------------------
    def resolve(self, text: str, *, as_of: str | dt.date | None = None, language: str | None = None) -> Resolution:
        """Every citation of ``text`` resolved at ``as_of`` (default today). BadDate for a malformed
        date; ValueError for a language other than ``pl``/``de``/None; TypeError for non-text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        day = parse_day(as_of)
        view = CorpusView(self.reads, day)
        found, doc_lang = find_citations(text, language=language, held=view.held(),
                                         known_articles=self._known_articles(view))
        cits = [self._citation(view, f) for f in found]
        counts = {k: 0 for k in M.KINDS}
        counts.update(Counter(c.match for c in cits))
        return Resolution(day.isoformat(), doc_lang, cits, counts)

    def warm(self) -> int:
        """Load the index of every held version of every held act (what the first requests would load
        one by one) and the held Polish article ids; returns the number of versions loaded."""
        view = CorpusView(self.reads, dt.date.today())
        n = 0
        for act_id in view.held():
            for v in view.versions(act_id):
                view.index(act_id, v)
                n += 1
        self._known_articles(view)
        return n

    # -- one citation -----------------------------------------------------------------------------
    def _citation(self, view: CorpusView, f: Found) -> ResolvedCitation:
        notes = list(f.notes)
        if f.act_id is None:
            units = [self._no_act(view, rel, f.language) for rel in f.relative_ids]
        elif f.act_id not in view.held():
            held = ", ".join(view.held())
            note = f"{f.act_id} is recognised but the corpus holds no version of it (held: {held})"
            units = [_bare(f"{f.act_id}:{rel}", rel, M.ACT_NOT_HELD, note=note) for rel in f.relative_ids]
            if not units:
                notes.append(note)
                return self._done(f, M.ACT_NOT_HELD, [], notes)
        else:
            rels = f.relative_ids
            if f.range_to:
                rels, note = _range(view, f.act_id, f.relative_ids[0], f.range_to)
                if note:
                    notes.append(note)
            units = [self._unit(view, f.act_id, rel) for rel in rels]
        if not units:  # a § with no article of a code: nothing to look up
            return self._done(f, M.NOT_FOUND if f.act_id else M.NO_ACT, [], notes)
        if f.superscript_read:  # exact only under a reading of the printed number: say so
            units = [dataclasses.replace(u, match=M.READ_AS) if u.match == M.EXACT else u for u in units]
        return self._done(f, M.least_exact([u.match for u in units]), units, notes)

    @staticmethod
    def _done(f: Found, match: str, units: list[UnitResolution], notes: list[str]) -> ResolvedCitation:
        return ResolvedCitation(f.start, f.end, f.text, f.language, f.act_id, match, units, f.act_text, f.printed,
                                "; ".join(notes) or None)

    def _unit(self, view: CorpusView, act_id: str, rel: str) -> UnitResolution:
        uid = f"{act_id}:{rel}"
        try:
            version = view.version_at(act_id)
        except NotCovered as exc:
            return _bare(uid, rel, M.NOT_COVERED, note=str(exc), held_in=view.holding(uid, act_id))
        idx = view.index(act_id, version)
        try:
            u = self.reads.unit(uid, view.day)  # exists at the date, or only in its announced wording (pending)
        except UnknownUnit:
            u = None
        if u is not None:
            note = None
            if u.status == "pending":
                note = f"only the announced wording (from {u.pending_effective_date}) of version {version} has it"
            elif u.status == "repealed":
                note = f"repealed in version {version}"
            return UnitResolution(uid, rel, M.EXACT, u.status, u.version, u.text, u.text_pending,
                                  u.pending_effective_date, u.article_id, view.holding(uid, act_id) or [version],
                                  note=note)
        held_in = view.holding(uid, act_id)
        article = _article_of(act_id, rel)
        if held_in:
            return _bare(uid, rel, M.NOT_IN_VERSION, version=version, article_id=article, held_in=held_in,
                          note=f"not in version {version} (in force on {view.day.isoformat()}); "
                               f"held in version(s) {', '.join(held_in)}")
        if article != uid and idx.has(article):
            kids = [k.rsplit(":", 2)[-2] + " " + k.rsplit(":", 1)[-1] for k in idx.children.get(article, ())]
            has = f"; it has {', '.join(kids)}" if kids else "; it has no numbered subdivisions"
            art_status = (idx.articles.get(article) or {}).get("status") or "in_force"
            return _bare(uid, rel, M.PARTIAL, version=version, article_id=article,
                         note=f"{article} ({art_status}) exists in version {version} but no held version has "
                              f"{uid}{has}")
        if article != uid:
            art_in = view.holding(article, act_id)
            if art_in:
                return _bare(uid, rel, M.NOT_IN_VERSION, version=version, article_id=article, held_in=art_in,
                              note=f"neither {uid} nor its article is in version {version}; the article is in "
                                   f"version(s) {', '.join(art_in)}, the cited subdivision in none")
        return _bare(uid, rel, M.NOT_FOUND, version=version,
                      note=f"no held version of {act_id} ({', '.join(view.versions(act_id))}) has {uid}")

    def _no_act(self, view: CorpusView, rel: str, language: str) -> UnitResolution:
        """Candidates among the held acts of the citation's own jurisdiction (a Polish ``art. 17`` is
        not the Grundgesetz's ``Art. 17``)."""
        cands = []
        for act_id in view.held():
            if not act_id.startswith(f"{language}:"):
                continue
            try:
                version = view.version_at(act_id)
            except NotCovered:
                continue
            if view.index(act_id, version).has(f"{act_id}:{rel}"):
                cands.append(f"{act_id}:{rel}")
        if cands:
            return _bare(None, rel, M.AMBIGUOUS, candidates=cands,
                          note=f"no act named; {len(cands)} held {language} act(s) have {rel} at the date: none picked")
        return _bare(None, rel, M.NO_ACT, note=f"no act named and no held {language} act has {rel} at the date")

    # -- Polish superscripts ---------------------------------------------------------------------
    def _known_articles(self, view: CorpusView) -> frozenset[str]:
        """Article ids of every held version of the held Polish acts (how a lost superscript splits),
        rebuilt when the held versions change."""
        key = tuple((a, view.versions(a)) for a in view.held() if a.startswith("pl:"))
        if self._known is None or self._known[0] != key:
            ids: set[str] = set()
            for act_id, versions in key:
                for v in versions:
                    ids.update(view.index(act_id, v).articles)
            self._known = (key, frozenset(ids))
        return self._known[1]


MAX_RANGE = 60  # units listed for one range; the Polish extractor expands "art. 1–60" as far


def _range(view: CorpusView, act_id: str, first: str, last: str) -> tuple[list[str], str | None]:
    """The units of ``§§ first bis last`` in the version in force at the date, in the act's own order
    (so 184, 184a, 185 … and never a numeric guess); both ends alone, with a note, when either end is
    not in that version, the range runs backwards or holds more than :data:`MAX_RANGE` units."""
    try:
        idx = view.index(act_id, view.version_at(act_id))
    except NotCovered:
        return [first, last], None
    i, j = idx.article_position(f"{act_id}:{first}"), idx.article_position(f"{act_id}:{last}")
    if i is None or j is None:
        return [first, last], "range not expanded: an end of it is not in the version in force at the date"
    if i > j:
        return [first, last], "range not expanded: its first unit comes after its last in the act"
    if j - i + 1 > MAX_RANGE:
        return [first, last], f"range not expanded: {j - i + 1} units in act order (at most {MAX_RANGE})"
    return [u.split(":", 2)[2] for u in idx.article_ids[i:j + 1]], None


def _bare(unit_id: str | None, rel: str, match: str, **kw: Any) -> UnitResolution:
    """A unit answer without a read wording."""
    return UnitResolution(unit_id, rel, match, **kw)


def _article_of(act_id: str, rel: str) -> str:
    """``art:415:par:7`` → ``<act>:art:415``: the top unit (article, or a regulation's §) of an id."""
    top, number = rel.split(":")[:2]
    return f"{act_id}:{top}:{number}"
