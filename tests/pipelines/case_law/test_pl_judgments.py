"""Polish judgments (SAOS): clean text, sections and chunks on the 200 real judgments of the two
dump pages, the case-chunks GX suite on them, and the staged → promoted chunk table."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from saos_fixtures import dump_items, saos_judgments  # tests/, on sys.path via conftest
from core.layout import Layout
from pipelines.case_law.case_build import chunks_root, current_path, manifest, staged_path
from pipelines.case_law.chunks import count_tokens, validate_case_chunks
from pipelines.case_law.html_text import _HTML_HINT
from pipelines.case_law.pl.build import (COURT_TYPE_NAMES, NO_DIVISION, build_pl_case_chunks,
                                         chunk_pl_judgments_step, promote_pl_chunks, read_current_pl_chunks,
                                         read_staged_pl_chunks, validate_staged_pl_chunks)
from pipelines.case_law.pl.sections import PL_SECTIONS, REASONS, split_pl_sections
from pipelines.case_law.pl.text import clean_judgment_text
from schemas.cases import CASE_CHUNKS
from schemas.expectations import CASE_SECTIONS, PL_CASE_SECTIONS

MAX = 256
MARGIN = 1.10


@pytest.fixture(scope="module")
def items(sample_dir: Path) -> dict[int, dict]:
    return {i["id"]: i for i in dump_items(sample_dir)}


@pytest.fixture(scope="module")
def judgments(sample_dir: Path) -> pa.Table:
    table = saos_judgments(sample_dir)
    assert table.num_rows == 200
    return table


@pytest.fixture(scope="module")
def cleaned(items) -> dict[int, tuple]:
    out = {}
    for jid, item in items.items():
        clean = clean_judgment_text(item["textContent"])
        out[jid] = (clean, split_pl_sections(clean))
    return out


@pytest.fixture(scope="module")
def built(judgments: pa.Table):
    result, sources = build_pl_case_chunks(judgments, max_tokens=MAX, keep_texts=True)
    return result, sources


def _sections(cleaned, jid: int) -> list[tuple[str, str, str]]:
    """(name, label, body) of a judgment's sections."""
    clean, sections = cleaned[jid]
    return [(s.name, s.label, clean.text[s.body_start:s.end]) for s in sections]


# ---------------------------------------------------------------------- clean text


