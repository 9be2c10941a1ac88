"""ParsedStatute → Arrow tables (acts, articles, nodes) conforming to ``schemas.arrow``."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from pipelines.pdf_lines import display_number
from pipelines.statutes.pl.parser import PARSER_VERSION, ParsedStatute
from pipelines.statutes.tables import ArticleNodes, nodes_table as statute_nodes_table
from schemas.arrow import ACTS, ARTICLES, from_rows

LEVEL_LABEL = {"book": "KSIĘGA", "part": "CZĘŚĆ", "title": "TYTUŁ", "division": "DZIAŁ",
               "chapter": "Rozdział", "section": "Oddział"}


def _path_text(path) -> str:
    """``KSIĘGA PIERWSZA CZĘŚĆ OGÓLNA › TYTUŁ I Przepisy wstępne``; a named unit whose heading is its
    printed label (k.k. ``CZĘŚĆ OGÓLNA``) is printed once."""
    def one(n) -> str:
        label = f"{LEVEL_LABEL[n.level]} {display_number(n.number)}"
        return label if n.heading == label else f"{label} {n.heading}".strip()
    return " › ".join(one(n) for n in path)


def articles_table(ps: ParsedStatute) -> pa.Table:
    rows = []
    for i, a in enumerate(ps.articles):
        rows.append({
            "id": a.id, "act_id": ps.spec.act_id, "version": ps.version, "ordinal": i,
            "number": a.number, "number_display": display_number(a.number), "sort_key": a.sort_key,
            "path": [{"level": n.level, "number": n.number, "heading": n.heading, "id": n.id} for n in a.path],
            "path_text": _path_text(a.path), "text": a.text, "text_pending": a.text_pending,
            "pending_effective_date": a.pending_effective_date,
            "pending_note": " | ".join(a.notes) or None,
            "paragraphs": [{"id": p.id, "number": p.number, "text": p.text, "status": p.status} for p in a.paragraphs],
            "status": a.status, "status_note": a.status_note or None,
            "page_start": a.page_start, "page_end": a.page_end,
            "footnotes": [ps.footnotes[r] for r in a.footnote_refs if r in ps.footnotes],
            "content_hash": a.content_hash,
        })
    return from_rows(rows, ARTICLES)


def nodes_table(ps: ParsedStatute) -> pa.Table:
    """Every unit, book → letter, in document order (structure nodes before their first article):
    the shared walk of :func:`pipelines.statutes.tables.nodes_table`; Polish article rows have no heading."""
    return statute_nodes_table(ps.spec.act_id, ps.version, ps.structure, [
        ArticleNodes(a.id, a.number, None, a.text, a.path[-1].id if a.path else None, a.status, a.page_start, a.units)
        for a in ps.articles])


def acts_table(ps: ParsedStatute, *, source_sha256: str, source_url: str | None) -> pa.Table:
    return from_rows([{
        "act_id": ps.spec.act_id, "jurisdiction": ps.spec.act_id.split(":")[0], "eli": ps.spec.eli,
        "title": ps.title or ps.spec.title, "short_name": ps.spec.short_name, "version": ps.version,
        "based_on": ps.based_on, "source_url": source_url, "source_sha256": source_sha256,
        "pages": ps.pages, "article_count": len(ps.articles), "parser_version": PARSER_VERSION,
        "parsed_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
    }], ACTS)
