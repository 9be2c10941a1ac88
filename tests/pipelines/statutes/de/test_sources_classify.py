"""Classifying BGB Markdown-vs-PDF differences: amendment, editorial variant, parser residue.

The rules on hand-made word pairs first (each rule and its limits), then on the real comparison:
every class assignment on the real files is checked against the raw source files, so an editorial
variant is proven to be printed by the sources themselves, not produced by our parsers."""

from __future__ import annotations

import re
import unicodedata

import pytest

from pipelines.statutes.de.sources_classify import (
    AMENDMENT, EDITORIAL, REFORMS, RESIDUE, cited_sections, classify_hunk, classify_section, diff_hunks, reform_cited,
    reform_of, same_word,
)

BGB_PDF = ("de", "pdf", "BJNR001950896_bgb_gii_2024-11-28.pdf")


# ----------------------------------------------------------------------------------------------
# rules


@pytest.mark.parametrize("a, b, reason", [
    ("Ort", "Orte", "inflection"),  # dative -e
    ("Reugeldes", "Reugelds", "inflection"),
    ("Ermittelung", "Ermittlung", "inflection"),
    ("Vorschriften", "Vorschrift", "inflection"),
    ("finden", "findet", "inflection"),
    ("gelten", "gilt", "inflection"),
    ("den", "der", "inflection"),
    ("§", "§§", "inflection"),
    ("im", "in", "inflection"),
    ("Zivilprozeßordnung", "Zivilprozessordnung", "orthography"),
    ("Übrigen", "übrigen", "orthography"),
    ("Abs.", "Absatz", "abbreviation"),
    ("erstatten,", "erstatten;", "punctuation"),
    ("3,", "3", "punctuation"),
])
def test_same_word(a, b, reason):
    assert same_word(a, b) == reason


@pytest.mark.parametrize("a, b", [
    ("Gesellschaft", "Gesellschafter"),  # another noun, not an ending
    ("Stift", "Stifter"),
    ("einer", "seiner"),  # another paradigm: possessive added
    ("Vormund", "Betreuer"),
    ("6", "16"),  # digits must match exactly
    ("1901a", "1827"),
    ("Mutter", "Eltern"),
])
def test_different_words(a, b):
    assert same_word(a, b) is None


@pytest.mark.parametrize("old, new, kind, reason", [
    ("Sach- und", "Sach-und", RESIDUE, "spacing"),
    ("Immobiliar- Verbraucherdarlehen", "Immobiliar-Verbraucherdarlehen", RESIDUE, "spacing"),
    ("Verbraucherdarlehen", "Verbraucher-darlehen", RESIDUE, "hyphenation"),
    ("", "(1)", RESIDUE, "structure markers"),
    ("2. den", "den", RESIDUE, "structure markers"),
    ("Vertrag*)", "Vertrag", RESIDUE, "footnote marker"),
    ("", "- Seite 17 von 483 -", RESIDUE, "page furniture or footnote text"),
    ("", "Fußnote: (+++ § 573b: Zur Anwendung vgl. § 578 Abs. 3 Satz 1 +++)", RESIDUE,
     "page furniture or footnote text"),
    ("", "(weggefallen)", RESIDUE, "repeal note"),
    ("3,,", "3,", EDITORIAL, "punctuation"),
    ("finden die Vorschriften", "findet die Vorschrift", EDITORIAL, "inflection"),
    ("", "die", EDITORIAL, "function word"),
    ("Zivilprozeßordnung Fall", "Zivilprozessordnung Falle", EDITORIAL, "inflection+orthography"),
    ("6", "16", AMENDMENT, "reference"),
    ("2.", "3.", AMENDMENT, "reference"),  # a changed number looks like a Nummer marker: not residue
    ("2.", "c)", AMENDMENT, "reference"),  # § 81: a Nummer became a Buchstabe
    ("Telemedien.", "digitale Dienste nach § 1 Absatz 4 Nummer 1 des Digitale-Dienste-Gesetzes.", AMENDMENT,
     "reference"),
    ("einer", "seiner", AMENDMENT, "content words"),
    ("", "nicht", AMENDMENT, "content words"),  # a negation is never a function word here
    ("Vormund", "Betreuer", AMENDMENT, "content words"),
])
def test_classify_hunk(old, new, kind, reason):
    assert classify_hunk(old.split(), new.split()) == (kind, reason)


