"""The search service's last stage for questions people ask: re-rank with what is known *about*
the articles, and say how sure the answer is and whether the corpus holds it at all.

What it does for a Polish statute search with the hybrid retriever (the default):

1. asks the backend for its hybrid, dense and BM25 article rankings (one encode: the query vector
   is cached), and scores the representation legs (``representations.search``) over the acts
   searched;
2. re-ranks the union with the article fusion model (``article_fusion``);
3. computes a calibrated confidence that the first hit answers the query (``confidence``) and the
   out-of-corpus probability; over the model's threshold, or when the query names an act the
   corpus does not hold (``outside_acts``), the answer is flagged ``out_of_corpus`` with a reason
   and, where the query names or its nearest training questions imply one, the act.

For German (the BGB hybrid) it adds the GerLayQA neighbours' §§ as one more ranking
(:class:`GermanKnn`). Without a store built by the pipeline, or a model, the backend's ranking is
returned unchanged and the page carries no confidence: nothing here is needed to search.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from pipelines.retrieval.interface import Hit, SearchRequest

DEPTH = 100  # articles asked of each backend ranking
OUTSIDE_NAME_SHARE = 0.3  # neighbours' weight an outside act needs before the answer names it as implied


@dataclass(frozen=True)
class Assessment:
    confidence: float | None = None  # calibrated P(the first hit is the article that answers)
    out_of_corpus: float | None = None  # P(no held act governs the question)
    flags: tuple[str, ...] = ()  # out_of_corpus | names_outside_act | garbage_query
    reasons: tuple[str, ...] = ()  # one plain sentence each
    outside_acts: tuple[dict, ...] = ()  # {"id", "name", "how": "named" | "implied"}


@dataclass
class PolishLaySearch:
    index: object  # representations.store.RepresentationIndex
    fusion: object | None  # article_fusion.ArticleFusion
    confidence: object | None  # confidence.LogisticModel
    out_of_corpus: object | None  # confidence.LogisticModel
    analyzer: object
    held_names: dict[str, str] = field(default_factory=dict)  # act id → short name, for reasons
    topic: object | None = None  # out_of_corpus_topic.TopicModel: the query embedding's act, or none held
    _reps_per_article: dict[str, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reps_per_article(self) -> dict[str, int]:
        with self._lock:
            if self._reps_per_article is None:
                counts: dict[str, int] = {}
                for a in self.index.article_ids:
                    if a is not None:
                        counts[a] = counts.get(a, 0) + 1
                self._reps_per_article = counts
            return self._reps_per_article

    def rankings(self, backend, request: SearchRequest) -> tuple[dict[str, list[tuple[str, float]]], dict[str, Hit], np.ndarray | None]:
        """The backend's three article rankings, the representation legs, the hit to show per
        article and the query vector."""
        from pipelines.retrieval.representations.search import rep_legs

        depth = max(DEPTH, request.k)
        hits: dict[str, Hit] = {}
        rankings: dict[str, list[tuple[str, float]]] = {}
        for retriever in ("hybrid", "dense", "bm25"):
            found = backend.search(replace(request, k=depth, retriever=retriever))
            rankings[retriever] = [(h.article_id, h.score) for h in found]
            for h in found:
                hits.setdefault(h.article_id, h)
        encoder = getattr(backend, "encoder", None)
        vec = encoder.encode_queries([request.query])[0] if encoder is not None else None  # cached: no second encode
        acts = request.filters.act_ids or None
        legs = rep_legs(self.index, self.analyzer.analyze(request.query), vec, acts=acts)
        rankings.update(rep_bm25=legs.rep_bm25, rep_dense=legs.rep_dense, rep_knn=legs.rep_knn)
        # the candidates' whole-article vectors (mean of their chunks): a ranking of the pool only
        rankings["article_dense"] = self.index.article_scores(vec, list(hits)) if vec is not None else []
        return rankings, hits, vec

    def search(self, backend, request: SearchRequest, *, named_held: bool = False) -> tuple[list[Hit], Assessment]:
        from pipelines.retrieval.article_fusion import is_question
        from pipelines.retrieval.confidence import query_features
        from pipelines.retrieval.outside_acts import named_outside_acts
        from pipelines.retrieval.representations.search import outside_evidence

        rankings, hits, vec = self.rankings(backend, request)
        question = is_question(request.query)
        if self.fusion is not None:
            fused = self.fusion.rank(rankings, question, self.reps_per_article())
        else:
            fused = list(rankings["hybrid"])
        out: list[Hit] = []
        for rank, (aid, score) in enumerate(fused[:request.k], 1):
            h = hits[aid]
            sources = {leg: i for leg, r in rankings.items() for i, (a, _) in enumerate(r, 1) if a == aid}
            out.append(Hit(h.chunk_id, aid, h.act_id, h.version, score, rank, h.heading_path, h.text, h.status,
                           sources))
        named = named_outside_acts(request.query)
        evidence = outside_evidence(self.index, vec) if vec is not None and self.index.vectors is not None else None
        topic = self.topic.outside_logit(vec) if self.topic is not None and vec is not None else 0.0
        x = query_features(fused, rankings, question=question,
                           outside_share=evidence.share if evidence else 0.0,
                           outside_gap=(evidence.best_outside - evidence.best_inside) if evidence else 0.0,
                           named_outside=bool(named), named_held=named_held,
                           words=len(request.query.split()), outside_topic=topic)
        confidence = float(self.confidence.probability(x)[0]) if self.confidence is not None and out else None
        p_out = float(self.out_of_corpus.probability(x)[0]) if self.out_of_corpus is not None else None
        return out, self._assess(confidence, p_out, named, evidence, named_held)

    def _assess(self, confidence, p_out, named, evidence, named_held: bool) -> Assessment:
        flags: list[str] = []
        reasons: list[str] = []
        acts: list[dict] = []
        held = ", ".join(self.held_names.values()) or "the held acts"
        if named and not named_held:
            flags.append("names_outside_act")
            acts += [{"id": a.id, "name": a.name, "how": "named"} for a in named]
            reasons.append(f"the query names {_join([a.name for a in named])}, which lexpipe does not hold "
                           f"(it holds {held})")
        flagged = (p_out is not None and p_out >= self.out_of_corpus.threshold) or (named and not named_held)
        if flagged:
            flags.insert(0, "out_of_corpus")
            if not named and evidence is not None:
                total = sum(w for _, w in evidence.acts) or 1.0
                implied = [(a, w) for a, w in evidence.acts if w / total >= OUTSIDE_NAME_SHARE][:2]
                for act_id, _ in implied:
                    name = _outside_name(act_id)
                    if name:
                        acts.append({"id": act_id, "name": name, "how": "implied"})
            if not named:
                reason = f"the answer is probably not in the corpus (it holds {held})"
                implied_names = [a["name"] for a in acts if a["how"] == "implied"]
                if implied_names:
                    reason += f"; similar questions are answered by {_join(implied_names)}, which lexpipe does not hold"
                reasons.insert(0, reason)
        return Assessment(confidence, p_out, tuple(flags), tuple(reasons), tuple(acts))


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _outside_name(act_id: str) -> str | None:
    """How a sentence names a not-held act of the known-acts table (None for an unknown id)."""
    from pipelines.retrieval.outside_acts import catalogue

    for a in catalogue():
        if a.id == act_id:
            return a.name
    return None


def open_polish(home: Path, encoder_id: str | None) -> PolishLaySearch | None:
    """The Polish last stage of a home: its representation store and the shipped models, when the
    store exists and was embedded with the search's encoder (another encoder's vectors are noise).
    The confidence and out-of-corpus models read the topic model's output: without the topic model
    (or with one of another dimension than the store's vectors) neither is loaded."""
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.article_fusion import ArticleFusion, default_model_path as fusion_path
    from pipelines.retrieval.confidence import LogisticModel, default_model_path as model_path
    from pipelines.retrieval.out_of_corpus_topic import TopicModel, default_model_path as topic_path
    from pipelines.retrieval.representations.store import RepresentationIndex
    from schemas.acts import registry

    index = RepresentationIndex.open(home, "pl")
    if index is None or (encoder_id is not None and index.manifest.get("encoder") != encoder_id):
        return None

    def load(cls, path: Path):
        return cls.load(path) if path.exists() else None

    held = {a.id: a.citation or a.title for a in registry().of_jurisdiction("pl")
            if a.id in set(index.manifest.get("held_acts", []))}
    topic = load(TopicModel, topic_path("pl"))
    if topic is not None and (index.vectors is None or topic.dim != index.vectors.shape[1]):
        topic = None
    return PolishLaySearch(index, load(ArticleFusion, fusion_path("pl")),
                           load(LogisticModel, model_path("confidence", "pl")) if topic else None,
                           load(LogisticModel, model_path("out_of_corpus", "pl")) if topic else None,
                           get_analyzer("pl"), held, topic)


# ---------------------------------------------------------------------------------------- German

GERMAN_LEGS = ("hybrid", "knn")


@dataclass
class GermanKnn:
    """The BGB hybrid's §§ re-ranked with the §§ of the nearest GerLayQA questions
    (``representations.search.bm25_knn``) by a small fitted model (``models/knn_fusion_de.json``)."""
    index: object  # RepresentationIndex of GerLayQA questions (BM25 only)
    model: object  # article_fusion.KnnFusion
    analyzer: object

    def search(self, backend, request: SearchRequest, *, named_held: bool = False) -> tuple[list[Hit], Assessment]:
        from pipelines.retrieval.long_query import drop_stopwords
        from pipelines.retrieval.representations.search import BM25_KNN, bm25_knn

        depth = max(DEPTH, request.k)
        found = backend.search(replace(request, k=depth))
        if hasattr(backend, "section_fusion") and backend.section_fusion is None:
            # fitted over the section fusion's ranking: over another hybrid (no model for the
            # index's encoder) its weights mean nothing
            return found[:request.k], Assessment()
        hits = {h.article_id: h for h in found}
        tokens = self.analyzer.analyze(drop_stopwords(request.query, "de"))
        acts = set(request.filters.act_ids)
        params = self.model.provenance.get("knn", {})  # the neighbours and vote power it was fitted with
        knn = [(a, s) for a, s in bm25_knn(self.index, tokens, k=int(params.get("k", BM25_KNN)),
                                          power=float(params.get("power", 2.0)))
               if not acts or a.split(":par:", 1)[0] in acts]
        first = _first_chunks(backend, request) if any(a not in hits for a, _ in knn) else {}
        statuses = set(request.filters.statuses)
        knn = [(a, s) for a, s in knn if a in hits or (a in first and (not statuses or first[a].status in statuses))]
        rankings = {"hybrid": [(h.article_id, h.score) for h in found], "knn": knn}
        fused = self.model.rank(rankings)
        out = []
        for rank, (aid, score) in enumerate(fused[:request.k], 1):
            h = hits.get(aid) or replace(first[aid], sources={})  # a § only the neighbours name: its first chunk
            sources = dict(h.sources)
            sources.update({leg: i for leg, r in rankings.items() if leg != "hybrid"
                            for i, (a, _) in enumerate(r, 1) if a == aid})
            out.append(Hit(h.chunk_id, aid, h.act_id, h.version, score, rank, h.heading_path, h.text, h.status, sources))
        return out, Assessment()


def _first_chunks(backend, request: SearchRequest) -> dict[str, Hit]:
    """§ → its first chunk in the BGB version the search reads (the embedded backend's section
    context, which the hybrid keeps anyway); empty where the backend has none."""
    from pipelines.retrieval.interface import SearchError

    try:
        table = backend.table_of("de:bgb", request.filters.version)
        return backend.section_context(table).first_chunk
    except (AttributeError, TypeError, KeyError, SearchError):
        return {}


def open_german(home: Path, encoder_id: str | None) -> GermanKnn | None:
    """The German last stage: the GerLayQA store of the home and the shipped kNN fusion model."""
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.article_fusion import KnnFusion, default_model_path
    from pipelines.retrieval.representations.store import RepresentationIndex

    index = RepresentationIndex.open(home, "de")
    path = default_model_path("de", "knn_fusion")
    if index is None or not path.exists():
        return None
    return GermanKnn(index, KnnFusion.load(path), get_analyzer("de"))
