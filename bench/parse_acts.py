"""Parse every ISAP sample PDF of the four codes and print one row per file.

    .venv/bin/python bench/parse_acts.py [--sample-dir ../shared/data] [--workers 2]

For each ``<sample-dir>/pl/isap/*.pdf`` whose name starts with a known ISAP address (the table
below): pages, articles, articles numbered with a superscript (``22^1``, ``18^3a``), repealed and
pending articles, whether article and unit ids are unique, and the seconds of one cold
``parse_statute(..., workers=2)`` (page reading included). A file that fails prints its error
instead of a row, and the script exits 1.

The specs come from the registry rows of ``schemas/acts.toml`` (k.c., k.p.c., k.p., k.k.).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.statutes.pl.parser import ActSpec, parse_statute  # noqa: E402
from pipelines.statutes.pl.tables import nodes_table  # noqa: E402
from schemas.acts import registry  # noqa: E402


def isap_specs() -> dict[str, ActSpec]:
    """ISAP file name prefix (D + Dz. U. year + position, ``D19640093``) → the act's ``ActSpec``:
    the registry's ISAP acts, so the specs are written once, as registry rows."""
    return {a.sample_stem[:9]: ActSpec.of(a) for a in registry().of_source("eli")}


SPECS = isap_specs()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    pdfs = sorted((Path(args.sample_dir) / "pl" / "isap").glob("*.pdf"))
    header = ("file", "act", "pages", "articles", "superscript", "repealed", "pending", "ids unique", "parse s")
    rows, failed = [], 0
    for pdf in pdfs:
        spec = SPECS.get(pdf.name[:9])
        if spec is None:
            print(f"{pdf.name}: no ActSpec for {pdf.name[:9]}, skipped")
            continue
        version = dt.date.fromisoformat(pdf.stem.rsplit("_", 1)[1])
        t0 = time.perf_counter()
        try:
            ps = parse_statute(pdf, version, spec, workers=args.workers)
        except Exception as exc:  # noqa: BLE001 - a bench row, not a crash
            failed += 1
            print(f"{pdf.name}: FAILED {type(exc).__name__}: {exc}")
            continue
        seconds = time.perf_counter() - t0
        status = Counter(a.status for a in ps.articles)
        node_ids = [n["id"] for n in nodes_table(ps).to_pylist()]
        unique = len({a.id for a in ps.articles}) == len(ps.articles) and len(set(node_ids)) == len(node_ids)
        rows.append((pdf.name, spec.short_name, ps.pages, len(ps.articles),
                     sum("^" in a.number for a in ps.articles), status["repealed"], status["pending"],
                     "yes" if unique else "NO", f"{seconds:.1f}"))
        failed += not unique
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
