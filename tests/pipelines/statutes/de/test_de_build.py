"""German statutes published through the CorpusStore: the real bundestag/gesetze Markdown (with its
2012 text states) and the gesetze-im-internet BGB PDF, four BGB versions and their diffs, validation
before publishing."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.layout import Layout
from pipelines.statutes.store import CorpusStore
from pipelines.statutes.de.build import (
    GermanBuildError, build_all, build_german_chunks, build_version, chunk_heading, german_sources, parse_step,
    validate_step,
)
from schemas.arrow import ARTICLES, LEVELS, conform
from registry_rows import GG_AND_XG  # tests/, on sys.path via conftest



@pytest.fixture(scope="module")
def bgb_home(german_versions):
    """The four BGB versions, published once for the session (conftest.py; read-only for the tests)."""
    return german_versions.layout, german_versions.of("de:bgb")


def test_sources_listed(sample_dir):
    srcs = german_sources(sample_dir)
    assert {s.act_id for s in srcs} == {"de:bgb", "de:gg", "de:hgb", "de:stgb", "de:stpo", "de:zpo"}
    assert [(s.format, s.dated) for s in srcs if s.act_id == "de:bgb"] == [
        ("markdown", "2012-12-02"), ("markdown", "2013-01-11"), ("markdown", None), ("pdf", None)]
    with pytest.raises(GermanBuildError, match="gesetze"):
        german_sources(sample_dir / "nowhere")


def test_sources_follow_the_act_registry(sample_dir, tmp_path, monkeypatch):
    # a registry without the BGB: its Markdown and PDF are no sources; an act without a file is skipped
    registry = tmp_path / "acts.toml"
    registry.write_text(GG_AND_XG, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(registry))
    assert [(s.act_id, s.format, s.path.name) for s in german_sources(sample_dir)] == [
        ("de:gg", "markdown", "gg_2012-08-03.md"), ("de:gg", "markdown", "gg_2012-08-06.md"), ("de:gg", "markdown", "gg.md")]


def test_four_bgb_versions_published(bgb_home):
    layout, results = bgb_home
    store = CorpusStore(layout)
    assert [(r.version, r.source.format) for r in results] == [
        ("2012-12-02", "markdown"), ("2013-01-11", "markdown"), ("2021-12-21", "markdown"), ("2024-11-28", "pdf")]
    assert store.published_versions("de:bgb") == ["2012-12-02", "2013-01-11", "2021-12-21", "2024-11-28"]
    assert store.current_version("de:bgb") == "2024-11-28"
    arts = {r["id"]: r for r in store.read("de:bgb", "2024-11-28", "articles").to_pylist()}
    assert arts["de:bgb:par:573b"]["title"] == "Teilkündigung des Vermieters"
    assert arts["de:bgb:par:573b"]["status"] == "in_force"
    # "§ 10 (weggefallen)" and the range "§§ 3 bis 6 (weggefallen)": repealed rows, one per §
    for n in ("10", "3", "6"):
        assert arts[f"de:bgb:par:{n}"]["status"] == "repealed", n
    nodes = store.read("de:bgb", "2024-11-28", "nodes").to_pylist()
    assert {n["level"] for n in nodes} <= set(LEVELS)
    assert {"subtitle", "subchapter"} <= {n["level"] for n in nodes}
    manifest = json.loads((layout.version_dir("de:bgb", "2024-11-28") / "manifest.json").read_text())
    assert manifest["parser_version"].startswith("de-gii") and manifest["stats"]["sections"] == len(arts)


def test_diff_lists_real_amendments(bgb_home):
    layout, results = bgb_home
    diff = results[3].diff
    assert (diff.from_version, diff.to_version) == ("2021-12-21", "2024-11-28")
    rows = {r["number"]: r for r in diff.table.to_pylist()}
    assert rows["705"]["change"] == "changed"  # GbR (MoPeG 2024)
    assert "Rechtsnatur der Gesellschaft" in rows["705"]["unified_diff"]
    assert rows["1773"]["change"] == "changed"  # Vormundschaftsrecht 2023
    assert rows["1896"]["change"] == "repealed"  # Betreuung moved to §§ 1814 ff.
    assert rows["81a"]["change"] == "added" and rows["899a"]["change"] == "removed"
    assert "573b" not in rows  # unchanged wording (printed differently by the two sources) is no change
    # the same words in another form are listed, but not as amendments ("Ort"/"Orte" in § 7)
    assert rows["7"]["change"] == "editorial" and "[-Ort-] {+Orte+}" in rows["7"]["unified_diff"]
    assert rows["1436"]["change"] == "changed"  # only its title changed ("Verwaltung durch einen Betreuer")
    counts = diff.counts()
    assert counts == {"added": 41, "changed": 237, "repealed": 37, "removed": 25, "editorial": 57}
    # changed + repealed + editorial = the §§ whose normalised text/status differ in the source
    # comparison (329) plus the two whose title alone differs (§§ 686, 1436)
    assert counts["changed"] + counts["repealed"] + counts["editorial"] == 329 + 2
    md = (layout.version_dir("de:bgb", "2024-11-28") / "diff_from_2021-12-21.md").read_text()
    assert md.startswith("# de:bgb 2021-12-21 → 2024-11-28: 41 §§ added, 237 changed, 37 repealed, 25 removed "
                         "without trace, 57 editorial")
    assert "\n## editorial (57)\n" in md


def test_absatz_chunks_carry_section_title_and_headings(bgb_home):
    layout, _ = bgb_home
    chunks = [c for c in CorpusStore(layout).read("de:bgb", "2024-11-28", "chunks").to_pylist()
              if c["article_id"] == "de:bgb:par:573b"]
    assert [c["text"][:3] for c in chunks] == ["(1)", "(2)", "(3)", "(4)", "(5)"]  # one chunk per Absatz
    head = chunks[0]["heading_path"]
    assert head.endswith("§ 573b Teilkündigung des Vermieters")
    assert "Mietvertrag, Pachtvertrag" in head and "Titel 5" not in head  # headings, not labels


def test_rerun_reuses_the_build(bgb_home, tmp_path, sample_dir):
    layout, _ = bgb_home
    home = tmp_path / "copy"
    shutil.copytree(layout.home, home)
    again = build_all(Layout(home), sample_dir, acts=("de:bgb",))
    assert all(r.reused for r in again)
    assert CorpusStore(Layout(home)).published_versions("de:bgb") == ["2012-12-02", "2013-01-11", "2021-12-21",
                                                                      "2024-11-28"]


def test_small_act_and_failed_validation_blocks_publish(tmp_home, sample_dir, monkeypatch):
    *_, gg = german_sources(sample_dir, ("de:gg",))  # de/gesetze/gg.md (after the two 2012 text states)
    assert gg.path.name == "gg.md"
    result = build_version(tmp_home, gg)
    assert result.diff is None  # first version: nothing to compare
    arts = {r["id"]: r for r in CorpusStore(tmp_home).read("de:gg", result.version, "articles").to_pylist()}
    assert arts["de:gg:art:3"]["status"] == "in_force" and arts["de:gg:praeambel"]["sort_key"] < 1000

    # a rebuild (new source bytes) that loses the text of an in-force Art. fails the blocking check:
    # nothing is published, the served version stays the good one
    import pipelines.statutes.de.build as gb

    real = gb.articles_table

    def broken(st):
        t = real(st)
        texts = t["text"].to_pylist()
        texts[[r for r in t["id"].to_pylist()].index("de:gg:art:3")] = " "
        return t.set_column(t.schema.get_field_index("text"), t.schema.field("text"), pa.array(texts, pa.string()))

    monkeypatch.setattr(gb, "articles_table", broken)
    monkeypatch.setattr(gb, "_sha256", lambda path: "0" * 64)  # pretend a new source file
    parsed = parse_step(tmp_home, gg)
    assert not parsed.reused
    reports = validate_step(tmp_home, act_id="de:gg", version=parsed.version)
    failed = reports["articles"].failed_expectation("expect_column_values_to_match_regex", "text")
    assert failed is not None and failed.examples == ["de:gg:art:3"]
    with pytest.raises(GermanBuildError, match="validation failed"):
        build_version(tmp_home, gg)
    assert json.loads(tmp_home.current_file("de:gg").read_text())["manifest"]["source_sha256"] == result_sha(tmp_home, result)


def result_sha(layout, result):
    return CorpusStore(layout).manifest(layout.version_dir("de:gg", result.version))["source_sha256"]


def test_heading_modes():
    art = {"number": "573b", "number_display": "§ 573b", "title": "Teilkündigung des Vermieters",
           "path_text": "Buch 2 Recht der Schuldverhältnisse › § 573b Teilkündigung des Vermieters",
           "path": [{"level": "book", "number": "2", "heading": "Recht der Schuldverhältnisse", "id": "x"}]}
    assert chunk_heading(art) == "Recht der Schuldverhältnisse › § 573b Teilkündigung des Vermieters"
    assert chunk_heading(art, "section") == "§ 573b Teilkündigung des Vermieters"
    assert chunk_heading(art, "path") == art["path_text"]
    assert chunk_heading(art, "none") == "§ 573b"
    with pytest.raises(ValueError, match="heading mode"):
        chunk_heading(art, "bogus")


def test_published_polish_articles_without_title_still_conform(tmp_path):
    """Parquet published before ARTICLES.title existed: conform fills the column with nulls."""
    old_schema = pa.schema([f for f in ARTICLES if f.name != "title"])
    row = {f.name: None for f in old_schema}
    row.update(id="pl:kc:art:1", act_id="pl:kc", version=__import__("datetime").date(2024, 12, 19), ordinal=0,
               number="1", status="in_force", content_hash="h")
    old = pa.Table.from_pylist([row], schema=old_schema)
    pq.write_table(old, tmp_path / "a.parquet")
    conformed = conform(pq.read_table(tmp_path / "a.parquet"), ARTICLES)
    assert conformed.schema.names == ARTICLES.names and conformed["title"].to_pylist() == [None]
    with pytest.raises(ValueError, match="missing columns"):
        conform(old.drop_columns(["status"]), ARTICLES)


def test_chunks_of_repealed_section_keep_its_note():
    arts = pa.Table.from_pylist([{
        "id": "de:bgb:par:10", "act_id": "de:bgb", "version": __import__("datetime").date(2024, 11, 28),
        "ordinal": 0, "number": "10", "number_display": "§ 10", "title": None, "sort_key": 10000, "path": [],
        "path_text": "§ 10", "text": "", "paragraphs": [], "status": "repealed", "status_note": "(weggefallen)",
        "content_hash": "h"}], schema=ARTICLES)
    (c,) = build_german_chunks(arts, max_tokens=256).to_pylist()
    assert c["text"] == "(weggefallen)" and c["status"] == "repealed" and c["token_count"] >= 1
