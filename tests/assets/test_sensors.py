"""The source_watch sensor, its freshness check, the weekly re-validation and the pools, evaluated
the way the Dagster daemon does (``build_sensor_context`` / ``build_schedule_context``) against the
offline sample source and a loopback HTTP ELI API (pytest-httpserver) serving API-shaped year
listings."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Mapping

import dagster as dg
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from assets import pl_statutes, sensors
from assets.definitions import defs
from assets.resources import CorpusStorage, EliApi
from assets.sensors import (EliListingWatcher, NewVersion, PollOutcome, SourceWatcher, build_source_sensor,
                            dump_cursor, freshness_result, load_cursor)
from core.layout import Layout
from schemas.catalogue import load_catalogue

OLD, NEW = "2024-12-19", "2025-11-13"
KPC, KP, KK = "2024-02-16", "2016-09-22", "2026-07-28"  # the other held texts: k.p.c., k.p. (≤ OLD), k.k.
WATCHER = sensors.WATCHERS[0]
# the production sensor also watches Open Legal Data, SAOS and gesetze (tested below): these tests are about ELI
ELI_ONLY = build_source_sensor([WATCHER], name="source_watch_eli")
SOURCE = pl_statutes.SOURCE_KEY
YEARS = ("1964", "1974", "1997")  # online, the watcher lists the years of the registry's ELI acts


def listing(items: list[dict]) -> dict:
    return {"totalCount": len(items), "offset": 0, "count": len(items), "items": items}


def kc_item(version: str) -> dict:
    """The Civil Code as GET /eli/acts/DU/1964 lists it (the fields the connector reads)."""
    return {"ELI": "DU/1964/93", "publisher": "DU", "year": 1964, "pos": 93,
            "title": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny", "displayAddress": "Dz.U. 1964 nr 16 poz. 93",
            "changeDate": f"{version}T10:22:31", "textPDF": True, "type": "Ustawa", "status": "obowiązujący"}


def sample_resources(home: Path, sample_dir: Path, up_to: str | None = None) -> dict[str, Any]:
    return {"storage": CorpusStorage(home=str(home)),
            "eli": EliApi(offline=True, sample_dir=str(sample_dir), sample_up_to=up_to or "")}


def http_resources(home: Path, server: HTTPServer, *, timeout_s: float = 3.0, retries: int = 0) -> dict[str, Any]:
    return {"storage": CorpusStorage(home=str(home)),
            "eli": EliApi(offline=False, base_url=server.url_for("/eli"), min_interval_s=0.0,
                          poll_timeout_s=timeout_s, poll_max_retries=retries)}


def serve_years(server: HTTPServer, kc_version: str | None) -> None:
    for y in YEARS:
        server.expect_request(f"/eli/acts/DU/{y}").respond_with_json(
            listing([kc_item(kc_version)] if y == "1964" and kc_version else []))


def tick(resources: Mapping[str, Any], cursor: str | None = None, *, sensor: dg.SensorDefinition | None = None,
         instance: dg.DagsterInstance | None = None) -> dg.SensorResult:
    context = dg.build_sensor_context(instance=instance or dg.DagsterInstance.ephemeral(), cursor=cursor,
                                      resources=dict(resources))
    result = (sensor or ELI_ONLY)(context)
    assert isinstance(result, dg.SensorResult)
    return result


def skip_text(result: dg.SensorResult) -> str:
    assert result.skip_reason is not None and not result.run_requests
    return result.skip_reason.skip_message or ""


def publish_stub(home: Path, version: str, act_id: str = "pl:kc") -> None:
    """A published version as CorpusStore sees it (folder + manifest) — enough for the watcher."""
    vdir = Layout(home).version_dir(act_id, version)
    vdir.mkdir(parents=True)
    (vdir / "manifest.json").write_text(json.dumps({"version": version}))


# --------------------------------------------------------------------------- offline sample source


def test_first_poll_discovers_the_listing_and_requests_every_unpublished_text(tmp_path: Path, sample_dir: Path):
    result = tick(sample_resources(tmp_path, sample_dir, up_to=OLD))
    runs = {r.partition_key: r for r in result.run_requests}
    # one pl_changesets partition per (act, text state) the listing shows: the newest visible of each
    assert sorted(runs) == [f"{KP}_kp", f"{KPC}_kpc", f"{OLD}_kc"]
    run = runs[f"{OLD}_kc"]
    assert (run.run_key, run.job_name) == (f"eli:{OLD}_kc", "pl_statutes_refresh")
    assert run.tags[pl_statutes.CHANGE_DATE_TAG] == f"{OLD}T00:00:00"
    assert (run.tags["lexpipe/act"], run.tags["lexpipe/source"], run.tags["lexpipe/changeset"]) == (
        "pl:kc", "eli", f"{OLD}_kc")
    assert run.asset_selection is None  # the whole refresh job
    [partitions] = result.dynamic_partitions_requests
    assert (partitions.partitions_def_name, sorted(partitions.partition_keys)) == ("pl_changesets", sorted(runs))
    state = load_cursor(result.cursor)[WATCHER.name]
    assert state["seen"] == {k: "requested" for k in runs} and state["years"] == [1964, 1974, 1997]
    [obs] = result.asset_events
    assert obs.asset_key == SOURCE and obs.metadata["result"].value == "changed"
    assert (obs.metadata["acts"].value, obs.metadata["new_acts"].value, obs.metadata["requested"].value) == (3, 3, 3)
    assert abs(obs.metadata["polled_at"].value - time.time()) < 60
    # the poll wrote what it listed to the home's catalogue (the registry reads it)
    cat = load_catalogue(Layout(tmp_path).catalogue("eli"))
    assert sorted(e.address for e in cat.acts) == ["DU/1964/296", "DU/1964/93", "DU/1974/141"]


def test_no_change_skips_and_never_requests_twice(tmp_path: Path, sample_dir: Path):
    res = sample_resources(tmp_path, sample_dir, up_to=OLD)
    first = tick(res)
    again = tick(res, first.cursor)
    assert "3 version(s) not published, 0 requested" in skip_text(again)
    assert not again.dynamic_partitions_requests
    assert load_cursor(again.cursor)[WATCHER.name]["seen"] == load_cursor(first.cursor)[WATCHER.name]["seen"]
    assert again.asset_events[0].metadata["result"].value == "unchanged"  # the poll itself is still recorded


def test_new_version_then_only_that_one(tmp_path: Path, sample_dir: Path):
    first = tick(sample_resources(tmp_path, sample_dir, up_to=OLD))
    later = tick(sample_resources(tmp_path, sample_dir), first.cursor)  # the source now serves 2025-11-13 and k.k.
    assert sorted(r.run_key for r in later.run_requests) == [f"eli:{NEW}_kc", "eli:2025-12-10_kp", f"eli:{KK}_kk"]
    assert set(load_cursor(later.cursor)[WATCHER.name]["seen"]) == {f"{OLD}_kc", f"{KPC}_kpc", f"{KP}_kp",
                                                                    f"{NEW}_kc", "2025-12-10_kp", f"{KK}_kk"}


def test_published_or_applied_versions_are_not_run_again(tmp_path: Path, sample_dir: Path):
    """`lexpipe run` published the texts before the sensor was turned on; a quarantined version's
    changeset is applied (settled): nothing to run for either."""
    for act, v in (("pl:kc", NEW), ("pl:kpc", KPC), ("pl:kp", "2025-12-10")):
        publish_stub(tmp_path, v, act)
    applied = Layout(tmp_path).changesets("pl")
    applied.mkdir(parents=True)
    (applied / f"{KK}_kk.json").write_text(json.dumps({"state": "applied"}))
    result = tick(sample_resources(tmp_path, sample_dir))
    assert "0 version(s) not published, 0 requested" in skip_text(result)


def test_a_listed_act_without_a_curated_row_is_requested_under_its_discovered_id(
        tmp_path: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch):
    from registry_rows import KC as KC_ROW  # tests/, on sys.path via conftest

    (tmp_path / "acts.toml").write_text(KC_ROW, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(tmp_path / "acts.toml"))
    result = tick(sample_resources(tmp_path / "home", sample_dir))
    runs = {r.partition_key: r for r in result.run_requests}
    assert f"{KK}_du1997_553" in runs and runs[f"{KK}_du1997_553"].tags["lexpipe/act"] == "pl:du1997_553"
    assert f"{NEW}_kc" in runs and runs[f"{NEW}_kc"].tags["lexpipe/act"] == "pl:kc"  # the curated row keeps its id
    assert not any(k.endswith("_kk") for k in runs)  # no row names pl:kk in this registry


def test_unreadable_cursor_starts_afresh_and_run_key_still_dedupes(tmp_path: Path, sample_dir: Path):
    result = tick(sample_resources(tmp_path, sample_dir, up_to=OLD), cursor="{not json")
    assert f"eli:{OLD}_kc" in [r.run_key for r in result.run_requests]  # Dagster drops a repeated run key
    assert load_cursor(dump_cursor({"x": {"a": 1}})) == {"x": {"a": 1}}
    assert load_cursor(json.dumps({"format": 99, "sources": {}})) == {}


def test_an_empty_source_lists_nothing_and_requests_nothing(tmp_path: Path, sample_dir: Path):
    """A sample folder without PDFs up to that date: the listing is empty, nothing is requested."""
    result = tick(sample_resources(tmp_path, sample_dir, up_to="2000-01-01"))
    assert "0 acts listed" in skip_text(result) and not result.dynamic_partitions_requests


# --------------------------------------------------------------------------- loopback HTTP ELI API


def test_http_listing_poll_then_unchanged_then_new_change_date(httpserver: HTTPServer, tmp_path: Path):
    serve_years(httpserver, OLD)
    res = http_resources(tmp_path, httpserver)
    first = tick(res)
    assert [r.run_key for r in first.run_requests] == [f"eli:{OLD}_kc"]
    assert first.run_requests[0].tags[pl_statutes.CHANGE_DATE_TAG] == f"{OLD}T10:22:31"
    assert sorted(r[0].path for r in httpserver.log) == [f"/eli/acts/DU/{y}" for y in YEARS]  # one request a year

    second = tick(res, first.cursor)
    assert "1 version(s) not published, 0 requested" in skip_text(second)  # requested, not yet run
    assert second.asset_events[0].metadata["result"].value == "unchanged"

    httpserver.clear()
    serve_years(httpserver, NEW)
    third = tick(res, second.cursor)
    assert [r.run_key for r in third.run_requests] == [f"eli:{NEW}_kc"]
    entry = {e.address: e for e in load_catalogue(Layout(tmp_path).catalogue("eli")).acts}["DU/1964/93"]
    assert (entry.last_changed, entry.first_seen) == (NEW, OLD)


def test_http_lost_cursor_requests_again_under_the_same_run_key(httpserver: HTTPServer, tmp_path: Path):
    serve_years(httpserver, OLD)
    res = http_resources(tmp_path, httpserver)
    first = tick(res)
    again = tick(res, None)
    assert [r.run_key for r in again.run_requests] == [r.run_key for r in first.run_requests]  # Dagster drops it


@pytest.mark.parametrize("status, body, expect", [
    (503, "busy", "HttpFetchError"),
    (404, "nope", "HTTP 404"),
    (200, "<html>maintenance</html>", "not JSON"),
])
def test_http_failing_source_skips_with_reason_and_keeps_cursor(httpserver: HTTPServer, tmp_path: Path,
                                                                 status: int, body: str, expect: str):
    httpserver.expect_request("/eli/acts/DU/1964").respond_with_data(body, status=status)
    cursor = dump_cursor({WATCHER.name: {"years": [1964], "seen": {f"{OLD}_kc": "requested"}}})
    result = tick(http_resources(tmp_path, httpserver), cursor)
    text = skip_text(result)
    assert "poll failed" in text and expect in text and "cursor kept" in text
    assert httpserver.url_for("/eli/acts/DU/1964") in text  # the failing URL is named
    assert result.cursor == cursor and not result.asset_events and not result.dynamic_partitions_requests
    assert not Layout(tmp_path).catalogue("eli").exists()  # nothing half-listed was written


def test_http_slow_source_cannot_hold_the_tick(httpserver: HTTPServer, tmp_path: Path):
    """The server holds its answer until the test releases it (at most 30 s) and the client would
    wait 20 s: only the tick's 1.5 s budget can end the tick early. The bound leaves room for a
    loaded CI machine without letting a tick that waited for the server pass."""
    released = threading.Event()

    def slow(request: Request) -> Response:
        released.wait(timeout=30.0)
        return Response(json.dumps(listing([kc_item(NEW)])), status=200, headers={"Content-Type": "application/json"})

    httpserver.expect_request("/eli/acts/DU/1964").respond_with_handler(slow)
    sensor = build_source_sensor([WATCHER], name="source_watch_test", budget_s=1.5)
    context = dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral(), cursor=None,
                                      resources=http_resources(tmp_path, httpserver, timeout_s=20.0))
    try:
        t0 = time.monotonic()
        result = sensor(context)
        elapsed = time.monotonic() - t0
    finally:
        released.set()  # let the abandoned poll finish before the server stops
    assert isinstance(result, dg.SensorResult)
    assert elapsed < 10.0, f"the tick waited {elapsed:.1f} s for a server that never answered"
    assert "no answer within" in skip_text(result) and "cursor kept" in skip_text(result)
    assert load_cursor(result.cursor) == {}
    time.sleep(0.5)


def test_budget_must_stay_under_dagsters_limit():
    with pytest.raises(ValueError, match="60 s"):
        build_source_sensor(sensors.WATCHERS, budget_s=58)


# --------------------------------------------------------------------------- the extension point


class FolderWatcher(SourceWatcher):
    """A second kind of source: a folder whose newest ``<YYYY-MM-DD>.txt`` file is the version.
    ``broken`` makes every poll fail."""

    required_resource_keys = frozenset({"storage"})

    def __init__(self, folder: Path, *, broken: bool = False) -> None:
        self.folder, self.broken = folder, broken
        self.name = f"folder:{folder.name}"
        self.source_key = dg.AssetKey(["sources", folder.name])
        self.description = "test source"
        self.job = pl_statutes.refresh_job
        self.poll_window = dt.timedelta(hours=1)

    def poll(self, resources: Any, state: Mapping[str, Any]) -> PollOutcome:
        if self.broken:
            raise ConnectionError(f"{self.folder} unreachable")
        newest = max(p.stem for p in self.folder.glob("*.txt"))
        if newest == state.get("version"):
            return PollOutcome(state=dict(state), note=f"{self.name}: unchanged")
        return PollOutcome(state={"version": newest}, note=f"{self.name}: {newest}",
                           new_versions=(NewVersion("de:test", newest, None, "de_test_versions", self.job.name),),
                           observation={"version": newest})


def test_watchers_are_polled_independently(tmp_path: Path, sample_dir: Path):
    good, bad = tmp_path / "de_test", tmp_path / "gone"
    good.mkdir()
    (good / "2025-01-01.txt").write_text("x")
    watchers = [sensors.WATCHERS[0], FolderWatcher(good), FolderWatcher(bad, broken=True)]
    sensor = build_source_sensor(watchers, name="three_sources")
    assert sensor.required_resource_keys == {"storage", "eli"}
    cursor = dump_cursor({"folder:gone": {"version": "2024-01-01"}})
    result = tick(sample_resources(tmp_path / "home", sample_dir, up_to=OLD), cursor, sensor=sensor)
    assert sorted(r.run_key for r in result.run_requests) == [
        "de:test:2025-01-01", f"eli:{KP}_kp", f"eli:{KPC}_kpc", f"eli:{OLD}_kc"]
    assert {(p.partitions_def_name, tuple(sorted(p.partition_keys))) for p in result.dynamic_partitions_requests} == \
        {("pl_changesets", (f"{KP}_kp", f"{KPC}_kpc", f"{OLD}_kc")), ("de_test_versions", ("2025-01-01",))}
    state = load_cursor(result.cursor)
    assert state["folder:gone"] == {"version": "2024-01-01"}  # the failing one keeps its entry
    assert state["folder:de_test"] == {"version": "2025-01-01"}
    assert {e.asset_key for e in result.asset_events} == {SOURCE, dg.AssetKey(["sources", "de_test"])}


# --------------------------------------------------------------------------- freshness


def test_freshness_warns_when_not_polled_within_the_window(tmp_path: Path, sample_dir: Path):
    instance = dg.DagsterInstance.ephemeral()
    never = freshness_result(instance, WATCHER)
    assert not never.passed and never.severity == dg.AssetCheckSeverity.WARN and "never polled" in never.description
    result = tick(sample_resources(tmp_path, sample_dir, up_to=OLD), instance=instance)
    for event in result.asset_events:  # what the daemon does with a tick's asset events
        instance.report_runless_asset_event(event)
    fresh = freshness_result(instance, WATCHER)
    assert fresh.passed and fresh.metadata["last_change_date"].value == f"{OLD}T00:00:00"  # the newest listed
    window_h = WATCHER.poll_window.total_seconds() / 3600
    late = freshness_result(instance, WATCHER, now=time.time() + (window_h + 1) * 3600)
    assert not late.passed and late.severity == dg.AssetCheckSeverity.WARN and "overdue" in late.description


def test_freshness_job_records_a_warn_evaluation(tmp_path: Path, sample_dir: Path):
    """The hourly job runs the check; its evaluation (WARN, failed) is what the UI shows."""
    instance = dg.DagsterInstance.ephemeral()
    run = defs.resolve_job_def("source_freshness").execute_in_process(instance=instance, raise_on_error=False)
    assert run.success  # a WARN check failing does not fail the run
    record = instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(SOURCE, "polled_within_window"))
    evaluation = record.event.dagster_event.event_specific_data
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    schedule = defs.resolve_schedule_def("source_freshness_schedule")
    assert schedule.job_name == "source_freshness" and schedule.default_status == dg.DefaultScheduleStatus.RUNNING


# --------------------------------------------------------------------------- schedules, job, pools


def test_weekly_revalidation_runs_only_the_checks_of_every_published_version(tmp_path: Path):
    publish_stub(tmp_path, OLD)
    publish_stub(tmp_path, NEW)
    publish_stub(tmp_path, KK, "pl:kk")
    schedule = defs.resolve_schedule_def("weekly_polish_revalidation_schedule")
    assert (schedule.cron_schedule, schedule.job_name) == ("0 4 * * 0", "pl_statutes_revalidate")
    when = dt.datetime(2026, 1, 4, 4, 0, tzinfo=dt.timezone.utc)
    storage = {"storage": CorpusStorage(home=str(tmp_path))}
    keys = [f"{OLD}_kc", f"{NEW}_kc", f"{KK}_kk"]
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when, resources=storage) as ctx:
            assert "are not pl_changesets partitions" in schedule(ctx).skip_message
        instance.add_dynamic_partitions("pl_changesets", keys)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when, resources=storage) as ctx:
            requests = schedule(ctx)
    assert sorted((r.partition_key, r.run_key) for r in requests) == sorted(
        (k, f"revalidate:pl:{k}@2026-W01") for k in keys)
    checks = {dg.AssetCheckKey(pl_statutes.articles.key, "articles_valid"),
              dg.AssetCheckKey(pl_statutes.chunks.key, "chunks_valid")}
    assert all(r.asset_selection == [] and set(r.asset_check_keys) == checks for r in requests)


def test_refresh_job_covers_the_six_steps_of_a_changeset():
    job = defs.resolve_job_def("pl_statutes_refresh")
    assert job.partitions_def.name == "pl_changesets" and job.tags["lexpipe/source"] == "eli"
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {
        f"pl/statutes/{n}" for n in ("raw_pdf", "articles", "chunks", "diff", "published", "search_index")}
    sensor = defs.resolve_sensor_def("source_watch")
    assert {j.name for j in sensor.jobs} == {"pl_statutes_refresh", "cases_refresh", "de_statutes_refresh",
                                             "pl_cases_refresh"}
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED
    assert sensor.minimum_interval_seconds == 3600
    assert isinstance(WATCHER, EliListingWatcher)  # one watcher over the listing, not one per act
    assert sum(isinstance(w, EliListingWatcher) for w in sensors.WATCHERS) == 1
    graph = defs.resolve_asset_graph()
    assert SOURCE in graph.get(pl_statutes.raw_pdf.key).parent_keys  # lineage: source → raw PDF


def test_pools_in_dagster_yaml_and_on_the_assets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    repo = Path(__file__).resolve().parents[2]
    shutil.copy(repo / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    with dg.DagsterInstance.get() as instance:
        pools = instance.get_concurrency_config().pool_config
    assert pools.default_pool_limit == 1 and pools.pool_granularity.value == "run"
    graph = defs.resolve_asset_graph()
    assert graph.get(pl_statutes.search_index.key).pools == {"index"}
    assert graph.get(dg.AssetKey(["benchmarks", "pl", "kc", "answers"])).pools == {"llm"}


# --------------------------------------------------------------------------- Open Legal Data watcher


def _oldp_tick(home: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch, cursor: str | None = None,
               sample: Path | None = None) -> dg.SensorResult:
    from core.settings import get_settings

    monkeypatch.setenv("LEXPIPE_OFFLINE", "true")
    monkeypatch.setenv("LEXPIPE_SAMPLE_DIR", str(sample or sample_dir))
    get_settings.cache_clear() if hasattr(get_settings, "cache_clear") else None
    watcher = next(w for w in sensors.WATCHERS if isinstance(w, sensors.OpenLegalDataWatcher))
    sensor = build_source_sensor([watcher], name="source_watch_oldp")
    return tick({"storage": CorpusStorage(home=str(home))}, cursor, sensor=sensor)


def test_case_law_watcher_requests_a_sync_once_per_change(tmp_path: Path, sample_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    first = _oldp_tick(tmp_path, sample_dir, monkeypatch)
    [run] = first.run_requests
    assert run.job_name == "cases_refresh" and run.partition_key is None and not first.dynamic_partitions_requests
    assert run.run_key == "de:cases:16:2018-11-21:1888"  # 16 records in the sample, newest BGH/LG decision
    [obs] = first.asset_events
    assert obs.asset_key == dg.AssetKey(["sources", "de_openlegaldata"]) and obs.metadata["cases"].value == 16
    again = _oldp_tick(tmp_path, sample_dir, monkeypatch, first.cursor)
    assert "no change" in skip_text(again)
    # a decision disappears from the source (a copy of the samples without one file): a new sync
    smaller = tmp_path / "samples"
    shutil.copytree(sample_dir / "de" / "openlegaldata", smaller / "de" / "openlegaldata")
    (smaller / "de" / "openlegaldata" / "bgh-2018-04-09-vi-zr-7816.json").unlink()
    changed = _oldp_tick(tmp_path, sample_dir, monkeypatch, again.cursor, sample=smaller)
    [run] = changed.run_requests
    assert run.run_key.startswith("de:cases:15:")


def test_case_law_watcher_failure_keeps_the_cursor(tmp_path: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch):
    first = _oldp_tick(tmp_path, sample_dir, monkeypatch)
    broken = _oldp_tick(tmp_path, sample_dir, monkeypatch, first.cursor, sample=tmp_path / "nowhere")
    assert "poll failed" in skip_text(broken)
    assert load_cursor(broken.cursor) == load_cursor(first.cursor)


def _saos_tick(home: Path, sample_dir: Path, monkeypatch: pytest.MonkeyPatch, cursor: str | None = None) -> dg.SensorResult:
    monkeypatch.setenv("LEXPIPE_OFFLINE", "true")
    monkeypatch.setenv("LEXPIPE_SAMPLE_DIR", str(sample_dir))
    watcher = next(w for w in sensors.WATCHERS if isinstance(w, sensors.SaosWatcher))
    return tick({"storage": CorpusStorage(home=str(home))}, cursor,
                sensor=build_source_sensor([watcher], name="source_watch_saos"))


def test_saos_watcher_requests_the_first_pass_then_only_modified_records(tmp_path: Path, sample_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    from dataclasses import replace

    from connectors.saos import (SAMPLE_MODIFIED_AT, CursorStore, SaosPaths, format_since,
                                 judgment_sync_from_settings)
    from core.settings import Settings

    first = _saos_tick(tmp_path, sample_dir, monkeypatch)
    [run] = first.run_requests
    assert (run.job_name, run.run_key) == ("pl_cases_refresh", "pl:cases:first-pass")
    [obs] = first.asset_events
    assert obs.asset_key == dg.AssetKey(["sources", "pl_saos"])
    assert "already requested" in skip_text(_saos_tick(tmp_path, sample_dir, monkeypatch, first.cursor))
    # the run happens: a complete pass; the dump has nothing modified since it began
    judgment_sync_from_settings(Settings(home=tmp_path, sample_dir=sample_dir, offline=True)).sync()
    quiet = _saos_tick(tmp_path, sample_dir, monkeypatch, first.cursor)
    assert "nothing modified since" in skip_text(quiet)
    # records modified after the next pass's sinceModificationDate (the sample's records carry
    # SAMPLE_MODIFIED_AT): one run, keyed by what was seen
    cursors = CursorStore(SaosPaths(tmp_path).cursor_path)
    cursors.save(replace(cursors.load(), since=format_since(SAMPLE_MODIFIED_AT - dt.timedelta(days=1))))
    changed = _saos_tick(tmp_path, sample_dir, monkeypatch, quiet.cursor)
    [run] = changed.run_requests
    assert run.run_key.startswith("pl:cases:since=") and "ids=" in run.run_key
    assert "already requested" in skip_text(_saos_tick(tmp_path, sample_dir, monkeypatch, changed.cursor))
