"""The published corpus as the read layer sees it: acts, held versions, and per-version lookups.

``CorpusReader`` wraps :class:`~pipelines.statutes.store.CorpusStore` (which owns the layout of
``$LEXPIPE_HOME/corpus``) and caches what it reads per file and modification (:mod:`.cache`):
the list of held versions per act folder, manifests, and one :class:`VersionIndex` per version — the
NODES and ARTICLES rows keyed by id — so a warm point-in-time read is a few dictionary lookups.

Held versions are the published ones (a folder with ``manifest.json``); staging folders are never
read. The served version is the one ``current.json`` names (the newest published).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.reads.cache import FileCache
from pipelines.reads.dates import parse_day
from pipelines.reads.errors import NotCovered, NotFound, UnknownAct, UnknownTable, UnknownUnit, UnknownVersion
from pipelines.statutes.store import CorpusStore, version_in_force
from schemas.acts import Act, registry

STRUCTURE_LEVELS = frozenset({"book", "part", "title", "division", "chapter", "section", "subdivision", "subtitle",
                              "subchapter", "group"})
UNIT_LEVELS = ("article", "paragraph", "point", "letter")

_NODE_COLUMNS = ["id", "level", "number", "heading", "text", "parent_id", "ordinal", "status", "page"]
_ARTICLE_COLUMNS = ["id", "ordinal", "number", "number_display", "title", "path", "path_text", "text",
                    "text_pending", "pending_effective_date", "pending_note", "status", "status_note",
                    "page_start", "page_end", "content_hash"]


class Node(NamedTuple):
    id: str
    level: str
    number: str | None
    heading: str | None
    text: str | None
    parent_id: str | None
    ordinal: int
    status: str | None
    page: int | None


@dataclass
class VersionIndex:
    """One published version's units by id: NODES rows (every level) and ARTICLES rows."""

    act_id: str
    version: str
    nodes: dict[str, Node]
    articles: dict[str, dict]
    _children: dict[str | None, list[str]] | None = field(default=None, repr=False)
    _article_ids: tuple[str, ...] | None = field(default=None, repr=False)
    _position: dict[str, int] | None = field(default=None, repr=False)

    def has(self, unit_id: str) -> bool:
        return unit_id in self.nodes or unit_id in self.articles

    def article_of(self, unit_id: str) -> str | None:
        """The id of the article a unit belongs to (itself for an article; None above articles)."""
        node = self.nodes.get(unit_id)
        if node is None:
            return unit_id if unit_id in self.articles else None
        seen = 0
        while node is not None and seen < 32:
            if node.level == "article":
                return node.id
            if node.level in STRUCTURE_LEVELS:
                return None
            node = self.nodes.get(node.parent_id) if node.parent_id else None
            seen += 1
        return None

    def ancestors(self, unit_id: str) -> list[Node]:
        """The nodes above ``unit_id``, from the top level down to its parent."""
        out: list[Node] = []
        node = self.nodes.get(unit_id)
        parent = node.parent_id if node else None
        while parent and len(out) < 32:
            p = self.nodes.get(parent)
            if p is None:
                break
            out.append(p)
            parent = p.parent_id
        return out[::-1]

    @property
    def article_ids(self) -> tuple[str, ...]:
        """The article ids in the act's own order (ARTICLES rows), built once per version."""
        if self._article_ids is None:
            self._article_ids = tuple(self.articles)
        return self._article_ids

    def article_position(self, article_id: str) -> int | None:
        """The article's index in :attr:`article_ids` (None: not an article of this version): neighbours
        and ranges without a scan of the act per request."""
        if self._position is None:
            self._position = {a: i for i, a in enumerate(self.article_ids)}
        return self._position.get(article_id)

    @property
    def children(self) -> dict[str | None, list[str]]:
        """parent id → child ids in document order (None: the top level)."""
        if self._children is None:
            kids: dict[str | None, list[str]] = {}
            for n in sorted(self.nodes.values(), key=lambda n: n.ordinal):
                kids.setdefault(n.parent_id, []).append(n.id)
            self._children = kids
        return self._children


def act_id_of_unit(unit_id: str) -> str:
    """``pl:kc:art:22^1`` → ``pl:kc`` (ids are ``<jurisdiction>:<act>:…``)."""
    parts = unit_id.split(":")
    if len(parts) < 3 or not all(parts[:3]):
        raise UnknownUnit(f"unknown unit {unit_id[:120]!r}: unit ids look like 'pl:kc:art:22^1' or "
                          "'pl:kc:art:415:par:1'")
    return f"{parts[0]}:{parts[1]}"


def _iso(value) -> str | None:
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


