"""The corpus as one resolve call sees it: held acts, the version in force at the date, unit indexes.

Every lookup goes through the :class:`~pipelines.reads.corpus.CorpusReader`, whose caches keep one
:class:`~pipelines.reads.corpus.VersionIndex` per (act, version) across calls; a :class:`CorpusView`
memoises them for the length of one call too, so a text citing ``k.c.`` two hundred times stats the
parquet files once, not two hundred times (a cached ``reader.index`` is three ``stat`` calls).

Held acts are found from the corpus folders (``corpus/<jurisdiction>/<act>``: one ``scandir`` per
jurisdiction) intersected with the registry's ids, not by asking every registry row for its
versions: with the thousands of German rows issue 24 adds, that would be thousands of ``stat`` calls
per request.
"""

from __future__ import annotations

import datetime as dt
import os

from pipelines.reads import ReadService
from pipelines.reads.corpus import VersionIndex
from pipelines.reads.errors import NotCovered
from pipelines.statutes.store import version_in_force
from pipelines.citations.registry_pin import current as current_registry
from schemas.acts import ActRegistry

_ids_memo: list = [None, {}]


def registry_ids() -> dict[str, int]:
    """The registry's act ids → their position in the registry, built once per registry object."""
    reg: ActRegistry = current_registry()
    if _ids_memo[0] is not reg:
        _ids_memo[1] = {a: i for i, a in enumerate(reg.ids())}
        _ids_memo[0] = reg
    return _ids_memo[1]


class CorpusView:
    """Held acts, versions and per-version indexes for one date, memoised for one resolve call."""

    def __init__(self, reads: ReadService, day: dt.date):
        self.reads = reads
        self.reader = reads.reader
        self.day = day
        self._versions: dict[str, tuple[str, ...]] = {}
        self._index: dict[tuple[str, str], VersionIndex] = {}
        self._held: tuple[str, ...] | None = None

    def held(self) -> tuple[str, ...]:
        """Ids of the registry's acts with at least one published version, registry order."""
        if self._held is None:
            known = registry_ids()
            found = [a for a in _corpus_acts(self.reader.layout.home / "corpus") if a in known and self.versions(a)]
            self._held = tuple(sorted(found, key=known.__getitem__))
        return self._held

    def versions(self, act_id: str) -> tuple[str, ...]:
        """Held versions of ``act_id``, oldest first; () for an act the registry does not know or no version of."""
        if act_id not in self._versions:
            self._versions[act_id] = self.reader.versions(act_id) if act_id in registry_ids() else ()
        return self._versions[act_id]

    def version_at(self, act_id: str) -> str:
        """The version in force at the date: the newest held on or before it. NotCovered before the oldest."""
        versions = self.versions(act_id)
        i = version_in_force(versions, self.day.isoformat())
        if i < 0:
            raise NotCovered(f"{self.day.isoformat()} is before the oldest held version of {act_id} ({versions[0]})")
        return versions[i]

    def index(self, act_id: str, version: str) -> VersionIndex:
        key = (act_id, version)
        if key not in self._index:
            self._index[key] = self.reader.index(act_id, version)
        return self._index[key]

    def holding(self, unit_id: str, act_id: str) -> list[str]:
        """The held versions of ``act_id`` that have ``unit_id``."""
        return [v for v in self.versions(act_id) if self.index(act_id, v).has(unit_id)]


def _corpus_acts(root) -> list[str]:
    """``<jurisdiction>:<act>`` of every act folder under the corpus root, sorted."""
    out: list[str] = []
    try:
        jurs = [e for e in os.scandir(root) if e.is_dir()]
    except FileNotFoundError:
        return out
    for j in jurs:
        out += [f"{j.name}:{e.name}" for e in os.scandir(j.path) if e.is_dir() and not e.name.startswith(".")]
    return sorted(out)
