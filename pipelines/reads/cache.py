"""Values derived from a file, kept until the file changes.

A published version never changes in place: a re-publication swaps the whole folder in by rename,
so a file's (mtime, size, inode) changes with its content. One ``os.stat`` per read decides whether
a cached value still holds — a few microseconds, against milliseconds to read a Parquet file.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def stamp(path: Path) -> tuple[int, int, int]:
    """What changes when ``path`` is replaced (FileNotFoundError when it is not there)."""
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, st.st_ino


class FileCache:
    """``get(path, kind, load)``: ``load(path)`` once per (path, kind) and version of the file."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], tuple[tuple[int, int, int], object]] = {}
        self._lock = threading.Lock()
        self.loads = 0  # how many times a value was (re)computed: the tests' view of the cache

    def get(self, path: Path, kind: str, load: Callable[[Path], T]) -> T:
        key = (str(path), kind)
        now = stamp(path)
        hit = self._values.get(key)
        if hit is not None and hit[0] == now:
            return hit[1]  # type: ignore[return-value]
        value = load(path)
        with self._lock:
            self._values[key] = (now, value)
            self.loads += 1
        return value

    def get_many(self, paths: tuple[Path, ...], kind: str, load: Callable[[], T]) -> T:
        """One value derived from several files (e.g. a version's articles and nodes), recomputed
        when any of them changes."""
        key = ("|".join(map(str, paths)), kind)
        now = tuple(stamp(p) for p in paths)
        hit = self._values.get(key)
        if hit is not None and hit[0] == now:
            return hit[1]  # type: ignore[return-value]
        value = load()
        with self._lock:
            self._values[key] = (now, value)  # type: ignore[assignment]
            self.loads += 1
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


class ByteBudgetLRU:
    """Least-recently-used bytes values within a total size (exports materialised for range requests)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[object, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: object) -> bytes | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: object, value: bytes) -> None:
        if len(value) > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size -= len(old) if old is not None else 0
            self._items[key] = value
            self._size += len(value)
            while self._size > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)
