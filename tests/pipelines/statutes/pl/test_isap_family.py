"""The ISAP parser on the rest of the family: k.p.c. (two layouts), k.p. (2016 and 2025), k.k.;
identity checks between acts; superscripts with letters; whole-article rewordings; ``ust.``
numbering on a synthetic line stream.

The real PDFs are parsed once per module (``parsed``) from the session's page lines (``isap_lines``).
Article counts are pinned: ``bench/article_sets.py`` (the independent census of
``pipelines.statutes.pl.article_census``, which shares no code with the parser) finds the same
numbers in the same order in every file.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from pipelines.pdf_lines import Char, Line, PageChars, display_number, page_lines, read_lines
from pipelines.statutes.pl.parser import (
    ActSpec, StatuteParseError, _check_identity, act_spec, number_sort_key, parse_statute)
from pipelines.statutes.pl.tables import articles_table, nodes_table
from schemas.acts import registry

KPC = ActSpec("pl:kpc", "Kodeks postępowania cywilnego", "k.p.c.", "DU/1964/296", "Dz. U. 1964 Nr 43 poz. 296")
KP = ActSpec("pl:kp", "Kodeks pracy", "k.p.", "DU/1974/141", "Dz. U. 1974 Nr 24 poz. 141")
KK = ActSpec("pl:kk", "Kodeks karny", "k.k.", "DU/1997/553", "Dz. U. 1997 Nr 88 poz. 553")

# file → (spec, articles, superscript articles, repealed)
FILES = {
    "D19640296Lj_2023-08-16.pdf": (KPC, 1995, 826, 121),
    "D19640296Lj_2024-02-16.pdf": (KPC, 2008, 839, 122),
    "D19740141Lj_2016-09-22.pdf": (KP, 476, 196, 61),
    "D19740141Lj_2025-12-10.pdf": (KP, 480, 204, 61),
    "D19970553Lj_2026-07-28.pdf": (KK, 461, 0, 29),
}


def _pdf(sample_dir: Path, name: str) -> Path:
    path = sample_dir / "pl" / "isap" / name
    if not path.exists():
        pytest.skip(f"{path} not in the sample data")
    return path


@pytest.fixture(scope="module")
def parsed(sample_dir, isap_lines):
    """name → ParsedStatute, each file parsed at most once in this module (on first use), from the
    session's page lines (``isap_lines``: each PDF read once for the suite)."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            spec = FILES[name][0]
            version = dt.date.fromisoformat(name.rsplit("_", 1)[1].removesuffix(".pdf"))
            cache[name] = parse_statute(_pdf(sample_dir, name), version, spec, pages=isap_lines(name))
        return cache[name]
    return get


def _arts(ps) -> dict:
    return {a.number: a for a in ps.articles}


# -- every new PDF --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FILES))
def test_parses_with_unique_ids_and_plausible_counts(parsed, name):
    ps = parsed(name)
    _, n_articles, n_sup, n_repealed = FILES[name]
    arts = ps.articles
    assert len(arts) == n_articles
    assert sum("^" in a.number for a in arts) == n_sup
    assert sum(a.status == "repealed" for a in arts) == n_repealed
    assert len({a.id for a in arts}) == len(arts)
    node_ids = [n["id"] for n in nodes_table(ps).to_pylist()]
    assert len(set(node_ids)) == len(node_ids)
    assert all(not u.id.endswith("'") for a in arts for u in a.units)  # no repeated § within an article
    keys = [a.sort_key for a in arts]
    assert all(x < y for x, y in zip(keys, keys[1:]))  # strictly increasing, as the corpus expects
    assert all(a.path for a in arts)
    for a in arts:
        for t in (a.text, a.text_pending or ""):
            assert not re.search(r"[<>\[\]]", t), a.id  # every ISAP marker resolved into a reading
            assert "Kancelaria Sejmu" not in t and not re.search(r"(?m)^\s*Art\.\s*\d", t), a.id
    assert articles_table(ps).num_rows == n_articles


# -- superscripts with letters --------------------------------------------------------------------


def test_superscript_letter_articles_in_the_labour_code(parsed):
    ps = parsed("D19740141Lj_2025-12-10.pdf")
    arts = _arts(ps)
    run = [a.number for a in ps.articles if a.number.startswith("18^3")]
    assert run == ["18^3", "18^3a", "18^3b", "18^3c", "18^3ca", "18^3d", "18^3e"]
    assert {"22^1a", "22^1b", "22^1h", "182^1a", "237^13a"} <= set(arts)
    a = arts["18^3a"]
    assert a.id == "pl:kp:art:18^3a" and a.text.startswith("§ 1. Pracownicy powinni być równo traktowani")
    assert [p.id for p in a.paragraphs][:2] == ["pl:kp:art:18^3a:par:1", "pl:kp:art:18^3a:par:2"]
    row = next(r for r in articles_table(ps).to_pylist() if r["id"] == "pl:kp:art:18^3ca")
    assert row["number_display"] == "18³ᶜᵃ"
    # added by a change not yet in force; the margin note beside it starts above its head line
    assert row["status"] == "pending" and row["pending_effective_date"] == dt.date(2025, 12, 24)
    assert arts["18^3"].sort_key < arts["18^3a"].sort_key < arts["18^3ca"].sort_key < arts["18^4"].sort_key


