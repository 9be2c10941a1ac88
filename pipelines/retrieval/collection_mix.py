"""Search statutes, cases, or both, with the RWTH report's proportional mix.

Why a mix and not one merged ranking: statute chunks and decision chunks score on different
scales (a decision repeats the law's words in long paragraphs), so a single ranking over both
lets one collection crowd out the other. The RWTH assistant instead takes 70 % of its n = 21
documents from the collection its classifier picks and 30 % from the other (50/50 when it cannot
decide); both kinds of context reach the reader. We keep each collection's own ranking and
interleave them by proportional position, so the first results already follow the 70/30 split,
and we backfill from the other collection when one has fewer hits than its quota.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Sequence

from pipelines.retrieval.interface import Filters, Hit, Retriever, SearchRequest
from pipelines.retrieval.query_classifier import Classification, classify

Target = Literal["statutes", "cases", "both"]
TARGETS: tuple[str, ...] = ("statutes", "cases", "both")
MAJOR_SHARE = 0.7  # the report's 70/30
DEFAULT_N = 21  # the report's total


def quotas(label: str, n: int, share: float = MAJOR_SHARE) -> tuple[int, int]:
    """(statute hits, case hits) for a classified query, as in the report's ``retrieve``."""
    if label == "law":
        n_law = int(n * share)
        return n_law, n - n_law
    if label == "case":
        n_case = int(n * share)
        return n - n_case, n_case
    n_case = n // 2
    return n - n_case, n_case


def interleave(major: Sequence[Hit], minor: Sequence[Hit], n_major: int, n_minor: int) -> list[Hit]:
    """Proportional positions: item i (0-based) of a list of quota q sits at (i + 1) / q, ties to
    the major collection, so a 70/30 list opens with two major hits. Ranks are rewritten 1..n."""
    keyed = [((i + 1) / n_major, 0, h) for i, h in enumerate(major[:n_major])] if n_major else []
    keyed += [((i + 1) / n_minor, 1, h) for i, h in enumerate(minor[:n_minor])] if n_minor else []
    out = [h for _, _, h in sorted(keyed, key=lambda t: (t[0], t[1]))]
    for rank, h in enumerate(out, 1):
        h.rank = rank
    return out


@dataclass
class MixedResult:
    hits: list[Hit]
    classification: Classification | None
    statute_quota: int
    case_quota: int


@dataclass(frozen=True)
class Collections:
    """Where the two collections live: one backend (or two) plus the act filters that select
    each collection (statutes: e.g. ``de:bgb``… or ``pl:kc``…; cases: the language's ``de:cases``
    or ``pl:cases``)."""
    statutes: Retriever
    cases: Retriever
    statute_filters: Filters
    case_filters: Filters


def mixed_search(collections: Collections, request: SearchRequest, *, target: Target = "both",
                 classification: Classification | None = None, llm_settings=None,
                 share: float = MAJOR_SHARE, lang: str | None = None) -> MixedResult:
    """``request.k`` results: statutes only, cases only, or the classified 70/30 mix. ``lang``: the
    collections' language, whose law/case cues the lexical classifier reads (None: every language's)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    n = request.k
    if target == "statutes":
        hits = collections.statutes.search(replace(request, filters=collections.statute_filters))
        return MixedResult(hits[:n], None, n, 0)
    if target == "cases":
        hits = collections.cases.search(replace(request, filters=collections.case_filters))
        return MixedResult(hits[:n], None, 0, n)
    cls = classification or classify(request.query, llm_settings, lang)
    n_law, n_case = quotas(cls.label, n, share)
    # ask each collection for n, not its quota: the spare hits backfill a short collection
    law = collections.statutes.search(replace(request, filters=collections.statute_filters))
    case = collections.cases.search(replace(request, filters=collections.case_filters))
    if len(law) < n_law:
        n_law, n_case = len(law), min(len(case), n - len(law))
    elif len(case) < n_case:
        n_law, n_case = min(len(law), n - len(case)), len(case)
    if cls.label == "case":
        hits = interleave(case, law, n_case, n_law)
    else:
        hits = interleave(law, case, n_law, n_case)
    return MixedResult(hits, cls, n_law, n_case)
