"""Garbage queries get a reason; real questions, typos, acronyms and citations never do."""

from __future__ import annotations

import pytest

from pipelines.retrieval.query_garbage import garbage_reason, mash_like


@pytest.mark.parametrize("query, why", [
    ("😀😀😀", "no words"),
    ("🙂 👍 !!!", "no words"),
    ("???", "no words"),
    ("umowa\x00najmu", "control characters (U+0000)"),
    ("\x07", "control characters"),
    ("asdfgh", "random typing"),
    ("qwerty uiop", "random typing"),
    ("jkjkjk", "random typing"),
    ("sdfsdf dfgdfg", "random typing"),
    ("i", "only stop words (i)"),
    ("czy", "only stop words"),
    ("und", "only stop words"),
    ("co to jest", "only stop words (co, to, jest)"),
])
def test_garbage(query: str, why: str):
    reason = garbage_reason(query)
    assert reason is not None and why in reason


@pytest.mark.parametrize("query", [
    "Kto jest konsumentem?",
    "Czy mogę odstąpić od umowy kupionej przez internet?",
    "konsumnet",  # a typo: searched, the retrievers cope or the confidence says so
    "RODO", "ZUS", "krs", "kpk",  # acronyms and dotless abbreviations
    "art. 415", "II CSK 123/10", "2024",
    "Mietvertrag kündigen",
    "Grzegorz Brzęczyszczykiewicz",
    "umowa\tnajmu\nforma",  # tabs and line breaks are text
])
def test_real_queries_are_searched(query: str):
    assert garbage_reason(query) is None


def test_mash_needs_four_letters_and_a_random_look():
    assert not mash_like("krs")
    assert mash_like("hjkl") and mash_like("xcvbnm") and mash_like("aaaa")
    assert not mash_like("szczypce") and not mash_like("umowa")
