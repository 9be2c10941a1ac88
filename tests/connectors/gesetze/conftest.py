"""The gesetze bundle, sliced once per session (tests/gesetze_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gesetze_fixtures import SLICE_ACTS, bundle_path, clone_bundle, make_slice


@pytest.fixture(scope="session")
def gesetze_full(tmp_path_factory, sample_dir: Path) -> Path:
    if not bundle_path(sample_dir).is_file():
        pytest.skip(f"{bundle_path(sample_dir)} is absent (the gesetze history bundle)")
    return clone_bundle(sample_dir, tmp_path_factory.mktemp("gesetze") / "full")


@pytest.fixture(scope="session")
def gesetze_slice(tmp_path_factory, gesetze_full: Path) -> Path:
    """51 acts through the first 20 first-parent commits of the bundle (import, two fixes, BGBl merges)."""
    return make_slice(gesetze_full, tmp_path_factory.mktemp("gesetze") / "slice", acts=SLICE_ACTS, commits=20)
