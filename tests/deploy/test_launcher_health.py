"""lexpipe/deploy/launcher.py: the run worker health answer run monitoring acts on."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from dagster._core.launcher.base import WorkerStatus

from lexpipe.deploy.launcher import LocalProcessRunLauncher, worker_health


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_live_worker_is_running():
    p = _sleeper()
    try:
        assert worker_health(p.pid, time.time()).status == WorkerStatus.RUNNING
    finally:
        p.kill()
        p.wait()


def test_killed_worker_failed_also_as_zombie():
    p = _sleeper()
    reported = time.time()
    p.send_signal(signal.SIGKILL)
    time.sleep(0.3)  # not reaped yet: a zombie ("Z") still has a /proc entry
    health = worker_health(p.pid, reported)
    assert health.status == WorkerStatus.FAILED and "dead" in health.msg
    p.wait()
    assert worker_health(p.pid, reported).status == WorkerStatus.FAILED


def test_reused_pid_is_not_the_worker():
    p = _sleeper()
    try:  # the worker reported this pid an hour before this process started: another process
        health = worker_health(p.pid, time.time() - 3600)
        assert health.status == WorkerStatus.FAILED and "started after the run" in health.msg
    finally:
        p.kill()
        p.wait()


def test_no_pid_yet_is_left_to_the_start_timeout():
    assert worker_health(None, None).status == WorkerStatus.RUNNING
    assert LocalProcessRunLauncher().supports_check_run_worker_health


def test_worker_pid_read_from_the_run_events():
    """The pid comes from the worker's own "Started process for run (pid: N)." engine event (its
    message is on the Dagster event, not the entry's user message); the newest one wins."""
    import dagster as dg
    from dagster._core.events import EngineEventData
    from dagster._core.test_utils import create_run_for_test

    with dg.DagsterInstance.ephemeral() as instance:
        launcher = LocalProcessRunLauncher()
        launcher.register_instance(instance)
        run = create_run_for_test(instance, job_name="x")
        assert launcher.worker_pid(run) == (None, None)
        instance.report_engine_event("Executing steps using multiprocess executor: parent process (pid: 7).", run,
                                     EngineEventData.in_process(7))
        assert launcher.worker_pid(run) == (None, None)
        worker = _sleeper()
        try:
            for pid in (41, worker.pid):  # a first worker, then its replacement
                instance.report_engine_event(f"Started process for run (pid: {pid}).", run,
                                             EngineEventData.in_process(pid))
            pid, at = launcher.worker_pid(run)
            assert pid == worker.pid and abs(at - time.time()) < 60
            assert launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING
        finally:
            worker.kill()
            worker.wait()
        assert launcher.check_run_worker_health(run).status == WorkerStatus.FAILED
