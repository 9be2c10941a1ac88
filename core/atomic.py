"""Stage-then-promote for single files: a temp file in the same folder, fsync, then rename.

Readers (the API, a Dagster sensor, a second process) see the old file or the new one, never half
of one; a crash leaves at most a ``.<name>.*.tmp`` beside it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder + rename: readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode())
