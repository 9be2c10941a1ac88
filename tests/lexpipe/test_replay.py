"""``run_replay`` goes through the whole history: commits that change no act (the bundle's README
merges, 0035 and 0036 of the wide slice, back to back) move the replay cursor without a run, and
the replay must not take them for its end. It once stopped there, 133 commits early."""

from __future__ import annotations

import subprocess
from pathlib import Path

import dagster as dg
import pytest

from gesetze_fixtures import build_slice_or_skip, git  # tests/ (this folder's parent), on sys.path

README_MERGES = 2


def _commit(repo: Path, message: str, date: str) -> None:
    env = {"GIT_AUTHOR_NAME": "bundestag", "GIT_AUTHOR_EMAIL": "bt@example.org", "GIT_AUTHOR_DATE": date,
           "GIT_COMMITTER_NAME": "bundestag", "GIT_COMMITTER_EMAIL": "bt@example.org", "GIT_COMMITTER_DATE": date}
    git(repo, "commit", "-q", "-m", message, env=env)


@pytest.fixture(scope="module")
def history(tmp_path_factory, sample_dir: Path) -> tuple[Path, str]:
    """The import of one real act (the smallest of the slice's import), two README-only merges, then a
    BGBl merge that amends it (one word of its text)."""
    sliced = build_slice_or_skip(sample_dir, tmp_path_factory, commits=2)  # README, import
    act = min(sliced.glob("*/*/index.md"), key=lambda p: p.stat().st_size).relative_to(sliced)
    repo = tmp_path_factory.mktemp("replay") / "gesetze"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    (repo / act).parent.mkdir(parents=True)
    text = (sliced / act).read_text(encoding="utf-8")
    (repo / act).write_text(text, encoding="utf-8")
    (repo / "README.md").write_text("Gesetze des Bundes\n", encoding="utf-8")
    git(repo, "add", "-A")
    _commit(repo, "Initialer Import aller Gesetze (Stand 2.7.2012)", "2012-07-02T12:00:00+02:00")
    for i in range(README_MERGES):
        (repo / "README.md").write_text(f"Gesetze des Bundes ({i + 1})\n", encoding="utf-8")
        git(repo, "add", "README.md")
        _commit(repo, "Merge branch 'fixes'", f"2012-08-0{i + 3}T12:00:00+02:00")
    last = max(i for i, line in enumerate(text.splitlines()) if line.strip() and not line.startswith(("#", "[", "-")))
    lines = text.splitlines()
    lines[last] = lines[last].rstrip() + " (geändert)"
    (repo / act).write_text("\n".join(lines) + "\n", encoding="utf-8")
    git(repo, "add", str(act))
    _commit(repo, "Merge branch 'bgbl/2012/1-63'", "2012-08-10T12:00:00+02:00")
    return repo, "de:" + act.parent.name


def test_the_replay_goes_past_commits_that_change_no_act(history, tmp_path, monkeypatch):
    from assets.resources import CorpusStorage, GesetzeRepo, ParseConfig, SearchConfig, default_resources
    from core.settings import Settings
    from lexpipe.runner import run_replay
    from pipelines.statutes.store import CorpusStore

    repo, act = history
    for k, v in {"LEXPIPE_HOME": str(tmp_path / "home"), "LEXPIPE_ENCODER": "hashing", "LEXPIPE_OFFLINE": "true",
                 "LEXPIPE_GESETZE_URL": str(repo), "LEXPIPE_GESETZE_REPLAY": "true"}.items():
        monkeypatch.setenv(k, v)
    settings = Settings()
    resources = {**default_resources(settings), "storage": CorpusStorage(home=str(tmp_path / "home")),
                 "gesetze": GesetzeRepo(url=str(repo), replay=True), "parse_config": ParseConfig(),
                 "search_config": SearchConfig(encoder="hashing")}
    commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert commits == str(2 + README_MERGES)
    runs = run_replay(settings, resources=resources, instance=dg.DagsterInstance.ephemeral(), notify=False,
                      log_level="ERROR")
    assert [(r.kind, r.success) for r in runs] == [("import", True), ("bgbl", True)], runs
    assert runs[-1].key.startswith(f"{1 + README_MERGES:04d}-")  # the last commit (keys count from 0000)
    versions = CorpusStore(resources["storage"].layout).published_versions(act)
    assert len(versions) == 2 and versions[-1].startswith("2012-08-10"), versions
