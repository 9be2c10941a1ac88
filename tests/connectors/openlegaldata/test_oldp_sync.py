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
import logging
import os
import signal
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pydantic import SecretStr
from pytest_httpserver import HTTPServer

from connectors.case_store import CaseStore
from connectors.http import HttpFetchError, PoliteHttpClient
from connectors.openlegaldata import (ApiParams, CaseSync, CursorContractError, OldpPaths,
                                      OpenLegalDataApi, OpenLegalDataError, PageFormatError, PageReport,
                                      SyncLockedError, WindowConfig, case_key, parse_page,
                                      validate_case)
from fake_openlegaldata import FakeOpenLegalData  # tests/, on sys.path via conftest
from core.layout import Layout
from schemas.cases import CASES, COURTS, QUARANTINE

REPO = Path(__file__).resolve().parents[2]
TOKEN = "oldp-SECRET-token-4711"
VALID_IDS = [65, 66, 67, 68, 69, 1888]
# 1889 (empty content) and the seven openJur records carry an id; the BVerfG record has
# "id": null and the unparseable openJur export has none.
QUARANTINED_IDS = ["1889", "30534", "30535", "30540", "30541", "30737", "30738", "30739"]
SERVED_RECORDS = 16


class Crash(Exception):
    """Stands in for a process dying at a checkpoint."""


@pytest.fixture
def oldp_dir(sample_dir: Path) -> Path:
    folder = sample_dir / "de" / "openlegaldata"
    if not folder.is_dir():
        pytest.skip(f"Open Legal Data samples not found at {folder}")
    return folder


@pytest.fixture
def fake(oldp_dir: Path, httpserver: HTTPServer) -> FakeOpenLegalData:
    server = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN)
    server.install(httpserver)
    return server


def make_sync(httpserver: HTTPServer, home: Path, *, page_size: int = 3,
              sleeps: list[float] | None = None, token: str = TOKEN, mode: str = "auto",
              max_pages: int = 10, windows: WindowConfig = WindowConfig(),
              now: Any = None, **client_kw: Any) -> CaseSync:
    opts: dict[str, Any] = dict(user_agent="lexpipe-tests/0 (+https://example.invalid)",
                                timeout_s=5.0, max_retries=3, backoff_base_s=0.5,
                                backoff_max_s=8.0, min_interval_s=0.0,
                                sleep=(sleeps.append if sleeps is not None else lambda s: None))
    opts.update(client_kw)
    api = OpenLegalDataApi(PoliteHttpClient(**opts), httpserver.url_for("/api"),
                           api_token=SecretStr(token),
                           params=ApiParams(page_size=page_size, max_pages=max_pages))
    return CaseSync(api, home, mode=mode, windows=windows, **({"now": now} if now else {}))


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


# -- politeness and secrets ---------------------------------------------------------------------


def test_rate_limit_spaces_requests(httpserver: HTTPServer, fake: FakeOpenLegalData,
                                    tmp_path: Path) -> None:
    import time

    # gaps are seen by the server, so they carry scheduling jitter on a busy machine: a wide
    # interval with a half-interval floor (unthrottled requests arrive milliseconds apart)
    sync = make_sync(httpserver, tmp_path / "home", min_interval_s=0.2, sleep=time.sleep)
    sync.sync_cases()
    gaps = [b - a for a, b in zip(fake.request_times, fake.request_times[1:])]
    assert len(gaps) >= 5 and min(gaps) >= 0.1 and sum(gaps) / len(gaps) >= 0.19


