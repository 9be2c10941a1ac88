"""A unit at a date, every level, against the real published k.c. versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import BadDate, NotCovered, UnknownAct, UnknownUnit
from pipelines.reads.units import cut_unit
from reads_data import BETWEEN, LATER, NEW, OLD, rows_by_id

OLD_709_2 = "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności."
NEW_709_2 = "Umowa leasingu wymaga zachowania formy dokumentowej."


@pytest.mark.parametrize("as_of,version,next_version,text", [
    (OLD, OLD, NEW, OLD_709_2),  # on the first version's date
    (BETWEEN, OLD, NEW, OLD_709_2),  # between the versions: the older one is in force
    ("2025-11-12", OLD, NEW, OLD_709_2),  # the day before the new text state
    (NEW, NEW, None, NEW_709_2),
    (LATER, NEW, None, NEW_709_2),  # after the newest: served from it, still covered
])
def test_a_changed_article_at_dates(reads: ReadService, as_of, version, next_version, text):
    u = reads.unit("pl:kc:art:709^2", as_of)
    assert (u.version, u.next_version, u.newest_version, u.covered, u.as_of) == (version, next_version, NEW, True, as_of)
    assert (u.text, u.status, u.level, u.number, u.article_id) == (text, "in_force", "article", "709^2", "pl:kc:art:709^2")
    assert u.path_text == "KSIĘGA TRZECIA ZOBOWIĄZANIA › TYTUŁ XVII¹ Umowa leasingu"
    assert [p.level for p in u.path] == ["book", "title"]


@pytest.mark.parametrize("version", [OLD, NEW])
def test_every_article_reads_as_published(reads: ReadService, corpus_home: Path, version: str):
    """Each article of each version, read at the version's date, is its ARTICLES row."""
    for art_id, row in rows_by_id(corpus_home, version, "articles").items():
        u = reads.unit(art_id, version)
        assert (u.text, u.status, u.status_note, u.path_text) == (row["text"], row["status"], row["status_note"],
                                                                  row["path_text"]), art_id
        assert u.text_pending == row["text_pending"], art_id
        assert u.children == [p["id"] for p in row["paragraphs"]] or row["paragraphs"] == [], art_id


def test_a_changed_paragraph_reads_its_own_wording(reads: ReadService):
    old, new = reads.unit("pl:kc:art:709^13:par:2", BETWEEN), reads.unit("pl:kc:art:709^13:par:2", NEW)
    assert (old.level, old.number, old.version, new.version) == ("paragraph", "2", OLD, NEW)
    assert old.text.startswith("§ 2.") and "wyznaczyć na piśmie korzystającemu" in old.text
    assert "wyznaczyć korzystającemu, w formie dokumentowej," in new.text
    assert [p.id for p in new.path][-1] == "pl:kc:art:709^13" and new.path[-1].level == "article"
    assert reads.unit("pl:kc:art:709^13:par:1", BETWEEN).text == reads.unit("pl:kc:art:709^13:par:1", NEW).text


def test_a_point_and_a_letter(reads: ReadService, corpus_home: Path):
    nodes = rows_by_id(corpus_home, NEW, "nodes")
    pt = reads.unit("pl:kc:art:42:par:4:pt:1", NEW)
    assert (pt.level, pt.number, pt.text) == ("point", "1", nodes["pl:kc:art:42:par:4:pt:1"]["text"])
    assert pt.text.startswith("1) nabycie i zbycie przedsiębiorstwa")
    assert [p.id for p in pt.path][-2:] == ["pl:kc:art:42", "pl:kc:art:42:par:4"] and pt.article_id == "pl:kc:art:42"
    lit = reads.unit("pl:kc:art:1031^2:par:2:pt:1:lit:a", NEW)
    assert (lit.level, lit.text) == ("letter", "a) dane, o których mowa w art. 1031^1 § 3,")
    assert [p.level for p in lit.path][-3:] == ["article", "paragraph", "point"]


def test_a_repealed_article_and_paragraph(reads: ReadService):
    art = reads.unit("pl:kc:art:2", OLD)
    assert (art.status, art.status_note, art.text) == ("repealed", "(uchylony)", "(uchylony)")
    par = reads.unit("pl:kc:art:8:par:2", NEW)
    assert (par.status, par.text) == ("repealed", "§ 2. (uchylony)")
    assert reads.unit("pl:kc:art:8:par:1", NEW).status == "in_force"


def test_a_structure_unit(reads: ReadService):
    title = reads.unit("pl:kc:book:PIERWSZA:title:II", NEW)
    assert (title.level, title.number, title.heading, title.text, title.article_id) == ("title", "II", "Osoby", None, None)
    assert title.children == ["pl:kc:book:PIERWSZA:title:II:division:I", "pl:kc:book:PIERWSZA:title:II:division:II",
                              "pl:kc:book:PIERWSZA:title:II:division:III"]


