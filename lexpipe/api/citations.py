"""Citation resolution: ``POST /citations/resolve`` — free text and a date → each citation, its units and
their wording at the date, with how exactly each matched (:mod:`pipelines.resolver`).

The response mirrors :class:`~pipelines.resolver.Resolution` field for field. One
:class:`~pipelines.resolver.CitationResolver` per app (on ``app.state.resolver``, over the app's
:class:`~pipelines.reads.ReadService`), so the per-version indexes stay warm between requests.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from lexpipe.api.deps import get_resolver
from lexpipe.api.models import TOO_LARGE, UNPROCESSABLE
from lexpipe.api.params import AsOfField, Body
from pipelines.resolver import CitationResolver
from pipelines.resolver.matches import DESCRIPTIONS, KINDS

router = APIRouter(tags=["citations"])

MATCH_DOC = "; ".join(f"{k}: {DESCRIPTIONS[k]}" for k in KINDS)


class ResolveIn(Body):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=20000, description="free text: a citation (\"art. 415 k.c.\", "
                      "\"§ 823 Abs. 1 BGB\") or a paragraph of a judgment or an answer, up to 20,000 characters")
    as_of: AsOfField = Field(None, description="YYYY-MM-DD: the date the wording is read at (omitted or empty: "
                             "today)")
    language: Literal["pl", "de"] | None = Field(None, description="read the text as Polish or German only "
                                                 "(default: both extractors, overlaps merged)")


class _Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class UnitResolutionOut(_Out):
    unit_id: str | None = Field(description="the version-free unit id; null when no act is named")
    relative_id: str = Field(description="the unit id without the act: art:415:par:1, par:823:abs:1")
    match: str = Field(description=MATCH_DOC)
    status: str | None = Field(description="in_force | repealed | pending; null when the unit was not read")
    version: str | None = Field(description="the held version in force at the date")
    text: str | None = Field(description="the unit's wording in force at the date")
    text_pending: str | None = Field(description="an announced wording of the unit")
    pending_effective_date: str | None
    article_id: str | None = Field(description="the article of the unit (for partial: the article that exists)")
    held_in: list[str] = Field(description="held versions that have the unit (empty: none has it)")
    candidates: list[str] = Field(description="ambiguous: unit ids of held acts that match the act-less citation")
    note: str | None = Field(description="why, in words")


class CitedActOut(_Out):
    id: str | None = Field(description="the act's id (pl:kc, pl:upk, de:kschg, eu:2016/679, pl:du:1982:268, "
                           "pl:ustawa:2006-07-22); null for an act named by a title no table knows")
    jurisdiction: str = Field(description="pl | de | eu")
    held: bool = Field(description="the corpus holds a version of the act")
    title: str | None = Field(description="the act as named in a sentence: \"ustawa o prawach konsumenta\", "
                              "\"Kündigungsschutzgesetz\"; for an act no table knows, as printed")
    official_title: str | None = Field(description="\"Ustawa z dnia 30 maja 2014 r. o prawach konsumenta\"")
    date: str | None = Field(description="the date the act bears (YYYY-MM-DD)")
    citation: str | None = Field(description="its usual short form: k.c., KSchG, RODO")
    address: str | None = Field(description="Polish ELI DU/2014/827, German Fundstelle BGBl I: 1951, 499, EU ELI")
    gazette: str | None = Field(description="the address as printed: Dz. U. 2014 poz. 827")
    known: bool = Field(description="in the act registry or the table of known acts; false: only what the "
                        "citation printed (an address, a date, an abbreviation)")


class CitedRangeOut(_Out):
    first: str = Field(description="relative id of the range's first unit as cited: art:353")
    last: str = Field(description="relative id of its last unit: art:356")
    expanded: bool = Field(description="units lists every unit the range covers")
    count: int | None = Field(description="units the range covers (the act's own order at the date; for an act "
                              "not held, by number); null when unknown")
    problem: str | None = Field(description="null | backwards | too_long (more than 60 units) | end_missing | "
                                "not_covered | uncountable")


class ResolvedCitationOut(_Out):
    start: int = Field(description="character offset in text (text[start:end] is the span)")
    end: int
    text: str = Field(description="the citation as printed")
    language: str = Field(description="pl | de: the extractor that read it")
    act_id: str | None = Field(description="the act named (pl:kc, de:bgb); null when none is")
    match: str = Field(description="the least exact of the units' match kinds (order: " + ", ".join(KINDS) + ")")
    units: list[UnitResolutionOut]
    act_text: str | None = Field(description="the act as printed")
    printed: str | None = Field(description="the number as printed, when it was read differently (a superscript "
                                            "lost in print: art. 4491 → 449^1)")
    note: str | None
    act: CitedActOut | None = Field(description="the act named, held or not: title, date, address; null when no act "
                                    "is named")
    range: CitedRangeOut | None = Field(description="the citation is a range: its ends, whether its units were "
                                        "listed, and why not")


class ResolutionOut(_Out):
    as_of: str = Field(description="the date the citations were resolved at")
    language: str | None = Field(description="the text's language, given or guessed from cue words")
    citations: list[ResolvedCitationOut]
    counts: dict[str, int] = Field(description="citations per match kind")


@router.post("/citations/resolve", response_model=ResolutionOut, responses={**UNPROCESSABLE, **TOO_LARGE})
def resolve(body: ResolveIn, resolver: CitationResolver = Depends(get_resolver)) -> ResolutionOut:
    """Every statute citation in ``text`` (Polish ``art. 415 k.c.``, ``art. 98 § 1 i 3 k.p.c.``; German
    ``§ 823 Abs. 1 BGB``, ``§§ 823, 826 BGB``) with the units it names, their wording at ``as_of`` and how
    exactly each matched. Numbers are matched whole: ``§ 823`` never resolves to ``§ 1823``; an act-less
    citation lists the held acts that have such a unit and picks none. A malformed date is refused (422)."""
    return ResolutionOut.model_validate(resolver.resolve(body.text, as_of=body.as_of, language=body.language))
