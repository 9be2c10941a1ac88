"""A prior over §§ learned from benchmark labels, strictly cross-validated, and a small learned
fusion of retriever scores with it.

Why: GerLayQA's lay questions cite a few general §§ over and over (823, 1004, 242, 280, 573): ranking
§§ by how often they are gold, ignoring the question, beats BM25 and dense on recall@10. Such a prior
may only be learned from data we are allowed to learn from — here the dev split itself — so it is
always computed *out of fold*: the questions are split into k folds (:func:`assign_folds`, a seeded
hash of the question id, so the split never depends on file order), and the prior used for a question
of fold i is counted on the other folds only (:func:`fold_priors`). The learned fusion is fitted the
same way (:func:`cross_validated_fusion`): for test fold i, weights are fitted on the other folds,
whose own prior features exclude both fold i and their own fold (nested), so no label of a question
ever reaches the features or weights used to rank it.

The fusion model is a listwise softmax (one group per question: its candidate §§, the gold ones
positive) over a handful of standardised features per candidate: each leg's log-rank and score
relative to the leg's best, whether the leg retrieved it, and the log-prior; fitted by L-BFGS.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np


def assign_folds(question_ids: Sequence[str], k: int = 5, seed: int = 13) -> list[int]:
    """Fold 0..k-1 per question: questions ordered by sha256(seed:id), dealt round-robin, so folds
    are equal-sized (±1), reproducible and independent of input order."""
    if k < 2:
        raise ValueError(f"need at least 2 folds, got {k}")
    order = sorted(range(len(question_ids)),
                   key=lambda i: hashlib.sha256(f"{seed}:{question_ids[i]}".encode()).hexdigest())
    folds = [0] * len(question_ids)
    for pos, i in enumerate(order):
        folds[i] = pos % k
    return folds


@dataclass
class SectionPrior:
    """log P(§) from label counts with add-``alpha`` smoothing over ``vocabulary`` §§."""
    counts: Counter
    total: int
    vocabulary: int
    alpha: float = 0.5
    excluded_folds: tuple[int, ...] = ()

    def log_prior(self, article_id: str) -> float:
        return math.log((self.counts.get(article_id, 0) + self.alpha) / (self.total + self.alpha * self.vocabulary))

    def top(self, n: int) -> list[str]:
        if getattr(self, "_order", None) is None:
            self._order = [a for a, _ in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        return self._order[:n]


def count_labels(golds: Sequence[Sequence[str]], folds: Sequence[int], exclude: set[int]) -> tuple[Counter, int]:
    """Gold §§ counted once per question, over questions whose fold is not in ``exclude``."""
    c: Counter = Counter()
    n = 0
    for g, f in zip(golds, folds):
        if f in exclude:
            continue
        c.update(set(g))
        n += len(set(g))
    return c, n


def fold_priors(golds: Sequence[Sequence[str]], folds: Sequence[int], *, vocabulary: int,
                alpha: float = 0.5) -> dict[int, SectionPrior]:
    """The prior for each fold i, counted on the other folds only."""
    out = {}
    for f in sorted(set(folds)):
        c, n = count_labels(golds, folds, {f})
        out[f] = SectionPrior(c, n, vocabulary, alpha, (f,))
    return out


# ----------------------------------------------------------------------------------------------
# learned fusion

# per leg: −log(rank) (−log(2·depth) when the leg did not retrieve it), score / the leg's best score,
# retrieved at all
LEG_FEATURES = ("logrank", "rel", "in")


def feature_names(legs: Sequence[str], use_prior: bool = True) -> tuple[str, ...]:
    return (("log_prior",) if use_prior else ()) + tuple(f"{leg}_{f}" for leg in legs for f in LEG_FEATURES)


@dataclass
class Candidates:
    """One question's legs: article ids ranked best first with their scores."""
    legs: dict[str, list[tuple[str, float]]] = field(default_factory=dict)


def candidate_features(cands: Candidates, prior: SectionPrior, prior_depth: int, legs: Sequence[str],
                       use_prior: bool = True) -> tuple[list[str], np.ndarray]:
    """Candidate §§ (union of the legs and, with the prior, its top ``prior_depth``) and their
    features in :func:`feature_names` order."""
    ids: dict[str, None] = {}
    for leg in legs:
        for a, _ in cands.legs.get(leg, []):
            ids.setdefault(a)
    if use_prior:
        for a in prior.top(prior_depth):
            ids.setdefault(a)
    order = list(ids)
    names = feature_names(legs, use_prior)
    x = np.zeros((len(order), len(names)))
    pos = {a: i for i, a in enumerate(order)}
    if use_prior:
        x[:, 0] = [prior.log_prior(a) for a in order]
    for j, leg in enumerate(legs):
        base = (1 if use_prior else 0) + j * len(LEG_FEATURES)
        ranked = cands.legs.get(leg, [])
        if not ranked:
            continue
        best = max(abs(s) for _, s in ranked) or 1.0
        x[:, base] = -math.log(2 * len(ranked))
        for r, (a, s) in enumerate(ranked, 1):
            i = pos[a]
            x[i, base] = -math.log(r)
            x[i, base + 1] = s / best
            x[i, base + 2] = 1.0
    return order, x


