"""Footnotes continued from the page before (``pipelines.pdf_lines.footnote_rule``), on the real
Labour Code PDFs.

The k.p. footnote 1 (on the title "Kodeks pracy¹": the EU directives the code implements) runs
over pages 1–3. Its continuation on pages 2 and 3 opens without its number, so the reader, which
started a footnote block only at a line opening with a raised ``N)``, took it for a structural
note (small print in the text column) and the parser appended it to the article above it: k.p.
2025 art. 3 ended "… zatrudniają one pracowników. 26) dyrektywy 2000/43/WE …", k.p. 2016 art. 5
"… tymi przepisami. (siódma dyrektywa szczegółowa …) (Dz. Urz. WE L 262 z 17.10.2000), 28) …".
Every ISAP page with footnotes draws the separator rule (144 pt) above them, also a page that
holds nothing but a continued footnote (k.p. 2025 p. 2, rule right under the header); small print
below it is footnote.

Only the pages needed are read for the article checks (page 1 for the identity check, 2–4 for the
articles); the whole-file checks read or parse the files once each.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from pipelines.pdf_lines import footnote_rule, read_chars_pdfium, read_lines
from pipelines.statutes.pl.parser import parse_statute

KP25 = "D19740141Lj_2025-12-10.pdf"
KP16 = "D19740141Lj_2016-09-22.pdf"
ALL = ["D19640093Lj_2024-12-19.pdf", "D19640093Lj_2025-11-13.pdf", "D19640296Lj_2023-08-16.pdf",
       "D19640296Lj_2024-02-16.pdf", KP16, KP25, "D19970553Lj_2026-07-28.pdf"]

ART3 = ("Pracodawcą jest jednostka organizacyjna, choćby nie posiadała osobowości prawnej, a także "
        "osoba fizyczna, jeżeli zatrudniają one pracowników.")
ART5 = ("Jeżeli stosunek pracy określonej kategorii pracowników regulują przepisy szczególne, przepisy "
        "kodeksu stosuje się w zakresie nieuregulowanym tymi przepisami.")
# what the footnote's continuation put into the articles
LEAKS = ("dyrektyw", "Dz. Urz.", "Unii Europejskiej", "wydanie specjalne")


def _pdf(sample_dir: Path, name: str) -> Path:
    path = sample_dir / "pl" / "isap" / name
    if not path.exists():
        pytest.skip(f"{path} not in the sample data")
    return path


def _version(name: str) -> dt.date:
    return dt.date.fromisoformat(name.rsplit("_", 1)[1].removesuffix(".pdf"))


@pytest.fixture(scope="module")
def first_pages(sample_dir):
    """name → (lines of pages 1–4, parse of those pages), each k.p. file read once."""
    out = {}
    for name in (KP16, KP25):
        path = _pdf(sample_dir, name)
        pages = read_lines(path, workers=1, pages=[0, 1, 2, 3])
        out[name] = (pages, parse_statute(path, _version(name), "pl:kp", pages=pages))
    return out


# -- the rule -------------------------------------------------------------------------------------


def test_footnote_rule_picks_the_short_rule():
    w, h = 595.32, 841.92
    header = (70.9, 786.5, 467.9, 787.0)  # the running header's rule: as wide as the column
    assert footnote_rule(w, h, [header]) is None
    assert footnote_rule(w, h, [header, (70.9, 484.6, 215.0, 485.1)]) == 485.1
    # a page holding only a continued footnote: the rule sits right under the header (k.p. 2025 p. 2)
    assert footnote_rule(w, h, [header, (70.9, 749.2, 215.0, 749.6)]) == 749.6
    assert footnote_rule(w, h, [(70.9, 400.0, 215.0, 420.0)]) is None  # a box, not a rule
    assert footnote_rule(w, h, [(70.9, 400.0, 90.0, 400.5)]) is None  # too short
    assert footnote_rule(w, h, []) is None


@pytest.mark.parametrize("name, rules", [(KP25, [485.1, 749.6, 473.6, None]),
                                         (KP16, [554.2, 738.2, 301.2, None])])
def test_rules_of_the_first_pages(sample_dir, name, rules):
    pcs = read_chars_pdfium(_pdf(sample_dir, name), [0, 1, 2, 3])
    assert [round(pc.footnote_rule, 1) if pc.footnote_rule is not None else None for pc in pcs] == rules


# -- the zones ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [KP16, KP25])
def test_continued_footnote_is_footnote(first_pages, name):
    pages, _ = first_pages[name]
    p2, p3 = pages[1], pages[2]
    # page 2 holds only footnote 1's continuation
    assert {ln.zone for ln in p2} == {"header", "footnote", "footer"}
    assert all(ln.zone == "footnote" for ln in p2 if "dyrektyw" in ln.text)
    # page 3: DZIAŁ PIERWSZY, art. 1–3 (–5) in 12 pt, then the end of footnote 1
    assert not [ln.text for ln in p3 if ln.zone == "note"]
    rest = [ln for ln in p3 if ln.zone == "footnote"]
    assert rest and not rest[0].starts_with_ref  # it opens without a number …
    assert rest[-1].text.endswith("wydanie specjalne.")
    assert all(ln.size < 11 for ln in rest)
    body = [ln for ln in p3 if ln.zone == "body"]
    assert body and min(ln.y for ln in body) > max(ln.y for ln in rest)  # … below the articles


def test_pdfplumber_reads_the_same_zones(sample_dir):
    path = _pdf(sample_dir, KP25)
    fast = read_lines(path, workers=1, pages=[1, 2])
    slow = read_lines(path, workers=1, pages=[1, 2], engine="pdfplumber")
    for a, b in zip(fast, slow):
        assert [ln.zone for ln in a] == [ln.zone for ln in b]


# -- the articles and the footnote ----------------------------------------------------------------


@pytest.mark.parametrize("name", [KP16, KP25])
def test_articles_3_and_5_end_where_the_act_ends_them(first_pages, name):
    _, ps = first_pages[name]
    arts = {a.number: a for a in ps.articles}
    assert arts["3"].text == ART3
    assert arts["5"].text == ART5
    for n in ("1", "2", "3", "5"):
        assert not any(word in arts[n].text for word in LEAKS), (n, arts[n].text)


@pytest.mark.parametrize("name", [KP16, KP25])
def test_footnote_1_is_whole(first_pages, name):
    """The continuation joins the footnote it continues (it was dropped from the footnotes)."""
    _, ps = first_pages[name]
    note = ps.footnotes["1"]
    assert note.startswith("Niniejsza ustawa dokonuje w zakresie swojej regulacji wdrożenia")
    for item in ("10) dyrektywy 91/322/EWG", "26) dyrektywy 2000/43/WE", "28) dyrektywy 2000/78/WE",
                 "31)dyrektywy 2010/18/UE" if name == KP16 else "31) dyrektywy 2010/18/UE"):
        assert item in note, item
    assert note.endswith("wydanie specjalne.")


# -- the whole files ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_small_print_left_in_the_text_is_structural(isap_lines, name):
    """What the reader leaves in the text column in small print ("note") goes into the articles:
    in all seven files it is one-line structural notes ("(zawierający art. 397–404 – uchylony)",
    "(oznaczenie oraz tytuł rozdziału I – uchylone)") and a label (k.p.c. 2023 "DZIAŁ IVg"), never
    footnote text."""
    pages = isap_lines(name)
    notes = [ln for page in pages for ln in page if ln.zone == "note"]
    odd = [(ln.page, ln.text) for ln in notes
           if not (re.fullmatch(r"\(.*(uchylon|pominięt)\w*\)", ln.text) or re.fullmatch(r"DZIAŁ \w+", ln.text))]
    assert not odd


@pytest.mark.parametrize("name", [KP16, KP25])
def test_no_footnote_text_in_any_article(sample_dir, isap_lines, name):
    """No 50-character stretch of any footnote occurs in an article of the k.p. (the k.p.c. has
    some: its "Utracił moc … w zakresie, w jakim …" footnotes quote the article they annotate)."""
    ps = parse_statute(_pdf(sample_dir, name), _version(name), "pl:kp", pages=isap_lines(name))
    norm = lambda s: re.sub(r"\s+", " ", s)  # noqa: E731
    texts = [norm(f"{a.text}\n{a.text_pending or ''}") for a in ps.articles]
    found = []
    for number, note in ps.footnotes.items():
        note = norm(note)
        for i in range(0, max(0, len(note) - 50), 25):
            window = note[i:i + 50]
            found += [(number, window) for t in texts if window in t]
    assert not found
    assert len(ps.articles) == {KP16: 476, KP25: 480}[name]
