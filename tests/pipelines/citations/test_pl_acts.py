"""Polish act names, abbreviations and Dz. U. addresses → act ids; the registry read at call time."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.citations import pl_acts as PA
from registry_rows import KK  # tests/ (on sys.path)


@pytest.mark.parametrize("abbr, act", [
    ("k.c.", "pl:kc"), ("kc", "pl:kc"), ("K.c.", "pl:kc"), ("KC", "pl:kc"), ("k.p.c.", "pl:kpc"), ("kpc", "pl:kpc"),
    ("k.p.", "pl:kp"), ("k.k.", "pl:kk"), ("k.p.k.", "pl:kpk"), ("k.k.w.", "pl:kkw"), ("k.w.", "pl:kw"),
    ("k.s.h.", "pl:ksh"), ("k.p.a.", "pl:kpa"), ("k.r.o.", "pl:kro"), ("p.p.s.a.", "pl:ppsa"), ("u.k.s.c.", "pl:uksc"),
    ("p.z.p.", "pl:pzp"), ("Pzp", "pl:pzp"), ("PZP", "pl:pzp"), ("u.s.m.", "pl:usm"),
])
def test_abbreviations(abbr: str, act: str) -> None:
    ref = PA.by_abbreviation(abbr)
    assert ref is not None and ref.id == act
    assert ref.in_corpus == (act in {"pl:kc", "pl:kpc", "pl:kp", "pl:kk"})


def test_an_abbreviation_shared_by_two_acts_is_the_one_in_force() -> None:
    assert PA.by_abbreviation("p.z.p.", "2011-04-28").id == "pl:pzp"
    assert PA.by_abbreviation("p.z.p.", "2023-05-01").id == "pl:pzp2019"
    assert PA.by_name("ustawy z dnia 11 września 2019 r. - Prawo zamówień publicznych").id == "pl:pzp2019"
    assert PA.by_name("ustawy z dnia 29 stycznia 2004 r. Prawo zamówień publicznych").id == "pl:pzp"


@pytest.mark.parametrize("name, act", [
    ("Kodeksu postępowania cywilnego", "pl:kpc"), ("Kodeksem pracy", "pl:kp"), ("kodeksu cywilnego", "pl:kc"),
    ("Kodeksie karnym", "pl:kk"), ("Kodeksu postępowania karnego", "pl:kpk"),
    ("ustawy z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego", "pl:kpc"),
    ("Konstytucji RP", "pl:konstytucja"), ("Konstytucji Rzeczypospolitej Polskiej", "pl:konstytucja"),
    ("ustawy z dnia 28 lipca 2005 r. o kosztach sądowych w sprawach cywilnych", "pl:uksc"),
    ("ustawy o TK", "pl:utk"), ("Prawa budowlanego", "pl:pb"),
])
def test_full_names_in_any_case_ending(name: str, act: str) -> None:
    assert PA.by_name(name).id == act


def test_an_amending_act_is_not_the_act_it_amends() -> None:
    assert PA.by_name("ustawy z dnia 5 grudnia 2008 r. o zmianie ustawy - Kodeks postępowania cywilnego") is None
    ref = PA.by_title("Ustawa z dnia 28 lipca 1990 r. o zmianie ustawy - Kodeks cywilny", 1990, 321)
    assert ref.id == "pl:du:1990:321" and not ref.in_corpus


def test_addresses_original_unified_and_unknown() -> None:
    assert PA.parse_address("Dz. U. z 1964 r. Nr 43, poz. 296") == (1964, 43, 296)
    assert PA.parse_address("Dz.U. 2023 poz. 1550") == (2023, None, 1550)
    assert PA.parse_address("t.j. Dz. U. z 2010 r. 113, poz. 759 ze zm.") == (2010, 113, 759)
    assert PA.parse_address("Dz.U. Nr 169, poz. 1417") == (None, 169, 1417)
    assert PA.parse_address("bez adresu") is None
    assert PA.by_address(1964, 296).id == "pl:kpc"
    kpc = PA.by_address(2023, 1550)  # unified text of the k.p.c.
    assert (kpc.id, kpc.in_corpus, kpc.how) == ("pl:kpc", True, "unified")
    assert PA.by_address(2010, 759).id == "pl:pzp"  # unified text of the p.z.p. 2004
    assert PA.by_address(1997, 483).id == "pl:konstytucja"
    odd = PA.by_address(1982, 268)
    assert (odd.id, odd.in_corpus) == ("pl:du:1982:268", False)
    assert PA.by_address(None, 5) is None


def test_saos_journal_titles() -> None:
    """Real ``journalTitle`` values of the SAOS pages."""
    pzp = PA.by_title("Obwieszczenie Marszałka Sejmu Rzeczypospolitej Polskiej z dnia 8 czerwca 2010 r. w sprawie "
                      "ogłoszenia jednolitego tekstu ustawy - Prawo zamówień publicznych", 2010, 759)
    assert pzp.id == "pl:pzp"
    ukwh = PA.by_title("Obwieszczenie Marszałka Sejmu Rzeczypospolitej Polskiej z dnia 11 października 2001 r. w sprawie "
                       "ogłoszenia jednolitego tekstu ustawy o księgach wieczystych i hipotece.", 2001, 1361)
    assert ukwh.id == "pl:ukwh"  # the address is no table's: the title names the act; the final '.' is no obstacle
    kp = PA.by_title("Obwieszczenie Marszałka Sejmu z dnia 2 lutego 1996 r. w sprawie ogłoszenia jednolitego tekstu "
                     "ustawy - Kodeks pracy", 1998, 94)
    assert (kp.id, kp.in_corpus) == ("pl:kp", True)
    assert PA.by_title("Ustawa z dnia 26 czerwca 1974 r. Kodeks pracy", 1974, 141).id == "pl:kp"
    reg = PA.by_title("Rozporządzenie Prezesa Rady Ministrów z dnia 15 marca 2010 r. w sprawie wysokości i sposobu "
                      "pobierania wpisu od odwołania", 2010, 238)
    assert reg.id == "pl:du:2010:238"
    assert PA.by_title("", None, None) is None


def _registry(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "acts.toml"
    path.write_text(rows, encoding="utf-8")
    return path


X = """
[[act]]
id = "pl:x"
jurisdiction = "pl"
language = "pl"
title = "Prawo o przykładach"
citation = "p.o.p."
source = "eli"
address = "DU/2099/7"
display_address = "Dz. U. 2099 poz. 7"
sample_stem = "D20990007Lj"
layout = "isap"
article_unit = "art"
paragraph_unit = "ust."
"""


def test_held_acts_come_from_the_registry_at_call_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert PA.in_corpus("pl:kc")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(_registry(tmp_path, KK + X)))
    assert PA.held_ids() == {"pl:kk", "pl:x"}
    kc = PA.by_abbreviation("k.c.")
    assert (kc.id, kc.in_corpus) == ("pl:kc", False)  # still the Civil Code, no longer held
    assert PA.by_abbreviation("k.k.").in_corpus
    # an act known only from the registry row: its citation, title (any case ending) and address
    for ref in (PA.by_abbreviation("p.o.p."), PA.by_name("Prawa o przykładach"), PA.by_address(2099, 7)):
        assert (ref.id, ref.in_corpus) == ("pl:x", True)
    monkeypatch.delenv("LEXPIPE_ACT_REGISTRY")
    assert PA.by_abbreviation("p.o.p.") is None
    assert PA.by_abbreviation("k.c.").in_corpus


def test_garbage() -> None:
    assert PA.by_abbreviation("") is None
    assert PA.by_abbreviation("xyz") is None
    assert PA.by_name("") is None
    assert PA.by_name("ala ma kota") is None
    assert PA.date_of("z dnia 29 stycznia 2004 r.") == "2004-01-29"
    assert PA.date_of("nic") is None
