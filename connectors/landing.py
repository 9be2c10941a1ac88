"""Immutable, content-addressed raw landing zone.

Why: every parsed corpus version must be traceable to the exact bytes it came from. Files are
named by their sha256, written once (temp + rename), never modified; a JSON sidecar records where
and when they were retrieved. Re-downloading identical bytes writes nothing.

    <root>/sha256/<first2>/<sha256><suffix>   the bytes (read-only)
    <root>/sha256/<first2>/<sha256>.json      sidecar (provenance)

``root`` is ``Layout.raw``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from core.layout import Layout
from core.atomic import atomic_write_bytes, atomic_write_json

_DROP_HEADERS = frozenset({"set-cookie", "authorization", "proxy-authorization", "cookie"})
_READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


@dataclass(frozen=True)
class LandedFile:
    """A stored blob plus the provenance record it was found/stored under."""

    sha256: str
    path: Path
    sidecar_path: Path
    size: int
    act_id: str
    version: str
    source_url: str
    retrieved_at: str
    created: bool = False


class LandingError(Exception):
    """The landing zone is inconsistent (missing blob, unreadable sidecar)."""


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class RawLandingZone:
    """Content-addressed store under ``root`` (normally ``Layout.raw``)."""

    def __init__(self, root: Path, *, now: Callable[[], datetime] = _utcnow) -> None:
        self.root = Path(root)
        self._now = now

    @classmethod
    def from_layout(cls, layout: Layout) -> "RawLandingZone":
        return cls(layout.raw)

    # -- paths --------------------------------------------------------------------------------

    def _dir(self, sha256: str) -> Path:
        return self.root / "sha256" / sha256[:2]

    def sidecar_path(self, sha256: str) -> Path:
        return self._dir(sha256) / f"{sha256}.json"

    # -- writing ------------------------------------------------------------------------------

    def store(self, content: bytes, *, source_url: str, act_id: str, version: str,
              headers: Mapping[str, str] | None = None, suffix: str = ".pdf") -> LandedFile:
        """Store ``content`` once. Returns ``created=False`` if these bytes were already stored.

        A known blob seen under a new (act_id, version, source_url) gets a ``sightings`` entry in
        its sidecar; the blob itself and the original provenance fields are never changed.
        """
        if not suffix.startswith(".") or "/" in suffix:
            raise ValueError(f"suffix must look like '.pdf', got {suffix!r}")
        if suffix.lower() == ".json":  # the blob would be the sidecar's own path: store JSON bodies as e.g. '.page'
            raise ValueError("suffix '.json' is reserved for the provenance sidecar; use another one (e.g. '.page')")
        sha = hashlib.sha256(content).hexdigest()
        blob = self._dir(sha) / f"{sha}{suffix}"
        side = self.sidecar_path(sha)
        retrieved_at = self._now().astimezone(timezone.utc).isoformat(timespec="seconds")

        if side.exists():
            record = self._read_sidecar(sha)
            existing = self._blob_path(sha, record)
            if not existing.exists():
                raise LandingError(f"sidecar {side} exists but blob {existing} is missing")
            sighting = {"source_url": source_url, "act_id": act_id, "version": version}
            known = [_key(record)] + [_key(s) for s in record.get("sightings", [])]
            if _key(sighting) not in known:
                record.setdefault("sightings", []).append({**sighting, "retrieved_at": retrieved_at})
                atomic_write_json(side, record)
            return self._landed(record, side, matched=sighting, created=False)

        # Blob first, sidecar last: a sidecar's presence means the blob is complete.
        if not blob.exists():
            atomic_write_bytes(blob, content)
            os.chmod(blob, _READ_ONLY)
        record = {
            "sha256": sha,
            "size": len(content),
            "file": blob.name,
            "source_url": source_url,
            "retrieved_at": retrieved_at,
            "act_id": act_id,
            "version": version,
            "headers": {k.lower(): v for k, v in (headers or {}).items()
                        if k.lower() not in _DROP_HEADERS},
        }
        atomic_write_json(side, record)
        return self._landed(record, side, created=True)

    # -- reading ------------------------------------------------------------------------------

    def get(self, sha256: str) -> LandedFile | None:
        """The blob with this hash (provenance = first retrieval), or None."""
        side = self.sidecar_path(sha256)
        if not side.exists():
            return None
        return self._landed(self._read_sidecar(sha256), side)

    def find(self, act_id: str, version: str) -> LandedFile | None:
        """The most recently retrieved blob recorded for (act_id, version), or None.

        Scans sidecars (first retrieval and sightings): fine for a few thousand files.
        """
        best: tuple[str, LandedFile] | None = None
        for side, record in self._records():
            for entry in [record, *record.get("sightings", [])]:
                if entry.get("act_id") == act_id and entry.get("version") == version:
                    landed = self._landed(record, side, matched=entry)
                    if best is None or landed.retrieved_at > best[0]:
                        best = (landed.retrieved_at, landed)
        return best[1] if best else None

    def verify(self, sha256: str) -> bool:
        """Re-hash the blob: True iff it exists and still matches its name."""
        landed = self.get(sha256)
        if landed is None or not landed.path.exists():
            return False
        digest = hashlib.sha256()
        with landed.path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest() == sha256

    def read_sidecar(self, sha256: str) -> dict[str, Any]:
        return self._read_sidecar(sha256)

    # -- internals ----------------------------------------------------------------------------

    def _records(self) -> Iterator[tuple[Path, dict[str, Any]]]:
        base = self.root / "sha256"
        if not base.exists():
            return
        for side in sorted(base.glob("??/*.json")):
            if side.name.startswith("."):
                continue  # a temp file of an in-flight atomic write
            yield side, self._read_sidecar(side.stem)

    def _read_sidecar(self, sha256: str) -> dict[str, Any]:
        side = self.sidecar_path(sha256)
        try:
            record = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LandingError(f"unreadable sidecar {side}: {exc}") from exc
        if not isinstance(record, dict) or record.get("sha256") != sha256:
            raise LandingError(f"sidecar {side} does not describe {sha256}")
        return record

    def _blob_path(self, sha256: str, record: Mapping[str, Any]) -> Path:
        return self._dir(sha256) / str(record.get("file") or f"{sha256}.pdf")

    def _landed(self, record: Mapping[str, Any], side: Path, *,
                matched: Mapping[str, Any] | None = None, created: bool = False) -> LandedFile:
        """Build a LandedFile; provenance fields come from the matched entry (or the first one)."""
        entry: Mapping[str, Any] = record
        if matched is not None:
            entry = next((e for e in [record, *record.get("sightings", [])]
                          if _key(e) == _key(matched)), record)
        sha = str(record["sha256"])
        return LandedFile(sha256=sha, path=self._blob_path(sha, record), sidecar_path=side,
                          size=int(record["size"]), act_id=str(entry.get("act_id", "")),
                          version=str(entry.get("version", "")),
                          source_url=str(entry.get("source_url", "")),
                          retrieved_at=str(entry.get("retrieved_at", "")), created=created)


def _key(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(entry.get("act_id")), str(entry.get("version")), str(entry.get("source_url")))
