"""Word spaces the ISAP text layer does not spell (``pipelines.pdf_lines.is_word_gap``), on the
real k.p. and k.p.c. PDFs.

Two ways a space went missing and two words were glued in articles, chunks, search and diffs:

1. After a raised footnote reference pdfium generates a line break, not a space, and the reader
   drops generated line breaks: k.p. 2025 art. 173 "Socjalnej⁸⁾ określi" read "Socjalnejokreśli".
2. The PDF draws the space as a gap with no character: k.p.c. 2023 art. 205 "rejonowy może"
   (1.7 pt between "y" and "m"; the letters of a word sit 0.5 pt apart at most).

Only the pages needed are read (``read_lines(pages=…)``); the article checks parse page 1 (the
identity check needs it) and the article's page.
"""

from __future__ import annotations

import datetime as dt
import difflib
from pathlib import Path

import pytest

from pipelines import pdf_lines
from pipelines.pdf_lines import Char, is_word_gap, read_lines
from pipelines.statutes.pl.parser import parse_statute

KP25 = "D19740141Lj_2025-12-10.pdf"
KP16 = "D19740141Lj_2016-09-22.pdf"
KPC23 = "D19640296Lj_2023-08-16.pdf"
KPC24 = "D19640296Lj_2024-02-16.pdf"


def _pdf(sample_dir: Path, name: str) -> Path:
    path = sample_dir / "pl" / "isap" / name
    if not path.exists():
        pytest.skip(f"{path} not in the sample data")
    return path


def _body(path: Path, page: int) -> str:
    lines = read_lines(path, workers=1, pages=[page - 1])[0]
    return "\n".join(ln.text for ln in lines if ln.zone == "body")


# (file, 1-based page, glued as read before, as printed)
FOOTNOTE_REF_AT_GAP = [
    (KP25, 110, "Socjalnejokreśli", "Socjalnej określi"),  # art. 173
    (KP25, 146, "Społecznejokreśli", "Społecznej określi"),  # art. 210
    (KP25, 150, "Socjalnejoraz", "Socjalnej oraz"),  # art. 220
    (KP25, 155, "Społecznejokreśli", "Społecznej określi"),  # art. 228
    (KP25, 169, "Społecznejokreślą", "Społecznej określą"),  # art. 237^15 (three on the page)
    (KP25, 178, "Socjalnejokreśli", "Socjalnej określi"),  # art. 297
    (KP25, 179, "Socjalnejokreśli", "Socjalnej określi"),  # art. 298^2
    (KP16, 124, "Narodowejjest", "Narodowej jest"),  # art. 237^2
    (KPC24, 274, "§ 1.Jeżeli", "§ 1. Jeżeli"),  # art. 598^15: the reference follows "§ 1."
]
GAP_WITHOUT_SPACE = [
    (KPC23, 83, "rejonowymoże", "rejonowy może"),  # art. 205
    (KPC23, 190, "konsumentówwezwie", "konsumentów wezwie"),  # art. 479^72
    (KPC23, 250, "§ 2,sąd", "§ 2, sąd"),  # art. 579^3
    (KPC24, 166, "rejonowymiejsca", "rejonowy miejsca"),  # art. 447
    (KPC24, 415, "Wrazie możliwości", "W razie możliwości"),  # art. 867 § 1^4
    (KPC24, 431, "§ 1. Wrazie", "§ 1. W razie"),  # art. 891 § 1
]


@pytest.mark.parametrize("name,page,glued,printed", FOOTNOTE_REF_AT_GAP + GAP_WITHOUT_SPACE)
def test_the_space_is_kept(sample_dir, name, page, glued, printed):
    text = _body(_pdf(sample_dir, name), page)
    assert printed in text and glued not in text


def test_three_on_one_page(sample_dir):
    """k.p. 2025 art. 237^15 (p. 169) has three references each followed by a bare gap."""
    text = " ".join(_body(_pdf(sample_dir, KP25), 169).split())
    for printed in ("Społecznej określi,", "Socjalnej oraz Ministrem", "Społecznej określą,"):
        assert printed in text


def _parse_pages(path: Path, spec: str, pages: list[int]):
    version = dt.date.fromisoformat(path.stem.rsplit("_", 1)[1])
    lines = read_lines(path, workers=1, pages=[0] + [p - 1 for p in pages])
    return {a.number: a for a in parse_statute(path, version, spec, pages=lines).articles}


def test_articles_and_units_keep_their_spaces(sample_dir):
    kp = _parse_pages(_pdf(sample_dir, KP25), "pl:kp", [110, 149, 150, 178])  # art. 220 starts on p. 149
    assert kp["173"].text.startswith("Minister Pracy i Polityki Socjalnej określi, w drodze rozporządzenia")
    par2 = next(u for u in kp["220"].units if u.id == "pl:kp:art:220:par:2")
    assert "z Ministrem Pracy i Polityki Socjalnej oraz właściwymi ministrami określi" in par2.text
    assert kp["297"].text.startswith("Minister Pracy i Polityki Socjalnej określi w drodze rozporządzenia:")
    kpc = _parse_pages(_pdf(sample_dir, KPC24), "pl:kpc", [166, 274, 431])
    assert "sąd rejonowy miejsca zamieszkania zmarłego" in " ".join(kpc["447"].text.split())
    par1 = next(u for u in kpc["598^15"].units if u.id == "pl:kpc:art:598^15:par:1")
    assert par1.text.startswith("§ 1. Jeżeli osoba, pod której")
    assert kpc["598^15"].footnote_refs  # the reference itself is still recorded, not in the text
    assert "§ 1. W razie zbiegu egzekucji" in kpc["891"].text


