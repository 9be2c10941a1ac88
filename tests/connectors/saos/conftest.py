"""Fixtures of the SAOS connector tests: the sample folder and the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from fake_saos import FakeSaos  # tests/, on sys.path via conftest


@pytest.fixture
def saos_dir(sample_dir: Path) -> Path:
    """``<sample_dir>/pl/saos`` with the two real dump pages; skips when absent."""
    folder = sample_dir / "pl" / "saos"
    if not any(folder.glob("judgments-page-*.json")):
        pytest.skip(f"SAOS sample pages not found in {folder}")
    return folder


@pytest.fixture
def fake(saos_dir: Path, httpserver: HTTPServer) -> FakeSaos:
    """The real sample pages served over a loopback HTTP server, as the live API pages them."""
    server = FakeSaos(saos_dir.parent.parent)
    server.install(httpserver)
    return server
