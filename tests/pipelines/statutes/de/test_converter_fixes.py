"""The converter's fixes are not amendments: the real ``Merge branch 'fixes'`` of 2012-10-18 (80
acts re-rendered) against its parent, through ``parse_markdown`` and ``diff_german``.

Each case is a real act of that commit: words the converter moved between units (an Anlage's
"(zu § …)" note, a wrapped heading line, a heading read as text) are ``editorial`` or no
difference at all, while the BBhV, which the same commit re-imported at a newer text state, keeps
its real amendments ``changed``. A BGBl amendment of two days earlier stays ``changed``.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipelines.statutes.de.build import _editorial, _heading_tail, _labels_moved, diff_german
from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.sources_classify import diff_hunks
from pipelines.statutes.de.tables import articles_table

FIXES = "f04c4916"  # Merge branch 'fixes', 2012-10-18 22:23
BGBL_1_45 = "5961e351"  # Merge branch 'bgbl/2012/1-45', 2012-10-16


def _diff(act_file, act: str, commit: str) -> dict[str, tuple[str, str]]:
    old, new = (articles_table(parse_markdown(act_file(act, c))) for c in (f"{commit}^1", commit))
    return {r["article_id"]: (r["change"], r["unified_diff"]) for r in diff_german(old, new).to_pylist()}


def test_an_annex_note_above_its_heading_goes_into_the_heading(act_file):
    old = parse_markdown(act_file("a/aeappro_2002", f"{FIXES}^1"))
    new = parse_markdown(act_file("a/aeappro_2002", FIXES))
    # printed above "### Anlage 2 Bescheinigung" before the fix, inside the heading after it
    assert "Anlage 2 (zu § 2 Abs. 7 Satz 1) Bescheinigung" in old.annexes
    assert old.annexes == new.annexes
    schluss = {s.id: s for s in old.sections}["de:aeappro_2002:schlussformel"]
    assert schluss.text.strip() == "Der Bundesrat hat zugestimmt."
    assert _diff(act_file, "a/aeappro_2002", FIXES) == {}


def test_a_heading_line_moved_into_the_next_units_title_is_editorial(act_file):
    diff = _diff(act_file, "a/aufenthg_2004", FIXES)
    assert diff["de:aufenthg_2004:par:22"][0] == "editorial"
    assert diff["de:aufenthg_2004:par:23"][0] == "editorial"
    assert "Aufenthaltsgewährung durch die obersten Landesbehörden" in diff["de:aufenthg_2004:par:23"][1]


def test_the_act_title_written_out_is_not_a_change_of_its_text_units(act_file):
    diff = _diff(act_file, "b/binschuo2008anh_ii", FIXES)
    text_units = {k: v for k, v in diff.items() if k.split(":")[-1].startswith("text")}
    assert len(text_units) >= 20
    assert {c for c, _ in text_units.values()} == {"editorial"}


def test_a_heading_read_as_the_last_line_of_a_unit_is_editorial(act_file):
    diff = _diff(act_file, "s/stgb", FIXES)
    change, shown = diff["de:stgb:par:58"]
    assert change == "editorial" and "Verwarnung mit Strafvorbehalt" in shown
    assert {c for c, _ in diff.values()} == {"editorial"}


@pytest.mark.parametrize("act", ["b/binschstro_2012", "m/moselschpv_1997"])
def test_a_label_printed_on_the_other_side_of_its_title_is_editorial(act_file, act):
    diff = _diff(act_file, act, FIXES)
    moved = {k for k, (_, shown) in diff.items() if "{+§ " in shown and "[-§ " in shown}
    assert len(moved) >= 2  # "{+§ 3.01+} Begriffsbestimmungen und Anwendungen [-§ 3.01-]"
    text_units = {k: c for k, (c, _) in diff.items() if k.split(":")[-1].startswith("text")}
    assert moved <= set(text_units) and set(text_units.values()) == {"editorial"}


@pytest.mark.parametrize("old, new, expected", [
    ("A § 3.01 Titel Text", "A Titel § 3.01 Text", True),  # a label on the other side of its title
    ("Abschnitt I. Schallzeichen Text", "Schallzeichen Abschnitt I. Text", True),
    ("A § 3.01 Titel Text", "A Titel § 3.02 Text", False),  # another number
    ("Er darf nicht zahlen, sondern leisten", "Er darf zahlen, sondern nicht leisten", False),  # not a label
    ("Der erste Satz gilt. Der zweite Satz gilt auch.", "Der zweite Satz gilt auch. Der erste Satz gilt.", False),
    ("A B C", "A B C D", False),  # a word added
])
def test_labels_moved(old: str, new: str, expected: bool):
    assert _labels_moved(diff_hunks(old, new)) is expected


def test_a_moved_label_is_editorial_only_in_a_text_unit():
    # inside a § a moved label is no converter's doing: the rule holds only where headings are text
    old = {"status": "in_force", "number": "1", "title": "T", "text": "§ 3.01 Titel Satz."}
    new = {**old, "text": "Titel § 3.01 Satz."}
    assert not _editorial(old, new)
    assert _editorial({**old, "number": "text"}, {**new, "number": "text"})


def test_real_new_wording_in_the_same_commit_stays_changed(act_file):
    diff = _diff(act_file, "b/bbhv", FIXES)
    change, shown = diff["de:bbhv:par:8"]
    assert change == "changed" and "Nicht beihilfefähig" in shown
    assert sum(c == "changed" for c, _ in diff.values()) >= 30


def test_an_amendment_stays_changed(act_file):
    diff = _diff(act_file, "s/sgb_8", BGBL_1_45)
    assert sum(c == "changed" for c, _ in diff.values()) >= 1


@pytest.mark.parametrize("old, new, expected", [
    ("Er tritt in Kraft. Zweiter Titel Verwarnung", "Er tritt in Kraft.", True),  # a heading line dropped
    ("Er tritt in Kraft.", "Er tritt in Kraft. Satz 2 gilt entsprechend.", False),  # a sentence added
    ("Er tritt in Kraft", "Er tritt in Kraft Gebührenverzeichnis", False),  # not after a sentence
    ("Er tritt in Kraft. Der Minister", "Er tritt. Der Minister", False),  # not at the end
    ("Es gilt: 1. die Gebühren;", "Es gilt: 1. die Gebühren; 2. die Auslagen;", False),  # a list item added
])
def test_heading_tail(old: str, new: str, expected: bool):
    (h,) = diff_hunks(old, new)
    assert _heading_tail(h, old, new) is expected


def test_heading_tail_of_a_schlussformel():
    old, new = "Der Reichsminister der Finanzen Muster 1 bis Muster 14", "Der Reichsminister der Finanzen"
    (h,) = diff_hunks(old, new)
    assert not _heading_tail(h, old, new)
    assert _heading_tail(h, old, new, formula=True)
