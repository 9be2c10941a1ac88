"""Open Legal Data connector end to end against a loopback DRF server serving the real samples.

The server (tests/fake_openlegaldata.py) pages through every file in
``<sample_dir>/de/openlegaldata/`` — the five BGH fixtures, the two cases of
case_with_references.json, the old-serializer BVerfG record, the seven openJur
``invalid_cases_*`` records and the one file that is not valid JSON — and injects 429s, 5xx,
dropped connections, HTML error pages, and pauses for SIGKILL tests.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from connectors.case_store import CaseStore
from connectors.http import HttpFetchError
from connectors.openlegaldata import (CaseSync, CursorContractError, OldpPaths, OpenLegalDataError,
                                      PageFormatError, PageReport, SyncLockedError, WindowConfig)
from fake_openlegaldata import FakeOpenLegalData  # tests/, on sys.path via conftest
from oldp_helpers import QUARANTINED_IDS, SERVED_RECORDS, TOKEN, VALID_IDS, make_sync
from core.layout import Layout
from schemas.cases import CASES, QUARANTINE

REPO = Path(__file__).resolve().parents[3]


class Crash(Exception):
    """Stands in for a process dying at a checkpoint."""


def snapshot(sync: CaseSync) -> dict[str, Any]:
    """Everything a consumer sees, minus ingestion timestamps (they differ between runs)."""
    cases = sync.store.cases().drop_columns(["fetched_at"]).to_pylist()
    quarantine = sorted((r["kind"], r["record_id"] or "", tuple(r["reasons"]), r["quarantine_id"])
                        for r in sync.store.quarantine().to_pylist())
    rows = sorted((r["case_id"], r["updated_date"], r["content_sha256"])
                  for r in sync.store.all_case_rows().to_pylist())
    return {"cases": cases, "quarantine": quarantine, "all_rows": rows}


def clean_run(httpserver: HTTPServer, tmp_path: Path, name: str = "clean",
              **kw: Any) -> dict[str, Any]:
    sync = make_sync(httpserver, tmp_path / name, **kw)
    assert sync.sync_cases().complete
    return snapshot(sync)


def cursor_file(home: Path) -> dict[str, Any]:
    return json.loads(OldpPaths(home).cursor_path.read_text())


# -- the real samples, end to end ---------------------------------------------------------------


def test_full_sync_keeps_valid_cases_and_quarantines_every_malformed_record(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout) -> None:
    sync = make_sync(httpserver, tmp_home.home)
    report = sync.sync_cases()

    assert report.complete and report.accepted == len(VALID_IDS)
    assert report.accepted + report.quarantined == SERVED_RECORDS
    cases = sync.store.cases()
    assert cases.schema.equals(CASES, check_metadata=False)
    assert cases.column("case_id").to_pylist() == VALID_IDS
    quarantine = sync.store.quarantine()
    assert quarantine.schema.equals(QUARANTINE, check_metadata=False)
    assert quarantine.num_rows == SERVED_RECORDS - len(VALID_IDS)
    assert set(quarantine.column("kind").to_pylist()) == {"case"}
    assert sorted(r for r in quarantine.column("record_id").to_pylist() if r) == QUARANTINED_IDS
    assert all(quarantine.column("reasons").to_pylist())
    # nothing refused reaches the output
    assert not set(QUARANTINED_IDS) & {str(i) for i in cases.column("case_id").to_pylist()}

    # the persisted cursor: last key of the list, complete
    state = cursor_file(tmp_home.home)
    assert (state["updated_date"], state["case_id"], state["page"], state["complete"]) == (
        "2018-12-05T16:30:08.018Z", 1889, 1, True)
    # the token went out on every request, as DRF TokenAuthentication expects
    assert all(req.headers["Authorization"] == f"Token {TOKEN}" for req, _ in httpserver.log)


def test_case_fields_and_unknown_fields_kept(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                             tmp_home: Layout, oldp_dir: Path) -> None:
    sync = make_sync(httpserver, tmp_home.home)
    sync.sync_cases()
    rows = {r["case_id"]: r for r in sync.store.cases().to_pylist()}
    fixture = json.loads((oldp_dir / "bgh-2018-04-09-vi-zr-19417.json").read_text())[0]["fields"]

    bgh = rows[68]
    assert bgh["file_number"] == "VI\u00a0ZR\u00a0194/17" and bgh["type"] == "Beschluss"
    assert bgh["date"] == date(2018, 4, 9) and bgh["ecli"] is None  # '' → null
    assert bgh["updated_date"] == datetime(2018, 4, 26, 11, 32, 1, 277000, tzinfo=timezone.utc)
    assert bgh["updated_date_raw"] == "2018-04-26T11:32:01.277Z"
    assert bgh["content"] == fixture["content"]
    assert bgh["court_id"] == 5624 and bgh["court_json"] == '{"id": 5624}'
    extra = json.loads(bgh["extra_json"])  # fields the API contract does not name are kept
    assert extra["court_chamber"] == fixture["court_chamber"] and extra["raw"] == fixture["raw"]
    assert {"title", "pdf_url", "source_url", "private", "annotations"} <= extra.keys()

    lg = rows[1888]
    assert (lg["court_id"], lg["court_name"], lg["court_slug"]) == (1, "Unknown court", "unknown")
    assert json.loads(lg["extra_json"])["court_raw"] == '{"name": "LG M\\u00fcnchen I"}'


def test_quarantine_reasons_and_evidence(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                         tmp_home: Layout, oldp_dir: Path) -> None:
    sync = make_sync(httpserver, tmp_home.home)
    sync.sync_cases()
    rows = sync.store.quarantine().to_pylist()
    by_id = {r["record_id"]: r for r in rows if r["record_id"]}

    assert by_id["1889"]["reasons"] == ["content: empty"]
    openjur = by_id["30534"]["reasons"]
    assert {"file_number: missing", "updated_date: missing", "content: missing"} <= set(openjur)
    assert "date: not an ISO date (YYYY-MM-DD): '18. November 2008'" in openjur
    assert any(r.startswith("court: expected an object") for r in openjur)

    unnamed = [r for r in rows if not r["record_id"]]
    assert len(unnamed) == 2
    broken = next(r for r in unnamed if r["reasons"][0].startswith("not valid JSON"))
    assert "Invalid \\escape" in broken["reasons"][0]
    raw_file = oldp_dir / "invalid_cases_cannot_read_json_with_missing_escaping.json"
    assert broken["raw_record"] == raw_file.read_text("utf-8").strip()  # byte-for-byte evidence
    bverfg = next(r for r in unnamed if r is not broken)
    assert bverfg["reasons"][:1] == ["id: null"] and "content: missing" in bverfg["reasons"]

    # every quarantine row points at the landed page that carried it
    for row in rows:
        landed = sync.landing.get(row["raw_sha256"])
        assert landed is not None and sync.landing.verify(row["raw_sha256"])
        assert row["raw_record"] in landed.path.read_text("utf-8")


def test_every_page_body_is_landed_content_addressed(httpserver: HTTPServer,
                                                     fake: FakeOpenLegalData,
                                                     tmp_home: Layout) -> None:
    sync = make_sync(httpserver, tmp_home.home)
    report = sync.sync_cases()
    assert len(report.pages) == len(fake.requests)
    for page in report.pages:
        landed = sync.landing.get(page.raw_sha256)
        assert landed is not None and sync.landing.verify(page.raw_sha256)
        side = json.loads(landed.sidecar_path.read_text())
        assert side["act_id"] == "de:openlegaldata:cases" and side["source_url"] == page.url
        assert "authorization" not in side["headers"]
    assert any(p.salvaged for p in report.pages)  # the page carrying the invalid-JSON record


# -- incremental --------------------------------------------------------------------------------


def test_resync_fetches_only_the_tail_and_picks_up_changes(httpserver: HTTPServer,
                                                           fake: FakeOpenLegalData,
                                                           tmp_home: Layout) -> None:
    sync = make_sync(httpserver, tmp_home.home)
    sync.sync_cases()
    parts = sync.store.case_parts()
    before = len(fake.requests)

    again = sync.sync_cases()
    assert again.complete and len(fake.requests) == before + 1  # one page: the >= overlap
    assert again.accepted == 0 and again.quarantined == 0
    assert sync.store.case_parts() == parts

    fake.touch(67, "2019-01-02T03:04:05.678Z", content="<p>Berichtigt.</p>")
    third = sync.sync_cases()
    assert third.accepted == 1
    cases = {r["case_id"]: r for r in sync.store.cases().to_pylist()}
    assert sorted(cases) == VALID_IDS
    assert cases[67]["content"] == "<p>Berichtigt.</p>"
    assert cases[67]["updated_date_raw"] == "2019-01-02T03:04:05.678Z"
    history = [r for r in sync.store.all_case_rows().to_pylist() if r["case_id"] == 67]
    assert len(history) == 2  # append-only: the old version stays in the store
    assert cursor_file(tmp_home.home)["case_id"] == 67


def test_run_of_equal_timestamps_longer_than_a_page(httpserver: HTTPServer,
                                                    fake: FakeOpenLegalData,
                                                    tmp_path: Path) -> None:
    """A bulk import gives many records one updated_date: the walk must page through them."""
    for cid in VALID_IDS + [1889]:
        fake.touch(cid, "2019-03-01T00:00:00Z")
    sync = make_sync(httpserver, tmp_path / "home", page_size=2)
    report = sync.sync_cases()
    assert report.complete
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS
    assert sync.store.quarantine().num_rows == SERVED_RECORDS - len(VALID_IDS)
    assert len(fake.requests) < 20
    pages_at_plateau = [r.get("page", "1") for r in fake.requests
                        if r.get("updated_date__gte") == "2019-03-01T00:00:00Z"]
    assert len(pages_at_plateau) >= 3 and pages_at_plateau[:3] == ["1", "2", "3"]


def test_deletions_under_a_run_of_equal_timestamps_end_the_pass_then_heal(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_path: Path) -> None:
    """Page 3 of a plateau vanishes (404) after deletions: the pass ends, the next one rereads."""
    for cid in VALID_IDS + [1889]:
        fake.touch(cid, "2019-03-01T00:00:00Z")
    home = tmp_path / "home"
    make_sync(httpserver, home, page_size=2).sync_cases(max_pages=7)
    assert (cursor_file(home)["case_id"], cursor_file(home)["page"]) == (68, 3)
    for cid in (65, 66, 67):
        fake.delete(cid)

    sync = make_sync(httpserver, home, page_size=2)
    first = sync.sync_cases()
    assert first.complete and first.accepted == 0  # 404 on page 3 ends the pass, no error
    second = sync.sync_cases()  # starts again at page 1 of the plateau: 69 and 1888 shifted there
    assert second.complete and second.accepted == 2
    # deletions are not propagated (no tombstones in the API): 65-67 stay as last seen
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS


# -- faults -------------------------------------------------------------------------------------


def test_429_5xx_and_dropped_connection_are_retried(httpserver: HTTPServer,
                                                    fake: FakeOpenLegalData,
                                                    tmp_path: Path) -> None:
    fake.fail(1, "429", retry_after="7")
    fake.fail(3, "503")
    fake.fail(5, "drop")
    fake.fail(6, "503")
    sleeps: list[float] = []
    sync = make_sync(httpserver, tmp_path / "faulty", sleeps=sleeps)
    report = sync.sync_cases()
    assert report.complete
    assert len(fake.requests) == len(report.pages) + 4
    assert sleeps[0] == 7.0 and len(sleeps) == 4  # Retry-After honoured, then backoff
    assert snapshot(sync) == clean_run(httpserver, tmp_path)


def test_retries_exhausted_stop_the_sync_and_keep_the_cursor(httpserver: HTTPServer,
                                                             fake: FakeOpenLegalData,
                                                             tmp_path: Path) -> None:
    for n in (3, 4):
        fake.fail(n, "503")
    home = tmp_path / "home"
    with pytest.raises(HttpFetchError) as err:
        make_sync(httpserver, home, max_retries=1).sync_cases()
    assert err.value.status == 503
    assert cursor_file(home)["pages_committed"] == 2
    assert make_sync(httpserver, home).sync_cases().complete
    assert snapshot(make_sync(httpserver, home)) == clean_run(httpserver, tmp_path)


def test_html_error_page_stops_without_moving_the_cursor(httpserver: HTTPServer,
                                                         fake: FakeOpenLegalData,
                                                         tmp_path: Path) -> None:
    fake.fail(3, "html")
    home = tmp_path / "home"
    with pytest.raises(PageFormatError, match="not a paginated JSON list"):
        make_sync(httpserver, home).sync_cases()
    assert cursor_file(home)["pages_committed"] == 2
    pages = [r for r in make_sync(httpserver, home).store.quarantine().to_pylist()
             if r["kind"] == "page"]
    assert len(pages) == 1 and "502 Bad Gateway" in pages[0]["raw_record"]

    resumed = make_sync(httpserver, home)
    assert resumed.sync_cases().complete
    got, want = snapshot(resumed), clean_run(httpserver, tmp_path)
    assert got["cases"] == want["cases"] and got["all_rows"] == want["all_rows"]
    assert [q for q in got["quarantine"] if q[0] == "case"] == want["quarantine"]


def test_server_ignoring_the_cursor_parameters_is_refused(oldp_dir: Path,
                                                          httpserver: HTTPServer,
                                                          tmp_path: Path) -> None:
    """DRF silently drops unknown ordering/filter fields; a keyset walk must notice, not skip."""
    FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, honour_cursor=False).install(httpserver)
    home = tmp_path / "home"
    sync = make_sync(httpserver, home, mode="keyset")
    with pytest.raises(CursorContractError, match="does the server honour the filter"):
        sync.sync_cases()
    assert cursor_file(home)["pages_committed"] == 1  # the refused page moved nothing
    assert len(sync.store.all_case_rows()) == 3


# -- crashes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["landed", "written", "committed"])
@pytest.mark.parametrize("page", [1, 3, 4, 6])
def test_crash_after_page_n_then_restart_equals_uninterrupted(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_path: Path, stage: str,
        page: int) -> None:
    def crash(at_stage: str, rep: PageReport) -> None:
        if at_stage == stage and rep.request_no == page:
            raise Crash(f"{stage} of page {page}")

    home = tmp_path / "home"
    with pytest.raises(Crash):
        make_sync(httpserver, home).sync_cases(on_checkpoint=crash)
    committed = page if stage == "committed" else page - 1
    assert (cursor_file(home)["pages_committed"] if committed else 0) == committed

    resumed = make_sync(httpserver, home)
    assert resumed.sync_cases().complete
    assert snapshot(resumed) == clean_run(httpserver, tmp_path)


def test_crash_on_every_page_still_converges(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                             tmp_path: Path) -> None:
    """Die between writing a page and saving the cursor on each run's first page, repeatedly."""
    home = tmp_path / "home"
    crashes = 0
    for _ in range(50):
        def crash(stage: str, rep: PageReport) -> None:
            if stage == "written" and rep.request_no == 1 and crashes % 2 == 0:
                raise Crash("between batch and cursor")

        try:
            if make_sync(httpserver, home).sync_cases(max_pages=1, on_checkpoint=crash).complete:
                break
        except Crash:
            pass
        crashes += 1
    else:
        pytest.fail("sync never completed")
    assert snapshot(make_sync(httpserver, home)) == clean_run(httpserver, tmp_path)