def test_superscript_letter_paragraph_in_the_civil_procedure_code(parsed):
    ps = parsed("D19640296Lj_2024-02-16.pdf")
    assert any(u.id.endswith(":par:2^1a") for a in ps.articles for u in a.units)


def test_sort_key_orders_letters_between_superscripts():
    order = ["18", "18^1", "18^3", "18^3a", "18^3c", "18^3ca", "18^3d", "18^4", "43b", "43ba", "43bb", "43c"]
    keys = [number_sort_key(n) for n in order]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    # numbers without extra letters keep the published key (the Civil Code's sort_key values)
    assert number_sort_key("22^1") == (22001, 0) and number_sort_key("5a") == (5001, 0)
    assert display_number("18^3a") == "18³ᵃ" and display_number("449^11") == "449¹¹"


def _chars(x: float, y: float, parts: list[tuple[str, float, float, bool]]) -> list[Char]:
    """(text, size, rise, bold) pieces laid out left to right."""
    out = []
    for text, size, rise, bold in parts:
        for ch in text:
            out.append(Char(" ", 0.0, x, y, False) if ch == " " else Char(ch, size, x, y + rise, bold))
            x += size * 0.5 if size else 3.0
    return out


def test_pdf_lines_letter_superscript_after_a_word_and_marker_before_a_bold_head():
    chars = _chars(210, 700, [("DZIAŁ CZTERNASTY", 12, 0, False), ("A", 8, 4.6, False)])
    chars += _chars(82, 600, [("[", 12, 0, False), ("Art. 190.", 12, 0, True), (" Tekst", 12, 0, False)])
    chars += _chars(82, 500, [("Kodeks pracy", 12, 0, True), ("1)", 8, 4.6, False)])
    lines = page_lines(PageChars(1, 595, 842, chars))
    assert [ln.text for ln in lines] == ["DZIAŁ CZTERNASTY^A", "[Art. 190. Tekst", "Kodeks pracy"]
    assert lines[1].bold  # the regular-weight "[" is not part of the bold first word
    assert lines[2].footnote_refs == ["1"]  # digits after a word stay a footnote reference


# -- structure ------------------------------------------------------------------------------------


def test_structure_of_the_other_codes(parsed):
    kp = parsed("D19740141Lj_2025-12-10.pdf")
    divisions = [n.number for n in kp.structure if n.level == "division"]
    assert divisions[-6:] == ["JEDENASTY", "DWUNASTY", "TRZYNASTY", "CZTERNASTY", "CZTERNASTY^A", "PIĘTNASTY"]
    arts = _arts(kp)
    # "Art. 266–280." (numbers the act no longer has) is not text of art. 265, nor articles
    assert "266" not in arts and "Art. 266" not in arts["265"].text
    kk = parsed("D19970553Lj_2026-07-28.pdf")
    assert [n.id for n in kk.structure if n.level == "part"] == ["pl:kk:part:OGÓLNA", "pl:kk:part:SZCZEGÓLNA",
                                                                  "pl:kk:part:WOJSKOWA"]
    # issue 26: the parts are named, not numbered, and print no heading line — their name is their heading
    assert [n.heading for n in kk.structure if n.level == "part"] == ["CZĘŚĆ OGÓLNA", "CZĘŚĆ SZCZEGÓLNA",
                                                                       "CZĘŚĆ WOJSKOWA"]
    assert not [n.id for n in kk.structure if not n.heading]
    assert articles_table(kk).column("path_text")[0].as_py() == "CZĘŚĆ OGÓLNA › Rozdział I Zasady " \
                                                                 "odpowiedzialności karnej"  # printed once
    kpc = parsed("D19640296Lj_2024-02-16.pdf")
    a = _arts(kpc)
    assert [n.id for n in a["1"].path] == ["pl:kpc:title:WSTĘPNY"]
    assert a["1"].path[0].heading == "Przepisy ogólne"  # a named unit with a heading line keeps it
    # k.p.c. nests KSIĘGA inside CZĘŚĆ (the Civil Code has no parts)
    assert [n.id for n in a["1111"].path] == ["pl:kpc:part:CZWARTA", "pl:kpc:part:CZWARTA:book:PIERWSZAa"]
    part2 = next(n for n in kpc.structure if n.id == "pl:kpc:part:DRUGA")
    assert part2.status == "in_force"  # its "(oznaczenie oraz tytuł księgi pierwszej – uchylone)" is about book I


