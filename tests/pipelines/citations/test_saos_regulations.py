"""SAOS ``referencedRegulations`` entries (real ones, SAOS dump pages 347 and 355) → (act, article)."""

from __future__ import annotations

import pytest

from pipelines.citations.saos_regulations import judgment_references, parse_regulation, saos_pairs

KK_283463 = {  # page 347, judgment 283463
    "journalTitle": "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny", "journalNo": 88, "journalYear": 1997,
    "journalEntry": 553,
    "text": "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny (Dz. U. z 1997 r. Nr 88, poz. 553 - art. 11; art. 11 § 2; "
            "art. 12; art. 276; art. 284; art. 284 § 2; art. 294; art. 294 § 1; art. 65; art. 65 § 1)"}
KPC_13408 = {  # page 347, judgment 13408
    "journalTitle": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego", "journalNo": 43,
    "journalYear": 1964, "journalEntry": 296,
    "text": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego (Dz. U. z 1964 r. Nr 43, poz. 296 - "
            "art. 13; art. 13 § 2; art. 385; art. 626(13); art. 626(13) § 2; art. 626(9))"}
KC_94854 = {  # page 347, judgment 94854: a range
    "journalTitle": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny", "journalNo": 16, "journalYear": 1964,
    "journalEntry": 93,
    "text": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny (Dz. U. z 1964 r. Nr 16 poz. 93 - art. 6, art. 118, "
            "art. 120, art. 361, art. 361 § 1, art. 362, art. 471, art. 117-125)"}
PZP_118014 = {  # page 347, judgment 118014: the unified text of the p.z.p.
    "journalTitle": "Obwieszczenie Marszałka Sejmu Rzeczypospolitej Polskiej z dnia 8 czerwca 2010 r. w sprawie "
                    "ogłoszenia jednolitego tekstu ustawy - Prawo zamówień publicznych",
    "journalNo": 113, "journalYear": 2010, "journalEntry": 759,
    "text": "Obwieszczenie Marszałka Sejmu Rzeczypospolitej Polskiej z dnia 8 czerwca 2010 r. w sprawie ogłoszenia "
            "jednolitego tekstu ustawy - Prawo zamówień publicznych (Dz. U. z 2010 r. Nr 113 poz. 759 - art. 29 ust. 1, "
            "art. 29 ust. 2, art. 36 ust. 1 pkt 3, art. 186 ust. 2, art. 186 ust. 2 zd. 2, art. 198a, art. 198b)"}
REG_117969 = {  # page 347, judgment 117969: a regulation's §
    "journalTitle": "Rozporządzenie Prezesa Rady Ministrów z dnia 22 marca 2010 r. w sprawie regulaminu postępowania "
                    "przy rozpoznawaniu odwołań",
    "journalNo": 48, "journalYear": 2010, "journalEntry": 280,
    "text": "Rozporządzenie Prezesa Rady Ministrów z dnia 22 marca 2010 r. w sprawie regulaminu postępowania przy "
            "rozpoznawaniu odwołań (Dz. U. z 2010 r. Nr 48 poz. 280 - § 13 ust. 3 zd. 2)"}
USM_35119 = {  # page 347, judgment 35119: no unit listed
    "journalTitle": "Ustawa z dnia 15 grudnia 2000 r. o spółdzielniach mieszkaniowych", "journalNo": 4,
    "journalYear": 2001, "journalEntry": 27,
    "text": "Ustawa z dnia 15 grudnia 2000 r. o spółdzielniach mieszkaniowych (Dz. U. z 2001 r. Nr 4, poz. 27 - )"}
AMENDING = {  # page 347: an amending act is its own act
    "journalTitle": "Ustawa z dnia 5 listopada 2009 r. o zmianie ustawy - Prawo zamówień publicznych oraz ustawy o "
                    "kosztach sądowych w sprawach cywilnych",
    "journalNo": 206, "journalYear": 2009, "journalEntry": 1591,
    "text": "Ustawa z dnia 5 listopada 2009 r. o zmianie ustawy - Prawo zamówień publicznych oraz ustawy o kosztach "
            "sądowych w sprawach cywilnych (Dz. U. z 2009 r. Nr 206 poz. 1591 - art. 11 ust. 8)"}
KPC_LOST = {  # page 347, judgment 94855: SAOS lost the superscript too ("39831")
    "journalTitle": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego", "journalNo": 43,
    "journalYear": 1964, "journalEntry": 296,
    "text": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego (Dz. U. z 1964 r. Nr 43 poz. 296 - "
            "art. 328 § 2, art. 365 § 1, art. 382, art. 476 § 1 pkt 1, art. 39831 pkt 2, art. 398(15) § 1)"}


def test_articles_of_a_code() -> None:
    refs = parse_regulation(KK_283463)
    assert {r.pair for r in refs} == {("pl:kk", n) for n in ("11", "12", "276", "284", "294", "65")}
    assert all(r.in_corpus and r.unit == "art" for r in refs)
    assert refs[1].text == "art. 11 § 2" and refs[1].article == "11"


def test_superscripts_in_corpus_form() -> None:
    assert {r.article for r in parse_regulation(KPC_13408)} == {"13", "385", "626^13", "626^9"}
    assert {r.article for r in parse_regulation(KPC_LOST)} == {"328", "365", "382", "476", "398^31", "398^15"}


def test_a_range_cites_every_article() -> None:
    arts = {r.article for r in parse_regulation(KC_94854)}
    assert {str(n) for n in range(117, 126)} <= arts and "6" in arts


def test_unified_text_regulation_amending_act_and_empty_list() -> None:
    assert {r.pair for r in parse_regulation(PZP_118014)} == {
        ("pl:pzp", "29"), ("pl:pzp", "36"), ("pl:pzp", "186"), ("pl:pzp", "198a"), ("pl:pzp", "198b")}
    assert [r.pair for r in parse_regulation(REG_117969)] == [("pl:du:2010:280", "§13")]
    assert [r.pair for r in parse_regulation(AMENDING)] == [("pl:du:2009:1591", "11")]
    assert parse_regulation(USM_35119) == []


def test_judgment_pairs() -> None:
    item = {"id": 1, "referencedRegulations": [KK_283463, KPC_13408]}
    pairs = saos_pairs(item)
    assert ("pl:kk", "284") in pairs and ("pl:kpc", "626^13") in pairs and len(pairs) == 10
    assert saos_pairs({"id": 2, "referencedRegulations": []}) == set()
    assert saos_pairs({"id": 3}) == set()
    assert saos_pairs({"id": 4, "referencedRegulations": None}) == set()


def test_a_bare_paragraph_of_a_code_is_no_pair_but_a_regulations_is() -> None:
    # page 347, judgment 10937: SAOS lists "§ 3" under the k.p.c. ("na mocy 386 § 3 k.p.c.")
    kpc = {"journalTitle": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego", "journalNo": 43,
           "journalYear": 1964, "journalEntry": 296,
           "text": "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego (Dz. U. z 1964 r. Nr 43 poz. "
                   "296 - art. 98; § 3)"}
    assert ("pl:kpc", "§3") in {r.pair for r in parse_regulation(kpc)}  # parsed as SAOS lists it …
    assert saos_pairs({"id": 5, "referencedRegulations": [kpc, REG_117969]}) == {  # … but no pair
        ("pl:kpc", "98"), ("pl:du:2010:280", "§13")}


def test_bad_entries() -> None:
    assert parse_regulation({}) == []
    assert parse_regulation({"journalTitle": "coś", "text": "bez listy"}) == []
    assert parse_regulation({"journalTitle": None, "journalYear": "x", "journalEntry": None, "text": None}) == []
    with pytest.raises(ValueError):
        parse_regulation("art. 5")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        judgment_references({"referencedRegulations": "art. 5"})
