"""The rules both German parsers share (pipelines/statutes/de/structure.py), on hand-made input."""

from __future__ import annotations

from pipelines.statutes.de.model import GermanAct, Section
from pipelines.statutes.de.structure import (
    Block, build_units, expand_range, join_wrapped, ordinal_value, parse_section_heading, parse_structure_heading,
    range_sections, section_id, strip_repealed,
)

ACT = GermanAct("de:xg", "XG", "Gesetz über Beispiele")


def test_expand_range():
    assert expand_range("3", "6") == ["3", "4", "5", "6"]
    assert expand_range("114", "115", "und") == ["114", "115"]
    assert expand_range("1615b", "1615k") == ["1615b", "1615c", "1615d", "1615e", "1615f", "1615g",
                                              "1615h", "1615i", "1615k"]  # no "j" in German numbering
    assert expand_range("38", "47b") == [str(n) for n in range(38, 48)] + ["47a", "47b"]
    assert expand_range("195a", "197") == ["195a", "196", "197"]
    assert expand_range("47", "47b") == ["47", "47a", "47b"]


def test_ordinals_and_structure_headings():
    assert [ordinal_value(w) for w in ("Erster", "Erstes", "Siebenter", "Siebter", "Zwölfter", "Dreizehnter",
                                       "Zwanzigster", "Neunundzwanzigster", "Dreißigster")] == \
        [1, 1, 7, 7, 12, 13, 20, 29, 30]
    h = parse_structure_heading("Buch 1 - Allgemeiner Teil")
    assert (h.level, h.number, h.label, h.heading) == ("book", "1", "Buch 1", "Allgemeiner Teil")
    h = parse_structure_heading("Zweiter Unterabschnitt - Eröffnungsbilanz. Jahresabschluß")
    assert (h.level, h.number, h.label) == ("subdivision", "2", "Zweiter Unterabschnitt")
    h = parse_structure_heading("IV a. - Gemeinsamer Ausschuß")
    assert (h.level, h.number) == ("division", "IVa")
    assert parse_structure_heading("Freiheitsstrafe - ").level == "group"
    assert parse_structure_heading("Allgemeiner Teil - ").level == "part"
    assert parse_structure_heading("Vierter Titel - (weggefallen)").status == "repealed"


def test_section_headings_and_repealed_titles():
    assert parse_section_heading("§ 573b Teilkündigung des Vermieters") == \
        ("§", "573b", None, None, "Teilkündigung des Vermieters")
    assert parse_section_heading("(XXXX) §§ 3 bis 6 (weggefallen)") == ("§", "3", "bis", "6", "(weggefallen)")
    assert parse_section_heading("Art 74a und 75") == ("Art", "74a", "und", "75", "")
    assert parse_section_heading("§§ 3 Übergang") is None  # "§§" needs a range
    assert strip_repealed("Vormundschaft (weggefallen)") == ("Vormundschaft", True)
    assert strip_repealed(" Kauf ") == ("Kauf", False)
    assert section_id(ACT, "§", "1a") == "de:xg:par:1a"
    assert section_id(ACT, "preamble", "Präambel") == "de:xg:praeambel"
    rng = range_sections(ACT, "§", "3", "5", "bis", repealed=True, path=[])
    assert [(s.id, s.status, s.range_label) for s in rng] == \
        [(f"de:xg:par:{n}", "repealed", "§§ 3 bis 5") for n in ("3", "4", "5")]


def test_build_units_nests_absatz_nummer_buchstabe():
    s = Section(section_id(ACT, "§", "1"), "1", "§", "Beispiel", [], page_start=7)
    build_units(s, [Block("abs", "1", "(1) Wer"), Block("nr", "1", "1. etwas tut oder", 0),
                    Block("lit", "a", "a) dies,", 1), Block("text", "", "handelt.", 0), Block("abs", "2", "(2) (weggefallen)")])
    assert [(u.id, u.level, u.parent_id, u.page) for u in s.units] == [
        ("de:xg:par:1:abs:1", "paragraph", "de:xg:par:1", 7),
        ("de:xg:par:1:abs:1:nr:1", "point", "de:xg:par:1:abs:1", 7),
        ("de:xg:par:1:abs:1:nr:1:lit:a", "letter", "de:xg:par:1:abs:1:nr:1", 7),
        ("de:xg:par:1:abs:2", "paragraph", "de:xg:par:1", 7)]
    assert s.units[0].text == "(1) Wer\n1. etwas tut oder\na) dies,\nhandelt."  # nested units and free text
    assert s.units[1].text == "1. etwas tut oder\na) dies,"
    assert s.units[3].status == "repealed" and s.status == "in_force" and len(s.content_hash) == 64
    empty = Section(section_id(ACT, "§", "2"), "2", "§", "", [])
    build_units(empty, [Block("text", "", "(weggefallen)")])
    assert (empty.status, empty.status_note, empty.units) == ("repealed", "(weggefallen)", [])


def test_join_wrapped():
    assert join_wrapped("SEPA-", "Firmenlastschrift") == "SEPA-Firmenlastschrift"
    assert join_wrapped("Rechts-", "und Sachmängel") == "Rechts- und Sachmängel"
    assert join_wrapped("ein", "Wort") == "ein Wort"
