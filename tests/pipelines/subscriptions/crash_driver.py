"""Run the real ``lexpipe`` CLI (``serve``, ``notify``) in this process, and SIGKILL it at one step.

``CRASH_AT="<module>:<Class.method or function>:<before|after>"`` wraps that callable so the process
kills itself (SIGKILL: no cleanup, no ``finally``, no SQLite rollback beyond what a transaction
guarantees) just before it runs or just after it returned. ``CRASH_SKIP=N`` lets the first N calls
through. Used by test_webhook_crash.py::test_a_real_process_killed_at_each_step_loses_no_event; the
kill is real, only its moment is chosen.

    python tests/pipelines/subscriptions/crash_driver.py notify --home H --no-search
"""

from __future__ import annotations

import importlib
import os
import signal
import sys


def _install(spec: str, skip: int) -> None:
    module_name, qualname, when = spec.split(":")
    owner = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    real = getattr(owner, name)
    calls = {"n": 0}

    def die() -> None:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        armed = calls["n"] > skip
        if armed and when == "before":
            die()
        out = real(*args, **kwargs)
        if armed and when == "after":
            die()
        return out

    setattr(owner, name, wrapper)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]  # tests/… must not shadow pipelines/
    if os.environ.get("CRASH_AT"):
        _install(os.environ["CRASH_AT"], int(os.environ.get("CRASH_SKIP", "0")))
    from lexpipe.cli import main

    sys.exit(main(sys.argv[1:]))
