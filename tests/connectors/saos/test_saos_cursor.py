"""The persisted cursor: a pass's query, page and start time; the next pass's
sinceModificationDate from this pass's start minus the overlap; never silently lost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from connectors.saos import CursorStore, DumpQuery, SaosCursor, SaosError
from connectors.saos.cursor import end_pass, next_page, start_pass

T0 = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
WANTED = DumpQuery(None, "2011-01-01", "2011-12-31", 50)


def test_a_pass_from_start_to_end() -> None:
    first = start_pass(SaosCursor(), WANTED, T0)
    assert first.in_progress and first.page == 0 and first.since is None  # the first pass: full
    assert first.query == WANTED and first.pass_started_at == T0.isoformat()
    later = next_page(next_page(first))
    assert later.page == 2 and later.pages_committed == 2
    done = end_pass(later, timedelta(hours=1), T0 + timedelta(hours=3))
    assert not done.in_progress and done.complete and done.page == 0
    assert done.since == "2026-01-01T11:00:00.123"  # start - overlap, milliseconds, UTC
    assert done.last_full_pass_at == T0.isoformat() and done.passes_completed == 1

    second = start_pass(done, WANTED, T0 + timedelta(days=1))
    assert second.since == "2026-01-01T11:00:00.123" and second.page == 0 and second.in_progress
    assert start_pass(second, DumpQuery(page_size=10), T0 + timedelta(days=2)) == second  # in progress: kept


def test_a_changed_selection_or_a_due_rescan_starts_a_full_pass() -> None:
    done = end_pass(start_pass(SaosCursor(), WANTED, T0), timedelta(hours=1), T0)
    wider = DumpQuery(None, "2010-01-01", "2011-12-31", 50)
    assert start_pass(done, wider, T0 + timedelta(days=1)).since is None
    assert start_pass(done, DumpQuery(None, "2011-01-01", "2011-12-31", 100),
                      T0 + timedelta(days=1)).since is not None  # page size alone: incremental
    assert start_pass(done, WANTED, T0 + timedelta(days=2), full_rescan_days=7).since is not None
    assert start_pass(done, WANTED, T0 + timedelta(days=7), full_rescan_days=7).since is None


def test_cursor_file_round_trip_and_unreadable_cursor(tmp_path: Path) -> None:
    store = CursorStore(tmp_path / "state" / "cursor.json")
    assert store.load() == SaosCursor()
    cursor = next_page(start_pass(SaosCursor(), WANTED, T0))
    store.save(cursor)
    assert store.load() == cursor
    store.path.write_text('{"page": 3, "some_future_field": 1, "since": null}')
    assert store.load().page == 3  # unknown fields dropped
    for broken in ("{not json", "[1, 2]", '{"since": "yesterday"}', '{"page_size": 5}'):
        store.path.write_text(broken)
        with pytest.raises(SaosError, match="unreadable cursor"):
            store.load()
