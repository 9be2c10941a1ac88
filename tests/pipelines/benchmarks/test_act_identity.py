"""Act identity on SAOS judgments: the dev/test rule for the dump pages, and the two measures on a judgment
whose right answers are known."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.benchmarks import act_identity as AI
from pipelines.reads import ReadService
from pipelines.resolver import CitationResolver

PAGES = (347, 355, 924, 995, 1117, 1287, 1324, 1338)


def test_pages_alternate_dev_and_test_in_ascending_order() -> None:
    assert AI.split_pages(PAGES) == {347: "dev", 355: "test", 924: "dev", 995: "test", 1117: "dev", 1287: "test",
                                     1324: "dev", 1338: "test"}
    assert AI.saos_split("x/judgments-page-355.json", PAGES) == "test"
    with pytest.raises(ValueError, match="not a SAOS dump page"):
        AI.saos_split("x/page.json", PAGES)


def test_the_shipped_pages_keep_347_dev_and_355_test(sample_dir: Path) -> None:
    files = AI.page_files(sample_dir / "pl" / "saos")
    assert [p.name for p in files["dev"]][:1] == ["judgments-page-347.json"]
    assert [p.name for p in files["test"]][:1] == ["judgments-page-355.json"]
    assert len(files["dev"]) == len(files["test"])


def test_date_ids_of_a_saos_entry() -> None:
    assert AI.saos_date_ids({"journalTitle": "Ustawa z dnia 17 grudnia 1998 r. o emeryturach i rentach z Funduszu "
                                             "Ubezpieczeń Społecznych"}) == {"pl:ustawa:1998-12-17"}
    assert AI.saos_date_ids({"journalTitle": "Rozporządzenie Rady Ministrów z dnia 7 lutego 1983 r. w sprawie wieku "
                                             "emerytalnego"}) == {"pl:rozporzadzenie:1983-02-07"}
    assert AI.saos_date_ids({"journalTitle": "Obwieszczenie Ministra Pracy z dnia 21 kwietnia 1989 r. w sprawie "
                                             "ogłoszenia jednolitego tekstu ustawy z dnia 25 listopada 1986 r. o …"}) \
        == {"pl:ustawa:1986-11-25"}
    assert AI.saos_date_ids({"journalTitle": "Konwencja o ochronie praw człowieka"}) == set()


def _entry(title: str, year: int, entry: int, units: str) -> dict:
    return {"journalTitle": title, "journalNo": 1, "journalYear": year, "journalEntry": entry,
            "text": f"{title} (Dz. U. z {year} r. Nr 1, poz. {entry} - {units})"}


def test_both_measures_on_a_judgment_with_known_answers(corpus_home: Path) -> None:
    """The judgment cites art. 415 k.c. (held), art. 27 of the consumer rights act and art. 5 of a
    statute by its date only (not held), and art. 12 of the k.p.c. SAOS files under the k.c.; SAOS
    lists the k.c., the consumer act, the dated statute — and art. 100 k.p.k., which the text does
    not cite."""
    resolver = CitationResolver(ReadService.at(corpus_home))
    text = ("Sąd zważył: art. 415 k.c. oraz art. 27 ustawy o prawach konsumenta, a także art. 5 ustawy z dnia "
            "17 grudnia 1998 r.; art. 12 k.p.c.")
    item = {"id": 1, "judgmentDate": "2025-12-01", "referencedRegulations": [
        _entry("Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny", 1964, 93, "art. 415; art. 12"),
        _entry("Ustawa z dnia 30 maja 2014 r. o prawach konsumenta", 2014, 827, "art. 27"),
        _entry("Ustawa z dnia 17 grudnia 1998 r. o emeryturach i rentach z Funduszu Ubezpieczeń Społecznych",
               1998, 1118, "art. 5"),
        _entry("Ustawa z dnia 6 czerwca 1997 r. - Kodeks postępowania karnego", 1997, 555, "art. 100")]}
    held_row, other = AI.evaluate_identity(resolver, [item], {1: text}, "dev", frozenset({"pl:kc"}))
    # held (here the k.c. only): (kc, 415) right; SAOS's (kc, 12) is found (art. 12 is in the text) but given
    # the k.p.c.: a recall miss; and the k.p.c.'s (not held here) art. 12 is comparable and wrong
    assert (held_row.correct, held_row.comparable, held_row.gold_identified, held_row.gold_found) == (1, 1, 1, 2)
    assert [w["resolved"] for w in other.wrong] == ["pl:kpc"]
    # not held: the consumer act and the dated statute (its date is the SAOS act's) are right; art. 100 k.p.k.
    # is not in the text, so it is neither found nor missed by identity, only by the act set
    assert (other.correct, other.comparable, other.gold_identified, other.gold_found) == (2, 3, 2, 2)
    assert (other.act_tp, other.act_fp, other.act_fn) == (2, 1, 1)
    assert (held_row.act_tp, held_row.act_fp, held_row.act_fn) == (1, 0, 0)
