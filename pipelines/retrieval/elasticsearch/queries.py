"""Elasticsearch request bodies of the search legs, and hits parsed from their responses.

Pure functions, no client: :mod:`.search` sends what they build. The legs match the embedded
backend's (``EmbeddedBackend.search``):

* ``bm25``: BM25 over our analysed unigrams (``text_analyzed``) plus ``bigram_weight`` × BM25 over
  word bigrams (``text_bigrams``), one ``bool.should`` of the two ``match`` queries, which sums
  the two scores exactly as the embedded backend adds its two FTS scores;
* ``dense``: top-level ``knn`` on ``vector``;
* server-side hybrid (licensed clusters): ``retriever.rrf`` over the two.

Query bodies are structured only (``match``/``multi_match``/``knn``/``retriever``, filters as
``term``/``terms``/``range`` from :mod:`.visibility`): user text is only ever a JSON string value,
never query syntax.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from pipelines.retrieval.elasticsearch.names import iso
from pipelines.retrieval.backend_common import bigrams
from pipelines.retrieval.fusion import RRF_K
from pipelines.retrieval.interface import Hit

EncodeQuery = Callable[[str], Sequence[float]]
AnalyzeQuery = Callable[[str], "tuple[str, str]"]

MAX_KNN = 10_000  # Elasticsearch's limit for k and num_candidates
LEGS: tuple[str, ...] = ("bm25", "dense", "gaius")  # the retrievers hybrid can fuse


def analyze_query_from(analyzer: Any) -> AnalyzeQuery:
    """Adapt an object with ``analyze(text) -> tokens`` and ``fold(tokens) -> tokens`` (such as
    ``pipelines.retrieval.analyzers.Analyzer``) to ``analyze_query``. Use the same analyser that
    produced ``text_analyzed``/``text_folded`` at index time."""

    def analyze_query(text: str) -> tuple[str, str]:
        tokens = list(analyzer.analyze(text))
        return " ".join(tokens), " ".join(analyzer.fold(tokens))

    return analyze_query


FALLBACK_TEXT_BOOST, FALLBACK_HEADING_BOOST = 1.0, 0.5  # lexical leg without a project analyser


def bm25_query(query: str, filters: list[dict[str, Any]], *, analyzed: str | None = None,
               folded: str | None = None, bigram_weight: float = 0.5, analyzed_boost: float = 1.0,
               text_boost: float = 0.0, heading_boost: float = 0.0,
               folded_boost: float = 0.0) -> dict[str, Any] | None:
    """The lexical leg as one ``bool`` query; None when there is nothing to match.

    With our analysed query (``analyzed``, space-separated tokens): ``match`` on ``text_analyzed``
    plus ``match`` on ``text_bigrams`` with ``boost = bigram_weight``, in ``should`` so the scores
    add up — the embedded backend's BM25(unigrams) + w · BM25(bigrams). ``text``/``heading_path``
    (language analyser) and ``text_folded`` join only with a non-zero boost. ``analyzed=None``
    means no project analyser is configured: then ``text``/``heading_path`` carry the leg.
    """
    should: list[dict[str, Any]] = []
    tokens = analyzed.split() if analyzed else []
    if tokens and analyzed_boost:
        should.append({"match": {"text_analyzed": {"query": " ".join(tokens), "boost": analyzed_boost}}})
    pairs = bigrams(tokens)
    if pairs and bigram_weight:
        should.append({"match": {"text_bigrams": {"query": " ".join(pairs), "boost": bigram_weight}}})
    if folded and folded.strip() and folded_boost:
        should.append({"match": {"text_folded": {"query": folded, "boost": folded_boost}}})
    if analyzed is None:
        text_boost = text_boost or FALLBACK_TEXT_BOOST
        heading_boost = heading_boost or FALLBACK_HEADING_BOOST
    fields = [f"{name}^{boost:g}" for name, boost in (("text", text_boost), ("heading_path", heading_boost)) if boost]
    if fields and query.strip():
        should.insert(0, {"multi_match": {"query": query, "fields": fields, "type": "best_fields"}})
    if not should:
        return None
    return {"bool": {"should": should, "minimum_should_match": 1, "filter": filters}}


def knn_clause(vector: Sequence[float], k: int, filters: list[dict[str, Any]], *,
               num_candidates_factor: int = 10) -> dict[str, Any]:
    k = max(1, min(k, MAX_KNN))
    num_candidates = min(MAX_KNN, max(k * num_candidates_factor, 100, k))
    clause: dict[str, Any] = {"field": "vector", "query_vector": [float(x) for x in vector],
                              "k": k, "num_candidates": num_candidates}
    if filters:
        clause["filter"] = {"bool": {"filter": filters}}
    return clause


def rrf_retriever(bm25: dict[str, Any], knn: dict[str, Any], *, rank_window_size: int,
                  rank_constant: int = RRF_K, weights: tuple[float, float] = (1.0, 1.0)) -> dict[str, Any]:
    """``retriever.rrf`` over a standard (bm25) and a knn child retriever (licensed clusters).

    Equal weights use the plain child form every 9.x cluster accepts; other weights need the
    weighted form ``{"retriever": ..., "weight": w}`` (Elasticsearch 9.2 and later)."""
    children: list[dict[str, Any]] = [{"standard": {"query": bm25}}, {"knn": knn}]
    if tuple(weights) != (1.0, 1.0):
        children = [{"retriever": c, "weight": w} for c, w in zip(children, weights)]
    return {"rrf": {
        "retrievers": children,
        "rank_window_size": rank_window_size,
        "rank_constant": rank_constant,
    }}


def parse_hits(response: Mapping[str, Any], source: str | None) -> list[Hit]:
    """``hits.hits`` → :class:`Hit` list ranked 1..n; ``source`` names the retriever for fusion."""
    out: list[Hit] = []
    for i, h in enumerate(response.get("hits", {}).get("hits", []), 1):
        s = h.get("_source") or {}
        out.append(Hit(
            chunk_id=s.get("chunk_id", h.get("_id", "")),
            article_id=s.get("article_id", ""),
            act_id=s.get("act_id", ""),
            version=iso(s.get("version_from", "")),  # the search replaces it by the act's resolved version
            score=float(h.get("_score") or 0.0),
            rank=i,
            heading_path=s.get("heading_path") or "",
            text=s.get("text") or "",
            status=s.get("status") or "",
            sources={source: i} if source else {},
        ))
    return out
