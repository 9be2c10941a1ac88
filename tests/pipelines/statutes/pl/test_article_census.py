"""The independent article census (pipelines/statutes/pl/article_census.py): its head rule, its
superscript reading and range expansion on synthetic input; on the sample PDFs, agreement with the
parser on the Civil Code and no gaps but the documented ones."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from pipelines.statutes.pl import article_census as census_mod
from pipelines.statutes.pl.article_census import (
    _Char, article_numbers, expand_range, find_gaps, match_head, note_numbers, render, successors,
)

ISAP = Path("pl") / "isap"

# Gaps in the printed numbering of the sample PDFs, checked against the page text: the PDF itself
# skips these numbers and names them nowhere (a structural unit printed as "(uchylony)" without its
# article numbers, or nothing at all). Anything else the census reports is a finding.
DOCUMENTED_GAPS = {
    "D19640093Lj_2024-12-19.pdf": set(),
    "D19640093Lj_2025-11-13.pdf": set(),
    # p. 302 / 317: "DZIAŁ VI Postępowanie rejestrowe" opens with Art. 694^1; no Art. 694 is printed
    "D19640296Lj_2023-08-16.pdf": {("693^22", "694^1")},
    "D19640296Lj_2024-02-16.pdf": {("693^22", "694^1")},
    # p. 29: "Rozdział IIa (uchylony)" stands for Art. 67^1–67^4 (the 2025 text names them)
    "D19740141Lj_2016-09-22.pdf": {("67", "67^5")},
    # p. 170: "DZIAŁ JEDENASTY (uchylony)" stands for Art. 238–241
    "D19740141Lj_2025-12-10.pdf": {("237^15", "242")},
    "D19970553Lj_2026-07-28.pdf": set(),
}


def _pdf(sample_dir: Path, name: str) -> Path:
    path = sample_dir / ISAP / name
    if not path.exists():
        pytest.skip(f"{path} not in the sample data")
    return path


@functools.lru_cache(maxsize=None)
def _census(path: Path):
    """Each sample PDF is read once per session (1–5 s each); the result is only read."""
    return article_numbers(path)


# -- synthetic ------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, number", [
    ("Art. 5. Kto zabiera w celu przywłaszczenia cudzą rzecz ruchomą,", "5"),
    ("Art. 123a. § 1. Tekst", "123a"),
    ("Art. 43ba. § 1. Degradacja obejmuje", "43ba"),
    ("Art. 18^3a. § 1. Pracownicy powinni być równo traktowani", "18^3a"),
    ("Art. 18^3ca. § 1. Osoba ubiegająca się", "18^3ca"),
    ("<Art. 255b. § 1. Kto, w celu osiągnięcia korzyści", "255b"),
    ("[Art. 289. Do wezwania i przesłuchania biegłych", "289"),
    ("Art. 1059. Spadkobiercy dziedziczą", "1059"),  # footnote reference already dropped by render
])
def test_head_counted(line, number):
    m = match_head(line)
    assert m and m.group("num") == number and not m.group("last")


@pytest.mark.parametrize("line", [
    "art. 5. Przepis stosuje się odpowiednio.",  # lower case: a cross-reference at line start
    "zgodnie z Art. 5. ustawy",  # mid-line
    "stosuje się przepisy art. 18^3a. § 1.",
    "Art. 5 stosuje się odpowiednio.",  # no full stop after the number: running text
    "Artykuł 5. Tekst",
    "©Kancelaria Sejmu s. 6/186",
])
def test_head_not_counted(line):
    assert match_head(line) is None


def test_repealed_range_head_expanded():
    m = match_head("Art. 266–280.")
    assert m and (m.group("num"), m.group("last")) == ("266", "280")
    assert expand_range("266", "280") == tuple(str(n) for n in range(266, 281))


@pytest.mark.parametrize("first, last, expected", [
    ("397", "404", ("397", "398", "399", "400", "401", "402", "403", "404")),
    ("479^1", "479^3", ("479^1", "479^2", "479^3")),
    ("284", "290^1", ("284", "285", "286", "287", "288", "289", "290", "290^1")),
    ("392", "393^2", ("392", "393", "393^1", "393^2")),
    ("10a", "10c", ("10a", "10b", "10c")),
    ("10", "10b", ("10", "10a", "10b")),
    ("295^1", "295^1", ("295^1",)),
])
def test_expand_range(first, last, expected):
    assert expand_range(first, last) == expected


def test_structural_note_numbers():
    assert note_numbers("(zawierający art. 397–404 – uchylony)") == [("397", "404")]
    assert note_numbers("(zawierająca art. 695–715 – uchylona)") == [("695", "715")]
    assert note_numbers("(zawierający art. 295^1 i art. 295^2 – uchylony)") == [("295^1", "295^1"), ("295^2", "295^2")]
    assert note_numbers("(oznaczenie oraz tytuł rozdziału I – uchylone)") == []


def test_successors_and_gaps():
    assert {"19", "18a", "18^1"} <= successors("18")
    assert {"18^4", "18^3d", "18^3ca", "19"} <= successors("18^3c")
    assert "18^3b" not in successors("18^3c") and "20" not in successors("18")
    assert "18^3d" in successors("18^3ca")
    seq = [(n, 1) for n in ("1", "2", "2^1", "2^2", "3", "3a", "3b", "3ba", "3c", "4", "6", "6^2", "5")]
    assert [(g.after, g.before, g.kind) for g in find_gaps(seq)] == [
        ("4", "6", "gap"), ("6", "6^2", "gap"), ("6^2", "5", "order")]
    assert [(g.after, g.before) for g in find_gaps([("2", 1)])] == [("", "2")]


def _chars(parts: list[tuple[str, float, float]]) -> list[_Char]:
    """(text, size, rise) pieces → chars laid out left to right on baseline 100."""
    out, x = [], 70.0
    for text, size, rise in parts:
        for ch in text:
            out.append(_Char(ch, 0.0 if ch == " " and size == 0 else size, x, 100.0 + rise, True))
            x += size * 0.5 or 3
    return out


def test_render_superscripts_by_font_size():
    # plain text reads all three as "Art. 181." / "Art. 183a." / "art. 1911w": the font size decides
    assert render(_chars([("Art. 18", 12, 0), ("1", 8, 4.6), (". Pracownicy", 12, 0)])) == "Art. 18^1. Pracownicy"
    assert render(_chars([("Art. 181. Tekst", 12, 0)])) == "Art. 181. Tekst"
    assert render(_chars([("Art. 18", 12, 0), ("3a", 8, 4.6), (". § 1.", 12, 0)])) == "Art. 18^3a. § 1."
    assert render(_chars([("art. 191", 12, 0), ("1", 8, 4.6), ("w toku", 12, 0)])) == "art. 191^1 w toku"
    # a footnote reference (after a letter, or ending in ")") is dropped
    assert render(_chars([("Kodeks pracy", 12, 0), ("1)", 8, 4.6)])) == "Kodeks pracy"
    assert render(_chars([("Art. 1059.", 12, 0), ("5", 8, 4.6), (" Spadkobiercy", 12, 0)])) == "Art. 1059. Spadkobiercy"


def test_imports_neither_the_parser_nor_pdf_lines():
    tree = ast.parse(Path(census_mod.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "ctypes", "dataclasses", "pathlib", "re", "pypdfium2"}, imported


# -- sample PDFs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2024-12-19", "2025-11-13"])
def test_civil_code_census_equals_parser(sample_dir, kc_parsed, version):
    """The known-good case: the census and the parser list the same 1,296 articles in the same order."""
    census = _census(_pdf(sample_dir, f"D19640093Lj_{version}.pdf"))
    parser = [a.number for a in kc_parsed[version].articles]
    assert census.numbers == parser
    assert len(census.numbers) == 1296 and not census.duplicates
    assert [(r.first, r.last, r.source) for r in census.repealed] == [("397", "404", "note")]
    assert census.gaps == []


def test_labour_code_superscripts(sample_dir):
    """k.p. 2025: 18^1 … 18^3a, 18^3ca (superscript letters) read by font size, not as 181 … 183ca."""
    census = _census(_pdf(sample_dir, "D19740141Lj_2025-12-10.pdf"))
    run = census.numbers[census.numbers.index("18"):census.numbers.index("22")]
    assert run == ["18", "18^1", "18^2", "18^3", "18^3a", "18^3b", "18^3c", "18^3ca", "18^3d", "18^3e",
                   "18^4", "18^5"]
    assert not {"183a", "183ca", "1801"} & set(census.numbers)  # no superscript read as a digit
    assert "180^1" in census.numbers and "182^1a" in census.numbers  # real 180¹, 182¹ᵃ
    assert census.covered[census.covered.index("18^5") + 1:][:3] == ["19", "20", "21"]  # (zawierający art. 19–21)
    assert census.duplicates == ["302"]  # [Art. 302. … ] leaving force, <Art. 302. … > entering


@pytest.mark.parametrize("name", sorted(DOCUMENTED_GAPS))
def test_no_gaps_but_documented_ones(sample_dir, name):
    census = _census(_pdf(sample_dir, name))
    found = {(g.after, g.before) for g in census.gaps}
    assert found == DOCUMENTED_GAPS[name], [g for g in census.gaps]
    assert all(g.kind == "gap" for g in census.gaps)  # never out of order


def test_criminal_code(sample_dir):
    census = _census(_pdf(sample_dir, "D19970553Lj_2026-07-28.pdf"))
    assert census.gaps == [] and census.repealed == [] and census.duplicates == []
    assert len(census.numbers) == 461
    assert {"43ba", "43bb", "255b"} <= set(census.numbers)
