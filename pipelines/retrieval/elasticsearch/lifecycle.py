"""The lifecycle of one corpus' indices: a physical index per loaded version, behind aliases.

Layout: see :mod:`.names` (physical index per version, serving / history / per-version aliases).

``load_version`` creates the index from ``schemas.elasticsearch.index_body``, bulk-loads with
``helpers.streaming_bulk`` (bounded chunks, 429s retried with exponential backoff), refreshes,
checks ``_count``, moves every alias in ONE ``POST /_aliases`` and finally deletes indices of
versions beyond the newest ``keep_versions``. Any failure before the alias switch deletes the
new index and leaves every alias as it was.

The id of the encoder whose vectors a load carries is recorded in the index's
``mappings._meta.lexpipe.encoder``; searches compare it with their own encoder
(:meth:`.search.IndexSearch._check_encoder`).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from elasticsearch import ApiError, Elasticsearch, NotFoundError
from elasticsearch.helpers import streaming_bulk

from pipelines.retrieval.elasticsearch.errors import BulkLoadError, ElasticsearchBackendError, IndexLoadError
from pipelines.retrieval.elasticsearch.names import SUFFIX_RE, VERSION_RE, IndexNames, iso, response_body
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.languages import PROFILES
from schemas import elasticsearch as es_schema

log = logging.getLogger(__name__)

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



@dataclass
class IndexInfo:
    name: str
    version: str
    created: int
    aliases: set[str]



class IndexLifecycle:
    """Creates, loads, promotes and retires the physical indices of one corpus (``names``)."""

    def __init__(self, client: Elasticsearch, names: IndexNames, settings: ElasticsearchSettings, *,
                 encoder_id: str | None = None):
        self.client = client
        self.names = names
        self.settings = settings
        # id of the encoder whose vectors are loaded: recorded in each index it creates (mappings._meta)
        self.encoder_id = encoder_id
        # plugin name -> installed on every node; LEXPIPE_ES_HAS_STEMPEL answers for stempel unasked
        self._plugins: dict[str, bool] = (
            {} if settings.has_stempel is None else {es_schema.STEMPEL_PLUGIN: settings.has_stempel})

    # ----------------------------------------------------------------- schema

    def has_plugin(self, name: str) -> bool:
        """True when every node lists the plugin ``name`` (``GET _nodes/plugins``, asked once)."""
        if name not in self._plugins:
            resp = self.client.nodes.info(metric="plugins")
            nodes = response_body(resp).get("nodes") or {}
            self._plugins[name] = bool(nodes) and all(
                any(p.get("name") == name for p in (n.get("plugins") or []))
                for n in nodes.values())
        return self._plugins[name]

    def detect_stempel(self) -> bool:
        """True when every node lists the analysis-stempel plugin (``GET _nodes/plugins``)."""
        return self.has_plugin(es_schema.STEMPEL_PLUGIN)

    def text_analysis(self) -> tuple[str, bool, str | None]:
        """(language, stempel installed, analyser of ``text``/``heading_path``) of the index body.

        The analyser is the language profile's (``LanguageProfile.es_analyzer``) when the cluster
        has the plugin it needs — only then is the cluster asked (Polish: stempel) — else the plain
        one. A language without a profile gets ``schemas.elasticsearch``'s built-in table (None)."""
        lang = self.settings.language
        lp = PROFILES.get(lang.lower())
        if lp is None:
            return lang, False, None
        has_plugin = self.has_plugin(lp.es_analyzer_plugin) if lp.es_analyzer_plugin else False
        has_stempel = has_plugin and lp.es_analyzer_plugin == es_schema.STEMPEL_PLUGIN
        return lang, has_stempel, lp.es_text_analyzer(has_plugin)

    def index_body(self, version: str | None = None) -> dict[str, Any]:
        lang, has_stempel, text_analyzer = self.text_analysis()
        meta: dict[str, Any] = {"corpus": self.names.corpus}
        if version is not None:
            meta["version"] = version
        if self.encoder_id:
            meta["encoder"] = self.encoder_id
        return es_schema.index_body(self.settings.vector_dims, has_stempel, lang, text_analyzer=text_analyzer,
                                    shards=self.settings.number_of_shards,
                                    replicas=self.settings.number_of_replicas, meta=meta)

    def put_index_template(self) -> None:
        """Optional: install the same layout as a composable template for ``<prefix>-<corpus>-*``."""
        lang, has_stempel, text_analyzer = self.text_analysis()
        body = es_schema.index_template_body([self.names.index_pattern], self.settings.vector_dims, has_stempel,
                                             lang, text_analyzer=text_analyzer,
                                             shards=self.settings.number_of_shards,
                                             replicas=self.settings.number_of_replicas)
        self.client.indices.put_index_template(name=self.names.base_name, **body)

    # ----------------------------------------------------------------- inventory

    def list_indices(self) -> dict[str, IndexInfo]:
        """Concrete indices of this corpus with version, creation time and aliases."""
        try:
            resp = self.client.indices.get(index=self.names.index_pattern, allow_no_indices=True,
                                           ignore_unavailable=True)
        except NotFoundError:
            return {}
        out: dict[str, IndexInfo] = {}
        for name, info in (response_body(resp) or {}).items():
            meta = ((info.get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
            version = meta.get("version")
            # Only indices this backend created (recorded in _meta) are ever aliased or deleted;
            # the wildcard may also match e.g. another corpus "pl-kc-x".
            if meta.get("corpus") != self.names.corpus or not isinstance(version, str) or not VERSION_RE.match(version):
                continue
            created = int(((info.get("settings") or {}).get("index") or {}).get("creation_date") or 0)
            out[name] = IndexInfo(name, version, created, set((info.get("aliases") or {}).keys()))
        return out

    def versions(self) -> list[str]:
        """Versions reachable through the history alias, oldest first."""
        return sorted({i.version for i in self.list_indices().values() if self.names.history_alias in i.aliases})

    # ----------------------------------------------------------------- load

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
        doc_version = iso(doc["version"])
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
        version = iso(version)
        if not VERSION_RE.match(version):
            raise ValueError(f"version must be YYYY-MM-DD, got {version!r}")
        suffix = suffix or dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d%H%M%S%f")
        if not SUFFIX_RE.match(suffix):
            raise ValueError(f"index suffix {suffix!r}: use lowercase letters and digits")
        index = self.names.index_name(version, suffix)
        body = self.index_body(version)

        existing = self.list_indices()
        if index in existing:
            raise ElasticsearchBackendError(f"index {index} already exists; use another suffix")
        serving_now = [i for i in existing.values() if self.names.serving_alias in i.aliases]
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
            count = int(response_body(self.client.count(index=index))["count"])
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

        result = LoadResult(index=index, version=version, count=count, serving_alias=self.names.serving_alias,
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

    def _alias_actions(self, index: str, version: str, promote: bool, serving_now: list[IndexInfo],
                       same_version: list[IndexInfo]) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = []
        if promote:
            for old in serving_now:
                actions.append({"remove": {"index": old.name, "alias": self.names.serving_alias}})
        # Only one index per version in the history: a reload supersedes the previous one.
        for old in same_version:
            for alias in (self.names.history_alias, self.names.version_alias(version)):
                if alias in old.aliases:
                    actions.append({"remove": {"index": old.name, "alias": alias}})
        if promote:
            actions.append({"add": {"index": index, "alias": self.names.serving_alias}})
        actions.append({"add": {"index": index, "alias": self.names.history_alias}})
        actions.append({"add": {"index": index, "alias": self.names.version_alias(version)}})
        return actions

    def _switch_aliases(self, actions: list[dict[str, Any]], index: str) -> None:
        try:
            self.client.indices.update_aliases(actions=actions)
        except ApiError:
            raise
        except Exception:
            # A timeout may hide a switch that did happen: never delete an index that serves.
            try:
                if self.client.indices.exists_alias(name=self.names.history_alias, index=index):
                    return
            except Exception:
                pass
            raise

    def _discard(self, index: str) -> None:
        try:
            self.client.indices.delete(index=index, ignore_unavailable=True)
        except Exception as exc:  # report, but keep the original error
            log.error("could not delete half-built index %s: %s", index, exc)

    def _cleanup(self, existing: dict[str, IndexInfo], new_index: str, version: str, promote: bool,
                 serving_now: list[IndexInfo], result: LoadResult) -> None:
        """Delete superseded reloads, orphans (indices in no alias, e.g. left by a crashed run) and
        indices of versions beyond the newest ``keep_versions``. Loads of one corpus must run one
        at a time: an index another loader is still filling counts as an orphan."""
        latest: dict[str, str] = {version: new_index}
        in_history = [i for i in existing.values() if self.names.history_alias in i.aliases and i.version != version]
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