def test_token_never_logged_and_wrong_token_not_retried(httpserver: HTTPServer,
                                                        fake: FakeOpenLegalData,
                                                        tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # includes httpx/httpcore debug logs
    good = make_sync(httpserver, tmp_path / "good")
    good.sync_cases()
    assert TOKEN not in caplog.text and TOKEN not in repr(good.api)
    for path in (tmp_path / "good").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path

    with pytest.raises(HttpFetchError) as err:
        make_sync(httpserver, tmp_path / "bad", token="wrong-SECRET-x").sync_cases()
    assert err.value.status == 401 and not err.value.retryable and err.value.attempts == 1
    assert "wrong-SECRET-x" not in caplog.text and "wrong-SECRET-x" not in str(err.value)
    assert not OldpPaths(tmp_path / "bad").cursor_path.exists()


# -- courts -------------------------------------------------------------------------------------


def test_courts_snapshot(httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout,
                         oldp_dir: Path) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    # limit/offset like the live /courts/ (CappedLimitOffsetPagination), following the next links
    assert fake.court_requests == [{"limit": "5"}, {"limit": "5", "offset": "5"},
                                   {"limit": "5", "offset": "10"}]
    courts = sync.store.courts()
    assert courts.schema.equals(COURTS, check_metadata=False)
    rows = {r["court_id"]: r for r in courts.to_pylist()}
    assert sorted(rows) == sorted(c["pk"] for c in json.loads((oldp_dir / "courts.json").read_text()))
    assert (rows[1168]["name"], rows[1168]["code"], rows[1168]["state"]) == (
        "Bundesgerichtshof", "BGH", "29")
    extra = json.loads(rows[1166]["extra_json"])  # CourtSerializer fields the COURTS schema lacks
    assert extra["description"] == "" and "homepage" in extra and "review_status" in extra
    assert "aliases" not in extra  # a fixture field CourtSerializer does not serve
    assert rows[1]["updated_date"] == datetime(2018, 1, 30, 13, 23, 40, 675000, tzinfo=timezone.utc)
    # every page landed, labelled by its offset
    urls = sorted(json.loads(p.read_text())["source_url"] for p in sync.paths.raw.rglob("*.json"))
    assert [u.split("?")[1] for u in urls] == ["limit=5", "limit=5&offset=10", "limit=5&offset=5"]


def test_courts_endpoint_answers_like_the_live_limit_offset_pagination(oldp_dir: Path) -> None:
    """The emulator's /courts/ is DRF LimitOffsetPagination as oldp configures it (default 50,
    max 1000, deep offsets refused), ordered by name, CourtSerializer records."""
    from connectors.openlegaldata_sample import COURT_API_FIELDS, COURTS_PATH, SampleOpenLegalData

    api = SampleOpenLegalData(oldp_dir.parent.parent)
    base = "http://api.test/api/courts/"

    def get(**args: str) -> dict[str, Any]:
        reply = api.respond(COURTS_PATH, args, base)
        assert reply.status == 200, reply.body
        return json.loads(reply.body)

    names = sorted(c["fields"]["name"] for c in json.loads((oldp_dir / "courts.json").read_text()))
    whole = get()  # no limit: default_limit 50 > 13 courts
    assert (whole["count"], whole["next"], whole["previous"]) == (13, None, None)
    assert [c["name"] for c in whole["results"]] == names  # order_by("name")
    assert all(tuple(c) == COURT_API_FIELDS for c in whole["results"])
    bgh = next(c for c in whole["results"] if c["code"] == "BGH")
    assert (bgh["id"], bgh["slug"], bgh["state"], bgh["homepage"]) == (1168, "bgh", 29, None)

    middle = get(limit="5", offset="5")
    assert [c["name"] for c in middle["results"]] == names[5:10]
    assert middle["next"] == base + "?limit=5&offset=10"
    assert middle["previous"] == base + "?limit=5"  # offset - limit <= 0: DRF drops the offset
    last = get(limit="5", offset="10", search="x")  # other parameters kept in the links, sorted
    assert len(last["results"]) == 3 and last["next"] is None
    assert last["previous"] == base + "?limit=5&offset=5&search=x"
    assert get(limit="5", offset="99")["results"] == []  # past the end: empty, not a 404
    assert len(get(limit="0")["results"]) == 13 and len(get(limit="-3")["results"]) == 13  # → default
    assert len(get(limit="5000")["results"]) == 13  # capped at max_limit, not refused
    deep = api.respond(COURTS_PATH, {"offset": "10001"}, base)
    assert deep.status == 404 and b"Offset 10001 exceeds maximum of 10000" in deep.body

    # what the old page-number walk asked: page/page_size are ignored, every "page" is the first
    small = SampleOpenLegalData(oldp_dir.parent.parent, courts_default_limit=4)
    first = json.loads(small.respond(COURTS_PATH, {"page_size": "5"}, base).body)
    second = json.loads(small.respond(COURTS_PATH, {"page_size": "5", "page": "2"}, base).body)
    assert [c["id"] for c in first["results"]] == [c["id"] for c in second["results"]]
    assert len(first["results"]) == 4 and first["next"] == base + "?limit=4&offset=4&page_size=5"


def test_courts_sync_pages_past_the_servers_default_page(oldp_dir: Path, httpserver: HTTPServer,
                                                        tmp_path: Path) -> None:
    """A server whose default page (4) is shorter than the list: the sync must page by
    limit/offset. The old page/page_size walk got the same first page on every request here
    (page numbers are ignored by LimitOffsetPagination) and never reached the other courts."""
    fake = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN, courts_default_limit=4)
    fake.install(httpserver)
    sync = make_sync(httpserver, tmp_path / "home", page_size=4)
    assert sync.sync_courts(max_pages=10) == 13
    assert [r.get("offset", "0") for r in fake.court_requests] == ["0", "4", "8", "12"]
    assert all(r["limit"] == "4" and "page" not in r and "page_size" not in r for r in fake.court_requests)
    assert len(sync.store.courts()) == 13


