"""Finding the citations of a free text, Polish or German, as one list of spans with their unit ids.

Both extractors run (each takes well under a millisecond per kilobyte) unless the caller names the
language; the text's language is guessed from cue words (``art.``/``ust.``/``k.c.``/Polish letters vs
``Abs.``/``Satz``/``BGB``/umlauts) only to break ties between overlapping spans and to drop the other
language's act-less hits: in a Polish judgment ``art. 98 § 1 i 3 k.p.c.`` also reads to the German
scanner as a bare ``§ 1``, and ``Art. 3 Abs. 1 GG`` to the Polish one as an act-less ``Art. 3``.
Overlapping spans keep, in order: the one naming a held act, one naming any act, one in the text's
language, the longer one.

The German scanner's number is at most four digits and the Polish one six, with no check that the
number ends there (``§ 18235 BGB`` reads as ``§ 1823``): every span whose number is followed by a
further digit is re-read with the whole printed number (:func:`_printed_digits`), so a longer number
is never matched by its prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from pipelines.citations import german as DE
from pipelines.citations import polish as PL
from pipelines.citations.act_catalogue import catalogue

LANGUAGES = ("pl", "de")

_PL_CUES = re.compile(r"(?<!\w)(?:art\.|ust\.|pkt|lit\.|k\.p?\.?[ckp]\.|kc|kpc|ustaw\w*|kodeks\w*|przepis\w*"
                      r"|oraz|się|nie|w\s+zw\.)(?!\w)|[ąćęłńśźżĄĆĘŁŃŚŹŻ]")
_DE_CUES = re.compile(r"(?<!\w)(?:Abs\.|Satz|Nr\.|BGB|ZPO|StGB|StPO|HGB|GG|der|die|das|und|nach|gemäß|des"
                      r"|i\.\s?V\.\s?m\.)(?!\w)|[äöüßÄÖÜ]")


@dataclass
class Found:
    """One citation span, language-neutral: the act (if named) and the cited units as id suffixes."""

    start: int
    end: int
    text: str
    language: str  # pl | de
    act_id: str | None
    act_text: str | None
    relative_ids: list[str]  # "art:415:par:1", "par:823:abs:1": the unit ids without the act
    printed: str | None = None  # the number as printed, when it was read differently (a lost superscript)
    notes: list[str] = field(default_factory=list)
    unknown_act: bool = False  # act_id None, yet an act is named (act_text): by a title no table knows
    superscript_read: bool = False  # the printed number is not a unit; a split with a lost superscript is
    range_to: str | None = None  # "§§ 184 bis 187", "art. 353–356": the range's last unit (relative id); the
    # lookup fills in the rest (relative_ids holds the first)


    def unit_ids(self) -> list[str]:
        return [f"{self.act_id}:{r}" for r in self.relative_ids] if self.act_id else []


def guess_language(text: str) -> str | None:
    """``pl`` / ``de`` by cue counts; None when neither wins (a bare ``§ 823``)."""
    pl, de = len(_PL_CUES.findall(text)), len(_DE_CUES.findall(text))
    return "pl" if pl > de else "de" if de > pl else None


def _printed_digits(text: str, start: int, end: int, digits: str, sign: str) -> str | None:
    """The whole digit run printed where the span's number ``digits`` starts (after its ``sign``, or
    at the span's start for a list member), when that run is longer than ``digits``."""
    span = text[start:end]
    m = re.search(rf"(?:{sign})[\s\u00a0]*{re.escape(digits)}", span) or re.match(re.escape(digits), span)
    if m is None:
        return None
    p = start + m.end()
    q = p
    while q < len(text) and text[q] in "0123456789":  # not isdigit(): "709²" is art. 709^2
        q += 1
    return digits + text[p:q] if q > p else None


_PL_SIGN = {"art": r"(?<!\w)[Aa]rt(?:t|yku\w*)?\.?", "§": r"§§?"}
_DE_SIGN = {"Art": r"(?<!\w)Art(?:ikeln?|t)?\.?", "§": r"§§?"}


# ------------------------------------------------------------------------------------------ Polish


def _pl_relative(c: PL.Citation) -> list[str]:
    """The cited units without the act; a range gives its first unit (its last is ``range_to``)."""
    tag = "par" if c.unit == "§" else "art"
    if c.article is None:
        return []
    if c.range_end or not c.paths:
        return [f"{tag}:{c.article}"]
    return list(dict.fromkeys(f"{tag}:{c.article}" + "".join(f":{t}:{v}" for t, v in p) for p in c.paths))


