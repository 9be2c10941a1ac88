"""SAOS ``referencedRegulations`` → (act id, article) pairs, with the act ids of the text extractor.

A SAOS judgment (``/api/dump/judgments`` item) lists the acts it refers to, one entry per act:
``{journalTitle, journalNo, journalYear, journalEntry, text}``, the ``text`` ending in the cited
units: ``"Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego (Dz. U. z 1964 r.
Nr 43, poz. 296 - art. 98 § 1, art. 626(13) § 2, …)"``; units are separated by ``,`` or ``;``,
regulations list ``§ 5 ust. 2 pkt 2``, a range is ``art. 117-125``, superscripts are ``626(13)``.

Why parse it: it is SAOS's own extraction (the common courts' publication system links each
citation to an act; the Supreme Court's lists come from its own metadata), the only per-judgment
reference list there is — so it is what :mod:`pipelines.citations.pl_evaluation` measures the text
extractor against, knowing it misses citations and lists acts a judgment names only in passing.

Same act ids as the text (:func:`pipelines.citations.pl_acts.by_title`): the journal address
decides when it is an act's original or unified address (``2010/759`` is the p.z.p. unified text),
else the title (an *Obwieszczenie … jednolitego tekstu ustawy - Kodeks pracy* is the k.p.), else
the constructed ``pl:du:<year>:<poz>``. Article numbers in corpus form: ``626(13)`` → ``626^13``;
``art. 11 § 2`` → article ``11``; a superscript SAOS lost the same way the judgment's PDF text
did (``39814`` for k.p.c.) is restored by the same rule as in the text
(:func:`pipelines.citations.polish._restore_superscript`), a notation fix only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from pipelines.citations import pl_acts as PA
from pipelines.citations.polish import RANGE_CAP, _restore_superscript

UNIT = re.compile(r"(?P<sign>art\.?|§)\s*(?P<num>\d{1,6})(?:\((?P<sup>\d{1,3})\)|\^(?P<sup2>\d{1,3}))?(?P<let>[a-z]{1,2})?"
                  r"(?:\s*[-–]\s*(?:art\.\s*)?(?P<hi>\d{1,6})(?:\((?P<hisup>\d{1,3})\))?(?P<hilet>[a-z]{1,2})?)?(?![\d(])",
                  re.I)
LIST_START = re.compile(r"poz\.?\s*\d+\s*-\s*")


@dataclass(frozen=True)
class SaosReference:
    """One unit SAOS lists for a judgment."""

    act_id: str
    in_corpus: bool
    unit: str  # "art" | "§"
    article: str  # corpus form: "626^13"
    text: str  # the unit as SAOS prints it ("art. 626(13) § 2")
    journal: tuple[int | None, int | None, int | None]  # (year, no, entry)

    @property
    def pair(self) -> tuple[str, str]:
        return self.act_id, self.article if self.unit == "art" else f"§{self.article}"


def _number(num: str, sup: str | None, let: str | None) -> str:
    return num + (f"^{sup}" if sup else "") + (let or "").lower()


def parse_regulation(entry: dict[str, Any]) -> list[SaosReference]:
    """One ``referencedRegulations`` entry → its units (none when it lists no unit or names no
    act). Raises ``ValueError`` when the entry is not a mapping."""
    if not isinstance(entry, dict):
        raise ValueError(f"a referencedRegulations entry must be an object, got {type(entry).__name__}")
    title = entry.get("journalTitle") or ""
    year, no, poz = entry.get("journalYear"), entry.get("journalNo"), entry.get("journalEntry")
    text = entry.get("text") or ""
    ref = PA.by_title(title or text, year if isinstance(year, int) else None, poz if isinstance(poz, int) else None)
    if ref is None:
        return []
    m = LIST_START.search(text)
    units_text = text[m.end():] if m else ""
    units_text = re.sub(r"\)\s*$", "", units_text)
    out: list[SaosReference] = []
    for piece in re.split(r"[;,]\s*(?=art\.|§)", units_text):
        u = UNIT.match(piece.strip())
        if not u:
            continue
        unit = "art" if u.group("sign").lower().startswith("art") else "§"
        lo = _number(u.group("num"), u.group("sup") or u.group("sup2"), u.group("let"))
        if not (u.group("sup") or u.group("sup2")):
            lo = _restore_superscript(lo, ref, None)
        numbers = [lo]
        if u.group("hi"):
            hi = _number(u.group("hi"), u.group("hisup"), u.group("hilet"))
            if lo.isdigit() and hi.isdigit() and int(lo) < int(hi) <= int(lo) + RANGE_CAP:
                numbers = [str(n) for n in range(int(lo), int(hi) + 1)]
            else:
                numbers = [lo, hi]
        for n in numbers:
            out.append(SaosReference(ref.id, ref.in_corpus, unit, n, piece.strip(), (year, no, poz)))
    return out


def judgment_references(item: dict[str, Any]) -> list[SaosReference]:
    """Every unit of a SAOS judgment's ``referencedRegulations`` (missing or null → none)."""
    regs = item.get("referencedRegulations") or []
    if not isinstance(regs, list):
        raise ValueError(f"referencedRegulations must be a list, got {type(regs).__name__}")
    out: list[SaosReference] = []
    for e in regs:
        out.extend(parse_regulation(e))
    return out


def saos_pairs(item: dict[str, Any] | Iterable[SaosReference]) -> set[tuple[str, str]]:
    """(act id, article) pairs SAOS lists for a judgment (``§`` units as ``§5``).

    A bare ``§`` of an act whose top unit is the article (SAOS lists "§ 3" under the k.p.c. where a
    judgment wrote "386 § 3 k.p.c.") is no pair, as on the extractor's side
    (``Citation.bare_paragraph``): both would name a unit that does not exist."""
    refs = judgment_references(item) if isinstance(item, dict) else item
    return {r.pair for r in refs if not (r.pair[1].startswith("§") and PA.top_unit(r.pair[0]) not in (None, "§"))}