def test_courts_next_link_to_another_host_is_not_followed(oldp_dir: Path, httpserver: HTTPServer,
                                                          tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """The token goes with every request: a next link off the API is replaced by our own URL."""
    fake = FakeOpenLegalData(oldp_dir.parent.parent, token=TOKEN)
    fake.install(httpserver)
    page = json.loads(fake.api.respond("/api/courts/", {"limit": "5"}, httpserver.url_for("/api/courts/")).body)
    page["next"] = "http://collector.invalid/api/courts/?limit=5&offset=5"
    fake.court_bodies[1] = json.dumps(page).encode()
    sync = make_sync(httpserver, tmp_path / "home", page_size=5)
    assert sync.sync_courts() == 13
    assert fake.court_requests[1] == {"limit": "5", "offset": "5"}  # computed, on the API's host
    assert "not following next link http://collector.invalid/api/courts/" in caplog.text


def test_malformed_courts_page_stops_and_keeps_the_previous_snapshot(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    before = sync.store.courts_path.read_bytes()

    fake.fail_courts(5, "html")  # the second page of the next sync is an HTML error page with 200
    with pytest.raises(PageFormatError, match=r"/api/courts/\?limit=5&offset=5: not a paginated JSON list"):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before  # all or nothing
    [page] = [r for r in sync.store.quarantine().to_pylist() if r["kind"] == "page"]
    assert page["source_url"].endswith("/api/courts/?limit=5&offset=5") and "502 Bad Gateway" in page["raw_record"]
    assert page["page"] == 2 and page["reasons"][0].startswith("not a paginated JSON list")

    # a page without its count cannot be checked for completeness
    fake.court_bodies[7] = b'{"next": null, "previous": null, "results": []}'
    with pytest.raises(PageFormatError, match="no integer 'count'"):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before


def test_bad_court_records_are_quarantined_and_the_rest_kept(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout) -> None:
    url = httpserver.url_for("/api/courts/")
    body = fake.api.respond("/api/courts/", {"limit": "5"}, url).body.decode()
    page = json.loads(body)
    first, second = page["results"][0], page["results"][1]
    # one court without a name, one record that is not valid JSON (an invalid \' escape)
    broken = body.replace(json.dumps(first, ensure_ascii=False),
                          json.dumps({**first, "name": None}, ensure_ascii=False))
    broken = broken.replace(json.dumps(second["name"], ensure_ascii=False),
                            json.dumps(second["name"], ensure_ascii=False)[:-1] + "\\'\"")
    fake.court_bodies[1] = broken.encode()
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 11
    refused = {r["record_id"]: r["reasons"] for r in sync.store.quarantine().to_pylist() if r["kind"] == "court"}
    assert refused[str(first["id"])] == ["name: null"]
    assert refused[str(second["id"])][0].startswith("not valid JSON: Invalid \\escape")
    assert {first["id"], second["id"]}.isdisjoint(sync.store.courts()["court_id"].to_pylist())


@pytest.mark.parametrize("edit,problem", [
    ("delete", r"the court list changed while paging \(count 13, now 12\)"),
    ("rename", r"court \d+ was already read on an earlier page"),
])
def test_court_list_changing_under_the_offsets_keeps_the_previous_snapshot(
        httpserver: HTTPServer, fake: FakeOpenLegalData, tmp_home: Layout, edit: str,
        problem: str) -> None:
    sync = make_sync(httpserver, tmp_home.home, page_size=5)
    assert sync.sync_courts() == 13
    before = sync.store.courts_path.read_bytes()
    first_page = json.loads(fake.api.respond("/api/courts/", {"limit": "5"}, "http://x/").body)["results"]
    moved = first_page[0]["id"]  # "Amtsgericht Aalen", first by name

    def change() -> None:  # between the first and the second page of the next sync
        if edit == "delete":
            del fake.api.courts[moved]
        else:  # renamed so that it sorts last: it shows up again, and a court slides onto page 1
            fake.api.courts[moved] = {**fake.api.courts[moved], "name": "Zentrales Gericht"}

    fake.court_edits[5] = change
    with pytest.raises(OpenLegalDataError, match=problem):
        sync.sync_courts()
    assert sync.store.courts_path.read_bytes() == before


# -- units: page parsing, validation, store -----------------------------------------------------


def test_parse_page_splits_a_page_broken_by_one_record(oldp_dir: Path) -> None:
    bad = (oldp_dir / "invalid_cases_cannot_read_json_with_missing_escaping.json").read_text()
    good = json.dumps({"id": 1, "content": 'tricky "}], [{" text \\" here'})
    body = ('{"count": 3, "next": "http://x/api/cases/?page=2", "previous": null, '
            f'"results": [{good}, {bad}, [1, {{"a": "]"}}]]}}').encode()
    page = parse_page(body)
    assert page.salvaged and page.next_url == "http://x/api/cases/?page=2" and page.count == 3
    assert [r.error is None for r in page.records] == [True, False, True]
    assert page.records[0].obj == json.loads(good)
    assert page.records[1].text == bad.strip() and "Invalid \\escape" in page.records[1].error
    assert page.records[2].obj == [1, {"a": "]"}]

    for garbage in (b"<html>502</html>", b'{"count": 1, "results": [{"id": 1}', b'{"next": 5}',
                    b"\xff\xfe{}", b'{"results": {"id": 1}}'):
        with pytest.raises(PageFormatError):
            parse_page(garbage)


def test_validate_case_tolerates_drift_and_lists_every_problem() -> None:
    base = {"id": 7, "court": 3, "file_number": "1 C 2/20", "date": "2020-02-03",
            "updated_date": "2020-02-04T05:06:07.123456+01:00", "content": "<p>x</p>",
            "created_date": "yesterday", "brand_new_field": {"nested": [1]}}
    row, reasons = validate_case(base)
    assert reasons == [] and row is not None
    assert row["court_id"] == 3 and row["court_json"] is None
    assert row["updated_date"] == datetime(2020, 2, 4, 4, 6, 7, 123456, tzinfo=timezone.utc)
    assert row["created_date"] is None
    assert json.loads(row["extra_json"]) == {"brand_new_field": {"nested": [1]},
                                             "created_date": "yesterday"}

    row, reasons = validate_case({"id": True, "court": {"id": "3"}, "file_number": " ",
                                  "date": None, "updated_date": "soon", "content": 5})
    assert row is None and reasons == [
        "id: expected a positive integer, got True",
        "court: expected an object with an integer 'id' or an integer, got {'id': '3'}",
        "file_number: empty", "date: null", "updated_date: not an ISO timestamp: 'soon'",
        "content: expected text, got int"]
    assert validate_case([1, 2]) == (None, ["record is not a JSON object (got list)"])
    # the ordering key needs only id + updated_date, so refused records still move the cursor
    assert case_key({"id": 9, "updated_date": "2020-01-01T00:00:00Z"}) is not None
    assert case_key({"id": "9", "updated_date": "2020-01-01T00:00:00Z"}) is None


def test_store_is_idempotent_and_newest_version_wins(tmp_path: Path) -> None:
    store = CaseStore(tmp_path / "store")
    row, _ = validate_case({"id": 1, "court": 2, "file_number": "A", "date": "2020-01-01",
                            "updated_date": "2020-01-01T00:00:00Z", "content": "old"})
    assert row is not None
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    prov = {"source_url": "http://x/1", "raw_sha256": "0" * 64, "fetched_at": t0}
    first = store.write_cases([{**row, **prov}])
    again = store.write_cases([{**row, **prov, "fetched_at": datetime.now(timezone.utc),
                                "source_url": "http://x/2"}])
    assert first == again and len(store.case_parts()) == 1
    assert store.write_cases([]) is None

    newer = {**row, "updated_date": datetime(2021, 1, 1, tzinfo=timezone.utc),
             "updated_date_raw": "2021-01-01T00:00:00Z", "content": "new"}
    store.write_cases([{**newer, **prov}])
    older_fetched_later = {**row, **prov, "fetched_at": datetime(2025, 1, 1, tzinfo=timezone.utc),
                           "file_number": "B"}
    store.write_cases([older_fetched_later])
    current = store.cases(columns=["case_id", "content"])
    assert current.to_pylist() == [{"case_id": 1, "content": "new"}]
    assert len(store.all_case_rows()) == 3
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError)):
        store.write_cases([{**row, **prov, "case_id": None}])  # a non-null column stays non-null


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


