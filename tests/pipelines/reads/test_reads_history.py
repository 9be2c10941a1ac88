"""A unit's history: the versions in which it changed, with the word diff of each change."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import UnknownAct, UnknownUnit
from reads_data import NEW, OLD, kc_dir


def stored_diff(home: Path) -> dict[str, dict]:
    return {r["article_id"]: r for r in pq.read_table(kc_dir(home, NEW) / f"diff_from_{OLD}.parquet").to_pylist()}


@pytest.mark.parametrize("article_id", ["pl:kc:art:709^2", "pl:kc:art:647^1", "pl:kc:art:166", "pl:kc:art:613"])
def test_an_article_history_is_the_published_diff_row(reads: ReadService, corpus_home: Path, article_id):
    row = stored_diff(corpus_home)[article_id]
    h = reads.history(article_id)
    assert (h.held_versions, h.present_in) == ([OLD, NEW], [OLD, NEW])
    [c] = h.changes
    assert (c.from_version, c.to_version, c.source) == (OLD, NEW, "stored")
    assert (c.change, c.old_text, c.new_text, c.word_diff) == (row["change"], row["old_text"], row["new_text"],
                                                               row["unified_diff"])


def test_the_leasing_form_change(reads: ReadService):
    [c] = reads.history("pl:kc:art:709^2").changes
    assert c.change == "changed" and c.word_diff == (
        "Umowa leasingu [-powinna być zawarta na piśmie pod rygorem nieważności.-] "
        "{+wymaga zachowania formy dokumentowej.+}")
    [e] = reads.history("pl:kc:art:166").changes
    assert e.change == "editorial"  # only a Dz. U. citation was refreshed


def test_a_paragraph_history_is_its_own(reads: ReadService):
    [c] = reads.history("pl:kc:art:709^13:par:2").changes
    assert (c.change, c.source, c.old_status, c.new_status) == ("changed", "computed", "in_force", "in_force")
    assert c.old_text.startswith("§ 2.") and c.new_text.startswith("§ 2.")
    assert "[-na piśmie korzystającemu-] {+korzystającemu, w formie dokumentowej,+}" in c.word_diff
    assert reads.history("pl:kc:art:709^13:par:1").changes == []  # the other § of the article did not change


def test_an_announced_change_is_a_change_of_the_unit(reads: ReadService):
    [c] = reads.history("pl:kc:art:647^1:par:1").changes
    assert c.change == "changed" and "{+[from 2025-12-04:] § 1. Inwestor" in c.word_diff
    [added] = reads.history("pl:kc:art:647^1:par:1^1").changes
    assert (added.change, added.old_text, added.new_status) == ("added", None, "pending")
    assert reads.history("pl:kc:art:647^1:par:1^1").present_in == [NEW]


def test_unchanged_and_repealed_units_have_no_changes(reads: ReadService):
    for unit in ("pl:kc:art:22^1", "pl:kc:art:2", "pl:kc:art:42:par:4:pt:1", "pl:kc:book:PIERWSZA"):
        h = reads.history(unit)
        assert h.changes == [] and h.present_in == [OLD, NEW], unit


def test_unknown_units_have_no_history(reads: ReadService):
    with pytest.raises(UnknownUnit, match="no held version of pl:kc"):
        reads.history("pl:kc:art:99999")
    with pytest.raises(UnknownAct):
        reads.history("pl:zz:art:1")
