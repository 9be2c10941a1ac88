"""BGB from two sources: bundestag/gesetze Markdown (2021-12 text state) vs gesetze-im-internet PDF
(2024-11). They must agree on the §§ and their text except where the law really changed."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pipelines.statutes.de.sources_compare import compare_sources
from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.structure import normalize_text
from schemas.arrow import DIFF


@pytest.fixture(scope="session")
def sources(bgb_markdown, bgb_pdf):
    """parse_markdown(bgb.md), parse_gii_pdf(the BGB PDF): parsed once per session (conftest.py)."""
    return bgb_markdown, bgb_pdf


@pytest.fixture(scope="session")
def cmp(bgb_comparison):
    """compare_sources(*sources), computed once per session (conftest.py)."""
    return bgb_comparison


# §§ inserted between the two text states (Stiftungsrecht 2023, MoPeG 2024, Verbandsklagen, …)
NEW_IN_PDF = {"81a", "82a", "83a", "83b", "83c", "84a", "84b", "84c", "85a", "86a", "86b", "86c", "86d", "86e",
              "86f", "86g", "86h", "87a", "87b", "87c", "204a", "240a", "312l", "312m", "357e", "559e", "711a",
              "712a", "715a", "715b", "721a", "721b", "728a", "728b", "736a", "736b", "736c", "736d", "740a",
              "740b", "740c"}
# lettered §§ of the old Vormundschafts-/Betreuungsrecht and § 899a: gone without a trace in 2024
VANISHED = {"899a", "1791a", "1791b", "1791c", "1835a", "1836a", "1836b", "1836c", "1836d", "1836e", "1857a"}


def test_set_of_sections(cmp, sources):
    _, pdf = sources
    assert len(cmp.common) == 2731
    assert set(cmp.only_pdf) == NEW_IN_PDF
    assert all(pdf.section(n).status == "in_force" for n in cmp.only_pdf)
    # only in the Markdown: inside "§§ 1889 bis 1921 (weggefallen)" of the PDF, or vanished
    assert set(cmp.only_markdown) - set(cmp.only_markdown_in_pdf_ranges) == VANISHED
    assert set(cmp.only_markdown_in_pdf_ranges) == {"1901a", "1901b", "1901c", "1906a", "1908a", "1908b", "1908c",
                                                    "1908d", "1908e", "1908f", "1908g", "1908h", "1908i", "1908k"}
    assert cmp.set_agreement >= 0.98


def test_text_agreement(cmp):
    # The issue asks for ≥ 95 % of §§ with equal normalised text. Over all 2,731 common §§ it is
    # 87.9 %: between the 2021 and the 2024 text state 273 §§ were amended (10 %: the
    # Vormundschafts- und Betreuungsrecht §§ 1773–1921, the GbR §§ 705–740, the Stiftungsrecht
    # §§ 80–88 and 75 more, see test_german_sources_classify), so 90 % is the ceiling. Over the
    # §§ not amended it is 97.7 %, the rest editorial variants of the sources. Floors here guard
    # against parser regressions.
    assert cmp.text_agreement >= 0.875
    assert cmp.not_amended_agreement >= 0.975
    assert cmp.stable_text_agreement >= 0.95
    in_reforms = [d for d in cmp.differing
                  if any(lo <= int(re.match(r"\d+", d.number).group()) <= hi
                         for lo, hi in ((1773, 1921), (705, 740), (80, 88)))]
    assert len(in_reforms) >= 190


def test_no_difference_is_a_layout_artefact(cmp):
    # a parser artefact (joined/split word, line-break hyphen, stray marker) would leave texts that
    # differ only in spacing; a footer/header/footnote leftover would add those words
    for d in cmp.differing:
        assert re.sub(r"\s", "", d.markdown_text) != re.sub(r"\s", "", d.pdf_text), d.number
        assert not re.search(r"Seite \d+ von|gesetze-im-internet|Fußnote|Amtlicher Hinweis", d.pdf_text), d.number


def test_units_agree_where_text_agrees(cmp, sources):
    md, pdf = sources
    mds, pds = {s.number: s for s in md.sections}, {s.number: s for s in pdf.sections}
    differing = {d.number for d in cmp.differing}
    for n in cmp.common:
        if n not in differing:
            assert [u.id for u in mds[n].units] == [u.id for u in pds[n].units], n
            assert [normalize_text(u.text) for u in mds[n].units] == [normalize_text(u.text) for u in pds[n].units], n


def test_known_amendments_are_listed(cmp):
    by = {d.number: d for d in cmp.differing}
    assert by["7"].word_diff.endswith("an diesem [-Ort-] {+Orte+} seinen Wohnsitz. (2) Der Wohnsitz … Willen "
                                      "aufgehoben wird, sie aufzugeben.")
    assert "{+digitale Dienste nach § 1 Absatz 4 Nummer 1 des Digitale-Dienste-Gesetzes.+}" in by["312c"].word_diff
    assert (by["707a"].markdown_status, by["707a"].pdf_status) == ("pending", "in_force")
    assert all((by[n].markdown_status, by[n].pdf_status) == ("in_force", "repealed") for n in map(str, range(1558, 1564)))
    assert by["1814"].markdown_text.startswith("Der Vormund hat die zu dem Vermögen des Mündels")
    assert by["1814"].pdf_text.startswith("(1) Kann ein Volljähriger seine Angelegenheiten")
    assert "573b" not in by and "433" not in by and "823" not in by


def test_diff_table_from_version_diff(cmp):
    # the published diff asset's rules (pipelines.statutes.de.build.diff_german)
    assert cmp.diff.schema == DIFF
    rows = cmp.diff.to_pylist()
    changes = Counter(r["change"] for r in rows)
    assert changes["added"] == len(NEW_IN_PDF) and changes["removed"] == 25
    # editorial rows are the editorial class; every amendment is changed or repealed; and two §§
    # differ in their title only: § 686 gained an article (editorial), § 1436 a new title (changed)
    by_row = {r["number"]: r["change"] for r in rows}
    assert {c.number for c in cmp.of_kind("editorial")} | {"686"} == {n for n, c in by_row.items() if c == "editorial"}
    assert {c.number for c in cmp.of_kind("amendment")} | {"1436"} == \
        {n for n, c in by_row.items() if c in ("changed", "repealed")}
    assert changes["changed"] + changes["repealed"] + changes["editorial"] == len(cmp.differing) + 2
    r = [r for r in rows if r["article_id"] == "de:bgb:par:1558"][0]
    assert r["change"] == "repealed" and str(r["from_version"]) == "2021-12-21" and str(r["to_version"]) == "2024-11-28"


def test_report_and_summary(cmp):
    s = cmp.summary()
    assert s["common"] == 2731 and s["text_equal"] + s["text_differing"] == 2731
    report = cmp.markdown_report(max_sections=5)
    assert report.startswith("# de:bgb: Markdown (2021-12-21) vs PDF (2024-11-28)")
    assert "Only in the PDF (41)" in report
    assert "Differing §§ by class: 273 amendment, 56 editorial, 0 parser residue." in report
    assert "| Vormundschafts- und Betreuungsrecht | G zur Reform des Vormundschafts- und Betreuungsrechts v. " \
           "4.5.2021 I 882 | 2023-01-01 | 148 | 0 | 24 | 10 | 182 |" in report
    assert "## Amendments (273)" in report and "## Editorial variants (same words, another form) (56)" in report
    assert "## Parser residue (0)\n\nnone" in report
    assert report.count("\n- **§ ") == 10  # five per non-empty class
    assert "- **§ 7** [inflection]: [-Ort-]{+Orte+}" in report
    full = cmp.markdown_report()
    assert full.count("\n- **§ ") == 329 and "- **§ 491** — no known reform [reference]: " in full
    assert "- **§ 630d** — cites §§ of Vormundschafts- und Betreuungsrecht [reference]: [-1901a-]{+1827+}" in full


def test_different_acts_refused(sources, sample_dir):
    gg = parse_markdown(sample_dir / "de" / "gesetze" / "gg.md")
    with pytest.raises(ValueError, match=r"different acts: de:gg .*gg\.md.* vs de:bgb"):
        compare_sources(gg, sources[1])
