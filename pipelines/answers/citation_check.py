"""Citation verification for the answer job: does every unit an answer cites exist in its act, and
is it in force on the question's date?

Why: the paper scores (answer / context / joint, :mod:`.scoring`) count a hallucinated provision
only as one more "extra" citation; they cannot say how often an answerer invents provisions or
cites law that no longer applies. Both are what a lawyer checks first, so the answer job reports
them next to the paper scores (which stay unchanged).

How: every citation of an :class:`~pipelines.answers.types.AnswerResult` — its ``cited_unit_ids``
(corpus ids, rendered back to the printed form ``art. 415 § 1 k.c.``) and its ``invalid_citations``
(what extraction could not place: raw strings such as ``art. 5 k.p.c.`` or ids not in the answered
version) — goes through the citation resolver (:class:`pipelines.resolver.CitationResolver`) at
the question's date. Per cited unit:

* ``exists`` — the unit is in the act: the resolver's match is ``exact`` (in the version in force
  on the date) or ``not_in_version`` (in another held version of the act); ``False`` when it is
  ``not_found`` (the act is held, no held version has the unit: a hallucination) or ``partial``
  (the article exists, the cited paragraph/point does not — the paper's ``art. 109^3 § 2``);
  ``None`` when the resolver cannot tell (act not held, no act named, date before every held
  version): such units are counted as *unverified*, never as hallucinated;
* ``in_force`` — exists, is in the version in force on the date and its status there is
  ``in_force`` (a repealed ``(uchylony)`` article or a unit only in another version is not).

The question's date (:func:`question_date`): the exam's date when the benchmark row has one
(``exam_date``, the dated PDF exams of 2025); otherwise the answered corpus version's date — the
law the answerer was given. The exam *year* alone is not used: most exam years (2012–2023) precede
every held version (k.c. 2024-12-19), where the resolver can only say ``not_covered``, which
would leave every citation unverified.

Rates (:func:`citation_scores`), over the cited units of the answers (failed questions included
with the units they cite, usually none): ``hallucination_rate`` = hallucinated / verified units,
``not_in_force_rate`` = existing-but-not-in-force / verified units; unverified units are counted
separately so a resolver gap is visible and never lowers a rate.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from pipelines.answers.types import AnswerResult

__all__ = ["CitedUnitCheck", "AnswerCitationCheck", "CitationVerifier", "citation_text", "question_date",
           "citation_scores", "verify_all", "EXISTS", "HALLUCINATED"]

EXISTS = frozenset({"exact", "not_in_version"})
HALLUCINATED = frozenset({"not_found", "partial"})
_UNIT_ID = re.compile(r"^(?P<act>[a-z]{2}:[a-z0-9_]+):(?P<kind>art|par):(?P<num>[^:]+)(?P<rest>(?::[a-z]+:[^:]+)*)$",
                      re.I)


@dataclass(frozen=True)
class CitedUnitCheck:
    """One cited unit, verified. ``citation`` is what the answer gave (a unit id or raw text);
    ``unit_id`` what the resolver read it as (None when it named no unit it could place)."""

    citation: str
    unit_id: str | None
    match: str
    exists: bool | None
    in_force: bool | None
    status: str | None = None
    version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AnswerCitationCheck:
    """Every cited unit of one answer, verified on ``as_of`` (``as_of_source``: exam_date | corpus_version)."""

    question_id: str
    as_of: str
    as_of_source: str
    units: tuple[CitedUnitCheck, ...]

    @property
    def verified(self) -> tuple[CitedUnitCheck, ...]:
        return tuple(u for u in self.units if u.exists is not None)

    @property
    def hallucinated(self) -> tuple[str, ...]:
        """The cited units (unit id, else the citation) that do not exist in their act."""
        return tuple(dict.fromkeys(u.unit_id or u.citation for u in self.units if u.exists is False))

    @property
    def not_in_force(self) -> tuple[str, ...]:
        """The cited units that exist but are not in force on ``as_of`` (repealed, pending, other version)."""
        return tuple(dict.fromkeys(u.unit_id or u.citation for u in self.units
                                   if u.exists is True and u.in_force is False))

    @property
    def unverified(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u.unit_id or u.citation for u in self.units if u.exists is None))


def citation_text(unit_id: str) -> str:
    """A corpus unit id in the form acts print it, for the resolver: ``pl:kc:art:415:par:1:pt:2`` →
    ``art. 415 § 1 pkt 2 k.c.``, ``de:bgb:par:823:abs:1`` → ``§ 823 Abs. 1 BGB``. The act's short
    citation comes from the act registry; a string that is not a unit id comes back unchanged."""
    m = _UNIT_ID.match(unit_id.strip())
    if not m:
        return unit_id
    from schemas.acts import registry

    act_id, kind, num = m.group("act").lower(), m.group("kind").lower(), m.group("num")
    try:
        act = registry().get(act_id)
    except KeyError:
        return unit_id
    rest = m.group("rest").split(":")[1:]
    parts: list[str] = []
    german = act.jurisdiction == "de"
    if german:
        parts.append(f"{'§' if kind == 'par' else 'Art.'} {num}")
        words = {"abs": "Abs.", "nr": "Nr.", "satz": "Satz", "lit": "Buchst.", "buchst": "Buchst."}
    else:
        parts.append(f"art. {num}")
        words = {"par": act.paragraph_unit, "ust": "ust.", "pt": "pkt", "lit": "lit.", "tiret": "tiret"}
    for level, value in zip(rest[::2], rest[1::2]):
        word = words.get(level.lower())
        if word is None:
            break  # a level the printed form has no word for: cite its parent
        parts.append(f"{word} {value}" if word != "§" else f"§ {value}")
    return " ".join(parts) + f" {act.citation}"


def question_date(exam_date: dt.date | str | None, corpus_version: str) -> tuple[str, str]:
    """(ISO date, source) the citations of a question are verified on: the exam's date when known,
    else the corpus version's date (module docstring)."""
    if exam_date:
        day = exam_date if isinstance(exam_date, str) else exam_date.isoformat()
        return day[:10], "exam_date"
    return dt.date.fromisoformat(corpus_version).isoformat(), "corpus_version"


