"""The act catalogue: the registry and the table of known acts as one index, by id and by citation form,
read at call time and built once per registry — also a registry of thousands of German rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.citations import act_catalogue as C
from pipelines.citations import pl_acts as PA
from registry_rows import KC, KK  # tests/ (on sys.path)


def _german_rows(n: int) -> str:
    """``n`` German registry rows as issue 24's catalogue would write them (slug ids, jurabk citations),
    the Kündigungsschutzgesetz among them under a slug id the table does not use."""
    rows = ["""
[[act]]
id = "de:kuendschg"
jurisdiction = "de"
language = "de"
title = "Kündigungsschutzgesetz"
citation = "KSchG"
source = "gesetze"
address = "kschg"
sample_stem = "kschg"
layout = "gesetze"
article_unit = "§"
paragraph_unit = "Abs."
"""]
    for i in range(n - 1):
        rows.append(f"""
[[act]]
id = "de:act{i}"
jurisdiction = "de"
language = "de"
title = "Beispielgesetz Nummer {i}"
citation = "BspG{i} 2001"
source = "gesetze"
address = "bspg{i}"
sample_stem = "bspg{i}"
layout = "gesetze"
article_unit = "§"
paragraph_unit = "Abs."
""")
    return "".join(rows)


def test_registry_and_table_are_one_act_under_the_registry_id() -> None:
    cat = C.catalogue()
    assert cat is C.catalogue()  # built once per (registry, table)
    kc = cat.get("pl:kc")
    assert (kc.in_registry, kc.title, kc.address, kc.gazette, kc.date, kc.citation) == (
        True, "Kodeks cywilny", "DU/1964/93", "Dz. U. 1964 poz. 93", "1964-04-23", "k.c.")
    upk = cat.get("pl:upk")
    assert (upk.in_registry, upk.title, upk.address) == (False, "ustawa o prawach konsumenta", "DU/2014/827")
    bgb = cat.get("de:bgb")
    assert (bgb.in_registry, bgb.address, bgb.date) == (True, "RGBl: 1896, 195", "1896-08-18")


@pytest.mark.parametrize("form, jurisdiction, act", [
    ("KSchG", "de", "de:kschg"), ("kschg", "de", "de:kschg"), ("SGB V", "de", "de:sgb-v"), ("sgb-v", "de", "de:sgb-v"),
    ("SGB 5", "de", "de:sgb-v"), ("AO 1977", "de", "de:ao"), ("AO", "de", "de:ao"), ("UWG 2004", "de", "de:uwg"),
    ("DSGVO", "de", "eu:2016/679"), ("DS-GVO", "de", "eu:2016/679"), ("2016/679", "de", "eu:2016/679"),
    ("RODO", "pl", "eu:2016/679"), ("BGB", "de", "de:bgb"), ("Kündigungsschutzgesetz", "de", "de:kschg"),
    ("BauGB", "de", "de:baugb"), ("k.p.k.", "pl", "pl:kpk"),
])
def test_citation_forms(form: str, jurisdiction: str, act: str) -> None:
    assert C.catalogue().by_form(form, jurisdiction).id == act


def test_forms_of_one_jurisdiction_do_not_name_another_s_acts() -> None:
    assert C.catalogue().by_form("KSchG", "pl") is None
    assert C.catalogue().by_form("k.p.k.", "de") is None
    assert C.catalogue().by_form("XYZG", "de") is None


def test_ids_no_table_knows_are_described_from_the_id_and_the_print() -> None:
    du = C.describe("pl:du:1982:268", "ustawy z dnia 14 grudnia 1982 r.")
    assert (du.address, du.gazette, du.known) == ("DU/1982/268", "Dz. U. 1982 poz. 268", False)
    dated = C.describe("pl:ustawa:2006-07-22")
    assert (dated.title, dated.date, dated.known) == ("ustawa z dnia 22 lipca 2006 r.", "2006-07-22", False)
    odd = C.describe("de:baykatfortgebg", "BayKatFortGebG")
    assert (odd.title, odd.citation, odd.known) == ("BayKatFortGebG", "BayKatFortGebG", False)


def test_a_registry_of_thousands_of_german_acts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24's registry: the table's KSchG row merges into the registry's row (same slug), so the
    citation names the registry id; forms printed with their year answer without it; the Polish
    lookups read the Polish rows of the same registry object, computed once."""
    path = tmp_path / "acts.toml"
    path.write_text(KC + KK + _german_rows(6000), encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    cat = C.catalogue()
    assert len(cat) >= 6000
    kschg = cat.by_form("KSchG", "de")
    assert (kschg.id, kschg.in_registry, kschg.address) == ("de:kuendschg", True, "BGBl I: 1951, 499")
    assert cat.get("de:kschg").id == "de:kuendschg" and cat.canonical("de:kschg") == "de:kuendschg"
    assert cat.by_form("BspG4711", "de").id == "de:act4711"  # "BspG4711 2001" printed without its year
    assert PA.held_ids() == {"pl:kc", "pl:kk"}
    assert PA._registry_acts() is PA._registry_acts()  # one scan per registry object
    assert PA.top_unit("pl:kk") == "art" and PA.top_unit("de:act5") is None
