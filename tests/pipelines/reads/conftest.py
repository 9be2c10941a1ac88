"""Fixtures of the read-layer tests: one ReadService over the session's published Civil Code
(``corpus_home``: 2024-12-19 and 2025-11-13, the real PDFs through the main job), and a writable
copy of its corpus for the tests that publish or republish a version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipelines.reads import ReadService


@pytest.fixture(scope="module")
def reads(corpus_home: Path) -> ReadService:
    return ReadService.at(corpus_home)


@pytest.fixture
def writable_home(corpus_home: Path, tmp_path: Path) -> Path:
    """A copy of ``corpus_home``'s corpus folder (the search index is not needed to read)."""
    home = tmp_path / "home"
    shutil.copytree(corpus_home / "corpus", home / "corpus", symlinks=True)
    return home