def _field(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


class CitationVerifier:
    """Verifies answers' citations with a citation resolver (anything with
    ``resolve(text, *, as_of=..., language=...)`` returning a resolution whose ``citations`` carry
    ``units`` with ``unit_id``, ``match``, ``status``, ``version``)."""

    def __init__(self, resolver: Any, *, language: str = "pl"):
        self.resolver = resolver
        self.language = language
        self._memo: dict[tuple[str, str], tuple[CitedUnitCheck, ...]] = {}

    @classmethod
    def at(cls, home: Any, *, language: str = "pl") -> "CitationVerifier":
        from pipelines.resolver import CitationResolver

        return cls(CitationResolver.at(home), language=language)

    def check_citation(self, citation: str, as_of: str) -> tuple[CitedUnitCheck, ...]:
        """The units one cited string (unit id or text) names, each verified on ``as_of``."""
        key = (citation, as_of)
        if key not in self._memo:
            self._memo[key] = self._check(citation, as_of)
        return self._memo[key]

    def _check(self, citation: str, as_of: str) -> tuple[CitedUnitCheck, ...]:
        text = citation_text(citation)
        language = self.language
        if _UNIT_ID.match(citation.strip()):
            language = citation.strip()[:2].lower()
        resolution = self.resolver.resolve(text, as_of=as_of, language=language)
        out: list[CitedUnitCheck] = []
        for cit in _field(resolution, "citations", []) or []:
            units = _field(cit, "units", []) or []
            if not units:  # a citation the resolver read but could place no unit of (no act, act not held)
                out.append(CitedUnitCheck(citation, None, str(_field(cit, "match", "not_covered")), None, None))
            for u in units:
                match = str(_field(u, "match"))
                status = _field(u, "status")
                exists = True if match in EXISTS else False if match in HALLUCINATED else None
                in_force = None if exists is None else (exists and match == "exact" and status == "in_force")
                out.append(CitedUnitCheck(citation, _field(u, "unit_id"), match, exists, in_force, status,
                                          _field(u, "version")))
        if not out:
            out.append(CitedUnitCheck(citation, None, "no_citation", None, None))
        return tuple(out)

    def verify(self, result: AnswerResult, as_of: str, *, as_of_source: str = "corpus_version") -> AnswerCitationCheck:
        """Every citation of ``result`` (cited ids, then invalid citations), verified on ``as_of``.
        A unit named twice (``art. 415 k.c.`` and ``pl:kc:art:415``) is kept once."""
        seen: dict[str, CitedUnitCheck] = {}
        for cited in dict.fromkeys((*result.cited_unit_ids, *result.invalid_citations)):
            if not cited or not cited.strip():
                continue
            for unit in self.check_citation(cited, as_of):
                seen.setdefault(unit.unit_id or unit.citation, unit)
        return AnswerCitationCheck(result.question_id, as_of, as_of_source, tuple(seen.values()))


def citation_scores(checks: Iterable[AnswerCitationCheck | None]) -> dict[str, float | int]:
    """Counts and rates over the cited units of ``checks`` (module docstring); ``None`` entries
    (no result) cite nothing."""
    cited = verified = hallucinated = not_in_force = 0
    answers_with_hallucination = 0
    for c in checks:
        if c is None:
            continue
        cited += len(c.units)
        verified += len(c.verified)
        hallucinated += len(c.hallucinated)
        not_in_force += len(c.not_in_force)
        answers_with_hallucination += bool(c.hallucinated)
    return {"cited_units": cited, "verified_units": verified, "unverified_units": cited - verified,
            "hallucinated_units": hallucinated, "not_in_force_units": not_in_force,
            "answers_with_hallucination": answers_with_hallucination,
            "hallucination_rate": round(hallucinated / verified, 4) if verified else 0.0,
            "not_in_force_rate": round(not_in_force / verified, 4) if verified else 0.0}


def verify_all(verifier: CitationVerifier, results: Sequence[AnswerResult | None],
               dates: Sequence[tuple[str, str]]) -> list[AnswerCitationCheck | None]:
    """``verifier.verify`` of each result on its (date, source); None stays None."""
    if len(results) != len(dates):
        raise ValueError(f"{len(results)} results but {len(dates)} question dates")
    return [None if r is None else verifier.verify(r, d, as_of_source=s) for r, (d, s) in zip(results, dates)]
