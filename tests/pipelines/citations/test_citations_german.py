"""German statute citations: parsing of tricky forms, the spaCy component, linking to corpus ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.case_law.html_text import clean_legal_html
from pipelines.citations.acts import act_key, corpus_keys, looks_like_abbreviation
from pipelines.citations.german import (Citation, extract_citations, link, make_nlp, unit_ids)
from pipelines.citations.known_ids import corpus_unit_ids


def cites(text: str, **kw) -> list[Citation]:
    return extract_citations(text, **kw)


def brief(c: Citation) -> tuple:
    return (c.text, c.act_key, c.number, c.absatz, c.satz, c.nummer, c.buchstabe)


@pytest.mark.parametrize("text,expected", [
    ("gemäß § 433 Abs. 1 Satz 2 BGB und",
     [("§ 433 Abs. 1 Satz 2 BGB", "bgb", "433", ["1"], ["2"], [], [])]),
    ("nach §§ 823, 826 BGB haftet",
     [("§§ 823", "bgb", "823", [], [], [], []), ("826 BGB", "bgb", "826", [], [], [], [])]),
    ("§ 433 Abs. 1 und 2 BGB", [("§ 433 Abs. 1 und 2 BGB", "bgb", "433", ["1", "2"], [], [], [])]),
    ("§ 4 Nr. 12 Buchst. a UStG", [("§ 4 Nr. 12 Buchst. a UStG", "ustg", "4", [], [], ["12"], ["a"])]),
    ("§ 543 Abs. 2 Satz 1 Nr. 3 a) und b) BGB seit",
     [("§ 543 Abs. 2 Satz 1 Nr. 3 a) und b) BGB", "bgb", "543", ["2"], ["1"], ["3"], ["a", "b"])]),
    ("§ 13 Abs 3a S 6 SGB V eingetreten", [("§ 13 Abs 3a S 6 SGB V", "sgb-v", "13", ["3a"], ["6"], [], [])]),
    ("Kündigung nach § 573b bgb", [("§ 573b bgb", "bgb", "573b", [], [], [], [])]),
    ("(§ 74 a HGB)", [("§ 74 a HGB", "hgb", "74a", [], [], [], [])]),
    ("Art.11 Abs.3 AGGVG).", [("Art.11 Abs.3 AGGVG", "aggvg", "11", ["3"], [], [], [])]),
    ("gegen Art. 3 Abs. 1 GG verstößt", [("Art. 3 Abs. 1 GG", "gg", "3", ["1"], [], [], [])]),
    ("§ 5 Abs. 1, 2 Nr. 1 UWG 2004", [("§ 5 Abs. 1, 2 Nr. 1 UWG 2004", "uwg", "5", ["1", "2"], [], ["1"], [])]),
    ("§ 184 des Sozialgerichtsgesetzes in", [("§ 184 des Sozialgerichtsgesetzes", "sgg", "184", [], [], [], [])]),
    ("§ 236 Abs 1 Fünftes Buch Sozialgesetzbuch (SGB V)",
     [("§ 236 Abs 1 Fünftes Buch Sozialgesetzbuch", "sgb-v", "236", ["1"], [], [], [])]),
    ("§ 1 Abs. 2 des Gesetzes über die Rechtsverhältnisse der Steuerberater und Steuerbevollmächtigten (StBerG) vom",
     [("§ 1 Abs. 2 des Gesetzes über die Rechtsverhältnisse der Steuerberater und Steuerbevollmächtigten (StBerG)",
       "stberg", "1", ["2"], [], [], [])]),
    ("§ 12 Abs. 1 der HeizkostenV ein", [("§ 12 Abs. 1 der HeizkostenV", "heizkostenv", "12", ["1"], [], [], [])]),
    ("(SGG § 184 Abs 1), ist", [("SGG § 184 Abs 1", "sgg", "184", ["1"], [], [], [])]),
    ("GG Art 80 Abs 1 S 2 verlangt", [("GG Art 80 Abs 1 S 2", "gg", "80", ["1"], ["2"], [], [])]),
    ("§§ 708 Nr. 7,10, 711 ZPO.",
     [("§§ 708 Nr. 7,10", "zpo", "708", [], [], ["7", "10"], []), ("711 ZPO", "zpo", "711", [], [], [], [])]),
])
def test_tricky_forms(text: str, expected: list[tuple]) -> None:
    got = cites(text)
    assert [brief(c) for c in got] == expected
    for c in got:
        assert text[c.start:c.end] == c.text


def test_list_with_its_own_signs_and_the_act_after_it() -> None:
    got = cites("Der Anspruch folgt aus § 8 Abs. 1 und 3 Nr. 1, §§ 3, 5 Abs. 1 und 2 Nr. 1 UWG (Täuschung).")
    assert [(c.text, c.act_key, c.act_source) for c in got] == [
        ("§ 8 Abs. 1 und 3 Nr. 1", "uwg", "list"), ("§§ 3", "uwg", "list"), ("5 Abs. 1", "uwg", "list"),
        ("2 Nr. 1 UWG", "uwg", "own")]
    assert len({c.group for c in got}) == 1


def test_ranges_and_f_ff() -> None:
    start, end = cites("die §§ 184 bis 187 SGG einschließlich")
    assert (start.text, start.number, start.range_end, start.role) == ("§§ 184", "184", "187", "single")
    assert (end.text, end.number, end.role, end.relation) == ("187 SGG", "187", "range_end", "range")
    assert start.section_numbers() == ["184", "185", "186", "187"] and end.section_numbers() == []
    assert end.range_start == "184"
    (ff,) = cites("der §§ 184 ff. SGG gehe")
    assert (ff.text, ff.extension, ff.number) == ("§§ 184 ff. SGG", "ff.", "184")
    (f,) = cites("vgl. § 12 f. BGB")
    assert (f.text, f.extension) == ("§ 12 f. BGB", "f.")


def test_ivm_chains_pass_the_act_backwards() -> None:
    a, b = cites("Maßregeln nach § 1908i Abs.1 Satz 1 i.V.m. § 1846 BGB und")
    assert (a.text, a.act_key, a.act_source) == ("§ 1908i Abs.1 Satz 1", "bgb", "chain")
    assert (b.text, b.relation, b.chain) == ("§ 1846 BGB", "ivm", a.chain)
    a, b = cites("aus Art. 3 Abs. 1 in Verbindung mit Art. 20 Abs. 3 GG herleitbar")
    assert (a.act_key, a.unit, b.relation) == ("gg", "Art", "ivm")
    a, b = cites("§ 26 Abs. 1 SGB X i. V. m. § 187 Abs. 1 BGB")
    assert (a.act_key, b.act_key) == ("sgb-x", "bgb")  # each keeps its own act


def test_eu_acts() -> None:
    got = cites("Art. 6 Abs. 2 Buchst. a der Richtlinie 77/388/EWG und die Richtlinie 2005/29/EG sowie (69/335/EWG).")
    assert [(c.text, c.act_key, c.unit, c.link_status) for c in got] == [
        ("Art. 6 Abs. 2 Buchst. a der Richtlinie 77/388/EWG", "77/388/ewg", "Art", "eu"),
        ("Richtlinie 2005/29/EG", "2005/29/eg", None, "eu"),
        ("69/335/EWG", "69/335/ewg", None, "eu")]
    assert got[0].act_id == "eu:77/388/ewg"


def test_non_citations_and_unresolved_numbers() -> None:
    assert cites("die Art und Weise; psychischer Art.\n8 Das SG hat") == []
    assert cites("Er hatte sich in § 10 des am 31. Dezember 1955 geschlossenen Vertrages verpflichtet.") == []
    assert cites("Hueck-Nipperdey, aaO, § 38 II A 4a, S. 254") == []
    kept = cites("Hueck-Nipperdey, aaO, § 38 II A 4a, S. 254", keep_unresolved=True)
    assert [(c.text, c.act_key, c.link_status) for c in kept] == [("§ 38", None, "no_act")]
    assert cites("Miete 1.604,44 DM") == []


def test_act_table_is_case_insensitive_and_flags_acts_outside_the_corpus() -> None:
    assert act_key("StPO") == act_key("stpo") == act_key("STPO") == "stpo"
    assert act_key("SGB 5") == act_key("SGB V") == act_key("Fünftes Buch Sozialgesetzbuch") == "sgb-v"
    assert act_key("des Bürgerlichen Gesetzbuchs") == "bgb" and act_key("Zivilprozeßordnung") == "zpo"
    assert looks_like_abbreviation("BayKatFortGebG") and not looks_like_abbreviation("III")
    (c,) = cites("nach § 261 stgb strafbar")
    assert (c.act_key, c.in_corpus, c.link_status) == ("stgb", True, "unverified")
    (c,) = cites("nach § 5 UWG")
    assert (c.in_corpus, c.link_status, c.unit_id) == (False, "out_of_corpus", "de:uwg:par:5")


def test_the_corpus_acts_are_the_registry_acts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert corpus_keys() == {"bgb", "gg", "hgb", "stgb", "stpo", "zpo"}
    # a registry (read at call time) where the UWG is in the corpus and cited by Art.
    registry = tmp_path / "acts.toml"
    registry.write_text("""
