"""The persisted SAOS sync cursor: the query of the pass in progress, the next page number, the
pass's start time, and how the next pass's ``sinceModificationDate`` follows from it.

Why a module of its own: the cursor is the sync's only durable state between runs. It is one JSON
file replaced atomically, read back tolerantly (fields it does not know are dropped) but never
silently lost: an unreadable cursor is an error, not a fresh start (a fresh start would re-read
the whole dump, ~10 GB).

The life of a pass, in cursor terms:

* ``start_pass`` (no pass in progress): take the configured query; ``since`` stays what the last
  pass left (None the first time, or when the date window / ``withGenerated`` changed: records
  outside the old selection were never read, so the new one starts full; or when a periodic full
  rescan is due); ``page`` 0; ``pass_started_at`` = now, taken *before* the first request.
* ``next_page`` after each committed page that has a ``next`` link.
* ``end_pass`` after the page without ``next``: ``since`` becomes ``pass_started_at - overlap`` —
  every record modified after the pass began is at least that new, even with clock skew up to
  the overlap — and ``page`` goes back to 0.

A pass in progress keeps its own query (page size included: page numbers are offsets in units of
it) until it ends, even if the settings changed meanwhile; the new settings apply from the next.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from connectors.saos.errors import SaosError
from connectors.saos.sample import format_since, parse_since
from connectors.saos.settings import DumpQuery
from core.atomic import atomic_write_json

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SaosCursor:
    """Where the sync stands. ``in_progress``: a pass has started and not reached its last page;
    then ``page`` is the next page number of ``query`` to ask for. After a complete pass
    ``since`` already holds the next pass's ``sinceModificationDate``."""

    since: str | None = None
    start: str | None = None
    end: str | None = None
    page_size: int = 100
    with_generated: bool | None = None
    page: int = 0
    in_progress: bool = False
    pass_started_at: str | None = None  # ISO UTC; when the pass in progress (or the last) began
    complete: bool = False  # the last pass reached the end of the dump
    pages_committed: int = 0
    passes_completed: int = 0
    last_completed_at: str | None = None
    last_full_pass_at: str | None = None  # start time of the last complete pass without ``since``
    format: int = 1

    @property
    def query(self) -> DumpQuery:
        return DumpQuery(self.since, self.start, self.end, self.page_size, self.with_generated)


def _ts(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise SaosError(f"persisted cursor has an unreadable timestamp {value!r}") from None


def start_pass(cursor: SaosCursor, wanted: DumpQuery, now: datetime, *,
               full_rescan_days: int = 0) -> SaosCursor:
    """The cursor to fetch from: the pass in progress, or a new pass of ``wanted``."""
    if cursor.in_progress:
        if not wanted.same_selection(cursor.query) or wanted.page_size != cursor.page_size:
            log.warning("saos: a pass of %s is in progress; the configured query %s applies from "
                        "the next pass", cursor.query, wanted)
        return cursor
    since = cursor.since
    if since is not None and not wanted.same_selection(cursor.query):
        log.info("saos: the date window or withGenerated changed (%s -> %s): a full pass",
                 cursor.query, wanted)
        since = None
    last_full = _ts(cursor.last_full_pass_at)
    if since is not None and full_rescan_days > 0 and (
            last_full is None or now - last_full >= timedelta(days=full_rescan_days)):
        log.info("saos: the last full pass is older than %d day(s): a full pass", full_rescan_days)
        since = None
    return replace(cursor, since=since, start=wanted.start, end=wanted.end,
                   page_size=wanted.page_size, with_generated=wanted.with_generated, page=0,
                   in_progress=True, complete=False, pass_started_at=now.isoformat())


def next_page(cursor: SaosCursor) -> SaosCursor:
    return replace(cursor, page=cursor.page + 1, pages_committed=cursor.pages_committed + 1)


def end_pass(cursor: SaosCursor, overlap: timedelta, now: datetime) -> SaosCursor:
    """After the last page: the next pass asks for what changed since this one began."""
    started = _ts(cursor.pass_started_at)
    if started is None:
        raise SaosError("cannot end a pass that has no start time")
    return replace(cursor, since=format_since(started - overlap), page=0, in_progress=False,
                   complete=True, pages_committed=cursor.pages_committed + 1,
                   passes_completed=cursor.passes_completed + 1,
                   last_completed_at=now.isoformat(),
                   last_full_pass_at=(cursor.pass_started_at if cursor.since is None
                                      else cursor.last_full_pass_at))


class CursorStore:
    """The cursor as one JSON file, replaced atomically (temp + fsync + rename)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> SaosCursor:
        if not self.path.exists():
            return SaosCursor()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            known = set(SaosCursor.__dataclass_fields__)
            cursor = SaosCursor(**{k: v for k, v in data.items() if k in known})
            if cursor.since is not None and parse_since(cursor.since) is None:
                raise ValueError(f"since {cursor.since!r} is not yyyy-MM-dd'T'HH:mm:ss.SSS")
            cursor.query  # noqa: B018 -- validates page size and window
        except (OSError, ValueError, TypeError) as exc:
            # Unlike a cache, a lost cursor silently means "read the whole dump again": refuse.
            raise SaosError(f"unreadable cursor {self.path}: {exc}") from exc
        return cursor

    def save(self, cursor: SaosCursor) -> None:
        atomic_write_json(self.path, asdict(cursor))