_CHILD = """
import os, signal, sys
from pathlib import Path
from connectors.openlegaldata import OpenLegalDataSettings, case_sync_from_settings
from core.settings import Settings

kill_at = int(os.environ.get("KILL_AT_WRITTEN_PAGE", "0"))

def hook(stage, page):
    if stage == "written" and page.request_no == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)  # batch on disk, cursor not yet saved

settings = Settings()  # LEXPIPE_OFFLINE=false: the loopback server at LEXPIPE_OLDP_BASE_URL
sync = case_sync_from_settings(settings, OpenLegalDataSettings(), min_interval_s=0.0,
                               max_retries=0)
sync.sync_cases(on_checkpoint=hook)
"""


def _child_env(httpserver: HTTPServer, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEXPIPE_")}
    env.update(PYTHONPATH=str(REPO), LEXPIPE_HOME=str(home),
               LEXPIPE_OFFLINE="false",
               LEXPIPE_OLDP_BASE_URL=httpserver.url_for("/api"), LEXPIPE_OLDP_API_TOKEN=TOKEN,
               LEXPIPE_OLDP_PAGE_SIZE="3", **extra)
    return env


def test_sigkill_while_waiting_for_page_n_plus_1(httpserver: HTTPServer,
                                                 fake: FakeOpenLegalData,
                                                 tmp_path: Path) -> None:
    home = tmp_path / "home"
    hold = fake.hold_at(4)  # the child asks for page 4 only after committing page 3
    child = subprocess.Popen([sys.executable, "-c", _CHILD], cwd=REPO,
                             env=_child_env(httpserver, home))
    try:
        assert hold.arrived.wait(60), "child never reached page 4"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        hold.release.set()
        if child.poll() is None:
            child.kill()
    assert cursor_file(home)["pages_committed"] == 3

    resumed = make_sync(httpserver, home)  # the kernel freed the dead child's lock
    assert resumed.sync_cases().complete
    assert snapshot(resumed) == clean_run(httpserver, tmp_path)


def test_sigkill_between_batch_and_cursor(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                          tmp_path: Path) -> None:
    home = tmp_path / "home"
    child = subprocess.run([sys.executable, "-c", _CHILD], cwd=REPO, timeout=120,
                           env=_child_env(httpserver, home, KILL_AT_WRITTEN_PAGE="5"))
    assert child.returncode == -signal.SIGKILL
    assert cursor_file(home)["pages_committed"] == 4
    store = CaseStore(OldpPaths(home).store_root)
    written = len(store.all_case_rows()) + len(store.quarantine())

    resumed = make_sync(httpserver, home)
    assert resumed.sync_cases().complete
    assert snapshot(resumed) == clean_run(httpserver, tmp_path)
    assert written > 0


def test_second_sync_on_the_same_home_is_locked_out(httpserver: HTTPServer,
                                                    fake: FakeOpenLegalData,
                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    lock = OldpPaths(home).lock_path
    lock.parent.mkdir(parents=True)
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(SyncLockedError):
            make_sync(httpserver, home).sync_cases()
    assert fake.requests == []
    assert make_sync(httpserver, home).sync_cases().complete


# -- date windows: what the live API supports ---------------------------------------------------

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


class Clock:
    """A settable ``now`` for the sync (pass start, full-rescan age, the unbounded last window)."""

    def __init__(self, at: datetime = NOW) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def live(oldp_dir: Path, httpserver: HTTPServer) -> FakeOpenLegalData:
    """The server as de.openlegaldata.io behaves: ordering by date only, date_after/date_before,
    unknown parameters ignored, pages beyond 10 refused."""
    server = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, behaviour="live")
    server.install(httpserver)
    return server


def window_sync(httpserver: HTTPServer, home: Path, **kw: Any) -> CaseSync:
    """Small pages and a 2-page cap (6 records a window) so the sample needs several windows."""
    opts: dict[str, Any] = dict(mode="date_windows", max_pages=2, now=Clock())
    opts.update(kw)
    return make_sync(httpserver, home, **opts)


def case_view(sync: CaseSync) -> list[dict[str, Any]]:
    """The served cases without provenance (URLs differ between modes)."""
    return sync.store.cases().drop_columns(["fetched_at", "source_url", "raw_sha256"]).to_pylist()


def test_auto_mode_falls_back_to_date_windows_on_the_live_api(
        httpserver: HTTPServer, live: FakeOpenLegalData, tmp_path: Path) -> None:
    sync = make_sync(httpserver, tmp_path / "home", max_pages=2, now=Clock())
    report = sync.sync_cases()

    assert report.complete and report.mode == "date_windows"
    assert report.mode_switch is not None and "does the server honour" in report.mode_switch
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS
    quarantine = sync.store.quarantine()
    assert quarantine.num_rows == SERVED_RECORDS - len(VALID_IDS)
    assert sorted(r for r in quarantine.column("record_id").to_pylist() if r) == QUARANTINED_IDS
    assert all(quarantine.column("reasons").to_pylist())
    assert report.new == len(VALID_IDS) and report.updated == 0

    switched = next(i for i, q in enumerate(live.requests) if q.get("ordering") == "date")
    assert all(q.get("ordering") == "updated_date,id" for q in live.requests[:switched])
    assert all(q.get("ordering") == "date" and "updated_date__gte" not in q
               for q in live.requests[switched:])
    assert all(int(q.get("page", 1)) <= 2 for q in live.requests[switched:])  # the page cap
    assert any(p.narrowed for p in report.pages)  # 16 records > 6 reachable: windows were split
    state = cursor_file(tmp_path / "home")
    assert (state["mode"], state["complete"], state["window_hi"], state["max_date_seen"]) == (
        "date_windows", True, None, "2018-11-21")

    # the same cases as a keyset sync against a server that supports it
    keyset_home = tmp_path / "keyset"
    other = FakeOpenLegalData(live.api.folder.parent.parent, token=TOKEN)
    with HTTPServer() as server2:
        other.install(server2)
        ref = make_sync(server2, keyset_home, mode="keyset")
        assert ref.sync_cases().complete
    assert case_view(sync) == case_view(ref)


def test_date_windows_against_a_server_ignoring_the_window_is_refused(
        httpserver: HTTPServer, live: FakeOpenLegalData, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert window_sync(httpserver, home).sync_cases().complete
    parts = window_sync(httpserver, home).store.case_parts()
    live.api.behaviour = "ignore"  # the server starts ignoring date_after/date_before
    sync = window_sync(httpserver, home, now=Clock(NOW + timedelta(days=1)))
    with pytest.raises(CursorContractError, match="date_after/date_before"):
        sync.sync_cases()  # the incremental pass asks for 2018-09-22.., gets April 2018 cases
    assert sync.store.case_parts() == parts  # the refused page stored nothing
    before = cursor_file(home)
    assert before["complete"] and before["max_date_seen"] == "2018-11-21"  # nothing moved


@pytest.mark.parametrize("stage", ["landed", "written", "committed"])
@pytest.mark.parametrize("nth", [1, 5])
def test_date_windows_crash_after_page_n_then_restart_equals_uninterrupted(
        httpserver: HTTPServer, live: FakeOpenLegalData, tmp_path: Path, stage: str,
        nth: int) -> None:
    """Crash at the n-th time a page reaches ``stage`` (narrowing pages never reach 'written')."""
    seen = {"n": 0}

    def crash(at_stage: str, rep: PageReport) -> None:
        if at_stage == stage:
            seen["n"] += 1
            if seen["n"] == nth:
                raise Crash(f"{stage} #{nth} (request {rep.request_no})")

    home = tmp_path / "home"
    with pytest.raises(Crash):
        window_sync(httpserver, home).sync_cases(on_checkpoint=crash)
    resumed = window_sync(httpserver, home)
    assert resumed.sync_cases().complete

    clean = window_sync(httpserver, tmp_path / "clean")
    assert clean.sync_cases().complete
    assert snapshot(resumed) == snapshot(clean)  # all_rows equal: no duplicate versions stored


def test_date_windows_sigkill_mid_window_then_restart(httpserver: HTTPServer,
                                                      live: FakeOpenLegalData,
                                                      tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = _child_env(httpserver, home, KILL_AT_WRITTEN_PAGE="6", LEXPIPE_OLDP_SYNC_MODE="date_windows",
                     LEXPIPE_OLDP_MAX_PAGES="2")
    child = subprocess.run([sys.executable, "-c", _CHILD], cwd=REPO, timeout=120, env=env)
    assert child.returncode == -signal.SIGKILL
    state = cursor_file(home)
    assert state["mode"] == "date_windows" and not state["complete"]

    resumed = make_sync(httpserver, home, mode="date_windows", max_pages=2)
    assert resumed.sync_cases().complete
    clean = make_sync(httpserver, tmp_path / "clean", mode="date_windows", max_pages=2)
    assert clean.sync_cases().complete
    assert snapshot(resumed) == snapshot(clean)


def test_unstable_order_within_a_window_is_read_again_until_complete(
        oldp_dir: Path, httpserver: HTTPServer, tmp_path: Path) -> None:
    """No tie-breaker after ``date``: ties come back in another order on every request, so a
    page walk can skip a case and repeat another. The count check catches it and re-reads."""
    server = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, behaviour="live",
                               shuffle_ties=True)
    server.install(httpserver)
    sync = make_sync(httpserver, tmp_path / "home", mode="date_windows", page_size=2,
                     max_pages=10, windows=WindowConfig(max_rereads=8), now=Clock())
    report = sync.sync_cases()
    assert report.complete
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS
    assert sync.store.quarantine().num_rows == SERVED_RECORDS - len(VALID_IDS)
    first_pages = [q for q in server.requests if "page" not in q]
    assert len(first_pages) > len({(q.get("date_after"), q.get("date_before"))
                                   for q in first_pages})  # some window was read again
    rows = sync.store.all_case_rows().column("case_id").to_pylist()
    assert sorted(rows) == VALID_IDS  # re-reads stored nothing twice


def test_unstable_window_that_never_completes_stops_without_moving_on(
        oldp_dir: Path, httpserver: HTTPServer, tmp_path: Path) -> None:
    server = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, behaviour="live")
    server.install(httpserver)
    home = tmp_path / "home"
    sync = make_sync(httpserver, home, mode="date_windows", page_size=2, max_pages=10,
                     windows=WindowConfig(max_rereads=1), now=Clock())
    server.delete(68)  # the first page counts 16...
    original = server.api.cases

    def count_lies(args: Any, base: str) -> Any:  # ...a server whose count includes a ghost
        reply = original(args, base)
        return type(reply)(reply.status, reply.body.replace(b'"count": 15', b'"count": 16'))

    server.api.cases = count_lies  # type: ignore[method-assign]
    with pytest.raises(OpenLegalDataError, match="15 distinct record.* of 16 after 2 read"):
        sync.sync_cases()
    state = cursor_file(home)
    assert state["window_lo"] is None and state["window_hi"] is None and not state["complete"]


def test_incremental_date_window_pass_overlap_and_full_rescan(
        httpserver: HTTPServer, live: FakeOpenLegalData, tmp_path: Path) -> None:
    """What the fallback can and cannot see: edits inside the trailing overlap at once, edits to
    old decisions only at the next full rescan."""
    clock = Clock()
    home = tmp_path / "home"
    windows = WindowConfig(overlap_days=60, full_rescan_days=30)
    first = window_sync(httpserver, home, now=clock, windows=windows).sync_cases()
    assert first.complete and first.new == len(VALID_IDS)

    live.touch(1888, "2026-01-02T00:00:00Z", content="<p>Berichtigt.</p>")  # decided 2018-11-21
    live.touch(65, "2026-01-02T00:00:00Z", content="<p>Auch berichtigt.</p>")  # decided 2018-04-10
    live.add_copy(68, 7001, decision_date="2018-12-01", updated_date="2026-01-02T00:00:00Z")
    clock.at = NOW + timedelta(days=1)
    second = window_sync(httpserver, home, now=clock, windows=windows).sync_cases()
    assert second.complete and (second.new, second.updated) == (1, 1)
    assert all(q.get("date_after") for q in live.requests[-len(second.pages):])  # not from the start
    assert min(q["date_after"] for q in live.requests[-len(second.pages):]) == "2018-09-22"
    cases = {r["case_id"]: r for r in window_sync(httpserver, home).store.cases().to_pylist()}
    assert cases[1888]["content"] == "<p>Berichtigt.</p>" and 7001 in cases
    assert cases[65]["content"] != "<p>Auch berichtigt.</p>"  # outside the overlap: not yet

    clock.at = NOW + timedelta(days=31)  # the last full scan is now older than 30 days
    third = window_sync(httpserver, home, now=clock, windows=windows).sync_cases()
    assert third.complete and (third.new, third.updated) == (0, 1)
    assert third.unchanged == len(VALID_IDS) + 1 - 1
    cases = {r["case_id"]: r for r in window_sync(httpserver, home).store.cases().to_pylist()}
    assert cases[65]["content"] == "<p>Auch berichtigt.</p>"


def test_explicit_date_window_mode_and_page_cap_404(httpserver: HTTPServer,
                                                    live: FakeOpenLegalData,
                                                    tmp_path: Path) -> None:
    sync = make_sync(httpserver, tmp_path / "home", mode="date_windows", now=Clock())
    assert sync.sync_cases().complete
    assert all(q.get("ordering") == "date" for q in live.requests)  # no keyset attempt
    with pytest.raises(HttpFetchError) as err:  # what a deeper page looks like on the live API
        sync.api.get(sync.api.window_url(None, None, 11))
    assert err.value.status == 404


def test_single_day_above_the_page_cap_is_a_clear_error(httpserver: HTTPServer,
                                                        live: FakeOpenLegalData,
                                                        tmp_path: Path) -> None:
    for cid in VALID_IDS:
        live.touch(cid, "2019-01-01T00:00:00Z", decision_date="2019-01-01")
    sync = make_sync(httpserver, tmp_path / "home", mode="date_windows", page_size=2,
                     max_pages=2, now=Clock())
    with pytest.raises(OpenLegalDataError, match="single day 2019-01-01 holds 6 cases.*PAGE_SIZE"):
        sync.sync_cases()
