"""``editorial_form``: ISAP reprints are editorial, amendments stay changes.

Every pair is a passage of the k.p. (2016-09-22 / 2025-12-10) or k.p.c. (2023-08-16 / 2024-02-16)
ISAP texts as lexpipe parsed them (checked against the PDFs, bench/diff_sample.py), shortened.
"""

import datetime as dt

import pytest

from pipelines.statutes.diff import diff_versions, editorial_form
from schemas.arrow import ARTICLES, from_rows
from tests.pipelines.statutes.test_diff import _art

EDITORIAL = [
    # k.p. art. 4 (and 58 more): the 2016 PDF ends a repeal marker with a full stop
    ("(uchylony).", "(uchylony)"),
    ("§ 1. Zdanie.\n§ 2. (uchylony).\n§ 3. (uchylony).", "§ 1. Zdanie.\n§ 2. (uchylony)\n§ 3. (uchylony)"),
    ("(utracił moc).", "(utracił moc)"),  # k.p. art. 103
    ("a) o bezskuteczności wypowiedzeń,\nb) (uchylona),\nc) o przywracaniu do pracy.",  # k.p. art. 69
     "a) o bezskuteczności wypowiedzeń,\nb) (uchylona) c) o przywracaniu do pracy."),
    ("3) (uchylony);\n4) porę nocną;", "3) (uchylony)\n4) porę nocną;"),  # k.p. art. 104^1
    ("4) z upływem czasu, na który była zawarta.\n5) uchylony\n§ 2. Umowa",  # k.p. art. 30 § 1 pkt 5
     "4) z upływem czasu, na który była zawarta.\n5) (uchylony)\n§ 2. Umowa"),
    ("nie może przekroczyć 20% wynagrodzenia", "nie może przekroczyć 20 % wynagrodzenia"),  # k.p. art. 77^3
    ("Minister Pracy i Polityki Socjalnej określi, w drodze", "Minister Pracy i Polityki Socjalnejokreśli, w drodze"),
    ("Przepisy art. 179 § 4– 6 stosuje się", "Przepisy art. 179 § 4–6 stosuje się"),  # k.p. art. 178^1
    ("pracownika–ojca wychowującego", "pracownika – ojca wychowującego"),  # k.p. art. 163
    ("w zakładzie opiekuńczo- -leczniczym,", "w zakładzie opiekuńczo-leczniczym,"),  # k.p. art. 182
    ("kasa oszczędnościowo-kredytowa,", "kasa oszczędnościowo- -kredytowa,"),  # k.p.c. art. 205^2
    ("w art. 579^2 § 1 i § 2,sąd może", "w art. 579^2 § 1 i § 2, sąd może"),  # k.p.c. art. 579^3
    ("§ 1. Jeżeli osoba", "§ 1.Jeżeli osoba"),  # k.p.c. art. 598^15
    ("1. Pełnomocnictwo może być\n§ 2. Pełnomocnictwo", "§ 1. Pełnomocnictwo może być\n§ 2. Pełnomocnictwo"),  # k.p.c. 88
    ("przepisów art. 8091 § 1 pkt 5", "przepisów art. 809^1 § 1 pkt 5"),  # k.p.c. art. 986^1
    ("o których mowa w art. 761 § 11, jest", "o których mowa w art. 761 § 1^1, jest"),  # k.p.c. art. 760^2
    ("między godzinami 2100 a 700.", "między godzinami 21^00 a 7^00."),  # k.p. art. 151^7 (hours)
    ("Ubezpieczeń Społecznych (Dz. U. z 2021 r. poz. 291, 353, 794 i 1621). Wypłata",  # k.p.c. art. 890
     "Ubezpieczeń Społecznych. Wypłata"),
    ("zwaną dalej „służbą bhp”,", 'zwaną dalej "służbą bhp",'),
    ("stosuje się odpowiednio…", "stosuje się odpowiednio..."),
    ("w\u00a0terminie 7\u00a0dni", "w terminie 7 dni"),
]

