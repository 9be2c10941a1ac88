"""Elasticsearch backend: versioned chunk indices behind aliases, and structured searches.

One :class:`ElasticsearchBackend` serves one corpus (act) and implements the backend interface
the embedded backend does (``build``, ``search``, ``serving_version``, ``serving_pointer``,
``acts``), composed of:

* :mod:`.names` — index and alias names of the corpus, and what the aliases point at;
* :mod:`.lifecycle` — a physical index per loaded version: create, bulk load (429 retries),
  count check, ONE atomic alias switch, retention, the encoder record in ``_meta``;
* :mod:`.search` — resolve a request to one physical index and run the bm25 / knn / gAIus legs,
  the hybrid fusion, the reranker or the German section fusion on it; the request bodies and
  the parsing of hits are in :mod:`.queries`;
* :mod:`.documents` — chunk rows → documents, analysed as the embedded backend analyses them;
* :mod:`.gaius` — the client-side gAIus scorer (and the reranker's lexical statistics) per
  physical index, from one scan;
* :mod:`.settings` / :mod:`.errors` — ``LEXPIPE_ES_*`` settings and the client; errors.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from elasticsearch import Elasticsearch

from pipelines.retrieval.elasticsearch.errors import ElasticsearchBackendError
from pipelines.retrieval.elasticsearch.lifecycle import IndexLifecycle, LoadResult
from pipelines.retrieval.elasticsearch.names import NAME_PART_RE, IndexNames, corpus_key
from pipelines.retrieval.elasticsearch.queries import AnalyzeQuery, EncodeQuery
from pipelines.retrieval.elasticsearch.search import IndexSearch
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings, client_for
from pipelines.retrieval.backend_common import BuildReport
from pipelines.retrieval.fusion import HybridConfig
from pipelines.retrieval.interface import Filters, Hit, SearchRequest
from schemas import elasticsearch as es_schema

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from pipelines.retrieval.backend_common import TextAnalyzer
    from pipelines.retrieval.reranker import LexicalStats, LinearReranker
    from pipelines.retrieval.section_fusion import SectionFusion, TableContext


def _query_side(name: str, doc: str) -> property:
    """A backend attribute that lives on its :class:`IndexSearch` (set on either, seen by both)."""
    return property(lambda self: getattr(self.searcher, name),
                    lambda self, value: setattr(self.searcher, name, value), doc=doc)


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

    ``lifecycle`` (:class:`IndexLifecycle`) loads and retires indices; ``searcher``
    (:class:`IndexSearch`) answers searches; both share the client, the settings and the names.
    """

    def __init__(self, client: Elasticsearch, corpus: str, *, settings: ElasticsearchSettings | None = None,
                 encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                 analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                 reranker: "LinearReranker | None" = None, section_fusion: "SectionFusion | None" = None,
                 encoder_id: str | None = None):
        self.settings = settings or ElasticsearchSettings()
        self.act_id: str | None = corpus if ":" in corpus else None
        corpus = corpus_key(corpus) if ":" in corpus else corpus
        if not NAME_PART_RE.match(corpus):
            raise ValueError(f"corpus {corpus!r}: use lowercase letters, digits and '-' (e.g. 'pl-kc')")
        if not NAME_PART_RE.match(self.settings.index_prefix):
            raise ValueError(f"index prefix {self.settings.index_prefix!r} is not a valid index name part")
        self.client = client
        self.corpus = corpus
        self.names = IndexNames(self.settings.index_prefix, corpus)
        self.searcher = IndexSearch(client, self.names, self.settings, act_id=self.act_id,
                                    encode_query=encode_query, analyze_query=analyze_query, analyzer=analyzer,
                                    hybrid=hybrid, reranker=reranker, section_fusion=section_fusion,
                                    encoder_id=encoder_id)
        self.lifecycle = IndexLifecycle(client, self.names, self.settings, encoder_id=encoder_id)

    @classmethod
    def from_settings(cls, corpus: str, settings: ElasticsearchSettings | None = None, *,
                      encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                      analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                      reranker: "LinearReranker | None" = None,
                      section_fusion: "SectionFusion | None" = None,
                      encoder_id: str | None = None) -> "ElasticsearchBackend":
        s = settings or ElasticsearchSettings()
        return cls(client_for(s), corpus, settings=s, encode_query=encode_query,
                   analyze_query=analyze_query, analyzer=analyzer, hybrid=hybrid, reranker=reranker,
                   section_fusion=section_fusion, encoder_id=encoder_id)

    # ----------------------------------------------------------------- query side (IndexSearch)

    encode_query = _query_side("encode_query", "Query text → vector (dense and hybrid).")
    analyze_query = _query_side("analyze_query", "Query text → (analysed, folded) token strings.")
    analyzer = _query_side("analyzer", "The project analyser of the corpus' language.")
    hybrid = _query_side("hybrid", "HybridConfig of the client-side fusion.")
    reranker = _query_side("reranker", "The trained hybrid reranker, or None (fusion by ``hybrid``).")
    section_fusion = _query_side("section_fusion", "The German hybrid's section fusion, or None.")
    gaius_cache = _query_side("gaius_cache", "Scanned rows per physical index (gAIus, reranker, sections).")

    @property
    def encoder_id(self) -> str | None:
        """Id of the encoder behind ``encode_query``: recorded in each index the lifecycle creates
        (``mappings._meta``) and compared with an index's record before its vectors are searched."""
        return self.searcher.encoder_id

    @encoder_id.setter
    def encoder_id(self, value: str | None) -> None:
        self.searcher.encoder_id = value
        self.lifecycle.encoder_id = value

    # ----------------------------------------------------------------- names

    @property
    def base_name(self) -> str:
        return self.names.base_name

    @property
    def serving_alias(self) -> str:
        return self.names.serving_alias

    def serving_pointer(self, act_id: str | None = None) -> str:
        """What a new version is switched to serve through: the serving alias
        (``EmbeddedBackend.serving_pointer`` names its pointer file)."""
        return self.serving_alias

    @property
    def history_alias(self) -> str:
        return self.names.history_alias

    def version_alias(self, version: str) -> str:
        return self.names.version_alias(version)

    def index_name(self, version: str, suffix: str) -> str:
        return self.names.index_name(version, suffix)

    @property
    def index_pattern(self) -> str:
        return self.names.index_pattern

    # ----------------------------------------------------------------- lifecycle

    def detect_stempel(self) -> bool:
        return self.lifecycle.detect_stempel()

    def index_body(self, version: str | None = None) -> dict[str, Any]:
        return self.lifecycle.index_body(version)

    def put_index_template(self) -> None:
        self.lifecycle.put_index_template()

    def versions(self) -> list[str]:
        """Versions reachable through the history alias, oldest first."""
        return self.lifecycle.versions()

    @staticmethod
    def prepare_doc(doc: Mapping[str, Any], version: str, dims: int = es_schema.DEFAULT_DIMS) -> dict[str, Any]:
        return IndexLifecycle.prepare_doc(doc, version, dims)

    def load_version(self, docs: Iterable[Mapping[str, Any]], *, version: str | dt.date,
                     suffix: str | None = None, promote: bool | None = None) -> LoadResult:
        """:meth:`IndexLifecycle.load_version`: a new index for ``version``, aliases switched to it."""
        return self.lifecycle.load_version(docs, version=version, suffix=suffix, promote=promote)

    def build(self, act_id: str, version: str, chunks: "pa.Table", vectors: "np.ndarray") -> BuildReport:
        """Load a version from its chunks table and vectors: ``EmbeddedBackend.build``'s call, so
        ``index_build.index_step`` drives either backend. ``BuildReport.table`` is the new physical
        index; the serving alias moves unless an older version than the served one is loaded."""
        from pipelines.retrieval.elasticsearch.documents import chunk_documents

        if not self.names.owns(act_id):
            raise ValueError(f"this backend serves corpus {self.corpus}, not {act_id!r}")
        if self.analyzer is None:
            raise ElasticsearchBackendError("build needs the project analyser (analyzer=...) to fill "
                                            "text_analyzed/text_bigrams the way queries are analysed")
        if vectors.shape[1:] != (self.settings.vector_dims,):
            raise ValueError(f"vectors of shape {vectors.shape}; the index expects {self.settings.vector_dims} dims")
        t0 = time.perf_counter()
        result = self.load_version(chunk_documents(chunks, vectors, self.analyzer), version=version)
        return BuildReport(act_id, result.version, result.index, result.count, len(vectors), time.perf_counter() - t0)

    # ----------------------------------------------------------------- serving

    def serving_version(self, act_id: str | None = None) -> str | None:
        """Version behind the serving alias (None when nothing is loaded or ``act_id`` is another
        corpus); same call as ``EmbeddedBackend.serving_version(act_id)``."""
        if act_id is not None and not self.names.owns(act_id):
            return None
        return self.searcher.served().serving_version

    def acts(self) -> list[str]:
        """The act this backend serves, once a version of it is loaded (``/health``)."""
        if self.act_id is None:
            return []
        return [self.act_id] if self.searcher.served().versions else []

    # ----------------------------------------------------------------- search

    def resolve_as_of(self, as_of: dt.date, filters: Filters = Filters()) -> str | None:
        return self.searcher.resolve_as_of(as_of, filters)

    def build_bm25(self, query: str, filters: list[dict[str, Any]], *,
                   bigram_weight: float | None = None) -> dict[str, Any] | None:
        return self.searcher.build_bm25(query, filters, bigram_weight=bigram_weight)

    def bm25(self, index: str, query: str, filters: list[dict[str, Any]], depth: int, *,
             bigram_weight: float | None = None) -> list[Hit]:
        return self.searcher.bm25(index, query, filters, depth, bigram_weight=bigram_weight)

    def dense(self, index: str, query: str, filters: list[dict[str, Any]], depth: int) -> list[Hit]:
        return self.searcher.dense(index, query, filters, depth)

    def gaius(self, index: str, query: str, filters: Filters, depth: int) -> list[Hit]:
        return self.searcher.gaius(index, query, filters, depth)

    def lexical_stats(self, index: str) -> "LexicalStats":
        return self.searcher.lexical_stats(index)

    def section_context(self, index: str) -> "TableContext":
        return self.searcher.section_context(index)

    def section_legs(self, index: str, query: str, clauses: list[dict[str, Any]], legs: Sequence[str],
                     leg_articles: int = 100) -> dict[str, list[Hit]]:
        return self.searcher.section_legs(index, query, clauses, legs, leg_articles)

    def search(self, request: SearchRequest) -> list[Hit]:
        """Article-level hits (best chunk per article), ranked 1..k — ``EmbeddedBackend.search``."""
        return self.searcher.search(request)