def _polish(text: str, known_articles: frozenset[str] | None, date: str | None = None) -> list[Found]:
    out = []
    for c in PL.extract_citations(text, date=date, known_ids=known_articles, addresses=False):
        notes: list[str] = []
        printed = None
        if c.raw_article:
            restored = f"{c.act_id}:art:{c.article}"
            if known_articles is not None and c.in_corpus and restored not in known_articles:
                c.article, printed = c.raw_article, None  # no held act has the split reading: keep the print
            else:
                printed = c.raw_article
                notes.append(f"printed art. {c.raw_article}: read as art. {c.article} (a superscript lost in print)")
        base = re.match(r"\d+", c.raw_article or c.article or "")
        longer = (_printed_digits(text, c.start, c.end, base.group(0), _PL_SIGN.get(c.unit or "", "§§?"))
                  if base and not c.raw_article else None)
        end = c.end
        if longer:
            notes.append(f"the number is printed {longer}")
            c.article, c.range_end, c.paths = longer, None, []
            printed = longer
            end = max(end, text.index(longer, c.start) + len(longer))
        if c.bare_paragraph:
            notes.append(f"a § without an article of {c.act_id}, whose top unit is the article: which article's "
                         "paragraph is not said")
        rels = [] if c.bare_paragraph else _pl_relative(c)
        range_to = f"{rels[0].split(':')[0]}:{c.range_end}" if c.range_end and rels and not longer else None
        out.append(Found(c.start, end, text[c.start:end], "pl", c.act_id, c.act_text, rels, printed, notes,
                         superscript_read=bool(c.raw_article) and printed == c.raw_article, range_to=range_to,
                         unknown_act=c.act_id is None and c.act_how == PL.UNKNOWN_TITLE))
    return out


# ------------------------------------------------------------------------------------------ German


def _de_relative(c: DE.Citation, tag: str) -> list[str]:
    return [] if c.number is None else DE.units_below(c, f"{tag}:{c.number}")


def _german(text: str) -> list[Found]:
    out = []
    for c in DE.extract_citations(text, keep_unresolved=True):
        if c.number is None:  # an EU act cited as a whole: no unit to resolve
            continue
        notes: list[str] = []
        printed = None
        digits = re.match(r"\d+", c.number)
        longer = _printed_digits(text, c.start, c.end, digits.group(0), _DE_SIGN.get(c.unit or "§", "§§?")) \
            if digits else None
        start, end, span, act_text = c.start, c.end, c.text, c.act_text
        if longer:
            notes.append(f"the number is printed {longer}")
            c.number, c.absatz, c.nummer, c.buchstabe = longer, [], [], []
            printed = longer
            end = text.index(longer, start) + len(longer)
            # the act printed after the whole number ("§ 18235 BGB"): the scanner's own act matcher
            act = DE._match_act(text, end) if c.act_key is None else None
            if act is not None:
                end, act_text, c.act_key = act[0], act[1], act[2]
            span = text[start:end]
        ids = DE.candidate_ids(c)
        if ids:  # the corpus's own tag for the act (Art. for the GG, § for the BGB)
            tag = ids[0].split(":")[2]
        else:
            tag = "art" if (c.unit or "§").lower().startswith("art") else "par"
        act_id = _german_act_id(c)
        prev = out[-1] if out else None
        if (c.role == "range_end" and prev is not None and prev.range_to is None and prev.language == "de"
                and _range_start(prev, tag, c.range_start) and not (c.absatz or c.nummer or c.buchstabe)
                and (prev.act_id is None or act_id is None or prev.act_id == act_id)):
            # "§§ 184 bis 187 BGB": one citation spanning both ends, expanded against the act's version
            prev.end, prev.text, prev.range_to = end, text[prev.start:end], f"{tag}:{c.number}"
            prev.act_id, prev.act_text = prev.act_id or act_id, prev.act_text or act_text
            prev.notes += notes
            continue
        out.append(Found(start, end, span, "de", act_id, act_text, _de_relative(c, tag), printed, notes))
    return out


def _german_act_id(c: DE.Citation) -> str | None:
    """The id of the act a German citation names: the catalogue's act for its form (``KSchG``,
    ``SGB V``, ``DSGVO``, ``2016/679``: the registry's id when the registry has the act), else the
    extractor's own ``de:<key>`` / ``eu:<number>``."""
    if not c.act_key:
        return None
    info = catalogue().by_form(c.act_key, "de")
    return info.id if info is not None else c.act_id


def _range_start(prev: Found, tag: str, number: str | None) -> bool:
    """``prev`` is the bare § (no Absatz) a range's end points back to."""
    return number is not None and prev.relative_ids == [f"{tag}:{number}"]


# ------------------------------------------------------------------------------------------ both


def find_citations(text: str, *, language: str | None = None, held: Iterable[str] = (),
                   known_articles: frozenset[str] | None = None,
                   date: str | None = None) -> tuple[list[Found], str | None]:
    """The citations of ``text`` in document order, and the text's language (given or guessed).

    ``held``: ids of the acts the corpus holds (a span naming one wins an overlap); ``known_articles``:
    held article ids, so a Polish number that lost its superscript splits the way an article exists;
    ``date`` (YYYY-MM-DD): picks among Polish acts sharing a short form (``p.z.p.`` is the 2019 act
    from 2021)."""
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)} or None, got {language!r}")
    doc_lang = language or guess_language(text)
    found: list[Found] = []
    if language in (None, "pl"):
        found += _polish(text, known_articles, date)
    if language in (None, "de"):
        found += _german(text)
    if language is None and doc_lang is not None:
        # the other language's scanner reads act-less numbers everywhere (contract clauses, "§ 1 i 3")
        found = [f for f in found if f.language == doc_lang or f.act_id is not None]
    held = frozenset(held)

    def score(f: Found) -> tuple:
        return (f.act_id in held, f.act_id is not None, f.language == doc_lang, f.end - f.start, -f.start)

    kept: list[Found] = []
    for f in sorted(found, key=score, reverse=True):
        if all(f.end <= k.start or k.end <= f.start for k in kept):
            kept.append(f)
    kept.sort(key=lambda f: (f.start, f.end))
    return kept, doc_lang
