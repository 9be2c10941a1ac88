"""``LocalProcessRunLauncher``: Dagster's default run launcher plus a worker health check.

Why: run monitoring (``run_monitoring`` in deploy/dagster.yaml) can only fail a run whose worker
died if the run launcher answers ``check_run_worker_health``. The stock ``DefaultRunLauncher``
(a run = a subprocess of the code location's gRPC server) does not, so a worker killed by the OOM
killer or ``kill -9`` would leave its run STARTED for ever (only ``max_runtime_seconds`` would end
it, hours later). This subclass launches runs exactly as the default one and answers the health
check from the worker's pid, which the worker reports itself in its first engine event
("Started process for run (pid: N)").

Where it is right: the daemon sees the code location's processes — the same host, or in compose
the daemon sharing the code location's PID namespace (``pid: service:code-location``,
deploy/compose.yaml). A pid that was reused by another process is recognised by its start time
(later than the run's event). On a cluster use the launcher of the cluster (K8sRunLauncher,
DockerRunLauncher, ...), which has its own health check.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import DagsterEventType, DagsterRun
from dagster._core.launcher import DefaultRunLauncher
from dagster._core.launcher.base import CheckRunHealthResult, WorkerStatus

STARTED_PROCESS = "Started process for run (pid: "
PID_REUSE_SLACK_S = 5.0  # a worker starts before it reports its pid; a later-born process is another one


def _boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise RuntimeError("/proc/stat has no btime")


def process_state(pid: int) -> tuple[str, float] | None:
    """(state letter, start time as epoch seconds) of a live process, None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    state, start_ticks = fields[0], int(fields[19])
    return state, _boot_time() + start_ticks / os.sysconf("SC_CLK_TCK")


def worker_health(pid: int | None, reported_at: float | None) -> CheckRunHealthResult:
    """The health of a run worker that reported ``pid`` at ``reported_at`` (None: not yet)."""
    if pid is None:
        # not started yet: run monitoring's start_timeout_seconds covers a worker that never starts
        return CheckRunHealthResult(WorkerStatus.RUNNING, "the run worker has not reported its pid yet")
    found = process_state(pid)
    if found is None:
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker pid {pid} is gone", run_worker_id=str(pid))
    state, started = found
    if state in ("Z", "X"):
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker pid {pid} is dead ({state})",
                                    run_worker_id=str(pid))
    if reported_at is not None and started > reported_at + PID_REUSE_SLACK_S:
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run worker pid {pid} is gone (the pid now belongs to "
                                                         "a process started after the run)", run_worker_id=str(pid))
    return CheckRunHealthResult(WorkerStatus.RUNNING, f"run worker pid {pid} is alive", run_worker_id=str(pid))


class LocalProcessRunLauncher(DefaultRunLauncher):
    """``DefaultRunLauncher`` whose run workers run monitoring can check (see the module docstring)."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def worker_pid(self, run: DagsterRun) -> tuple[int | None, float | None]:
        """The pid the run's newest worker reported and when (a retried run has its own run id)."""
        for entry in reversed(self._instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT)):
            message = entry.message or ""
            if message.startswith(STARTED_PROCESS):
                return int(message[len(STARTED_PROCESS):].split(")")[0]), entry.timestamp
        return None, None

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        return worker_health(*self.worker_pid(run))
