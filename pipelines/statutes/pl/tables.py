"""ParsedStatute → Arrow tables (acts, articles, nodes) conforming to ``schemas.arrow``."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from pipelines.pdf_lines import display_number
from pipelines.statutes.pl.parser import PARSER_VERSION, ParsedStatute
from schemas.arrow import ACTS, ARTICLES, NODES, from_rows

LEVEL_LABEL = {"book": "KSIĘGA", "part": "CZĘŚĆ", "title": "TYTUŁ", "division": "DZIAŁ",
               "chapter": "Rozdział", "section": "Oddział"}


def _path_text(path) -> str:
    return " › ".join(f"{LEVEL_LABEL[n.level]} {display_number(n.number)} {n.heading}".strip() for n in path)


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
    """Every unit, book → letter, in document order (structure nodes before their first article)."""
    act, ver = ps.spec.act_id, ps.version
    rows: list[dict] = []

    def add(node, level: str, *, heading, text, parent_id, status, page) -> None:
        rows.append({"id": node.id, "act_id": act, "version": ver, "level": level, "number": node.number,
                     "heading": heading, "text": text, "parent_id": parent_id, "ordinal": len(rows),
                     "status": status, "page": page})

    structure = iter(ps.structure)
    nxt = next(structure, None)
    for i, a in enumerate([*ps.articles, None]):
        while nxt is not None and (a is None or nxt.articles_before <= i):
            add(nxt, nxt.level, heading=nxt.heading, text=None, parent_id=nxt.parent_id, status=nxt.status, page=nxt.page)
            nxt = next(structure, None)
        if a is None:
            break
        add(a, "article", heading=None, text=a.text, parent_id=a.path[-1].id if a.path else None,
            status=a.status, page=a.page_start)
        for u in a.units:
            add(u, u.level, heading=None, text=u.text, parent_id=u.parent_id, status=u.status, page=a.page_start)
    return from_rows(rows, NODES)


def acts_table(ps: ParsedStatute, *, source_sha256: str, source_url: str | None) -> pa.Table:
    return from_rows([{
        "act_id": ps.spec.act_id, "jurisdiction": ps.spec.act_id.split(":")[0], "eli": ps.spec.eli,
        "title": ps.title or ps.spec.title, "short_name": ps.spec.short_name, "version": ps.version,
        "based_on": ps.based_on, "source_url": source_url, "source_sha256": source_sha256,
        "pages": ps.pages, "article_count": len(ps.articles), "parser_version": PARSER_VERSION,
        "parsed_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
    }], ACTS)
