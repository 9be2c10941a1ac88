"""The publish step of every jurisdiction's build: write the version's manifest, promote its staging folder.

Why shared: the Polish (:mod:`pipelines.statutes.pl.build`) and German
(:mod:`pipelines.statutes.de.build`) builds publish the same way — the manifest is the parse record
(source hash, parser version, stats) plus the act, version, chunker, time and staged files, then
:meth:`~pipelines.statutes.store.CorpusStore.publish` — and differed only in their chunker version.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from core.layout import Layout
from pipelines.statutes.store import CorpusStore


def publish_version(layout: Layout, *, act_id: str, version: str, chunker: str) -> Path:
    """Promote the staged build of ``act_id`` ``version`` (chunked by ``chunker``) with its manifest;
    a published version with nothing staged keeps its manifest's parse record. Returns the version folder."""
    store = CorpusStore(layout)
    staging = layout.staging_dir(act_id, version)
    parse = _read_json(staging / "parse.json") or store.manifest(layout.version_dir(act_id, version))
    manifest = {**{k: parse.get(k) for k in ("source_sha256", "parser_version", "stats", "parse_seconds")},
                "act_id": act_id, "version": version, "chunker": chunker,
                "published_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "files": sorted(p.name for p in staging.iterdir()) if staging.exists() else None}
    return store.publish(act_id, version, manifest)


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}
