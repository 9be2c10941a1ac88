"""Bulk export: the published tables as Parquet (byte for byte) or JSONL, ETags and byte ranges."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import BadRange, InvalidRead, UnknownTable, UnknownVersion
from pipelines.reads.export import parse_range
from reads_data import NEW, OLD, kc_dir, publish_third_version


def plain(value):
    """A Parquet value as its JSONL rendering reads back."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("table", ["acts", "articles", "nodes", "chunks"])
def test_parquet_is_the_published_file(reads: ReadService, corpus_home: Path, table):
    ex = reads.export("pl:kc", NEW, table, "parquet")
    path = kc_dir(corpus_home, NEW) / f"{table}.parquet"
    body = b"".join(ex.stream())
    assert body == path.read_bytes() and ex.size() == len(body)
    assert pq.read_table(io.BytesIO(body)).equals(pq.read_table(path))
    assert ex.media_type == "application/vnd.apache.parquet" and ex.filename == f"pl_kc_{NEW}_{table}.parquet"


@pytest.mark.parametrize("table", ["acts", "articles", "nodes", "diff"])
def test_jsonl_rows_are_the_published_rows(reads: ReadService, corpus_home: Path, table):
    ex = reads.export("pl:kc", NEW, table, "jsonl")
    body = b"".join(ex.stream())
    name = f"diff_from_{OLD}" if table == "diff" else table
    published = pq.read_table(kc_dir(corpus_home, NEW) / f"{name}.parquet").to_pylist()
    lines = body.decode().splitlines()
    assert len(lines) == len(published) and body.endswith(b"\n")
    assert [json.loads(x) for x in lines] == [plain(r) for r in published]
    assert body == ex.content() and ex.size() == len(body)


def test_etags_are_stable_and_distinct(reads: ReadService, corpus_home: Path):
    again = ReadService.at(corpus_home)  # a fresh process's view: nothing cached
    tags = {}
    for v in (OLD, NEW):
        for table in ("articles", "nodes"):
            for fmt in ("parquet", "jsonl"):
                tag = reads.export("pl:kc", v, table, fmt).etag
                assert tag == again.export("pl:kc", v, table, fmt).etag
                assert tag.startswith('"') and tag.endswith('"') and len(tag) == 42
                tags[(v, table, fmt)] = tag
    assert len(set(tags.values())) == len(tags)


def test_a_republished_version_changes_its_etag(writable_home: Path):
    reads = ReadService.at(writable_home)
    publish_third_version(writable_home, "2026-03-01")
    before = reads.export("pl:kc", "2026-03-01", "articles", "jsonl")
    import shutil

    shutil.rmtree(kc_dir(writable_home, "2026-03-01"))
    publish_third_version(writable_home, "2026-03-01", text="Umowa leasingu wymaga formy elektronicznej.")
    after = reads.export("pl:kc", "2026-03-01", "articles", "jsonl")
    assert before.etag != after.etag and b"formy elektronicznej" in after.content()


def test_slices_put_together_are_the_body(reads: ReadService):
    for fmt in ("parquet", "jsonl"):
        ex = reads.export("pl:kc", NEW, "articles", fmt)
        body, size = ex.content(), ex.size()
        cut = [0, 1, 100_000, size // 2, size - 1, size]
        got = b"".join(b"".join(ex.slice(a, b - 1)) for a, b in zip(cut, cut[1:]))
        assert got == body, fmt


@pytest.mark.parametrize("header,expected", [
    (None, None), ("", None), ("items=0-5", None),  # no range, or a unit HTTP says to ignore
    ("bytes=0-99", (0, 99)), ("bytes=100-", (100, 999)), ("bytes=-10", (990, 999)), ("bytes=990-5000", (990, 999)),
    ("bytes=-5000", (0, 999)), ("bytes=999-999", (999, 999)), (" bytes = 5-6", None),
])
def test_parse_range(header, expected):
    assert parse_range(header, 1000) == expected


@pytest.mark.parametrize("header,message", [
    ("bytes=1000-", "starts beyond"), ("bytes=5-4", "ends before"), ("bytes=-0", "selects no byte"),
    ("bytes=a-b", "malformed"), ("bytes=-", "malformed"), ("bytes=0-1,5-6", "one byte range"),
])
def test_unsatisfiable_ranges(header, message):
    with pytest.raises(BadRange, match=message) as err:
        parse_range(header, 1000)
    assert err.value.size == 1000


def test_export_refusals(reads: ReadService):
    with pytest.raises(UnknownTable, match="no diff table"):
        reads.export("pl:kc", OLD, "diff", "jsonl")  # the first version has nothing to diff against
    with pytest.raises(UnknownTable, match="tables: acts, articles, nodes, chunks, diff"):
        reads.export("pl:kc", NEW, "manifest", "jsonl")
    with pytest.raises(InvalidRead, match="format must be one of parquet, jsonl"):
        reads.export("pl:kc", NEW, "articles", "csv")
    with pytest.raises(UnknownVersion):
        reads.export("pl:kc", "2020-01-01", "articles", "parquet")