class CorpusReader:
    """Cached, read-only access to the published versions under ``layout.home``."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.store = CorpusStore(layout)
        self.cache = FileCache()

    @classmethod
    def at(cls, home: Path | str) -> "CorpusReader":
        return cls(Layout(Path(home)))

    # -- acts and versions ----------------------------------------------------------------------
    def act(self, act_id: str) -> Act:
        reg = registry()
        if act_id not in reg:
            raise UnknownAct(f"unknown act {act_id[:80]!r}; known acts: {', '.join(reg.ids())}")
        return reg.get(act_id)

    def versions(self, act_id: str) -> tuple[str, ...]:
        """Held (published) versions of an act, oldest first; () when none is."""
        self.act(act_id)
        d = self.layout.act_dir(act_id)
        if not d.is_dir():
            return ()
        return self.cache.get(d, "versions", lambda _: tuple(self.store.published_versions(act_id)))

    def held_versions(self, act_id: str) -> tuple[str, ...]:
        """Like :meth:`versions`, but NotFound when the act has no published version."""
        versions = self.versions(act_id)
        if not versions:
            raise NotFound(f"no published version of {act_id} under {self.layout.act_dir(act_id)} "
                           "(run `lexpipe run` first)")
        return versions

    def served_version(self, act_id: str) -> str | None:
        p = self.layout.current_file(act_id)
        try:
            return self.cache.get(p, "current", lambda q: json.loads(q.read_text())["version"])
        except FileNotFoundError:
            return None

    def require_version(self, act_id: str, version: str, name: str = "version") -> str:
        """``version`` if held; BadDate when it is no date, UnknownVersion when it is not held."""
        parse_day(version, name)
        versions = self.held_versions(act_id)
        if version not in versions:
            raise UnknownVersion(f"{act_id} has no published version {version}; held: {', '.join(versions)}")
        return version

    def version_at(self, act_id: str, day: dt.date) -> tuple[str, str | None]:
        """The newest held version on or before ``day`` and the next held version (None: newest).

        NotCovered when ``day`` is before the oldest held version: what was in force then is unknown."""
        versions = self.held_versions(act_id)
        i = version_in_force(versions, day.isoformat())
        if i < 0:
            raise NotCovered(f"{day.isoformat()} is before the oldest held version of {act_id} ({versions[0]}); "
                             f"held versions: {', '.join(versions)}")
        return versions[i], (versions[i + 1] if i + 1 < len(versions) else None)

    def version_dir(self, act_id: str, version: str) -> Path:
        return self.layout.version_dir(act_id, version)

    def manifest(self, act_id: str, version: str) -> dict:
        p = self.version_dir(act_id, version) / "manifest.json"
        try:
            return self.cache.get(p, "json", lambda q: json.loads(q.read_text()))
        except FileNotFoundError:
            return {}

    def json_file(self, act_id: str, version: str, name: str) -> dict:
        p = self.version_dir(act_id, version) / name
        try:
            return self.cache.get(p, "json", lambda q: json.loads(q.read_text()))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def act_row(self, act_id: str, version: str) -> dict:
        """The version's ``acts.parquet`` row (title, ELI, based-on, source); {} when absent."""
        p = self.version_dir(act_id, version) / "acts.parquet"
        try:
            rows = self.cache.get(p, "rows", lambda q: pq.read_table(q).to_pylist())
        except FileNotFoundError:
            return {}
        return {k: _iso(v) for k, v in rows[0].items()} if rows else {}

    # -- per-version tables ---------------------------------------------------------------------
    def table_path(self, act_id: str, version: str, name: str) -> Path:
        p = self.version_dir(act_id, version) / f"{name}.parquet"
        if not p.is_file():
            raise UnknownTable(f"{act_id} version {version} has no {name}.parquet")
        return p

    def diff_names(self, act_id: str, version: str) -> list[str]:
        """``diff_from_<v>`` tables published with a version (the first version has none)."""
        d = self.version_dir(act_id, version)
        return sorted(p.stem for p in d.glob("diff_from_*.parquet"))

    def stored_diff(self, act_id: str, from_version: str, to_version: str):
        """The published DIFF table ``to_version/diff_from_<from_version>.parquet``, or None."""
        p = self.version_dir(act_id, to_version) / f"diff_from_{from_version}.parquet"
        try:
            return self.cache.get(p, "table", pq.read_table)
        except FileNotFoundError:
            return None

    def articles_table(self, act_id: str, version: str):
        return self.cache.get(self.table_path(act_id, version, "articles"), "table", pq.read_table)

    def index(self, act_id: str, version: str) -> VersionIndex:
        """The version's units by id (cached until its articles or nodes file changes)."""
        nodes_p = self.table_path(act_id, version, "nodes")
        articles_p = self.table_path(act_id, version, "articles")

        def load() -> VersionIndex:
            nodes = pq.read_table(nodes_p, columns=_NODE_COLUMNS).to_pylist()
            have = set(pq.read_schema(articles_p).names)
            articles = pq.read_table(articles_p, columns=[c for c in _ARTICLE_COLUMNS if c in have]).to_pylist()
            return VersionIndex(act_id, version, {r["id"]: Node(**r) for r in nodes},
                                {r["id"]: r for r in articles})

        return self.cache.get_many((nodes_p, articles_p), "index", load)
