"""The physical indices of one language index, its alias, the publication lease and cleanup.

Layout: :mod:`.names` (``<prefix>-<collection>-<lang>`` alias with a generation filter over one
physical index ``…-<n>``). What this module does to them, each step one request or one
server-side job:

* :meth:`IndexLifecycle.ensure` — the first physical index (``…-1``: mapping from
  ``schemas.elasticsearch``, primaries from the expected size) and the alias at generation 0;
* :meth:`acquire` / :meth:`heartbeat` / :meth:`release` — one writer at a time: a lease document
  (``doc_kind = lock``) created with ``op_type=create``; a lease not renewed for ``lock_ttl_s``
  (its writer was killed) is taken over with a compare-and-set delete;
* :meth:`discard_staged` — what a killed writer left: documents of a generation that was never
  published are deleted (``delete_by_query gen_from > G``), documents it had retired get
  ``gen_to`` back (``update_by_query``);
* :meth:`swap` — ONE ``POST /_aliases``: the alias's filter to generation G+1 (and, after a
  rebuild, from the old physical index to the new one);
* :meth:`cleanup` — ``delete_by_query gen_to <= G − keep_generations``: documents no generation a
  reader may still hold can see;
* :meth:`migrate` — a mapping change: a new physical index, ``_reindex`` server-side, the alias
  moved in one call, the old index deleted.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from elasticsearch import ApiError, ConflictError, Elasticsearch, NotFoundError

from pipelines.retrieval.elasticsearch.errors import ElasticsearchBackendError, IndexLocked
from pipelines.retrieval.elasticsearch.names import (
    IndexNames, Served, generation_filter, read_served, response_body,
)
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings
from pipelines.retrieval.elasticsearch.visibility import OPEN_GEN
from pipelines.retrieval.languages import PROFILES
from schemas import elasticsearch as es_schema

log = logging.getLogger(__name__)

LOCK_ID = "lexpipe-publication-lock"


@dataclass
class Lease:
    index: str
    owner: str
    seq_no: int
    primary_term: int
    renewed: float  # time.monotonic() of the last renewal


class IndexLifecycle:
    """Creates, locks, swaps, cleans and migrates the physical indices of one language index."""

    def __init__(self, client: Elasticsearch, names: IndexNames, settings: ElasticsearchSettings, *,
                 encoder_id: str | None = None):
        self.client = client
        self.names = names
        self.settings = settings
        self.encoder_id = encoder_id  # recorded in the mapping's _meta of an index it creates
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
        return self.has_plugin(es_schema.STEMPEL_PLUGIN)

    def text_analysis(self) -> tuple[str, bool, str | None]:
        """(language, stempel installed, analyser of ``text``/``heading_path``) of the index body:
        the language profile's analyser when the cluster has the plugin it needs (only then is the
        cluster asked), else the plain one; a language without a profile gets the built-in table."""
        lang = self.names.lang
        lp = PROFILES.get(lang)
        if lp is None:
            return lang, False, None
        has_plugin = self.has_plugin(lp.es_analyzer_plugin) if lp.es_analyzer_plugin else False
        has_stempel = has_plugin and lp.es_analyzer_plugin == es_schema.STEMPEL_PLUGIN
        return lang, has_stempel, lp.es_text_analyzer(has_plugin)

    def shards(self, expected_docs: int | None = None) -> int:
        """Primaries of a new physical index: ``LEXPIPE_ES_NUMBER_OF_SHARDS`` when set, else from the
        expected size (``schemas.elasticsearch.primary_shards``)."""
        if self.settings.number_of_shards is not None:
            return self.settings.number_of_shards
        docs = max(expected_docs or 0, self.settings.expected_docs)
        return es_schema.primary_shards(docs, target_shard_bytes=int(self.settings.target_shard_gb * 10**9))

    def index_body(self, expected_docs: int | None = None) -> dict[str, Any]:
        lang, has_stempel, text_analyzer = self.text_analysis()
        meta: dict[str, Any] = {"collection": self.names.collection, "language": self.names.lang}
        if self.encoder_id:
            meta["encoder"] = self.encoder_id
        return es_schema.index_body(self.settings.vector_dims, has_stempel, lang, text_analyzer=text_analyzer,
                                    shards=self.shards(expected_docs), replicas=self.settings.number_of_replicas,
                                    meta=meta)

    def put_index_template(self) -> None:
        """Optional: install the same layout as a composable template for ``<alias>-*``."""
        lang, has_stempel, text_analyzer = self.text_analysis()
        body = es_schema.index_template_body([self.names.pattern], self.settings.vector_dims, has_stempel,
                                             lang, text_analyzer=text_analyzer, shards=self.shards(),
                                             replicas=self.settings.number_of_replicas)
        self.client.indices.put_index_template(name=self.names.alias, **body)

    # ----------------------------------------------------------------- inventory

    def served(self) -> Served:
        return read_served(self.client, self.names)

    def physical_indices(self) -> dict[str, dict[str, Any]]:
        """This language index's physical indices (``…-<n>``) with their mapping ``_meta.lexpipe``."""
        try:
            resp = self.client.indices.get(index=self.names.pattern, allow_no_indices=True, ignore_unavailable=True)
        except NotFoundError:
            return {}
        out = {}
        for name, info in (response_body(resp) or {}).items():
            if self.names.number_of(name) is None:
                continue  # another language index sharing the prefix ("…-de-x-1"), never touched
            out[name] = ((info.get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}
        return out

    def meta(self, index: str) -> dict[str, Any]:
        info = response_body(self.client.indices.get(index=index)) or {}
        return (((info.get(index) or {}).get("mappings") or {}).get("_meta") or {}).get("lexpipe") or {}

    def create_physical(self, expected_docs: int | None = None) -> str:
        """A new physical index numbered after every existing one (never aliased yet)."""
        existing = [self.names.number_of(n) for n in self.physical_indices()]
        index = self.names.physical(max((n for n in existing if n is not None), default=0) + 1)
        body = self.index_body(expected_docs)
        self.client.indices.create(index=index, settings=body["settings"], mappings=body["mappings"])
        return index

    def ensure(self) -> Served:
        """The served index; on an empty cluster the first physical index and the alias at
        generation 0 (an empty catalogue: every act unknown) are created first."""
        served = self.served()
        if served.index is not None:
            return served
        existing = sorted(self.physical_indices(), key=lambda n: self.names.number_of(n) or 0)
        try:
            index = existing[-1] if existing else self.create_physical()
        except ApiError as exc:  # another writer created it a moment ago
            if "resource_already_exists" not in str(exc):
                raise
            return self.served() if self.served().index else self.ensure()
        served = self.served()
        if served.index is not None:  # another writer aliased it in between
            return served
        self.client.indices.update_aliases(actions=[
            {"add": {"index": index, "alias": self.names.alias, "filter": generation_filter(0)}}])
        return Served(index, 0)

    # ----------------------------------------------------------------- the lease

    def acquire(self, index: str) -> Lease:
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        for attempt in (1, 2):
            try:
                resp = response_body(self.client.create(
                    index=index, id=LOCK_ID, refresh=True,
                    document={"doc_kind": "lock", "lock_owner": owner, "locked_at": int(time.time() * 1000)}))
                return Lease(index, owner, int(resp["_seq_no"]), int(resp["_primary_term"]), time.monotonic())
            except ConflictError:
                if attempt == 2:
                    break
                held = response_body(self.client.get(index=index, id=LOCK_ID))
                age = time.time() - int((held.get("_source") or {}).get("locked_at") or 0) / 1000
                holder = (held.get("_source") or {}).get("lock_owner", "?")
                if age < self.settings.lock_ttl_s:
                    raise IndexLocked(f"{self.names.alias}: another publication holds the index ({holder}, "
                                      f"renewed {age:.0f} s ago; taken over after {self.settings.lock_ttl_s:.0f} s)")
                log.warning("%s: taking over the lease of %s, not renewed for %.0f s", self.names.alias, holder, age)
                try:
                    self.client.delete(index=index, id=LOCK_ID, if_seq_no=held["_seq_no"],
                                       if_primary_term=held["_primary_term"], refresh=True)
                except (ConflictError, NotFoundError):
                    pass  # someone else took or released it in between: try to create once more
        raise IndexLocked(f"{self.names.alias}: another publication took the index first")

    def heartbeat(self, lease: Lease, force: bool = False) -> None:
        """Renew the lease (at most every ``lock_ttl_s / 4``); a lease another writer has taken
        over is an error: this publication must stop before it writes more."""
        if not force and time.monotonic() - lease.renewed < self.settings.lock_ttl_s / 4:
            return
        try:
            resp = response_body(self.client.index(
                index=lease.index, id=LOCK_ID, if_seq_no=lease.seq_no, if_primary_term=lease.primary_term,
                document={"doc_kind": "lock", "lock_owner": lease.owner, "locked_at": int(time.time() * 1000)}))
        except (ConflictError, NotFoundError) as exc:
            raise IndexLocked(f"{self.names.alias}: the publication lease of {lease.owner} was taken over") from exc
        lease.seq_no, lease.primary_term, lease.renewed = int(resp["_seq_no"]), int(resp["_primary_term"]), time.monotonic()

    def release(self, lease: Lease) -> None:
        try:
            self.client.delete(index=lease.index, id=LOCK_ID, if_seq_no=lease.seq_no,
                               if_primary_term=lease.primary_term, refresh=True)
        except (ConflictError, NotFoundError):
            log.warning("%s: the lease of %s was gone at release", self.names.alias, lease.owner)

    # ----------------------------------------------------------------- staging, swap, cleanup

    def set_refresh_interval(self, index: str, value: str) -> None:
        self.client.indices.put_settings(index=index, settings={"index": {"refresh_interval": value}})

    def discard_staged(self, index: str, generation: int) -> dict[str, int]:
        """Undo what an unpublished generation (> ``generation``) left in ``index``: its documents
        are deleted, the documents it retired are live again. Refreshes first: a killed writer may
        have switched refreshes off."""
        self.client.indices.refresh(index=index)
        deleted = response_body(self.client.delete_by_query(
            index=index, conflicts="proceed", refresh=True, wait_for_completion=True,
            query={"range": {"gen_from": {"gt": generation}}}))
        restored = response_body(self.client.update_by_query(
            index=index, conflicts="proceed", refresh=True, wait_for_completion=True,
            query={"bool": {"filter": [{"range": {"gen_to": {"gt": generation, "lt": OPEN_GEN}}}]}},
            script={"source": "ctx._source.gen_to = params.open", "lang": "painless", "params": {"open": OPEN_GEN}}))
        out = {"deleted": int(deleted.get("deleted") or 0), "restored": int(restored.get("updated") or 0)}
        if out["deleted"] or out["restored"]:
            log.warning("%s: discarded an unpublished generation: %s", index, out)
        return out

    def swap(self, index: str, generation: int, previous: str | None) -> list[dict[str, Any]]:
        """Point the alias at ``index`` with generation ``generation``'s filter, in ONE
        ``POST /_aliases`` (removing it from ``previous``, the index it served until now)."""
        actions: list[dict[str, Any]] = []
        if previous is not None:
            actions.append({"remove": {"index": previous, "alias": self.names.alias}})
        actions.append({"add": {"index": index, "alias": self.names.alias, "filter": generation_filter(generation)}})
        try:
            self.client.indices.update_aliases(actions=actions)
        except ApiError:
            raise
        except Exception:
            # a timeout may hide a swap that did happen: the caller must not discard what serves
            served = self.served()
            if served.index == index and served.generation == generation:
                return actions
            raise
        return actions

    def cleanup(self, index: str, generation: int) -> int:
        """Delete what no generation from ``generation − keep_generations + 1`` on can see."""
        horizon = generation - self.settings.keep_generations
        if horizon < 1:
            return 0
        resp = response_body(self.client.delete_by_query(
            index=index, conflicts="proceed", wait_for_completion=True,
            query={"range": {"gen_to": {"lte": horizon}}}))
        return int(resp.get("deleted") or 0)

    def drop_others(self, keep: str) -> list[str]:
        """Delete this language index's physical indices other than ``keep`` (after a rebuild)."""
        doomed = sorted(n for n in self.physical_indices() if n != keep)
        if doomed:
            self.client.indices.delete(index=doomed, ignore_unavailable=True)
        return doomed

    def migrate(self) -> str | None:
        """A mapping change (``schema_version`` of the served index older than the code's): a new
        physical index with the current mapping, every document copied server-side (``_reindex``;
        vectors are rehydrated from the old index), the alias moved in one call, the old index
        deleted. None when the served index is current. Run under the lease."""
        served = self.served()
        if served.index is None:
            return None
        version = int(self.meta(served.index).get("schema_version") or 0)
        if version == es_schema.SCHEMA_VERSION:
            return None
        if version < 3:
            raise ElasticsearchBackendError(
                f"{served.index} has schema version {version}: documents of the index-per-act layout cannot be "
                "copied into a language index; rebuild it (a publication with rebuild=True)")
        count = int(response_body(self.client.count(index=served.index))["count"])
        new = self.create_physical(expected_docs=count)
        self.client.reindex(source={"index": served.index,
                                    "query": {"bool": {"must_not": [{"term": {"doc_kind": "lock"}}]}}},
                            dest={"index": new}, wait_for_completion=True, refresh=True)
        self.swap(new, served.generation, served.index)
        self.client.indices.delete(index=served.index, ignore_unavailable=True)
        return new
