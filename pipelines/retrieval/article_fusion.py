"""Article-level fusion of the search's own rankings with the representation legs.

Why a second, article-level stage: the hybrid's reranker was trained on exam questions, which quote
the statute, so it trusts word overlap; a person's question shares few words with the law, and there
the dense ranking and the texts written *about* an article (exam and LQAD questions, courts'
sentences around a citation: ``representations``) know more. This stage takes, per query, the
article rankings of the hybrid, dense and BM25 searches the backend already answers and the
representation legs, and re-scores the union of the first three (every candidate has a hit to show)
with a small listwise-trained linear model over each ranking's log-rank, z-score and presence, and
the log-ranks again times "the query is a question" (a person's "Czy mogę …?" against an exam stem
or keywords), so one model learns to lean on the statute's words for statute-like queries and on
the other evidence for questions.

The model is a JSON file next to this module (``models/article_fusion_pl.json``) trained by
``bench/train_lay_fusion.py`` on the exam questions of 2012–2020 (each exam year scored with the
representations of the other years only) and the lay dev questions; figures quoted for it are out of
fold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

import numpy as np

from pipelines.linear_model import StandardisedLinearModel

POOL_LEGS = ("hybrid", "dense", "bm25")  # the backend's rankings: every candidate comes from one of them
REP_LEGS = ("rep_bm25", "rep_dense", "rep_knn", "article_dense")
LEGS = (*POOL_LEGS, *REP_LEGS)
QUESTION_LEGS = POOL_LEGS  # log-rank × question flag
DEPTH = 100  # articles per ranking
MISSING_Z = -2.5
MODELS_DIR = Path(__file__).with_name("models")

_QUESTION_START = re.compile(
    r"^(?:czy|jak|jaki\w*|ile|kto|kogo|komu|co|czym|kiedy|gdzie|dlaczego|dokąd|skąd|po\s+ilu|od\s+kiedy|do\s+kiedy|"
    r"w\s+jakim|na\s+ile|mój|moja|moje|mam|mogę|muszę|wolno|należy\s+mi)\b", re.IGNORECASE)


def is_question(query: str) -> float:
    """1.0 for a question as people ask it ("Czy mogę …?", "Ile mam czasu …"), 0.0 for an exam stem
    ("Zgodnie z Kodeksem cywilnym, konsumentem jest:") or keywords ("umowa leasingu forma")."""
    q = query.strip()
    return float(q.endswith("?") or bool(_QUESTION_START.match(q)))


def feature_names(legs: Sequence[str] = LEGS, *, prior: bool = True) -> tuple[str, ...]:
    names = [f"{leg}_{kind}" for leg in legs for kind in ("lr", "z", "in")]
    names += [f"{leg}_lr_q" for leg in QUESTION_LEGS if leg in legs]
    if prior:
        names.append("log_reps")
    return tuple(names)


FEATURES = feature_names()


def candidate_features(rankings: Mapping[str, Sequence[tuple[str, float]]], question: float, *,
                       legs: Sequence[str] = LEGS, reps_per_article: Mapping[str, int] | None = None,
                       depth: int = DEPTH) -> tuple[list[str], np.ndarray]:
    """Candidate articles (the union of the pool rankings, in first-seen order) and one feature row
    each, columns :func:`feature_names` (``reps_per_article`` None: no prior column)."""
    ids: dict[str, None] = {}
    for leg in POOL_LEGS:
        for a, _ in rankings.get(leg, ())[:depth]:
            ids.setdefault(a)
    order = list(ids)
    pos = {a: i for i, a in enumerate(order)}
    n = len(order)
    cols: list[np.ndarray] = []
    lr_of: dict[str, np.ndarray] = {}
    for leg in legs:
        lr, z, present = _leg_columns(list(rankings.get(leg, ()))[:depth], pos, n, depth)
        cols += [lr, z, present]
        lr_of[leg] = lr
    cols += [lr_of[leg] * question for leg in QUESTION_LEGS if leg in legs]
    if reps_per_article is not None:
        cols.append(np.array([math.log1p(reps_per_article.get(a, 0)) for a in order]))
    return order, (np.stack(cols, 1) if n else np.zeros((0, len(cols))))


@dataclass
class ArticleFusion(StandardisedLinearModel):
    features: list[str] = field(default_factory=lambda: list(FEATURES))

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    RETRAIN: ClassVar[str] = "retrain with bench/train_lay_fusion.py"

    def rank(self, rankings: Mapping[str, Sequence[tuple[str, float]]], question: float,
             reps_per_article: Mapping[str, int]) -> list[tuple[str, float]]:
        """Candidate articles best first with their fused scores."""
        order, x = candidate_features(rankings, question, reps_per_article=reps_per_article)
        if not order:
            return []
        s = self.score(x)
        return [(order[i], float(s[i])) for i in np.argsort(-s, kind="stable")]


KNN_LEGS = ("hybrid", "knn")
KNN_FEATURES = tuple(f"{leg}_{kind}" for leg in KNN_LEGS for kind in ("lr", "z", "in"))


@dataclass
class KnnFusion(StandardisedLinearModel):
    """German: the BGB hybrid's §§ (its section fusion, prior included) and the §§ of the nearest
    GerLayQA questions, re-scored — candidates are both rankings' (a § only the neighbours name is
    shown by its first chunk: with the lexical hybrid, nested out of fold on GerLayQA dev, the union
    scored hit@10 0.533 against 0.513 for the hybrid's §§ alone). Shipped hybrid + this stage,
    nested out of fold: hit@10 0.424 → 0.537, MRR 0.221 → 0.315 (BENCHMARKS.md, GerLayQA)."""
    features: list[str] = field(default_factory=lambda: list(KNN_FEATURES))

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = KNN_FEATURES
    RETRAIN: ClassVar[str] = "retrain with bench/gerlayqa.py --fit-knn"

    def rank(self, rankings: Mapping[str, Sequence[tuple[str, float]]]) -> list[tuple[str, float]]:
        order, x = knn_features(rankings)
        if not order:
            return []
        s = self.score(x)
        return [(order[i], float(s[i])) for i in np.argsort(-s, kind="stable")]


def knn_features(rankings: Mapping[str, Sequence[tuple[str, float]]], depth: int = DEPTH) -> tuple[list[str], np.ndarray]:
    """Candidates: the hybrid's §§, then the neighbours' it lacks; columns :data:`KNN_FEATURES`."""
    order = list(dict.fromkeys(a for leg in KNN_LEGS for a, _ in rankings.get(leg, ())[:depth]))
    pos = {a: i for i, a in enumerate(order)}
    cols = []
    for leg in KNN_LEGS:
        ranked = list(rankings.get(leg, ()))[:depth]
        lr, z, present = _leg_columns(ranked, pos, len(order), depth)
        cols += [lr, z, present]
    return order, (np.stack(cols, 1) if order else np.zeros((0, len(KNN_FEATURES))))


def _leg_columns(ranked: Sequence[tuple[str, float]], pos: Mapping[str, int], n: int,
                 depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-rank (−log 2·depth when absent), z-score within the ranking (MISSING_Z when absent) and
    presence of each candidate in one ranking."""
    lr = np.full(n, -math.log(2 * depth))
    z = np.full(n, MISSING_Z)
    present = np.zeros(n)
    if ranked:
        s = np.array([x for _, x in ranked], dtype=np.float64)
        mu, sd = s.mean(), s.std() or 1.0
        for r, (a, x) in enumerate(ranked, 1):
            i = pos.get(a)
            if i is not None:
                lr[i], z[i], present[i] = -math.log(r), (x - mu) / sd, 1.0
    return lr, z, present


def default_model_path(lang: str, kind: str = "article_fusion") -> Path:
    """``article_fusion_pl.json``, ``knn_fusion_de.json``."""
    return MODELS_DIR / f"{kind}_{lang}.json"
