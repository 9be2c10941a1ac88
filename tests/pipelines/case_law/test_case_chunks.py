"""Case chunks from the CASES table the connector writes from the real samples."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from pipelines.case_law.chunks import build_case_chunks, case_chunks, count_tokens, validate_case_chunks
from pipelines.case_law.html_text import clean_legal_html
from pipelines.case_law.sections import split_sections
from schemas.cases import CASE_CHUNKS

MAX = 96


@pytest.fixture(scope="module")
def cases(sample_dir: Path, tmp_path_factory) -> pa.Table:
    table, quarantine = synced_cases(sample_dir, tmp_path_factory.mktemp("oldp"))
    assert table.num_rows == 6 and quarantine.num_rows == 10  # the connector's own contract
    return table


@pytest.fixture(scope="module")
def built(cases: pa.Table):
    return build_case_chunks(cases, max_tokens=MAX, keep_texts=True)


def test_every_synced_case_is_chunked_with_its_metadata(cases: pa.Table, built) -> None:
    chunks = built.chunks
    assert chunks.schema.equals(CASE_CHUNKS, check_metadata=False)
    assert built.rejected == []
    assert sorted(set(chunks.column("case_id").to_pylist())) == sorted(cases.column("case_id").to_pylist())
    by_case = {r["case_id"]: r for r in cases.to_pylist()}
    ids = chunks.column("chunk_id").to_pylist()
    assert len(ids) == len(set(ids))
    for r in chunks.to_pylist():
        case = by_case[r["case_id"]]
        for mine, theirs in (("court_id", "court_id"), ("court_name", "court_name"), ("date", "date"),
                             ("file_number", "file_number"), ("ecli", "ecli"), ("decision_type", "type"),
                             ("case_sha256", "content_sha256"), ("slug", "slug")):
            assert r[mine] == case[theirs], (mine, r["chunk_id"])
        assert r["chunk_id"].startswith(f"openlegaldata:{r['case_id']}:{case['content_sha256'][:12]}:")


def test_chunk_spans_are_the_clean_text_and_never_cross_a_section(cases: pa.Table, built) -> None:
    for case in cases.to_pylist():
        clean = built.texts[("openlegaldata", case["case_id"], case["content_sha256"])]
        assert clean.text == clean_legal_html(case["content"]).text
        sections = split_sections(clean)
        rows = [r for r in built.chunks.to_pylist() if r["case_id"] == case["case_id"]]
        assert [r["chunk_index"] for r in rows] == list(range(len(rows)))
        assert all(r["chunk_count"] == len(rows) for r in rows)
        prev_end = -1
        for r in rows:
            assert clean.text[r["char_start"]:r["char_end"]] == r["text"]
            assert r["char_start"] >= prev_end  # in order, no overlap
            prev_end = r["char_end"]
            sec = sections[r["section_index"]]
            assert sec.name == r["section"] and sec.body_start <= r["char_start"] < r["char_end"] <= sec.end
            assert r["token_count"] == count_tokens(r["text"]) <= MAX * 1.1
            if r["rn_first"]:
                assert int(r["rn_first"]) <= int(r["rn_last"])
        # every paragraph character of every section is in some chunk (nothing dropped)
        covered = sum(r["char_end"] - r["char_start"] for r in rows)
        body = sum(b.end - b.start + 1 for b in clean.blocks if b.kind == "paragraph") - 1
        assert covered >= body - 2 * len(rows)
        names = {r["section"] for r in rows}
        assert {"tenor"} <= names and names & {"gruende", "entscheidungsgruende"}


def test_small_token_budget_splits_sentences_within_bounds(cases: pa.Table) -> None:
    chunks = case_chunks(cases, max_tokens=24)
    assert pc.max(chunks["token_count"]).as_py() <= 24 * 1.1
    assert chunks.num_rows > build_case_chunks(cases, max_tokens=MAX).chunks.num_rows


def test_bad_content_is_rejected_with_a_reason_and_does_not_stop_the_build(cases: pa.Table) -> None:
    rows = cases.to_pylist()
    rows[0] = dict(rows[0], content="<div><script>var x=1;</script>   </div>")
    rows[1] = dict(rows[1], content="## Tenor\n\n## Gründe\n")
    result = build_case_chunks(pa.Table.from_pylist(rows, schema=cases.schema), max_tokens=MAX)
    reasons = {r["case_id"]: r["reasons"] for r in result.rejected}
    assert set(reasons) == {rows[0]["case_id"], rows[1]["case_id"]}
    assert "no text after cleaning" in reasons[rows[0]["case_id"]][0]
    assert "only headings" in reasons[rows[1]["case_id"]][0]
    assert set(result.chunks.column("case_id").to_pylist()) == {r["case_id"] for r in rows[2:]}
    with pytest.raises(ValueError, match="lacks columns"):
        case_chunks(cases.drop_columns(["content"]))


def test_gx_suite_passes_on_real_chunks_and_names_broken_rows(built) -> None:
    report = validate_case_chunks(built.chunks, max_tokens=MAX)
    assert report.success, report.summary()
    rows = built.chunks.to_pylist()
    bad = [dict(r) for r in rows]
    bad[1]["chunk_id"] = bad[0]["chunk_id"]
    bad[2]["text"] = "<p>" + bad[2]["text"]
    bad[3]["char_end"] = bad[3]["char_end"] + 5
    bad[4]["section"] = "epilogue"
    report = validate_case_chunks(pa.Table.from_pylist(bad, schema=CASE_CHUNKS), max_tokens=MAX)
    assert not report.success
    failed = {(f.expectation, f.column) for f in report.failed}
    assert ("expect_column_values_to_be_unique", "chunk_id") in failed
    assert ("expect_column_values_to_not_match_regex", "text") in failed
    assert ("expect_column_values_to_be_in_set", "span_matches_text") in failed
    assert ("expect_column_values_to_be_in_set", "section") in failed
    assert bad[3]["chunk_id"] in report.failed_expectation(
        "expect_column_values_to_be_in_set", "span_matches_text").examples
