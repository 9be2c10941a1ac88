"""One writer at a time per index: an exclusive ``flock`` on ``<root>/LOCK``.

Why flock and not a pid file: the kernel releases the lock when the holder's process ends, however
it ends (SIGKILL, OOM, a power cut's reboot), so a dead writer's lock is taken over by the next
writer with no staleness check that could race; the file keeps the holder's pid and start time
only for the error message.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
from pathlib import Path


class IndexLocked(RuntimeError):
    """Another live writer holds the index."""


class WriterLock:
    def __init__(self, root: Path):
        self.path = Path(root) / "LOCK"
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.path.read_text(errors="replace").strip() or "unknown"
            os.close(fd)
            raise IndexLocked(f"{self.path.parent}: another writer holds the index ({holder})") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None
