"""The Civil Code parse, on both real ISAP PDFs."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from pipelines.pdf_lines import read_lines
from pipelines.statutes.pl.tables import articles_table, nodes_table

VERSIONS = ["2024-12-19", "2025-11-13"]


def pdf(sample_dir: Path, version: str) -> Path:
    return sample_dir / "pl" / "isap" / f"D19640093Lj_{version}.pdf"


@pytest.fixture(scope="session")
def parsed(kc_parsed):
    """{v: parse_statute(pdf(sample_dir, v), dt.date.fromisoformat(v), "pl:kc") for v in VERSIONS}, parsed
    once per session (conftest.py)."""
    assert sorted(kc_parsed) == VERSIONS
    return kc_parsed


def independent_article_heads(path: Path) -> list[str]:
    """Count article heads through pdfium's own plain text (its line breaks, no sizes): a code
    path that shares nothing with ours. Superscripts fuse there (22¹ → '221'), the count doesn't."""
    import pypdfium2 as pdfium

    heads = []
    doc = pdfium.PdfDocument(str(path))
    for page in doc:
        text = page.get_textpage().get_text_range()
        heads += re.findall(r"(?m)^\s*Art\.\s*(\d+)\s*\.", text)
    return heads


@pytest.mark.parametrize("version", VERSIONS)
def test_article_count_matches_independent_count(parsed, sample_dir, version):
    heads = independent_article_heads(pdf(sample_dir, version))
    arts = parsed[version].articles
    assert len(arts) == len(heads) == 1296
    assert len({a.id for a in arts}) == len(arts)  # every article exactly once


@pytest.mark.parametrize("version", VERSIONS)
def test_superscript_numbers(parsed, version):
    arts = {a.number: a for a in parsed[version].articles}
    numbers = set(arts)
    assert {"22^1", "109^1", "449^1", "33^1", "449^11"} <= numbers
    assert not {"1091", "4491"} & numbers  # the Code ends at 1088; 449 has superscripts only
    # Art. 221 is a real article (co-ownership); 22¹ (consumer) must not be mistaken for it
    assert arts["22^1"].text.startswith("Za konsumenta uważa się")
    assert "współ" in arts["221"].text and arts["22^1"].sort_key < arts["23"].sort_key < arts["221"].sort_key
    assert sum("^" in n for n in numbers) == 216
    keys = [a.sort_key for a in parsed[version].articles]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_text_is_clean(parsed):
    for ps in parsed.values():
        for a in ps.articles:
            for t in (a.text, a.text_pending or ""):
                assert "Kancelaria Sejmu" not in t, a.id
                assert not re.search(r"(?m)^\d{4}-\d{2}-\d{2}$", t), a.id
                assert not re.search(r"[<>\[\]]", t), a.id
                assert not re.search(r"[a-ząćęłńóśźż]\d+\)", t), (a.id, t)  # glued footnote refs
                assert "\u00ad" not in t and "\ufffe" not in t


def test_hyphenation_and_diacritics(parsed):
    arts = {a.number: a for a in parsed["2025-11-13"].articles}
    assert "niewypłacalna" in arts["33^1"].text
    assert "społeczno-gospodarczym" in arts["5"].text
    assert "nieruchomości obciążonej" in arts["290"].text  # soft hyphen across the line break


def test_hierarchy_and_status(parsed):
    ps = parsed["2025-11-13"]
    arts = {a.number: a for a in ps.articles}
    path1 = [(n.level, n.number) for n in arts["1"].path]
    assert path1 == [("book", "PIERWSZA"), ("title", "I")]
    assert arts["1"].path[0].heading == "CZĘŚĆ OGÓLNA"
    assert [(n.level, n.number) for n in arts["8"].path] == [("book", "PIERWSZA"), ("title", "II"),
                                                            ("division", "I"), ("chapter", "I")]
    assert all(a.path for a in ps.articles)
    assert arts["2"].status == "repealed" and arts["2"].status_note == "(uchylony)"
    assert sum(a.status == "repealed" for a in ps.articles) == 100
    assert [p.id for p in arts["109^1"].paragraphs][:2] == ["pl:kc:art:109^1:par:1", "pl:kc:art:109^1:par:2"]
    nodes = nodes_table(ps).to_pylist()
    levels = {n["level"] for n in nodes}
    assert {"book", "title", "division", "chapter", "section", "article", "paragraph", "point", "letter"} <= levels
    assert len({n["id"] for n in nodes}) == len(nodes)
    # a unit without articles (TYTUŁ IV, art. 397–404 repealed) stays in document order
    ids = [n["id"] for n in nodes]
    t4 = ids.index("pl:kc:book:TRZECIA:title:IV")
    assert ids[t4 - 1] == "pl:kc:art:396" and ids[t4 + 1] == "pl:kc:book:TRZECIA:title:V"
    assert nodes[t4]["status"] == "repealed"