class _Tokens(HTMLParser):
    """The words of an HTML text, with inline tags read as nothing or as a space."""

    INLINE = {"span", "a", "strong", "em", "b", "i", "u", "sup", "sub", "font"}

    def __init__(self, inline_space: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.inline_space = inline_space

    def handle_starttag(self, tag, attrs):
        if tag not in self.INLINE or self.inline_space:
            self.parts.append(" ")

    handle_endtag = lambda self, tag: self.handle_starttag(tag, [])  # noqa: E731

    def handle_data(self, data):
        self.parts.append(data)

    @classmethod
    def words(cls, html: str, inline_space: bool) -> set[str]:
        p = cls(inline_space)
        p.feed(html)
        p.close()
        return set("".join(p.parts).replace("\xad", "").split())


_SUPERSCRIPTS = str.maketrans("", "", "⁰¹²³⁴⁵⁶⁷⁸⁹⁽⁾⁺⁻")


def test_clean_text_is_a_pure_function_of_the_content(items):
    for item in list(items.values())[::10]:
        a, b = clean_judgment_text(item["textContent"]), clean_judgment_text(item["textContent"])
        assert a.text == b.text and a.blocks == b.blocks


def test_no_markup_and_no_glued_words_on_all_200(items, cleaned):
    """Every word of the clean text is a word of the source: HTML read with tags as spaces or
    inline tags as nothing (the source's own "385<sup>1</sup>§"), plain text as written — except
    superscripts and hyphen joins of wrapped lines ("Sanitarno-" + "Epidemiologiczną")."""
    glued: dict[int, list[str]] = {}
    for jid, item in items.items():
        clean, _ = cleaned[jid]
        content = item["textContent"]
        assert not re.search(r"<[a-zA-Z/!][^>]*>|&[a-z]+;|&#\d+;", clean.text), jid
        html = bool(_HTML_HINT.search(content))
        words = (_Tokens.words(content, True) | _Tokens.words(content, False)) if html else \
            set(content.replace("\xad", "").split())
        bad = [w for w in clean.text.split() if w not in words and w.translate(_SUPERSCRIPTS) not in words
               and w.translate(_SUPERSCRIPTS) != "" and not re.search(r"\d[¹²³⁴⁵⁶⁷⁸⁹⁰⁽]", w)  # art. 626¹³
               and not (not html and "-" in w)]
        if bad:
            glued[jid] = bad[:5]
    assert glued == {}


def test_anonymised_names_and_soft_hyphens(cleaned):
    clean, _ = cleaned[56616]  # "<span class="anon-block">P.</span>wniósł" in the source
    assert "P. wniósł" in clean.text and "P.wniósł" not in clean.text
    clean, _ = cleaned[25340]  # "usta\xadwowymi"
    assert "ustawowymi" in clean.text and "\xad" not in clean.text


def test_wrapped_pdf_text_becomes_paragraphs(items, cleaned):
    """Supreme Court and KIO texts are wrapped at ~80 characters; paragraphs are joined back,
    page numbers dropped, headings kept as lines of their own."""
    clean, _ = cleaned[94826]
    lines = clean.text.split("\n")
    assert "Uzasadnienie" in lines and "Sąd Najwyższy zważył, co następuje:" in lines
    assert "2" not in lines and "3" not in lines  # page numbers
    first = next(line for line in lines if line.startswith("Krystyna C. i Tomasz C. wnieśli"))
    assert first.endswith("pomniejszonej o należny pozwanemu wkład i część majątku spółki.")
    for court in ("SUPREME", "NATIONAL_APPEAL_CHAMBER"):
        blocks = sum(len(cleaned[j][0].blocks) for j, i in items.items() if i["courtType"] == court)
        source_lines = sum(len([x for x in i["textContent"].split("\n") if x.strip()])
                           for i in items.values() if i["courtType"] == court)
        assert blocks < source_lines / 4, (court, blocks, source_lines)  # measured 1:8 (SN), 1:4.6 (KIO)
    clean, _ = cleaned[117953]  # KIO: "Sanitarno-\nEpidemiologiczna" and blank-line paragraphs
    assert "Powiatowa Stacja Sanitarno-Epidemiologiczna," in clean.text
    assert "U z a s a d n i e n i e" in clean.text.split("\n")


def test_tribunal_text_keeps_one_paragraph_per_line(items, cleaned):
    for jid, item in items.items():
        if item["courtType"] == "CONSTITUTIONAL_TRIBUNAL":
            lines = [x.strip() for x in item["textContent"].split("\n") if x.strip()]
            assert len(cleaned[jid][0].blocks) == len(lines)


# ---------------------------------------------------------------------- sections


_LOOSE_REASONS = re.compile(r"^\s*u\s*z\s*a\s*s\s*a\s*d\s*n\s*i\s*e\s*n\s*i\s*e\s*:?\s*$", re.I | re.M)
_LOOSE_OPERATIVE = re.compile(r"^\s*(?:orzeka|postanawia)\s*:?\s*$", re.I | re.M)


def test_section_coverage_on_all_200(items, cleaned):
    """The figures of the sections module docstring: every judgment whose text has an operative
    part gets a sentencja, every one whose text has a reasons heading gets its uzasadnienie."""
    have_op = found_op = have_reasons = found_reasons = 0
    names = Counter()
    for jid, item in items.items():
        clean, sections = cleaned[jid]
        got = {s.name for s in sections}
        names.update(got)
        if item["judgmentType"] != "REASONS" or _LOOSE_OPERATIVE.search(clean.text):
            have_op += 1
            found_op += "sentencja" in got
        if _LOOSE_REASONS.search(clean.text):
            have_reasons += 1
            found_reasons += bool(got & set(REASONS))
        pos = 0
        for k, s in enumerate(sections):  # in order, no overlap, indexes 0..n-1
            assert s.index == k and pos <= s.start <= s.body_start <= s.end, (jid, s)
            pos = s.end
    assert (found_op, have_op) == (195, 195)
    assert (found_reasons, have_reasons) == (194, 194)
    assert names["komparycja"] == 200 and names["rozwazania"] == 159
    assert (names["teza"], names["zdanie_odrebne"], names["pouczenie"]) == (8, 3, 79)
    assert "body" not in names


def test_supreme_court_judgment(cleaned):
    secs = _sections(cleaned, 94826)  # I CSK 428/10
    assert [s[0] for s in secs] == ["komparycja", "sentencja", "uzasadnienie", "rozwazania"]
    assert secs[0][1] == "WYROK" and secs[0][2].startswith("Sygn. akt I CSK 428/10\nWYROK\n")
    assert secs[1][2] == "oddala skargę kasacyjną."
    assert secs[2][1] == "Uzasadnienie" and secs[2][2].startswith("Krystyna C. i Tomasz C. wnieśli")
    assert secs[3][1] == "Sąd Najwyższy zważył, co następuje:"
    assert secs[3][2].endswith("Sąd Najwyższy orzekł, jak w sentencji.")


def test_operative_verb_inside_the_paragraph(cleaned):
    secs = _sections(cleaned, 94829)  # "… Sądu Apelacyjnego z dnia 16 kwietnia 2010 r., oddala skargę …"
    assert secs[0][2].endswith("z dnia 16 kwietnia 2010 r., ")
    assert secs[1][0] == "sentencja" and secs[1][2].startswith("oddala skargę kasacyjną")


def test_resolution_and_reporter_thesis(cleaned):
    secs = _sections(cleaned, 94846)  # III CZP 111/10, uchwała składu siedmiu sędziów
    assert [s[0] for s in secs] == ["komparycja", "sentencja", "uzasadnienie", "rozwazania"]
    assert secs[1][1] == "podjął uchwałę:" and secs[1][2].startswith("Poddaniem uchwały pod głosowanie")
    secs = _sections(cleaned, 94877)  # II PK 181/10 as published with its thesis
    assert [s[0] for s in secs] == ["komparycja", "teza", "komparycja", "sentencja", "uzasadnienie", "rozwazania"]
    assert secs[1][2].startswith("1. Roszczenie o odszkodowanie z tytułu odmowy nawiązania stosunku pracy")
    assert secs[2][2].startswith("Przewodniczący SSN") and secs[3][2].startswith("1) o d d a l i ł skargę")


def test_national_appeal_chamber_judgment(cleaned):
    secs = _sections(cleaned, 117953)  # KIO 771/11
    assert [s[0] for s in secs] == ["komparycja", "sentencja", "pouczenie", "uzasadnienie"]
    assert secs[1][1] == "orzeka:" and secs[1][2].startswith("1. Oddala odwołanie.")
    assert secs[2][2].startswith("Stosownie do art. 198a i 198b ustawy")
    assert secs[3][1] == "U z a s a d n i e n i e"
    secs = _sections(cleaned, 117997)  # KIO 823/11, postanowienie
    assert [s[0] for s in secs][:2] == ["komparycja", "sentencja"] and secs[1][1] == "postanawia:"


def test_constitutional_tribunal_with_dissent(cleaned):
    secs = _sections(cleaned, 110289)  # Kp 1/11
    assert [s[0] for s in secs] == ["komparycja", "sentencja", "uzasadnienie", "rozwazania", "zdanie_odrebne"]
    assert secs[1][1] == "o r z e k a:"
    assert secs[3][1] == "Trybunał Konstytucyjny zważył, co następuje:"
    assert secs[4][1] == "Zdanie odrębne" and secs[4][2].startswith("sędzi TK Teresy Liszcz")
    secs = _sections(cleaned, 110367)  # the dissent's own "UZASADNIENIE" stays in the dissent
    assert [s[0] for s in secs][-1] == "zdanie_odrebne" and "\nUZASADNIENIE\n" in secs[-1][2]
    secs = _sections(cleaned, 110501)  # Ts 89/10
    assert secs[1][:2] == ("sentencja", "p o s t a n a w i a:")
    assert secs[1][2] == "odmówić nadania dalszego biegu skardze konstytucyjnej."


def test_common_court_judgment_and_reasons_document(cleaned):
    secs = _sections(cleaned, 283463)  # SA Wrocław II AKa 105/11 (HTML)
    assert [s[0] for s in secs] == ["komparycja", "sentencja"]
    assert secs[1][2].startswith("I. utrzymuje zaskarżony wyrok")
    secs = _sections(cleaned, 56616)  # REASONS: "Sygn. akt … / UZASADNIENIE", no operative part
    assert [s[0] for s in secs] == ["komparycja", "uzasadnienie", "rozwazania"]
    assert secs[0][2] == "Sygn. akt XVII AmC 1449/10"


def test_polish_section_names_are_the_suites():
    assert set(PL_SECTIONS) == set(PL_CASE_SECTIONS)
    assert CASE_SECTIONS[-1] == "body" and "komparycja" not in CASE_SECTIONS  # the German list is unchanged


# ---------------------------------------------------------------------- chunks


def test_every_judgment_is_chunked_with_its_metadata(judgments, built):
    result, sources = built
    chunks = result.chunks
    assert chunks.schema.equals(CASE_CHUNKS, check_metadata=False)
    assert result.rejected == [] and sources == {"text": 195, "court_type": 5}
    assert sorted(set(chunks["case_id"].to_pylist())) == sorted(judgments["judgment_id"].to_pylist())
    ids = chunks["chunk_id"].to_pylist()
    assert len(ids) == len(set(ids)) and all(i.startswith("saos:") for i in ids)
    by_id = {r["judgment_id"]: r for r in judgments.to_pylist()}
    for r in chunks.to_pylist():
        j = by_id[r["case_id"]]
        assert r["source"] == "saos" and r["case_sha256"] == j["content_sha256"]
        assert r["file_number"] == j["case_numbers"][0] and r["date"] == j["judgment_date"]
        assert r["court_id"] == (j["division_id"] or NO_DIVISION)
        assert r["decision_type"] == {"SENTENCE": "Wyrok", "DECISION": "Postanowienie", "RESOLUTION": "Uchwała",
                                      "REASONS": "Uzasadnienie"}[j["judgment_type"]]
        assert r["section"] in PL_SECTIONS and r["rn_first"] is None and r["slug"] is None
    names = {r["case_id"]: r["court_name"] for r in chunks.to_pylist()}
    assert names[283463] == "Sąd Apelacyjny we Wrocławiu" and names[94826] == "Sąd Najwyższy"
    assert names[110289] == "Trybunał Konstytucyjny" and names[117953] == "Krajowa Izba Odwoławcza"
    assert names[19047] == "Sąd Okręgowy we Wrocławiu"
    assert names[56616] == COURT_TYPE_NAMES["COMMON"]  # a REASONS text names no court in its header


def test_chunks_are_exact_spans_bounded_and_never_cross_a_section(built, cleaned):
    result, _ = built
    for r in result.chunks.to_pylist():
        clean = result.texts[("saos", r["case_id"], r["case_sha256"])]
        assert clean.text == cleaned[r["case_id"]][0].text
        assert clean.text[r["char_start"]:r["char_end"]] == r["text"] and r["text"] == r["text"].strip()
        assert 1 <= r["token_count"] <= MAX * MARGIN and r["token_count"] == count_tokens(r["text"], "pl")
        section = cleaned[r["case_id"]][1][r["section_index"]]
        assert section.name == r["section"] and section.label == r["section_label"]
        assert section.body_start <= r["char_start"] < r["char_end"] <= section.end
    counts = Counter(result.chunks["section"].to_pylist())
    assert result.chunks.num_rows == 3645 and counts["sentencja"] == 203 and counts["rozwazania"] == 1526


def test_long_paragraphs_are_split_at_sentences(built):
    result, _ = built
    big = result.chunks.filter(pc.greater(result.chunks["token_count"], MAX * 0.8))
    assert big.num_rows > 0
    # a piece cut from a long paragraph ends at a sentence end, not inside "art." or "Dz. U."
    for text in big["text"].to_pylist()[:50]:
        assert not re.search(r"\b(?:art|ust|Dz|poz|pkt)\.$", text), text[-40:]


def test_a_judgment_without_text_is_rejected_with_its_reason(judgments):
    rows = judgments.slice(0, 3).to_pylist()
    rows[1]["text_content"] = "<p> <br/> </p>"
    from schemas.arrow import from_rows
    from schemas.cases import SAOS_JUDGMENTS

    result, _ = build_pl_case_chunks(from_rows(rows, SAOS_JUDGMENTS), max_tokens=MAX)
    assert [r["case_id"] for r in result.rejected] == [rows[1]["judgment_id"]]
    assert "no text after cleaning" in result.rejected[0]["reasons"][0]
    assert set(result.chunks["case_id"].to_pylist()) == {rows[0]["judgment_id"], rows[2]["judgment_id"]}


def test_the_newest_fetch_of_a_judgment_is_chunked(judgments):
    import datetime as dt

    from schemas.arrow import from_rows
    from schemas.cases import SAOS_JUDGMENTS

    old = judgments.slice(0, 1).to_pylist()[0]
    new = dict(old, text_content=old["text_content"] + "<p>Dopisek nowszej wersji.</p>",
               content_sha256="f" * 64, fetched_at=old["fetched_at"] + dt.timedelta(days=1))
    result, _ = build_pl_case_chunks(from_rows([new, old], SAOS_JUDGMENTS), max_tokens=MAX)
    assert set(result.chunks["case_sha256"].to_pylist()) == {"f" * 64}


# ---------------------------------------------------------------------- the GX suite


def test_suite_accepts_the_polish_chunks(built):
    report = validate_case_chunks(built[0].chunks, max_tokens=MAX)
    assert report.success, [(f.expectation, f.column, f.examples[:3]) for f in report.failed]


def test_suite_blocks_a_bad_batch(built):
    chunks = built[0].chunks.slice(0, 40)
    rows = chunks.to_pylist()
    rows[0]["section"] = "uzasadnienie_wyroku"  # not in the vocabulary
    rows[1]["text"] = '<p class="x">' + rows[1]["text"]  # markup left, and a span that no longer matches
    rows[2]["token_count"] = MAX * 3
    rows[3]["chunk_id"] = rows[4]["chunk_id"]
    from schemas.arrow import from_rows

    report = validate_case_chunks(from_rows(rows, CASE_CHUNKS), max_tokens=MAX)
    assert not report.success
    failed = {(f.expectation, f.column) for f in report.failed}
    assert {("expect_column_values_to_be_in_set", "section"), ("expect_column_values_to_not_match_regex", "text"),
            ("expect_column_values_to_be_between", "token_count"), ("expect_column_values_to_be_unique", "chunk_id"),
            ("expect_column_values_to_be_in_set", "span_matches_text")} <= failed


# ---------------------------------------------------------------------- stage → validate → promote


def test_stage_validate_promote(judgments, tmp_path: Path):
    layout = Layout(tmp_path / "home")
    out = chunk_pl_judgments_step(layout, judgments, max_tokens=MAX)
    assert out.path == staged_path(layout, "pl") == layout.home / "caselaw/pl/chunks/staging/case_chunks.parquet"
    assert (out.cases, out.chunks, out.rejected) == (200, 3645, [])
    assert out.court_name_sources == {"text": 195, "court_type": 5} and out.sections["uzasadnienie"] == 1538
    m = manifest(out.path)
    assert m["judgments"] == 200 and m["chunks"] == 3645 and m["chunker_version"].startswith("pl-case-chunks-1/")
    staged = read_staged_pl_chunks(layout)
    assert validate_staged_pl_chunks(layout, max_tokens=MAX).success
    current = promote_pl_chunks(layout)
    assert current == current_path(layout, "pl") and not out.path.exists()
    assert manifest(current)["chunks"] == 3645
    assert read_current_pl_chunks(layout).equals(staged)
    assert promote_pl_chunks(layout) == current  # an interrupted promote finishes, nothing else happens
    again = chunk_pl_judgments_step(layout, judgments, max_tokens=MAX)  # idempotent: the same chunks
    assert read_staged_pl_chunks(layout)["chunk_id"].equals(staged["chunk_id"]) and again.chunks == out.chunks
    # the German layout is untouched by all this
    assert chunks_root(layout) == layout.home / "caselaw" / "de" / "chunks" and not chunks_root(layout).exists()
    with pytest.raises(ValueError, match="no case law for jurisdiction 'fr'"):
        chunks_root(layout, "fr")
