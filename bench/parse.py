"""Parse speed of the ISAP PDFs: cold parse, and a re-run with unchanged input (must do no parsing).

    .venv/bin/python bench/parse.py [--workers 2]

Prints a table: pages, median seconds of --repeat cold runs, pages/s, and a re-run with unchanged
input (which must reuse the parse: 'parsed?' = no).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.statutes.pl.build import parse_step  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="cold runs per PDF; the median is reported")
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    args = ap.parse_args()
    pdfs = sorted((Path(args.sample_dir) / "pl" / "isap").glob("D19640093Lj_*.pdf"))
    rows = []
    for pdf in pdfs:
        version = pdf.stem.rsplit("_", 1)[1]
        sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
        cold = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:  # a fresh home each time: nothing to reuse
                layout = Layout(Path(tmp))
                t0 = time.perf_counter()
                out = parse_step(layout, act_id="pl:kc", version=version, pdf_path=pdf, source_sha256=sha,
                                 source_url=pdf.as_uri(), workers=args.workers)
                cold.append(time.perf_counter() - t0)
                assert not out.reused
                t0 = time.perf_counter()
                again = parse_step(layout, act_id="pl:kc", version=version, pdf_path=pdf, source_sha256=sha,
                                   source_url=pdf.as_uri(), workers=args.workers)
                rerun = time.perf_counter() - t0
        rows.append((pdf.name, "cold", out.pages, out.article_count, statistics.median(cold), False, cold))
        rows.append((pdf.name, "re-run", again.pages, again.article_count, rerun, again.reused, [rerun]))
    print(f"workers={args.workers} cpus={os.cpu_count()}")
    print(f"{'pdf':34} {'run':7} {'pages':>5} {'articles':>8} {'median s':>8} {'pages/s':>8} {'parsed?':>8}  all runs (s)")
    for name, run, pages, n, secs, reused, all_runs in rows:
        print(f"{name:34} {run:7} {pages:5d} {n:8d} {secs:8.2f} {pages / secs:8.1f} {'no' if reused else 'yes':>8}  "
              + " ".join(f"{x:.2f}" for x in all_runs))


if __name__ == "__main__":
    main()
