"""Version ids of an act and which one a read sees.

A version id is a string that sorts in order: ``2024-12-19``, and for a second change of the same
act on the same day ``2012-08-06.02``, ``.03`` … (German commits). Its DATE is its first ten
characters; a read "as of" day D sees the act's last version whose date is on or before D —
``pipelines.statutes.store.version_in_force`` over the dates, so a version closed on the same day
by a later one is invisible by date and visible by its exact id.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Sequence

from pipelines.statutes.store import version_in_force

VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(\.\d{2,})?$")
OPEN = 2**31 - 1  # seq_to of a row still open (in the act's newest version)
DEAD = -1  # seq_to of a tombstoned row: never visible, outside N, avgdl and df


def normalise(version: str | dt.date) -> str:
    """The version id as a string; a clear error for anything that does not sort as a version."""
    v = version.isoformat() if isinstance(version, dt.date) else str(version)
    if not VERSION_RE.match(v):
        raise ValueError(f"invalid version id {v!r}: expected YYYY-MM-DD or YYYY-MM-DD.NN")
    dt.date.fromisoformat(v[:10])  # a real day
    return v


def date_of(version: str) -> str:
    return version[:10]


def in_force(versions: Sequence[str], day: dt.date | str) -> int:
    """Index of the version in force on ``day`` (−1 when the act has none by then)."""
    d = day.isoformat() if isinstance(day, dt.date) else str(day)
    return version_in_force([date_of(v) for v in versions], d)
