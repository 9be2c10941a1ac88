"""The read caches follow the files: a republished version is read anew, an unchanged one is not."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.reads import ReadService
from reads_data import NEW, kc_dir


def test_a_replaced_table_is_read_again(writable_home: Path):
    reads = ReadService.at(writable_home)
    assert reads.unit("pl:kc:art:22^1", NEW).text.startswith("Za konsumenta")
    loads = reads.reader.cache.loads
    reads.unit("pl:kc:art:22^1", NEW)
    assert reads.reader.cache.loads == loads  # warm: nothing read again
    path = kc_dir(writable_home, NEW) / "articles.parquet"
    rows = pq.read_table(path).to_pylist()
    for r in rows:
        if r["id"] == "pl:kc:art:22^1":
            r["text"] = "Konsumentem jest osoba fizyczna."
    tmp = path.with_name(".articles.tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), tmp)
    os.replace(tmp, path)  # as every lexpipe write does: a new file renamed over the old one
    assert reads.unit("pl:kc:art:22^1", NEW).text == "Konsumentem jest osoba fizyczna."
    assert reads.reader.cache.loads > loads
