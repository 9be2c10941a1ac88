"""An act's changes between two held versions.

Consecutive held versions: the diff table published with the newer one
(``diff_from_<older>.parquet``, :func:`pipelines.statutes.diff.diff_versions`) is read as stored.
Versions further apart (a version in between): the function the act's build uses (``diff_versions``;
``diff_german`` for German statutes) over the two ARTICLES tables, so
a diff across three versions reads like the one the pipeline would have published had the middle one
been skipped. Rows are per article with the diff asset's kinds (added, changed, repealed, removed,
editorial); ``editorial`` rows — only ISAP's printing differs, not an amendment — are kept apart from
the amendments. Each row also lists which of the article's paragraphs, points and letters changed
(``parts``), compared unit by unit as in :mod:`pipelines.reads.history`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.reads.corpus import CorpusReader, VersionIndex
from pipelines.reads.errors import BadVersionPair
from pipelines.reads.units import classify, level_of, pending_only_ids, unit_change_diff, unit_state
from pipelines.statutes.diff import diff_versions

KINDS = ("added", "changed", "repealed", "removed", "editorial")


@dataclass(frozen=True)
class PartChange:
    unit_id: str
    level: str
    change: str
    word_diff: str


@dataclass(frozen=True)
class DiffEntry:
    unit_id: str  # the article
    number: str | None
    change: str
    old_text: str | None
    new_text: str | None
    word_diff: str
    old_hash: str | None
    new_hash: str | None
    parts: list[PartChange] = field(default_factory=list)


@dataclass(frozen=True)
class ActDiff:
    act_id: str
    from_version: str
    to_version: str
    consecutive: bool  # no held version between the two
    source: str  # stored: the published diff table | computed: diff_versions over the two versions
    counts: dict[str, int]  # per kind, editorial included
    changes: list[DiffEntry]  # amendments: added, changed, repealed, removed
    editorial: list[DiffEntry]  # reprinted differently, not amended


def _descendants(idx: VersionIndex, unit_id: str) -> list[str]:
    out, stack = [], list(reversed(idx.children.get(unit_id, ())))
    while stack:
        u = stack.pop()
        out.append(u)
        stack.extend(reversed(idx.children.get(u, ())))
    return out


def _parts(old: VersionIndex, new: VersionIndex, article_id: str) -> list[PartChange]:
    ids: list[str] = []
    for u in (*_descendants(new, article_id), *pending_only_ids(new, article_id),
              *_descendants(old, article_id), *pending_only_ids(old, article_id)):
        if u not in ids:
            ids.append(u)
    out = []
    for u in ids:
        before, after = unit_state(old, u), unit_state(new, u)
        kind = classify(before, after)
        if kind is not None:
            node = new.nodes.get(u) or old.nodes.get(u)
            out.append(PartChange(u, node.level if node else level_of(u), kind, unit_change_diff(before, after)))
    return out


def _diff_function(reader: CorpusReader, act_id: str):
    """The function the act's build publishes its diff tables with: German statutes (source
    ``gesetze``) compare normalised wording and titles (``diff_german``, imported only here: it
    brings the German parsers), every other act :func:`~pipelines.statutes.diff.diff_versions`."""
    if reader.act(act_id).source == "gesetze":
        from pipelines.statutes.de.build import diff_german

        return diff_german
    return diff_versions


def act_diff(reader: CorpusReader, act_id: str, from_version: str, to_version: str) -> ActDiff:
    """Changes of ``act_id`` from ``from_version`` to ``to_version`` (both held, from older than to)."""
    reader.act(act_id)
    reader.require_version(act_id, from_version, "from")
    reader.require_version(act_id, to_version, "to")
    if from_version == to_version:
        raise BadVersionPair(f"from and to are the same version ({from_version}): nothing to compare")
    if from_version > to_version:
        raise BadVersionPair(f"from ({from_version}) must be older than to ({to_version}); "
                             f"swap them for the changes from {to_version} to {from_version}")
    paths = (reader.table_path(act_id, from_version, "articles"), reader.table_path(act_id, to_version, "articles"),
             reader.table_path(act_id, from_version, "nodes"), reader.table_path(act_id, to_version, "nodes"),
             reader.layout.act_dir(act_id))  # a version published in between makes the pair non-consecutive
    return reader.cache.get_many(paths, "act_diff", lambda: _act_diff(reader, act_id, from_version, to_version))


def _act_diff(reader: CorpusReader, act_id: str, from_version: str, to_version: str) -> ActDiff:
    versions = reader.versions(act_id)
    consecutive = versions.index(to_version) - versions.index(from_version) == 1
    table = reader.stored_diff(act_id, from_version, to_version) if consecutive else None
    source = "stored"
    if table is None:
        source = "computed"
        table = _diff_function(reader, act_id)(reader.articles_table(act_id, from_version),
                                               reader.articles_table(act_id, to_version))
    old_idx, new_idx = reader.index(act_id, from_version), reader.index(act_id, to_version)
    entries = [DiffEntry(r["article_id"], r["number"], r["change"], r["old_text"], r["new_text"],
                         r["unified_diff"] or "", r["old_hash"], r["new_hash"],
                         _parts(old_idx, new_idx, r["article_id"]) if r["change"] not in ("added", "removed") else [])
               for r in table.to_pylist()]
    counts = {k: sum(e.change == k for e in entries) for k in KINDS}
    return ActDiff(act_id, from_version, to_version, consecutive, source, counts,
                   [e for e in entries if e.change != "editorial"], [e for e in entries if e.change == "editorial"])
