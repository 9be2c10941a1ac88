"""Fixtures of the subscription tests: an empty home, and a writable copy of the published Civil Code
(corpus and search index). Constants and the receiver: tests/subscription_fixtures.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.layout import Layout


@pytest.fixture
def home(tmp_path: Path) -> Layout:
    (tmp_path / "home").mkdir()
    return Layout(tmp_path / "home")


@pytest.fixture
def kc_home(corpus_home: Path, tmp_path: Path) -> Layout:
    """A writable copy of the session's published Civil Code: corpus and search index."""
    dst = tmp_path / "kc_home"
    for part in ("corpus", "index"):
        if (corpus_home / part).exists():
            shutil.copytree(corpus_home / part, dst / part, symlinks=True)
    return Layout(dst)
