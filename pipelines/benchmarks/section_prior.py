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
from typing import Mapping, Sequence

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
