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