# -- the offline source ------------------------------------------------------------------------


def test_offline_source_runs_the_same_sync_on_the_samples(sample_dir: Path, oldp_dir: Path,
                                                          tmp_path: Path) -> None:
    from connectors.openlegaldata import OpenLegalDataSettings, case_sync_from_settings
    from connectors.openlegaldata_sample import SAMPLE_BASE_URL
    from core.settings import Settings

    settings = Settings(home=tmp_path / "home", sample_dir=sample_dir, offline=True)
    sync = case_sync_from_settings(settings, OpenLegalDataSettings())
    report = sync.sync_cases()
    assert report.complete and report.mode == "date_windows" and report.mode_switch
    assert sync.store.cases().column("case_id").to_pylist() == VALID_IDS
    assert sorted(r for r in sync.store.quarantine().column("record_id").to_pylist() if r) == \
        QUARANTINED_IDS
    for page in report.pages:  # landed like live pages, labelled as the sample stand-in
        side = json.loads(sync.landing.get(page.raw_sha256).sidecar_path.read_text())
        assert side["source_url"].startswith(SAMPLE_BASE_URL)

    again = case_sync_from_settings(settings, OpenLegalDataSettings()).sync_cases()
    assert again.complete and again.new == again.updated == 0 and again.mode_switch is None
    assert len(sync.store.all_case_rows()) == len(VALID_IDS)


