"""The unit kinds of the acts without §§ and of the acts whose Artikel restart § numbering, on real
files of the bundestag/gesetze history bundle: ids, order keys, what each unit holds, no source word
lost, and the build's three suites passing on their tables."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from pipelines.statutes.de.build import build_german_chunks
from pipelines.statutes.de.markdown import SEGMENT, parse_markdown
from pipelines.statutes.de.source_fidelity import markdown_fidelity
from pipelines.statutes.de.tables import articles_table, nodes_table
from pipelines.validation import validate_table
from schemas.expectations import articles_suite, chunks_suite, nodes_suite

INITIAL_IMPORT, HEAD_2022 = "60ede3b9", "82cedddf"  # "Stand 2.7.2012" and the 2022 state of the bundle
V = dt.date(2022, 3, 26)


def ids(st) -> list[str]:
    return [s.id for s in st.sections]


def lossless(st) -> None:
    f = markdown_fidelity(st)
    assert Counter({w: n for w, n in f.missing.items() if w != "XXXX"}) == Counter(), f.missing.most_common(8)
    assert f.invented == Counter(), f.invented.most_common(8)


def test_treaty_act_of_artikel(act_file):
    st = parse_markdown(act_file("a/aiibuebkg"), version=V)  # "Artikel 1" … "Artikel 4": a Vertragsgesetz
    assert ids(st) == ["de:aiibuebkg:eingangsformel"] + [f"de:aiibuebkg:art:{n}" for n in range(1, 5)]
    art1 = st.sections[1]
    assert (art1.kind, art1.label, art1.order_key) == ("Art", "Artikel 1", 1000)
    assert art1.text.startswith("Dem in Peking am 29. Juni 2015 von der Bundesrepublik Deutschland")
    lossless(st)


def test_numbered_headings_are_units(act_file):
    st = parse_markdown(act_file("a/aarkzustano"), version=V)  # Eingangsformel, I., II., III.
    assert ids(st) == ["de:aarkzustano:eingangsformel", "de:aarkzustano:nr:I", "de:aarkzustano:nr:II",
                       "de:aarkzustano:nr:III"]
    assert [s.label for s in st.sections[1:]] == ["I.", "II.", "III."]
    assert [s.order_key for s in st.sections] == [0, 1000, 2000, 3000]
    assert st.sections[3].text == "Diese Anordnung tritt mit Wirkung vom 1. Juli 2012 in Kraft."
    lossless(st)


@pytest.mark.parametrize("commit", [INITIAL_IMPORT, HEAD_2022])
def test_an_act_of_nummern_is_one_text_unit(act_file, commit):
    # "(XXXX)" then "Auf Grund des … wird bekannt gemacht:" and Nummern 1. to 4.; then the Schlussformel
    st = parse_markdown(act_file("a/albeitrbek_2012", commit), version=V)
    assert ids(st) == ["de:albeitrbek_2012:text", "de:albeitrbek_2012:schlussformel"]
    text = st.sections[0]
    assert text.kind == "text" and text.title == st.act.title and text.text.startswith("Auf Grund des § 33 Absatz 1")
    assert [u.id for u in text.units if u.level == "point"][:4] == [f"de:albeitrbek_2012:text:nr:{n}" for n in range(1, 5)]
    assert st.sections[1].text == "Bundesministerium für Arbeit und Soziales"
    lossless(st)


@pytest.mark.parametrize("commit", [INITIAL_IMPORT, HEAD_2022])
def test_an_act_the_source_prints_no_text_of(act_file, commit):
    # a treaty published in BGBl. II: the file holds the title and its metadata only
    st = parse_markdown(act_file("a/aarhusuebk", commit), version=V)
    assert st.metadata_only and ids(st) == ["de:aarhusuebk:text"]
    assert st.sections[0].text.startswith("Ausfertigungsdatum: 1998-06-25\nFundstelle: BGBl II: ")
    assert st.sections[0].status == "in_force"
    lossless(st)


def test_anlagen_of_an_act_without_paragraphs(act_file):
    st = parse_markdown(act_file("w/wzg_4umwschbek"), version=V)  # a Bekanntmachung: text, Schlussformel, 4 Anlagen
    assert ids(st) == ["de:wzg_4umwschbek:text", "de:wzg_4umwschbek:schlussformel"] + \
        [f"de:wzg_4umwschbek:anl:{n}" for n in range(1, 5)]
    anl2 = st.sections[3]
    assert (anl2.kind, anl2.label, anl2.title) == ("Anlage", "Anlage 2", "Namen, Abkürzungen und Kennzeichen des "
                                                                        "BENELUX-Markenamts")
    assert "BENELUX-MERKENBUREAU (BMB)" in anl2.text
    assert [s.order_key for s in st.sections] == [0, 1, 1000, 2000, 3000, 4000]
    lossless(st)


def test_artikel_holding_paragraphs_scope_their_ids(act_file):
    st = parse_markdown(act_file("a/aoeg_1977"), version=V)  # Art 1 … 96, then "Art 97 - Übergangsvorschriften"
    by_id = {s.id: s for s in st.sections}
    assert "de:aoeg_1977:art:7" in by_id and "de:aoeg_1977:art:97" not in by_id  # Art 97 holds §§: no row
    p1 = by_id["de:aoeg_1977:art:97:par:1"]
    assert p1.title == "Begonnene Verfahren" and p1.path[-1].id == "de:aoeg_1977:art:97"
    art97 = next(n for n in st.structure if n.id == "de:aoeg_1977:art:97")
    assert (art97.label, art97.heading, art97.level) == ("Art 97", "Übergangsvorschriften", "part")
    keys = [s.order_key for s in st.sections]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert by_id["de:aoeg_1977:art:7"].order_key < p1.order_key < by_id["de:aoeg_1977:art:97:par:1a"].order_key


def test_artikel_restarting_paragraph_numbers(act_file):
    # BBVAnpG 91: "## Art 1 - …", "## (XXXX) §§ 1 bis 5 (weggefallen)", "## § 6", "## Art 2 - …",
    # "## (XXXX) §§ 1 und 2 (weggefallen)", … at one heading depth; § 1 appears in Art 1, 2 and 10
    st = parse_markdown(act_file("b/bbvanpg_91"), version=V)
    got = ids(st)
    assert len(got) == len(set(got))
    assert {"de:bbvanpg_91:art:1:par:1", "de:bbvanpg_91:art:2:par:1", "de:bbvanpg_91:art:10:par:1",
            "de:bbvanpg_91:art:1:par:6", "de:bbvanpg_91:art:3"} <= set(got)
    assert st.sections[-1].id == "de:bbvanpg_91:schlussformel" and st.sections[-1].path == []
    # Roman Artikel: "## Art II" holds "### Abschnitt 1 - Zulagen im Bereich des Bundes", "### § 10 …"
    besvng = parse_markdown(act_file("b/besvng_1"), version=V)
    p10 = next(s for s in besvng.sections if s.id == "de:besvng_1:art:II:par:10")
    assert [n.id for n in p10.path] == ["de:besvng_1:art:II", "de:besvng_1:art:II:division:1"]
    assert len(set(ids(besvng))) == len(besvng.sections)


def test_ids_are_stable_across_versions(act_file):
    old = parse_markdown(act_file("a/aoeg_1977", INITIAL_IMPORT), version=dt.date(2012, 7, 2))
    new = parse_markdown(act_file("a/aoeg_1977"), version=V)
    assert "de:aoeg_1977:art:97:par:1" in ids(old)
    common = set(ids(old)) & set(ids(new))
    assert len(common) >= 0.9 * len(old.sections)  # the same units under the same ids ten years apart


def test_a_number_printed_twice(act_file):
    abgg = parse_markdown(act_file("a/abgg"), version=V)  # "§ 55 (weggefallen)" then "§ 55 Aufgaben"
    (p55,) = [s for s in abgg.sections if s.number == "55"]
    assert (p55.id, p55.title, p55.status) == ("de:abgg:par:55", "Aufgaben", "in_force")
    ebo = parse_markdown(act_file("e/ebo"), version=V)  # "§ 66" with "-", then "§ 66 Inkrafttreten"
    assert [s.title for s in ebo.sections if s.number == "66"] == ["Inkrafttreten"]
    vtr = parse_markdown(act_file("g/ggart91cvtr"), version=V)  # "## Präambel" empty, "## **Präambel**"
    assert ids(vtr)[0] == "de:ggart91cvtr:praeambel" and vtr.sections[0].text.startswith("Das Land Baden-Württemberg")
    assert vtr.sections[1].path[0].id == "de:ggart91cvtr:division:I"  # "Abschnitt I - Der IT-Planungsrat"


def test_order_keys_follow_the_printed_order(act_file):
    ksvg = parse_markdown(act_file("k/ksvg"), version=V)  # "§ 54 (weggefallen)" is printed before "§ 52a"
    key = {s.number: s.order_key for s in ksvg.sections}
    assert key["54"] == 54000 and key["52a"] == SEGMENT + 52001 and key["53"] == SEGMENT + 53000
    gewo = parse_markdown(act_file("g/gewo"), version=V)  # crashed: "§§ 133e bis 139aa" (two letters)
    rng = [s.number for s in gewo.sections if s.range_label == "§§ 133e bis 139aa"]
    assert rng == ["133e", "134", "135", "136", "137", "138", "139", "139aa"]
    for st in (ksvg, gewo):
        keys = [s.order_key for s in st.sections]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)


# one act of each kind (the census, bench/german_catalogue_parse.py, runs the suites over every act)
REAL_ACTS = ["a/aarkzustano", "a/albeitrbek_2012", "a/aarhusuebk", "w/wzg_4umwschbek", "b/bbvanpg_91", "k/ksvg"]


def test_tables_and_chunks_pass_the_build_suites(act_file):
    suites = (articles_suite(None, 0.02, allow_pending=True), nodes_suite(), chunks_suite(1, 256))
    for act in REAL_ACTS:
        st = parse_markdown(act_file(act), version=V)
        articles = articles_table(st)
        tables = (articles, nodes_table(st), build_german_chunks(articles, max_tokens=256))
        for table, suite in zip(tables, suites):
            report = validate_table(table, suite, name=f"{suite.name} {act}")
            assert report.success, report.summary()
