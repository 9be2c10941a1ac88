"""The persisted sync cursor and the keyset ordering key it is made of.

Why a module of its own: the cursor is the sync's only durable state between runs. It is one
JSON file replaced atomically, read back tolerantly (fields it does not know are dropped) but
never silently lost: an unreadable cursor is an error, not a fresh start.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from connectors.openlegaldata.errors import OpenLegalDataError
from connectors.openlegaldata.records import parse_timestamp
from core.atomic import atomic_write_json


@dataclass(frozen=True, order=True)
class CaseKey:
    """A record's position in the (updated_date, id) order; ``raw`` is echoed back to the API."""

    updated: datetime
    case_id: int
    raw: str = field(compare=False)


def case_key(obj: Any) -> CaseKey | None:
    """The ordering key if ``id`` and ``updated_date`` are readable (even if the record is not)."""
    if not isinstance(obj, dict):
        return None
    cid, raw = obj.get("id"), obj.get("updated_date")
    if type(cid) is not int:
        return None
    updated = parse_timestamp(raw)
    return CaseKey(updated, cid, raw) if updated is not None else None


@dataclass
class SyncCursor:
    """Last committed key ``(updated_date, case_id)`` and the page of its filter to ask next.

    ``page`` > 1 only while walking a run of records sharing ``updated_date``.
    ``complete`` is True when the last sync reached the end of the list.

    Date-window mode (``mode == "date_windows"``) uses ``window_lo``/``window_hi`` (ISO dates,
    None = unbounded), ``page`` within the window, ``window_count`` (the window's ``count``),
    ``window_keys`` (records read in the window so far, for the completeness check),
    ``window_rereads``, ``window_days`` (the current span), ``max_date_seen`` (newest decision
    date read: where the next incremental pass starts, minus the overlap), ``pass_full`` (this
    pass started from the beginning) and ``last_full_scan_at``.
    """

    updated_date: str | None = None
    case_id: int | None = None
    page: int = 1
    complete: bool = False
    pages_committed: int = 0
    last_completed_at: str | None = None
    format: int = 2
    mode: str = "keyset"
    window_lo: str | None = None
    window_hi: str | None = None
    window_count: int | None = None
    window_keys: list[str] = field(default_factory=list)
    window_rereads: int = 0
    window_days: int = 0
    windows_done: int = 0
    max_date_seen: str | None = None
    pass_full: bool = False
    last_full_scan_at: str | None = None

    @property
    def key(self) -> CaseKey | None:
        if self.updated_date is None or self.case_id is None:
            return None
        updated = parse_timestamp(self.updated_date)
        if updated is None:
            raise OpenLegalDataError(f"persisted cursor has an unreadable updated_date "
                                     f"{self.updated_date!r}")
        return CaseKey(updated, self.case_id, self.updated_date)


class CursorStore:
    """The cursor as one JSON file, replaced atomically (temp + fsync + rename)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> SyncCursor:
        if not self.path.exists():
            return SyncCursor()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            # Unlike a cache, a lost cursor silently means "start over"; refuse instead.
            raise OpenLegalDataError(f"unreadable cursor {self.path}: {exc}") from exc
        known = {f for f in SyncCursor.__dataclass_fields__}
        return SyncCursor(**{k: v for k, v in data.items() if k in known})

    def save(self, cursor: SyncCursor) -> None:
        atomic_write_json(self.path, asdict(cursor))
