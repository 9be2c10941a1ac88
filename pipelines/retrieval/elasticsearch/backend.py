"""Elasticsearch backend: one index per language, acts and versions as fields, and searches that
answer like the embedded backend's.

One :class:`ElasticsearchBackend` serves one language — every act of it — and implements the
backend interface the embedded backend does (``build``, ``search``, ``serving_version``,
``serving_pointer``, ``acts``) plus the publication API of the embedded engine (``writer()``:
``add_version`` / ``replace_act`` / ``drop_act`` / ``set_vectors`` / ``commit``) and its snapshot
view (``snapshot()``: ``acts`` / ``versions`` / ``serving_version``). It holds two collections of
the same layout (:mod:`.names`): ``statutes`` (``<prefix>-statutes-<lang>``) and the language's
court decisions (``<prefix>-cases-<lang>``: ``pl:cases`` / ``de:cases``); a search goes to the
collection of the acts it names (none named: statutes).

Composed of:

* :mod:`.names` — index and alias names, which physical index and generation serve;
* :mod:`.lifecycle` — physical indices (mapping, shards from the expected size), the publication
  lease, the alias swap, cleanup, mapping migration;
* :mod:`.writer` — publications: a changeset staged as generation G+1, one alias swap;
* :mod:`.intervals` — which row each version of an act shows (pure);
* :mod:`.catalog` / :mod:`.visibility` — acts and versions of a generation; filters as clauses;
* :mod:`.search` — scopes, the bm25 / knn / gAIus legs, fusion, reranker, section fusion; bodies
  and hit parsing in :mod:`.queries`;
* :mod:`.documents` — chunk rows → documents, analysed as the embedded backend analyses them;
* :mod:`.gaius` — the client-side scorers per scope, from one scan;
* :mod:`.settings` / :mod:`.errors` — ``LEXPIPE_ES_*`` settings and the client; errors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from elasticsearch import Elasticsearch

from pipelines.retrieval.backend_common import BuildReport
from pipelines.retrieval.elasticsearch.catalog import ActEntry, CatalogCache
from pipelines.retrieval.elasticsearch.lifecycle import IndexLifecycle
from pipelines.retrieval.elasticsearch.names import NAME_PART_RE, IndexNames
from pipelines.retrieval.elasticsearch.queries import AnalyzeQuery, EncodeQuery
from pipelines.retrieval.elasticsearch.search import IndexSearch
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings, client_for
from pipelines.retrieval.elasticsearch.writer import CommitReport, ElasticsearchIndexWriter
from pipelines.retrieval.fusion import HybridConfig
from pipelines.retrieval.interface import Hit, SearchError, SearchRequest, collapse_to_articles

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from pipelines.retrieval.backend_common import TextAnalyzer
    from pipelines.retrieval.reranker import LinearReranker
    from pipelines.retrieval.section_fusion import SectionFusion

QUERY_SIDE = ("encode_query", "analyze_query", "analyzer", "hybrid", "reranker", "section_fusion", "encoder_id")


def language_of_corpus(corpus: str) -> str:
    """``pl`` for ``pl``, ``pl:kc`` or ``de:cases``'s ``de``: a backend serves a language."""
    lang = corpus.split(":", 1)[0].lower()
    if not NAME_PART_RE.match(lang):
        raise ValueError(f"language {corpus!r}: use a language code such as 'pl' or an act id such as 'pl:kc'")
    return lang


@dataclass(frozen=True)
class Snapshot:
    """What one generation of each collection holds (the embedded engine's ``Snapshot`` view)."""
    entries: dict[str, ActEntry]
    generations: dict[str, int]  # collection -> generation read

    def acts(self) -> list[str]:
        return sorted(self.entries)

    def versions(self, act_id: str) -> list[str]:
        e = self.entries.get(act_id)
        return list(e.versions) if e else []

    def serving_version(self, act_id: str) -> str | None:
        e = self.entries.get(act_id)
        return e.newest if e else None


class _Collection:
    def __init__(self, backend: "ElasticsearchBackend", collection: str):
        b = backend
        self.names = IndexNames(b.settings.index_prefix, collection, b.lang)
        self.lifecycle = IndexLifecycle(b.client, self.names, b.settings, encoder_id=b._query["encoder_id"])
        self.catalogs = CatalogCache(b.client, page_size=b.settings.scan_page_size, keep_alive=b.settings.scan_keep_alive)
        self.searcher = IndexSearch(b.client, self.names, b.settings, catalogs=self.catalogs, **{
            k: v for k, v in b._query.items() if k != "analyze_query" or v is not None})


