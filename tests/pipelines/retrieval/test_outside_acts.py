"""Acts the corpus does not hold, named in a query."""

from __future__ import annotations

import pytest

from pipelines.retrieval.outside_acts import act_named_by_title, catalogue, named_outside_acts


def ids(query: str) -> list[str]:
    return [a.id for a in named_outside_acts(query)]


@pytest.mark.parametrize("query, act", [
    ("Czy zgodnie z ustawą o prawach konsumenta mogę zwrócić buty?", "pl:upk"),
    ("Czy zgodnie z RODO sklep musi usunąć moje dane?", "eu:2016/679"),
    ("według k.s.h. zarząd odpowiada", "pl:ksh"),
    ("przepisy Prawa budowlanego", "pl:pb"),  # the 1994 act, not the 1974 one of the same title
    ("w kodeksie rodzinnym", "pl:kro"),  # the 1950 "Kodeks rodzinny" means today's k.r.o.
    ("ustawy o ochronie praw lokatorów", "pl:uopl"),
    ("Prawo o ruchu drogowym", "pl:prd"),
])
def test_named(query: str, act: str):
    assert ids(query)[:1] == [act]


@pytest.mark.parametrize("query", ["Kto jest konsumentem?", "Kodeks karny", "art. 415 k.c.",
                                   "Czy mogę odstąpić od umowy kupionej przez internet?"])
def test_held_or_unnamed(query: str):
    assert ids(query) == []


def test_held_acts_are_not_outside():
    held = {"pl:kc", "pl:kpc", "pl:kp", "pl:kk"}
    assert not held & {a.id for a in catalogue()}


def test_title_of_an_act():
    assert act_named_by_title("Ustawa z dnia 15 września 2000 r. Kodeks spółek handlowych.") == "pl:ksh"
    assert act_named_by_title("Ustawa z dnia 24 marca 1920 r. o nabywaniu nieruchomości przez cudzoziemców") \
        == "pl:ustawa:o-nabywaniu-nieruchomosci-przez-cudzoziemcow"
