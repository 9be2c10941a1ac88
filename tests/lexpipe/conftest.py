"""Fixtures of the entry-point tests: one temporary Prefect server for the session."""

from __future__ import annotations

import os
import tempfile

import pytest


@pytest.fixture(scope="session")
def prefect_server():
    """One temporary Prefect server (and SQLite database) for the session; PREFECT_HOME in a
    temporary folder so tests never write into the checkout."""
    os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="lexpipe_prefect_home_"))
    import lexpipe.prefect_flows  # noqa: F401  (sets the offline/quiet environment before prefect loads)
    from prefect.testing.utilities import prefect_test_harness

    # 60 s is enough on an idle 2-core machine (about 15 s: a fresh SQLite database is migrated);
    # when several engineers' suites share those cores it took longer than 60 s
    with prefect_test_harness(server_startup_timeout=180):
        yield