CHANGED = [
    ("2) zatrudnia do 20 pracowników i", "2) zatrudnia do 50 pracowników i"),  # k.p. art. 237^11
    ("zawarta na piśmie przez pracowników z pracodawcą.",  # k.p. art. 125
     "zawarta przez pracowników z pracodawcą na piśmie pod rygorem nieważności."),
    ("w art. 191 § 5 pora nocna", "w art. 191 § 2^1–2^3 i § 2^6 pora nocna"),  # k.p. art. 203
    ("§ 1. Sąd rozpoznaje zażalenie na posiedzeniu niejawnym w składzie trzech sędziów.",  # k.p.c. art. 397
     "§ 1. Sąd rozpoznaje zażalenie na posiedzeniu niejawnym w składzie jednego sędziego."),
    ("sąd na wniosek pracownika może w wyroku nałożyć na pracodawcę",  # k.p.c. art. 477^2
     "sąd na wniosek pracownika nakłada w wyroku na pracodawcę"),
    ("Pracownik, który wskutek mobbingu", "Pracownik, który doznał mobbingu lub wskutek mobbingu"),  # k.p. 94^3
    # k.p.c. art. 805: inside a sentence the § decides which unit is meant; an ISAP correction, kept
    ("mowa w § 1 zdanie drugie oraz w 1^1, dokonuje", "mowa w § 1 zdanie drugie oraz w § 1^1, dokonuje"),
    # k.p.c. art. 585^1: a reference rewritten (the same act, named otherwise) is the legislator's wording
    ("art. 119^1a ustawy z dnia 25 lutego 1964 r. – Kodeks rodzinny i opiekuńczy (Dz. U. z 2020 r. poz. 1359)",
     "art. 119^1a Kodeksu rodzinnego i opiekuńczego"),
    # what the normalisation must not merge (not in these PDFs, guards)
    ("w art. 5 a także w art. 7", "w art. 5a także w art. 7"),
    ("o których mowa w § 11,", "o których mowa w § 12,"),
    ("w § 1 1", "w § 11"),
    ("kary od 1 500 zł", "kary od 1500 zł"),  # a space between digits is kept even as thousands separator
    ("wypowiedzenia, lub", "wypowiedzenia lub"),  # a comma outside a repeal marker is wording
    ("wyrok został uchylony.", "wyrok został uchylony"),  # not a repeal marker: the stop stays
    ("5) uchylony", "5) zmieniony"),
    ("„służbą bhp”", "„służbą BHP”"),
    ("od 60% wynagrodzenia", "od 80 % wynagrodzenia"),
]


@pytest.mark.parametrize("old,new", EDITORIAL)
def test_typographic_variants_are_editorial(old, new):
    assert editorial_form(old) == editorial_form(new)


@pytest.mark.parametrize("old,new", CHANGED)
def test_amendments_stay_changes(old, new):
    assert editorial_form(old) != editorial_form(new)


def test_diff_versions_classes_reprints_as_editorial():
    old = from_rows([_art("4", "(uchylony)."), _art("77^3", "nie może przekroczyć 20% wynagrodzenia"),
                     _art("237^11", "2) zatrudnia do 20 pracowników i"),
                     _art("9", "(uchylony).", status="repealed"), _art("30", "5) uchylony")], ARTICLES)
    v = dt.date(2025, 12, 10)
    new = from_rows([_art("4", "(uchylony)", version=v), _art("77^3", "nie może przekroczyć 20 % wynagrodzenia", version=v),
                     _art("237^11", "2) zatrudnia do 50 pracowników i", version=v),
                     _art("9", "(uchylony)", status="repealed", version=v),
                     _art("30", "5) uchylony", pending="5) (uchylony)", version=v)], ARTICLES)
    got = {r["number"]: r["change"] for r in diff_versions(old, new).to_pylist()}
    # a reading announced for later is a change even when it only reprints the marker
    assert got == {"4": "editorial", "77^3": "editorial", "237^11": "changed", "9": "editorial", "30": "changed"}
