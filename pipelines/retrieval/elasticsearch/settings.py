"""``LEXPIPE_ES_*`` settings of the Elasticsearch backend, and the client they configure."""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipelines.retrieval.backend_common import CANDIDATES, IN_MEMORY_MAX_ROWS
from schemas import elasticsearch as es_schema


class ElasticsearchSettings(BaseSettings):
    """``LEXPIPE_ES_*`` environment variables (same names if these move into ``core.settings``
    as ``es_*`` fields)."""

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_ES_", extra="ignore")

    url: str = "http://localhost:9200"
    api_key: SecretStr | None = None
    ca_certs: str | None = None
    request_timeout_s: float = 30.0
    index_prefix: str = Field("lexpipe", description="Start of the index names: <prefix>-statutes-<lang>, <prefix>-cases-<lang>.")
    vector_dims: int = es_schema.DEFAULT_DIMS
    has_stempel: bool | None = Field(None, description="None: detect the analysis-stempel plugin via GET _nodes/plugins.")
    number_of_shards: int | None = Field(None, ge=1, description=(
        "Primaries of a new physical index; None: from the expected size (schemas.elasticsearch.primary_shards)."))
    expected_docs: int = Field(1_000_000, ge=0, description=(
        "Documents a language index is sized for when it is created (the whole-corpus estimate of "
        "docs/elasticsearch.md; a rebuild also counts the documents it replaces)."))
    target_shard_gb: float = Field(10.0, gt=0, description="Bytes per primary shard copy the sizing aims at, in GB.")
    number_of_replicas: int = 1
    keep_versions: int | None = Field(None, ge=1, description=(
        "Versions kept per act (older ones are forgotten at the act's next publication); None keeps every version."))
    keep_generations: int = Field(2, ge=1, description=(
        "Generations a reader may still hold: documents only older ones see are deleted after a publication."))
    lock_ttl_s: float = Field(900.0, gt=0, description="A publication lease not renewed for this long is taken over.")
    publish_refresh_interval: str | None = Field("-1", description=(
        "index.refresh_interval while a publication writes (-1: none until its own refresh); None leaves it."))
    refresh_interval: str = Field("1s", description="index.refresh_interval restored after a publication.")
    flush_docs: int = Field(2_000, ge=1, description="Staged documents a publication buffers before it sends them.")
    bulk_chunk_size: int = Field(500, ge=1, description="Documents per _bulk request.")
    bulk_max_chunk_bytes: int = Field(10 * 1024 * 1024, description="Upper bound of one _bulk request body.")
    bulk_max_retries: int = Field(5, ge=0, description="Retries of documents rejected with 429.")
    bulk_initial_backoff_s: float = Field(2.0, description="First 429 backoff; doubles per retry.")
    bulk_max_backoff_s: float = 60.0
    server_side_rrf: bool = Field(False, description="Hybrid via the `rrf` retriever (needs a licensed cluster; "
                                                     "no gAIus leg, and it takes precedence over a loaded "
                                                     "reranker: see IndexSearch._server_rrf).")
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
    scan_page_size: int = Field(500, ge=1, le=10_000, description="Documents per scroll page of a scan (scopes, catalogue).")
    scan_keep_alive: str = Field("2m", description="Scroll context keep-alive between pages of a scan.")
    gaius_cache_indices: int = Field(3, ge=1, description=(
        "Search scopes (generation + acts + versions) whose scanned rows (gAIus scorer, reranker lexical stats, "
        "section context) stay in memory (LRU)."))
    max_scope_rows: int = Field(IN_MEMORY_MAX_ROWS, ge=1, description=(
        "Rows a search scope may have for the client-side legs (gAIus, reranker, section fusion) to load it; "
        "larger scopes are answered by BM25 + kNN only."))

def client_for(s: ElasticsearchSettings) -> Elasticsearch:
    """The client ``s`` configures (URL, API key, CA certificates, timeout, transport retries)."""
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
    return Elasticsearch(s.url, **kwargs)