@dataclass
class FusionModel:
    weights: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    features: tuple[str, ...]

    def score(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.std) @ self.weights


def fit_listwise(groups: Sequence[tuple[np.ndarray, np.ndarray]], *, l2: float = 1e-2,
                 features: tuple[str, ...] = ()) -> FusionModel:
    """Softmax over each group's candidates, maximising the probability mass on its gold ones
    (groups without a gold candidate carry no signal and are skipped); L-BFGS on the mean
    negative log-likelihood plus ``l2`` · |w|² over standardised features."""
    from scipy.optimize import minimize

    groups = [(x, y) for x, y in groups if y.any() and len(y) > 1]
    if not groups:
        raise ValueError("no training group has a gold candidate")
    allx = np.concatenate([x for x, _ in groups])
    mean, std = allx.mean(0), allx.std(0)
    std[std == 0] = 1.0
    z = (allx - mean) / std
    q = np.concatenate([y / y.sum() for _, y in groups]).astype(float)
    bounds = np.cumsum([0] + [len(y) for _, y in groups])
    starts = bounds[:-1]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = z @ w
        gmax = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(gmax, np.diff(bounds)))
        norm = np.add.reduceat(e, starts)
        logp = s - np.repeat(gmax + np.log(norm), np.diff(bounds))
        p = np.exp(logp)
        nll = -(q * logp).sum() / len(groups) + l2 * (w @ w)
        grad = -(z.T @ (q - p * np.repeat(np.add.reduceat(q, starts), np.diff(bounds)))) / len(groups) + 2 * l2 * w
        return nll, grad

    res = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return FusionModel(res.x, mean, std, features)


def cross_validated_fusion(cands: Sequence[Candidates], golds: Sequence[Sequence[str]], folds: Sequence[int], *,
                           legs: Sequence[str], vocabulary: int, prior_depth: int = 50, alpha: float = 0.5,
                           use_prior: bool = True) -> tuple[list[list[str]], dict[int, FusionModel]]:
    """Ranked §§ per question, each fold ranked by a model fitted (and priors counted) without it."""
    fold_ids = sorted(set(folds))
    names = feature_names(legs, use_prior)
    ranked: list[list[str]] = [[] for _ in cands]
    models: dict[int, FusionModel] = {}
    for test in fold_ids:
        groups = []
        nested = {f: SectionPrior(*count_labels(golds, folds, {test, f}), vocabulary, alpha, (test, f))
                  for f in fold_ids if f != test}  # a training question's prior: neither the test nor its own fold
        for i, (c, g, f) in enumerate(zip(cands, golds, folds)):
            if f == test:
                continue
            prior = nested[f]
            order, x = candidate_features(c, prior, prior_depth, legs, use_prior)
            gs = set(g)
            groups.append((x, np.array([a in gs for a in order])))
        model = fit_listwise(groups, features=names)
        models[test] = model
        c_count, n = count_labels(golds, folds, {test})
        prior = SectionPrior(c_count, n, vocabulary, alpha, (test,))
        for i, (c, f) in enumerate(zip(cands, folds)):
            if f != test:
                continue
            order, x = candidate_features(c, prior, prior_depth, legs, use_prior)
            s = model.score(x)
            ranked[i] = [order[j] for j in np.argsort(-s, kind="stable")]
    return ranked, models


def prior_rankings(golds: Sequence[Sequence[str]], folds: Sequence[int], *, vocabulary: int,
                   depth: int = 100) -> list[list[str]]:
    """The question-blind baseline: each question gets its fold's prior top ``depth``."""
    priors = fold_priors(golds, folds, vocabulary=vocabulary)
    tops = {f: p.top(depth) for f, p in priors.items()}
    return [tops[f] for f in folds]


def rrf_rankings(legs: Mapping[str, Sequence[str]], k: int = 60, weights: Mapping[str, float] | None = None) -> list[str]:
    """Reciprocal-rank fusion of article rankings (for the offline study of fusion weights)."""
    score: dict[str, float] = {}
    for name, ranked in legs.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for r, a in enumerate(ranked, 1):
            score[a] = score.get(a, 0.0) + w / (k + r)
    return sorted(score, key=lambda a: -score[a])
