"""Where everything lives under ``$LEXPIPE_HOME`` (a public contract, documented in the README).

    raw/sha256/ab/<sha256>.pdf           immutable landing zone, one file per distinct content
    raw/sha256/ab/<sha256>.json          sidecar: source URL, retrieved-at, headers, act id, version
    raw/http_cache.json                  ETag / Last-Modified per URL for conditional requests
    corpus/<jur>/<act>/<version>/        a published version (read by downstream consumers)
        act.json, articles.parquet, nodes.parquet, chunks.parquet,
        diff_from_<prev-version>.parquet, diff_from_<prev-version>.md, manifest.json
    corpus/<jur>/<act>/current.json      the version being served ({"version": "2025-11-13", ...})
    corpus/<jur>/<act>/.staging/<ver>/   a version being built; promoted by rename when checks pass
    corpus/<jur>/.changesets/<key>.json  what each applied changeset (a source commit / listing) did, per act
    catalogue/<source>.json              the acts a source lists (discovered; the registry reads it)
    sources/<source>/                    a connector's state: the gesetze clone, the replay cursor
    caselaw/pl/citations/cited_by.parquet, caselaw/de/citation_counts.parquet   statute units the courts cite
    benchmarks/questions.parquet         benchmark questions with gold references (+ questions.json)
    benchmarks/staleness/<jur>/<act>/<ver>.parquet   gold references a version flags (stale or not)
    benchmarks/retrieval_eval/history/   one Parquet file per (run, version): the metrics history
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    home: Path

    @property
    def raw(self) -> Path:
        return self.home / "raw"

    def act_dir(self, act_id: str) -> Path:
        jur, act = act_id.split(":", 1)
        return self.home / "corpus" / jur / act

    def version_dir(self, act_id: str, version: str) -> Path:
        return self.act_dir(act_id) / version

    def staging_dir(self, act_id: str, version: str) -> Path:
        return self.act_dir(act_id) / ".staging" / version

    def current_file(self, act_id: str) -> Path:
        return self.act_dir(act_id) / "current.json"

    def catalogue(self, source: str) -> Path:
        """The acts a source lists (``catalogue/gesetze.json``, ``catalogue/eli.json``), discovered
        by its connector; the act registry reads it (``schemas/catalogue.py``)."""
        return self.home / "catalogue" / f"{source}.json"

    def source_state(self, source: str) -> Path:
        """A connector's own state (``sources/gesetze/``: the clone, the replay cursor)."""
        return self.home / "sources" / source

    def changesets(self, jurisdiction: str) -> Path:
        """The record of each applied changeset of a jurisdiction (``corpus/<jur>/.changesets/``)."""
        return self.home / "corpus" / jurisdiction / ".changesets"

    @property
    def reports(self) -> Path:
        return self.home / "reports"

    def case_citations(self, jurisdiction: str) -> Path:
        """Which statute units the court decisions cite: ``caselaw/pl/citations/cited_by.parquet``
        (SAOS judgments per article; ``links.parquet`` beside it holds each citation) and
        ``caselaw/de/citation_counts.parquet`` (Open Legal Data: counts per §)."""
        if jurisdiction == "pl":
            return self.home / "caselaw" / "pl" / "citations" / "cited_by.parquet"
        if jurisdiction == "de":
            return self.home / "caselaw" / "de" / "citation_counts.parquet"
        raise ValueError(f"no case-law citations for jurisdiction {jurisdiction!r}; known: pl, de")

    @property
    def benchmarks(self) -> Path:
        """Benchmark questions, per-version staleness and the retrieval-evaluation history."""
        return self.home / "benchmarks"
