"""Which code a question is about, read from its embedding alone: one of the held acts, or none.

Why: the out-of-corpus flag's other signals look at what the search found (how far the first hit
leads, how close the nearest training questions are); a consumer's "czy mogę zwrócić buty kupione
przez internet" finds warranty articles of k.c. that look like an answer. What tells it apart is its
*topic*: thousands of exam and LQAD questions with their acts — the held four codes and the acts the
corpus does not hold (k.s.h., k.p.a., k.r.o., …) — map the embedding space into the regions each
act's questions occupy. A multinomial logistic regression on the query vector (the one the hybrid
already encoded: no second encode) over the classes "each held act" + ``outside`` learns that map;
its log-odds of ``outside`` is one more feature of the out-of-corpus model (``confidence``).

Measured out of fold on dev (``bench/train_lay_fusion.py``, BENCHMARKS.md "Lay questions over four
codes"): the flag went from 45 % of the out-of-corpus dev questions at 6.7 % of lay dev flagged to
63 % at 6.7 % (73 % at 10 %); L2 1e-4 against 1e-2 / 1e-3 / 1e-5 (lay dev act accuracy 0.89 out of
fold at 1e-4, 0.54 at 1e-3). The same probabilities as a per-candidate act prior in the article
fusion did not move lay dev ranking (R@1 0.325 either way) and are not used there.

Training material: the representation store's exam and LQAD questions (exam 2012–2020 only:
:func:`training_rows` refuses a row of 2021–2023, the exam test years) and the lay and
out-of-corpus *dev* questions; never a test file.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from pipelines.retrieval.representations.sources import EXCLUDED_EXAM_YEARS

OUTSIDE = "outside"
QUESTION_KINDS = ("exam", "lqad")  # questions people were asked; SAOS sentences are court prose
L2 = 1e-4
MODELS_DIR = Path(__file__).with_name("models")
RETRAIN = "retrain with bench/train_lay_fusion.py --save"


@dataclass
class TopicModel:
    classes: list[str]  # held act ids, then OUTSIDE
    weights: list[list[float]]  # dim × classes
    bias: list[float]
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._w = np.asarray(self.weights, dtype=np.float64)
        self._b = np.asarray(self.bias, dtype=np.float64)
        if self._w.ndim != 2 or self._w.shape[1] != len(self.classes) or self._b.shape != (len(self.classes),):
            raise ValueError(f"topic model: weights {self._w.shape} / bias {self._b.shape} do not fit "
                             f"{len(self.classes)} classes")
        if OUTSIDE not in self.classes:
            raise ValueError(f"topic model: no {OUTSIDE!r} class among {self.classes}")

    @property
    def dim(self) -> int:
        return int(self._w.shape[0])

    def probabilities(self, vec: np.ndarray) -> dict[str, float]:
        v = np.asarray(vec, dtype=np.float64).ravel()
        if v.shape[0] != self.dim:
            raise ValueError(f"topic model: a {v.shape[0]}-dim query vector, the model was trained on {self.dim}")
        s = v @ self._w + self._b
        s -= s.max()
        p = np.exp(s)
        p /= p.sum()
        return dict(zip(self.classes, p.tolist()))

    def outside_logit(self, vec: np.ndarray) -> float:
        """log(p / (1 − p)) of ``outside``, clipped to ±20 (the feature the flag reads)."""
        p = min(max(self.probabilities(vec)[OUTSIDE], 1e-9), 1 - 1e-9)
        return float(np.clip(math.log(p / (1 - p)), -20, 20))

    def save(self, path: Path | str) -> None:
        data = {k: v for k, v in asdict(self).items()}
        data["weights"] = [[round(x, 6) for x in row] for row in data["weights"]]
        Path(path).write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path | str) -> "TopicModel":
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no trained topic model; {RETRAIN}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(data["classes"], data["weights"], data["bias"], data.get("provenance", {}))
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a topic model ({e}); {RETRAIN}") from e


def training_rows(index, *, exclude: np.ndarray | None = None,
                  held_acts: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Vectors and labels (held act id or ``outside``) of the store's exam and LQAD questions
    (``exclude``: rows to leave out, e.g. one exam year for a leave-one-year-out fit). Refuses a
    store holding an exam question of the test years — the store's builder never writes one, and a
    model trained on them would make the exam no-regression figures in-sample."""
    if index.vectors is None:
        raise ValueError("the representation store holds no vectors: no topic model without them")
    m = np.isin(index.kinds, list(QUESTION_KINDS))
    bad = sorted({int(y) for y in index.years[m & (index.kinds == "exam")]} & EXCLUDED_EXAM_YEARS)
    if bad:
        raise ValueError(f"representation store: exam questions of {bad}, the held-out exam test years; "
                         "a topic model may only learn from 2012–2020")
    if exclude is not None:
        m &= ~exclude
    held = set(held_acts if held_acts is not None else index.manifest.get("held_acts", []))
    labels = [a if (art is not None and a in held) else OUTSIDE
              for a, art in zip(index.act_ids[m], index.article_ids[m])]
    return index.vectors[m].astype(np.float64), labels


def fit_topic(x: np.ndarray, labels: Sequence[str], *, classes: Sequence[str] | None = None,
              sample_weight: np.ndarray | None = None, l2: float = L2, provenance: dict | None = None) -> TopicModel:
    """Multinomial logistic regression (L-BFGS on the weighted mean log loss, L2 on the weights)."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=np.float64)
    classes = list(classes) if classes is not None else sorted(set(labels) - {OUTSIDE}) + [OUTSIDE]
    pos = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(labels) - set(pos))
    if unknown:
        raise ValueError(f"labels {unknown} are not among the classes {classes}")
    n, d = x.shape
    k = len(classes)
    y = np.zeros((n, k))
    y[np.arange(n), [pos[c] for c in labels]] = 1.0
    w_s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    w_s = w_s / w_s.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d * k].reshape(d, k), theta[d * k:]
        s = x @ w + b
        s -= s.max(1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(1, keepdims=True)
        ll = -(w_s * np.log((p * y).sum(1) + 1e-12)).sum() + l2 * (w * w).sum()
        g = (p - y) * w_s[:, None]
        return ll, np.concatenate([(x.T @ g + 2 * l2 * w).ravel(), g.sum(0)])

    res = minimize(loss, np.zeros(d * k + k), jac=True, method="L-BFGS-B", options={"maxiter": 300})
    return TopicModel(classes, res.x[:d * k].reshape(d, k).tolist(), res.x[d * k:].tolist(),
                      {"l2": l2, "rows": int(n), **(provenance or {})})


def per_class(labels: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in labels:
        out[c] = out.get(c, 0) + 1
    return out


def default_model_path(lang: str) -> Path:
    """``query_topic_pl.json``."""
    return MODELS_DIR / f"query_topic_{lang}.json"