# -- duplicates: a whole article reworded is one article with two readings -----------------------


def test_whole_article_rewording_is_one_article(parsed):
    ps = parsed("D19640296Lj_2024-02-16.pdf")
    a = _arts(ps)["289"]
    assert [x.number for x in ps.articles].count("289") == 1
    assert a.text.endswith("z wyjątkiem przepisów o przymusowym sprowadzeniu.")  # in force on 2024-02-16
    assert a.text_pending.endswith("z wyjątkiem art. 263^1 oraz przepisów o przymusowym sprowadzeniu.")
    assert a.pending_effective_date == dt.date(2024, 3, 14) and a.status == "in_force"


def test_marker_running_over_two_articles(parsed):
    arts = _arts(parsed("D19740141Lj_2025-12-10.pdf"))
    # "<Art. 302^1. … Art. 302^2. … ZUS.>": both added, in force from 2026-01-01
    for n in ("302^1", "302^2"):
        assert arts[n].status == "pending" and arts[n].text == "", n
        assert arts[n].pending_effective_date == dt.date(2026, 1, 1), n
    assert arts["302^2"].text_pending.endswith("przez Zakład Ubezpieczeń Społecznych.")


def _line(text: str, x0: float, y: float, *, page: int = 1, bold: bool = False, size: float = 12.0,
          zone: str = "body") -> Line:
    return Line(page, y, x0, size, bold, zone, text)


def _front(address: str = "Dz. U. 2019 poz. 1234", title: str = "o przykładach") -> list[Line]:
    return [_line(address, 200, 760, bold=True), _line("U S T AWA", 230, 740, bold=True),
            _line("z dnia 4 lutego 2019 r.", 200, 720), _line(title, 220, 700, bold=True),
            _line("Rozdział 1", 240, 680), _line("Przepisy ogólne", 220, 660, bold=True)]


def _stream(body: list[tuple[str, float, bool]], **front) -> list[list[Line]]:
    """One page: the front matter, then (text, x0, bold) lines 20 pt apart."""
    lines = _front(**front)
    lines += [_line(t, x0, 640 - 20 * i, bold=b) for i, (t, x0, b) in enumerate(body)]
    return [lines]


def test_real_duplicate_head_is_still_an_error():
    spec = ActSpec("pl:x", "o przykładach", "u.p.", "DU/2019/1234", "Dz. U. 2019 poz. 1234")
    body = [("Art. 1. Tekst pierwszy", 82.2, True), ("ciąg dalszy", 56.6, False), ("ciąg", 56.6, False),
            ("Art. 1. Tekst drugi", 82.2, True), ("ciąg", 56.6, False)]
    with pytest.raises(StatuteParseError, match=r"x\.pdf: article 1 appears twice"):
        parse_statute(Path("x.pdf"), dt.date(2025, 1, 1), spec, pages=_stream(body))
    body[0] = ("[Art. 1. Tekst pierwszy", 82.2, True)
    body[3] = ("[Art. 1. Tekst drugi", 82.2, True)  # two expiring wordings: still a duplicate
    with pytest.raises(StatuteParseError, match="appears twice"):
        parse_statute(Path("x.pdf"), dt.date(2025, 1, 1), spec, pages=_stream(body))


# -- identity -------------------------------------------------------------------------------------


def test_labour_code_2016_identity_passes(sample_dir):
    path = _pdf(sample_dir, "D19740141Lj_2016-09-22.pdf")
    first = [ln for ln in read_lines(path, workers=1, pages=[0])[0] if ln.zone in ("body", "note")]
    _check_identity(path, KP, first)
    # however the address is spaced in a text layer: compared without whitespace
    spaced = [Line(1, 760, 200, 12, True, "body", "Dz.U. 19 74 Nr 2 4 poz. 141"),
              *[ln for ln in first if not ln.text.startswith("Dz.U.")]]
    _check_identity(path, KP, spaced)


@pytest.mark.parametrize("name", ["D19640296Lj_2023-08-16.pdf", "D19640296Lj_2024-02-16.pdf"])
def test_civil_procedure_pdf_refused_as_civil_code(sample_dir, name):
    path = _pdf(sample_dir, name)
    with pytest.raises(StatuteParseError, match=rf"{re.escape(str(path))}: not Kodeks cywilny"):
        parse_statute(path, dt.date(2024, 1, 1), act_spec("pl:kc"))


