"""A chunker upgrade over an already-published version re-publishes the whole version folder."""

import json
import shutil

import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.statutes.pl.build import CHUNKER_VERSION, chunk_step, publish_step

VERSION = "2025-11-13"


def test_new_chunker_republishes_published_version_with_all_its_files(tmp_path, corpus_home):
    home = tmp_path / "home"
    shutil.copytree(corpus_home, home)
    layout = Layout(home)
    published = layout.version_dir("pl:kc", VERSION)
    before = sorted(p.name for p in published.iterdir())
    articles_before = pq.read_table(published / "articles.parquet")
    info = json.loads((published / "chunk.json").read_text())
    (published / "chunk.json").write_text(json.dumps({**info, "chunker": "chunk-0"}))  # an older chunker
    (published / "chunks.parquet").unlink()
    pq.write_table(articles_before.slice(0, 0).select(["id"]), published / "chunks.parquet")  # stale content

    chunks = chunk_step(layout, act_id="pl:kc", version=VERSION, max_tokens=256)
    assert chunks.num_rows == 2094
    publish_step(layout, act_id="pl:kc", version=VERSION)

    assert sorted(p.name for p in published.iterdir()) == before  # nothing lost in the swap
    assert pq.read_table(published / "chunks.parquet").num_rows == 2094
    assert pq.read_table(published / "articles.parquet").equals(articles_before)
    assert json.loads((published / "chunk.json").read_text())["chunker"] == CHUNKER_VERSION
    assert json.loads((published / "manifest.json").read_text())["chunker"] == CHUNKER_VERSION
    assert not layout.staging_dir("pl:kc", VERSION).exists()
