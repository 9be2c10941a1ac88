"""Case law from the case store to the search index, as plain steps: chunk → validate → promote → index.

Why stage and promote: the chunks of a sync are written to ``staging/`` first; only after the
case-chunks suite passes are they promoted (atomic rename) to ``current/`` and indexed, so a bad
batch never replaces the last good collection and the served index keeps answering. Each step is
idempotent: the same cases give the same chunks (ids carry the content hash), the same version and
cache hits for every embedding.

Layout under ``$LEXPIPE_HOME/caselaw/<jurisdiction>/chunks/`` (``de``: Open Legal Data, this
module's :func:`chunk_cases_step`; ``pl``: SAOS judgments, :func:`pipelines.case_law.pl.build.chunk_pl_judgments_step`):
``staging/case_chunks.parquet``, ``current/case_chunks.parquet``, and ``*.json`` manifests beside
them. The path, promote and read functions take the jurisdiction (default ``de``).
"""

from __future__ import annotations

import io
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.case_store import CaseStore
from connectors.openlegaldata import OldpPaths
from core.layout import Layout
from core.atomic import atomic_write_bytes, atomic_write_json
from pipelines.case_law.chunks import CHUNKER_VERSION, build_case_chunks
from pipelines.case_law.court_names import with_court_names


class CaseBuildError(RuntimeError):
    pass


JURISDICTIONS = ("de", "pl")


def chunks_root(layout: Layout, jurisdiction: str = "de") -> Path:
    if jurisdiction not in JURISDICTIONS:
        raise ValueError(f"no case law for jurisdiction {jurisdiction!r}; known: {', '.join(JURISDICTIONS)}")
    return layout.home / "caselaw" / jurisdiction / "chunks"


def staged_path(layout: Layout, jurisdiction: str = "de") -> Path:
    return chunks_root(layout, jurisdiction) / "staging" / "case_chunks.parquet"


def current_path(layout: Layout, jurisdiction: str = "de") -> Path:
    return chunks_root(layout, jurisdiction) / "current" / "case_chunks.parquet"


def case_store(layout: Layout) -> CaseStore:
    return CaseStore(OldpPaths(layout.home).store_root)


def court_names(store: CaseStore) -> dict[int, str]:
    """Court id → name from the synced courts table (records often embed only the id)."""
    courts = store.courts()
    return {cid: name for cid, name in zip(courts["court_id"].to_pylist(), courts["name"].to_pylist()) if name}


@dataclass
class CaseChunkOutcome:
    path: Path
    cases: int
    chunks: int
    rejected: list[dict] = field(default_factory=list)
    sections: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    court_name_sources: dict[str, int] = field(default_factory=dict)  # cases per court_names.SOURCES entry


def write_parquet(path: Path, table: pa.Table) -> None:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    atomic_write_bytes(path, buf.getvalue())


def chunk_cases_step(layout: Layout, *, max_tokens: int) -> CaseChunkOutcome:
    """Chunk the store's current case versions into ``staging/`` (replacing any earlier stage).

    Court names come from the record, else from the synced court list (by id, else by the case
    slug's court part): :mod:`pipelines.case_law.court_names`."""
    store = case_store(layout)
    cases = store.cases()
    if cases.num_rows == 0:
        raise CaseBuildError(f"no cases in {store.root}: run the case sync first")
    t0 = time.perf_counter()
    cases, name_sources = with_court_names(cases, store.courts())
    result = build_case_chunks(cases, max_tokens=max_tokens)
    path = staged_path(layout)
    write_parquet(path, result.chunks)
    sections: dict[str, int] = {}
    for s in result.chunks["section"].to_pylist():
        sections[s] = sections.get(s, 0) + 1
    outcome = CaseChunkOutcome(path, cases.num_rows, result.chunks.num_rows, result.rejected, sections,
                               round(time.perf_counter() - t0, 2), name_sources)
    atomic_write_json(path.with_suffix(".json"), {
        "chunker_version": CHUNKER_VERSION, "max_tokens": max_tokens, "cases": outcome.cases,
        "chunks": outcome.chunks, "rejected": result.rejected, "court_name_sources": name_sources})
    return outcome


def read_staged(layout: Layout, jurisdiction: str = "de") -> pa.Table:
    path = staged_path(layout, jurisdiction)
    if not path.exists():
        raise CaseBuildError(f"no staged case chunks at {path}: materialize the {jurisdiction} case chunks first")
    return pq.read_table(path)


def promote_staged(layout: Layout, jurisdiction: str = "de") -> Path:
    """Staged chunks become current (one rename); the staged manifest travels with them."""
    src, dst = staged_path(layout, jurisdiction), current_path(layout, jurisdiction)
    if not src.exists():
        if dst.exists():
            return dst  # promoted by an earlier, interrupted run: nothing left to do
        raise CaseBuildError(f"no staged case chunks at {src}")
    dst.parent.mkdir(parents=True, exist_ok=True)
    manifest = src.with_suffix(".json")
    if manifest.exists():
        os.replace(manifest, dst.with_suffix(".json"))
    os.replace(src, dst)
    return dst


def read_current(layout: Layout, jurisdiction: str = "de") -> pa.Table:
    path = current_path(layout, jurisdiction)
    if not path.exists():
        raise CaseBuildError(f"no promoted case chunks at {path}")
    return pq.read_table(path)


def manifest(path: Path) -> dict:
    m = path.with_suffix(".json")
    return json.loads(m.read_text(encoding="utf-8")) if m.exists() else {}
