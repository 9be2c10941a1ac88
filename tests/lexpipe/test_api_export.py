"""``/acts/{act}/versions/{v}/download``: the published tables as Parquet or JSONL, ETag / 304, Range /
206 / 416, over the real published k.c. versions."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app
from pipelines.reads import ReadService

URL = "/acts/pl:kc/versions/{v}/download"


@pytest.fixture(scope="module")
def client(corpus_home: Path) -> TestClient:
    return TestClient(create_app(reads=ReadService.at(corpus_home)))


def published(home: Path, version: str, name: str) -> Path:
    return home / "corpus" / "pl" / "kc" / version / f"{name}.parquet"


def plain(value):
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("version", [OLD, NEW])
@pytest.mark.parametrize("table", ["articles", "nodes", "chunks", "acts"])
def test_parquet_download_is_the_published_table(client, corpus_home, version, table):
    r = client.get(URL.format(v=version), params={"format": "parquet", "table": table})
    assert r.status_code == 200
    path = published(corpus_home, version, table)
    assert r.content == path.read_bytes()
    assert pq.read_table(io.BytesIO(r.content)).equals(pq.read_table(path))
    assert r.headers["content-type"] == "application/vnd.apache.parquet"
    assert r.headers["content-length"] == str(path.stat().st_size) and r.headers["accept-ranges"] == "bytes"
    assert f'filename="pl_kc_{version}_{table}.parquet"' in r.headers["content-disposition"]


@pytest.mark.parametrize("table,name", [("articles", "articles"), ("nodes", "nodes"), ("diff", f"diff_from_{OLD}")])
def test_jsonl_download_is_the_published_rows(client, corpus_home, table, name):
    r = client.get(URL.format(v=NEW), params={"format": "jsonl", "table": table})
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-ndjson"
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert rows == [plain(x) for x in pq.read_table(published(corpus_home, NEW, name)).to_pylist()]


def test_the_default_is_articles_as_parquet(client, corpus_home):
    assert client.get(URL.format(v=NEW)).content == published(corpus_home, NEW, "articles").read_bytes()


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_etag_and_304(client, corpus_home, fmt):
    url, params = URL.format(v=NEW), {"format": fmt}
    first = client.get(url, params=params)
    etag = first.headers["etag"]
    assert etag.startswith('"') and client.get(url, params=params).headers["etag"] == etag  # stable
    fresh = TestClient(create_app(reads=ReadService.at(corpus_home)))  # another process: the same tag
    assert fresh.get(url, params=params).headers["etag"] == etag
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        r = client.get(url, params=params, headers={"If-None-Match": header})
        assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == etag, header
    r = client.get(url, params=params, headers={"If-None-Match": '"stale"'})
    assert r.status_code == 200 and r.content == first.content
    other = client.get(URL.format(v=OLD), params=params).headers["etag"]
    assert other != etag  # another version, another tag


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_ranges_are_206(client, fmt):
    url, params = URL.format(v=NEW), {"format": fmt}
    full = client.get(url, params=params).content
    size = len(full)
    for header, (first, last) in (("bytes=0-99", (0, 99)), ("bytes=1000-", (1000, size - 1)),
                                  ("bytes=-500", (size - 500, size - 1)), (f"bytes={size - 1}-{size + 10}", (size - 1, size - 1))):
        r = client.get(url, params=params, headers={"Range": header})
        assert r.status_code == 206, (header, r.text)
        assert r.content == full[first:last + 1]
        assert r.headers["content-range"] == f"bytes {first}-{last}/{size}"
        assert r.headers["content-length"] == str(last - first + 1)
    etag = client.get(url, params=params).headers["etag"]
    assert client.get(url, params=params, headers={"Range": "bytes=0-9", "If-Range": etag}).status_code == 206
    stale = client.get(url, params=params, headers={"Range": "bytes=0-9", "If-Range": '"older"'})
    assert stale.status_code == 200 and stale.content == full  # the client's copy is outdated: all of it


@pytest.mark.parametrize("header,fragment", [
    ("bytes=99999999-", "starts beyond"), ("bytes=10-5", "ends before"), ("bytes=0-1,5-9", "one byte range"),
    ("bytes=abc", "malformed"), ("bytes=-0", "selects no byte"),
])
def test_bad_ranges_are_416(client, corpus_home, header, fragment):
    r = client.get(URL.format(v=NEW), headers={"Range": header})
    assert r.status_code == 416 and fragment in r.json()["detail"] and r.json()["field"] == "Range", r.text
    assert r.headers["content-range"] == f"bytes */{published(corpus_home, NEW, 'articles').stat().st_size}"


@pytest.mark.parametrize("url,params,status,fragment", [
    ("/acts/pl:kc/versions/2020-01-01/download", {}, 404, "no published version 2020-01-01"),
    ("/acts/pl:xx/versions/2025-11-13/download", {}, 404, "unknown act"),
    (f"/acts/pl:kc/versions/{OLD}/download", {"table": "diff"}, 404, "no diff table"),
    ("/acts/pl:kc/versions/latest/download", {}, 422, "version must be a date"),
])
def test_refusals(client, url, params, status, fragment):
    r = client.get(url, params=params)
    assert r.status_code == status and fragment in r.json()["detail"], r.text


@pytest.mark.parametrize("params", [{"format": "csv"}, {"table": "manifest"}, {"format": ""}])
def test_unknown_format_or_table_is_422(client, params):
    r = client.get(URL.format(v=NEW), params=params)
    assert r.status_code == 422 and r.json()["field"] == next(iter(params)) and "Input should be" in r.json()["message"]
