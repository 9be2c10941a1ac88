"""``JudgmentSync.probe``: what a sensor asks each tick — pending before the first complete pass,
while a pass is in progress, and when records were modified since the next pass's ``since``;
nothing stored and the cursor untouched."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from connectors.saos import (SAMPLE_MODIFIED_AT, CursorStore, SaosPaths, SaosSettings, format_since,
                             judgment_sync_from_settings)
from core.settings import Settings


def _sync(home: Path, sample_dir: Path, page_size: int = 100):
    settings = Settings(home=home, sample_dir=sample_dir, offline=True)
    return judgment_sync_from_settings(settings, SaosSettings(page_size=page_size))


def test_probe_states(tmp_path: Path, sample_dir: Path) -> None:
    first = _sync(tmp_path, sample_dir, page_size=50).probe()
    assert (first.pending, first.url, first.fingerprint) == (True, None, "first-pass")
    _sync(tmp_path, sample_dir, page_size=50).sync(max_pages=1)  # a pass cut short: in progress
    resume = _sync(tmp_path, sample_dir, page_size=50).probe()
    assert resume.pending and resume.fingerprint.endswith(":1")
    _sync(tmp_path, sample_dir, page_size=50).sync()
    cursor_file = SaosPaths(tmp_path).cursor_path
    before = cursor_file.read_bytes()
    held = sum(len(json.loads(p.read_text("utf-8"))["items"])
               for p in (sample_dir / "pl" / "saos").glob("judgments-page-*.json"))
    stored = _sync(tmp_path, sample_dir).store.judgments(columns=["judgment_id"]).num_rows
    quiet = _sync(tmp_path, sample_dir).probe()
    assert not quiet.pending and quiet.ids == () and "pageSize=10" in quiet.url
    cursors = CursorStore(cursor_file)
    cursors.save(replace(cursors.load(), since=format_since(SAMPLE_MODIFIED_AT - timedelta(hours=1))))
    before = cursor_file.read_bytes()
    changed = _sync(tmp_path, sample_dir).probe()
    assert changed.pending and len(changed.ids) == 10 and changed.fingerprint.endswith("+")  # more pages follow
    assert cursor_file.read_bytes() == before  # the probe never moves the cursor …
    assert _sync(tmp_path, sample_dir).store.judgments(columns=["judgment_id"]).num_rows == stored == held  # … nor stores
