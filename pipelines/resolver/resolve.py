"""``CitationResolver``: free text and a date → each citation, the units it names, their wording then.

What verifying an LLM's legal citations needs: for every ``art. 415 k.c.`` / ``§ 823 Abs. 1 BGB`` in a
text, does the corpus hold that unit at that date, and what does it say. Each unit gets a match kind
(:mod:`pipelines.resolver.matches`); the citation gets the least exact of its units'. Ids are compared
whole — no prefix, no fuzzy number matching — so ``§ 823`` never resolves to ``§ 1823``. A citation
that names no act is never given one: the held acts that have such a unit are listed as candidates.
A citation that names an act — held or not, by short form, name, date or address — carries that act
(:class:`CitedAct`: title, date, address from the registry and the table of known acts,
:mod:`pipelines.citations.act_catalogue`); one of an act the corpus does not hold is ``act_not_held``,
never a candidate list of the held codes (``art. 27 ustawy o prawach konsumenta`` is not the k.c.'s
art. 27). A range is listed in the act's own order at the date (:class:`CitedRange`); one that runs
backwards or covers more than :data:`MAX_RANGE` units keeps its two ends, marked
``range_backwards`` / ``range_too_long``, never two ``exact`` units.

Speed: extraction is regex scanning (both extractors together well under a millisecond per kB);
lookups are dictionary hits in the per-(act, version) indexes the reader caches, memoised per call by
:class:`~pipelines.resolver.lookup.CorpusView`; the wording comes from ``ReadService.unit``, also a
few dictionary lookups warm. Figures: ``bench/resolver.py``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipelines.citations.act_catalogue import Catalogue, catalogue, describe
from pipelines.citations.registry_pin import pinned
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
class CitedAct:
    """The act a citation names, held or not: what the registry and the table of known acts say."""

    id: str | None  # None: an act named by a title no table knows (title: as printed)
    jurisdiction: str  # pl | de | eu
    held: bool  # the corpus holds a version of it
    title: str | None  # "ustawa o prawach konsumenta", "Kodeks cywilny"; for an act no table knows, as printed
    official_title: str | None = None  # "Ustawa z dnia 30 maja 2014 r. o prawach konsumenta"
    date: str | None = None  # the date the act bears
    citation: str | None = None  # its usual short form: "k.c.", "KSchG", "RODO"
    address: str | None = None  # ELI "DU/2014/827", German Fundstelle "BGBl I: 1951, 499", EU "eli/reg/2016/679/oj"
    gazette: str | None = None  # the address as printed: "Dz. U. 2014 poz. 827"
    known: bool = True  # in the registry or the table of known acts; False: only what the citation printed


@dataclass
class CitedRange:
    """A range (``art. 353–356 k.c.``, ``§§ 184 bis 187 BGB``) and whether its units were listed."""

    first: str  # relative id of its first unit as cited: "art:353"
    last: str  # relative id of its last unit: "art:356"
    expanded: bool  # units lists every unit the range covers
    count: int | None  # units it covers (the act's own order at the date; for an act not held, by number)
    problem: str | None = None  # None | backwards | too_long | end_missing | not_covered | uncountable


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
    act: CitedAct | None = None  # the act named (None when none is)
    range: CitedRange | None = None  # the citation is a range


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
        with pinned():  # one registry for the whole call (registry() is not free: see registry_pin)
            return self._resolve(text, as_of, language)

    def _resolve(self, text: str, as_of: str | dt.date | None, language: str | None) -> Resolution:
        day = parse_day(as_of)
        view = CorpusView(self.reads, day)
        found, doc_lang = find_citations(text, language=language, held=view.held(),
                                         known_articles=self._known_articles(view), date=day.isoformat())
        cat = catalogue()
        cits = [self._citation(view, f, cat) for f in found]
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
    def _citation(self, view: CorpusView, f: Found, cat: Catalogue) -> ResolvedCitation:
        notes = list(f.notes)
        held = f.act_id is not None and f.act_id in view.held()
        act = _cited_act(f, held, cat)
        rels, rng = f.relative_ids, None
        if f.range_to and rels:
            rels, rng, note = (_range(view, f.act_id, rels[0], f.range_to) if held
                               else _numeric_range(rels[0], f.range_to))
            if note:
                notes.append(note)
        if f.act_id is None and not f.unknown_act:
            units = [self._no_act(view, rel, f.language) for rel in rels]
        elif not held:
            note = f"{_naming(act)} is recognised but the corpus holds no version of it"
            units = [_bare(f"{f.act_id}:{rel}" if f.act_id else None, rel, M.ACT_NOT_HELD, note=note) for rel in rels]
            if not units:
                notes.append(note)
                return self._done(f, M.ACT_NOT_HELD, [], notes, act, rng)
        else:
            units = [self._unit(view, f.act_id, rel) for rel in rels]
        if not units:  # a § with no article of a code: nothing to look up
            return self._done(f, M.NOT_FOUND if f.act_id else M.NO_ACT, [], notes, act, rng)
        if f.superscript_read:  # exact only under a reading of the printed number: say so
            units = [dataclasses.replace(u, match=M.READ_AS) if u.match == M.EXACT else u for u in units]
        if rng is not None and rng.problem in _RANGE_KIND:  # the ends exist, the range as cited is not listed
            kind = _RANGE_KIND[rng.problem]
            units = [dataclasses.replace(u, match=kind) if u.match in (M.EXACT, M.READ_AS) else u for u in units]
        return self._done(f, M.least_exact([u.match for u in units]), units, notes, act, rng)

    @staticmethod
    def _done(f: Found, match: str, units: list[UnitResolution], notes: list[str], act: CitedAct | None = None,
              rng: CitedRange | None = None) -> ResolvedCitation:
        return ResolvedCitation(f.start, f.end, f.text, f.language, f.act_id, match, units, f.act_text, f.printed,
                                "; ".join(notes) or None, act, rng)

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


MAX_RANGE = 60  # units listed for one range (the Polish extractor's RANGE_CAP is the same)
_RANGE_KIND = {"too_long": M.RANGE_TOO_LONG, "backwards": M.RANGE_BACKWARDS}


def _range(view: CorpusView, act_id: str, first: str, last: str) -> tuple[list[str], CitedRange, str | None]:
    """The units of ``§§ first bis last`` / ``art. first–last`` in the version in force at the date, in
    the act's own order (so 184, 184a, 185 … and 353, 353^1, … 356, never a numeric guess); both ends
    alone, with a note, when either end is not in that version, the range runs backwards or holds more
    than :data:`MAX_RANGE` units."""
    try:
        idx = view.index(act_id, view.version_at(act_id))
    except NotCovered:
        return [first, last], CitedRange(first, last, False, None, "not_covered"), None
    i, j = idx.article_position(f"{act_id}:{first}"), idx.article_position(f"{act_id}:{last}")
    if i is None or j is None:
        return ([first, last], CitedRange(first, last, False, None, "end_missing"),
                "range not expanded: an end of it is not in the version in force at the date")
    if i > j:
        return ([first, last], CitedRange(first, last, False, None, "backwards"),
                "range not expanded: it runs backwards (its first unit comes after its last in the act)")
    if j - i + 1 > MAX_RANGE:
        return ([first, last], CitedRange(first, last, False, j - i + 1, "too_long"),
                f"range not expanded: {j - i + 1} units in act order (at most {MAX_RANGE} are listed); "
                "only its two ends are given")
    units = [u.split(":", 2)[2] for u in idx.article_ids[i:j + 1]]
    return units, CitedRange(first, last, True, len(units)), None


_REL = re.compile(r"^(?P<tag>[a-z]+):(?P<num>\d+)(?:\^(?P<sup>\d+))?$")


def _numeric_range(first: str, last: str) -> tuple[list[str], CitedRange, str | None]:
    """A range of an act the corpus does not hold (or of no act), counted by its numbers: ``art. 5–7``
    is art. 5, 6, 7; ``art. 626^1–626^5`` the five superscripts; anything else (letters, different
    superscripts) keeps its two ends. Backwards and longer than :data:`MAX_RANGE` ranges keep their
    ends, with a note."""
    a, b = _REL.match(first), _REL.match(last)
    if not a or not b or a.group("tag") != b.group("tag"):
        return [first, last], CitedRange(first, last, False, None, "uncountable"), None
    tag = a.group("tag")
    lo, hi = int(a.group("num")), int(b.group("num"))
    slo, shi = a.group("sup"), b.group("sup")
    if slo is None and shi is None:
        nums = None if hi < lo else [str(n) for n in range(lo, hi + 1)]
    elif lo == hi and shi is not None:
        s0, s1 = int(slo or 0), int(shi)
        nums = None if s1 < s0 else [f"{lo}^{n}" if n else str(lo) for n in range(s0, s1 + 1)]
    else:
        return [first, last], CitedRange(first, last, False, None, "uncountable"), None
    if nums is None:
        return ([first, last], CitedRange(first, last, False, None, "backwards"),
                "range not expanded: it runs backwards (its first number is above its last)")
    if len(nums) > MAX_RANGE:
        return ([first, last], CitedRange(first, last, False, len(nums), "too_long"),
                f"range not expanded: {len(nums)} units by number (at most {MAX_RANGE} are listed)")
    return [f"{tag}:{n}" for n in nums], CitedRange(first, last, True, len(nums)), None


def _cited_act(f: Found, held: bool, cat: Catalogue) -> CitedAct | None:
    if f.act_id is None:
        if f.unknown_act:  # "ustawy o zmianie ustawy o …": named, in no table, so not held
            return CitedAct(None, f.language, False, _printed_title(f.act_text), known=False)
        return None
    info = cat.get(f.act_id) or describe(f.act_id, f.act_text)
    return CitedAct(f.act_id, info.jurisdiction, held, info.title, info.official_title, info.date, info.citation,
                    info.address, info.gazette, info.known)


def _printed_title(printed: str | None) -> str | None:
    """``ustawy o czymś`` → ``ustawa o czymś``: the act as printed, its first word in the nominative."""
    if not printed:
        return None
    s = re.sub(r"\s+", " ", printed).strip(" ,;:")
    return re.sub(r"^(?:ustaw(?:y|ie|ę|ą)|rozporządzeni(?:a|u|em)|dekret(?:u|em))\b",
                  lambda m: {"u": "ustawa", "r": "rozporządzenie", "d": "dekret"}[m.group(0)[0]], s)


def _naming(act: CitedAct | None) -> str:
    """``pl:upk (ustawa o prawach konsumenta, Dz. U. 2014 poz. 827)``: the act in a note."""
    if act is None:
        return "the act"
    bits = [x for x in (act.title, act.gazette or act.address) if x]
    if act.id is None:
        return f"the act named '{act.title}' (in no table of known acts)"
    if not act.known:
        bits.append("in no table of known acts")
    return f"{act.id} ({', '.join(bits)})" if bits else act.id


def _bare(unit_id: str | None, rel: str, match: str, **kw: Any) -> UnitResolution:
    """A unit answer without a read wording."""
    return UnitResolution(unit_id, rel, match, **kw)


def _article_of(act_id: str, rel: str) -> str:
    """``art:415:par:7`` → ``<act>:art:415``: the top unit (article, or a regulation's §) of an id."""
    top, number = rel.split(":")[:2]
    return f"{act_id}:{top}:{number}"
