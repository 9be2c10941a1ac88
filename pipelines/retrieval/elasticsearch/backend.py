"""Elasticsearch backend: versioned chunk indices behind aliases, and structured searches.

Layout (``<p>`` = index prefix, ``<c>`` = corpus key such as ``pl-kc``):

* one physical index per loaded corpus version: ``<p>-<c>-<version>-<suffix>``
  (e.g. ``lexpipe-chunks-pl-kc-2025-11-13-20261122012249123456``);
* serving alias ``<p>-<c>`` → the index consumers search by default (moved atomically);
* history alias ``<p>-<c>-all`` → one index per kept version (``as_of`` / ``version`` searches);
* per-version alias ``<p>-<c>-<version>`` → that version's index.

``load_version`` creates the index from ``schemas.elasticsearch.index_body``, bulk-loads with
``helpers.streaming_bulk`` (bounded chunks, 429s retried with exponential backoff), refreshes,
checks ``_count``, moves every alias in ONE ``POST /_aliases`` and finally deletes indices of
versions beyond the newest ``keep_versions``. Any failure before the alias switch deletes the
new index and leaves every alias as it was.

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
  reranker (see :meth:`ElasticsearchBackend._server_rrf`).

A search first resolves which physical index answers it (one ``GET <pattern>/_alias``: serving
alias, or the version alias that ``version`` / ``as_of`` select) and then queries that index, so
all legs of one hybrid search read the same version even while a load switches aliases. An
unknown act, an unknown version or an ``as_of`` before every loaded version raise
:class:`ElasticsearchSearchError`, a ``SearchError`` (the API answers 4xx).

Query bodies are structured only (``match``/``multi_match``/``knn``/``retriever``, filters as
``term``/``terms``): user text is only ever a JSON string value, never query syntax.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from elasticsearch import ApiError, Elasticsearch, NotFoundError
from elasticsearch.helpers import streaming_bulk
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipelines.retrieval.embedded_backend import CANDIDATES, BuildReport, bigrams
from pipelines.retrieval.fusion import RRF_K, HybridConfig, fuse
from pipelines.retrieval.interface import (
    Filters, Hit, SearchError, SearchRequest, collapse_to_articles, encoder_mismatch,
)
from schemas import elasticsearch as es_schema

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from pipelines.retrieval.embedded_backend import TextAnalyzer
    from pipelines.retrieval.reranker import LexicalStats, LinearReranker
    from pipelines.retrieval.section_fusion import SectionFusion, TableContext

log = logging.getLogger(__name__)

EncodeQuery = Callable[[str], Sequence[float]]
AnalyzeQuery = Callable[[str], "tuple[str, str]"]

_VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NAME_PART_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_SUFFIX_RE = re.compile(r"^[a-z0-9]+$")
MAX_KNN = 10_000  # Elasticsearch's limit for k and num_candidates
LEGS: tuple[str, ...] = ("bm25", "dense", "gaius")  # the retrievers hybrid can fuse


class ElasticsearchSettings(BaseSettings):
    """``LEXPIPE_ES_*`` environment variables (same names if these move into ``core.settings``
    as ``es_*`` fields)."""

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_ES_", extra="ignore")

    url: str = "http://localhost:9200"
    api_key: SecretStr | None = None
    ca_certs: str | None = None
    request_timeout_s: float = 30.0
    index_prefix: str = "lexpipe-chunks"
    language: str = Field("pl", description="ISO 639-1 language of the corpus text.")
    vector_dims: int = es_schema.DEFAULT_DIMS
    has_stempel: bool | None = Field(None, description="None: detect the analysis-stempel plugin via GET _nodes/plugins.")
    number_of_shards: int = 1
    number_of_replicas: int = 1
    keep_versions: int = Field(3, ge=1, description="Versions whose indices survive a load (serving index always kept).")
    bulk_chunk_size: int = Field(500, ge=1, description="Documents per _bulk request.")
    bulk_max_chunk_bytes: int = Field(10 * 1024 * 1024, description="Upper bound of one _bulk request body.")
    bulk_max_retries: int = Field(5, ge=0, description="Retries of documents rejected with 429.")
    bulk_initial_backoff_s: float = Field(2.0, description="First 429 backoff; doubles per retry.")
    bulk_max_backoff_s: float = 60.0
    server_side_rrf: bool = Field(False, description="Hybrid via the `rrf` retriever (needs a licensed cluster; "
                                                     "no gAIus leg, and it takes precedence over a loaded "
                                                     "reranker: see ElasticsearchBackend._server_rrf).")
    candidates: int = Field(CANDIDATES, ge=1, le=10_000, description=(
        "Chunks per retriever before fusion and the collapse to articles: max(candidates, 3k), as on the "
        "embedded backend (fusion method, weights and RRF k come from HybridConfig, shared with it)."))
    num_candidates_factor: int = Field(10, ge=1, description="knn num_candidates = max(k * factor, 100).")
    # The lexical leg equals the embedded one by default: analysed unigrams (+ bigrams, weighted by
    # HybridConfig.bigram_weight). Elasticsearch-analysed fields (`text`/`heading_path` with the
    # language analyser, stempel `polish` when installed) and the folded field are opt-in boosts;
    # without an analyze_query callable the text/heading match is the whole lexical leg.
    bm25_analyzed_boost: float = 1.0
    bm25_text_boost: float = 0.0
    bm25_heading_boost: float = 0.0
    bm25_folded_boost: float = 0.0
    scan_page_size: int = Field(500, ge=1, le=10_000, description="Documents per scroll page when gAIus loads an index.")
    scan_keep_alive: str = Field("2m", description="Scroll context keep-alive between pages of that scan.")
    gaius_cache_indices: int = Field(3, ge=1, description=(
        "Physical indices whose scanned rows (gAIus scorer + reranker lexical stats) stay in memory (LRU)."))


class ElasticsearchBackendError(RuntimeError):
    pass


class ElasticsearchSearchError(ElasticsearchBackendError, SearchError):
    """A request the loaded versions cannot answer (unknown act or version, ``as_of`` before every
    version, unknown retriever). A ``SearchError`` like the embedded backend's, so the search
    service and API map it to 4xx the same way for both backends."""


class _IndexGone(Exception):
    """The physical index resolved for a search was deleted (a concurrent load's cleanup)."""


class BulkLoadError(ElasticsearchBackendError):
    """Some documents were rejected (after 429 retries); ``failed_ids`` names them."""

    def __init__(self, index: str, failed: list[tuple[str, int, Any]]):
        self.index = index
        self.failed_ids = [f[0] for f in failed]
        self.errors = failed
        shown = ", ".join(f"{cid} (status {st}: {_reason(err)})" for cid, st, err in failed[:10])
        more = f" and {len(failed) - 10} more" if len(failed) > 10 else ""
        super().__init__(f"{len(failed)} document(s) failed to index into {index}: {shown}{more}")


class IndexLoadError(ElasticsearchBackendError):
    """A load step failed; the new index was deleted and no alias was changed."""

    def __init__(self, message: str, *, index: str, step: str):
        self.index = index
        self.step = step
        super().__init__(message)


@dataclass
class LoadResult:
    index: str
    version: str
    count: int
    serving_alias: str
    promoted: bool
    alias_actions: list[dict[str, Any]] = field(default_factory=list)
    deleted_indices: list[str] = field(default_factory=list)
    cleanup_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class _Served:
    serving: tuple[str, str] | None  # (version, physical index) behind the serving alias
    versions: dict[str, str]  # version -> physical index (history + version alias)

    @property
    def serving_version(self) -> str | None:
        return self.serving[0] if self.serving else None


@dataclass
class _IndexInfo:
    name: str
    version: str
    created: int
    aliases: set[str]


def corpus_key(act_id: str) -> str:
    """``pl:kc`` → ``pl-kc`` (lowercase, usable in index and alias names)."""
    key = re.sub(r"[^a-z0-9]+", "-", act_id.lower()).strip("-")
    if not key or not _NAME_PART_RE.match(key):
        raise ValueError(f"cannot derive an index name part from {act_id!r}")
    return key


def _reason(err: Any) -> str:
    if isinstance(err, Mapping):
        return f"{err.get('type', '')}: {err.get('reason', '')}".strip(": ")
    return str(err)


def _body(resp: Any) -> Any:
    """The decoded body of an ``ApiResponse`` (plain dicts pass through)."""
    return resp.body if hasattr(resp, "body") else resp


def _iso(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def analyze_query_from(analyzer: Any) -> AnalyzeQuery:
    """Adapt an object with ``analyze(text) -> tokens`` and ``fold(tokens) -> tokens`` (such as
    ``pipelines.retrieval.analyzers.Analyzer``) to ``analyze_query``. Use the same analyser that
    produced ``text_analyzed``/``text_folded`` at index time."""

    def analyze_query(text: str) -> tuple[str, str]:
        tokens = list(analyzer.analyze(text))
        return " ".join(tokens), " ".join(analyzer.fold(tokens))

    return analyze_query


# --------------------------------------------------------------------------- query builders


def filter_clauses(filters: Filters, version: str | None = None) -> list[dict[str, Any]]:
    """``filter`` context clauses; values are JSON values, never spliced into query syntax."""
    out: list[dict[str, Any]] = []
    if filters.act_ids:
        out.append({"terms": {"act_id": list(filters.act_ids)}})
    if filters.jurisdictions:
        out.append({"terms": {"jurisdiction": list(filters.jurisdictions)}})
    if filters.statuses:
        out.append({"terms": {"status": list(filters.statuses)}})
    if version is not None:
        out.append({"term": {"version": version}})
    return out


FALLBACK_TEXT_BOOST, FALLBACK_HEADING_BOOST = 1.0, 0.5  # lexical leg without a project analyser


def bm25_query(query: str, filters: list[dict[str, Any]], *, analyzed: str | None = None,
               folded: str | None = None, bigram_weight: float = 0.5, analyzed_boost: float = 1.0,
               text_boost: float = 0.0, heading_boost: float = 0.0,
               folded_boost: float = 0.0) -> dict[str, Any] | None:
    """The lexical leg as one ``bool`` query; None when there is nothing to match.

    With our analysed query (``analyzed``, space-separated tokens): ``match`` on ``text_analyzed``
    plus ``match`` on ``text_bigrams`` with ``boost = bigram_weight``, in ``should`` so the scores
    add up — the embedded backend's BM25(unigrams) + w · BM25(bigrams). ``text``/``heading_path``
    (language analyser) and ``text_folded`` join only with a non-zero boost. ``analyzed=None``
    means no project analyser is configured: then ``text``/``heading_path`` carry the leg.
    """
    should: list[dict[str, Any]] = []
    tokens = analyzed.split() if analyzed else []
    if tokens and analyzed_boost:
        should.append({"match": {"text_analyzed": {"query": " ".join(tokens), "boost": analyzed_boost}}})
    pairs = bigrams(tokens)
    if pairs and bigram_weight:
        should.append({"match": {"text_bigrams": {"query": " ".join(pairs), "boost": bigram_weight}}})
    if folded and folded.strip() and folded_boost:
        should.append({"match": {"text_folded": {"query": folded, "boost": folded_boost}}})
    if analyzed is None:
        text_boost = text_boost or FALLBACK_TEXT_BOOST
        heading_boost = heading_boost or FALLBACK_HEADING_BOOST
    fields = [f"{name}^{boost:g}" for name, boost in (("text", text_boost), ("heading_path", heading_boost)) if boost]
    if fields and query.strip():
        should.insert(0, {"multi_match": {"query": query, "fields": fields, "type": "best_fields"}})
    if not should:
        return None
    return {"bool": {"should": should, "minimum_should_match": 1, "filter": filters}}


def knn_clause(vector: Sequence[float], k: int, filters: list[dict[str, Any]], *,
               num_candidates_factor: int = 10) -> dict[str, Any]:
    k = max(1, min(k, MAX_KNN))
    num_candidates = min(MAX_KNN, max(k * num_candidates_factor, 100, k))
    clause: dict[str, Any] = {"field": "vector", "query_vector": [float(x) for x in vector],
                              "k": k, "num_candidates": num_candidates}
    if filters:
        clause["filter"] = {"bool": {"filter": filters}}
    return clause


def rrf_retriever(bm25: dict[str, Any], knn: dict[str, Any], *, rank_window_size: int,
                  rank_constant: int = RRF_K, weights: tuple[float, float] = (1.0, 1.0)) -> dict[str, Any]:
    """``retriever.rrf`` over a standard (bm25) and a knn child retriever (licensed clusters).

    Equal weights use the plain child form every 9.x cluster accepts; other weights need the
    weighted form ``{"retriever": ..., "weight": w}`` (Elasticsearch 9.2 and later)."""
    children: list[dict[str, Any]] = [{"standard": {"query": bm25}}, {"knn": knn}]
    if tuple(weights) != (1.0, 1.0):
        children = [{"retriever": c, "weight": w} for c, w in zip(children, weights)]
    return {"rrf": {
        "retrievers": children,
        "rank_window_size": rank_window_size,
        "rank_constant": rank_constant,
    }}


def parse_hits(response: Mapping[str, Any], source: str | None) -> list[Hit]:
    """``hits.hits`` → :class:`Hit` list ranked 1..n; ``source`` names the retriever for fusion."""
    out: list[Hit] = []
    for i, h in enumerate(response.get("hits", {}).get("hits", []), 1):
        s = h.get("_source") or {}
        out.append(Hit(
            chunk_id=s.get("chunk_id", h.get("_id", "")),
            article_id=s.get("article_id", ""),
            act_id=s.get("act_id", ""),
            version=_iso(s.get("version", "")),
            score=float(h.get("_score") or 0.0),
            rank=i,
            heading_path=s.get("heading_path") or "",
            text=s.get("text") or "",
            status=s.get("status") or "",
            sources={source: i} if source else {},
        ))
    return out


# --------------------------------------------------------------------------- backend


class ElasticsearchBackend:
    """Loads corpus versions into Elasticsearch and answers :class:`SearchRequest`s like
    ``EmbeddedBackend`` does (same retrievers, same fusion, article-level hits).

    One backend serves one corpus (act); ``corpus`` is its act id (``pl:kc``) or index name part
    (``pl-kc``). ``encode_query(str) -> vector`` is needed for dense/hybrid. ``analyzer`` (the
    project's ``Analyzer``) builds the documents of :meth:`build` and, unless ``analyze_query``
    is given, the analysed query; either way it must be the code that produced
    ``text_analyzed``/``text_bigrams`` at index time. ``hybrid`` is the embedded backend's
    :class:`HybridConfig` (bigram weight, fusion method, leg weights, RRF k); ``reranker``, when
    given, replaces its fusion exactly as on the embedded backend (``index_build`` passes
    ``load_reranker(lang, encoder)``, so both backends rerank or neither does).
    """

    def __init__(self, client: Elasticsearch, corpus: str, *, settings: ElasticsearchSettings | None = None,
                 encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                 analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                 reranker: "LinearReranker | None" = None, section_fusion: "SectionFusion | None" = None,
                 encoder_id: str | None = None):
        from pipelines.retrieval.elasticsearch.gaius import GaiusIndexCache

        self.settings = settings or ElasticsearchSettings()
        self.act_id: str | None = corpus if ":" in corpus else None
        corpus = corpus_key(corpus) if ":" in corpus else corpus
        if not _NAME_PART_RE.match(corpus):
            raise ValueError(f"corpus {corpus!r}: use lowercase letters, digits and '-' (e.g. 'pl-kc')")
        if not _NAME_PART_RE.match(self.settings.index_prefix):
            raise ValueError(f"index prefix {self.settings.index_prefix!r} is not a valid index name part")
        unknown_legs = {name for name, _ in hybrid.weights} - set(LEGS)
        if unknown_legs:
            raise ValueError(f"HybridConfig names unknown retrievers {sorted(unknown_legs)}; use {LEGS}")
        self.client = client
        self.corpus = corpus
        self.encode_query = encode_query
        self.analyzer = analyzer
        self.analyze_query = analyze_query or (analyze_query_from(analyzer) if analyzer is not None else None)
        self.hybrid = hybrid
        self.reranker = reranker
        self.section_fusion = section_fusion  # German hybrid, as on the embedded backend (section_fusion.py)
        # id of the encoder behind ``encode_query``: recorded in each index it creates (mappings._meta)
        # and compared with an index's record before its vectors are searched
        self.encoder_id = encoder_id
        self._index_encoders: dict[str, str | None] = {}
        self.gaius_cache = GaiusIndexCache(client, page_size=self.settings.scan_page_size,
                                           keep_alive=self.settings.scan_keep_alive,
                                           capacity=self.settings.gaius_cache_indices)
        self._has_stempel: bool | None = self.settings.has_stempel
        self._warned_server_rrf = False
        self._pool: ThreadPoolExecutor | None = None  # hybrid legs side by side, made on first use
        self._pool_lock = threading.Lock()

    @classmethod
    def from_settings(cls, corpus: str, settings: ElasticsearchSettings | None = None, *,
                      encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                      analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                      reranker: "LinearReranker | None" = None,
                      section_fusion: "SectionFusion | None" = None,
                      encoder_id: str | None = None) -> "ElasticsearchBackend":
        s = settings or ElasticsearchSettings()
        kwargs: dict[str, Any] = {
            "request_timeout": s.request_timeout_s,
            # 429 is left to streaming_bulk (exponential backoff); the transport would retry it
            # immediately, without any delay.
            "retry_on_status": (502, 503, 504),
        }
        if s.api_key is not None:
            kwargs["api_key"] = s.api_key.get_secret_value()
        if s.ca_certs:
            kwargs["ca_certs"] = s.ca_certs
        return cls(Elasticsearch(s.url, **kwargs), corpus, settings=s, encode_query=encode_query,
                   analyze_query=analyze_query, analyzer=analyzer, hybrid=hybrid, reranker=reranker,
                   section_fusion=section_fusion, encoder_id=encoder_id)

    # ----------------------------------------------------------------- names

    @property
    def base_name(self) -> str:
        return f"{self.settings.index_prefix}-{self.corpus}"

    @property
    def serving_alias(self) -> str:
        return self.base_name

    def serving_pointer(self, act_id: str | None = None) -> str:
        """What a new version is switched to serve through: the serving alias
        (``EmbeddedBackend.serving_pointer`` names its pointer file)."""
        return self.serving_alias

    @property
    def history_alias(self) -> str:
        return f"{self.base_name}-all"

    def version_alias(self, version: str) -> str:
        return f"{self.base_name}-{version}"

    def index_name(self, version: str, suffix: str) -> str:
        return f"{self.base_name}-{version}-{suffix}"

    @property
    def index_pattern(self) -> str:
        return f"{self.base_name}-*"

    # ----------------------------------------------------------------- schema

    def detect_stempel(self) -> bool:
        """True when every node lists the analysis-stempel plugin (``GET _nodes/plugins``)."""
        if self._has_stempel is None:
            resp = self.client.nodes.info(metric="plugins")
            nodes = _body(resp).get("nodes") or {}
            self._has_stempel = bool(nodes) and all(
                any(p.get("name") == es_schema.STEMPEL_PLUGIN for p in (n.get("plugins") or []))
                for n in nodes.values())
        return self._has_stempel

    def index_body(self, version: str | None = None) -> dict[str, Any]:
        lang = self.settings.language
        has_stempel = self.detect_stempel() if lang.lower() == "pl" else False
        meta: dict[str, Any] = {"corpus": self.corpus}
        if version is not None:
            meta["version"] = version
        if self.encoder_id:
            meta["encoder"] = self.encoder_id
        return es_schema.index_body(self.settings.vector_dims, has_stempel, lang,
                                    shards=self.settings.number_of_shards,
                                    replicas=self.settings.number_of_replicas, meta=meta)

    def put_index_template(self) -> None:
        """Optional: install the same layout as a composable template for ``<prefix>-<corpus>-*``."""
        lang = self.settings.language
        has_stempel = self.detect_stempel() if lang.lower() == "pl" else False
        body = es_schema.index_template_body([self.index_pattern], self.settings.vector_dims, has_stempel,
                                             lang, shards=self.settings.number_of_shards,
                                             replicas=self.settings.number_of_replicas)
        self.client.indices.put_index_template(name=self.base_name, **body)

    # ----------------------------------------------------------------- inventory

    def _list_indices(self) -> dict[str, _IndexInfo]:
        """Concrete indices of this corpus with version, creation time and aliases."""
        try:
            resp = self.client.indices.get(index=self.index_pattern, allow_no_indices=True,
                                           ignore_unavailable=True)
        except NotFoundError:
            return {}
        out: dict[str, _IndexInfo] = {}
        for name, info in (_body(resp) or {}).items():
            meta = ((info.get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
            version = meta.get("version")
            # Only indices this backend created (recorded in _meta) are ever aliased or deleted;
            # the wildcard may also match e.g. another corpus "pl-kc-x".
            if meta.get("corpus") != self.corpus or not isinstance(version, str) or not _VERSION_RE.match(version):
                continue
            created = int(((info.get("settings") or {}).get("index") or {}).get("creation_date") or 0)
            out[name] = _IndexInfo(name, version, created, set((info.get("aliases") or {}).keys()))
        return out

    def versions(self) -> list[str]:
        """Versions reachable through the history alias, oldest first."""
        return sorted({i.version for i in self._list_indices().values() if self.history_alias in i.aliases})

    def _owns(self, act_id: str) -> bool:
        try:
            return corpus_key(act_id) == self.corpus
        except ValueError:
            return False

    def serving_version(self, act_id: str | None = None) -> str | None:
        """Version behind the serving alias (None when nothing is loaded or ``act_id`` is another
        corpus); same call as ``EmbeddedBackend.serving_version(act_id)``."""
        if act_id is not None and not self._owns(act_id):
            return None
        served = self._served()
        return served.serving_version

    def acts(self) -> list[str]:
        """The act this backend serves, once a version of it is loaded (``/health``)."""
        if self.act_id is None:
            return []
        return [self.act_id] if self._served().versions else []

    def _served(self) -> "_Served":
        """Which physical index serves, and which one holds each version, from ONE request
        (``GET <prefix>-<corpus>-*/_alias``): the serving alias and the per-version aliases that
        ``load_version`` moves atomically. Only version aliases in the history alias count."""
        try:
            resp = self.client.indices.get_alias(index=self.index_pattern, allow_no_indices=True,
                                                 ignore_unavailable=True)
        except NotFoundError:
            return _Served(None, {})
        prefix = self.base_name + "-"
        serving: list[str] = []
        versions: dict[str, str] = {}
        for name, info in (_body(resp) or {}).items():
            aliases = set(((info or {}).get("aliases") or {}).keys())
            if self.serving_alias in aliases:
                serving.append(name)
            if self.history_alias not in aliases:
                continue
            for alias in aliases:
                version = alias[len(prefix):] if alias.startswith(prefix) else ""
                if _VERSION_RE.match(version):
                    versions[version] = name
        by_index = {index: version for version, index in versions.items()}
        served = [(by_index[n], n) for n in serving if n in by_index]
        return _Served(max(served) if served else None, versions)

    # ----------------------------------------------------------------- load

    def build(self, act_id: str, version: str, chunks: "pa.Table", vectors: "np.ndarray") -> BuildReport:
        """Load a version from its chunks table and vectors: ``EmbeddedBackend.build``'s call, so
        ``index_build.index_step`` drives either backend. ``BuildReport.table`` is the new physical
        index; the serving alias moves unless an older version than the served one is loaded."""
        from pipelines.retrieval.elasticsearch.documents import chunk_documents

        if not self._owns(act_id):
            raise ValueError(f"this backend serves corpus {self.corpus}, not {act_id!r}")
        if self.analyzer is None:
            raise ElasticsearchBackendError("build needs the project analyser (analyzer=...) to fill "
                                            "text_analyzed/text_bigrams the way queries are analysed")
        if vectors.shape[1:] != (self.settings.vector_dims,):
            raise ValueError(f"vectors of shape {vectors.shape}; the index expects {self.settings.vector_dims} dims")
        t0 = time.perf_counter()
        result = self.load_version(chunk_documents(chunks, vectors, self.analyzer), version=version)
        return BuildReport(act_id, result.version, result.index, result.count, len(vectors), time.perf_counter() - t0)

    def _actions(self, docs: Iterable[Mapping[str, Any]], index: str, version: str,
                 counter: list[int]) -> Iterator[dict[str, Any]]:
        dims = self.settings.vector_dims
        for doc in docs:
            src = self.prepare_doc(doc, version, dims)
            counter[0] += 1
            yield {"_op_type": "index", "_index": index, "_id": src["chunk_id"], "_source": src}

    @staticmethod
    def prepare_doc(doc: Mapping[str, Any], version: str, dims: int = es_schema.DEFAULT_DIMS) -> dict[str, Any]:
        """Validate one document and shape it for the mapping (unknown keys are dropped)."""
        missing = [f for f in es_schema.REQUIRED_DOC_FIELDS
                   if doc.get(f) is None or (isinstance(doc.get(f), str) and not doc[f].strip())]
        cid = doc.get("chunk_id", "<no chunk_id>")
        if missing:
            raise ValueError(f"document {cid}: missing required fields {missing}")
        doc_version = _iso(doc["version"])
        if doc_version != version:
            raise ValueError(f"document {cid}: version {doc_version} differs from the loaded version {version}")
        vector = [float(x) for x in doc["vector"]]
        if len(vector) != dims:
            raise ValueError(f"document {cid}: vector has {len(vector)} dims, the index expects {dims}")
        src = {k: doc[k] for k in es_schema.DOC_FIELDS if k in doc and doc[k] is not None}
        src["version"] = version
        src["version_date"] = version
        src["vector"] = vector
        return src

    def load_version(self, docs: Iterable[Mapping[str, Any]], *, version: str | dt.date,
                     suffix: str | None = None, promote: bool | None = None) -> LoadResult:
        """Build a new index for ``version`` from ``docs`` and switch the aliases to it.

        ``promote``: move the serving alias (default: unless an older version than the one
        being served is loaded, e.g. a backfill for ``as_of`` searches).
        """
        t0 = time.monotonic()
        version = _iso(version)
        if not _VERSION_RE.match(version):
            raise ValueError(f"version must be YYYY-MM-DD, got {version!r}")
        suffix = suffix or dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d%H%M%S%f")
        if not _SUFFIX_RE.match(suffix):
            raise ValueError(f"index suffix {suffix!r}: use lowercase letters and digits")
        index = self.index_name(version, suffix)
        body = self.index_body(version)

        existing = self._list_indices()
        if index in existing:
            raise ElasticsearchBackendError(f"index {index} already exists; use another suffix")
        serving_now = [i for i in existing.values() if self.serving_alias in i.aliases]
        serving_version = max((i.version for i in serving_now), default=None)
        if promote is None:
            promote = serving_version is None or version >= serving_version
        same_version = [i for i in existing.values() if i.version == version]

        step = "create"
        sent = [0]
        try:
            self.client.indices.create(index=index, settings=body["settings"], mappings=body["mappings"])
            step = "bulk"
            self._bulk(self._actions(docs, index, version, sent), index)
            step = "refresh"
            self.client.indices.refresh(index=index)
            step = "count"
            count = int(_body(self.client.count(index=index))["count"])
            if count != sent[0]:
                raise ElasticsearchBackendError(
                    f"count check failed for {index}: _count={count}, documents sent={sent[0]} "
                    "(duplicate chunk_ids or lost writes)")
            if count == 0:
                raise ElasticsearchBackendError(f"no documents were loaded into {index}")
            step = "aliases"
            actions = self._alias_actions(index, version, promote, serving_now, same_version)
            self._switch_aliases(actions, index)
        except BaseException as exc:
            self._discard(index)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise IndexLoadError(f"loading {index} failed at step '{step}': {exc}; the new index was "
                                 f"deleted and aliases are unchanged", index=index, step=step) from exc

        result = LoadResult(index=index, version=version, count=count, serving_alias=self.serving_alias,
                            promoted=promote, alias_actions=actions)
        self._cleanup(existing, index, version, promote, serving_now, result)
        result.seconds = round(time.monotonic() - t0, 3)
        log.info("loaded %s: %d docs, promoted=%s, deleted=%s", index, count, promote, result.deleted_indices)
        return result

    def _bulk(self, actions: Iterable[dict[str, Any]], index: str) -> None:
        s = self.settings
        failed: list[tuple[str, int, Any]] = []
        for ok, item in streaming_bulk(
            self.client, actions,
            chunk_size=s.bulk_chunk_size, max_chunk_bytes=s.bulk_max_chunk_bytes,
            max_retries=s.bulk_max_retries, initial_backoff=s.bulk_initial_backoff_s,
            max_backoff=s.bulk_max_backoff_s,
            # False: per-document 429s are only retried when errors are not raised at once
            # (elastic/elasticsearch-py#864); we collect the rest and raise below.
            raise_on_error=False, raise_on_exception=True, yield_ok=False,
        ):
            if not ok:
                _op, info = next(iter(item.items()))
                failed.append((str(info.get("_id")), int(info.get("status", 0)), info.get("error")))
        if failed:
            raise BulkLoadError(index, failed)

    def _alias_actions(self, index: str, version: str, promote: bool, serving_now: list[_IndexInfo],
                       same_version: list[_IndexInfo]) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = []
        if promote:
            for old in serving_now:
                actions.append({"remove": {"index": old.name, "alias": self.serving_alias}})
        # Only one index per version in the history: a reload supersedes the previous one.
        for old in same_version:
            for alias in (self.history_alias, self.version_alias(version)):
                if alias in old.aliases:
                    actions.append({"remove": {"index": old.name, "alias": alias}})
        if promote:
            actions.append({"add": {"index": index, "alias": self.serving_alias}})
        actions.append({"add": {"index": index, "alias": self.history_alias}})
        actions.append({"add": {"index": index, "alias": self.version_alias(version)}})
        return actions

    def _switch_aliases(self, actions: list[dict[str, Any]], index: str) -> None:
        try:
            self.client.indices.update_aliases(actions=actions)
        except ApiError:
            raise
        except Exception:
            # A timeout may hide a switch that did happen: never delete an index that serves.
            try:
                if self.client.indices.exists_alias(name=self.history_alias, index=index):
                    return
            except Exception:
                pass
            raise

    def _discard(self, index: str) -> None:
        try:
            self.client.indices.delete(index=index, ignore_unavailable=True)
        except Exception as exc:  # report, but keep the original error
            log.error("could not delete half-built index %s: %s", index, exc)

    def _cleanup(self, existing: dict[str, _IndexInfo], new_index: str, version: str, promote: bool,
                 serving_now: list[_IndexInfo], result: LoadResult) -> None:
        """Delete superseded reloads, orphans (indices in no alias, e.g. left by a crashed run) and
        indices of versions beyond the newest ``keep_versions``. Loads of one corpus must run one
        at a time: an index another loader is still filling counts as an orphan."""
        latest: dict[str, str] = {version: new_index}
        in_history = [i for i in existing.values() if self.history_alias in i.aliases and i.version != version]
        for info in sorted(in_history, key=lambda i: (i.created, i.name)):
            latest[info.version] = info.name  # newest aliased index per version wins
        kept_versions = sorted(latest, reverse=True)[: self.settings.keep_versions]
        keep = {latest[v] for v in kept_versions} | {new_index}
        if not promote:
            keep |= {i.name for i in serving_now}
        doomed = sorted(n for n in existing if n not in keep)
        if not doomed:
            return
        try:
            self.client.indices.delete(index=doomed, ignore_unavailable=True)
            result.deleted_indices = doomed
        except Exception as exc:
            msg = f"could not delete old indices {doomed}: {exc}"
            log.warning(msg)
            result.cleanup_errors.append(msg)

    # ----------------------------------------------------------------- search

    def resolve_as_of(self, as_of: dt.date, filters: Filters = Filters()) -> str | None:
        """Newest loaded version with ``version <= as_of`` (None when there is none). ``filters``
        is accepted for compatibility: one backend holds one act, so they cannot change the answer."""
        older = [v for v in self._served().versions if v <= as_of.isoformat()]
        return max(older, default=None)

    def _resolve(self, f: Filters) -> tuple[str, str]:
        """(version, physical index) answering ``f``, with the embedded backend's rules and errors:
        ``version`` exactly, else the newest version on or before ``as_of``, else the serving one."""
        for act in f.act_ids:
            if not self._owns(act):
                raise ElasticsearchSearchError(f"unknown act {act!r} (indexed: {self.act_id or self.corpus})")
        act = self.act_id or self.corpus
        served = self._served()
        if not served.versions:
            raise ElasticsearchSearchError(f"unknown act {act!r}: no version of corpus {self.corpus} has been "
                                           f"loaded ({self.history_alias} is empty or missing)")
        if f.version is not None:
            version = _iso(f.version)
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
            raise _IndexGone(index) from exc
        return _body(resp)

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
            raise _IndexGone(index) from exc
        rest = dataclasses.replace(filters, version=None, as_of=None)
        return retriever.search(SearchRequest(strip_boilerplate(query), depth, "gaius", rest))

    def lexical_stats(self, index: str) -> "LexicalStats":
        """Analysed tokens and IDF of the chunks of ``index`` for the reranker, from the same
        (cached, LRU-bounded) scan as gAIus — ``EmbeddedBackend.lexical_stats`` of a table."""
        try:
            return self.gaius_cache.lexical(index)
        except NotFoundError as exc:
            raise _IndexGone(index) from exc

    def section_context(self, index: str) -> "TableContext":
        """IDF and each §'s first chunk of ``index`` for the German hybrid, from the same cached scan
        as gAIus and the reranker (``EmbeddedBackend.section_context`` of a table)."""
        try:
            return self.gaius_cache.section(index)
        except NotFoundError as exc:
            raise _IndexGone(index) from exc

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
                info = _body(self.client.indices.get(index=index)) or {}
            except NotFoundError as exc:
                raise _IndexGone(index) from exc
            meta = (((info.get(index) or {}).get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
            self._index_encoders[index] = meta.get("encoder")
        why = encoder_mismatch(f"{self.act_id or self.corpus} {version} ({index})", self._index_encoders[index],
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
        except _IndexGone as gone:
            # the index we resolved was deleted after a newer load (retention): resolve again, once
            self.gaius_cache.discard(str(gone))
            try:
                hits = self._ranked(request)
            except _IndexGone as again:
                raise ElasticsearchBackendError(f"{again} disappeared twice while searching corpus {self.corpus}") from again
        return collapse_to_articles(hits, request.k)
