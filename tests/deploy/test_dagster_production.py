"""The production profile with real processes: a throwaway PostgreSQL 15 cluster, the code location
as its own gRPC server (``dagster code-server start``), ``dagster-daemon run`` and
``dagster-webserver`` on deploy/dagster.yaml, and the ``source_watch`` sensor switched on through
the webserver's GraphQL API.

Offline sample data, the hashing encoder and a sample folder that holds only the Civil Code (kc) and
Labour Code (kp) PDFs, so the sensor's other watchers (SAOS, Open Legal Data, German statutes, the
other Polish acts) find nothing and request nothing. The steps, one test (each depends on the last):

1. ``lexpipe deploy init`` (tables, pool limits) and ``lexpipe deploy check`` pass on the instance
   the processes use;
2. sensor on (GraphQL ``startSensor``) with the source showing versions up to 2024-12-19: one tick
   of its ELI listing watcher requests the ``pl_changesets`` partitions ``2024-12-19_kc`` and
   ``2016-09-22_kp`` together (two runs of ``pl_statutes_refresh``); each run is queued, launched
   (by the daemon) and succeeds; both versions are published and their changeset records applied;
3. the two runs both contain an op of the ``index`` pool (run granularity, limit 1): their run
   windows do not overlap although ``max_concurrent_runs`` is 2 — the pool held the second back;
4. run history, the dynamic partitions and the sensor's cursor are rows in PostgreSQL (psycopg2);
5. the source shows 2025-11-13 (the code location restarted with the new sample horizon): the kc
   refresh starts; mid-run the daemon and the code location with the run worker and its step
   processes are killed (SIGKILL, as a crash of their host would). The run stays STARTED.
   Nothing of 2025-11-13 is published, kc keeps serving 2024-12-19. Both restarted, run
   monitoring finds the dead worker (lexpipe/deploy/launcher.py) and marks the run FAILURE; run
   retries (crash-only) launch a new run, which succeeds and publishes 2025-11-13. No run is left
   STARTED, STARTING or QUEUED.

The timings of the steps are printed (``-s``); measured: docs/deployment.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest

from pg_cluster import PgCluster, free_port, require_pg_bin, start_cluster

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
OLD, NEW = "2024-12-19", "2025-11-13"
KP_OLD = "2016-09-22"
SAMPLE_PDFS = ("D19640093Lj_2024-12-19.pdf", "D19640093Lj_2025-11-13.pdf", "D19740141Lj_2016-09-22.pdf",
               "D19740141Lj_2025-12-10.pdf")
TIMINGS: dict[str, float] = {}


def wait_for(what: str, cond: Callable[[], object], timeout: float, every: float = 0.5, procs=()):
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        value = cond()
        if value:
            return value
        for p in procs:
            if p.poll() is not None:
                pytest.fail(f"waiting for {what}: {p.args[0]} exited with {p.returncode}; log: {_tail(p)}")
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}; logs: " + " | ".join(_tail(p) for p in procs))


def _tail(p: subprocess.Popen) -> str:
    log = getattr(p, "log_path", None)
    return log.read_text()[-1500:] if log and log.exists() else ""


class Stack:
    """The processes of one deployment; each logs to a file under ``root``."""

    def __init__(self, root: Path, pg: PgCluster, sample_dir: Path) -> None:
        self.root, self.pg = root, pg
        self.dagster_home = root / "dagster_home"
        self.dagster_home.mkdir()
        (self.dagster_home / "dagster.yaml").write_text((REPO / "deploy" / "dagster.yaml").read_text())
        self.grpc_port, self.web_port = free_port(), free_port()
        self.workspace = self.dagster_home / "workspace.yaml"
        self.workspace.write_text(f"load_from:\n  - grpc_server:\n      host: 127.0.0.1\n      port: {self.grpc_port}\n"
                                  "      location_name: lexpipe\n")
        self.home = root / "home"
        self.env = {**os.environ, **pg.env(), "DAGSTER_HOME": str(self.dagster_home), "LEXPIPE_HOME": str(self.home),
                    "LEXPIPE_OFFLINE": "true", "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_ENCODER": "hashing",
                    "LEXPIPE_PARSE_WORKERS": "2", "LEXPIPE_SOURCE_POLL_INTERVAL_S": "5",
                    "LEXPIPE_SAMPLE_UP_TO": OLD, "PYTHONUNBUFFERED": "1"}
        self.env.pop("LEXPIPE_ELASTICSEARCH_URL", None)
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *cmd: str) -> subprocess.Popen:
        log = self.root / f"{name}.log"
        p = subprocess.Popen(list(cmd), cwd=REPO, env=self.env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                             start_new_session=True)
        p.log_path = log  # type: ignore[attr-defined]
        self.procs[name] = p
        return p

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        os.killpg(p.pid, sig)  # its own session: the process and its children (code server's runs)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)

    def start_code_server(self) -> None:
        p = self.start("code", str(BIN / "dagster"), "code-server", "start", "-m", "assets.definitions",
                       "-h", "127.0.0.1", "-p", str(self.grpc_port))
        health = [str(BIN / "dagster"), "api", "grpc-health-check", "-p", str(self.grpc_port)]
        wait_for("the code location's gRPC server", lambda: subprocess.run(
            health, env=self.env, capture_output=True).returncode == 0, 180, every=1, procs=[p])

    def start_daemon(self) -> subprocess.Popen:
        return self.start("daemon", str(BIN / "dagster-daemon"), "run", "-w", str(self.workspace))

    def graphql(self, query: str, variables: dict) -> dict:
        r = httpx.post(f"http://127.0.0.1:{self.web_port}/graphql", json={"query": query, "variables": variables},
                       timeout=60)
        r.raise_for_status()
        body = r.json()
        assert "errors" not in body, body
        return body["data"]

    def close(self) -> None:
        for name in list(self.procs):
            self.stop(name)


START_SENSOR = """
mutation($sel: SensorSelector!) {
  startSensor(sensorSelector: $sel) {
    __typename
    ... on Sensor { name sensorState { status } }
    ... on PythonError { message }
  }
}"""


@pytest.fixture
def restricted_samples(tmp_path: Path, sample_dir: Path) -> Path:
    """The sample folder with only the kc and kp PDFs (symlinks): the other watchers find nothing."""
    root = tmp_path / "samples"
    (root / "pl" / "isap").mkdir(parents=True)
    for name in SAMPLE_PDFS:
        (root / "pl" / "isap" / name).symlink_to(sample_dir / "pl" / "isap" / name)
    return root


@pytest.fixture
def pg() -> Iterator[PgCluster]:
    cluster = start_cluster(require_pg_bin())
    yield cluster
    cluster.stop()


@pytest.fixture
def stack(tmp_path: Path, pg: PgCluster, restricted_samples: Path) -> Iterator[Stack]:
    s = Stack(tmp_path, pg, restricted_samples)
    yield s
    s.close()


def _questions(home: Path) -> None:
    """A small benchmark question table in the home, as a deployment that ran `lexpipe run` has (the
    refresh job no longer carries the per-act benchmark staleness: the nightly job does)."""
    from assets import benchmarks
    from core.layout import Layout
    from pipelines.benchmarks.benchmark_table import questions_to_table
    from pipelines.benchmarks.legal_basis import parse_legal_basis
    from pipelines.benchmarks.records import BenchmarkQuestion, Option
    from pipelines.statutes.store import write_table

    rows = [BenchmarkQuestion(benchmark="pl_exams", source="synthetic/production.jsonl", source_format="jsonl",
                              question_id=str(n), language="pl", question=f"Pytanie {n} o {basis}?", legal_basis=basis,
                              gold_refs=parse_legal_basis(basis), options=[Option("A", "tak"), Option("B", "nie")],
                              gold_option="A", year=2030, exam="notarialny")
            for n, basis in enumerate(("art. 709^2 k.c.", "art. 415 k.c.", "art. 22 k.p."), 1)]
    write_table(benchmarks.questions_path(Layout(home)), questions_to_table(rows), "benchmark_questions")


def test_sensor_runs_on_postgres_with_daemon_webserver_and_monitoring(stack: Stack, pg: PgCluster, monkeypatch):
    import dagster as dg

    from core.layout import Layout
    from pipelines.statutes.store import CorpusStore

    t0 = time.monotonic()
    TIMINGS["postgres_start_s"] = pg.started_in_s  # type: ignore[attr-defined]
    _questions(stack.home)
    store = CorpusStore(Layout(stack.home))

    # 1. the instance prepared (tables, pool limits) and checked as an operator would
    init = subprocess.run([str(BIN / "lexpipe"), "deploy", "init", "--config", str(stack.dagster_home / "dagster.yaml")],
                          cwd=REPO, env=stack.env, capture_output=True, text=True, timeout=180)
    assert init.returncode == 0 and "index=1, llm=1" in init.stdout, init.stderr
    check = subprocess.run([str(BIN / "lexpipe"), "deploy", "check", "--config", str(stack.dagster_home / "dagster.yaml")],
                           cwd=REPO, env=stack.env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr

    t = time.monotonic()
    stack.start_code_server()
    daemon = stack.start_daemon()
    web = stack.start("webserver", str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(stack.web_port),
                      "-w", str(stack.workspace))
    wait_for("the webserver", lambda: _ok(f"http://127.0.0.1:{stack.web_port}/server_info"), 180, every=1,
             procs=[web, daemon])
    TIMINGS["processes_up_s"] = time.monotonic() - t

    for k, v in pg.env().items():
        monkeypatch.setenv(k, v)
    instance = dg.DagsterInstance.from_config(str(stack.dagster_home))
    try:
        # 2. the sensor on, through GraphQL
        sel = {"repositoryLocationName": "lexpipe", "repositoryName": "__repository__", "sensorName": "source_watch"}
        started = stack.graphql(START_SENSOR, {"sel": sel})["startSensor"]
        assert started["__typename"] == "Sensor" and started["sensorState"]["status"] == "RUNNING", started
        t = time.monotonic()
        runs = wait_for("the sensor's two runs", lambda: _runs(instance, 2), 120, procs=[daemon])
        TIMINGS["sensor_to_runs_s"] = time.monotonic() - t
        assert sorted((r.tags["lexpipe/act"], r.tags["dagster/partition"], r.job_name) for r in runs) == [
            ("pl:kc", f"{OLD}_kc", "pl_statutes_refresh"), ("pl:kp", f"{KP_OLD}_kp", "pl_statutes_refresh")]
        assert len(runs) == 2
        t = time.monotonic()
        wait_for("both runs to finish", lambda: all(instance.get_run_by_id(r.run_id).is_finished for r in runs),
                 1200, every=2, procs=[daemon])
        TIMINGS["two_refreshes_s"] = time.monotonic() - t
        records = {r.dagster_run.tags["lexpipe/act"]: r for r in instance.get_run_records(
            dg.RunsFilter(run_ids=[r.run_id for r in runs]))}
        for act, rec in records.items():
            assert rec.dagster_run.status == dg.DagsterRunStatus.SUCCESS, (act, _failure(instance, rec.dagster_run))
            kinds = [e.dagster_event_type for e in instance.all_logs(rec.dagster_run.run_id)
                     if e.is_dagster_event]
            # queued by the run coordinator, then launched by the daemon's run queue, then ran
            assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(dg.DagsterEventType.RUN_STARTING) \
                < kinds.index(dg.DagsterEventType.RUN_START) < kinds.index(dg.DagsterEventType.RUN_SUCCESS)
        assert store.current_version("pl:kc") == OLD and store.current_version("pl:kp") == KP_OLD
        for key in (f"{OLD}_kc", f"{KP_OLD}_kp"):
            record = json.loads((Layout(stack.home).changesets("pl") / f"{key}.json").read_text())
            assert record["state"] == "applied" and record["counts"]["published"] == 1, record

        # 3. the index pool (limit 1, run granularity) serialised the two runs
        first, second = sorted(records.values(), key=lambda r: r.start_time)
        assert first.end_time <= second.start_time, "two runs with an `index` op overlapped"
        TIMINGS["pool_wait_s"] = second.start_time - first.create_timestamp.timestamp()

        # 4. history, partitions and the sensor cursor are in PostgreSQL
        rows = dict(pg.psql("SELECT run_id, status FROM runs"))
        assert {rows[r.run_id] for r in runs} == {"SUCCESS"}
        # the sensor's state and ticks, read from PostgreSQL and decoded with Dagster's serdes
        from dagster._serdes import deserialize_value

        states = [deserialize_value(b) for (b,) in pg.psql(
            "SELECT instigator_body FROM instigators WHERE instigator_type = 'SENSOR'")]
        (state,) = [st for st in states if st.name == "source_watch"]
        assert state.status.value == "RUNNING"
        cursor = json.loads(state.instigator_data.cursor)
        eli = cursor["sources"]["eli:listing"]  # one watcher over the ELI listing, not one per act
        assert eli["seen"] == {f"{OLD}_kc": "requested", f"{KP_OLD}_kp": "requested"}
        ticks = [deserialize_value(b) for (b,) in pg.psql("SELECT tick_body FROM job_ticks ORDER BY id")]
        sensor_ticks = [tk for tk in ticks if tk.instigator_name == "source_watch"]
        assert sensor_ticks and sensor_ticks[0].status.value == "SUCCESS"
        assert sorted(sensor_ticks[0].run_ids) == sorted(r.run_id for r in runs)
        parts = {p for (p,) in pg.psql("SELECT partition FROM dynamic_partitions")}
        assert {f"{OLD}_kc", f"{KP_OLD}_kp"} <= parts

        # 5. a new version; the daemon and the run worker die mid-run
        stack.env["LEXPIPE_SAMPLE_UP_TO"] = NEW
        stack.stop("code")
        stack.start_code_server()
        t = time.monotonic()
        (crashed,) = wait_for("the kc 2025-11-13 run to start", lambda: _started(instance, f"{NEW}_kc"), 180,
                              procs=[daemon])
        worker = wait_for("the run worker's pid", lambda: _worker_pid(instance, crashed.run_id), 120)
        wait_for("the run to be mid-way (a step has finished)", lambda: _steps_done(instance, crashed.run_id) >= 1,
                 300, every=0.5)
        # the daemon, then the code location with the run worker and its step processes: what a crash
        # of their host or containers does. (A worker killed alone is failed by its parent, the code
        # server, within a second; with the code server gone only run monitoring can notice.)
        code = stack.procs["code"]
        doomed = [code.pid, *_descendants(code.pid)]
        assert worker in doomed
        stack.stop("daemon", signal.SIGKILL)
        for pid in doomed:
            os.kill(pid, signal.SIGKILL)
        code.wait(timeout=10)
        stack.procs.pop("code")
        killed_at = time.monotonic()
        TIMINGS["killed_after_steps"] = _steps_done(instance, crashed.run_id)
        assert NEW not in store.published_versions("pl:kc") and store.current_version("pl:kc") == OLD
        time.sleep(2)
        assert instance.get_run_by_id(crashed.run_id).status == dg.DagsterRunStatus.STARTED  # nobody noticed
        stack.start_code_server()
        daemon = stack.start_daemon()
        failed = wait_for("run monitoring to fail the dead run",
                          lambda: instance.get_run_by_id(crashed.run_id).status == dg.DagsterRunStatus.FAILURE,
                          180, procs=[daemon])
        TIMINGS["crash_detected_s"] = time.monotonic() - killed_at
        assert failed
        messages = [e.message for e in instance.all_logs(crashed.run_id)]
        assert any(f"run worker pid {worker} is gone" in (m or "") or f"pid {worker} is dead" in (m or "")
                   for m in messages), messages[-5:]
        assert NEW not in store.published_versions("pl:kc") and store.current_version("pl:kc") == OLD
        retry = wait_for("the retry run", lambda: _retry_of(instance, crashed.run_id), 120, procs=[daemon])
        wait_for("the retry to finish", lambda: instance.get_run_by_id(retry.run_id).is_finished, 900, every=2,
                 procs=[daemon])
        TIMINGS["kill_to_republished_s"] = time.monotonic() - killed_at
        retry = instance.get_run_by_id(retry.run_id)
        assert retry.status == dg.DagsterRunStatus.SUCCESS, _failure(instance, retry)
        assert store.current_version("pl:kc") == NEW and store.published_versions("pl:kc") == [OLD, NEW]
        assert instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])) == []
        stuck = pg.psql("SELECT count(*) FROM runs WHERE status IN ('STARTED', 'STARTING', 'QUEUED')")
        assert stuck == [(0,)]
        TIMINGS["since_new_version_s"] = time.monotonic() - t
    finally:
        instance.dispose()
        TIMINGS["total_s"] = time.monotonic() - t0
        print("\nproduction profile timings:", json.dumps({k: round(v, 1) for k, v in TIMINGS.items()}))


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _runs(instance, n: int):
    """The source_watch sensor's runs once there are ``n`` (the hourly freshness schedule may add its own)."""
    import dagster as dg

    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/sensor_name": "source_watch"}))
    return runs if len(runs) >= n else None


def _started(instance, version: str):
    import dagster as dg

    runs = [r for r in instance.get_runs(dg.RunsFilter(tags={"dagster/partition": version}))
            if r.status == dg.DagsterRunStatus.STARTED]
    return runs or None


def _worker_pid(instance, run_id: str) -> int | None:
    """The pid the run worker reported (the launcher's own reading of it, from PostgreSQL)."""
    from lexpipe.deploy.launcher import LocalProcessRunLauncher

    launcher = instance.run_launcher
    assert isinstance(launcher, LocalProcessRunLauncher)
    return launcher.worker_pid(instance.get_run_by_id(run_id))[0]


def _steps_done(instance, run_id: str) -> int:
    import dagster as dg

    return len(instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS))


def _retry_of(instance, run_id: str):
    import dagster as dg

    runs = instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": run_id}))
    return runs[0] if runs else None


def _failure(instance, run) -> str:
    import dagster as dg

    errs = [e.message for e in instance.all_logs(run.run_id) if e.dagster_event_type in (
        dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.ENGINE_EVENT)]
    return " | ".join(m or "" for m in errs[-4:])
