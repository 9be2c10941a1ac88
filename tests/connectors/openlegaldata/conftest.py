"""Fixtures of the Open Legal Data connector tests: the sample folder and the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from fake_openlegaldata import FakeOpenLegalData  # tests/, on sys.path via conftest
from oldp_helpers import TOKEN  # this folder, on sys.path like the test modules


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
