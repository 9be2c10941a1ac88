"""The representation legs of a query: which articles the texts *about* them match.

Three article-level rankings over the representation store (``store.RepresentationIndex``):

* ``rep_bm25`` — BM25 over the analysed representation texts, each article scored by its best row;
* ``rep_dense`` — cosine of the query vector (the one the hybrid already encoded: no second encode)
  to each row, each article by its best row;
* ``rep_knn`` — the query's nearest rows vote for their articles, each vote its cosine (a
  k-nearest-neighbour label transfer: an article that many similar questions were about wins over
  one matched once by chance).

The same rows about acts the corpus does not hold (``outside`` rows) feed the out-of-corpus
detector: :func:`outside_evidence` says how much of the query's neighbourhood is about other acts,
and which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from pipelines.retrieval.representations.store import RepresentationIndex

KNN = 20  # neighbours that vote in rep_knn
BM25_KNN = 100  # German: training questions (by BM25 over their words without stop words) that vote
OUTSIDE_KNN = 10  # neighbours (in-corpus and outside rows) that say whether a query is about another act


@dataclass
class RepLegs:
    rep_bm25: list[tuple[str, float]] = field(default_factory=list)
    rep_dense: list[tuple[str, float]] = field(default_factory=list)
    rep_knn: list[tuple[str, float]] = field(default_factory=list)


def rep_legs(index: RepresentationIndex, query_tokens: Sequence[str], query_vector: np.ndarray | None, *,
             acts: Iterable[str] | None = None, kinds: Iterable[str] | None = None,
             exclude: np.ndarray | None = None, k: int = 100) -> RepLegs:
    """The three legs over the rows of ``kinds`` about articles of ``acts`` (``exclude``: rows to
    leave out, e.g. a training question's own exam year)."""
    mask = index.mask(kinds, acts, exclude)
    out = RepLegs()
    if query_tokens:
        scores = index.bm25().scores(list(query_tokens))
        out.rep_bm25 = index.best_per_article(scores, mask, k)
    if query_vector is not None and index.vectors is not None:
        cos = index.dense_scores(query_vector)
        out.rep_dense = index.best_per_article(cos, mask, k)
        idx = np.flatnonzero(mask)
        if len(idx):
            top = idx[np.argsort(-cos[idx], kind="stable")[:KNN]]
            votes: dict[str, float] = {}
            for i in top:
                votes[index.article_ids[i]] = votes.get(index.article_ids[i], 0.0) + float(cos[i])
            out.rep_knn = sorted(votes.items(), key=lambda kv: -kv[1])[:k]
    return out


@dataclass
class OutsideEvidence:
    share: float  # cosine-weighted share of the nearest rows that are about acts not held
    best_outside: float  # the best cosine to an outside row
    best_inside: float  # the best cosine to a row about a held article
    acts: list[tuple[str, float]]  # outside acts among the neighbours, by weight


def outside_evidence(index: RepresentationIndex, query_vector: np.ndarray, *,
                     exclude: np.ndarray | None = None, k: int = OUTSIDE_KNN) -> OutsideEvidence:
    """How much the query's nearest training questions are about acts the corpus does not hold."""
    cos = index.dense_scores(query_vector)
    rows = np.ones(len(index), dtype=bool) if exclude is None else ~exclude
    qmask = rows & np.isin(index.kinds, ["exam", "lqad"])  # questions only: both in- and outside rows
    idx = np.flatnonzero(qmask)
    if not len(idx):
        return OutsideEvidence(0.0, 0.0, 0.0, [])
    top = idx[np.argsort(-cos[idx], kind="stable")[:k]]
    outside = np.array([index.article_ids[i] is None for i in top])
    w = np.maximum(cos[top], 0.0)
    share = float(w[outside].sum() / (w.sum() or 1.0))
    acts: dict[str, float] = {}
    for i, o in zip(top, outside):
        if o:
            acts[index.act_ids[i]] = acts.get(index.act_ids[i], 0.0) + float(cos[i])
    inside_idx = idx[[index.article_ids[i] is not None for i in idx]]
    outside_idx = idx[[index.article_ids[i] is None for i in idx]]
    return OutsideEvidence(share, float(cos[outside_idx].max()) if len(outside_idx) else 0.0,
                           float(cos[inside_idx].max()) if len(inside_idx) else 0.0,
                           sorted(acts.items(), key=lambda kv: -kv[1]))


def bm25_knn(index: RepresentationIndex, query_tokens: Sequence[str], *, exclude: np.ndarray | None = None,
             k: int = BM25_KNN, power: float = 2.0, depth: int = 100) -> list[tuple[str, float]]:
    """Articles voted for by the ``k`` training questions nearest to the query by BM25, each vote
    (score / best score) ** ``power``: label transfer from similar lay questions (GerLayQA: the same
    few situations — a deposit not returned, a neighbour's tree — recur, and so do their §§).
    Measured out of fold on GerLayQA dev (BENCHMARKS.md): with the §-prior as back-off, k 100 and
    power 2 beat k 10 / 30 and power 1."""
    if not query_tokens:
        return []
    return knn_votes(index, index.bm25().scores(list(query_tokens)), exclude=exclude, k=k, power=power,
                     depth=depth)


def knn_votes(index: RepresentationIndex, scores: np.ndarray, *, exclude: np.ndarray | None = None,
              k: int = BM25_KNN, power: float = 2.0, depth: int = 100) -> list[tuple[str, float]]:
    """The articles of the ``k`` best-scoring store rows (any similarity > 0: BM25, cosine), each
    row's vote (score / best score) ** ``power``, summed per article, best first."""
    idx = np.flatnonzero(index.mask(None, None, exclude) & (scores > 0))
    if not len(idx):
        return []
    top = idx[np.argsort(-scores[idx], kind="stable")[:k]]
    best = float(scores[top[0]])
    votes: dict[str, float] = {}
    for i in top:
        a = index.article_ids[i]
        votes[a] = votes.get(a, 0.0) + (float(scores[i]) / best) ** power
    return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
