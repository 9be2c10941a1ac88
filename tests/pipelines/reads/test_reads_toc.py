"""The table of contents at a date: the hierarchy of the version in force."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import BadDate, NotCovered, UnknownAct
from pipelines.reads.toc import TocEntry
from reads_data import BETWEEN, LATER, NEW, OLD, table_rows


def walk(entries: list[TocEntry], depth: int = 0):
    for e in entries:
        yield depth, e
        yield from walk(e.children, depth + 1)


@pytest.mark.parametrize("as_of,version", [(OLD, OLD), (BETWEEN, OLD), (NEW, NEW), (LATER, NEW)])
def test_toc_is_the_hierarchy_of_the_version_in_force(reads: ReadService, corpus_home: Path, as_of, version):
    toc = reads.toc("pl:kc", as_of)
    assert (toc.version, toc.as_of, toc.articles, toc.repealed) == (version, as_of, 1296, 100)
    assert [(e.level, e.number) for e in toc.entries] == [("book", "PIERWSZA"), ("book", "DRUGA"),
                                                           ("book", "TRZECIA"), ("book", "CZWARTA")]
    flat = list(walk(toc.entries))
    articles = [e for _, e in flat if e.level == "article"]
    published = table_rows(corpus_home, version, "articles")
    assert [a.id for a in articles] == [r["id"] for r in published]  # every article, in document order
    assert [a.number_display for a in articles] == [r["number_display"] for r in published]
    assert all(not a.children for a in articles)  # paragraphs are left out
    structure = [e for _, e in flat if e.level != "article"]
    nodes = [r for r in table_rows(corpus_home, version, "nodes") if r["level"] not in
             ("article", "paragraph", "point", "letter")]
    assert [(e.id, e.heading) for e in structure] == [(r["id"], r["heading"]) for r in nodes]


def test_toc_nests_an_article_under_its_chapter(reads: ReadService):
    toc = reads.toc("pl:kc", NEW)
    path = next([d, e] for d, e in walk(toc.entries) if e.id == "pl:kc:art:22^1")
    assert path[0] == 4 and path[1].number_display == "22¹" and path[1].status == "in_force"
    book = toc.entries[0]
    title = next(c for c in book.children if c.number == "II")
    chapter = title.children[0].children[0]
    assert (chapter.level, chapter.heading) == ("chapter", "Zdolność prawna i zdolność do czynności prawnych")
    assert "pl:kc:art:22^1" in [c.id for c in chapter.children]
    assert next(e for _, e in walk(toc.entries) if e.id == "pl:kc:art:2").status == "repealed"


def test_toc_refusals(reads: ReadService):
    with pytest.raises(NotCovered):
        reads.toc("pl:kc", "1999-01-01")
    with pytest.raises(BadDate):
        reads.toc("pl:kc", "2025-02-29")
    with pytest.raises(UnknownAct):
        reads.toc("de:xx", NEW)
