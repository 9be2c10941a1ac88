"""The initial load of all German federal law, measured (issue 24, point 2).

    .venv/bin/python bench/initial_load.py --home H [--until KEY] [--no-index]

Runs ``lexpipe load de`` (the gesetze import: 6,183 acts parsed, checked, chunked, published and
indexed lexically, through Dagster) in a child process with its own ``DAGSTER_HOME`` under ``H``,
samples the resident memory of the whole process tree (the load and its parse workers) every
second from ``/proc``, and prints:

* wall time and peak RSS (sum over the tree, and the largest single process);
* acts published and quarantined, quarantine by reason (with examples), units and chunks;
* disk per layer of the home (raw landing zone, corpus, index, catalogue, cache).

A home that already holds the load is not loaded again (the changeset record is applied): the
second run measures the resume/no-op path. Nothing here is a test: the figures go to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children(pid: int) -> set[int]:
    """``pid`` and every descendant (from /proc/*/stat's parent ids)."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        parents[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        for child, parent in parents.items():
            if parent == p and child not in tree:
                tree.add(child)
                frontier.append(child)
    return tree


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler(threading.Thread):
    """Peak of the summed RSS of a process tree, and of its largest process, sampled each second."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_sum_kb, self.peak_one_kb, self.samples = pid, 0, 0, 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            sizes = [_rss_kb(p) for p in _children(self.pid)]
            self.peak_sum_kb = max(self.peak_sum_kb, sum(sizes))
            self.peak_one_kb = max(self.peak_one_kb, max(sizes, default=0))
            self.samples += 1


def _du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def _records(home: Path) -> list[dict]:
    root = home / "corpus" / "de" / ".changesets"
    return [json.loads(p.read_text()) for p in sorted(root.glob("*.json"))] if root.is_dir() else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--until", default=None, help="a changeset key (default: the import)")
    ap.add_argument("--no-index", action="store_true")
    args = ap.parse_args()
    home = args.home.resolve()
    dagster_home = home.parent / f"{home.name}-dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LEXPIPE_HOME": str(home), "DAGSTER_HOME": str(dagster_home)}
    cmd = [str(ROOT / ".venv" / "bin" / "lexpipe"), "load", "de"]
    if args.until:
        cmd += ["--until", args.until]
    if args.no_index:
        cmd.append("--no-index")
    log = home.parent / f"{home.name}-load.log"
    print(f"$ {' '.join(cmd)}  (LEXPIPE_HOME={home}, log {log})", flush=True)
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        rc = proc.wait()
        sampler.stop.set()
    wall = time.perf_counter() - t0
    tail = log.read_text(errors="replace").splitlines()[-40:]
    print("\n".join(tail))

    outcomes: Counter = Counter()
    reasons: Counter = Counter()
    examples: dict[str, list[str]] = {}
    units = chunks = 0
    for rec in _records(home):
        for o in rec.get("outcomes", []):
            outcomes[o["outcome"]] += 1
            if o["outcome"] == "published":
                units += int(o.get("units") or 0)
                chunks += int(o.get("chunks") or 0)
            if o["outcome"] == "quarantined":
                reasons[o["reason"]] += 1
                examples.setdefault(o["reason"], []).append(o["act_id"])
    acts = sum(outcomes.values())
    published = outcomes.get("published", 0) + outcomes.get("unchanged", 0)

    print("\n| figure | value |\n|---|---:|")
    print(f"| exit code | {rc} |")
    print(f"| wall time | {wall / 60:.1f} min ({wall:.0f} s) |")
    print(f"| peak RSS, whole process tree | {sampler.peak_sum_kb / 1e6:.2f} GB |")
    print(f"| peak RSS, largest process | {sampler.peak_one_kb / 1e6:.2f} GB |")
    print(f"| acts in the changesets | {acts:,} |")
    print(f"| published | {published:,} ({published / acts:.1%}) |" if acts else "| published | 0 |")
    print(f"| quarantined | {outcomes.get('quarantined', 0):,} |")
    print(f"| units of the published versions (article-level rows) | {units:,} |")
    print(f"| chunks of the published versions | {chunks:,} |")
    for rec in _records(home):
        for step, s in (rec.get("timings") or {}).items():
            print(f"| {rec['changeset']['key'] if isinstance(rec.get('changeset'), dict) else ''} {step} | {s:,.0f} s |")
    for layer in ("raw", "corpus", "index", "catalogue", "cache", "state"):
        p = home / layer
        if p.exists():
            print(f"| disk: {layer}/ | {_du(p) / 1e6:,.0f} MB |")
    print(f"| disk: whole home | {_du(home) / 1e6:,.0f} MB |")
    if reasons:
        print("\n| quarantine reason | acts | e.g. |\n|---|---:|---|")
        for reason, n in reasons.most_common():
            print(f"| {reason} | {n} | {', '.join(examples[reason][:6])} |")
    return rc


if __name__ == "__main__":
    sys.exit(main())