def test_repeated_preposition_is_editorial_only_when_repeated():
    # § 236: "gegen den Bund oder gegen ein Land" — the second "gegen" repeats the first
    before = "Mit einer Buchforderung gegen den Bund oder".split()
    assert classify_hunk([], ["gegen"], before) == (EDITORIAL, "function word")
    assert classify_hunk([], ["gegen"], "Mit einer Buchforderung an den Bund oder".split()) == \
        (AMENDMENT, "content words")


def test_section_level_rules():
    # one amendment hunk decides the § (the other hunks of a rewrite are part of it)
    c = classify_section("1", "(1) Der Vormund haftet. Fall", "(1) Der Betreuer haftet. Falle", "in_force", "in_force")
    assert c.kind == AMENDMENT and c.reasons == ["content words"]
    c = classify_section("2", "an diesem Ort", "an diesem Orte", "in_force", "in_force")
    assert (c.kind, c.reasons, c.evidence()) == (EDITORIAL, ["inflection"], "[-Ort-]{+Orte+}")
    # a status change is an amendment even without words …
    assert classify_section("3", "", "", "pending", "in_force").kind == AMENDMENT
    # … unless it is only "(weggefallen)" read as text on one side and as the status on the other
    c = classify_section("4", "", "(weggefallen)", "repealed", "in_force")
    assert (c.kind, c.reasons) == (RESIDUE, ["repeal note"])
    # the § title glued into the text
    c = classify_section("5", "Text.", "Teilkündigung des Vermieters Text.", "in_force", "in_force",
                         title="Teilkündigung des Vermieters")
    assert (c.kind, c.reasons) == (RESIDUE, ["title in text"])
    with pytest.raises(ValueError, match="§ 6: texts and status are equal"):
        classify_section("6", "gleich", "gleich", "in_force", "in_force")


def test_evidence_is_short():
    c = classify_section("7", "a " * 5, "a " * 5 + " ".join(f"w{i}" for i in range(100)), "in_force", "in_force")
    assert "…(88 words)…" in c.evidence() and len(c.evidence()) < 200


def test_reforms():
    assert reform_of("1773").name == "Vormundschafts- und Betreuungsrecht"
    assert reform_of("740c").name == "Personengesellschaftsrecht (MoPeG)"
    assert reform_of("87c").name == "Stiftungsrecht"
    assert reform_of("573b") is None and reform_of("1922") is None
    names = [r.name for r in REFORMS]
    assert len(names) == len(set(names))


def test_cited_sections():
    assert cited_sections("nach § 1827 Absatz 1 Satz 2 und den §§ 1850 bis 1854, §§ 28, 31a Abs. 1") == \
        {"1827", "1850", "1854", "28", "31a"}
    assert reform_cited("Patientenverfügung nach § 1901a Absatz 1", "Patientenverfügung nach § 1827 Absatz 1").name \
        == "Vormundschafts- und Betreuungsrecht"
    assert reform_cited("nach § 1827", "nach § 1827 und § 433") is None  # cited before already


def test_hunks_cover_the_whole_diff():
    hunks = diff_hunks("a b c d e", "a x c d e f")
    assert [(h.old, h.new) for h in hunks] == [(("b",), ("x",)), ((), ("f",))]


# ----------------------------------------------------------------------------------------------
# the real BGB comparison


@pytest.fixture(scope="module")
def cmp(bgb_comparison):
    """compare_sources(parse_markdown(bgb.md), parse_gii_pdf(the BGB PDF)), once per session
    (conftest.py; test_german_sources_compare checks the same comparison)."""
    return bgb_comparison


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text))


@pytest.fixture(scope="module")
def raw_sources(sample_dir):
    """The two source files' text, whitespace collapsed (Markdown escapes undone, pdfium's page text)."""
    import pypdfium2 as pdfium

    md = (sample_dir / "de" / "gesetze" / "bgb.md").read_text(encoding="utf-8")
    md = re.sub(r"\\([\\`*_{}\[\]()#+\-.!>\"'])", r"\1", md)
    doc = pdfium.PdfDocument(str(sample_dir.joinpath(*BGB_PDF)))
    pdf = "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    doc.close()
    return _flat(md), _flat(pdf.replace("\ufffe", "-"))


def test_counts_per_class(cmp):
    s = cmp.summary()
    assert (s["amendment"], s["editorial"], s["residue"]) == (273, 56, 0)
    assert s["amendment"] + s["editorial"] + s["residue"] == s["text_differing"] == 329
    # the 95 % over all §§ in both cannot be met: amendments alone are 10 % of them
    assert s["max_text_agreement"] == round((2731 - 273) / 2731, 4) < 0.95
    assert s["not_amended"] == 2458 and s["not_amended_agreement"] >= 0.975