[[act]]
id = "de:uwg"
jurisdiction = "de"
language = "de"
title = "Gesetz gegen den unlauteren Wettbewerb"
citation = "UWG"
source = "gesetze"
address = "uwg"
sample_stem = "uwg"
layout = "gesetze"
article_unit = "Art"
""", encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(registry))
    assert corpus_keys() == {"uwg"}
    (c,) = cites("nach § 5 UWG")
    assert (c.in_corpus, c.link_status, c.unit_id) == (True, "unverified", "de:uwg:art:5")
    (c,) = cites("nach § 261 StGB strafbar")
    assert (c.in_corpus, c.link_status) == (False, "out_of_corpus")


@pytest.fixture(scope="module")
def known(sample_dir: Path) -> frozenset[str]:
    return corpus_unit_ids(sample_dir / "de" / "gesetze")


def test_linking_against_the_parsed_statutes(known: frozenset[str]) -> None:
    def one(text: str) -> Citation:
        (c,) = extract_citations(text, known_ids=known)
        return c

    c = one("§ 433 Abs. 1 BGB")
    assert (c.unit_id, c.link_status) == ("de:bgb:par:433:abs:1", "verified")
    assert one("§ 573 Abs. 2 Nr. 2 BGB").unit_id == "de:bgb:par:573:abs:2:nr:2"
    assert one("Art. 3 Abs. 1 GG").unit_id == "de:gg:art:3:abs:1"
    assert one("Art. 3 GG").unit_id == "de:gg:art:3"
    assert one("§ 511 ZPO").unit_id == "de:zpo:par:511"
    c = one("§ 433 Abs. 9 BGB")  # no such Absatz: the § is still a valid target
    assert (c.unit_id, c.link_status) == ("de:bgb:par:433", "verified")
    c = one("§ 9999 BGB")
    assert (c.unit_id, c.link_status) == (None, "not_found")
    c = link(Citation(0, 5, "§ 3 GG", "§", "3", act_key="gg"), known)  # a § sign on the GG still means Art.
    assert c.unit_id == "de:gg:art:3"
    assert unit_ids(one("§ 433 Abs. 1 und 2 BGB")) == ["de:bgb:par:433:abs:1", "de:bgb:par:433:abs:2"]


def test_spacy_component_on_a_real_decision(sample_dir: Path, known: frozenset[str]) -> None:
    path = sample_dir / "de" / "openlegaldata" / "case_with_references.json"
    rec = next(r for r in json.loads(path.read_text()) if r.get("pk") == 1888)
    clean = clean_legal_html(rec["fields"]["content"])
    nlp = make_nlp(known_ids=known)
    assert nlp.pipe_names == ["german_statute_citations"]
    doc = nlp(clean.text)
    spans = doc.spans["citations"]
    assert len(spans) == len(doc._.citations) > 20
    for span in spans:
        c = span._.citation
        assert span.label_ == "LAW" and span.start_char <= c.start < c.end <= span.end_char
    # Open Legal Data marked its own references in this record: every one of them is found
    for ref in clean.refs:
        assert any(c.start < ref.end and ref.start < c.end for c in doc._.citations), clean.text[ref.start:ref.end]
    assert {c.unit_id for c in doc._.citations if c.act_key == "bgb"} >= {"de:bgb:par:800"}


def test_norms_inside_reporter_locators_belong_to_the_case_citation() -> None:
    text = ("(vgl. BAG 3, 321 = AP Nr. 4 zu § 59 HGB; BVerwG 4 NB 43.93 - Buchholz 406.11 § 9 BauGB Nr. 74; "
            "SozR 4-2500 § 13 Nr 33) und § 74 Abs. 1 HGB")
    assert [c.text for c in cites(text)] == ["§ 74 Abs. 1 HGB"]
    kept = cites(text, keep_reporter_locators=True)
    # the SozR locator names no act, so it is dropped as unresolved either way
    assert [c.text for c in kept] == ["§ 59 HGB", "§ 9 BauGB", "§ 74 Abs. 1 HGB"]