def test_superscript_numbers_stay_glued(sample_dir):
    """The gap rule never fires before a superscript: numbering keeps its base, references go."""
    text = _body(_pdf(sample_dir, KPC24), 274)
    assert "Art. 598^15." in text and "598 ^15" not in text
    kp = _body(_pdf(sample_dir, KP25), 169)
    assert "Art. 237^15." in kp


# Every word the gap rule changes on these pages (the rule switched off vs on), so a split inside
# a real word cannot slip in. Measured over all seven PDFs: 55 words in 55 lines change, each a
# lost space (7 of them the letter-spaced "U S T AWA" of page 1, now "U S T A W A").
PAGES_CHANGED = {
    (KP25, range(100, 181)): [
        ("zdrowotneji", "zdrowotnej i"), ("Socjalnejokreśli,", "Socjalnej określi,"),
        ("Społecznejokreśli,", "Społecznej określi,"), ("Socjalnejoraz", "Socjalnej oraz"),
        ("Społecznejokreśli,", "Społecznej określi,"), ("Narodowejjest", "Narodowej jest"),
        ("Społecznejokreśli,", "Społecznej określi,"), ("Socjalnejoraz", "Socjalnej oraz"),
        ("Społecznejokreślą,", "Społecznej określą,"), ("Socjalnejokreśli", "Socjalnej określi"),
        ("Socjalnejokreśli,", "Socjalnej określi,"),
    ],
    (KPC23, range(80, 126)): [
        ("rejonowymoże", "rejonowy może"), ("299.Jeżeli", "299. Jeżeli"), ("354.Jeżeli", "354. Jeżeli"),
    ],
}


def _changed_words(path: Path, pages: range, monkeypatch) -> list[tuple[str, str]]:
    wanted = [p - 1 for p in pages]
    with monkeypatch.context() as m:
        m.setattr(pdf_lines, "WORD_GAP_EM", float("inf"))  # the rule off: the text as read before
        before = read_lines(path, workers=1, pages=wanted)
    after = read_lines(path, workers=1, pages=wanted)
    changes = []
    for pa, pb in zip(before, after, strict=True):
        assert [(ln.zone, ln.footnote_refs) for ln in pa] == [(ln.zone, ln.footnote_refs) for ln in pb]
        for la, lb in zip(pa, pb):
            assert la.text.replace(" ", "") == lb.text.replace(" ", "")  # only spaces are added
            wa, wb = la.text.split(), lb.text.split()
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
                if op != "equal":
                    changes.append((" ".join(wa[i1:i2]), " ".join(wb[j1:j2])))
    return changes


@pytest.mark.parametrize("name,pages", list(PAGES_CHANGED))
def test_no_other_word_changes(sample_dir, monkeypatch, name, pages):
    assert _changed_words(_pdf(sample_dir, name), pages, monkeypatch) == PAGES_CHANGED[(name, pages)]


@pytest.mark.parametrize("name,page", [(KP25, 169), (KPC23, 83), (KPC24, 431)])
def test_pdfplumber_engine_reads_the_same_spaces(sample_dir, name, page):
    """pdfplumber (pdfminer) sees the space characters pdfium drops (the 8 pt space of "rejonowy
    może" included): both engines give the same body lines, spaces and all."""
    path = _pdf(sample_dir, name)
    fast = read_lines(path, workers=1, pages=[page - 1])[0]
    slow = read_lines(path, workers=1, pages=[page - 1], engine="pdfplumber")[0]
    body = lambda lines: [ln.text.replace("\u00ad", "-") for ln in lines if ln.zone == "body"]  # noqa: E731
    assert len(body(fast)) >= 25 and body(fast) == body(slow)


def _glyph(text: str, x: float, width: float, *, size: float = 12.0, y: float = 600.0) -> Char:
    return Char(text, size, x, y, False, x + width)


def test_is_word_gap_thresholds():
    y, m = _glyph("y", 190.42, 6.0), _glyph("m", 198.14, 9.34)  # k.p.c. 2023 p. 83: 1.72 pt
    assert is_word_gap(y, m)
    assert not is_word_gap(_glyph("w", 181.53, 8.67), _glyph("y", 190.42, 6.0))  # 0.22 pt: letters
    assert not is_word_gap(_glyph("a", 100.0, 5.0), _glyph("b", 105.5, 5.0))  # 0.5 pt, the widest seen
    assert is_word_gap(_glyph("a", 100.0, 5.0), _glyph("b", 106.3, 5.0))  # > 0.1 em (1.2 pt)
    # footnote size: 0.1 em of 10 pt
    assert not is_word_gap(_glyph("a", 100.0, 5.0, size=10), _glyph("b", 105.9, 5.0, size=10))
    ref = _glyph(")", 353.9, 2.2, size=8.0, y=606.5)  # "Socjalnej8)" then "określi"
    assert is_word_gap(ref, _glyph("o", 372.6, 5.2, y=601.9))
    # never before a superscript: neither a reference nor a number is separated from its word
    assert not is_word_gap(_glyph("j", 344.2, 5.4), _glyph("8", 352.0, 4.0, size=8.0, y=606.5))
    # not across lines, not backwards, not without the advance
    assert not is_word_gap(_glyph("a", 100.0, 5.0), _glyph("b", 120.0, 5.0, y=586.0))
    assert not is_word_gap(_glyph("a", 300.0, 5.0), _glyph("b", 57.0, 5.0))
    assert not is_word_gap(Char("a", 12.0, 100.0, 600.0, False), _glyph("b", 120.0, 5.0))
