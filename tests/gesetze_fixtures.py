"""The German federal-law history (``../shared/data/de/gesetze-history/gesetze-md.bundle``) for tests.

Two forms, both made at test time from the read-only bundle (nothing of it is committed):

* :func:`clone_bundle` — the whole repository (6,183 → 6,636 acts, 169 first-parent commits),
  ``git clone`` of the bundle, ~8 s; for tests that read one act at one commit.
* :func:`make_slice` — a small repository with the same layout and the same commit messages,
  authors and dates: the first ``commits`` first-parent commits of the bundle restricted to
  ``acts`` (``<letter>/<slug>`` folders), one commit per source commit that touched one of them
  (plus the import). It is what the catalogue, replay and orchestration tests run on: every commit
  is a real one, the fixes commit among them (``Merge branch 'fixes'``, 2012-08-03) included.

Why a slice and not the bundle: a test of the whole replay over 6,183 acts takes an hour; 50 acts
through the first 20 commits exercise the same code paths (import, converter fixes, BGBl merges
of one and of several acts) in seconds.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Sequence

BUNDLE = Path("de") / "gesetze-history" / "gesetze-md.bundle"

# 51 acts: the 44 the commits 5-20 of the bundle change most (BGBl merges of one act and of 21, an
# `upstream-fixes` merge; every act is also touched by the two `fixes` commits of 2012-08-03), the
# registry's six (BGB, GG, HGB, StGB, StPO, ZPO), and acts the 2012 parser refused: no front matter
# (agrarausbv), a § number twice (altpflg), no § headings (begaendg_3); one slug with a hyphen
SLICE_ACTS = (
    'a/agrarausbv', 'a/altpflg', 'a/apobetro_1987', 'b/begaendg_3', 'b/bgb', 'b/boersg_2007', 'f/fev_2010',
    'f/finausglg_2005', 'f/fzv_2011', 'g/gg', 'g/glprzhadamarv', 'g/glprzhernev', 'g/glprzkaiserslauternv',
    'g/glprzmichelstadtv', 'g/glprzrheinbachv', 'g/guekkostv_1998', 'h/hgb', 'i/invg', 'k/kfzpflvv',
    'k/kosmetikv', 'k/kredwg', 'l/luftkostv', 'l/luftvg', 'l/luftvo', 'l/luftvzo', 'm/mkuservausbv',
    'm/moselschpev_1997', 'm/moselschpv_1997', 'n/nwrg', 'r/rennwlottg', 'r/rennwlottgabest',
    'r/rheinschpersev', 'r/rheinschpev_1994', 'r/rheinschpv_1994', 'r/rstruktfv', 'r/rustag', 'r/rwbestv_2012',
    's/schfausbv_1997', 's/stgb', 's/stgebo_2011', 's/stpo', 't/tier-lmhv', 't/tkg_2004', 't/tourfachwprv',
    't/tvmindestlohn_2011', 'u/ustg_1980', 'w/wpaiv', 'w/wphg', 'w/wppg', 'w/wppgebv', 'z/zpo',
)

# what the build tests (Dagster, Prefect, the killed load) run on: the slice less four large codes
# (HGB, StGB, StPO, ZPO: ~1,700 §§ together, each rebuilt by both fixes commits) — the same paths
# (the BGB and the GG stay), in about half the time; the parser tests keep all 51
BUILD_ACTS = tuple(a for a in SLICE_ACTS if a not in ("h/hgb", "s/stgb", "s/stpo", "z/zpo"))


def git(repo: Path, *args: str, env: dict | None = None, check: bool = True) -> str:
    """``git -C repo args`` with a fixed identity and no user config: output (stdout) as text."""
    e = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
         "GIT_AUTHOR_NAME": "lexpipe-tests", "GIT_AUTHOR_EMAIL": "tests@lexpipe.invalid",
         "GIT_COMMITTER_NAME": "lexpipe-tests", "GIT_COMMITTER_EMAIL": "tests@lexpipe.invalid",
         **(env or {})}
    res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=e)
    if check and res.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {repo} failed ({res.returncode}): {res.stderr.strip()}")
    return res.stdout


def bundle_path(sample_dir: Path) -> Path:
    return Path(sample_dir) / BUNDLE


def clone_bundle(sample_dir: Path, target: Path) -> Path:
    """A full clone of the bundle at ``target`` (its first-parent head checked out)."""
    src = bundle_path(sample_dir)
    if not src.is_file():
        raise FileNotFoundError(f"{src}: the gesetze history bundle is missing")
    target.parent.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["git", "clone", "-q", str(src), str(target)], capture_output=True, text=True,
                         env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})
    if res.returncode != 0:
        raise RuntimeError(f"git clone {src} failed: {res.stderr.strip()}")
    return target


def first_parent_commits(repo: Path) -> list[str]:
    """Commit ids along the first-parent line, oldest first."""
    return git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()


def make_slice(full: Path, target: Path, *, acts: Sequence[str], commits: int = 20) -> Path:
    """A repository of ``acts`` (``b/bgb``-style folders) through the first ``commits`` first-parent
    commits of ``full``: for every source commit that changes one of the acts (and the first ones,
    README and import), one commit with the source's message, author and dates. Returns ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    git(target, "init", "-q", "-b", "master")
    prev = None
    for sha in first_parent_commits(full)[:commits]:
        paths = [f"{a}/index.md" for a in acts]
        if prev is None:
            changed = set(git(full, "ls-tree", "-r", "--name-only", sha).split())
        else:
            changed = set(git(full, "diff", "--name-only", prev, sha).split())
        prev = sha
        wanted = [p for p in paths if p in changed] + [p for p in changed if p == "README.md"]
        if not wanted:
            continue
        for p in wanted:
            out = target / p
            blob = subprocess.run(["git", "-C", str(full), "show", f"{sha}:{p}"], capture_output=True)
            if blob.returncode != 0:  # deleted at this commit
                if out.exists():
                    git(target, "rm", "-q", p)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)
            git(target, "add", p)
        meta = git(full, "show", "-s", "--format=%an%x00%ae%x00%aD%x00%cn%x00%ce%x00%cD%x00%B", sha).split("\x00")
        an, ae, ad, cn, ce, cd, body = meta
        git(target, "commit", "-q", "--allow-empty", "-m", body.rstrip("\n"),
            env={"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
                 "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd})
    return target


def build_slice_or_skip(sample_dir: Path, tmp_path_factory, *, commits: int, acts: Sequence[str] = BUILD_ACTS) -> Path:
    """The bundle cloned and sliced under pytest's temporary folder (the build tests' module fixture);
    skips, naming the file, when the shared data has no bundle."""
    import pytest

    if not bundle_path(sample_dir).is_file():
        pytest.skip(f"{bundle_path(sample_dir)} is absent (the gesetze history bundle)")
    full = clone_bundle(sample_dir, tmp_path_factory.mktemp("gesetze") / "full")
    return make_slice(full, tmp_path_factory.mktemp("gesetze") / "slice", acts=acts, commits=commits)
