"""A language index on disk: its serving snapshot and its one writer."""

from __future__ import annotations

import threading
from pathlib import Path

from pipelines.retrieval.language_index.bm25 import CACHE_BYTES
from pipelines.retrieval.language_index.lock import WriterLock
from pipelines.retrieval.language_index.manifest import Generations, Manifest
from pipelines.retrieval.language_index.snapshot import Snapshot
from pipelines.retrieval.language_index.writer import MAX_SEGMENTS, IndexWriter


class LanguageIndex:
    """One index per language, e.g. ``$LEXPIPE_HOME/index/embedded/statutes_de``.

    :meth:`snapshot` is cheap to call per request: one ``stat`` of ``CURRENT``; the snapshot is
    opened again only when the pointer changed (a commit's switch)."""

    def __init__(self, root: Path, lang: str, *, grace_s: float = 600.0, cache_bytes: int = CACHE_BYTES):
        self.root, self.lang = Path(root), lang
        self.grace_s, self.cache_bytes = grace_s, cache_bytes
        self.gens = Generations(self.root)
        self._snap: Snapshot | None = None
        self._stamp: tuple | None = None
        self._lock = threading.Lock()

    def snapshot(self) -> Snapshot:
        """The serving generation (an empty snapshot before the first commit)."""
        stamp = self.gens.current_stamp()
        with self._lock:
            if self._snap is not None and stamp == self._stamp:
                return self._snap
        for attempt in range(3):
            generation = self.gens.current()
            try:
                manifest = self.gens.load(generation) if generation is not None else Manifest(0, self.lang)
                snap = Snapshot(self.root, manifest, self.cache_bytes)
                break
            except FileNotFoundError:
                # the generation was collected between reading CURRENT and opening it: read again
                if attempt == 2:
                    raise
                stamp = self.gens.current_stamp()
        if manifest.lang != self.lang:
            raise ValueError(f"{self.root}: an index of language {manifest.lang!r}, opened as {self.lang!r}")
        with self._lock:
            if self._snap is None or self._snap.generation != snap.generation:
                self._snap = snap
            self._stamp = stamp
            return self._snap

    def writer(self, analyzer=None, *, max_segments: int = MAX_SEGMENTS) -> IndexWriter:
        """The one writer (raises ``lock.IndexLocked`` while another live process holds it)."""
        return IndexWriter(self, analyzer, grace_s=self.grace_s, max_segments=max_segments)

    def _lock_for_writer(self) -> WriterLock:
        return WriterLock(self.root)