def test_isap_markers_keep_both_readings(parsed):
    new = {a.number: a for a in parsed["2025-11-13"].articles}
    old = {a.number: a for a in parsed["2024-12-19"].articles}
    a = new["647^1"]
    assert a.pending_effective_date == dt.date(2025, 12, 4)
    assert "§ 1^1." not in a.text and "§ 1^1. Sprzeciw" in a.text_pending
    assert "chyba że w ciągu trzydziestu dni" in a.text  # wording in force on 2025-11-13
    assert "chyba że w ciągu trzydziestu dni" not in a.text_pending
    assert a.text == old["647^1"].text  # the in-force wording did not change yet
    assert new["556^4"].pending_effective_date == dt.date(2025, 11, 27)
    assert old["647^1"].text_pending is None


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _lenient(s: str) -> str:
    """Undo the exam compiler's artefacts: lost superscripts ('§ 1 .'), appended date stamps."""
    s = re.sub(r"\s\d{2}\.\d{2}\.\d{4}$", "", _norm(s))
    s = re.sub(r"\^\d+", "", s)
    return re.sub(r"\s+\.", ".", s)


def test_exam_legal_basis_is_in_parsed_article(parsed, sample_dir):
    rows = [json.loads(line) for f in sorted((sample_dir / "pl" / "exams").glob("202[123]/*.jsonl"))
            for line in f.open()]
    kc = [r for r in rows if r["legal_basis"].strip().endswith("k.c.")]
    arts = {a.number: a for a in parsed["2025-11-13"].articles}
    strict = lenient = 0
    for r in kc:
        num = re.match(r"art\.\s*(\d+(?:\^\d+)?)", r["legal_basis"]).group(1)
        text = arts[num].text
        strict += _norm(r["legal_basis_content"]) in _norm(text)
        lenient += _lenient(r["legal_basis_content"]) in _lenient(text)
    assert len(kc) == 183
    assert strict / len(kc) >= 0.95
    assert lenient / len(kc) >= 0.99


def test_pdfplumber_engine_agrees_with_pdfium(sample_dir):
    path = pdf(sample_dir, "2025-11-13")
    fast = read_lines(path, workers=1, pages=[5, 134])
    slow = read_lines(path, workers=1, pages=[5, 134], engine="pdfplumber")
    for a, b in zip(fast, slow):
        body_a = [ln.text for ln in a if ln.zone == "body"]
        body_b = [ln.text for ln in b if ln.zone == "body"]
        # pdfplumber cannot tell a soft hyphen from '-': compare with both mapped to '-'
        same = lambda t: re.sub(r"\s", "", t).replace("\u00ad", "-")  # noqa: E731
        assert len(body_a) >= 25
        assert [same(t) for t in body_a] == [same(t) for t in body_b]


def test_articles_table_conforms(parsed):
    t = articles_table(parsed["2025-11-13"])
    assert t.num_rows == 1296
    row = next(r for r in t.to_pylist() if r["id"] == "pl:kc:art:109^1")
    assert row["number_display"] == "109¹" and row["page_start"] <= row["page_end"]
    assert row["path_text"].startswith("KSIĘGA PIERWSZA")


@pytest.mark.parametrize("version", VERSIONS)
def test_numbering_is_complete(parsed, version):
    """Second independent derivation of the count: plain numbers are 1..1088 except the block
    397–404 that TYTUŁ IV notes as repealed, and each base's superscripts run ¹..ᵏ without gaps."""
    arts = parsed[version].articles
    plain = [int(a.number) for a in arts if "^" not in a.number]
    assert sorted(set(range(1, 1089)) - set(plain)) == list(range(397, 405)) and len(plain) == 1080
    runs: dict[str, list[int]] = {}
    for a in arts:
        if "^" in a.number:
            base, sup = a.number.split("^")
            runs.setdefault(base, []).append(int(sup))
    assert all(s == list(range(1, len(s) + 1)) for s in runs.values())
    assert (len(runs), sum(map(len, runs.values()))) == (80, 216)
