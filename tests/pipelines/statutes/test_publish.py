"""The publish step every build shares (pipelines/statutes/publish.py)."""

from __future__ import annotations

import json

import pytest

from core.layout import Layout
from pipelines.statutes.publish import publish_version
from pipelines.statutes.store import CorpusError, CorpusStore
from schemas.arrow import ARTICLES, from_rows

PARSE = {"source_sha256": "ab" * 32, "parser_version": "p-1", "stats": {"articles": 0}, "parse_seconds": 0.5,
         "not_in_manifest": True}


def test_publish_writes_the_manifest_and_promotes_staging(tmp_path):
    layout = Layout(tmp_path)
    store = CorpusStore(layout)
    store.stage_table("x:a", "2024-01-01", "articles", from_rows([], ARTICLES))
    store.stage_json("x:a", "2024-01-01", "parse.json", PARSE)
    path = publish_version(layout, act_id="x:a", version="2024-01-01", chunker="c-7")
    assert path == layout.version_dir("x:a", "2024-01-01") and not layout.staging_dir("x:a", "2024-01-01").exists()
    manifest = json.loads((path / "manifest.json").read_text())
    assert {k: v for k, v in manifest.items() if k != "published_at"} == {
        "source_sha256": "ab" * 32, "parser_version": "p-1", "stats": {"articles": 0}, "parse_seconds": 0.5,
        "act_id": "x:a", "version": "2024-01-01", "chunker": "c-7", "files": ["articles.parquet", "parse.json"]}
    assert store.current_version("x:a") == "2024-01-01"
    # a re-run with nothing staged keeps the published version (same source)
    assert publish_version(layout, act_id="x:a", version="2024-01-01", chunker="c-7") == path


def test_nothing_staged_is_an_error(tmp_path):
    with pytest.raises(CorpusError, match="nothing staged for x:a 2024-01-01"):
        publish_version(Layout(tmp_path), act_id="x:a", version="2024-01-01", chunker="c-7")
