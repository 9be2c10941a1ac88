"""The discovered act catalogue: every act a source holds, as the source itself lists it.

Why a catalogue beside the curated registry (``schemas/acts.toml``): a jurisdiction's law is
thousands of acts (6,183 German federal acts in the 2012 bundestag/gesetze import, 6,636 in
2022; ~12,000 Polish acts in force in the Dziennik Ustaw), and the act that changes tomorrow is
rarely one somebody wrote a row for. So connectors *discover* acts — the gesetze repository's
``<letter>/<slug>/index.md`` files with their front matter, the ELI listing — and write them here;
the registry (:func:`schemas.acts.registry`) is this catalogue enriched by the curated rows
(citation forms, aliases, benchmark ties), never gated by them.

On disk, one file per source under ``$LEXPIPE_HOME/catalogue/`` (``Layout.catalogue``)::

    {"source": "gesetze", "jurisdiction": "de", "position": "<commit>", "updated_at": "...",
     "acts": [{"id": "de:aeg", "address": "aeg", "path": "a/aeg/index.md", "title": "...",
               "citation": "AEG", "first_seen": "<changeset>", "last_changed": "<changeset>",
               "present": true}, ...]}

Written whole, atomically (stage then rename), by the step that moves the source position; read
by the registry, parsed once per modification time (6,636 rows: ~25 ms).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from core.atomic import atomic_write_json

SOURCES = {"gesetze": "de", "eli": "pl"}  # the catalogue's sources and their jurisdictions
ACT_ID_RE = re.compile(r"^(?P<jur>[a-z]{2}):(?P<slug>[a-z0-9][a-z0-9_\-]{0,59})$")


class CatalogueError(ValueError):
    """A catalogue file is unusable; the message names the file, the row and the field."""


@dataclass(frozen=True)
class CatalogueEntry:
    """One act as its source lists it."""

    id: str  # de:aeg, pl:du1964_93
    address: str  # the source's own key: the gesetze slug "aeg", the ELI "DU/1964/93"
    title: str
    citation: str = ""  # jurabk "AEG"; "" when the source prints none
    path: str = ""  # where the source keeps it: "a/aeg/index.md", or the listing's file name
    first_seen: str = ""  # the changeset (source position) that first listed it
    last_changed: str = ""  # the changeset that last changed its text
    present: bool = True  # False once the source dropped it (its published versions stay readable)
    extra: dict = field(default_factory=dict)  # source-specific fields (ELI display address, year ...)

    @property
    def jurisdiction(self) -> str:
        return self.id.split(":", 1)[0]


@dataclass(frozen=True)
class Catalogue:
    source: str
    jurisdiction: str
    position: str  # the source position the catalogue describes (a commit, a listing date)
    acts: tuple[CatalogueEntry, ...]
    updated_at: str = ""
    path: Path | None = None

    def by_id(self) -> dict[str, CatalogueEntry]:
        return {a.id: a for a in self.acts}


def catalogue_file(home: Path, source: str) -> Path:
    """``$LEXPIPE_HOME/catalogue/<source>.json`` (``core.layout.Layout.catalogue``)."""
    from core.layout import Layout

    return Layout(Path(home)).catalogue(source)


def _entry(raw: dict, where: str) -> CatalogueEntry:
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where}: not an object")
    for name in ("id", "address", "title"):
        if not isinstance(raw.get(name), str) or (name != "title" and not raw[name]):
            raise CatalogueError(f"{where}: field {name!r} is required (a string)")
    if not ACT_ID_RE.match(raw["id"]):
        raise CatalogueError(f"{where}: field 'id' must look like 'de:aeg', got {raw['id']!r}")
    known = {"id", "address", "title", "citation", "path", "first_seen", "last_changed", "present", "extra"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise CatalogueError(f"{where}: unknown field(s) {unknown}")
    return CatalogueEntry(**{k: raw[k] for k in raw if k in known})


def load_catalogue(path: Path) -> Catalogue:
    """A catalogue file; :class:`CatalogueError` naming the file (and row, field) when unusable."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueError(f"{path}: catalogue not found") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CatalogueError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("source") not in SOURCES:
        raise CatalogueError(f"{path}: field 'source' must be one of {sorted(SOURCES)}")
    acts = data.get("acts")
    if not isinstance(acts, list):
        raise CatalogueError(f"{path}: field 'acts' must be a list")
    entries = tuple(_entry(r, f"{path}: acts[{i}] ({r.get('id', '?') if isinstance(r, dict) else '?'})")
                    for i, r in enumerate(acts))
    jur = SOURCES[data["source"]]
    seen: set[str] = set()
    for e in entries:
        if e.jurisdiction != jur:
            raise CatalogueError(f"{path}: act {e.id!r} is not of jurisdiction {jur!r} (source {data['source']})")
        if e.id in seen:
            raise CatalogueError(f"{path}: act {e.id!r} is listed twice")
        seen.add(e.id)
    return Catalogue(data["source"], jur, str(data.get("position", "")), entries,
                     str(data.get("updated_at", "")), path)


def save_catalogue(path: Path, source: str, position: str, acts: Iterable[CatalogueEntry]) -> Catalogue:
    """Write the catalogue atomically (a reader sees the old file or the new one)."""
    if source not in SOURCES:
        raise CatalogueError(f"unknown catalogue source {source!r}; known: {sorted(SOURCES)}")
    acts = tuple(sorted(acts, key=lambda a: a.id))
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    atomic_write_json(Path(path), {"source": source, "jurisdiction": SOURCES[source], "position": position,
                                   "updated_at": now, "acts": [asdict(a) for a in acts]})
    return Catalogue(source, SOURCES[source], position, acts, now, Path(path))