def _query_side(name: str, doc: str) -> property:
    """A backend attribute the searchers of both collections share (set on the backend, seen by both)."""
    def get(self):
        return self._query[name] if name != "analyze_query" else self.collection("statutes").searcher.analyze_query

    def set_(self, value):
        self._query[name] = value
        for c in self._collections.values():
            setattr(c.searcher, name, value)
            if name == "encoder_id":
                c.lifecycle.encoder_id = value
            if name == "analyzer" and self._query["analyze_query"] is None:
                from pipelines.retrieval.elasticsearch.queries import analyze_query_from
                c.searcher.analyze_query = analyze_query_from(value) if value is not None else None

    return property(get, set_, doc=doc)


class ElasticsearchBackend:
    """Publishes a language's act versions to Elasticsearch and answers :class:`SearchRequest`s like
    ``EmbeddedBackend`` does (same retrievers, same fusion, article-level hits).

    ``language``: ``pl`` / ``de`` — or any act id of the language (``pl:kc``), as the index factories
    pass. ``encode_query(str) -> vector`` is needed for dense/hybrid. ``analyzer`` (the project's
    ``Analyzer``) builds the documents and, unless ``analyze_query`` is given, the analysed query;
    either way it must be the code that produced ``text_analyzed``/``text_bigrams`` at index time.
    ``hybrid`` is the embedded backend's :class:`HybridConfig`; ``reranker`` / ``section_fusion``,
    when given, replace its fusion exactly as on the embedded backend (``index_build`` passes both
    backends the same). ``encoder_id`` is recorded in an index that receives vectors and compared
    with an index's record before its vectors are searched.
    """

    act_id = None  # holds every act of its language (SearchService: no per-act backend needed)

    def __init__(self, client: Elasticsearch, language: str, *, settings: ElasticsearchSettings | None = None,
                 encode_query: EncodeQuery | None = None, analyze_query: AnalyzeQuery | None = None,
                 analyzer: "TextAnalyzer | None" = None, hybrid: HybridConfig = HybridConfig(),
                 reranker: "LinearReranker | None" = None, section_fusion: "SectionFusion | None" = None,
                 encoder_id: str | None = None):
        self.settings = settings or ElasticsearchSettings()
        self.lang = language_of_corpus(language)
        if not NAME_PART_RE.match(self.settings.index_prefix):
            raise ValueError(f"index prefix {self.settings.index_prefix!r} is not a valid index name part")
        self.client = client
        self._query: dict[str, Any] = dict(encode_query=encode_query, analyze_query=analyze_query, analyzer=analyzer,
                                           hybrid=hybrid, reranker=reranker, section_fusion=section_fusion,
                                           encoder_id=encoder_id)
        self._collections: dict[str, _Collection] = {}
        IndexNames(self.settings.index_prefix, "statutes", self.lang)  # validates the names now

    @classmethod
    def from_settings(cls, language: str, settings: ElasticsearchSettings | None = None, **kwargs) -> "ElasticsearchBackend":
        s = settings or ElasticsearchSettings()
        return cls(client_for(s), language, settings=s, **kwargs)

    encode_query = _query_side("encode_query", "Query text → vector (dense and hybrid).")
    analyze_query = _query_side("analyze_query", "Query text → (analysed, folded) token strings.")
    analyzer = _query_side("analyzer", "The project analyser of the language.")
    hybrid = _query_side("hybrid", "HybridConfig of the client-side fusion.")
    reranker = _query_side("reranker", "The trained hybrid reranker, or None (fusion by ``hybrid``).")
    section_fusion = _query_side("section_fusion", "The German hybrid's section fusion, or None.")
    encoder_id = _query_side("encoder_id", "Id of the encoder behind ``encode_query`` and the published vectors.")

    # ----------------------------------------------------------------- collections

    def collection(self, name: str) -> _Collection:
        if name not in self._collections:
            self._collections[name] = _Collection(self, name)
        return self._collections[name]

    def collection_of(self, act_id: str) -> str:
        """``cases`` for the language's court-decision collection, ``statutes`` for every other act."""
        from pipelines.retrieval.languages import PROFILES

        if not act_id.startswith(f"{self.lang}:"):
            raise SearchError(f"act {act_id!r} is not a {self.lang!r} act (this backend serves {self.lang}:)")
        lp = PROFILES.get(self.lang)
        return "cases" if lp is not None and act_id == lp.cases_act else "statutes"

    @property
    def searcher(self) -> IndexSearch:
        """The statutes collection's searcher."""
        return self.collection("statutes").searcher

    @property
    def lifecycle(self) -> IndexLifecycle:
        return self.collection("statutes").lifecycle

    def serving_pointer(self, act_id: str | None = None) -> str:
        """The alias a new version of ``act_id`` is switched to serve through
        (``EmbeddedBackend.serving_pointer`` names its pointer file)."""
        return self.collection(self.collection_of(act_id) if act_id else "statutes").names.alias

    # ----------------------------------------------------------------- publications

    def writer(self, collection: str = "statutes", *, rebuild: bool = False) -> ElasticsearchIndexWriter:
        """The one writer of a collection (holds its lease until commit/abort): the calls of the
        embedded engine's ``IndexWriter``; ``rebuild`` writes a new physical index (a full reindex)."""
        c = self.collection(collection)
        return ElasticsearchIndexWriter(c.lifecycle, self._query["analyzer"], rebuild=rebuild,
                                        encoder_id=self._query["encoder_id"])

    def build(self, act_id: str, version: str, chunks: "pa.Table", vectors: "np.ndarray | None") -> BuildReport:
        """One version of one act as a publication of its own (``EmbeddedBackend.build``'s call, so
        ``index_build.index_step`` drives either backend). ``BuildReport.table`` is the physical
        index; the act's rows of other versions are kept (only changed content is written)."""
        if self._query["analyzer"] is None:
            from pipelines.retrieval.elasticsearch.errors import ElasticsearchBackendError

            raise ElasticsearchBackendError("build needs the project analyser (analyzer=...) to fill "
                                            "text_analyzed/text_bigrams the way queries are analysed")
        t0 = time.perf_counter()
        with self.writer(self.collection_of(act_id)) as w:
            w.add_version(act_id, version, chunks, vectors=vectors)
            report = w.commit()
        n_vectors = 0 if vectors is None else sum(v is not None for v in vectors)
        return BuildReport(act_id, str(version), report.index, chunks.num_rows, n_vectors, time.perf_counter() - t0)

    def publish(self, changes, *, collection: str = "statutes") -> CommitReport:
        """``(act_id, version, chunks[, analysed[, vectors]])`` items as ONE publication."""
        with self.writer(collection) as w:
            for item in changes:
                w.add_version(*item)
            return w.commit()

    # ----------------------------------------------------------------- serving

    def snapshot(self) -> Snapshot:
        entries: dict[str, ActEntry] = {}
        gens = {}
        for name in ("statutes", "cases"):
            _index, gen, found = self.collection(name).searcher.catalogue()
            entries.update(found)
            gens[name] = gen
        return Snapshot(entries, gens)

    def acts(self) -> list[str]:
        """Every act with a published version, court-decision collection included (``/health``)."""
        return self.snapshot().acts()

    def versions(self, act_id: str) -> list[str]:
        entry = self.collection(self.collection_of(act_id)).searcher.entries([act_id]).get(act_id)
        return list(entry.versions) if entry else []

    def serving_version(self, act_id: str | None = None) -> str | None:
        """The act's newest published version (None when it has none, or is another language's)."""
        if act_id is None or not act_id.startswith(f"{self.lang}:"):
            return None
        entry = self.collection(self.collection_of(act_id)).searcher.entries([act_id]).get(act_id)
        return entry.newest if entry else None

    # ----------------------------------------------------------------- search

    def search(self, request: SearchRequest) -> list[Hit]:
        """Article-level hits (best chunk per article), ranked 1..k — ``EmbeddedBackend.search``.
        Acts of both collections named at once: each collection searched, merged by score."""
        named = request.filters.act_ids
        by_collection: dict[str, list[str]] = {}
        for a in named:
            by_collection.setdefault(self.collection_of(a), []).append(a)
        if len(by_collection) <= 1:
            name = next(iter(by_collection), "statutes")
            return self.collection(name).searcher.search(request)
        from pipelines.retrieval.cross_act_merge import merge_acts

        per = [self.collection(name).searcher.search(replace(request, filters=replace(request.filters, act_ids=tuple(acts))))
               for name, acts in sorted(by_collection.items())]
        return collapse_to_articles(merge_acts(per, "score"), request.k)
