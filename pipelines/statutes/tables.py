"""NODES rows of a statute of any jurisdiction: the one document-order walk every parser's tables use.

Why shared: the Polish (:mod:`pipelines.statutes.pl.tables`) and German
(:mod:`pipelines.statutes.de.tables`) NODES tables are the same walk over the same
:class:`~pipelines.statutes.model.Node` hierarchy — each structure node before the first article it
precedes (``articles_before``), then the article, then its units (paragraph → point → letter) —
and differ only in what an article row carries as ``heading`` (the German § title; none in Polish).
One walk keeps the two orders (and ``ordinal``) from drifting apart.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable, NamedTuple, Sequence

import pyarrow as pa

from pipelines.statutes.model import Node
from schemas.arrow import NODES, from_rows


class ArticleNodes(NamedTuple):
    """An article as NODES sees it: its own row and its units (document order)."""
    id: str
    number: str
    heading: str | None  # the German § title; None for Polish articles
    text: str
    parent_id: str | None  # the innermost structure node, None for an article outside any
    status: str
    page: int | None  # the article's first page; its units' page too
    units: Sequence[Node]


def node_rows(act_id: str, version: dt.date, structure: Iterable[Node],
              articles: Iterable[ArticleNodes]) -> list[dict]:
    """Every unit, book → letter, in document order: each structure node before the first article it
    precedes (``articles_before``; those after the last article at the end), then the article and
    its units. A structure node's page 0 (unknown, e.g. Markdown) is written as null."""
    rows: list[dict] = []

    def add(node_id, level, number, heading, text, parent_id, status, page) -> None:
        rows.append({"id": node_id, "act_id": act_id, "version": version, "level": level, "number": number,
                     "heading": heading, "text": text, "parent_id": parent_id, "ordinal": len(rows),
                     "status": status, "page": page})

    structure = iter(structure)
    nxt = next(structure, None)
    for i, a in enumerate([*articles, None]):
        while nxt is not None and (a is None or nxt.articles_before <= i):
            add(nxt.id, nxt.level, nxt.number, nxt.heading, None, nxt.parent_id, nxt.status, nxt.page or None)
            nxt = next(structure, None)
        if a is None:
            break
        add(a.id, "article", a.number, a.heading, a.text, a.parent_id, a.status, a.page)
        for u in a.units:
            add(u.id, u.level, u.number, None, u.text, u.parent_id, u.status, a.page)
    return rows


def nodes_table(act_id: str, version: dt.date, structure: Iterable[Node], articles: Iterable[ArticleNodes]) -> pa.Table:
    """:func:`node_rows` as a ``schemas.arrow.NODES`` table."""
    return from_rows(node_rows(act_id, version, structure, articles), NODES)
