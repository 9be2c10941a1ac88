"""Versioned corpus on disk: build in ``.staging/<version>``, promote by rename, flip ``current.json``.

Nothing half-written is ever visible: every file is written to a temp name and renamed, a version
folder appears by one ``rename`` of a complete staging folder, and readers follow ``current.json``
which is itself replaced atomically. A failed build leaves the published versions untouched.
"""

from __future__ import annotations

import bisect
import io
import json
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from core.layout import Layout
from core.atomic import atomic_write_bytes, atomic_write_json
from schemas.arrow import SCHEMAS, conform


class CorpusError(RuntimeError):
    pass


def version_in_force(versions: Sequence[str], day: str) -> int:
    """Index in ``versions`` (version ids, oldest first) of the version in force on ``day`` (ISO):
    the newest whose date is on or before it, since a held version stands for the act from its
    date until the next held version; -1 when ``day`` precedes them all. A version id is its date
    (``2025-11-13``), or its date and a same-day sequence (``2012-08-06.02``: a second change of
    the act published that day, :mod:`connectors.gesetze.history`): a day sees its last version.
    The one rule of point-in-time reads (``pipelines/reads``), version-aware citation links
    (``pipelines/citations``) and the search index's ``as_of``."""
    return bisect.bisect_right([v[:10] for v in versions], day[:10]) - 1


def version_date(version: str) -> str:
    """The date of a version id: ``2012-08-06.02`` → ``2012-08-06``."""
    return version[:10]


def write_table(path: Path, table: pa.Table, kind: str) -> None:
    """Conform to the named schema and write Parquet atomically."""
    table = conform(table, SCHEMAS[kind])
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    atomic_write_bytes(path, buf.getvalue())


def read_table(path: Path) -> pa.Table:
    return pq.read_table(path)


class CorpusStore:
    def __init__(self, layout: Layout):
        self.layout = layout

    # -- building --------------------------------------------------------------------------------
    def staging(self, act_id: str, version: str) -> Path:
        d = self.layout.staging_dir(act_id, version)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def stage_table(self, act_id: str, version: str, name: str, table: pa.Table, kind: str | None = None) -> Path:
        path = self.staging(act_id, version) / f"{name}.parquet"
        write_table(path, table, kind or name)
        return path

    def stage_file(self, act_id: str, version: str, name: str, data: bytes | str) -> Path:
        path = self.staging(act_id, version) / name
        atomic_write_bytes(path, data.encode() if isinstance(data, str) else data)
        return path

    def stage_json(self, act_id: str, version: str, name: str, obj: Any) -> Path:
        path = self.staging(act_id, version) / name
        atomic_write_json(path, obj)
        return path

    def stage_published_copy(self, act_id: str, version: str) -> Path:
        """Staging := a copy of the published folder (minus its manifest), for partial rebuilds."""
        staging = self.staging(act_id, version)
        for f in self.layout.version_dir(act_id, version).iterdir():
            if f.is_file() and f.name != "manifest.json":
                shutil.copy2(f, staging / f.name)
        return staging

    def discard_staging(self, act_id: str, version: str) -> None:
        shutil.rmtree(self.layout.staging_dir(act_id, version), ignore_errors=True)

    # -- reading ----------------------------------------------------------------------------------
    def built_dir(self, act_id: str, version: str) -> Path | None:
        """Where the freshest build of a version lives: staging if being built, else published."""
        for d in (self.layout.staging_dir(act_id, version), self.layout.version_dir(act_id, version)):
            if (d / "manifest.json").exists() or (d / "articles.parquet").exists():
                return d
        return None

    def manifest(self, directory: Path) -> dict:
        p = directory / "manifest.json"
        return json.loads(p.read_text()) if p.exists() else {}

    def published_versions(self, act_id: str) -> list[str]:
        d = self.layout.act_dir(act_id)
        if not d.exists():
            return []
        return sorted(p.name for p in d.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").exists())

    def current_version(self, act_id: str) -> str | None:
        p = self.layout.current_file(act_id)
        return json.loads(p.read_text())["version"] if p.exists() else None

    def previous_version(self, act_id: str, version: str) -> str | None:
        older = [v for v in self.published_versions(act_id) if v < version]
        return older[-1] if older else None

    def read(self, act_id: str, version: str, name: str, *, published_only: bool = False) -> pa.Table:
        d = self.layout.version_dir(act_id, version) if published_only else self.built_dir(act_id, version)
        if d is None or not (d / f"{name}.parquet").exists():
            raise CorpusError(f"no {name}.parquet for {act_id} version {version} under {self.layout.act_dir(act_id)}")
        return read_table(d / f"{name}.parquet")

    # -- publishing -------------------------------------------------------------------------------
    def publish(self, act_id: str, version: str, manifest: dict) -> Path:
        """Promote the staging folder of ``version`` and point ``current.json`` at the newest version."""
        staging = self.layout.staging_dir(act_id, version)
        target = self.layout.version_dir(act_id, version)
        if not (staging / "articles.parquet").exists():
            if (target / "manifest.json").exists() and self.manifest(target).get("source_sha256") == manifest.get("source_sha256"):
                self._point_current(act_id)  # re-run of a published version: nothing to promote
                return target
            raise CorpusError(f"nothing staged for {act_id} {version}: run the parse step first")
        atomic_write_json(staging / "manifest.json", manifest)
        if target.exists():  # re-publication (e.g. a new parser version): swap, then drop the old copy
            trash = self.layout.act_dir(act_id) / ".trash" / f"{version}-{time.time_ns()}"
            trash.parent.mkdir(parents=True, exist_ok=True)
            target.rename(trash)
            staging.rename(target)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            staging.rename(target)
        self._point_current(act_id)
        self._log_publication(act_id, version, manifest)
        return target

    def publications_log(self) -> Path:
        """``corpus/.publications.jsonl``: one line per publication, in publication order — what
        the change feed reads instead of walking every act folder (6,000+ acts)."""
        return self.layout.home / "corpus" / ".publications.jsonl"

    def _log_publication(self, act_id: str, version: str, manifest: dict) -> None:
        """Append the publication to the log: one ``write`` of one short line to a file opened
        with O_APPEND, so concurrent publishers never interleave within a line. The version folder
        (promoted above) stays the source of truth: a lost line is recovered by the feed's scan."""
        import os

        line = json.dumps({"act_id": act_id, "version": version, "published_at": manifest.get("published_at")},
                          ensure_ascii=False) + "\n"
        path = self.publications_log()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def _point_current(self, act_id: str) -> None:
        versions = self.published_versions(act_id)
        if versions:
            newest = versions[-1]
            atomic_write_json(self.layout.current_file(act_id), {
                "version": newest, "path": newest, "published_versions": versions,
                "manifest": self.manifest(self.layout.version_dir(act_id, newest))})
