"""Where a syncing connector keeps its cursor, its lock and its raw page bodies under
``$LEXPIPE_HOME``.

Why shared: the connectors follow one layout, documented with the data layout, and the sync, the
asset bindings, the pipelines and the tests find a source's state by it:

    state/<source>/<stream>_cursor.json   the persisted cursor (atomic JSON)
    state/<source>/<stream>.lock          one sync at a time (``connectors.sync_lock``)
    raw/                                  RawLandingZone: every page body, content-addressed

Each connector's paths class names its ``source`` and ``stream`` and adds where its store lives
(that differs: ``caselaw/<jur>/<source>/…``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class SyncStatePaths:
    """The shared part of a connector's paths; subclasses set ``source`` and ``stream``."""

    home: Path
    source: ClassVar[str]
    stream: ClassVar[str]

    @property
    def state_dir(self) -> Path:
        return self.home / "state" / self.source

    @property
    def cursor_path(self) -> Path:
        return self.state_dir / f"{self.stream}_cursor.json"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / f"{self.stream}.lock"

    @property
    def raw(self) -> Path:
        return self.home / "raw"
