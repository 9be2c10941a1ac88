"""Generations: a manifest per generation and the ``CURRENT`` pointer that names the serving one.

A generation's manifest (``manifests/g00000042.json``) lists everything a reader needs: the acts
(number, versions in order), the status dictionary, and per segment its files, including which
generation's ``seq_to`` file, dead-row df and vector parts hold its mutable state. Every file a
manifest names is immutable once written. Publishing writes the new generation's files and
manifest first, then replaces ``CURRENT`` atomically (temp file + fsync + rename): the one switch.
A reader resolves ``CURRENT`` once per snapshot and sees generation G or G+1, never a mix; a
writer that dies before the switch leaves G serving and files no manifest up to G names, which
the next writer removes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.atomic import atomic_write_json

FORMAT = "lexpipe-language-index/1"


def manifest_name(generation: int) -> str:
    return f"g{generation:08d}.json"


@dataclass
class Manifest:
    generation: int
    lang: str
    acts: dict[str, dict] = field(default_factory=dict)  # act_id → {"ord", "versions", "dropped"?}
    statuses: list[str] = field(default_factory=list)  # status code i → status string ("" = none)
    segments: list[dict] = field(default_factory=list)  # in row order
    vector_dim: int | None = None
    vector_encoder: str | None = None
    analyzer: str | None = None
    created_at: str = ""
    previous: dict | None = None  # {"generation", "superseded_at"} of the generation this replaced

    def to_json(self) -> dict:
        return {"format": FORMAT, "generation": self.generation, "lang": self.lang, "analyzer": self.analyzer,
                "created_at": self.created_at, "previous": self.previous, "vector_dim": self.vector_dim,
                "vector_encoder": self.vector_encoder, "statuses": self.statuses, "acts": self.acts,
                "segments": self.segments}

    @classmethod
    def from_json(cls, obj: dict, where: Path) -> "Manifest":
        if obj.get("format") != FORMAT:
            raise ValueError(f"{where}: not a language index manifest (format {obj.get('format')!r}, expected {FORMAT})")
        return cls(generation=obj["generation"], lang=obj["lang"], acts=obj["acts"], statuses=obj["statuses"],
                   segments=obj["segments"], vector_dim=obj.get("vector_dim"),
                   vector_encoder=obj.get("vector_encoder"), analyzer=obj.get("analyzer"),
                   created_at=obj.get("created_at", ""), previous=obj.get("previous"))

    def files(self) -> set[str]:
        """Paths (relative to the index root) of every file this generation references."""
        out = {f"manifests/{manifest_name(self.generation)}"}
        for seg in self.segments:
            d = f"segments/{seg['id']}"
            out.update(f"{d}/{name}" for name in seg["files"])
            out.add(f"{d}/{seg['seq_to']}")
            if seg.get("dead"):
                out.add(f"{d}/{seg['dead']}")
            for part in seg.get("vectors", []):
                out.update((f"{d}/{part['vec']}", f"{d}/{part['rows']}"))
        return out


class Generations:
    """The generation files under one index root."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.current_path = self.root / "CURRENT"
        self.manifests = self.root / "manifests"
        self.segments = self.root / "segments"

    def current(self) -> int | None:
        """The serving generation (None: nothing published yet)."""
        try:
            obj = json.loads(self.current_path.read_text())
        except FileNotFoundError:
            return None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{self.current_path}: unreadable pointer ({exc})") from None
        return int(obj["generation"])

    def current_stamp(self) -> tuple | None:
        """A cheap token that changes when CURRENT is replaced (inode, mtime, size)."""
        try:
            st = os.stat(self.current_path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def load(self, generation: int) -> Manifest:
        path = self.manifests / manifest_name(generation)
        return Manifest.from_json(json.loads(path.read_text()), path)

    def write_manifest(self, manifest: Manifest) -> None:
        atomic_write_json(self.manifests / manifest_name(manifest.generation), manifest.to_json())

    def switch(self, generation: int) -> None:
        """The atomic switch: CURRENT names ``generation`` from now on."""
        atomic_write_json(self.current_path, {"generation": generation, "manifest": f"manifests/{manifest_name(generation)}",
                                              "switched_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})

    def generations(self) -> list[int]:
        if not self.manifests.exists():
            return []
        return sorted(int(p.name[1:9]) for p in self.manifests.glob("g*.json") if p.name[1:9].isdigit())

    def collect(self, grace_s: float, now: float | None = None) -> dict:
        """Remove what no reader can need: manifests newer than CURRENT (a writer died before its
        switch), generations superseded more than ``grace_s`` ago, and every file under
        ``segments/`` that no kept manifest names. Call with the writer lock held."""
        now = time.time() if now is None else now
        current = self.current()
        removed = {"manifests": 0, "files": 0, "segments": 0}
        kept: list[Manifest] = []
        successor: Manifest | None = None
        expired = False
        for g in reversed(self.generations()):
            path = self.manifests / manifest_name(g)
            if current is None or g > current:
                path.unlink(missing_ok=True)
                removed["manifests"] += 1
                continue
            m = self.load(g)
            # generation g was superseded when g + 1 was created (its manifest says when)
            superseded = (successor.previous or {}).get("superseded_at") if successor else None
            if g == current or (not expired and superseded is not None and now - superseded < grace_s):
                kept.append(m)
            else:
                expired = True  # every older generation was superseded earlier still
                path.unlink(missing_ok=True)
                removed["manifests"] += 1
            successor = m
        wanted = set().union(*(m.files() for m in kept)) if kept else set()
        if self.segments.exists():
            for seg_dir in self.segments.iterdir():
                rel_dir = f"segments/{seg_dir.name}"
                names = [p for p in seg_dir.iterdir()]
                if not any(f"{rel_dir}/{p.name}" in wanted for p in names):
                    shutil.rmtree(seg_dir, ignore_errors=True)
                    removed["segments"] += 1
                    continue
                for p in names:
                    if f"{rel_dir}/{p.name}" not in wanted:
                        p.unlink(missing_ok=True)
                        removed["files"] += 1
        return removed
