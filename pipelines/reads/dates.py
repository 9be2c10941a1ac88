"""Dates and version names as consumers send them: strictly ``YYYY-MM-DD``.

``date.fromisoformat`` alone accepts ``20240105`` and ``2024-W01-1`` since Python 3.11; a version
name is a folder name, so only the one spelling is a date here.
"""

from __future__ import annotations

import datetime as dt
import re

from pipelines.reads.errors import BadDate

_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_day(value: str | dt.date | None, name: str = "as_of") -> dt.date:
    """``value`` as a date; ``None`` is today. Anything but a real ``YYYY-MM-DD`` day raises BadDate."""
    if value is None:
        return dt.date.today()
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    if not _ISO_DAY.match(text):
        raise BadDate(f"{name} must be a date YYYY-MM-DD, got {str(value)[:40]!r}")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BadDate(f"{name} must be a real date YYYY-MM-DD, got {text!r}") from None


def is_day(value: str) -> bool:
    try:
        parse_day(value)
    except BadDate:
        return False
    return True
