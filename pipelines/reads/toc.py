"""An act's table of contents at a date: the hierarchy of the version in force, book down to article.

Built from the version's NODES (structure levels and articles; paragraphs and below are left out:
``children`` of a unit read lists them) in document order, with each article's number as printed
(``number_display``), its own heading where the act prints one (German §§) and its status. The tree
of a version is built once per version file and cached.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pipelines.reads.corpus import STRUCTURE_LEVELS, CorpusReader, VersionIndex
from pipelines.reads.dates import parse_day


@dataclass(frozen=True)
class TocEntry:
    id: str
    level: str
    number: str | None
    number_display: str | None
    heading: str | None  # structure heading, or the article's own title
    status: str | None
    children: list["TocEntry"] = field(default_factory=list)


@dataclass(frozen=True)
class TableOfContents:
    act_id: str
    as_of: str
    version: str
    next_version: str | None
    articles: int
    repealed: int
    entries: list[TocEntry]


def _tree(idx: VersionIndex) -> tuple[list[TocEntry], int, int]:
    wanted = STRUCTURE_LEVELS | {"article"}
    kids = idx.children
    n_articles = n_repealed = 0

    def build(node_id: str) -> TocEntry:
        nonlocal n_articles, n_repealed
        n = idx.nodes[node_id]
        if n.level == "article":
            art = idx.articles.get(node_id) or {}
            n_articles += 1
            status = art.get("status") or n.status
            n_repealed += status == "repealed"
            return TocEntry(n.id, n.level, n.number, art.get("number_display") or n.number, art.get("title"), status)
        return TocEntry(n.id, n.level, n.number, n.number, n.heading, n.status,
                        [build(c) for c in kids.get(node_id, ()) if idx.nodes[c].level in wanted])

    top = [build(c) for c in kids.get(None, ()) if idx.nodes[c].level in wanted]
    return top, n_articles, n_repealed


def toc_at(reader: CorpusReader, act_id: str, as_of: str | dt.date | None = None) -> TableOfContents:
    """The hierarchy of the newest held version on or before ``as_of`` (default today)."""
    reader.act(act_id)
    day = parse_day(as_of)
    version, nxt = reader.version_at(act_id, day)
    idx = reader.index(act_id, version)
    key = reader.table_path(act_id, version, "nodes")
    entries, n_articles, n_repealed = reader.cache.get(key, "toc", lambda _: _tree(idx))
    return TableOfContents(act_id, day.isoformat(), version, nxt, n_articles, n_repealed, entries)
