"""German statutes from the bundestag/gesetze Markdown (de/gesetze/*.md), on the real files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipelines.statutes.de.markdown import parse_markdown, parse_markdown_dir
from pipelines.statutes.de.model import GermanStatuteError, german_acts


@pytest.fixture(scope="session")
def gesetze(sample_dir) -> Path:
    return sample_dir / "de" / "gesetze"


@pytest.fixture(scope="session")
def laws(gesetze):
    return parse_markdown_dir(gesetze)


@pytest.fixture(scope="session")
def bgb(laws):
    return laws["de:bgb"]


# ----------------------------------------------------------------------------------------------
# all six laws


def test_all_six_laws(laws):
    expected = {"de:bgb": 2756, "de:gg": 204, "de:hgb": 762, "de:stgb": 575, "de:stpo": 697, "de:zpo": 1277}
    assert {a: len(st.sections) for a, st in laws.items()} == expected
    for act_id, st in laws.items():
        ids = [s.id for s in st.sections]
        assert len(ids) == len(set(ids)), act_id
        keys = [s.sort_key for s in st.sections if s.sort_key is not None]
        assert keys == sorted(keys) and len(set(keys)) == len(keys), f"{act_id}: §§ not in increasing order"
        assert all(s.status in ("in_force", "repealed", "pending") for s in st.sections)
        assert all(s.text or s.status != "in_force" for s in st.sections), act_id
        assert all("\\" not in s.text and "[^" not in s.text and "**" not in s.text for s in st.sections), act_id
        assert isinstance(st.version, dt.date) and dt.date(2020, 1, 1) <= st.version <= dt.date(2022, 12, 31)
    assert laws["de:bgb"].version == dt.date(2021, 12, 21)  # latest amending act in the metadata


def test_bgb_573b(bgb):
    s = bgb.section("573b")
    assert s.id == "de:bgb:par:573b" and s.title == "Teilkündigung des Vermieters" and s.status == "in_force"
    assert [p.id for p in s.paragraphs] == [f"de:bgb:par:573b:abs:{i}" for i in range(1, 6)]
    ids = [u.id for u in s.units]
    assert "de:bgb:par:573b:abs:1:nr:1" in ids and "de:bgb:par:573b:abs:1:nr:2" in ids
    assert bgb.unit("de:bgb:par:573b:abs:1:nr:1").text == "1. Wohnraum zum Zwecke der Vermietung zu schaffen oder"
    assert s.paragraphs[0].text.startswith("(1) Der Vermieter kann nicht zum Wohnen bestimmte Nebenräume")
    assert "\n1. Wohnraum" in s.paragraphs[0].text  # the Absatz text includes its Nummern
    assert [n.label for n in s.path] == ["Buch 2", "Abschnitt 8", "Titel 5", "Untertitel 2", "Kapitel 5", "Unterkapitel 2"]
    assert s.path[-1].id == "de:bgb:book:2:division:8:title:5:subtitle:2:chapter:5:subchapter:2"


def test_bgb_433_and_823(bgb):
    assert bgb.unit("de:bgb:par:433:abs:1").text == (
        "(1) Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet, dem Käufer die Sache zu übergeben "
        "und das Eigentum an der Sache zu verschaffen. Der Verkäufer hat dem Käufer die Sache frei von Sach- und "
        "Rechtsmängeln zu verschaffen.")
    s = bgb.section("823")
    assert s.title == "Schadensersatzpflicht"
    assert [p.number for p in s.paragraphs] == ["1", "2"]
    assert s.paragraphs[0].text.startswith("(1) Wer vorsätzlich oder fahrlässig das Leben, den Körper")
    assert s.paragraphs[1].text.endswith("so tritt die Ersatzpflicht nur im Falle des Verschuldens ein.")


def test_repealed_sections(bgb):
    s = bgb.section("23")  # "§ 23 (weggefallen)" and a lone "-"
    assert (s.status, s.status_note, s.text, s.title) == ("repealed", "(weggefallen)", "", "")
    s = bgb.section("279")  # heading "§ 279", body "(weggefallen)"
    assert (s.status, s.status_note) == ("repealed", "(weggefallen)")
    rng = [bgb.section(n) for n in ("3", "4", "5", "6")]  # "(XXXX) §§ 3 bis 6 (weggefallen)"
    assert all(s.status == "repealed" and s.range_label == "§§ 3 bis 6" for s in rng)
    assert bgb.unit("de:bgb:par:2249:abs:4").status == "repealed"  # an Absatz "(4) (weggefallen)"
    # placeholders without text (inserted by a law not yet in force in 2021)
    assert [bgb.section(n).status for n in ("707a", "707b", "707c")] == ["pending"] * 3


def test_nummern_and_buchstaben(bgb):
    assert bgb.unit("de:bgb:par:309:nr:8:lit:b:lit:aa").text.startswith("aa) (Ausschluss und Verweisung auf Dritte)")
    nr9 = bgb.unit("de:bgb:par:309:nr:9")
    assert [u.id for u in bgb.section("309").units if u.parent_id == nr9.id] == \
        ["de:bgb:par:309:nr:9:lit:a", "de:bgb:par:309:nr:9:lit:b", "de:bgb:par:309:nr:9:lit:c"]
    # text indented under a Nummer belongs to it ("3. (Rücktrittsvorbehalt)" then its rule)
    assert bgb.unit("de:bgb:par:308:nr:3").text.startswith("3. (Rücktrittsvorbehalt)\ndie Vereinbarung eines Rechts")
    a = bgb.unit("de:bgb:par:207:abs:1:nr:2:lit:a")
    assert a.text == "a) seinen Eltern oder" and a.parent_id == "de:bgb:par:207:abs:1:nr:2"
    # text indented under Nummer 2 after its Buchstaben stays with Nummer 2; text at the margin after
    # the list goes back to the Absatz
    assert bgb.unit("de:bgb:par:207:abs:1:nr:2").text.endswith(
        "b) dem Ehegatten oder Lebenspartner eines Elternteils\nbis zur Vollendung des 21. Lebensjahres des Kindes,")
    assert bgb.unit("de:bgb:par:207:abs:1").text.endswith(
        "\nDie Verjährung von Ansprüchen des Kindes gegen den Beistand ist während der Dauer der Beistandschaft gehemmt.")


def test_footnotes_and_markdown_artefacts(bgb):
    assert bgb.section("14").footnotes == [
        "Amtlicher Hinweis: Diese Vorschrift dient der Umsetzung der eingangs zu den Nummern 3, 4, 6, 7, 9 und 11 "
        "genannten Richtlinien."]
    assert "SEPA-Firmenlastschrift" in bgb.section("270a").text  # "SEPA-⏎Firmenlastschrift"
    assert "Sach- und Rechtsmängeln" in bgb.section("433").text
    assert "bei Reichsbehörden und Reichsanstalten an den Reichsfiskus" in bgb.section("981").text  # wide gaps


def test_grundgesetz(laws):
    gg = laws["de:gg"]
    s = gg.section("3")
    assert s.id == "de:gg:art:3" and s.kind == "Art" and s.label == "Art. 3"
    assert [p.id for p in s.paragraphs] == ["de:gg:art:3:abs:1", "de:gg:art:3:abs:2", "de:gg:art:3:abs:3"]
    assert s.paragraphs[0].text == "(1) Alle Menschen sind vor dem Gesetz gleich."
    assert s.path[0].id == "de:gg:division:I" and s.path[0].heading == "Die Grundrechte"
    assert gg.section("74a").status == gg.section("75").status == "repealed"  # "Art 74a und 75 (weggefallen)"
    assert gg.section("Präambel").id == "de:gg:praeambel" and "Deutsche Volk" in gg.section("Präambel").text
    assert gg.annexes == ["Anhang EV"]  # the Einigungsvertrag annex is not parsed as units
    assert "de:gg:division:IVa" in {n.id for n in gg.structure}


def test_ordinal_structure_hgb_stgb(laws):
    hgb = {n.id: n for n in laws["de:hgb"].structure}
    assert hgb["de:hgb:book:3:division:1:subdivision:2:title:1"].label == "Erster Titel"
    stgb = laws["de:stgb"].section("38")
    assert [n.heading for n in stgb.path] == ["Allgemeiner Teil", "Rechtsfolgen der Tat", "Strafen", "Freiheitsstrafe"]
    assert stgb.path[-1].level == "group"


# ----------------------------------------------------------------------------------------------
# bad input


def test_non_law_markdown(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Notes\n\nJust some text, § 1 mentioned inline.\n", encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"README\.md: not a bundestag/gesetze law: no YAML front matter"):
        parse_markdown(readme)
    blog = tmp_path / "post.md"
    blog.write_text("---\nTitle: A blog post\nlayout: post\n---\n\n# Post\n\nText.\n", encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"post\.md: .*front matter lacks Title and jurabk/slug"):
        parse_markdown(blog)
    no_units = tmp_path / "x.md"
    no_units.write_text("---\nTitle: Gesetz\njurabk: XG\nslug: xg\n---\n\n# Gesetz (XG)\n\n## Teil 1 - Nichts\n\nText.\n",
                        encoding="utf-8")
    # no § or Art: held as the act's one text unit (test_markdown_units.py has the real acts)
    (text,) = parse_markdown(no_units, version=dt.date(2020, 1, 1)).sections
    assert (text.id, text.text, [n.id for n in text.path]) == ("de:xg:text", "Text.", ["de:xg:part:1"])
    empty_law = tmp_path / "y.md"
    empty_law.write_text("---\nTitle: Gesetz\njurabk: YG\nslug: yg\n---\n\n# Gesetz (YG)\n\n## Teil 1 - Nichts\n",
                         encoding="utf-8")
    with pytest.raises(GermanStatuteError, match=r"y\.md: not a law: neither units nor text nor metadata"):
        parse_markdown(empty_law, version=dt.date(2020, 1, 1))
    with pytest.raises(GermanStatuteError, match=r"missing\.md: file not found"):
        parse_markdown(tmp_path / "missing.md")
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(GermanStatuteError, match=r"bin\.md: not a UTF-8 text file"):
        parse_markdown(binary)


def test_wrong_act(gesetze):
    with pytest.raises(GermanStatuteError, match=r"gg\.md: not the Bürgerliches Gesetzbuch \(BGB\)"):
        parse_markdown(gesetze / "gg.md", act=german_acts()["bgb"])


def test_structure_notes(bgb):
    # official notes under a structure heading belong to it (they were dropped before)
    noted = {n.id: n.notes for n in bgb.structure if n.notes}
    assert set(noted) == {"de:bgb:book:2:division:2", "de:bgb:book:2:division:3:title:5:subtitle:1",
                          "de:bgb:book:2:division:8:title:1", "de:bgb:book:2:division:8:title:3",
                          "de:bgb:book:2:division:8:title:8", "de:bgb:book:2:division:8:title:12:subtitle:2"}


def test_default_acts_come_from_the_registry(gesetze):
    # parse_markdown without act= takes the registry's act of the front matter slug
    gg = parse_markdown(gesetze / "gg.md")
    assert gg.act == german_acts()["gg"] and gg.act.unit == "Art" and gg.act.abbreviation == "GG"
