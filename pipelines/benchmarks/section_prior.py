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
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from pipelines.retrieval.section_fusion import (  # noqa: F401  (re-exported: the study's vocabulary)
    Candidates, SectionFusion, SectionPrior, candidate_features, count_labels, feature_names, fit_listwise,
    fit_section_fusion,
)


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


def fold_priors(golds: Sequence[Sequence[str]], folds: Sequence[int], *, vocabulary: int,
                alpha: float = 0.5) -> dict[int, SectionPrior]:
    """The prior for each fold i, counted on the other folds only."""
    out = {}
    for f in sorted(set(folds)):
        c, n = count_labels(golds, folds, {f})
        out[f] = SectionPrior(c, n, vocabulary, alpha, (f,))
    return out


def cross_validated_fusion(cands: Sequence[Candidates], golds: Sequence[Sequence[str]], folds: Sequence[int], *,
                           legs: Sequence[str], vocabulary: int, prior_depth: int = 50, alpha: float = 0.5,
                           leg_articles: int = 100) -> tuple[list[list[str]], dict[int, SectionFusion]]:
    """Ranked §§ per question, each fold ranked — by the product's own ``SectionFusion.rank`` — with
    a model fitted (and a prior counted) without that fold."""
    ranked: list[list[str]] = [[] for _ in cands]
    models: dict[int, SectionFusion] = {}
    for test in sorted(set(folds)):
        model = fit_section_fusion(cands, golds, folds, legs=legs, vocabulary=vocabulary, exclude_fold=test,
                                   alpha=alpha, prior_depth=prior_depth, leg_articles=leg_articles)
        models[test] = model
        for i, (c, f) in enumerate(zip(cands, folds)):
            if f == test:
                ranked[i] = [a for a, _ in model.rank(c)]
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


# ---------------------------------------------------------------------------------------------
# the German kNN last stage (``lay_search.GermanKnn``), nested out of fold


def row_folds(rep_ids: Sequence[str], question_ids: Sequence[str], folds: Sequence[int]) -> np.ndarray:
    """The fold of the question each representation row was written from (rows ``<kind>:<question
    id>``, e.g. ``gerlayqa:17``), −1 for a row of a question outside the study (no gold § in the
    searched version): the rows to leave out of the kNN store that serves a fold."""
    fold_of = dict(zip(question_ids, folds))
    return np.array([fold_of.get(r.split(":", 1)[1], -1) if ":" in r else -1 for r in rep_ids], dtype=int)


def nested_hybrid_rankings(cands: Sequence[Candidates], golds: Sequence[Sequence[str]], folds: Sequence[int], *,
                           legs: Sequence[str], vocabulary: int, leg_articles: int = 100, prior_depth: int = 50
                           ) -> dict[frozenset[int], dict[int, list[tuple[str, float]]]]:
    """The section fusion's rankings the nested kNN study needs, each by a model fitted (weights and
    prior) without the folds of its key: ``{f}`` ranks fold f's questions (the test rankings);
    ``{f, g}`` ranks the questions of folds f and g (the training rows of the kNN fusion that ranks
    fold f — or g). 15 fits for 5 folds."""
    fold_ids = sorted(set(folds))
    keys = [frozenset({f}) for f in fold_ids] + [frozenset({f, g}) for f in fold_ids for g in fold_ids if f < g]
    out: dict[frozenset[int], dict[int, list[tuple[str, float]]]] = {}
    for key in keys:
        keep = [i for i, f in enumerate(folds) if f not in key]
        model = fit_section_fusion([cands[i] for i in keep], [golds[i] for i in keep], [folds[i] for i in keep],
                                   legs=legs, vocabulary=vocabulary, prior_depth=prior_depth,
                                   leg_articles=leg_articles)
        out[key] = {i: model.rank(cands[i])[:leg_articles] for i, f in enumerate(folds) if f in key}
    return out


@dataclass
class KnnStudy:
    """Out-of-fold rankings of every question: the hybrid's, the kNN leg's, and the kNN fusion's."""
    hybrid: list[list[tuple[str, float]]]
    knn: list[list[tuple[str, float]]]
    fused: list[list[str]]
    weights: dict[int, list[float]]  # per test fold, in KNN_FEATURES order


def knn_groups(hybrid: Sequence[Sequence[tuple[str, float]]], knn: Sequence[Sequence[tuple[str, float]]],
               golds: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """One listwise training group per question: the kNN fusion's candidates, gold ones positive."""
    from pipelines.retrieval.article_fusion import knn_features

    groups = []
    for h, k, g in zip(hybrid, knn, golds):
        order, x = knn_features({"hybrid": h, "knn": k})
        gold = set(g)
        groups.append((x, np.array([a in gold for a in order])))
    return groups


def cross_validated_knn_fusion(hybrid: Mapping[frozenset[int], Mapping[int, Sequence[tuple[str, float]]]],
                               knn: Callable[[int, frozenset[int]], list[tuple[str, float]]],
                               golds: Sequence[Sequence[str]], folds: Sequence[int]) -> KnnStudy:
    """Nested out of fold: fold f is ranked by a kNN fusion whose training rows are the questions
    of the other folds g, each ranked by a hybrid fitted without f and g (``hybrid[{f, g}]``) with
    neighbours outside f and g (``knn(i, {f, g})``); fold f's own rankings are ``hybrid[{f}]`` and
    ``knn(i, {f})``. ``knn(i, out)`` must read no store row of a question in the folds ``out``
    (``row_folds`` gives the mask): so no label of fold f reaches anything that ranks it."""
    from pipelines.retrieval.article_fusion import KNN_FEATURES, KnnFusion

    n = len(golds)
    fold_ids = sorted(set(folds))
    hyb: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    nn: list[list[tuple[str, float]]] = [[] for _ in range(n)]
    fused: list[list[str]] = [[] for _ in range(n)]
    weights: dict[int, list[float]] = {}
    for f in fold_ids:
        test = [i for i in range(n) if folds[i] == f]
        for i in test:
            hyb[i] = list(hybrid[frozenset({f})][i])
            nn[i] = knn(i, frozenset({f}))
        train = [i for i in range(n) if folds[i] != f]
        groups = knn_groups([hybrid[frozenset({f, folds[i]})][i] for i in train],
                            [knn(i, frozenset({f, folds[i]})) for i in train], [golds[i] for i in train])
        w, mean, std = fit_listwise(groups)
        model = KnnFusion(w.tolist(), mean.tolist(), std.tolist(), list(KNN_FEATURES))
        weights[f] = w.tolist()
        for i in test:
            fused[i] = [a for a, _ in model.rank({"hybrid": hyb[i], "knn": nn[i]})]
    return KnnStudy(hyb, nn, fused, weights)


def fit_knn_fusion(study: KnnStudy, golds: Sequence[Sequence[str]], provenance: dict | None = None):
    """The shipped kNN fusion: one model over every question's out-of-fold rankings (its hybrid
    fitted without its fold, its neighbours outside its fold) — the situation of a new question."""
    from pipelines.retrieval.article_fusion import KNN_FEATURES, KnnFusion

    w, mean, std = fit_listwise(knn_groups(study.hybrid, study.knn, golds))
    return KnnFusion(w.tolist(), mean.tolist(), std.tolist(), list(KNN_FEATURES), dict(provenance or {}))
