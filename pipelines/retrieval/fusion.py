"""Fusion of the hybrid legs (z-score or reciprocal rank), done in our code so it works the same
on every backend (and on Elasticsearch without the licence that server-side RRF needs).

:class:`HybridConfig` and :func:`fuse` live here, not in a backend module, so both backends (and
the reranker's callers) share them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from pipelines.retrieval.interface import Hit

RRF_K = 60
FUSION_METHODS: tuple[str, ...] = ("zscore", "rrf")


@dataclass(frozen=True)
class HybridConfig:
    """How ``hybrid`` fuses its legs. Defaults were chosen on the 2012–2020 exam questions (459,
    disjoint from the 2021–2023 questions we report on): z-score fusion of lexical 1, dense 1,
    gAIus 0.5 beat the best weighted RRF (lexical 1, dense 0.25, k 30) for both query styles.
    A loaded reranker (``pipelines.retrieval.reranker``) replaces the fusion, not the legs'
    ``bigram_weight``."""
    method: str = "zscore"  # or "rrf"
    weights: tuple[tuple[str, float], ...] = (("bm25", 1.0), ("dense", 1.0), ("gaius", 0.5))
    rrf_k: int = RRF_K
    bigram_weight: float = 0.5  # lexical = BM25(unigrams) + w · BM25(word bigrams)

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise ValueError(f"unknown fusion method {self.method!r}; use one of {FUSION_METHODS}")

    def legs(self) -> list[str]:
        """The legs fusion needs: those with a non-zero weight."""
        return [name for name, w in self.weights if w]


RRF_CONFIG = HybridConfig(method="rrf", weights=(("bm25", 1.0), ("dense", 0.25)), rrf_k=30)


def rrf(rankings: Mapping[str, Sequence[Hit]], k: int, *, rrf_k: int = RRF_K,
        weights: Mapping[str, float] | None = None) -> list[Hit]:
    """score(d) = Σ_r w_r / (rrf_k + rank_r(d)); ties broken by the best single rank."""
    scores: dict[str, float] = {}
    best: dict[str, Hit] = {}
    sources: dict[str, dict[str, int]] = {}
    for name, hits in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for h in hits:
            scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w / (rrf_k + h.rank)
            sources.setdefault(h.chunk_id, {})[name] = h.rank
            if h.chunk_id not in best or h.rank < best[h.chunk_id].rank:
                best[h.chunk_id] = h
    order = sorted(scores, key=lambda c: (-scores[c], min(sources[c].values()), c))[:k]
    out = []
    for i, cid in enumerate(order, 1):
        h = best[cid]
        out.append(Hit(h.chunk_id, h.article_id, h.act_id, h.version, scores[cid], i, h.heading_path,
                       h.text, h.status, dict(sources[cid])))
    return out


def zscore_fusion(rankings: Mapping[str, Sequence[Hit]], k: int,
                  weights: Mapping[str, float] | None = None) -> list[Hit]:
    """score(d) = Σ_r w_r · z_r(d), z = (score − mean) / std within each ranking's candidates.

    Why besides RRF: ranks throw away how far ahead a retriever's best match is; on the exam
    questions of 2012–2020 (tuning set) this fusion beat every weighted RRF at rank 1. A document
    missing from a ranking gets nothing from it."""
    import statistics

    total: dict[str, float] = {}
    best: dict[str, Hit] = {}
    sources: dict[str, dict[str, int]] = {}
    for name, hits in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        if not hits or not w:
            continue
        scores = [h.score for h in hits]
        mean = statistics.fmean(scores)
        std = statistics.pstdev(scores) or 1.0
        for h in hits:
            total[h.chunk_id] = total.get(h.chunk_id, 0.0) + w * (h.score - mean) / std
            sources.setdefault(h.chunk_id, {})[name] = h.rank
            if h.chunk_id not in best or h.rank < best[h.chunk_id].rank:
                best[h.chunk_id] = h
    order = sorted(total, key=lambda c: (-total[c], min(sources[c].values()), c))[:k]
    return [Hit(best[c].chunk_id, best[c].article_id, best[c].act_id, best[c].version, total[c], i,
                best[c].heading_path, best[c].text, best[c].status, dict(sources[c])) for i, c in enumerate(order, 1)]


def fuse(config: HybridConfig, legs: Mapping[str, Sequence[Hit]], depth: int) -> list[Hit]:
    """Hybrid without a reranker, identical on every backend: the legs' chunk hits fused by
    ``config.method`` with ``config.weights`` (and ``config.rrf_k``), ``depth`` deep."""
    weights = dict(config.weights)
    if config.method == "zscore":
        return zscore_fusion(legs, depth, weights=weights)
    return rrf(legs, depth, rrf_k=config.rrf_k, weights=weights)
