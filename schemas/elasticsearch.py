"""Elasticsearch index layout of the language indices: the single source of truth.

Settings, mappings and the index-template body are plain dicts built here and nowhere else;
``pipelines.retrieval.elasticsearch.lifecycle`` only ever sends what these functions return. The
analyser of ``text``/``heading_path`` is the one the backend passes as ``text_analyzer`` (its
language profile's, ``pipelines.retrieval.languages``), else :func:`language_analyzer`'s.

One physical index per language and collection (``<prefix>-statutes-de-1``; the case-law
collection ``<prefix>-cases-de-1``) holds three kinds of documents (``doc_kind``):

* ``chunk`` — one retrieval chunk *content* of an act (``schemas.arrow.CHUNKS``) across the act's
  versions: the row's interval (``version_from`` ≤ V < ``version_to``: keyword ids that sort in
  order; ``valid_from`` ≤ D < ``valid_to``: their dates, for ``as_of``), the generations that see
  it (``gen_from`` ≤ G < ``gen_to``), the project's pre-analysed strings and, when one has been
  computed, the embedding (``has_vector``);
* ``act`` — the act's catalogue entry at a generation: its versions in order and how many rows
  its newest version shows (``chunks``);
* ``lock`` — the publication lease one writer holds (``lock_owner``, ``locked_at``).

Fields:

* ids, hierarchy and interval ids are ``keyword`` (exact filters and ranges, never analysed);
* ``heading_path`` / ``text`` are ``text`` with the cluster's language analyser: ``polish`` from
  the analysis-stempel plugin when every node has it, ``german`` etc. from core Elasticsearch,
  otherwise a plain standard+lowercase analyser (Polish without stempel: the Polish signal then
  comes from ``text_analyzed``);
* ``text_analyzed`` holds our pre-analysed tokens (lemmas, space separated) and is split on
  whitespace and lowercased only, so query strings analysed by the same code match exactly;
* ``text_folded`` is the diacritic-folded variant (whitespace + lowercase + asciifolding);
* ``text_bigrams`` holds adjacent analysed tokens joined as ``a_b`` (``backend_common.bigrams``),
  split on whitespace only, exactly like the embedded backend's ``text_bigrams``: the lexical leg
  is BM25(unigrams) + w · BM25(bigrams) on both backends, so hybrid weights tuned on one apply to
  the other. Only term frequencies are indexed (no phrase query ever runs on it);
* ``position`` is the chunk's row number in the chunks table of the version that first showed the
  row, kept in ``_source`` only: gAIus breaks score ties by document order;
* ``vector`` is an int8-quantised HNSW ``dense_vector`` (cosine), absent until the embedding
  backfill reaches the row: kNN covers the rows that have one, BM25 every row.
"""

from __future__ import annotations

import math
from typing import Any

SCHEMA_VERSION = 3  # 2: text_bigrams, position; 3: one index per language (intervals, generations, kinds)
DEFAULT_DIMS = 384

DOC_KINDS = ("chunk", "act", "lock")

