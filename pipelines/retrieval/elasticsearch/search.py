"""Searches of one corpus' indices, answering like the embedded backend.

Searches answer the embedded backend's contract (``EmbeddedBackend.search``): article-level
hits (best chunk per article, :func:`collapse_to_articles`) from the same retrievers —

* ``bm25``: BM25 over our analysed unigrams (``text_analyzed``) plus ``bigram_weight`` × BM25 over
  word bigrams (``text_bigrams``), one ``bool.should`` of the two ``match`` queries, which sums
  the two scores exactly as the embedded backend adds its two FTS scores;
* ``dense``: top-level ``knn`` on ``vector``;
* ``gaius``: the client-side character-alignment scorer over the chunk rows of the resolved
  physical index (:mod:`pipelines.retrieval.elasticsearch.gaius`);
* ``hybrid``: the three legs side by side, then, in our code and exactly as on the embedded
  backend, either the trained reranker (``reranker.rerank_legs``: the legs' union re-scored with
  the lexical statistics of the physical index, read by the same scan as gAIus) when one is
  loaded (``index_build.load_reranker``), or else ``fusion.fuse`` by the shared
  :class:`HybridConfig`. ``server_side_rrf`` (for a licensed cluster) takes precedence over both:
  when it is set, hybrid is the cluster's RRF of bm25 + knn, without gAIus and without the
  reranker (see :meth:`IndexSearch._server_rrf`). With a section fusion model (German), hybrid
  is that model's fusion of its legs on reductions of the question, as on the embedded backend.

A search first resolves which physical index answers it (one ``GET <pattern>/_alias``: serving
alias, or the version alias that ``version`` / ``as_of`` select) and then queries that index, so
all legs of one hybrid search read the same version even while a load switches aliases. An
unknown act, an unknown version or an ``as_of`` before every loaded version raise
:class:`ElasticsearchSearchError`, a ``SearchError`` (the API answers 4xx).

The request bodies are built in :mod:`.queries` (structured only: user text is only ever a JSON
string value, never query syntax).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from elasticsearch import Elasticsearch, NotFoundError

from pipelines.retrieval.elasticsearch.errors import ElasticsearchBackendError, ElasticsearchSearchError, IndexGone
from pipelines.retrieval.elasticsearch.gaius import GaiusIndexCache
from pipelines.retrieval.elasticsearch.names import IndexNames, Served, iso, read_served, response_body
from pipelines.retrieval.elasticsearch.queries import (
    LEGS, MAX_KNN, AnalyzeQuery, EncodeQuery, analyze_query_from, bm25_query, filter_clauses, knn_clause,
    parse_hits, rrf_retriever,
)
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.fusion import HybridConfig, fuse
from pipelines.retrieval.interface import Filters, Hit, SearchRequest, collapse_to_articles, encoder_mismatch
from schemas import elasticsearch as es_schema

if TYPE_CHECKING:
    from pipelines.retrieval.backend_common import TextAnalyzer
    from pipelines.retrieval.reranker import LexicalStats, LinearReranker
    from pipelines.retrieval.section_fusion import SectionFusion, TableContext

log = logging.getLogger(__name__)


class IndexSearch:
    """Searches (:class:`SearchRequest`) over the indices of one corpus (``names``), each resolved
    to one physical index. The query-side configuration (``encode_query``, ``analyze_query`` /
    ``analyzer``, ``hybrid``, ``reranker``, ``section_fusion``, ``encoder_id``) is described on
    :class:`~pipelines.retrieval.elasticsearch.backend.ElasticsearchBackend`, which holds one."""

    def __init__(self, client: Elasticsearch, names: IndexNames, settings: ElasticsearchSettings, *,
                 act_id: str | None = None, encode_query: EncodeQuery | None = None,
                 analyze_query: AnalyzeQuery | None = None, analyzer: "TextAnalyzer | None" = None,
                 hybrid: HybridConfig = HybridConfig(), reranker: "LinearReranker | None" = None,
                 section_fusion: "SectionFusion | None" = None, encoder_id: str | None = None):
        unknown_legs = {name for name, _ in hybrid.weights} - set(LEGS)
        if unknown_legs:
            raise ValueError(f"HybridConfig names unknown retrievers {sorted(unknown_legs)}; use {LEGS}")
        self.client = client
        self.names = names
        self.settings = settings
        self.act_id = act_id
        self.encode_query = encode_query
        self.analyzer = analyzer
        self.analyze_query = analyze_query or (analyze_query_from(analyzer) if analyzer is not None else None)
        self.hybrid = hybrid
        self.reranker = reranker
        self.section_fusion = section_fusion  # German hybrid, as on the embedded backend (section_fusion.py)
        # id of the encoder behind ``encode_query``: compared with an index's record before its
        # vectors are searched
        self.encoder_id = encoder_id
        self._index_encoders: dict[str, str | None] = {}
        self.gaius_cache = GaiusIndexCache(client, page_size=settings.scan_page_size,
                                           keep_alive=settings.scan_keep_alive,
                                           capacity=settings.gaius_cache_indices)
        self._warned_server_rrf = False
        self._pool: ThreadPoolExecutor | None = None  # hybrid legs side by side, made on first use
        self._pool_lock = threading.Lock()

    def served(self) -> Served:
        return read_served(self.client, self.names)

    # ----------------------------------------------------------------- resolution

    def resolve_as_of(self, as_of: dt.date, filters: Filters = Filters()) -> str | None:
        """Newest loaded version with ``version <= as_of`` (None when there is none). ``filters``
        is accepted for compatibility: one backend holds one act, so they cannot change the answer."""
        older = [v for v in self.served().versions if v <= as_of.isoformat()]
        return max(older, default=None)

    def _resolve(self, f: Filters) -> tuple[str, str]:
        """(version, physical index) answering ``f``, with the embedded backend's rules and errors:
        ``version`` exactly, else the newest version on or before ``as_of``, else the serving one."""
        for act in f.act_ids:
            if not self.names.owns(act):
                raise ElasticsearchSearchError(f"unknown act {act!r} (indexed: {self.act_id or self.names.corpus})")
        act = self.act_id or self.names.corpus
        served = self.served()
        if not served.versions:
            raise ElasticsearchSearchError(f"unknown act {act!r}: no version of corpus {self.names.corpus} has been "
                                           f"loaded ({self.names.history_alias} is empty or missing)")
        if f.version is not None:
            version = iso(f.version)
            if version not in served.versions:
                raise ElasticsearchSearchError(f"{act} has no indexed version {version} (have {sorted(served.versions)})")
            return version, served.versions[version]
        if f.as_of is not None:
            version = self.resolve_as_of(f.as_of, f) or ""
            if not version:
                raise ElasticsearchSearchError(f"{act} has no indexed version on or before {f.as_of}")
            return version, served.versions[version]
        if served.serving is None:  # aliases of a half-finished manual change: serve the newest
            version = max(served.versions)
            return version, served.versions[version]
        return served.serving

    def _analyzed(self, query: str) -> tuple[str | None, str | None]:
        if self.analyze_query is None:
            return None, None
        analyzed, folded = self.analyze_query(query)
        return analyzed, folded

    def _vector(self, query: str) -> list[float]:
        if self.encode_query is None:
            raise ElasticsearchBackendError("dense retrieval needs an encode_query callable")
        vec = [float(x) for x in self.encode_query(query)]
        if len(vec) != self.settings.vector_dims:
            raise ElasticsearchBackendError(
                f"encode_query returned {len(vec)} dims, the index expects {self.settings.vector_dims}")
        return vec

    def build_bm25(self, query: str, filters: list[dict[str, Any]], *,
                   bigram_weight: float | None = None) -> dict[str, Any] | None:
        s = self.settings
        analyzed, folded = self._analyzed(query)
        w = self.hybrid.bigram_weight if bigram_weight is None else bigram_weight
        return bm25_query(query, filters, analyzed=analyzed, folded=folded, bigram_weight=w,
                          analyzed_boost=s.bm25_analyzed_boost, text_boost=s.bm25_text_boost,
                          heading_boost=s.bm25_heading_boost, folded_boost=s.bm25_folded_boost)

    def _search(self, index: str, size: int, **body: Any) -> Mapping[str, Any]:
        if "retriever" not in body:
            body["track_total_hits"] = False  # ranking only; the retriever form keeps defaults
        try:
            resp = self.client.search(index=index, size=size, source=list(es_schema.SOURCE_FIELDS), **body)
        except NotFoundError as exc:
            raise IndexGone(index) from exc
        return response_body(resp)

    # -- the legs: chunk hits, ``depth`` deep ------------------------------------------------------

    def bm25(self, index: str, query: str, filters: list[dict[str, Any]], depth: int, *,
             bigram_weight: float | None = None) -> list[Hit]:
        body = self.build_bm25(query, filters, bigram_weight=bigram_weight)
        if body is None:  # nothing left after analysis (e.g. only stop words): like embedded, no hits
            return []
        return parse_hits(self._search(index, depth, query=body), "bm25")

    def dense(self, index: str, query: str, filters: list[dict[str, Any]], depth: int) -> list[Hit]:
        knn = knn_clause(self._vector(query), depth, filters, num_candidates_factor=self.settings.num_candidates_factor)
        return parse_hits(self._search(index, depth, knn=knn), "dense")

    def gaius(self, index: str, query: str, filters: Filters, depth: int) -> list[Hit]:
        """gAIus over the rows of ``index``, loaded once per physical index. The query goes through
        ``strip_boilerplate`` as on the embedded backend; ``version``/``as_of`` were already
        resolved to ``index``, so only act/jurisdiction/status filters are left to apply."""
        from pipelines.retrieval.query_prep import strip_boilerplate

        try:
            retriever = self.gaius_cache.get(index)
        except NotFoundError as exc:
            raise IndexGone(index) from exc
        rest = dataclasses.replace(filters, version=None, as_of=None)
        return retriever.search(SearchRequest(strip_boilerplate(query), depth, "gaius", rest))

    def lexical_stats(self, index: str) -> "LexicalStats":
        """Analysed tokens and IDF of the chunks of ``index`` for the reranker, from the same
        (cached, LRU-bounded) scan as gAIus — ``EmbeddedBackend.lexical_stats`` of a table."""
        try:
            return self.gaius_cache.lexical(index)
        except NotFoundError as exc:
            raise IndexGone(index) from exc

    def section_context(self, index: str) -> "TableContext":
        """IDF and each §'s first chunk of ``index`` for the German hybrid, from the same cached scan
        as gAIus and the reranker (``EmbeddedBackend.section_context`` of a table)."""
        try:
            return self.gaius_cache.section(index)
        except NotFoundError as exc:
            raise IndexGone(index) from exc

    def section_legs(self, index: str, query: str, clauses: list[dict[str, Any]], legs: Sequence[str],
                     leg_articles: int = 100) -> dict[str, list[Hit]]:
        """The German hybrid's legs on their reductions of the query, side by side — the same
        ``LEG_SPECS`` and reductions as ``EmbeddedBackend.section_legs``."""
        from pipelines.retrieval.section_fusion import LEG_SPECS, leg_queries

        depth = min(3 * leg_articles, MAX_KNN)
        queries = leg_queries(legs, query, self.analyzer, self.section_context(index))

        def run(leg: str) -> list[Hit]:
            spec, q = LEG_SPECS[leg], queries[leg]
            if not q.strip():
                return []
            if spec.retriever == "bm25":
                return self.bm25(index, q, clauses, depth, bigram_weight=None if spec.bigrams else 0.0)
            return self.dense(index, q, clauses, depth)

        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(LEGS), thread_name_prefix="es-hybrid-leg")
        futures = {leg: self._pool.submit(run, leg) for leg in legs}
        return {leg: f.result() for leg, f in futures.items()}

    def _leg(self, name: str, index: str, request: SearchRequest, clauses: list[dict[str, Any]],
             depth: int) -> list[Hit]:
        if name == "gaius":
            return self.gaius(index, request.query, request.filters, depth)
        return getattr(self, name)(index, request.query, clauses, depth)

    def _legs(self, names: Sequence[str], index: str, request: SearchRequest, clauses: list[dict[str, Any]],
              depth: int) -> dict[str, list[Hit]]:
        """The named legs' chunk hits, side by side: they wait on the cluster (or, for gAIus, on
        numpy), so a hybrid search costs its slowest leg, not their sum — as on the embedded backend."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(LEGS), thread_name_prefix="es-hybrid-leg")
        futures = {name: self._pool.submit(self._leg, name, index, request, clauses, depth) for name in names}
        return {name: f.result() for name, f in futures.items()}

    def _query_tokens(self, query: str) -> list[str]:
        """The query's analysed tokens, as the lexical leg sends them (``text_analyzed`` side)."""
        analyzed, _folded = self._analyzed(query)
        return analyzed.split() if analyzed else []

    def _server_rrf(self, index: str, request: SearchRequest, clauses: list[dict[str, Any]],
                    depth: int) -> list[Hit]:
        """Hybrid as ONE ``retriever.rrf`` request over the bm25 and knn legs (``server_side_rrf``).

        This setting wins over a loaded reranker: whoever turns it on wants candidates and scoring
        kept in the cluster, and the reranker needs all three legs' client-side candidates.

        gAIus is left out here, with a log line, rather than fused client-side with the server's
        result: RRF of an already-fused list with a third ranking is not the three-way fusion the
        HybridConfig weights were tuned for (the tuned RRF config, ``RRF_CONFIG``, has no gAIus
        leg at all), and server-side fusion is chosen to keep candidates and scoring in the
        cluster, which a client-side corpus scan would defeat. The server always ranks by RRF
        (``hybrid.rrf_k``, bm25/dense weights); use the default client-side fusion for z-score
        fusion and the gAIus leg.
        """
        weights = dict(self.hybrid.weights)
        if not self._warned_server_rrf:
            self._warned_server_rrf = True
            if weights.get("gaius") or self.hybrid.method != "rrf" or self.reranker is not None:
                log.info("server_side_rrf: hybrid is RRF of bm25 + dense in Elasticsearch; the gAIus leg "
                         "(weight %s), %s fusion and the reranker (%s) apply only to client-side hybrid",
                         weights.get("gaius", 0), self.hybrid.method,
                         "loaded, unused" if self.reranker is not None else "none loaded")
        w_lex, w_dense = weights.get("bm25", 0.0), weights.get("dense", 0.0)
        bm25 = self.build_bm25(request.query, clauses)
        if not (w_lex and w_dense and bm25 is not None):  # one leg left: its ranking is the RRF ranking
            return self._leg("dense" if w_dense else "bm25", index, request, clauses, depth)
        knn = knn_clause(self._vector(request.query), depth, clauses,
                         num_candidates_factor=self.settings.num_candidates_factor)
        retr = rrf_retriever(bm25, knn, rank_window_size=depth, rank_constant=self.hybrid.rrf_k,
                             weights=(w_lex, w_dense))
        return parse_hits(self._search(index, depth, retriever=retr), "hybrid")

    def _check_encoder(self, version: str, index: str) -> None:
        """Refuse query vectors of another encoder than ``index``'s (``interface.encoder_mismatch``).
        The index's record (``mappings._meta.lexpipe.encoder``) is read once per physical index:
        indices never change after loading."""
        if not self.encoder_id:
            return
        if index not in self._index_encoders:
            try:
                info = response_body(self.client.indices.get(index=index)) or {}
            except NotFoundError as exc:
                raise IndexGone(index) from exc
            meta = (((info.get(index) or {}).get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
            self._index_encoders[index] = meta.get("encoder")
        why = encoder_mismatch(f"{self.act_id or self.names.corpus} {version} ({index})", self._index_encoders[index],
                               self.encoder_id)
        if why:
            raise ElasticsearchSearchError(why)

    def _ranked(self, request: SearchRequest) -> list[Hit]:
        version, index = self._resolve(request.filters)
        if request.retriever in ("dense", "hybrid") and self.encode_query is not None:
            self._check_encoder(version, index)
        clauses = filter_clauses(request.filters, version)
        depth = min(max(self.settings.candidates, 3 * request.k), MAX_KNN)
        if request.retriever == "dense" and self.section_fusion is not None:  # German: long questions reduced
            from pipelines.retrieval.section_fusion import dense_query

            q = dense_query(request.query, self.analyzer, self.section_context(index).idf,
                            getattr(self.analyzer, "lang", "de"))
            return self.dense(index, q, clauses, depth)
        if request.retriever != "hybrid":
            return self._leg(request.retriever, index, request, clauses, depth)
        if self.settings.server_side_rrf:  # wins over the reranker and client-side fusion
            return self._server_rrf(index, request, clauses, depth)
        if self.section_fusion is not None:  # the embedded backend's German hybrid, leg for leg
            from pipelines.retrieval.section_fusion import fuse_hits

            model = self.section_fusion
            legs = self.section_legs(index, request.query, clauses, model.legs, model.leg_articles)
            return fuse_hits(model, legs, self.section_context(index), request.filters, depth)
        if self.reranker is not None:  # the embedded backend's hybrid_search, leg for leg
            from pipelines.retrieval.reranker import rerank_legs

            legs = self._legs(LEGS, index, request, clauses, depth)
            return rerank_legs(self.reranker, legs, self._query_tokens(request.query),
                               self.lexical_stats(index), depth)
        return fuse(self.hybrid, self._legs(self.hybrid.legs(), index, request, clauses, depth), depth)

    def search(self, request: SearchRequest) -> list[Hit]:
        """Article-level hits (best chunk per article), ranked 1..k — ``EmbeddedBackend.search``."""
        retriever = request.retriever
        if retriever not in (*LEGS, "hybrid"):
            raise ElasticsearchSearchError(f"unknown retriever {retriever!r}; use one of {', '.join((*LEGS, 'hybrid'))}")
        reranks = self.reranker is not None and not self.settings.server_side_rrf
        needs_vector = retriever == "dense" or (retriever == "hybrid" and (
            reranks or dict(self.hybrid.weights).get("dense")))
        if needs_vector and self.encode_query is None:
            raise ElasticsearchBackendError(f"{retriever} retrieval needs an encode_query callable")
        if request.k <= 0 or not request.query.strip():
            return []
        try:
            hits = self._ranked(request)
        except IndexGone as gone:
            # the index we resolved was deleted after a newer load (retention): resolve again, once
            self.gaius_cache.discard(str(gone))
            try:
                hits = self._ranked(request)
            except IndexGone as again:
                raise ElasticsearchBackendError(
                    f"{again} disappeared twice while searching corpus {self.names.corpus}") from again
        return collapse_to_articles(hits, request.k)
