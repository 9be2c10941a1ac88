"""A unit's history over the held versions: in which versions it changed, and how.

Each pair of consecutive held versions is compared for the unit. For an article the published diff
table of the newer version (``diff_from_<older>.parquet``) is the record — its kind and word diff are
returned as stored; for a paragraph, point or letter (the diff tables are per article) the unit is
compared the same way (:func:`pipelines.reads.units.classify`: text in force, announced wording and
status; ``editorial`` when only ISAP's printing differs) with the diff module's word diff.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.reads.corpus import CorpusReader, act_id_of_unit
from pipelines.reads.errors import UnknownUnit
from pipelines.reads.units import classify, reading, unit_change_diff, unit_state


@dataclass(frozen=True)
class UnitChange:
    from_version: str
    to_version: str
    change: str  # added | changed | repealed | removed | editorial
    old_text: str | None
    new_text: str | None
    word_diff: str  # [-removed-]{+added+} with unchanged words between
    old_status: str | None
    new_status: str | None
    source: str  # stored: the published diff table | computed: compared here (sub-article units)


@dataclass(frozen=True)
class UnitHistory:
    unit_id: str
    act_id: str
    held_versions: list[str]
    present_in: list[str]  # held versions that have the unit (in force, repealed or only announced)
    changes: list[UnitChange] = field(default_factory=list)  # oldest first


def _stored_row(reader: CorpusReader, act_id: str, old: str, new: str, unit_id: str) -> dict | None:
    table = reader.stored_diff(act_id, old, new)
    if table is None:
        return None
    rows = reader.cache.get(reader.version_dir(act_id, new) / f"diff_from_{old}.parquet", "diff_rows",
                            lambda _: {r["article_id"]: r for r in table.to_pylist()})
    return rows.get(unit_id, {})  # {}: the table says the article did not change


def unit_history(reader: CorpusReader, unit_id: str) -> UnitHistory:
    act_id = act_id_of_unit(unit_id)
    reader.act(act_id)
    versions = list(reader.held_versions(act_id))
    indices = [reader.index(act_id, v) for v in versions]
    states = [unit_state(idx, unit_id) for idx in indices]
    present = [v for v, st in zip(versions, states) if st is not None]  # pending-only units count
    if not present:
        raise UnknownUnit(f"unknown unit {unit_id!r}: no held version of {act_id} ({', '.join(versions)}) has it")
    changes = []
    for i in range(1, len(versions)):
        old_v, new_v = versions[i - 1], versions[i]
        old, new = states[i - 1], states[i]
        is_article = indices[i].article_of(unit_id) == unit_id or indices[i - 1].article_of(unit_id) == unit_id
        row = _stored_row(reader, act_id, old_v, new_v, unit_id) if is_article else None
        if row:  # the published record of this article's change
            changes.append(UnitChange(old_v, new_v, row["change"], row["old_text"], row["new_text"],
                                      row["unified_diff"] or "", old.status if old else None,
                                      new.status if new else None, "stored"))
            continue
        if row == {}:
            continue
        kind = classify(old, new)
        if kind is None:
            continue
        changes.append(UnitChange(old_v, new_v, kind, reading(old), reading(new), unit_change_diff(old, new),
                                  old.status if old else None, new.status if new else None, "computed"))
    return UnitHistory(unit_id, act_id, versions, present, changes)
