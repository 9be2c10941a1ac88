"""What both search backends (embedded LanceDB and Elasticsearch) share: the analyser protocol,
the lexical leg's bigram rule, the candidate depth and the build report.

Why a module of its own: the two backends are siblings under one interface
(``pipelines.retrieval.interface``); neither may import the other. Their lexical legs must agree
token for token (same analyser input, same ``bigrams``) or hybrid weights tuned on one stop fitting
the other, and their builds report the same figures to ``index_build``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:
    from pipelines.retrieval.interface import Filters, Hit
    from pipelines.retrieval.section_fusion import LegSpec, SectionFusion
    from pipelines.retrieval.table_context import TableContext

CANDIDATES = 100  # per-retriever depth before fusion / article collapse
# a search whose visible rows exceed this is a "large scope" (spec: unfiltered German search over
# every act): no client-side leg (gAIus, reranker statistics, section fusion) loads its rows
IN_MEMORY_MAX_ROWS = 50_000

# Version ids sort in order: "2024-12-19", and a second change of an act on the same day
# "2012-08-06.02", ".03" … (German commits). The DATE of a version is its first ten characters.
VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(\.\d{2,})?$")


def normalise_version(version: "str | dt.date") -> str:
    """The version id as a string; a clear error for anything that does not sort as a version."""
    v = version.isoformat() if isinstance(version, dt.date) else str(version)
    if not VERSION_RE.match(v):
        raise ValueError(f"invalid version id {v!r}: expected YYYY-MM-DD or YYYY-MM-DD.NN")
    dt.date.fromisoformat(v[:10])  # a real day
    return v


def version_date(version: str) -> str:
    return version[:10]


def version_as_of(versions: Sequence[str], day: "dt.date | str") -> str | None:
    """The version a read "as of" ``day`` sees: the last (in id order) whose date is on or before
    ``day``; None when the act has none by then. A version closed on its own day by a later one
    (``2012-08-06`` then ``2012-08-06.02``) is never the one in force."""
    d = day.isoformat() if isinstance(day, dt.date) else str(day)
    older = [v for v in versions if version_date(v) <= d]
    return max(older) if older else None


def bigrams(tokens: Sequence[str]) -> list[str]:
    """Adjacent analysed tokens joined: rewards the phrase overlap of questions that quote the law."""
    return [f"{a}_{b}" for a, b in zip(tokens, tokens[1:])]


class TextAnalyzer(Protocol):
    id: str

    def analyze(self, text: str) -> list[str]: ...

    def fold(self, tokens: list[str]) -> list[str]: ...

    def analyze_many(self, texts: Sequence[str], batch_size: int = 64) -> list[list[str]]: ...


@dataclass
class BuildReport:
    act_id: str
    version: str
    table: str
    documents: int
    vectors: int
    seconds: float


def section_hybrid(model: "SectionFusion", query: str, filters: "Filters", depth: int, ctx: "TableContext",
                   analyzer: TextAnalyzer, run_leg: "Callable[[LegSpec, str, int], list[Hit]]",
                   submit: Callable[..., Any] | None = None) -> "list[Hit]":
    """The German hybrid (``section_fusion``) over any backend: each of the model's legs runs on its
    reduction of the question (``leg_queries``: key terms by the scope's IDF), ``run_leg(spec,
    reduced_query, chunk_depth)`` being the backend's own BM25 (with or without the bigram clause,
    ``spec.bigrams``) or dense search under ``filters``; the legs' hits are fused by the model with
    its §-prior (``fuse_hits``). ``ctx`` is the scope's table context (IDF, each §'s first chunk);
    ``submit`` (an executor's) runs the legs side by side."""
    from pipelines.retrieval.section_fusion import LEG_SPECS, fuse_hits, leg_queries

    chunk_depth = 3 * model.leg_articles  # chunks, collapsed to <= leg_articles §§
    queries = leg_queries(model.legs, query, analyzer, ctx)

    def one(leg: str) -> "list[Hit]":
        spec, q = LEG_SPECS[leg], queries[leg]
        return run_leg(spec, q, chunk_depth) if q.strip() else []

    if submit is None:
        legs = {leg: one(leg) for leg in model.legs}
    else:
        futures = {leg: submit(one, leg) for leg in model.legs}
        legs = {leg: f.result() for leg, f in futures.items()}
    return fuse_hits(model, legs, ctx, filters, depth)
