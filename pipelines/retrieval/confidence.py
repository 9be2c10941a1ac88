"""How sure a search is: a calibrated confidence that its first hit answers the query, and a flag
when the corpus probably holds no answer at all.

Why two models: a low confidence has two causes a person must tell apart — the right article is in
the corpus but ranked low (search again, other words), or no held act governs the question (a
consumer's right of withdrawal is in the ustawa o prawach konsumenta, which lexpipe does not hold).
Both are logistic models over the same dozen query-level signals (:data:`FEATURES`): how far the
fused first hit leads, whether the rankings agree on it, how close the query comes to the texts
written about held articles, how much of its neighbourhood among training questions is about acts
the corpus does not hold, and whether it names such an act. Logistic regression fitted by log loss
is calibrated where its features are (the topic's log-odds, added after the dev figures of
2026-11-29, lifted the flag out of fold from 45 % to 63 % of the out-of-corpus dev questions at the
same 6.7 % of lay dev flagged: ``out_of_corpus_topic``); ``bench/train_lay_fusion.py`` fits both out of fold, checks the
calibration (reliability bins, Brier) and stores them as JSON next to this module with the flag's
threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Mapping, Sequence

import numpy as np

from pipelines.linear_model import StandardisedLinearModel

FEATURES: tuple[str, ...] = (
    "fused_top", "fused_margin", "hybrid_top", "dense_top", "rep_dense_top", "rep_knn_share",
    "agree_hybrid", "agree_dense", "agree_knn", "question", "outside_share", "outside_gap",
    "named_outside", "named_held", "log_words", "outside_topic",
)
MODELS_DIR = Path(__file__).with_name("models")


def query_features(fused: Sequence[tuple[str, float]], rankings: Mapping[str, Sequence[tuple[str, float]]], *,
                   question: float, outside_share: float, outside_gap: float, named_outside: bool,
                   named_held: bool, words: int, outside_topic: float = 0.0) -> np.ndarray:
    """One row of :data:`FEATURES` for a query (``fused``: the article fusion's ranking; ``rankings``:
    the legs it fused, article-level; ``outside_topic``: the log-odds that the query's embedding is
    about an act not held, ``out_of_corpus_topic.TopicModel.outside_logit``)."""
    top = fused[0][0] if fused else None

    def first(leg: str) -> tuple[str | None, float]:
        r = rankings.get(leg) or ()
        return (r[0][0], float(r[0][1])) if r else (None, 0.0)

    h, d, knn = first("hybrid"), first("dense"), first("rep_knn")
    rep_dense = first("rep_dense")[1]
    votes = sum(v for _, v in rankings.get("rep_knn") or ()) or 1.0
    return np.array([
        fused[0][1] if fused else 0.0,
        fused[0][1] - fused[1][1] if len(fused) > 1 else 0.0,
        h[1], d[1], rep_dense, knn[1] / votes,
        float(top is not None and top == h[0]), float(top is not None and top == d[0]),
        float(top is not None and top == knn[0]),
        question, outside_share, outside_gap, float(named_outside), float(named_held), math.log1p(words),
        outside_topic,
    ], dtype=np.float64)


@dataclass
class LogisticModel(StandardisedLinearModel):
    """P(y = 1 | x) = σ(bias + ((x − mean) / std) · weights); ``threshold`` is where a flag fires
    (the out-of-corpus model), chosen on dev and recorded with its provenance."""
    bias: float = 0.0
    threshold: float = 0.5
    features: list[str] = field(default_factory=lambda: list(FEATURES))

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    RETRAIN: ClassVar[str] = "retrain with bench/train_lay_fusion.py"

    def probability(self, x: np.ndarray) -> np.ndarray:
        s = self.bias + self.score(np.atleast_2d(x))
        return 1.0 / (1.0 + np.exp(-np.clip(s, -40, 40)))


def fit_logistic(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-2, sample_weight: np.ndarray | None = None,
                 provenance: dict | None = None) -> LogisticModel:
    """L2-regularised logistic regression over standardised features (L-BFGS on the mean log loss)."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w_s = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    w_s = w_s / w_s.mean()
    mean, std = x.mean(0), x.std(0)
    std[std == 0] = 1.0
    z = (x - mean) / std

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        b, w = theta[0], theta[1:]
        s = b + z @ w
        p = 1.0 / (1.0 + np.exp(-np.clip(s, -40, 40)))
        ll = -(w_s * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).mean() + l2 * (w @ w)
        g = w_s * (p - y) / len(y)
        return ll, np.concatenate([[g.sum()], z.T @ g + 2 * l2 * w])

    res = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    return LogisticModel(res.x[1:].tolist(), mean.tolist(), std.tolist(), list(FEATURES), dict(provenance or {}),
                         bias=float(res.x[0]))


def default_model_path(kind: str, lang: str) -> Path:
    """``confidence_pl.json`` / ``out_of_corpus_pl.json``."""
    return MODELS_DIR / f"{kind}_{lang}.json"