# Exact-match fields (ids, hierarchy, intervals, filters).
KEYWORD_FIELDS: tuple[str, ...] = (
    "doc_kind", "chunk_id", "article_id", "act_id", "jurisdiction", "status", "number", "content_hash",
    "version_from", "version_to", "versions", "lock_owner",
)
DATE_FIELDS: tuple[str, ...] = ("valid_from", "valid_to")
INTEGER_FIELDS: tuple[str, ...] = ("gen_from", "gen_to", "chunk_index", "chunks")
TEXT_FIELDS: tuple[str, ...] = ("heading_path", "text")
# Every field a document may carry; the index is ``dynamic: strict``, anything else is rejected.
DOC_FIELDS: tuple[str, ...] = (
    "doc_kind", "chunk_id", "article_id", "act_id", "jurisdiction", "status", "number", "chunk_index",
    "content_hash", "heading_path", "text", "text_analyzed", "text_folded", "text_bigrams", "position",
    "version_from", "version_to", "valid_from", "valid_to", "gen_from", "gen_to", "has_vector", "vector",
    "versions", "chunks", "lock_owner", "locked_at",
)
# What a chunk document must carry (``vector`` may come later, from the embedding backfill).
REQUIRED_DOC_FIELDS: tuple[str, ...] = (
    "doc_kind", "chunk_id", "article_id", "act_id", "jurisdiction", "text", "version_from", "version_to",
    "valid_from", "valid_to", "gen_from", "gen_to",
)
# What searches read back (never the vector or the analysed copies).
SOURCE_FIELDS: tuple[str, ...] = (
    "chunk_id", "article_id", "act_id", "jurisdiction", "version_from", "status", "number", "heading_path", "text",
)
# What the client-side scorers load per scope (one scan): the columns ``GaiusRetriever`` reads,
# ``position`` / ``version_from`` for document order, and ``text_analyzed`` for the hybrid
# reranker's lexical statistics and the German section fusion's IDF (BM25 itself runs in the cluster).
GAIUS_SOURCE_FIELDS: tuple[str, ...] = (
    "chunk_id", "article_id", "act_id", "jurisdiction", "heading_path", "text", "status", "position",
    "version_from", "text_analyzed",
)
# What a publication reads of an act's rows to plan a new version (no text, no vector).
STATE_SOURCE_FIELDS: tuple[str, ...] = (
    "chunk_id", "content_hash", "status", "version_from", "version_to", "has_vector",
)

# Expected size of one chunk document per copy on disk (docs/deployment.md, "Sizing"): vector with
# its int8 copy and HNSW graph ≈ 2.05 KB, _source ≈ 3.2 KB after LZ4 (the vector as JSON floats
# and the text four times), inverted indexes and doc values ≈ 1.2 KB.
BYTES_PER_DOC = 6_500
TARGET_SHARD_BYTES = 10 * 10**9  # the low end of the 10–50 GB Elastic aims a search shard at


def primary_shards(expected_docs: int, *, bytes_per_doc: int = BYTES_PER_DOC,
                   target_shard_bytes: int = TARGET_SHARD_BYTES) -> int:
    """Primary shards of a language index expected to hold ``expected_docs`` documents: as many as
    keep each shard at or below ``target_shard_bytes`` per copy, at least one."""
    if expected_docs < 0 or bytes_per_doc <= 0 or target_shard_bytes <= 0:
        raise ValueError("expected_docs >= 0, bytes_per_doc > 0 and target_shard_bytes > 0")
    return max(1, math.ceil(expected_docs * bytes_per_doc / target_shard_bytes))


PRETOKENIZED_ANALYZER = "lexpipe_pretokenized"  # whitespace + lowercase
FOLDED_ANALYZER = "lexpipe_folded"  # whitespace + lowercase + asciifolding
PLAIN_ANALYZER = "lexpipe_plain"  # standard + lowercase: fallback when no language analyser exists
BIGRAM_ANALYZER = "lexpipe_bigrams"  # whitespace only: the embedded backend's bigram tokenizer

STEMPEL_PLUGIN = "analysis-stempel"

# ISO 639-1 → built-in Elasticsearch language analyser. Polish is not built in (stempel plugin).
BUILTIN_LANGUAGE_ANALYZERS: dict[str, str] = {
    "ar": "arabic", "bg": "bulgarian", "bn": "bengali", "ca": "catalan", "cs": "czech", "da": "danish",
    "de": "german", "el": "greek", "en": "english", "es": "spanish", "et": "estonian", "eu": "basque",
    "fa": "persian", "fi": "finnish", "fr": "french", "ga": "irish", "gl": "galician", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "lv": "latvian", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "th": "thai", "tr": "turkish",
}


def language_analyzer(lang: str, has_stempel: bool) -> str:
    """Analyser for ``text``/``heading_path``: ``polish`` needs stempel; unknown languages → plain."""
    lang = lang.lower()
    if lang == "pl":
        return "polish" if has_stempel else PLAIN_ANALYZER
    return BUILTIN_LANGUAGE_ANALYZERS.get(lang, PLAIN_ANALYZER)


