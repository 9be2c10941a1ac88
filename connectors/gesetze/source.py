"""The gesetze source: what the repository offers now, as changesets, and the texts at a commit.

``GesetzeSource.changesets()`` is the history the source offers — the whole first-parent line, or,
in replay mode, the line up to the replay cursor — one :class:`~connectors.changesets.Changeset`
per commit with its kind (import, bgbl, banz, fixes, refresh), gazette and the acts it changed.
The sensor compares the offered keys with the applied ones; a refresh run builds one changeset.

State under ``$LEXPIPE_HOME/sources/gesetze/``: ``repo`` (the clone, refreshed by :meth:`sync`),
``history.json`` (what each commit changed: commits are immutable) and ``replay.json`` (the cursor).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from connectors.changesets import Changeset
from connectors.gesetze import catalogue as discovery
from connectors.gesetze.git import GitRepo
from connectors.gesetze.history import changesets as to_changesets, commit_records
from connectors.gesetze.settings import GesetzeSettings, default_url
from core.atomic import atomic_write_json
from core.layout import Layout
from schemas.catalogue import Catalogue, CatalogueEntry, load_catalogue, save_catalogue

SOURCE = "gesetze"
_HISTORY: dict[tuple[str, str], list[Changeset]] = {}


class ReplayError(RuntimeError):
    pass


@dataclass
class GesetzeSource:
    repo: GitRepo
    state: Path  # sources/gesetze
    url: str
    branch: str | None = None
    replay: bool = False
    replay_start: int = -1
    replay_step: int = 1
    until: int = -1

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def open(cls, layout: Layout, settings=None, *, sync: bool = False, **overrides) -> "GesetzeSource":
        """The source of ``layout``'s home over the configured repository (``LEXPIPE_GESETZE_*``);
        ``sync`` clones or fetches it first (a new clone is always made)."""
        own = GesetzeSettings()
        url = overrides.pop("url", None)
        opts = {"branch": own.branch, "replay": own.replay, "replay_start": own.replay_start,
                "replay_step": own.replay_step, "until": own.until, **overrides}
        state = layout.source_state(SOURCE)
        if not url:
            url = default_url(settings) if settings is not None else (own.url or "")
        src = cls(GitRepo(state / "repo"), state, url, **opts)
        if sync or not src.repo.is_repo():
            src.sync()
        return src

    def sync(self) -> None:
        """Clone or fetch the repository (the network, or the bundle, is touched only here)."""
        if not self.url:
            raise FileNotFoundError("no gesetze repository configured (LEXPIPE_GESETZE_URL)")
        GitRepo.clone_or_fetch(self.url, self.repo.path, branch=self.branch)

    # -- history ------------------------------------------------------------------------------
    def head(self) -> str:
        return self.repo.resolve("refs/remotes/origin/source")

    def history(self) -> list[Changeset]:
        """Every changeset of the repository's first-parent line, oldest first (all of it, whatever
        the replay cursor). Memoised per process and head commit: a sensor tick and a run read it
        several times (~1 s to rebuild from the cache file for the 169 commits of the bundle)."""
        head = self.head()
        key = (str(self.state), head)
        cs = _HISTORY.get(key)
        if cs is None:
            cs = to_changesets(commit_records(self.repo, head, self.state / "history.json"))
            _HISTORY.clear()
            _HISTORY[key] = cs
        return cs[: self.until + 1] if self.until >= 0 else cs

    def import_seq(self, history: list[Changeset] | None = None) -> int:
        history = history if history is not None else self.history()
        return next((c.seq for c in history if c.kind == "import"), 0)

    def cursor(self, history: list[Changeset] | None = None) -> int:
        """The last position the source offers: the replay cursor, or the head."""
        history = history if history is not None else self.history()
        if not self.replay:
            return len(history) - 1
        try:
            return min(int(json.loads((self.state / "replay.json").read_text())["position"]), len(history) - 1)
        except (FileNotFoundError, ValueError, KeyError):
            return self.replay_start if self.replay_start >= 0 else self.import_seq(history)

    def changesets(self) -> list[Changeset]:
        """What the source offers now, oldest first (replay: up to the cursor)."""
        history = self.history()
        return history[: self.cursor(history) + 1]

    def changeset(self, key: str) -> Changeset:
        for c in self.history():
            if c.key == key:
                return c
        raise KeyError(f"no changeset {key!r} in {self.url or self.repo.path}")

    def advance(self, steps: int | None = None) -> list[Changeset]:
        """Replay mode: move the cursor ``steps`` commits on (default the configured step); the
        changesets that became visible (none at the end of the history)."""
        if not self.replay:
            raise ReplayError("the gesetze source is not in replay mode (LEXPIPE_GESETZE_REPLAY=true)")
        history = self.history()
        cur = self.cursor(history)
        new = min(cur + (steps or self.replay_step), len(history) - 1)
        atomic_write_json(self.state / "replay.json", {"position": new, "commit": history[new].position,
                                                       "key": history[new].key})
        return history[cur + 1:new + 1]

    # -- texts and the catalogue ---------------------------------------------------------------
    def read(self, commit: str, path: str) -> bytes | None:
        return self.repo.show(commit, path)

    def read_many(self, commit: str, paths: list[str]) -> dict[str, bytes | None]:
        return {spec.split(":", 1)[1]: data for spec, data in self.repo.blobs(f"{commit}:{p}" for p in paths)}

    def discover(self, changeset: Changeset) -> list[CatalogueEntry]:
        """Every act at the changeset's commit (the whole catalogue)."""
        return discovery.discover(self.repo, changeset.position, changeset=changeset.key)

    def update_catalogue(self, layout: Layout, changeset: Changeset) -> Catalogue:
        """The home's catalogue moved to ``changeset``: its added and modified acts read again
        (title, abbreviation), deleted ones kept as not present; the first time, every act of the
        commit. Written atomically (``schemas.catalogue``)."""
        path = layout.catalogue(SOURCE)
        old = load_catalogue(path) if path.exists() else None
        if old is None:
            entries = self.discover(changeset)
            return save_catalogue(path, SOURCE, changeset.position, entries)
        acts = old.by_id()
        touched = [m for m in changeset.members if m.change != "deleted"]
        fresh = discovery.entries(self.repo, changeset.position, [m.path for m in touched], changeset=changeset.key,
                                  first_seen={a: e.first_seen for a, e in acts.items()})
        for e in fresh:
            acts[e.id] = e
        for m in changeset.members:
            if m.change == "deleted" and m.act_id in acts:
                from dataclasses import replace

                acts[m.act_id] = replace(acts[m.act_id], present=False, last_changed=changeset.key)
        return save_catalogue(path, SOURCE, changeset.position, acts.values())
