"""The NODES walk both jurisdictions share (pipelines/statutes/tables.py), on a tiny hand-made statute."""

from __future__ import annotations

import datetime as dt

from pipelines.statutes.de.model import DeNode, GermanAct, GermanStatute, Section
from pipelines.statutes.de.tables import nodes_table as de_nodes_table
from pipelines.statutes.model import Node
from pipelines.statutes.pl.parser import ActSpec, Article, ParsedStatute
from pipelines.statutes.pl.tables import nodes_table as pl_nodes_table
from pipelines.statutes.tables import ArticleNodes, node_rows, nodes_table
from schemas.arrow import NODES

V = dt.date(2024, 1, 1)


def tiny(node=Node):
    """Book 1 › Title 1 (art 1 with a paragraph and a point) › Title 2 (art 2), then an empty chapter."""
    book = node("book", "1", "x:book:1", heading="Allgemeines", page=1)
    t1 = node("title", "1", "x:book:1:title:1", heading="Anfang", page=1, parent_id=book.id)
    t2 = node("title", "2", "x:book:1:title:2", heading="Ende", status="repealed", page=2, parent_id=book.id,
              articles_before=1)
    empty = node("chapter", "9", "x:book:1:chapter:9", heading="Leer", page=0, parent_id=book.id, articles_before=2)
    par = node("paragraph", "1", "x:art:1:par:1", text="§ 1. Wer\n1) tut", parent_id="x:art:1")
    point = node("point", "1", "x:art:1:par:1:pt:1", text="1) tut", parent_id=par.id)
    return [book, t1, t2, empty], [par, point]


EXPECTED = [  # (id, level, number, heading, text, parent_id, ordinal, status, page)
    ("x:book:1", "book", "1", "Allgemeines", None, None, 0, "in_force", 1),
    ("x:book:1:title:1", "title", "1", "Anfang", None, "x:book:1", 1, "in_force", 1),
    ("x:art:1", "article", "1", "Erster", "§ 1. Wer\n1) tut", "x:book:1:title:1", 2, "in_force", 3),
    ("x:art:1:par:1", "paragraph", "1", None, "§ 1. Wer\n1) tut", "x:art:1", 3, "in_force", 3),
    ("x:art:1:par:1:pt:1", "point", "1", None, "1) tut", "x:art:1:par:1", 4, "in_force", 3),
    ("x:book:1:title:2", "title", "2", "Ende", None, "x:book:1", 5, "repealed", 2),
    ("x:art:2", "article", "2", None, "", "x:book:1:title:2", 6, "repealed", 4),
    ("x:book:1:chapter:9", "chapter", "9", "Leer", None, "x:book:1", 7, "in_force", None),  # page 0: unknown
]
COLUMNS = ("id", "level", "number", "heading", "text", "parent_id", "ordinal", "status", "page")


def test_the_walk_puts_structure_before_its_first_article_and_units_after_it():
    structure, units = tiny()
    articles = [ArticleNodes("x:art:1", "1", "Erster", "§ 1. Wer\n1) tut", "x:book:1:title:1", "in_force", 3, units),
                ArticleNodes("x:art:2", "2", None, "", "x:book:1:title:2", "repealed", 4, [])]
    rows = node_rows("x", V, structure, articles)
    assert [tuple(r[c] for c in COLUMNS) for r in rows] == EXPECTED
    assert all(r["act_id"] == "x" and r["version"] == V for r in rows)
    table = nodes_table("x", V, structure, articles)
    assert table.schema == NODES and table.to_pylist() == rows


def test_polish_and_german_tables_give_the_same_rows():
    """The same statute through pl.tables and de.tables: identical rows, but for the article heading
    (the German § title; a Polish article row has none)."""
    structure, units = tiny(Node)
    spec = ActSpec("x", "Ustawa", "u.", "DU/2024/1", "Dz. U. 2024 poz. 1")
    pl = ParsedStatute(spec, V, 4, "Ustawa", "", [
        Article("x:art:1", "1", structure[:2], [], 3, 3, text="§ 1. Wer\n1) tut", units=units),
        Article("x:art:2", "2", [structure[0], structure[2]], [], 4, 4, status="repealed")], structure, {})
    de_structure, de_units = tiny(DeNode)
    de = GermanStatute(GermanAct("x", "XG", "Gesetz"), V, "x.md", "markdown", "Gesetz", [
        Section("x:art:1", "1", "§", "Erster", de_structure[:2], text="§ 1. Wer\n1) tut", units=de_units,
                page_start=3),
        Section("x:art:2", "2", "§", "", [de_structure[0], de_structure[2]], status="repealed", page_start=4)],
        de_structure)
    pl_rows, de_rows = pl_nodes_table(pl).to_pylist(), de_nodes_table(de).to_pylist()
    assert [r["heading"] for r in de_rows if r["level"] == "article"] == ["Erster", ""]
    assert [r["heading"] for r in pl_rows if r["level"] == "article"] == [None, None]
    strip = [{**r, "heading": None} if r["level"] == "article" else r for r in de_rows]
    assert strip == pl_rows
    assert [tuple(r[c] for c in COLUMNS) for r in pl_rows] == \
        [(*e[:3], None, *e[4:]) if e[1] == "article" else e for e in EXPECTED]