@pytest.mark.parametrize("version", ["2024-12-19", "2025-11-13"])
def test_civil_code_pdf_refused_as_civil_procedure(sample_dir, version):
    path = _pdf(sample_dir, f"D19640093Lj_{version}.pdf")
    with pytest.raises(StatuteParseError, match=r"not Kodeks postępowania cywilnego .*'Dz\. U\. 1964 Nr 16 poz\. 93'"):
        parse_statute(path, dt.date.fromisoformat(version), KPC)


def test_identity_without_address_goes_by_the_whole_title():
    """k.p.c. 2023 prints no address on page 1 (a text named after its t.j. entry): the title
    decides, and it must be the act's title, not a title containing it."""
    front = [ln for ln in _front(title="Kodeks karny wykonawczy") if not ln.text.startswith("Dz.")]
    with pytest.raises(StatuteParseError, match="no Dz. U. address and the title 'Kodeks karny wykonawczy'"):
        _check_identity(Path("kkw.pdf"), KK, front)
    _check_identity(Path("kk.pdf"), KK, [ln for ln in _front(title="Kodeks karny") if not ln.text.startswith("Dz.")])
    with pytest.raises(StatuteParseError, match="the address 'Dz. U. 1997 Nr 90 poz. 557'"):  # title right, address not
        _check_identity(Path("x.pdf"), KK, _front(address="Dz. U. 1997 Nr 90 poz. 557", title="Kodeks karny"))


# -- "ust." numbering -----------------------------------------------------------------------------


UST_BODY = [  # margin 56.6, paragraph indent 82.2 (the k.c. / k.k. layout)
    ("Art. 1. 1. Ustawa określa zasady:", 82.2, True),
    ("1) pierwsze,", 56.6, False),
    ("2) drugie.", 56.6, False),
    ("2. Przepisów ustawy nie stosuje się do spraw wszczętych przed dniem", 82.2, False),
    ("31. dnia od ogłoszenia; ten wiersz jest zawinięty, nie jest ustępem.", 56.6, False),
    ("3. (uchylony)", 82.2, False),
    ("Art. 2. Artykuł bez ustępów, którego tekst", 82.2, True),
    ("biegnie przez dwa wiersze.", 56.6, False),
    ("Art. 3. 1. Pierwszy ustęp.", 82.2, True),
    ("2. Drugi ustęp, który", 82.2, False),
    ("ma drugi wiersz.", 56.6, False),
]


def test_ust_paragraphs_on_a_synthetic_stream():
    spec = ActSpec("pl:x", "o przykładach", "u.p.", "DU/2019/1234", "Dz. U. 2019 poz. 1234", paragraph_unit="ust.")
    ps = parse_statute(Path("x.pdf"), dt.date(2025, 1, 1), spec, pages=_stream(UST_BODY))
    arts = _arts(ps)
    assert [u.id for u in arts["1"].units] == ["pl:x:art:1:ust:1", "pl:x:art:1:ust:1:pt:1", "pl:x:art:1:ust:1:pt:2",
                                               "pl:x:art:1:ust:2", "pl:x:art:1:ust:3"]
    assert arts["1"].paragraphs[1].text.endswith("przed dniem 31. dnia od ogłoszenia; ten wiersz jest zawinięty, "
                                                 "nie jest ustępem.")
    assert arts["1"].paragraphs[2].status == "repealed"
    assert arts["2"].units == [] and arts["2"].text == "Artykuł bez ustępów, którego tekst biegnie przez dwa wiersze."
    assert [p.number for p in arts["3"].paragraphs] == ["1", "2"]
    nodes = nodes_table(ps).to_pylist()
    assert {n["level"] for n in nodes if ":ust:" in n["id"] and ":pt:" not in n["id"]} == {"paragraph"}
    # the same lines read with "§" numbering have no paragraphs: the unit comes from the spec
    par = parse_statute(Path("x.pdf"), dt.date(2025, 1, 1),
                        ActSpec("pl:x", "o przykładach", "u.p.", "DU/2019/1234", "Dz. U. 2019 poz. 1234"),
                        pages=_stream(UST_BODY))
    assert _arts(par)["3"].paragraphs == []


def test_paragraph_unit_comes_from_the_registry_row():
    kc = registry().get("pl:kc")
    assert act_spec("pl:kc").paragraph_unit == "§"
    from dataclasses import replace
    assert ActSpec.of(replace(kc, paragraph_unit="ust.")).paragraph_unit == "ust."
    with pytest.raises(StatuteParseError, match="paragraph unit 'Abs.'"):
        ActSpec.of(replace(kc, paragraph_unit="Abs."))
