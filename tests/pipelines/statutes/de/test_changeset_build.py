"""The article-count bound of a German changeset moves with the units the source itself heads: an act
that really grew passes, a parser that invents or loses §§ still fails (``source_confirmed_delta``)."""

from __future__ import annotations

import pyarrow as pa

from pipelines.statutes.de.changeset_build import source_confirmed_delta, source_unit_headings

MARKDOWN = """---
Title: Verordnung
jurabk: V
slug: v
---

# Verordnung (V)

## § 1 Zweck

Text.

## § 2 Begriffe

Text.

### § 2a Neue Pflichten

Text.

## Art 3 Inkrafttreten

Text.

## Anlage 1 (zu § 2)

Tabelle.
""".encode()


def _diff(*rows: tuple[str, str]) -> pa.Table:
    return pa.table({"article_id": [a for a, _ in rows], "change": [c for _, c in rows]})


def test_the_headings_are_read_from_the_source():
    assert source_unit_headings(MARKDOWN) == {"par:1", "par:2", "par:2a", "art:3", "anl:1"}


def test_units_the_source_heads_move_the_expected_count():
    """§ 2a and Anlage 1 added, § 4 gone from the Markdown: +2 − 1."""
    diff = _diff(("de:v:par:2a", "added"), ("de:v:anl:1", "added"), ("de:v:par:4", "removed"),
                 ("de:v:par:1", "changed"))
    assert source_confirmed_delta(diff, MARKDOWN) == 1


def test_units_the_source_does_not_confirm_leave_the_bound_alone():
    """A parser that split § 2 into § 2 and a phantom § 2b, or lost § 1 while the Markdown still heads
    it, is not excused: the bound stays where the previous version put it."""
    diff = _diff(("de:v:par:2b", "added"), ("de:v:par:1", "removed"), ("de:v:eingangsformel", "added"))
    assert source_confirmed_delta(diff, MARKDOWN) == 0
