"""One build per test session, shared by every pytest-xdist worker.

``make test`` runs two workers (``-n 2``); a session fixture is built once per worker, so the
suite's most expensive read-only fixtures (the published Civil Code: the real main job over two
PDFs) were built twice, each costing a worker the CPU the other needed. :func:`shared` builds a
fixture's files once in the session's common temporary folder (the parent of every worker's own,
the pytest-xdist recipe), under an exclusive file lock; the other workers wait for it and load what
it built. Without xdist it is a plain build under the session's folder.

Only for fixtures whose result is read-only by contract: every worker reads the same files.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def shared(tmp_path_factory, name: str, build: Callable[[Path], T]) -> T:
    """``build(folder)`` once per session for all workers; its (picklable) result for each."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, result, lock = root / f"shared-{name}", root / f"shared-{name}.pickle", root / f"shared-{name}.lock"
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes, also if this worker dies
        if result.is_file():
            return pickle.loads(result.read_bytes())
        if folder.exists():  # a build that failed half-way in another worker
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        value = build(folder)
        tmp = result.with_suffix(".part")
        tmp.write_bytes(pickle.dumps(value))
        tmp.replace(result)
        return value
