"""Which version of the law a citation points at: the act version in force on the decision's date.

Why: a judgment of 2011 citing "art. 98 § 1 k.p.c." means the wording of 2011, not today's; a
reader (or an LLM checking a citation) must know which held text the link stands for and whether
that unit still reads the same. CourtListener and Open Legal Data link a citation to a statute
*name*; neither says which version.

The rule, the same as the point-in-time reads: a held version (the date printed on its unified
text) stands for the act from that date until the next held version. A citation made on date D
therefore resolves to the newest published version dated on or before D — ``exact_version``
true. When every held version is newer than D (a 2011 judgment, a 2016 k.p.), it resolves to the
*nearest* held version, the oldest one, flagged ``exact_version: false``: the text may differ
from what the court read, and ``changed_since`` / the diff assets say how far.

Each link also says the unit's state in that version:

* ``in_force`` / ``repealed`` / ``pending`` — the node's status there;
* ``not_in_version`` — the act is held but the unit id is not in that version (a since-repealed
  article dropped from the unified text, an added one, or a citation of a number that never
  existed); the article is tried when a paragraph/point is missing (``matched_id`` says which
  level matched);
* ``act_not_held`` — the act is not in the corpus (the id is the extractor's constructed id);

and ``changed_since``: whether the unit's text differs between the resolved version and the
serving (newest) version, ignoring the typographic reprints ``diff.editorial_form`` normalises.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import date
from functools import lru_cache
from typing import Iterable

import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.statutes.diff import editorial_form
from pipelines.statutes.store import CorpusStore, version_in_force

STATUSES = ("in_force", "repealed", "pending", "not_in_version", "act_not_held")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class VersionLink:
    """Where one cited unit id lands in the held versions of its act."""

    unit_id: str
    act_id: str
    cited_on: date | None
    resolved_to_version: str | None  # the held version the link stands for; None when the act is not held
    exact_version: bool  # that version was in force on ``cited_on`` (as far as the held versions tell)
    status: str  # one of STATUSES
    matched_id: str | None  # the node found: unit_id itself, or its article when the unit is missing
    changed_since: bool | None  # matched node's text differs in the serving version (editorial aside)
    serving_version: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def article_of(unit_id: str) -> str:
    """``pl:kpc:art:98:par:1`` → ``pl:kpc:art:98``; an id without ``:art:`` is returned as is."""
    parts = unit_id.split(":")
    if "art" in parts:
        i = parts.index("art")
        return ":".join(parts[: i + 2])
    return unit_id


class HeldVersions:
    """The published versions of the corpus' acts and their nodes, read lazily and cached.

    Reads ``nodes.parquet`` (id, status, text) of a version only when a citation needs it: the
    links of 200 SAOS judgments touch 4 acts × 1–2 versions."""

    def __init__(self, layout: Layout) -> None:
        self.store = CorpusStore(layout)
        self._versions: dict[str, list[str]] = {}

    def versions(self, act_id: str) -> list[str]:
        if act_id not in self._versions:
            self._versions[act_id] = self.store.published_versions(act_id)
        return self._versions[act_id]

    def held(self, act_id: str) -> bool:
        return bool(self.versions(act_id))

    def nodes(self, act_id: str, version: str) -> dict[str, tuple[str, str]]:
        """node id → (status, editorial form of its text) in one published version."""
        path = self.store.layout.version_dir(act_id, version) / "nodes.parquet"
        return _read_nodes(str(path), path.stat().st_mtime_ns)

    def version_on(self, act_id: str, on: date | None) -> tuple[str | None, bool]:
        """(version, exact) for a citation made on ``on``; (None, False) when the act is not held.
        No date → the serving version, not exact."""
        versions = self.versions(act_id)
        if not versions:
            return None, False
        if on is None:
            return versions[-1], False
        i = version_in_force(versions, on.isoformat())
        return (versions[i], True) if i >= 0 else (versions[0], False)

    def link(self, unit_id: str, act_id: str, on: date | None) -> VersionLink:
        version, exact = self.version_on(act_id, on)
        if version is None:
            return VersionLink(unit_id, act_id, on, None, False, "act_not_held", None, None, None)
        serving = self.versions(act_id)[-1]
        nodes = self.nodes(act_id, version)
        matched = unit_id if unit_id in nodes else (article_of(unit_id) if article_of(unit_id) in nodes else None)
        if matched is None:
            return VersionLink(unit_id, act_id, on, version, exact, "not_in_version", None, None, serving)
        status, text = nodes[matched]
        if version == serving:
            changed: bool | None = False
        else:
            now = self.nodes(act_id, serving).get(matched)
            changed = True if now is None else (now[1] != text or now[0] != status)
        return VersionLink(unit_id, act_id, on, version, exact, status, matched, changed, serving)

    def links(self, unit_ids: Iterable[str], act_id: str, on: date | None) -> list[VersionLink]:
        return [self.link(u, act_id, on) for u in unit_ids]


@lru_cache(maxsize=32)
def _read_nodes(path: str, _mtime_ns: int) -> dict[str, tuple[str, str]]:
    """Cached per file and modification time: a re-published version is read again."""
    table = pq.read_table(path, columns=["id", "status", "text"])
    return {i: (s or "in_force", editorial_form(_WS.sub(" ", t or "").strip()))
            for i, s, t in zip(table.column("id").to_pylist(), table.column("status").to_pylist(),
                               table.column("text").to_pylist())}
