"""Parse speed of the ISAP PDFs: cold parse, and a re-run with unchanged input (must do no parsing).

    .venv/bin/python bench/parse.py [--workers 2]

Prints a table: pages, seconds, pages/s per PDF, cold and re-run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lexpipe.layout import Layout  # noqa: E402
from pipelines.statute_build import parse_step  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    args = ap.parse_args()
    pdfs = sorted((Path(args.sample_dir) / "pl" / "isap").glob("D19640093Lj_*.pdf"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp))
        for pdf in pdfs:
            version = pdf.stem.rsplit("_", 1)[1]
            sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
            for run in ("cold", "re-run"):
                t0 = time.perf_counter()
                out = parse_step(layout, act_id="pl:kc", version=version, pdf_path=pdf, source_sha256=sha,
                                 source_url=pdf.as_uri(), workers=args.workers)
                secs = time.perf_counter() - t0
                rows.append((pdf.name, run, out.pages, out.article_count, secs, out.reused))
    print(f"workers={args.workers} cpus={os.cpu_count()}")
    print(f"{'pdf':34} {'run':7} {'pages':>5} {'articles':>8} {'seconds':>8} {'pages/s':>8} {'parsed?':>8}")
    for name, run, pages, n, secs, reused in rows:
        print(f"{name:34} {run:7} {pages:5d} {n:8d} {secs:8.2f} {pages / secs:8.1f} {'no' if reused else 'yes':>8}")


if __name__ == "__main__":
    main()