def test_an_announced_change_and_its_date(reads: ReadService):
    """2025-11-13 announces a new § 1 and new §§ 1^1, 1^2 of art. 647^1 from 2025-12-04."""
    before, on = reads.unit("pl:kc:art:647^1", "2025-12-03"), reads.unit("pl:kc:art:647^1", "2025-12-04")
    assert before.version == on.version == NEW and before.text == on.text
    assert before.pending_effective_date == on.pending_effective_date == "2025-12-04"
    assert (before.pending_applies, on.pending_applies) == (False, True)
    assert "§ 1^1. Sprzeciw, o którym mowa w § 1" in on.text_pending and "§ 1^1" not in on.text
    assert on.pending_note.startswith("Nowe brzmienie § 1 w art. 647^1 wejdzie w życie z dn. 4.12.2025 r.")
    par1 = reads.unit("pl:kc:art:647^1:par:1", "2025-12-04")
    assert par1.text.startswith("§ 1.") and "chyba że w ciągu trzydziestu dni" in par1.text
    assert par1.text_pending.startswith("§ 1.") and "chyba że inwestor złożył" in par1.text_pending
    assert "§ 1^1" not in par1.text_pending and par1.pending_applies
    par4 = reads.unit("pl:kc:art:647^1:par:4", "2025-12-04")  # reads the same in the announced wording
    assert (par4.text_pending, par4.pending_effective_date) == (None, None)
    added = reads.unit("pl:kc:art:647^1:par:1^1", "2025-12-04")  # only in the announced wording
    assert (added.status, added.text, added.version, added.article_id) == ("pending", None, NEW, "pl:kc:art:647^1")
    assert added.text_pending.startswith("§ 1^1. Sprzeciw") and added.text_pending.endswith("złożenie sprzeciwu.")
    # the older version announced nothing
    assert reads.unit("pl:kc:art:647^1", BETWEEN).text_pending is None


def test_cut_unit_finds_markers_at_line_starts():
    text = "§ 1. Pierwszy 2) nie punkt.\n1) punkt jeden;\n2) punkt dwa:\na) lit a,\nb) lit b\n§ 1^1. Nowy.\n§ 2. Drugi."
    assert cut_unit(text, "x:y:art:1", "x:y:art:1:par:1^1") == "§ 1^1. Nowy."
    assert cut_unit(text, "x:y:art:1", "x:y:art:1:par:1:pt:2:lit:b") == "b) lit b"
    assert cut_unit(text, "x:y:art:1", "x:y:art:1:par:3") is None
    assert cut_unit("(1) Eins.\n(2) Zwei:\n1. Nummer eins", "de:bgb:par:1", "de:bgb:par:1:abs:2:nr:1") == "1. Nummer eins"


@pytest.mark.parametrize("unit_id,error,message", [
    ("pl:kc:art:99999", UnknownUnit, "no held version of pl:kc (2024-12-19, 2025-11-13) has it"),
    ("pl:kc:art:415:par:1", UnknownUnit, "unknown unit"),  # art. 415 k.c. has no §
    ("pl:xx:art:1", UnknownAct, "unknown act 'pl:xx'"),
    ("foo", UnknownUnit, "unit ids look like"),
    ("pl:kc:art:647^1:par:1^1", UnknownUnit, "not in pl:kc version 2024-12-19 (in force on 2025-06-30); it is in version(s) 2025-11-13"),
])
def test_unknown_units(reads: ReadService, unit_id, error, message):
    with pytest.raises(error, match=message.replace("^", r"\^").replace("(", r"\(").replace(")", r"\)")):
        reads.unit(unit_id, BETWEEN)


@pytest.mark.parametrize("as_of", ["2024-13-45", "2024-02-30", "20241219", "2024-W01-1", "yesterday", "", "2024-12-19T00:00"])
def test_malformed_dates(reads: ReadService, as_of):
    with pytest.raises(BadDate, match="as_of must be a"):
        reads.unit("pl:kc:art:1", as_of)


def test_a_date_before_the_oldest_version_is_not_covered(reads: ReadService):
    with pytest.raises(NotCovered, match="2024-12-18 is before the oldest held version of pl:kc \\(2024-12-19\\)"):
        reads.unit("pl:kc:art:1", "2024-12-18")


def test_a_warm_read_is_served_from_memory(reads: ReadService):
    """Warm reads load nothing (speed itself is measured by bench/reads.py, not asserted here)."""
    for unit_id in ("pl:kc:art:22^1", "pl:kc:art:709^13:par:2"):
        for as_of in (OLD, NEW):
            reads.unit(unit_id, as_of)
    loads = reads.reader.cache.loads
    for _ in range(50):
        for unit_id in ("pl:kc:art:22^1", "pl:kc:art:709^13:par:2"):
            for as_of in (OLD, BETWEEN, NEW, LATER):
                u = reads.unit(unit_id, as_of)
    assert reads.reader.cache.loads == loads and u.text.startswith("§ 2.")
