"""Acts and their held versions: the registry rows with the served version, and per version what
its manifest, ``source.json`` and ``acts.parquet`` record."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.reads.corpus import CorpusReader
from schemas.acts import registry

EXPORT_TABLES = ("acts", "articles", "nodes", "chunks", "diff")


@dataclass(frozen=True)
class ActSummary:
    act_id: str
    jurisdiction: str
    language: str
    title: str
    citation: str
    official_title: str
    source: str
    address: str
    served_version: str | None  # what current.json names (the newest published version)
    versions: list[str]  # held versions, oldest first
    oldest_version: str | None
    newest_version: str | None


@dataclass(frozen=True)
class VersionSummary:
    act_id: str
    version: str  # the text-state date of the consolidated text
    source_date: str  # the date the source gives for this text (ELI change date), else the version
    source_sha256: str | None
    source_url: str | None
    based_on: str | None  # "t.j. Dz. U. z 2025 r. poz. 1071, …"
    parser_version: str | None
    published_at: str | None
    counts: dict[str, int | float]  # the manifest's stats: articles, repealed, pending_changes, …
    served: bool
    previous_version: str | None
    next_version: str | None
    diff_from: list[str] = field(default_factory=list)  # versions a diff table was published against
    tables: list[str] = field(default_factory=list)  # what /download serves for this version


def list_acts(reader: CorpusReader) -> list[ActSummary]:
    """Every registry act, held or not, with its held and served versions."""
    out = []
    for a in registry().acts:
        versions = list(reader.versions(a.id))
        out.append(ActSummary(a.id, a.jurisdiction, a.language, a.title, a.citation, a.official_title, a.source,
                              a.address, reader.served_version(a.id) if versions else None, versions,
                              versions[0] if versions else None, versions[-1] if versions else None))
    return out


def act_summary(reader: CorpusReader, act_id: str) -> ActSummary:
    reader.act(act_id)
    return next(a for a in list_acts(reader) if a.act_id == act_id)


def version_summary(reader: CorpusReader, act_id: str, version: str) -> VersionSummary:
    versions = reader.held_versions(act_id)
    reader.require_version(act_id, version)
    i = versions.index(version)
    manifest = reader.manifest(act_id, version)
    source = reader.json_file(act_id, version, "source.json")
    row = reader.act_row(act_id, version)
    change = source.get("change_date")
    diff_from = [n.removeprefix("diff_from_") for n in reader.diff_names(act_id, version)]
    tables = [t for t in EXPORT_TABLES if (t == "diff" and diff_from)
              or (reader.version_dir(act_id, version) / f"{t}.parquet").is_file()]
    return VersionSummary(
        act_id=act_id, version=version, source_date=(str(change)[:10] if change else version),
        source_sha256=manifest.get("source_sha256") or source.get("source_sha256") or row.get("source_sha256"),
        source_url=source.get("source_url") or row.get("source_url"), based_on=row.get("based_on"),
        parser_version=manifest.get("parser_version"), published_at=manifest.get("published_at"),
        counts=dict(manifest.get("stats") or {}), served=reader.served_version(act_id) == version,
        previous_version=versions[i - 1] if i else None, next_version=versions[i + 1] if i + 1 < len(versions) else None,
        diff_from=diff_from, tables=tables)


def list_versions(reader: CorpusReader, act_id: str) -> list[VersionSummary]:
    """The held versions of an act, oldest first ([] for a registry act not published yet)."""
    return [version_summary(reader, act_id, v) for v in reader.versions(act_id)]