def analysis_settings() -> dict[str, Any]:
    """Custom analysers shared by every language (the language ones are built in / plugin)."""
    return {
        "analyzer": {
            PRETOKENIZED_ANALYZER: {"type": "custom", "tokenizer": "whitespace", "filter": ["lowercase"]},
            FOLDED_ANALYZER: {"type": "custom", "tokenizer": "whitespace",
                              "filter": ["lowercase", "asciifolding"]},
            PLAIN_ANALYZER: {"type": "custom", "tokenizer": "standard", "filter": ["lowercase"]},
            # no lowercase: LanceDB's bigram index (whitespace, lower_case=False) keeps case too
            BIGRAM_ANALYZER: {"type": "custom", "tokenizer": "whitespace", "filter": []},
        },
    }


def index_settings(*, shards: int = 1, replicas: int = 1) -> dict[str, Any]:
    return {
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "analysis": analysis_settings(),
    }


def vector_mapping(dims: int = DEFAULT_DIMS) -> dict[str, Any]:
    if not 1 <= dims <= 4096:
        raise ValueError(f"dense_vector dims must be in 1..4096, got {dims}")
    return {
        "type": "dense_vector",
        "dims": dims,
        "similarity": "cosine",
        "index": True,
        # Explicit: since 9.1 the default for dims >= 384 is bbq_hnsw, which we do not want.
        "index_options": {"type": "int8_hnsw", "m": 16, "ef_construction": 100},
    }


def index_mappings(dims: int = DEFAULT_DIMS, has_stempel: bool = False, lang: str = "pl", *,
                   text_analyzer: str | None = None) -> dict[str, Any]:
    """``text_analyzer``: the analyser of ``heading_path``/``text`` (the backend passes its language
    profile's); None: :func:`language_analyzer` of ``lang``."""
    text_analyzer = text_analyzer or language_analyzer(lang, has_stempel)
    props: dict[str, Any] = {name: {"type": "keyword"} for name in KEYWORD_FIELDS}
    for name in DATE_FIELDS:
        props[name] = {"type": "date", "format": "strict_date"}
    for name in INTEGER_FIELDS:
        props[name] = {"type": "integer"}
    props["has_vector"] = {"type": "boolean"}
    props["locked_at"] = {"type": "long"}
    for name in TEXT_FIELDS:
        props[name] = {"type": "text", "analyzer": text_analyzer}
    props["text_analyzed"] = {"type": "text", "analyzer": PRETOKENIZED_ANALYZER}
    props["text_folded"] = {"type": "text", "analyzer": FOLDED_ANALYZER}
    props["text_bigrams"] = {"type": "text", "analyzer": BIGRAM_ANALYZER, "index_options": "freqs"}
    props["position"] = {"type": "integer", "index": False, "doc_values": False}
    props["vector"] = vector_mapping(dims)
    return {
        "dynamic": "strict",
        "_meta": {"lexpipe": {
            "schema_version": SCHEMA_VERSION, "lang": lang.lower(), "has_stempel": bool(has_stempel),
            "text_analyzer": text_analyzer, "dims": dims,
        }},
        "properties": props,
    }


def index_body(dims: int = DEFAULT_DIMS, has_stempel: bool = False, lang: str = "pl", *,
               text_analyzer: str | None = None, shards: int = 1, replicas: int = 1,
               meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Body of ``PUT /<index>``: ``{"settings": ..., "mappings": ...}``.

    ``meta`` is merged into ``mappings._meta.lexpipe`` (the backend records collection, language
    and the encoder whose vectors the index holds).
    """
    mappings = index_mappings(dims, has_stempel, lang, text_analyzer=text_analyzer)
    if meta:
        mappings["_meta"]["lexpipe"].update(meta)
    return {"settings": index_settings(shards=shards, replicas=replicas), "mappings": mappings}


def index_template_body(index_patterns: list[str] | tuple[str, ...], dims: int = DEFAULT_DIMS,
                        has_stempel: bool = False, lang: str = "pl", *, text_analyzer: str | None = None,
                        priority: int = 200, shards: int = 1, replicas: int = 1) -> dict[str, Any]:
    """Body of ``PUT /_index_template/<name>`` (composable template) with the same layout."""
    body = index_body(dims, has_stempel, lang, text_analyzer=text_analyzer, shards=shards, replicas=replicas)
    return {
        "index_patterns": list(index_patterns),
        "priority": priority,
        "template": {"settings": body["settings"], "mappings": body["mappings"]},
        "_meta": {"lexpipe_schema_version": SCHEMA_VERSION},
    }
