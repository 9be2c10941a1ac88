"""One registry per extraction: ``registry()`` is read once per text, not once per lookup."""

from __future__ import annotations

import pytest

from pipelines.citations import registry_pin
from pipelines.citations.german import extract_citations as german
from pipelines.citations.polish import extract_citations as polish
from schemas.acts import registry


@pytest.fixture()
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []

    def counting():
        seen.append(1)
        return registry()

    monkeypatch.setattr(registry_pin, "registry", counting)
    return seen


def test_a_polish_text_reads_the_registry_once(calls: list[int]) -> None:
    text = ("art. 415 k.c., art. 98 § 1 k.p.c., art. 27 ustawy o prawach konsumenta, art. 10 RODO, "
            "art. 148 § 2 k.k. w zw. z art. 11 § 2 k.k. oraz art. 5 ustawy z dnia 22 lipca 2006 r.")
    assert len(polish(text)) == 7
    assert len(calls) == 1


def test_a_german_text_reads_the_registry_once(calls: list[int]) -> None:
    assert len(german("§ 823 Abs. 1 BGB i.V.m. § 1 KSchG, §§ 184 bis 187 SGG und Art. 3 GG")) == 5
    assert len(calls) == 1


def test_pins_nest_and_end(calls: list[int]) -> None:
    with registry_pin.pinned() as outer:
        with registry_pin.pinned() as inner:
            assert inner is outer and registry_pin.current() is outer
    assert len(calls) == 1
    registry_pin.current()  # outside a pin: registry() itself
    assert len(calls) == 2
