"""A stratified slice of the gesetze history for replaying every commit kind in minutes, not hours.

    .venv/bin/python bench/gesetze_slice.py --bundle ../shared/data/de/gesetze-history/gesetze-md.bundle \
        --out /tmp/wide-slice [--random 100] [--seed 24]

The acts: the tests' 51 (``tests/gesetze_fixtures.SLICE_ACTS``), ``--random`` acts drawn with
``--seed`` from every act the history ever held, and for each first-parent commit that changes
none of those, the first act (by path) it changes, so that every one of the 169 commits, each
Bundesanzeiger merge and each pull request included, is in the slice. The commits keep their
messages, authors and dates (``make_slice``), so the connector classifies them as it does the
whole repository.

Why: the whole replay re-builds thousands of acts at the converter-fix and 2022-refresh commits
(a fixes commit touching 1,132 acts costs about as much as the initial load), more than an hour
on 2 cores; the slice runs every commit through the same sensor, run and checks with a
representative share of the acts. Its figures are per-commit costs at slice size, not at whole
corpus size (``bench/replay.py`` on the initial load's home gives those for the first commits).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from gesetze_fixtures import SLICE_ACTS, clone_bundle, first_parent_commits, git, make_slice  # noqa: E402


def choose_acts(full: Path, *, n_random: int, seed: int) -> list[str]:
    commits = first_parent_commits(full)
    ever: set[str] = set()
    changed_by: list[set[str]] = []
    prev = None
    for sha in commits:
        names = (git(full, "ls-tree", "-r", "--name-only", sha) if prev is None
                 else git(full, "diff", "--name-only", prev, sha)).split()
        acts = {n[: -len("/index.md")] for n in names if n.endswith("/index.md")}
        ever |= acts
        changed_by.append(acts)
        prev = sha
    chosen = set(SLICE_ACTS) | set(random.Random(seed).sample(sorted(ever - set(SLICE_ACTS)), n_random))
    for acts in changed_by[1:]:
        if acts and not acts & chosen:
            chosen.add(sorted(acts)[0])
    return sorted(chosen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True, help="the slice repository to create (must not exist)")
    ap.add_argument("--random", type=int, default=100)
    ap.add_argument("--seed", type=int, default=24)
    args = ap.parse_args()
    if args.out.exists():
        ap.error(f"--out {args.out} exists")
    t = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        full = clone_bundle(args.bundle.resolve().parents[2], Path(tmp) / "full")
        acts = choose_acts(full, n_random=args.random, seed=args.seed)
        n = len(first_parent_commits(full))
        make_slice(full, args.out, acts=acts, commits=n)
        made = len(first_parent_commits(args.out))
    print(f"{len(acts)} acts, {made} of {n} commits -> {args.out} ({time.monotonic() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