@pytest.mark.parametrize("body,problem", [
    (b'{"results": []}', "has no count"),  # a page without its count cannot fingerprint the source
    (b"<html>maintenance</html>", "not a paginated JSON list"),  # an HTML error page
])
def test_probe_refuses_malformed_pages(httpserver: HTTPServer, body: bytes, problem: str) -> None:
    from connectors.openlegaldata import OpenLegalDataApi, OpenLegalDataError

    httpserver.expect_request("/api/cases/").respond_with_data(body, content_type="application/json")
    client = PoliteHttpClient(user_agent="lexpipe-tests/0 (+https://example.invalid)", timeout_s=5.0,
                              max_retries=0, min_interval_s=0.0, sleep=lambda s: None)
    api = OpenLegalDataApi(client, httpserver.url_for("/api"))
    with pytest.raises(OpenLegalDataError, match=problem) as err:
        api.probe()
    assert "/api/cases/?ordering=-date" in str(err.value)  # the error names the request


def test_probe_fingerprint_of_a_real_page(httpserver: HTTPServer) -> None:
    from connectors.openlegaldata import OpenLegalDataApi

    body = {"count": 2, "next": None, "previous": None,
            "results": [{"id": 68, "date": "2018-04-09", "file_number": "VI ZR 194/17"}]}
    httpserver.expect_request("/api/cases/", query_string={"ordering": "-date", "page_size": "1"}).respond_with_json(body)
    client = PoliteHttpClient(user_agent="lexpipe-tests/0 (+https://example.invalid)", timeout_s=5.0,
                              max_retries=0, min_interval_s=0.0, sleep=lambda s: None)
    probe = OpenLegalDataApi(client, httpserver.url_for("/api")).probe()
    assert probe.fingerprint == "2:2018-04-09:68"
