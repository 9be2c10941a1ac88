"""The German acts with older text states, built once per session from the real sample data:
BGB (2012-12-02, 2013-01-11, the ~2021 Markdown, the 2024 PDF), GG, StGB and ZPO (two 2012 files
of ``de/gesetze-versions`` each, then the ~2021 Markdown). Read-only: copy the home
(``shutil.copytree``) before writing to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from core.layout import Layout
from pipelines.statutes.de.build import GermanBuildResult, build_all

VERSIONED_ACTS = ("de:bgb", "de:gg", "de:stgb", "de:zpo")


@dataclass(frozen=True)
class GermanVersions:
    layout: Layout
    results: tuple[GermanBuildResult, ...]

    def of(self, act_id: str) -> list[GermanBuildResult]:
        """The act's build results, oldest text state first."""
        return [r for r in self.results if r.act_id == act_id]


@pytest.fixture(scope="session")
def german_versions(tmp_path_factory, sample_dir: Path) -> GermanVersions:
    layout = Layout(tmp_path_factory.mktemp("de_versions_home"))
    return GermanVersions(layout, tuple(build_all(layout, sample_dir, acts=VERSIONED_ACTS)))


# ----------------------------------------------------------------------------------------------
# the whole of German federal law: the bundestag/gesetze history bundle (tests/gesetze_fixtures.py)


@pytest.fixture(scope="session")
def gesetze_full(tmp_path_factory, sample_dir: Path) -> Path:
    """A clone of the gesetze history bundle (~10 s); skips when the bundle is absent."""
    from gesetze_fixtures import bundle_path, clone_bundle

    if not bundle_path(sample_dir).is_file():
        pytest.skip(f"{bundle_path(sample_dir)} is absent (the bundestag/gesetze history bundle of "
                    "../shared/data/de/gesetze-history)")
    return clone_bundle(sample_dir, tmp_path_factory.mktemp("gesetze") / "full")


@pytest.fixture(scope="session")
def gesetze_slice(tmp_path_factory, gesetze_full: Path) -> Path:
    """51 acts through the first 20 first-parent commits of the bundle (import, fixes, BGBl merges)."""
    from gesetze_fixtures import SLICE_ACTS, make_slice

    return make_slice(gesetze_full, tmp_path_factory.mktemp("gesetze") / "slice", acts=SLICE_ACTS, commits=20)


@pytest.fixture(scope="session")
def act_file(tmp_path_factory, gesetze_full: Path):
    """``act_file("a/aeg", INITIAL_IMPORT)`` → the act's ``index.md`` at that commit, written under a
    ``<letter>/<slug>/`` folder as in the repository (the folder is the act's slug)."""
    from gesetze_fixtures import git

    root = tmp_path_factory.mktemp("gesetze_acts")

    def get(act: str, commit: str = "82cedddf") -> Path:  # default: the 2022 state (6,636 acts)
        out = root / commit / act / "index.md"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(git(gesetze_full, "show", f"{commit}:{act}/index.md"), encoding="utf-8")
        return out

    return get
