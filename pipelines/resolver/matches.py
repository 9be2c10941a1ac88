"""How exactly a citation matched the corpus: the match kinds, what each means, and their order.

A unit's kind answers "does the corpus hold what was cited, at the date asked?"; a citation's kind is
the least exact of its units' (``art. 98 § 1 i 3 k.p.c.`` is ``exact`` only when both paragraphs are).
Numbers are compared as ids, never as prefixes or by similarity: ``§ 823`` is ``de:bgb:par:823`` and
nothing else, so it can never land on ``§ 1823``.
"""

from __future__ import annotations

EXACT = "exact"  # the unit is in the version in force at the date (its status may still be repealed or pending)
READ_AS = "read_as"  # the printed number is no unit; read with a lost superscript (4491 → 449^1) it is exact
RANGE_TOO_LONG = "range_too_long"  # an end of a valid range of more than MAX_RANGE units (art. 1–70): not expanded
RANGE_BACKWARDS = "range_backwards"  # an end of a range whose first unit comes after its last (art. 7–5)
NOT_IN_VERSION = "not_in_version"  # another held version has it, the one in force at the date does not (held_in)
PARTIAL = "partial"  # the article is there at the date, the cited paragraph/point/letter is in no held version
NOT_FOUND = "not_found"  # the act is held, no held version has the unit (hallucinated, or gone before the oldest)
NOT_COVERED = "not_covered"  # the date is before the act's oldest held version: what was in force is unknown
ACT_NOT_HELD = "act_not_held"  # the act is recognised (an id; act names it) but the corpus holds no version of it
AMBIGUOUS = "ambiguous"  # no act named; held acts that have such a unit are listed as candidates, none picked
NO_ACT = "no_act"  # no act named and no held act has such a unit at the date

KINDS: tuple[str, ...] = (EXACT, READ_AS, RANGE_TOO_LONG, RANGE_BACKWARDS, NOT_IN_VERSION, PARTIAL, NOT_FOUND, NOT_COVERED,
                          ACT_NOT_HELD, AMBIGUOUS, NO_ACT)

DESCRIPTIONS: dict[str, str] = {
    EXACT: "the unit exists in the version in force at the date",
    READ_AS: "the number as printed is no unit of the act; read with a superscript lost in print (4491 as 449^1, "
             "see printed) the unit exists at the date. Likely in PDF-extracted text, suspicious in an LLM's "
             "answer: a verifier should not count it as exact",
    RANGE_TOO_LONG: "the citation is a range of more than 60 units (art. 1–70): it is valid at the date (both ends "
                    "exist, the first before the last; range.units says how many it covers) but only its two ends "
                    "are listed, each marked so — never read them as the whole range",
    RANGE_BACKWARDS: "the citation is a range whose first unit comes after its last in the act (art. 7–5): no unit "
                     "lies between its ends, so it cites nothing as written; its two ends are listed, each marked so",
    NOT_IN_VERSION: "the unit exists in another held version, not in the one in force at the date (see held_in)",
    PARTIAL: "the article exists at the date but the cited paragraph/point/letter is in no held version "
             "(article_id names the article)",
    NOT_FOUND: "the act is held but no held version has this unit: a non-existent provision (or one repealed and "
               "dropped from the text before the oldest held version)",
    NOT_COVERED: "the date is before the oldest held version of the act",
    ACT_NOT_HELD: "the act is recognised (act names it: title, date, address when a table knows it) but the corpus "
                  "holds no version of it: nothing is said about the unit",
    AMBIGUOUS: "no act is named; candidates lists the units of held acts (of the citation's language) that match "
               "at the date, none is picked",
    NO_ACT: "no act is named and no held act of the citation's language has such a unit at the date",
}

_RANK = {k: i for i, k in enumerate(KINDS)}


def least_exact(kinds: list[str]) -> str:
    """The citation-level verdict: the least exact of its units' kinds (order of :data:`KINDS`)."""
    if not kinds:
        raise ValueError("a citation-level verdict needs at least one unit kind")
    return max(kinds, key=_RANK.__getitem__)
