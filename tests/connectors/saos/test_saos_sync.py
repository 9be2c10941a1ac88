"""The SAOS judgment sync end to end against a loopback dump server serving the real pages.

The server (tests/fake_saos.py) pages through ``<sample_dir>/pl/saos/judgments-page-*.json`` as
the live API does, and injects malformed records, broken envelopes, faults, server-side edits and
SIGKILL pauses.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from connectors.saos import (ContractError, JudgmentStore, PageFormatError, PageReport,
                             SaosPaths, SyncLockedError)
from fake_saos import FakeSaos  # tests/, on sys.path via conftest
from saos_helpers import NOW, SAMPLE_JUDGMENTS, Clock, make_sync, snapshot
from schemas.cases import QUARANTINE, SAOS_JUDGMENTS

REPO = Path(__file__).resolve().parents[3]
CRASH_SIZE = 25  # crash tests page the 206 records (with the malformed ones) in 9 pages
CRASH_PAGES = 9


class Crash(Exception):
    """Stands in for a process dying at a checkpoint."""


def cursor_file(home: Path) -> dict[str, Any]:
    return json.loads(SaosPaths(home).cursor_path.read_text())


@pytest.fixture(scope="module")
def clean(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    """Snapshots of uninterrupted syncs of the dump with the malformed records, by page size:
    what every interrupted-and-restarted sync must end with."""
    if not any((sample_dir / "pl" / "saos").glob("judgments-page-*.json")):
        pytest.skip("SAOS sample pages not found")
    out: dict[int, dict[str, Any]] = {}
    for size in (CRASH_SIZE, 100):
        fake = FakeSaos(sample_dir)
        fake.add_malformed()
        with HTTPServer() as server:
            fake.install(server)
            sync = make_sync(server, tmp_path_factory.mktemp(f"clean{size}"), page_size=size)
            assert sync.sync().complete
            out[size] = snapshot(sync)
    return out


# -- the real pages, end to end -----------------------------------------------------------------


def test_full_sync_stores_every_judgment_of_the_shared_pages(httpserver: HTTPServer,
                                                             fake: FakeSaos,
                                                             tmp_path: Path) -> None:
    home = tmp_path / "home"
    sync = make_sync(httpserver, home)
    report = sync.sync()

    assert report.complete and len(report.pages) == 2 and report.pages[-1].last_page
    assert (report.new, report.updated, report.unchanged, report.quarantined) == (200, 0, 0, 0)
    table = sync.store.judgments()
    assert table.schema.equals(SAOS_JUDGMENTS, check_metadata=False)
    assert table.num_rows == SAMPLE_JUDGMENTS
    assert table.column("judgment_id").to_pylist() == fake.served_judgment_ids()
    for row in table.select(["source_url", "raw_sha256", "page"]).to_pylist():
        assert f"pageNumber={row['page']}" in row["source_url"]
        assert sync.landing.verify(row["raw_sha256"])  # the page it came from, byte-identical

    state = cursor_file(home)  # the pass is over; the next one asks what changed since it began
    assert (state["complete"], state["in_progress"], state["page"]) == (True, False, 0)
    started = datetime.fromisoformat(state["pass_started_at"])
    assert state["since"] == (started - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def test_page_size_10_walks_every_page_by_the_next_links(httpserver: HTTPServer, fake: FakeSaos,
                                                           tmp_path: Path,
                                                           clean: dict[int, dict[str, Any]]) -> None:
    fake.add_malformed()
    sync = make_sync(httpserver, tmp_path / "home", page_size=10)
    report = sync.sync()
    assert report.complete and len(report.pages) == 21  # 206 records
    assert fake.pages_asked() == list(range(21))
    assert all(r["pageSize"] == "10" for r in fake.requests)
    assert [p.last_page for p in report.pages] == [False] * 20 + [True]
    assert snapshot(sync) == clean[CRASH_SIZE] == clean[100]  # the same however it is paged


def test_max_pages_stops_and_the_next_run_continues(httpserver: HTTPServer, fake: FakeSaos,
                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = make_sync(httpserver, home, page_size=40).sync(max_pages=2)
    assert not first.complete and cursor_file(home)["page"] == 2
    second = make_sync(httpserver, home, page_size=40).sync()
    assert second.complete and fake.pages_asked() == list(range(5))
    assert (first.new, second.new) == (80, SAMPLE_JUDGMENTS - 80)


# -- quarantine ---------------------------------------------------------------------------------


def test_malformed_records_are_quarantined_with_reasons_and_never_stored(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path) -> None:
    malformed = fake.add_malformed()
    sync = make_sync(httpserver, tmp_path / "home")
    report = sync.sync()
    assert report.complete and len(report.pages) == 3
    assert (report.new, report.quarantined) == (SAMPLE_JUDGMENTS, len(malformed))
    assert sync.store.judgments().num_rows == SAMPLE_JUDGMENTS

    quarantine = sync.store.quarantine()
    assert quarantine.schema.equals(QUARANTINE, check_metadata=False)
    rows = quarantine.to_pylist()
    assert len(rows) == len(malformed) and {r["kind"] for r in rows} == {"judgment"}
    by_text = {r["raw_record"]: r for r in rows}
    for bad in malformed:
        row = by_text[bad.text]  # the record byte for byte
        assert row["record_id"] == bad.record_id, bad.label
        for reason in bad.reasons:
            assert any(r.startswith(reason) for r in row["reasons"]), (bad.label, row["reasons"])
        if bad.label == "wrong types":
            assert len(row["reasons"]) == 3  # every problem, not just the first
        landed = sync.landing.get(row["raw_sha256"])  # traceable to the landed page
        assert landed is not None and bad.text in landed.path.read_text("utf-8")
        assert f"pageNumber={row['page']}" in row["source_url"]
    stored = {str(i) for i in sync.store.all_judgment_rows(["judgment_id"]).column("judgment_id").to_pylist()}
    assert not stored & {b.record_id for b in malformed if b.record_id}
    assert any(p.salvaged for p in report.pages)  # the page with the invalid-JSON record


@pytest.mark.parametrize("fault,problem", [("html", "not a SAOS dump page"),
                                           ("no_items", "no 'items' array")])
def test_an_unreadable_page_stops_loudly_and_the_sync_resumes(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path, fault: str, problem: str,
        clean: dict[int, dict[str, Any]]) -> None:
    fake.add_malformed()
    fake.fail(2, fault)
    home = tmp_path / "home"
    with pytest.raises(PageFormatError, match=problem) as err:
        make_sync(httpserver, home).sync()
    assert "/api/dump/judgments?pageSize=100&pageNumber=1" in str(err.value)  # names the URL
    assert cursor_file(home)["page"] == 1  # page 0 committed, the bad page not
    pages = [r for r in JudgmentStore(SaosPaths(home).store_root).quarantine().to_pylist()
             if r["kind"] == "page"]
    assert len(pages) == 1 and pages[0]["page"] == 1 and pages[0]["reasons"][0].startswith(
        "not a SAOS" if fault == "html" else "page is JSON")

    resumed = make_sync(httpserver, home)
    assert resumed.sync().complete
    got = snapshot(resumed)
    assert got["judgments"] == clean[100]["judgments"]
    assert got["versions"] == clean[100]["versions"]
    assert [q for q in got["quarantine"] if q[0] == "judgment"] == clean[100]["quarantine"]


def test_a_server_ignoring_the_date_window_is_refused(httpserver: HTTPServer, fake: FakeSaos,
                                                      tmp_path: Path) -> None:
    window = make_sync(httpserver, tmp_path / "window", start="2011-05-04", end="2011-06-13")
    report = window.sync()
    assert report.complete and all(r["judgmentStartDate"] == "2011-05-04" for r in fake.requests)
    dates = window.store.judgments(columns=["judgment_date"]).column("judgment_date").to_pylist()
    assert dates and min(dates).isoformat() >= "2011-05-04" and max(dates).isoformat() <= "2011-06-13"

    respond = fake.api.respond

    def ignoring_the_window(path: str, args: Any, base: str) -> Any:
        return respond(path, {k: v for k, v in args.items()
                              if k not in ("judgmentStartDate", "judgmentEndDate")}, base)

    fake.api.respond = ignoring_the_window  # type: ignore[method-assign]
    sync = make_sync(httpserver, tmp_path / "home", start="2011-05-04", end="2011-06-13")
    with pytest.raises(ContractError, match="judgmentStartDate"):
        sync.sync()
    assert sync.store.judgment_parts() == [] and not SaosPaths(tmp_path / "home").cursor_path.exists()


# -- incremental passes -------------------------------------------------------------------------


def test_a_second_pass_asks_only_for_modifications_and_stores_nothing_new(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sync = make_sync(httpserver, home)
    sync.sync()
    parts, since = sync.store.judgment_parts(), cursor_file(home)["since"]

    again = make_sync(httpserver, home).sync()
    assert again.complete and len(again.pages) == 1 and again.records == 0 and again.new == 0
    assert fake.requests[-1].get("sinceModificationDate") == since

    SaosPaths(home).cursor_path.unlink()  # lose the cursor: a full pass re-reads everything...
    full = make_sync(httpserver, home).sync()
    assert (full.new, full.updated, full.unchanged) == (0, 0, SAMPLE_JUDGMENTS)
    assert sync.store.judgment_parts() == parts  # ...and stores nothing twice


def test_incremental_pass_fetches_only_the_modified_records(httpserver: HTTPServer, fake: FakeSaos,
                                                            tmp_path: Path) -> None:
    home, clock = tmp_path / "home", Clock(NOW)
    first = make_sync(httpserver, home, now=clock).sync()
    assert first.new == SAMPLE_JUDGMENTS
    assert cursor_file(home)["since"] == "2025-12-31T23:00:00.001"  # pass start - 1 h overlap

    edited_at = NOW + timedelta(minutes=30)  # modified while or after the first pass ran
    fake.touch(94826, edited_at, textContent="<p>Sprostowanie: wyrok po poprawkach redakcyjnych.</p>")
    fake.touch(13408, edited_at)  # re-saved on the server without a visible change
    clock.at = NOW + timedelta(days=1)
    asked = len(fake.requests)
    second = make_sync(httpserver, home, now=clock).sync()
    assert second.complete and second.records == 2
    assert (second.new, second.updated, second.unchanged) == (0, 1, 1)
    assert [r["sinceModificationDate"] for r in fake.requests[asked:]] == ["2025-12-31T23:00:00.001"]

    sync = make_sync(httpserver, home)
    current = {r["judgment_id"]: r for r in sync.store.judgments().to_pylist()}
    assert len(current) == SAMPLE_JUDGMENTS
    assert current[94826]["text_content"].startswith("<p>Sprostowanie")
    history = [r for r in sync.store.all_judgment_rows(["judgment_id"]).to_pylist()
               if r["judgment_id"] == 94826]
    assert len(history) == 2  # append-only: the first version stays

    clock.at = NOW + timedelta(days=2)
    third = make_sync(httpserver, home, now=clock).sync()
    assert third.records == 0  # the edits are older than the second pass's start - overlap


# -- crashes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage,page", [("landed", 2), ("written", 2), ("committed", 2),
                                        ("written", CRASH_PAGES)])  # the last page ends the pass
def test_crash_after_page_n_then_restart_equals_uninterrupted(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path, stage: str, page: int,
        clean: dict[int, dict[str, Any]]) -> None:
    fake.add_malformed()

    def crash(at_stage: str, rep: PageReport) -> None:
        if at_stage == stage and rep.request_no == page:
            raise Crash(f"{stage} of request {page}")

    home = tmp_path / "home"
    with pytest.raises(Crash):
        make_sync(httpserver, home, page_size=CRASH_SIZE).sync(on_checkpoint=crash)
    committed = page if stage == "committed" else page - 1
    state = cursor_file(home)
    assert state["pages_committed"] == committed
    assert state["in_progress"] == (committed < CRASH_PAGES)

    resumed = make_sync(httpserver, home, page_size=CRASH_SIZE)
    assert resumed.sync().complete
    assert snapshot(resumed) == clean[CRASH_SIZE]


def test_batch_write_failing_leaves_the_cursor_on_that_page(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path,
        clean: dict[int, dict[str, Any]]) -> None:
    """A crash *while* the 5th page's batch is written. The cursor must still point at that page —
    were it saved before the batch, the restart would go on at the next and lose its judgments."""
    fake.add_malformed()
    home = tmp_path / "home"
    sync = make_sync(httpserver, home, page_size=CRASH_SIZE)
    write = sync.store.write_judgments
    calls = {"n": 0}

    def dying_write(rows: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 5:
            raise Crash("killed while writing the 5th page's batch")
        return write(rows)

    sync.store.write_judgments = dying_write  # type: ignore[method-assign]
    with pytest.raises(Crash):
        sync.sync()
    assert cursor_file(home)["page"] == 4  # 0-based page 4 is the 5th page

    resumed = make_sync(httpserver, home, page_size=CRASH_SIZE)
    report = resumed.sync()
    assert report.complete and report.pages[0].page == 4
    assert snapshot(resumed) == clean[CRASH_SIZE]


_CHILD = """
import os, signal
from connectors.saos import SaosSettings, judgment_sync_from_settings
from core.settings import Settings

