"""Searches of one language index, answering like the embedded backend.

Searches answer the embedded backend's contract: article-level hits (best chunk per article,
:func:`collapse_to_articles`) from the same retrievers —

* ``bm25``: BM25 over our analysed unigrams (``text_analyzed``) plus ``bigram_weight`` × BM25 over
  word bigrams (``text_bigrams``), one ``bool.should`` of the two ``match`` queries, which sums
  the two scores exactly as the embedded backend adds its two FTS scores;
* ``dense``: top-level ``knn`` on ``vector`` — over the rows that have a vector (the embedding
  backfill may not have reached every row yet);
* ``gaius``: the client-side character-alignment scorer over the scope's rows
  (:mod:`pipelines.retrieval.elasticsearch.gaius`);
* ``hybrid``: the legs side by side, then, in our code and exactly as on the embedded backend,
  either the trained reranker when one is loaded, or else ``fusion.fuse`` by the shared
  :class:`HybridConfig`; the German section fusion when its model is loaded
  (:func:`backend_common.section_hybrid`); the cluster's ``rrf`` retriever when
  ``server_side_rrf`` is set.

A search first resolves what it sees (:meth:`IndexSearch.scope`): ONE ``GET _alias/<alias>``
gives the physical index and generation G; the generation's catalogue (cached per G) gives each
act's versions; the request's filters become document-level clauses (:mod:`.visibility`) that
every leg sends, so all legs of one search read the same generation even while a publication
swaps the alias. An unknown act, a version an act does not hold or a date before every version
raise :class:`ElasticsearchSearchError`, a ``SearchError`` (the API answers 4xx).

Scopes: a scope of at most ``max_scope_rows`` rows (the Polish codes, a German search in a few
acts) runs every leg exactly as on the embedded backend; a larger one (an unfiltered German search
over 6,000+ acts) is answered by the cluster alone — BM25 and kNN fused by the language's
``HybridConfig`` without its gAIus leg — since the client-side legs would have to load the whole
corpus.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from elasticsearch import Elasticsearch, NotFoundError

from pipelines.retrieval.backend_common import section_hybrid
from pipelines.retrieval.elasticsearch.catalog import ActEntry, CatalogCache
from pipelines.retrieval.elasticsearch.errors import (
    ElasticsearchBackendError, ElasticsearchEncoderMismatch, ElasticsearchSearchError, IndexGone,
)
from pipelines.retrieval.elasticsearch.gaius import ScopeCache, ScopeScan
from pipelines.retrieval.elasticsearch.names import IndexNames, iso, read_served, response_body
from pipelines.retrieval.elasticsearch.queries import (
    LEGS, MAX_KNN, AnalyzeQuery, EncodeQuery, analyze_query_from, bm25_query, knn_clause, parse_hits, rrf_retriever,
)
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.elasticsearch.visibility import row_filter
from pipelines.retrieval.fusion import HybridConfig, fuse
from pipelines.retrieval.interface import Filters, Hit, SearchRequest, collapse_to_articles, encoder_mismatch
from schemas import elasticsearch as es_schema

if TYPE_CHECKING:
    from pipelines.retrieval.backend_common import TextAnalyzer
    from pipelines.retrieval.reranker import LexicalStats, LinearReranker
    from pipelines.retrieval.section_fusion import SectionFusion, TableContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scope:
    """What one search sees: ``index`` at ``generation``, each act of the scope resolved to a
    version (``versions``), the leg filter ``clauses`` (without statuses: ``filters`` keeps them),
    and the scope's size estimate (rows its acts' newest versions show)."""
    index: str
    generation: int
    versions: dict[str, str]
    clauses: list[dict[str, Any]]
    scan_clauses: list[dict[str, Any]]  # the rows of the scope, every status (client-side legs)
    filters: Filters
    rows: int
    large: bool

    @property
    def key(self) -> tuple:
        return (self.index, self.generation, tuple(sorted(self.versions.items())))


def _listed(acts: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(sorted(acts)[:limit]) or "none"
    return shown + (f" and {len(acts) - limit} more" if len(acts) > limit else "")


class IndexSearch:
    """Searches (:class:`SearchRequest`) over one language index (``names``). The query-side
    configuration (``encode_query``, ``analyze_query`` / ``analyzer``, ``hybrid``, ``reranker``,
    ``section_fusion``, ``encoder_id``) is described on
    :class:`~pipelines.retrieval.elasticsearch.backend.ElasticsearchBackend`."""

    def __init__(self, client: Elasticsearch, names: IndexNames, settings: ElasticsearchSettings, *,
                 encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                 analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                 reranker: "LinearReranker | None" = None, section_fusion: "SectionFusion | None" = None,
                 encoder_id: str | None = None, catalogs: CatalogCache | None = None):
        unknown_legs = {name for name, _ in hybrid.weights} - set(LEGS)
        if unknown_legs:
            raise ValueError(f"HybridConfig names unknown retrievers {sorted(unknown_legs)}; use {LEGS}")
        self.client = client
        self.names = names
        self.settings = settings
        self.encode_query = encode_query
        self.analyzer = analyzer
        self.analyze_query = analyze_query or (analyze_query_from(analyzer) if analyzer is not None else None)
        self.hybrid = hybrid
        self.reranker = reranker
        self.section_fusion = section_fusion
        self.encoder_id = encoder_id
        self._index_encoders: dict[tuple[str, int], str | None] = {}
        self.catalogs = catalogs or CatalogCache(client, page_size=settings.scan_page_size,
                                                 keep_alive=settings.scan_keep_alive)
        self.scopes = ScopeCache(client, page_size=settings.scan_page_size, keep_alive=settings.scan_keep_alive,
                                 capacity=settings.gaius_cache_indices)
        self._warned_server_rrf = False
        self._pool: ThreadPoolExecutor | None = None  # hybrid legs side by side, made on first use
        self._pool_lock = threading.Lock()

    # ----------------------------------------------------------------- what is served

    def catalogue(self) -> tuple[str | None, int, dict[str, ActEntry]]:
        """(physical index, generation, every act entry) of what the alias serves now."""
        served = read_served(self.client, self.names)
        if not served.published:
            return served.index, served.generation, {}
        return served.index, served.generation, self.catalogs.of(served.index, served.generation).all()

    def entries(self, act_ids: Sequence[str]) -> dict[str, ActEntry]:
        served = read_served(self.client, self.names)
        if not served.published:
            return {}
        return self.catalogs.of(served.index, served.generation).get(act_ids)

    # ----------------------------------------------------------------- resolution

    def scope(self, f: Filters) -> Scope:
        """The scope of a request, with the embedded backend's rules and errors: ``version``
        exactly, else the version in force ``as_of`` (day semantics), else each act's newest."""
        served = read_served(self.client, self.names)
        named = tuple(dict.fromkeys(f.act_ids))
        if not served.published:
            what = f"unknown act {named[0]!r}" if named else f"no {self.names.lang!r} act is indexed"
            raise ElasticsearchSearchError(f"{what}: nothing has been published to {self.names.alias}")
        try:
            return self._scope(served.index, served.generation, named, f)
        except NotFoundError as exc:  # a rebuild deleted the index the alias named a moment ago
            raise IndexGone(served.index) from exc

    def _scope(self, index: str, G: int, named: tuple[str, ...], f: Filters) -> Scope:
        cat = self.catalogs.of(index, G)
        if named:
            entries = cat.get(named)
            unknown = [a for a in named if a not in entries]
            if unknown:
                known = cat.all()
                raise ElasticsearchSearchError(f"unknown act {unknown[0]!r} (indexed: {_listed(list(known))})")
        else:
            entries = cat.all()
        if f.jurisdictions:
            entries = {a: e for a, e in entries.items() if a.split(":", 1)[0] in f.jurisdictions}
        version = iso(f.version) if f.version is not None else None
        act_filter: Sequence[str] = named
        if version is not None:
            versions = {a: version for a, e in entries.items() if version in e.versions}
            if not versions and len(named) == 1 and named[0] in entries:
                raise ElasticsearchSearchError(f"{named[0]} has no indexed version {version} "
                                               f"(have {list(entries[named[0]].versions)})")
            if not versions and entries:
                raise ElasticsearchSearchError(f"no indexed version {version} of any act searched "
                                               f"({_listed(list(entries))})")
            if not versions and not f.jurisdictions:
                raise ElasticsearchSearchError(f"no indexed version {version} of any act in {self.names.alias}")
            act_filter = sorted(versions)
        elif f.as_of is not None:
            # an act without a version by then has no rows then (spec): it is left out; only a search
            # that finds no act at all by that date is refused
            versions = {a: v for a, e in entries.items() if (v := e.as_of(f.as_of)) is not None}
            if not versions and len(named) == 1 and named[0] in entries:
                raise ElasticsearchSearchError(f"{named[0]} has no indexed version on or before {f.as_of}")
            if not versions and (entries or not f.jurisdictions):
                raise ElasticsearchSearchError(f"no act has an indexed version on or before {f.as_of}")
        else:
            versions = {a: e.newest for a, e in entries.items() if e.newest}
        if len(act_filter) > 100 and not f.jurisdictions and set(act_filter) >= set(cat.all()):
            act_filter = ()  # every act of the index: no terms filter of thousands of ids
        if f.jurisdictions and not versions:
            act_filter = ()  # nothing of these jurisdictions: the clauses below match nothing
        mode = {"version": version} if version is not None else {"as_of": f.as_of}
        clauses = row_filter(G, **mode, act_ids=act_filter, jurisdictions=f.jurisdictions, statuses=f.statuses)
        scan_clauses = row_filter(G, **mode, act_ids=sorted(versions) or act_filter, jurisdictions=f.jurisdictions)
        rows = sum(entries[a].chunks for a in versions if a in entries)
        return Scope(index, G, versions, clauses, scan_clauses, f, rows, rows > self.settings.max_scope_rows)

    def resolve_as_of(self, as_of: dt.date, filters: Filters = Filters()) -> str | None:
        """The version of the (one) act ``filters`` name in force on ``as_of`` (None: none by then)."""
        acts = filters.act_ids
        if len(acts) != 1:
            raise ValueError("resolve_as_of needs exactly one act in filters.act_ids")
        entry = self.entries(acts).get(acts[0])
        return entry.as_of(as_of) if entry else None

    # ----------------------------------------------------------------- the legs

    def _analyzed(self, query: str) -> tuple[str | None, str | None]:
        if self.analyze_query is None:
            return None, None
        return self.analyze_query(query)

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

    def bm25(self, scope: Scope, query: str, depth: int, *, bigram_weight: float | None = None) -> list[Hit]:
        body = self.build_bm25(query, scope.clauses, bigram_weight=bigram_weight)
        if body is None:  # nothing left after analysis (e.g. only stop words): like embedded, no hits
            return []
        return self._versioned(scope, parse_hits(self._search(scope.index, depth, query=body), "bm25"))

    def dense(self, scope: Scope, query: str, depth: int) -> list[Hit]:
        knn = knn_clause(self._vector(query), depth, scope.clauses,
                         num_candidates_factor=self.settings.num_candidates_factor)
        return self._versioned(scope, parse_hits(self._search(scope.index, depth, knn=knn), "dense"))

    def _versioned(self, scope: Scope, hits: list[Hit]) -> list[Hit]:
        """Each hit reports the version its act resolved to, not the first version of its row."""
        for h in hits:
            h.version = scope.versions.get(h.act_id, h.version)
        return hits

    def scan(self, scope: Scope) -> ScopeScan:
        if scope.large:
            raise ElasticsearchBackendError(
                f"a scope of ~{scope.rows} rows is larger than max_scope_rows={self.settings.max_scope_rows}: "
                "the client-side legs do not load it")
        try:
            return self.scopes.entry(scope.key, scope.index, {"bool": {"filter": scope.scan_clauses}}, scope.versions)
        except NotFoundError as exc:
            raise IndexGone(scope.index) from exc

    def gaius(self, scope: Scope, query: str, depth: int) -> list[Hit]:
        """gAIus over the scope's rows. The query goes through ``strip_boilerplate`` as on the
        embedded backend (Polish exam lead-ins); version and date are already the scope's, so only
        act, jurisdiction and status filters are applied here."""
        from pipelines.retrieval.languages import PROFILES
        from pipelines.retrieval.query_prep import strip_boilerplate

        lp = PROFILES.get(self.names.lang)
        query = strip_boilerplate(query) if lp is not None and lp.strip_exam_lead_ins else query
        rest = dataclasses.replace(scope.filters, version=None, as_of=None)
        return self.scan(scope).gaius.search(SearchRequest(query, depth, "gaius", rest))

    def lexical_stats(self, scope: Scope) -> "LexicalStats":
        """Analysed tokens and IDF of the scope's chunks for the reranker (the same scan as gAIus)."""
        return self.scan(scope).lexical

    def section_context(self, scope: Scope) -> "TableContext":
        """IDF and each §'s first chunk of the scope, for the German hybrid (the same scan)."""
        return self.scopes.section(self.scan(scope))

    def _submit(self, fn, *args):
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(LEGS), thread_name_prefix="es-hybrid-leg")
        return self._pool.submit(fn, *args)

    def _leg(self, name: str, scope: Scope, query: str, depth: int) -> list[Hit]:
        return getattr(self, name)(scope, query, depth)

    def _legs(self, names: Sequence[str], scope: Scope, query: str, depth: int) -> dict[str, list[Hit]]:
        """The named legs' chunk hits, side by side: they wait on the cluster (or, for gAIus, on
        numpy), so a hybrid search costs its slowest leg, not their sum."""
        futures = {name: self._submit(self._leg, name, scope, query, depth) for name in names}
        return {name: f.result() for name, f in futures.items()}

    def section_search(self, scope: Scope, query: str, depth: int) -> list[Hit]:
        """The German hybrid (``backend_common.section_hybrid``) with this cluster's legs."""
        def run_leg(spec, q: str, chunk_depth: int) -> list[Hit]:
            d = min(chunk_depth, MAX_KNN)
            if spec.retriever == "bm25":
                return self.bm25(scope, q, d, bigram_weight=None if spec.bigrams else 0.0)
            return self.dense(scope, q, d)

        return section_hybrid(self.section_fusion, query, scope.filters, depth, self.section_context(scope),
                              self.analyzer, run_leg, self._submit)

    def _server_rrf(self, scope: Scope, query: str, depth: int) -> list[Hit]:
        """Hybrid as ONE ``retriever.rrf`` request over the bm25 and knn legs (``server_side_rrf``).

        This setting wins over a loaded reranker: whoever turns it on wants candidates and scoring
        kept in the cluster, and the reranker needs all three legs' client-side candidates. gAIus
        is left out (with a log line): RRF of an already-fused list with a third ranking is not the
        fusion the HybridConfig weights were tuned for."""
        weights = dict(self.hybrid.weights)
        if not self._warned_server_rrf:
            self._warned_server_rrf = True
            if weights.get("gaius") or self.hybrid.method != "rrf" or self.reranker is not None:
                log.info("server_side_rrf: hybrid is RRF of bm25 + dense in Elasticsearch; the gAIus leg "
                         "(weight %s), %s fusion and the reranker (%s) apply only to client-side hybrid",
                         weights.get("gaius", 0), self.hybrid.method,
                         "loaded, unused" if self.reranker is not None else "none loaded")
        w_lex, w_dense = weights.get("bm25", 0.0), weights.get("dense", 0.0)
        bm25 = self.build_bm25(query, scope.clauses)
        if not (w_lex and w_dense and bm25 is not None):  # one leg left: its ranking is the RRF ranking
            return self._leg("dense" if w_dense else "bm25", scope, query, depth)
        knn = knn_clause(self._vector(query), depth, scope.clauses,
                         num_candidates_factor=self.settings.num_candidates_factor)
        retr = rrf_retriever(bm25, knn, rank_window_size=depth, rank_constant=self.hybrid.rrf_k,
                             weights=(w_lex, w_dense))
        return self._versioned(scope, parse_hits(self._search(scope.index, depth, retriever=retr), "hybrid"))

    def _check_encoder(self, scope: Scope) -> None:
        """Refuse query vectors of another encoder than the index's (``interface.encoder_mismatch``);
        the record (``mappings._meta.lexpipe.encoder``) is read once per index and generation."""
        if not self.encoder_id:
            return
        key = (scope.index, scope.generation)
        if key not in self._index_encoders:
            try:
                info = response_body(self.client.indices.get(index=scope.index)) or {}
            except NotFoundError as exc:
                raise IndexGone(scope.index) from exc
            meta = (((info.get(scope.index) or {}).get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
            self._index_encoders[key] = meta.get("encoder")
        why = encoder_mismatch(f"{self.names.alias} ({scope.index})", self._index_encoders[key], self.encoder_id)
        if why:
            raise ElasticsearchEncoderMismatch(why)

    def _ranked(self, request: SearchRequest) -> list[Hit]:
        scope = self.scope(request.filters)
        if request.retriever in ("dense", "hybrid") and self.encode_query is not None:
            self._check_encoder(scope)
        if not scope.versions:  # e.g. a jurisdiction this index does not hold
            return []
        depth = min(max(self.settings.candidates, 3 * request.k), MAX_KNN)
        german = self.section_fusion is not None and not scope.large
        if request.retriever == "dense" and german:  # long questions reduced to key terms
            from pipelines.retrieval.section_fusion import dense_query

            q = dense_query(request.query, self.analyzer, self.section_context(scope).idf,
                            getattr(self.analyzer, "lang", "de"))
            return self.dense(scope, q, depth)
        if request.retriever == "gaius" and scope.large:
            raise ElasticsearchSearchError(f"gaius scores a scope client-side; this one has ~{scope.rows} rows "
                                           f"(more than {self.settings.max_scope_rows}): name the acts to search")
        if request.retriever != "hybrid":
            return self._leg(request.retriever, scope, request.query, depth)
        if self.settings.server_side_rrf:  # wins over the reranker and client-side fusion
            return self._server_rrf(scope, request.query, depth)
        if german:
            return self.section_search(scope, request.query, depth)
        if self.reranker is not None and not scope.large:
            from pipelines.retrieval.reranker import rerank_legs

            legs = self._legs(LEGS, scope, request.query, depth)
            return rerank_legs(self.reranker, legs, self._query_tokens(request.query), self.lexical_stats(scope),
                               depth)
        config = self.hybrid
        if scope.large and dict(config.weights).get("gaius"):
            config = dataclasses.replace(config, weights=tuple((n, w) for n, w in config.weights if n != "gaius"))
        return fuse(config, self._legs(config.legs(), scope, request.query, depth), depth)

    def _query_tokens(self, query: str) -> list[str]:
        analyzed, _folded = self._analyzed(query)
        return analyzed.split() if analyzed else []

    def needs_vector(self, retriever: str) -> bool:
        reranks = self.reranker is not None and not self.settings.server_side_rrf
        return retriever == "dense" or (retriever == "hybrid" and (
            reranks or self.section_fusion is not None or bool(dict(self.hybrid.weights).get("dense"))))

    def search(self, request: SearchRequest) -> list[Hit]:
        """Article-level hits (best chunk per article), ranked 1..k — ``EmbeddedBackend.search``."""
        retriever = request.retriever
        if retriever not in (*LEGS, "hybrid"):
            raise ElasticsearchSearchError(f"unknown retriever {retriever!r}; use one of {', '.join((*LEGS, 'hybrid'))}")
        if self.needs_vector(retriever) and self.encode_query is None:
            raise ElasticsearchBackendError(f"{retriever} retrieval needs an encode_query callable")
        if request.k <= 0 or not request.query.strip():
            return []
        try:
            hits = self._ranked(request)
        except IndexGone as gone:
            # a rebuild moved the alias to a new physical index and deleted ours: resolve again, once
            self.scopes.discard_index(str(gone))
            try:
                hits = self._ranked(request)
            except IndexGone as again:
                raise ElasticsearchBackendError(f"{again} disappeared twice while searching {self.names.alias}") from again
        return collapse_to_articles(hits, request.k)
