"""ISAP change markers: ``[ ]`` wording that will expire, ``< >`` wording not yet in force.

ISAP's unified texts print both readings side by side and explain them in a margin note such as
``Nowe brzmienie § 1 w art. 647^1 wejdzie w życie z dn. 4.12.2025 r. (Dz. U. z 2025 r. poz. 1508).``
We keep both readings, never the bare markers, and decide which one is in force on the version date.
"""

from __future__ import annotations

import datetime as dt
import re

_FUTURE = re.compile(r"<[^<>]*>", re.S)  # not yet in force
_EXPIRING = re.compile(r"\[[^\[\]]*\]", re.S)  # in force until the change
_EFFECTIVE = re.compile(r"w\s*życie\s+z\s+dn\.\s*(\d{1,2})\.(\d{1,2})\.(\d{4})")

MARKER_CHARS = "<>[]"


def has_markers(text: str) -> bool:
    return any(c in text for c in MARKER_CHARS)


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def current_reading(text: str) -> str:
    """The wording before the announced change: drop ``<…>``, unwrap ``[…]``."""
    return _tidy(_FUTURE.sub("", text).replace("[", "").replace("]", ""))


def future_reading(text: str) -> str:
    """The wording after the announced change: drop ``[…]``, unwrap ``<…>``."""
    return _tidy(_EXPIRING.sub("", text).replace("<", "").replace(">", ""))


def effective_dates(notes: list[str]) -> list[dt.date]:
    """Dates on which announced changes take effect, from ISAP margin notes."""
    out = []
    for note in notes:
        for d, m, y in _EFFECTIVE.findall(note):
            out.append(dt.date(int(y), int(m), int(d)))
    return sorted(out)


def readings(text: str, notes: list[str], version: dt.date) -> tuple[str, str | None, dt.date | None]:
    """(text in force on ``version``, text after the pending change or None, effective date)."""
    if not has_markers(text):
        return text, None, None
    dates = effective_dates(notes)
    effective = dates[0] if dates else None
    if effective is not None and effective <= version:
        return future_reading(text), None, effective
    return current_reading(text), future_reading(text), effective
