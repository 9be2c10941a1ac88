"""Learned fusion: a linear model that re-scores the union of the hybrid legs' candidates.

Why not only RRF or z-score fusion: both weigh a leg the same way for every query, and neither
sees *how much* of the query a candidate actually contains. Exam questions and practitioners'
queries often quote the law nearly verbatim, so the share of the query's (IDF-weighted) words and
word n-grams found in a paragraph separates the right paragraph from a neighbour that merely
shares the topic. The model is a listwise (softmax) linear ranker — a dozen weights, trained by
``bench/train_reranker.py`` on a tuning split of exam questions and stored as JSON next to this
module with its provenance, so it is cheap, inspectable and reproducible.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Iterable, Mapping, Sequence

import numpy as np

from pipelines.linear_model import StandardisedLinearModel
from pipelines.retrieval.interface import Hit

LEGS: tuple[str, ...] = ("bm25", "dense", "gaius")
FEATURES: tuple[str, ...] = (
    *(f"{leg}_{kind}" for leg in LEGS for kind in ("z", "rr")),
    "coverage", "bigram_overlap", "trigram_overlap", "log_length",
)
MISSING_Z = -2.0  # a leg that did not return the candidate: well below its mean
MODELS_DIR = Path(__file__).with_name("models")


@dataclass
class LexicalStats:
    """Analysed tokens of every chunk and their IDF, for the overlap features."""
    tokens: dict[str, list[str]]
    idf: dict[str, float]
    _grams: dict[str, tuple[set, set, set]] = field(default_factory=dict, repr=False)

    def grams(self, chunk_id: str) -> tuple[set, set, set]:
        """Word, bigram and trigram sets of a chunk, computed once per chunk."""
        g = self._grams.get(chunk_id)
        if g is None:
            toks = self.tokens.get(chunk_id, [])
            g = self._grams[chunk_id] = (set(toks), _ngrams(toks, 2), _ngrams(toks, 3))
        return g

    @classmethod
    def from_analyzed(cls, chunk_ids: Iterable[str], analyzed: Iterable[str | None]) -> "LexicalStats":
        """From the stored ``text_analyzed`` strings (space-separated analysed tokens), the column
        both backends keep per chunk: the one rule that makes their features equal."""
        return cls.from_tokens({c: (s or "").split() for c, s in zip(chunk_ids, analyzed)})

    @classmethod
    def from_tokens(cls, tokens: Mapping[str, Sequence[str]]) -> "LexicalStats":
        df: Counter[str] = Counter()
        for toks in tokens.values():
            df.update(set(toks))
        n = max(len(tokens), 1)
        return cls({k: list(v) for k, v in tokens.items()}, {w: math.log(n / c) for w, c in df.items()})


def _ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(tokens[i:] for i in range(n))))


def _zscores(hits: Sequence[Hit]) -> dict[str, tuple[float, int]]:
    if not hits:
        return {}
    s = np.array([h.score for h in hits], dtype=np.float64)
    sd = s.std() or 1.0
    return {h.chunk_id: (float((h.score - s.mean()) / sd), h.rank) for h in hits}


def candidate_features(legs: Mapping[str, Sequence[Hit]], query_tokens: Sequence[str],
                       stats: LexicalStats) -> tuple[list[Hit], np.ndarray]:
    """The union of the legs' chunk hits and one feature row per hit (columns = FEATURES)."""
    z = {leg: _zscores(legs.get(leg, ())) for leg in LEGS}
    first: dict[str, Hit] = {}
    sources: dict[str, dict[str, int]] = {}
    for leg, hits in legs.items():
        for h in hits:
            first.setdefault(h.chunk_id, h)
            sources.setdefault(h.chunk_id, {})[leg] = h.rank
    q_set = set(query_tokens)
    q_weight = sum(stats.idf.get(w, 0.0) for w in q_set) or 1.0
    q_bi, q_tri = _ngrams(query_tokens, 2), _ngrams(query_tokens, 3)
    rows = []
    hits = []
    for cid, h in first.items():
        row = []
        for leg in LEGS:
            zl, rank = z[leg].get(cid, (MISSING_Z, None))
            row += [zl, 1.0 / (rank + 5) if rank else 0.0]
        d_set, d_bi, d_tri = stats.grams(cid)
        row.append(sum(stats.idf.get(w, 0.0) for w in q_set & d_set) / q_weight)
        row.append(len(q_bi & d_bi) / (len(q_bi) or 1))
        row.append(len(q_tri & d_tri) / (len(q_tri) or 1))
        row.append(math.log1p(len(stats.tokens.get(cid, ()))))
        rows.append(row)
        hits.append(Hit(h.chunk_id, h.article_id, h.act_id, h.version, 0.0, 0, h.heading_path, h.text,
                        h.status, dict(sources[cid])))
    return hits, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


@dataclass
class LinearReranker(StandardisedLinearModel):
    features: list[str] = field(default_factory=lambda: list(FEATURES))

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    RETRAIN: ClassVar[str] = "retrain with bench/train_reranker.py"

    def rank(self, hits: Sequence[Hit], x: np.ndarray, k: int) -> list[Hit]:
        if not hits:
            return []
        s = self.score(x)
        order = sorted(range(len(hits)), key=lambda i: (-s[i], min(hits[i].sources.values()), hits[i].chunk_id))[:k]
        out = []
        for r, i in enumerate(order, 1):
            h = hits[i]
            h.score, h.rank = float(s[i]), r
            out.append(h)
        return out


def default_model_path(lang: str) -> Path:
    return MODELS_DIR / f"reranker_{lang}.json"


def train_listwise(groups: Iterable[tuple[np.ndarray, np.ndarray]], *, l2: float = 1e-2, iters: int = 2000,
                   lr: float = 0.2, provenance: dict | None = None) -> LinearReranker:
    """Loss: −log of the softmax probability mass on a query's relevant candidates. Why mass and
    not a uniform target: several chunks of the gold article are "relevant", but only one needs
    to rank first (results collapse to articles), so the model may put its mass on whichever
    paragraph actually answers. Groups without a relevant candidate carry no signal and are
    skipped. Full-batch gradient descent: a dozen weights and a few thousand rows need no more."""
    groups = [(x, y) for x, y in groups if len(x) and y.sum() > 0]
    if not groups:
        raise ValueError("no training query has a relevant candidate")
    allx = np.vstack([x for x, _ in groups])
    mu, sd = allx.mean(0), allx.std(0) + 1e-9
    xs = (allx - mu) / sd
    pos = np.concatenate([y > 0 for _, y in groups]).astype(float)
    gid = np.concatenate([[g] * len(y) for g, (_, y) in enumerate(groups)])
    n = len(groups)
    w = np.zeros(xs.shape[1])
    for _ in range(iters):
        s = xs @ w
        mx = np.full(n, -np.inf)
        np.maximum.at(mx, gid, s)
        e = np.exp(s - mx[gid])
        p = e / np.bincount(gid, e, n)[gid]
        pp = p * pos
        target = pp / np.bincount(gid, pp, n)[gid]  # posterior over the relevant candidates
        w -= lr * (xs.T @ (p - target) / n + l2 * w)
    return LinearReranker(w.tolist(), mu.tolist(), sd.tolist(), list(FEATURES), dict(provenance or {}))


def rerank_legs(model: LinearReranker, legs: Mapping[str, Sequence[Hit]], query_tokens: Sequence[str],
                stats: LexicalStats, depth: int) -> list[Hit]:
    """Hybrid by the trained model: what every backend calls once it has its legs' hits."""
    hits, x = candidate_features(legs, query_tokens, stats)
    return model.rank(hits, x, depth)
