"""Our German parsers against their own source files, word by word (real files).

Where the two BGB sources agree, the comparison cannot see a word both parsers dropped or a page
header one of them leaked; this audit can. Every allowance below says what it is and why."""

from __future__ import annotations

from collections import Counter

import pytest

from pipelines.statutes.de.source_fidelity import Fidelity, markdown_fidelity, pdf_fidelity, words
from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.model import german_acts

# "(XXXX)" marks a §-heading placeholder in bundestag/gesetze; the parser keeps no trace of it
PLACEHOLDER = "XXXX"
# "Reichs              behörden": the Markdown renders an inline element as a run of spaces inside the
# word; close_wide_gaps joins it (the PDF prints "Reichsbehörden")
BGB_CLOSED = Counter({"Reichsbehörden": 2, "Reichsanstalten": 2, "Reichsfiskus": 1})


@pytest.fixture(scope="module")
def pdf(bgb_pdf):
    """parse_gii_pdf(the BGB PDF), parsed once per session (conftest.py)."""
    return bgb_pdf


def test_words():
    assert words("§ 573b (1) Sach- und Rechts\ufffemängel, „so“") == ["§", "573b", "1", "Sach", "und", "Rechts",
                                                                       "mängel", "so"]


def test_bgb_pdf_keeps_every_word(pdf):
    f = pdf_fidelity(pdf)
    assert isinstance(f, Fidelity) and f.source_words > 220_000
    assert f.invented == Counter()  # no running header, page footer or footnote marker inside a unit
    # the one word not kept: "§§ 2354 bis 2359 (weggefallen)" is followed by a second "(weggefallen)"
    # line; the range's status note is kept once
    assert f.missing == Counter({"weggefallen": 1})


def test_bgb_pdf_official_notes_of_structure_headings(pdf):
    # "Amtlicher Hinweis" printed under a Titel/Untertitel belongs to that heading, not to a §
    noted = {n.id: n.notes for n in pdf.structure if n.notes}
    assert len(noted) == 6
    assert noted["de:bgb:book:2:division:2"][0].startswith(
        "Amtlicher Hinweis: Dieser Abschnitt dient auch der Umsetzung der Richtlinie 93/13/EWG")


@pytest.mark.parametrize("slug", list(german_acts()))
def test_markdown_keeps_every_word(sample_dir, slug):
    st = parse_markdown(sample_dir / "de" / "gesetze" / f"{slug}.md")
    f = markdown_fidelity(st)
    missing = Counter({w: n for w, n in f.missing.items() if w != PLACEHOLDER})
    invented = f.invented
    if slug == "bgb":
        assert invented == BGB_CLOSED
        assert missing == Counter({"Reichs": 5, "behörden": 2, "anstalten": 2, "fiskus": 1})
    elif slug == "gg":
        # the Abschnitt labels "IV a." / "X a." are ids IVa / Xa (parse_structure_heading)
        assert invented == Counter({"IVa": 1, "Xa": 1}) and missing == Counter({"IV": 1, "X": 1, "a": 2})
    elif slug == "hgb":
        # two unlabelled group headings printed as plain lines under a structure heading, before
        # its first § ("Aufbewahrung von Unterlagen", "Konsolidierungsgrundsätze"): not kept (known gap)
        assert invented == Counter()
        assert missing == Counter({"Aufbewahrung": 1, "von": 1, "Unterlagen": 1, "Konsolidierungsgrundsätze": 1})
    else:
        assert invented == Counter() and missing == Counter(), (slug, missing.most_common(10))


def test_markdown_footnote_paragraphs_stay_in_the_note(sample_dir):
    # Titel 8 (Dienstvertrag): the official note has two numbered paragraphs indented under it; the
    # second ("2. der Richtlinie 77/187/EWG …") was dropped as a stray Nummer before
    st = parse_markdown(sample_dir / "de" / "gesetze" / "bgb.md")
    (titel8,) = [n for n in st.structure if n.id == "de:bgb:book:2:division:8:title:8"]
    assert titel8.heading == "Dienstvertrag und ähnliche Verträge"
    assert titel8.notes == [
        "Amtlicher Hinweis: Dieser Titel dient der Umsetzung 1. der Richtlinie 76/207/EWG des Rates vom 9. Februar "
        "1976 zur Verwirklichung des Grundsatzes der Gleichbehandlung von Männern und Frauen hinsichtlich des "
        "Zugangs zur Beschäftigung, zur Berufsbildung und zum beruflichen Aufstieg sowie in Bezug auf die "
        "Arbeitsbedingungen (ABl. EG Nr. L 39 S. 40) und 2. der Richtlinie 77/187/EWG des Rates vom 14. Februar "
        "1977 zur Angleichung der Rechtsvorschriften der Mitgliedstaaten über die Wahrung von Ansprüchen der "
        "Arbeitnehmer beim Übergang von Unternehmen, Betrieben oder Betriebsteilen (ABl. EG Nr. L 61 S. 26)."]


def test_an_injected_leak_is_caught(pdf):
    # the audit is not vacuous: a page footer pasted into a § and a lost sentence both show up
    s = pdf.section("573b")
    text = s.text
    try:
        s.text = text.replace("(2)", "- Seite 174 von 483 - (2)", 1).replace("Nebenräume", "", 1)
        f = pdf_fidelity(pdf)
        assert f.invented == Counter({"Seite": 1, "174": 1, "von": 1, "483": 1})
        assert f.missing == Counter({"weggefallen": 1, "Nebenräume": 1})
    finally:
        s.text = text
