"""Constants and helpers of the read-layer tests (importable: this folder is on sys.path)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from corpus_fixtures import NEW, OLD  # noqa: F401  (the two real sample versions)

BETWEEN = "2025-06-30"  # after OLD, before NEW: OLD is in force
LATER = "2031-01-01"  # after NEW: served from NEW


def kc_dir(home: Path, version: str) -> Path:
    return home / "corpus" / "pl" / "kc" / version


def table_rows(home: Path, version: str, name: str) -> list[dict]:
    return pq.read_table(kc_dir(home, version) / f"{name}.parquet").to_pylist()


def rows_by_id(home: Path, version: str, name: str) -> dict[str, dict]:
    return {r["id"]: r for r in table_rows(home, version, name)}


THIRD = "2026-02-01"
THIRD_709_2 = "Umowa leasingu wymaga zachowania formy pisemnej."  # the edit the third version makes


def publish_third_version(home: Path, version: str = THIRD, text: str = THIRD_709_2) -> Path:
    """Publish a third k.c. version: NEW's tables with art. 709^2 (and its node) reworded to ``text``,
    the version column set, a manifest, no diff table (so diffs to it are computed), current.json
    pointing at it. The only made-up data of the read tests: the fixture holds two real versions."""
    import datetime as dt
    import hashlib
    import json
    import shutil

    import pyarrow as pa

    from core.atomic import atomic_write_json
    from pipelines.statutes.store import write_table

    src, dst = kc_dir(home, NEW), kc_dir(home, version)
    staging = home / "corpus" / "pl" / "kc" / ".staging" / version
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    day = dt.date.fromisoformat(version)
    for name in ("acts", "articles", "nodes", "chunks"):
        table = pq.read_table(src / f"{name}.parquet")
        table = table.set_column(table.schema.get_field_index("version"), "version",
                                 pa.array([day] * table.num_rows, pa.date32()))
        if name in ("articles", "nodes"):
            rows = table.to_pylist()
            for r in rows:
                if r["id"] == "pl:kc:art:709^2":
                    r["text"] = text
                    if name == "articles":
                        r["content_hash"] = hashlib.sha256(text.encode()).hexdigest()
            table = pa.Table.from_pylist(rows, schema=table.schema)
        write_table(staging / f"{name}.parquet", table, name)
    manifest = {**json.loads((src / "manifest.json").read_text()), "version": version,
                "source_sha256": "f" * 64, "published_at": "2026-02-02T00:00:00+00:00"}
    atomic_write_json(staging / "manifest.json", manifest)
    staging.rename(dst)
    versions = sorted(p.name for p in (home / "corpus" / "pl" / "kc").iterdir()
                      if (p / "manifest.json").exists())
    atomic_write_json(home / "corpus" / "pl" / "kc" / "current.json",
                      {"version": versions[-1], "path": versions[-1], "published_versions": versions})
    return dst