def test_known_classes(cmp):
    by = {c.number: c for c in cmp.classes}
    assert (by["7"].kind, by["7"].evidence()) == (EDITORIAL, "[-Ort-]{+Orte+}")
    assert (by["40"].kind, by["40"].reasons) == (EDITORIAL, ["punctuation"])  # the PDF's footnote: comma removed
    assert by["132"].kind == EDITORIAL and "orthography" in by["132"].reasons  # Zivilprozeßordnung
    assert (by["362"].kind, by["362"].reasons) == (EDITORIAL, ["inflection"])  # Vorschriften finden/Vorschrift findet
    assert (by["705"].kind, by["705"].reform.name) == (AMENDMENT, "Personengesellschaftsrecht (MoPeG)")
    assert (by["1773"].kind, by["1773"].reform.name) == (AMENDMENT, "Vormundschafts- und Betreuungsrecht")
    assert (by["85"].kind, by["85"].reform.name) == (AMENDMENT, "Stiftungsrecht")
    assert (by["491"].kind, by["491"].reasons, by["491"].reform) == (AMENDMENT, ["reference"], None)  # PAngV § 6 → § 16
    assert "{+16+}" in by["491"].evidence()
    assert by["1558"].status_change == "in_force → repealed" and by["1558"].kind == AMENDMENT
    assert by["707a"].status_change == "pending → in_force"


def test_no_residue_hunk_left(cmp):
    # § 204 had one inside its amendment, "Unternehmensstabilisierungs- und - restrukturierungsgesetz"
    # (fixed in the PDF joiner). What remains classed residue at hunk level are Absatz/Nummer markers
    # added or dropped where an amendment renumbered the § — no spacing, hyphen, furniture, footnote
    residue = [(c.number, c.kind, h.reason) for c in cmp.classes for h in c.hunks if h.kind == RESIDUE]
    assert {reason for _, _, reason in residue} == {"structure markers"}
    assert all(kind == AMENDMENT for _, kind, _ in residue), residue


def test_editorial_variants_are_printed_by_the_sources(cmp, raw_sources):
    """Every editorial hunk's Markdown words occur in the Markdown file and its PDF words in the PDF:
    the variant is the sources', not something our parsers or normalisation made."""
    md_raw, pdf_raw = raw_sources
    by = {d.number: d for d in cmp.differing}
    checked = 0
    for c in cmp.of_kind(EDITORIAL):
        d = by[c.number]
        for h in c.hunks:
            for words, text, raw in ((h.old, d.markdown_text, md_raw), (h.new, d.pdf_text, pdf_raw)):
                if not words:
                    continue
                # the words with one neighbour each side, as printed (quotes/dashes were not normalised here)
                toks = text.split()
                i = next(k for k in range(len(toks)) if tuple(toks[k:k + len(words)]) == words)
                probe = " ".join(toks[max(0, i - 1):i + len(words) + 1])
                assert probe in raw or probe.replace(",,", ", ,") in raw, (c.number, probe)
                checked += 1
    assert checked >= 56


def test_amendments_outside_known_reforms_change_content(cmp):
    # the classifier never consults the reform table; amendments outside it are still content
    # or reference changes, listed for a reader to check
    rest = [c for c in cmp.of_kind(AMENDMENT) if c.reform is None]
    assert len(rest) == 55
    assert all(c.status_change or {"content words", "reference"} & set(c.reasons) for c in rest)
    # 11 of them newly cite a § of a reform: consequential amendments (§ 630d "§ 1901a" → "§ 1827")
    cites = {c.number: c.cites.name for c in rest if c.cites}
    assert len(cites) == 11 and cites["630d"] == "Vormundschafts- und Betreuungsrecht"
    assert cites["2101"] == "Stiftungsrecht"  # "§ 84" → "§ 80 Absatz 2 Satz 2"
    per = {r["reform"]: r for r in cmp.per_reform()}
    assert per["Vormundschafts- und Betreuungsrecht"]["amended"] == 148
    assert per["Vormundschafts- und Betreuungsrecht"]["cites"] == 10
    assert per["Personengesellschaftsrecht (MoPeG)"]["inserted"] == 15
    assert per["(no known reform)"]["amended"] == 44
    assert sum(r["amended"] + r["cites"] for r in per.values()) == 273
    assert sum(r["inserted"] for r in per.values()) == len(cmp.only_pdf)
    assert sum(r["removed"] for r in per.values()) == len(cmp.only_markdown)
