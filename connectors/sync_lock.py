"""One sync at a time per state directory: an exclusive, non-blocking ``flock`` on a lock file.

Why shared: every connector whose sync moves a persisted cursor needs the same guarantee (two
syncs of one ``$LEXPIPE_HOME`` would interleave pages and overwrite each other's cursor) and the
same way of getting it: ``flock``, which the kernel releases when the process dies, even by
SIGKILL, so a crashed sync never leaves a stale lock behind. Each connector keeps its own
exception type (callers catch the connector's base error) and names itself in the message.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class SyncLock:
    """Exclusive flock on ``path`` for the ``with`` block; held elsewhere → ``error``.

    ``error`` is the connector's exception class, raised as ``error("another <source> sync holds
    <path>")`` without waiting.
    """

    def __init__(self, path: Path, *, source: str, error: type[Exception]) -> None:
        self.path = path
        self.source = source
        self.error = error
        self._fd: int | None = None

    def __enter__(self) -> "SyncLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise self.error(f"another {self.source} sync holds {self.path}") from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