kill_at = int(os.environ["KILL_AT_WRITTEN_PAGE"])

def hook(stage, page):
    if stage == "written" and page.request_no == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)  # batch on disk, cursor not yet saved

# LEXPIPE_OFFLINE=false: the loopback server at LEXPIPE_SAOS_BASE_URL
judgment_sync_from_settings(Settings(), SaosSettings()).sync(on_checkpoint=hook)
"""


def test_sigkill_between_batch_and_cursor_then_restart_equals_uninterrupted(
        httpserver: HTTPServer, fake: FakeSaos, tmp_path: Path,
        clean: dict[int, dict[str, Any]]) -> None:
    fake.add_malformed()
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEXPIPE_")}
    env.update(PYTHONPATH=str(REPO), LEXPIPE_HOME=str(home), LEXPIPE_OFFLINE="false",
               LEXPIPE_SAOS_BASE_URL=httpserver.url_for("/"), LEXPIPE_SAOS_PAGE_SIZE=str(CRASH_SIZE),
               LEXPIPE_SAOS_MIN_INTERVAL_S="0", LEXPIPE_SAOS_MAX_RETRIES="0",
               KILL_AT_WRITTEN_PAGE="3")
    child = subprocess.run([sys.executable, "-c", _CHILD], cwd=REPO, timeout=120, env=env)
    assert child.returncode == -signal.SIGKILL
    state = cursor_file(home)
    assert (state["pages_committed"], state["page"], state["in_progress"]) == (2, 2, True)
    store = JudgmentStore(SaosPaths(home).store_root)
    pages_stored = set(store.all_judgment_rows(["page"]).column("page").to_pylist())
    assert pages_stored == {0, 1, 2}  # page 2's batch reached the disk before the kill

    resumed = make_sync(httpserver, home, page_size=CRASH_SIZE,
                        now=lambda: datetime.now(timezone.utc))
    report = resumed.sync()  # the kernel freed the dead child's lock
    assert report.complete and report.pages[0].page == 2 and report.pages[0].new == 0
    assert snapshot(resumed) == clean[CRASH_SIZE]


def test_a_second_sync_on_the_same_home_is_locked_out(httpserver: HTTPServer, fake: FakeSaos,
                                                      tmp_path: Path) -> None:
    home = tmp_path / "home"
    lock = SaosPaths(home).lock_path
    lock.parent.mkdir(parents=True)
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(SyncLockedError):
            make_sync(httpserver, home).sync()
    assert fake.requests == []
    assert make_sync(httpserver, home).sync().complete
