"""Latency of a point-in-time read (``unit at date``), warm: the read layer alone and through the app.

    .venv/bin/python bench/reads.py [--home .lexpipe] [--n 3000] [--seed 0]

Samples ``--n`` requests over every held version of every act under ``--home``: a version chosen at
random, one of its units (any level, from its NODES table) and a date in the span that version is in
force (from its date to the day before the next held version; up to a year past the newest). The
first pass reads every version once (the cold loads, reported apart: reading NODES and ARTICLES and
building the per-version index); then the same requests are timed warm

* ``read layer``: ``ReadService.unit(unit_id, as_of)`` (:mod:`pipelines.reads.units`);
* ``ASGI app``: ``GET /units/{unit_id}?as_of=`` through FastAPI's TestClient (the whole app of
  ``lexpipe serve``: routing, validation, the response model, JSON), no network.

Each answer is checked (the version read is the one the sample was drawn from). Prints one table
with p50 / p95 / p99 / max per path, and the load and the CPU share the hypervisor stole meanwhile.
Target (issue 16): p95 ≤ 20 ms warm on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

from pipelines.reads import ReadService  # noqa: E402
from schemas.acts import registry  # noqa: E402


def cpu_times() -> list[int]:
    try:
        return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return []


def stolen_share(before: list[int], after: list[int]) -> float:
    if not before or not after:
        return float("nan")
    d = [b - a for a, b in zip(before, after)]
    return d[7] / sum(d) if sum(d) and len(d) > 7 else float("nan")


def sample(reads: ReadService, n: int, seed: int) -> list[tuple[str, str, str]]:
    """(unit id, as_of, expected version) × n, over every held version of every act."""
    rng = random.Random(seed)
    pools = []
    for act_id in registry().ids():
        versions = list(reads.reader.versions(act_id))
        for i, v in enumerate(versions):
            ids = pq.read_table(reads.reader.table_path(act_id, v, "nodes"), columns=["id"]).column("id").to_pylist()
            start = dt.date.fromisoformat(v)
            end = dt.date.fromisoformat(versions[i + 1]) - dt.timedelta(days=1) if i + 1 < len(versions) \
                else start + dt.timedelta(days=365)
            pools.append((v, ids, start, (end - start).days))
    if not pools:
        raise SystemExit(f"no published version under {reads.home}: run `make run` (or `lexpipe run`) first")
    out = []
    for _ in range(n):
        v, ids, start, span = rng.choice(pools)
        out.append((rng.choice(ids), (start + dt.timedelta(days=rng.randint(0, span))).isoformat(), v))
    return out, len(pools), sum(len(p[1]) for p in pools)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from fastapi.testclient import TestClient

    from lexpipe.api import create_app

    reads = ReadService.at(args.home)
    requests, n_versions, n_units = sample(reads, args.n, args.seed)
    acts = sorted({u.split(":")[0] + ":" + u.split(":")[1] for u, _, _ in requests})
    cold: list[float] = []
    for act_id in acts:
        for v in reads.reader.versions(act_id):
            t = time.perf_counter()
            reads.reader.index(act_id, v)
            cold.append((time.perf_counter() - t) * 1000)

    # one client sends every request: lift the per-client read limit (LEXPIPE_API_RATE_READ_*), which
    # would answer 429 after the burst; the limiter's own cost stays in the measured path
    from core.settings import get_settings

    settings = get_settings().model_copy(update={"api_rate_read_burst": 10 ** 9, "api_rate_read_per_s": 1e9})
    client = TestClient(create_app(reads=reads, settings=settings))
    for unit_id, as_of, _ in requests[:200]:  # warm up the app (first requests build routes, pools, …)
        client.get(f"/units/{quote(unit_id, safe=':^')}", params={"as_of": as_of})

    rows = []
    load0, cpu0 = os.getloadavg()[0], cpu_times()
    layer: list[float] = []
    for unit_id, as_of, version in requests:
        t = time.perf_counter()
        u = reads.unit(unit_id, as_of)
        layer.append((time.perf_counter() - t) * 1000)
        assert u.version == version, (unit_id, as_of, u.version, version)
    rows.append(("read layer: ReadService.unit", layer))
    app: list[float] = []
    for unit_id, as_of, version in requests:
        t = time.perf_counter()
        r = client.get(f"/units/{quote(unit_id, safe=':^')}", params={"as_of": as_of})
        app.append((time.perf_counter() - t) * 1000)
        assert r.status_code == 200 and r.json()["version"] == version, (unit_id, as_of, r.text[:200])
    rows.append(("ASGI app: GET /units/{id}?as_of= (TestClient)", app))
    load1, cpu1 = os.getloadavg()[0], cpu_times()

    print(f"home {Path(args.home).resolve()}: {len(acts)} acts, {n_versions} versions, {n_units:,} units; "
          f"{args.n} requests (seed {args.seed}), warm")
    print()
    print("| path | requests | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, xs in rows:
        print(f"| {name} | {len(xs)} | {statistics.median(xs):.2f} | {pct(xs, .95):.2f} | {pct(xs, .99):.2f} | "
              f"{max(xs):.2f} |")
    print(f"| cold: first read of a version (NODES + ARTICLES → index), per version | {len(cold)} | "
          f"{statistics.median(cold):.1f} | {pct(cold, .95):.1f} | — | {max(cold):.1f} |")
    print()
    print(f"load average {load0:.2f} → {load1:.2f}; CPU stolen by the hypervisor during the warm runs: "
          f"{stolen_share(cpu0, cpu1):.1%}; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
