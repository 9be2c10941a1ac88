"""Legal HTML → clean text, and sections, on the real Open Legal Data and refex samples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipelines.case_law.html_text import clean_legal_html, fix_mojibake
from pipelines.case_law.sections import SECTION_HEADINGS, heading_name, split_sections
from schemas.expectations import CASE_SECTIONS

BGH_FILES = ["bgh-2018-04-09-vi-zr-19417.json", "bgh-2018-04-09-vi-zr-7816.json",
             "bgh-2018-04-10-4-str-32817.json", "bgh-2018-04-10-viii-zr-12717.json",
             "bgh-2018-04-10-xi-zr-46817.json"]


@pytest.fixture(scope="module")
def oldp(sample_dir: Path) -> Path:
    folder = sample_dir / "de" / "openlegaldata"
    if not folder.is_dir():
        pytest.skip(f"Open Legal Data samples not found at {folder}")
    return folder


def _fixture_case(path: Path, pk: int | None = None) -> dict:
    recs = [r for r in json.loads(path.read_text()) if r.get("model") == "cases.case"]
    return next(r for r in recs if pk is None or r["pk"] == pk)["fields"]


def _assert_well_formed(ct) -> None:
    text = ct.text
    # "<Bl. 142 der … Akte>" is text (an escaped &lt;…&gt; of the source); tags are not
    assert not re.search(r"</?(?:p|div|span|br|h[1-6]|dl|dt|dd|a|rd|sup|script|style|html|body)\b[^>]*>", text)
    assert "[ref=" not in text and "[/ref]" not in text
    prev_end = -1
    for b in ct.blocks:
        line = text[b.start:b.end]
        assert "\n" not in line and line == line.strip() and line
        assert b.start > prev_end and (b.start == 0 or text[b.start - 1] == "\n")
        assert b.start <= b.body_start < b.end
        if b.rn:
            assert line.startswith(f"[{b.rn}] ")
        assert ct.block_at(b.start) == b and ct.block_at(b.end - 1) == b
        prev_end = b.end
    assert "\n".join(text[b.start:b.end] for b in ct.blocks) == text
    assert not re.search(r"[ \t\u00a0]{2,}", text)


@pytest.mark.parametrize("name", BGH_FILES)
def test_bgh_text_variant_keeps_headings_and_randnummern(oldp: Path, name: str) -> None:
    content = _fixture_case(oldp / name)["content"]
    ct = clean_legal_html(content)
    assert ct.fmt == "text"
    _assert_well_formed(ct)
    headings = [ct.text[b.start:b.end] for b in ct.blocks if b.kind == "heading"]
    assert headings == ["Tenor", "Gründe"]
    rns = [b.rn for b in ct.blocks if b.rn]
    expected = re.findall(r"(?m)^(\d+)\|", content)
    assert rns == expected and rns[0] == "1"
    assert "|" not in ct.text and "\\." not in ct.text  # table pipes and Markdown escapes are gone
    assert clean_legal_html(content).text == ct.text  # deterministic


def test_bgh_sections_tenor_and_gruende(oldp: Path) -> None:
    for name in BGH_FILES:
        ct = clean_legal_html(_fixture_case(oldp / name)["content"])
        secs = split_sections(ct)
        assert [s.name for s in secs] == ["tenor", "gruende"], name
        assert secs[0].start == 0 and secs[-1].end == len(ct.text)
        for a, b in zip(secs, secs[1:]):
            assert b.start == a.end + 1  # contiguous: only the newline between them
        tenor = ct.text[secs[0].body_start:secs[0].end]
        assert tenor and "Gründe" not in tenor.split("\n")


def test_legal_html_with_rd_tags_ref_markers_and_sup(oldp: Path) -> None:
    content = _fixture_case(oldp / "case_with_references.json", 1888)["content"]
    ct = clean_legal_html(content)
    assert ct.fmt == "html"
    _assert_well_formed(ct)
    markers = re.findall(r"\[ref=([^\]]+)\](.*?)\[/ref\]", content, re.S)
    assert len(ct.refs) == len(markers) > 10
    for ref, (rid, inner) in zip(ct.refs, markers):
        assert ref.ref_id == rid and ct.text[ref.start:ref.end] == re.sub(r"\s+", " ", inner).strip()
    assert ct.text[ct.refs[0].start:ct.refs[0].end] == "§ 800 BGB"
    assert "m²" in ct.text and "<sup>" not in ct.text
    assert [b.rn for b in ct.blocks if b.rn][:3] == ["1", "2", "3"]
    assert [s.name for s in split_sections(ct)] == ["tenor", "tatbestand", "gruende"]


def test_juris_html_randnummern_in_dt_and_sections(sample_dir: Path) -> None:
    path = sample_dir / "de" / "refex" / "html_documents.jsonl"
    docs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    seen = set()
    for d in docs:
        ct = clean_legal_html(d["text"])
        _assert_well_formed(ct)
        assert "Randnummer" not in ct.text  # the dt label is metadata, not text
        rns = [b.rn for b in ct.blocks if b.rn]
        assert rns and rns == sorted(rns, key=int) and rns[0] == "1"
        names = [s.name for s in split_sections(ct)]
        assert names[0] == "leitsatz" and ("gruende" in names or "entscheidungsgruende" in names)
        seen.update(names)
    assert {"orientierungssatz", "tenor", "tatbestand", "entscheidungsgruende"} <= seen


def test_bverfg_web_page_letter_spaced_leitsatz(oldp: Path) -> None:
    raw = json.loads((oldp / "bverfg_little_content.json").read_text())["raw"]
    ct = clean_legal_html(raw)
    assert "function(" not in ct.text and "{" not in ct.text[:2000]  # scripts and styles dropped
    secs = split_sections(ct)
    lead = next(s for s in secs if s.name == "leitsatz")
    assert lead.label == "L e i t s a t z"
    assert secs[0].name == "rubrum"
    rn_blocks = [b for b in ct.blocks if b.rn]
    assert rn_blocks and rn_blocks[0].rn == "1"  # a bare number line above its paragraph


@pytest.mark.parametrize("line,name", [
    ("T e n o r", "tenor"), ("G r ü n d e :", "gruende"), ("Gründe:", "gruende"), ("L e i t s a t z ", "leitsatz"),
    ("Leitsätze", "leitsatz"), ("Entscheidungsgründe", "entscheidungsgruende"), ("TATBESTAND", "tatbestand"),
    ("Rechtsmittelbelehrung:", "rechtsmittelbelehrung"), ("Orientierungssatz", "orientierungssatz"),
    ("Die Gründe des Urteils", None), ("Gründe für die Entscheidung liegen nicht vor.", None), ("", None),
])
def test_heading_variants(line: str, name: str | None) -> None:
    assert heading_name(line) == name


def test_fallback_body_and_numbered_paragraph_is_never_a_heading() -> None:
    ct = clean_legal_html("<p>Der Antrag wird abgelehnt.</p><p>Kosten trägt der Antragsteller.</p>")
    assert [(s.name, s.start, s.end) for s in split_sections(ct)] == [("body", 0, len(ct.text))]
    ct = clean_legal_html('<h2>Gründe</h2><p><rd nr="1"/>Tenor</p>')
    assert [s.name for s in split_sections(ct)] == ["gruende"]


def test_entities_scripts_mojibake_and_bad_input() -> None:
    ct = clean_legal_html("<html><head><title>x</title><style>p{}</style></head><body>"
                          "<script>var a = 1;</script><p>Gem&auml;&szlig; &sect;&nbsp;433 BGB&#160;gilt.</p>"
                          "<h2>Gr&#195;&#188;nde</h2></body></html>")
    assert ct.text == "Gemäß § 433 BGB gilt.\nGründe"
    assert fix_mojibake("OLG KÃ¶ln") == "OLG Köln" and fix_mojibake("Köln") == "Köln"
    with pytest.raises(TypeError):
        clean_legal_html(None)  # type: ignore[arg-type]


def test_section_vocabulary_matches_the_suite() -> None:
    assert set(SECTION_HEADINGS) | {"rubrum", "body"} == set(CASE_SECTIONS)
