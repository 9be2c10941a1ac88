"""The changeset check blocks the index (and the stream behind it) only for what is truly broken:
a published version that fails the suites, or a systemic quarantine — never for one bad act."""

from __future__ import annotations

import json

import pytest

from core.layout import Layout
from pipelines.statutes.changeset_check import SYSTEMIC_MIN_ACTS, recheck_changeset, systemic


def _record(layout: Layout, key: str, quarantined: int) -> None:
    outcomes = [{"act_id": f"de:bad{i}", "version": "2012-08-06", "outcome": "quarantined", "reason": "articles_check",
                 "message": "expect_column_values_to_not_match_regex(text): '**' left in the text"}
                for i in range(quarantined)]
    path = layout.changesets("de") / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "outcomes": outcomes}), encoding="utf-8")


def test_a_gazette_issue_whose_one_act_is_quarantined_warns_and_lets_the_stream_go_on(tmp_path):
    """The wide slice's BGBl. I 2012 Nr. 17 changed one act, which was quarantined: the check
    blocked, the index did not move and every later commit refused to run behind it."""
    layout = Layout(tmp_path)
    _record(layout, "0028-74ae9567", 1)
    result = recheck_changeset(layout, "de", "0028-74ae9567", max_tokens=512)
    assert not result.passed and not result.blocking
    assert result.published == 0 and result.quarantined == 1 and "de:bad0" in result.description


def test_most_acts_of_a_large_changeset_quarantined_is_systemic_and_blocks(tmp_path):
    layout = Layout(tmp_path)
    _record(layout, "0002-88a07f50", SYSTEMIC_MIN_ACTS)
    result = recheck_changeset(layout, "de", "0002-88a07f50", max_tokens=512)
    assert result.blocking and "10 quarantined (articles_check 10)" in result.description


@pytest.mark.parametrize("published,quarantined,expected", [
    (0, 1, False), (0, SYSTEMIC_MIN_ACTS - 1, False), (0, SYSTEMIC_MIN_ACTS, True),
    (6180, 3, False), (100, 101, True), (101, 100, False),
])
def test_systemic_is_most_of_a_large_changeset(published, quarantined, expected):
    assert systemic(published, quarantined) is expected


def test_a_changeset_without_a_record_blocks(tmp_path):
    result = recheck_changeset(Layout(tmp_path), "de", "0005-b4e0b5c1", max_tokens=512)
    assert result.blocking and "no record" in result.description
