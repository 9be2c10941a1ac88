"""GermanStatute → Arrow tables (ARTICLES / NODES / ACTS of ``schemas.arrow``), for both German parsers.

Why a module of its own: the parsers (:mod:`~pipelines.statutes.de.markdown`,
:mod:`~pipelines.statutes.de.pdf`) parse, this writes tables, as :mod:`pipelines.statutes.pl.tables`
does for Polish statutes; NODES rows come from the walk both jurisdictions share
(:func:`pipelines.statutes.tables.nodes_table`). The § title ("Teilkündigung des Vermieters") is
ARTICLES ``title``, the last element of ``path_text`` and the ``heading`` of the article node in NODES.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pyarrow as pa

from pipelines.statutes.de.markdown import PARSER_VERSION
from pipelines.statutes.de.model import DeNode, GermanStatute, Section
from pipelines.statutes.tables import ArticleNodes, nodes_table as statute_nodes_table
from schemas.arrow import ACTS, ARTICLES, from_rows


def structure_label(n: DeNode) -> str:
    return f"{n.label} {n.heading}".strip()


def section_label(s: Section) -> str:
    return f"{s.label} {s.title}".strip()


def articles_table(st: GermanStatute) -> pa.Table:
    rows = []
    for i, s in enumerate(st.sections):
        rows.append({
            "id": s.id, "act_id": st.act.act_id, "version": st.version, "ordinal": i,
            "number": s.number, "number_display": s.label, "title": s.title or None,
            # the parser's order key (Markdown: the printed number, see markdown.order_keys), else
            # the number; front matter (GG Eingangsformel, Präambel) by position before Art. 1 (1000)
            "sort_key": s.order_key if s.order_key is not None else
            (s.sort_key if s.sort_key is not None or s.kind != "preamble" else i),
            "path": [{"level": n.level, "number": n.number, "heading": n.heading, "id": n.id} for n in s.path],
            "path_text": " › ".join([structure_label(n) for n in s.path] + [section_label(s)]),
            "text": s.text, "text_pending": None, "pending_effective_date": None, "pending_note": None,
            "paragraphs": [{"id": p.id, "number": p.number, "text": p.text, "status": p.status} for p in s.paragraphs],
            "status": s.status, "status_note": s.status_note or None,
            "page_start": s.page_start, "page_end": s.page_end, "footnotes": s.footnotes,
            "content_hash": s.content_hash,
        })
    return from_rows(rows, ARTICLES)


def nodes_table(st: GermanStatute) -> pa.Table:
    """Every unit in document order; article nodes carry the § title in ``heading``."""
    return statute_nodes_table(st.act.act_id, st.version, st.structure, [
        ArticleNodes(s.id, s.number, s.title, s.text, s.path[-1].id if s.path else None, s.status, s.page_start,
                     s.units)
        for s in st.sections])


def acts_table(st: GermanStatute, *, source_sha256: str | None = None, source_url: str | None = None) -> pa.Table:
    if source_sha256 is None:
        source_sha256 = hashlib.sha256(Path(st.source).read_bytes()).hexdigest()
    return from_rows([{
        "act_id": st.act.act_id, "jurisdiction": "de", "eli": None, "title": st.title or st.act.title,
        "short_name": st.act.abbreviation, "version": st.version, "based_on": st.based_on or None,
        "source_url": source_url, "source_sha256": source_sha256, "pages": st.pages,
        "article_count": len(st.sections), "parser_version": PARSER_VERSION,
        "parsed_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
    }], ACTS)
