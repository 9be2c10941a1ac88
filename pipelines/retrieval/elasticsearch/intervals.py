"""Row intervals of one act: which stored row is visible at which version (pure, no client).

A row holds one chunk *content* of an act across versions (spec: one row per content, a validity
interval instead of a copy per version). On Elasticsearch the interval is kept as two version ids,
``version_from`` (first version that shows the row) and ``version_to`` (first version that no
longer does; :data:`OPEN_VERSION` while the act's newest version shows it). Version ids sort in
order (``2012-08-06`` < ``2012-08-06.02`` < ``2012-08-07``), so "row visible at version V" is
``version_from <= V < version_to`` — a keyword range query — and dates follow from the ids' first
ten characters.

Why version ids and not the spec's ``seq_from``/``seq_to`` indexes (the embedded engine's): an
index shifts when a version arrives out of order, and every row of the act after it would have to
be rewritten (on Elasticsearch: retired and copied). An id interval stays valid when a version is
inserted between two others; only the rows whose content differs at the new version change. The
two encodings answer the same question: at the act's k-th version, the row with seq interval
[s, t) is visible iff versions[s] <= versions[k] < versions[t].

The planner: :func:`apply_version` sets what an act holds at one version (new, re-published or
inserted out of order) and leaves every other version's visible set exactly as it was;
:func:`prune` forgets versions beyond the newest ``keep``; :func:`visible_at` is the reference a
test holds both to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence

OPEN_VERSION = "9999-12-31"  # version_to of a row the act's newest version still shows
OPEN_DATE = "9999-12-31"  # valid_to of such a row

Key = Hashable  # the spec's content key: (chunk_id, content_hash, status)


@dataclass(eq=False)
class Row:
    """One stored row of an act: its content key and interval; ``ref`` is the writer's handle
    (the Elasticsearch document, or a row staged in this publication)."""
    key: Key
    version_from: str
    version_to: str
    ref: Any = None

    def visible_at(self, version: str) -> bool:
        return self.version_from <= version < self.version_to


@dataclass
class Plan:
    """What applying a version changes, for the writer to carry out.

    * ``reinterval``: (row, from, to) — the row's content stays, its interval changes;
    * ``remove``: rows that no version shows any more;
    * ``copies``: (row, from, to) — a NEW row with that row's content (the part of a split row
      after an inserted version);
    * ``new``: (i, from, to) — a new row from chunk ``i`` of the published version.
    """
    reinterval: list[tuple[Row, str, str]] = field(default_factory=list)
    remove: list[Row] = field(default_factory=list)
    copies: list[tuple[Row, str, str]] = field(default_factory=list)
    new: list[tuple[int, str, str]] = field(default_factory=list)
    kept: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.reinterval or self.remove or self.copies or self.new)


def visible_at(rows: Sequence[Row], version: str) -> list[Row]:
    return [r for r in rows if r.visible_at(version)]


def apply_version(rows: Sequence[Row], versions: Sequence[str], version: str,
                  keys: Sequence[Key]) -> tuple[Plan, list[str]]:
    """Plan for the act to show exactly ``keys`` at ``version`` (chunk order), every other held
    version unchanged; returns the plan and the act's new version list.

    ``version`` may be new and newest (the common case: open rows whose key is in ``keys`` are
    kept, the other open rows closed at ``version``, the remaining chunks become rows
    ``[version, OPEN)``), new and older than the newest (inserted: rows it must not show are split
    around it), or already held (re-published: the same keys change nothing).
    """
    if len(set(keys)) != len(keys):
        seen: set = set()
        dup = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"version {version}: content key {dup!r} appears twice")
    held = sorted(versions)
    later = [v for v in held if v > version]
    nxt = later[0] if later else None
    plan = Plan()
    wanted = {k: i for i, k in enumerate(keys)}
    matched: set = set()
    live = list(rows)
    # rows that show (or, for a new version, would extend over) ``version``
    for r in [r for r in live if r.version_from <= version < r.version_to]:
        if r.key in wanted and r.key not in matched:
            matched.add(r.key)
            plan.kept += 1
            continue
        after = nxt is not None and r.version_to > nxt  # the versions after ``version`` still show it
        if r.version_from < version:
            plan.reinterval.append((r, r.version_from, version))
            if after:
                plan.copies.append((r, nxt, r.version_to))
        elif after:
            plan.reinterval.append((r, nxt, r.version_to))
        else:
            plan.remove.append(r)
    starting_next = {r.key: r for r in live if nxt is not None and r.version_from == nxt}
    for k, i in wanted.items():
        if k in matched:
            continue
        s = starting_next.get(k)
        if s is not None and s not in plan.remove and all(s is not t for t, _, _ in plan.reinterval):
            plan.reinterval.append((s, version, s.version_to))  # the same content from ``nxt`` on: extend it back
        else:
            plan.new.append((i, version, nxt or OPEN_VERSION))
    return plan, sorted(set(held) | {version})


def prune(rows: Sequence[Row], versions: Sequence[str], keep: int) -> tuple[Plan, list[str]]:
    """Forget every version but the newest ``keep``: rows only older versions show are removed,
    rows reaching into the kept window start at its first version."""
    held = sorted(versions)
    if keep < 1:
        raise ValueError("keep must be at least 1")
    if len(held) <= keep:
        return Plan(), held
    first = held[-keep]
    plan = Plan()
    for r in rows:
        if r.version_to <= first:
            plan.remove.append(r)
        elif r.version_from < first:
            plan.reinterval.append((r, first, r.version_to))
    return plan, held[-keep:]
