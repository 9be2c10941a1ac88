"""Names of one corpus' indices and aliases, and what those aliases point at.

Layout (``<p>`` = index prefix, ``<c>`` = corpus key such as ``pl-kc``):

* one physical index per loaded corpus version: ``<p>-<c>-<version>-<suffix>``
  (e.g. ``lexpipe-chunks-pl-kc-2025-11-13-20261122012249123456``);
* serving alias ``<p>-<c>`` → the index consumers search by default (moved atomically);
* history alias ``<p>-<c>-all`` → one index per kept version (``as_of`` / ``version`` searches);
* per-version alias ``<p>-<c>-<version>`` → that version's index.

Both halves of the backend read these names: the lifecycle (:mod:`.lifecycle`) moves the aliases,
a search (:mod:`.search`) resolves them with :func:`read_served` to the physical index it queries.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError

VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NAME_PART_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
SUFFIX_RE = re.compile(r"^[a-z0-9]+$")


def corpus_key(act_id: str) -> str:
    """``pl:kc`` → ``pl-kc`` (lowercase, usable in index and alias names)."""
    key = re.sub(r"[^a-z0-9]+", "-", act_id.lower()).strip("-")
    if not key or not NAME_PART_RE.match(key):
        raise ValueError(f"cannot derive an index name part from {act_id!r}")
    return key


def response_body(resp: Any) -> Any:
    """The decoded body of an ``ApiResponse`` (plain dicts pass through)."""
    return resp.body if hasattr(resp, "body") else resp


def iso(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class IndexNames:
    """The index and alias names of one corpus under one prefix."""

    prefix: str
    corpus: str

    @property
    def base_name(self) -> str:
        return f"{self.prefix}-{self.corpus}"

    @property
    def serving_alias(self) -> str:
        return self.base_name

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

    def owns(self, act_id: str) -> bool:
        """Whether ``act_id`` is this corpus (``pl:kc`` for ``pl-kc``)."""
        try:
            return corpus_key(act_id) == self.corpus
        except ValueError:
            return False


@dataclass(frozen=True)
class Served:
    serving: tuple[str, str] | None  # (version, physical index) behind the serving alias
    versions: dict[str, str]  # version -> physical index (history + version alias)

    @property
    def serving_version(self) -> str | None:
        return self.serving[0] if self.serving else None


def read_served(client: Elasticsearch, names: IndexNames) -> Served:
    """Which physical index serves, and which one holds each version, from ONE request
    (``GET <prefix>-<corpus>-*/_alias``): the serving alias and the per-version aliases that
    ``load_version`` moves atomically. Only version aliases in the history alias count."""
    try:
        resp = client.indices.get_alias(index=names.index_pattern, allow_no_indices=True,
                                        ignore_unavailable=True)
    except NotFoundError:
        return Served(None, {})
    prefix = names.base_name + "-"
    serving: list[str] = []
    versions: dict[str, str] = {}
    for name, info in (response_body(resp) or {}).items():
        aliases = set(((info or {}).get("aliases") or {}).keys())
        if names.serving_alias in aliases:
            serving.append(name)
        if names.history_alias not in aliases:
            continue
        for alias in aliases:
            version = alias[len(prefix):] if alias.startswith(prefix) else ""
            if VERSION_RE.match(version):
                versions[version] = name
    by_index = {index: version for version, index in versions.items()}
    served = [(by_index[n], n) for n in serving if n in by_index]
    return Served(max(served) if served else None, versions)
