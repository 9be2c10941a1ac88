"""The citation resolver's precision / recall on real citations: German refex, Polish SAOS.

    .venv/bin/python bench/resolver_quality.py --home /work/main/.lexpipe [--sample-dir ../shared/data]
                                               [--details dev|test] [--json]

Two tables (``pipelines/benchmarks/citation_resolution.py`` says how each is measured): refex
(dev/test split of ``split_dev_test``), one row per split and level (§/Art., Absatz); SAOS (page
347 dev, page 355 test), one row per page and date rule (the judgment date; the nearest held text).
Columns: gold units, predicted (exact) units, P, R, F1, gold units no held version contains,
§ 823 / § 1823 style confusions (and, for SAOS, superscript readings that differ from SAOS's).
The figures are the resolver's current rules: nothing is tuned on them. ``--details dev|test``
lists that split's misses, extras and confusions for reading.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.benchmarks.citation_resolution import QualityRow, refex_rows, saos_rows  # noqa: E402
from pipelines.resolver import CitationResolver  # noqa: E402

SAOS_PAGES = {"dev": "judgments-page-347.json", "test": "judgments-page-355.json"}
HEAD = ("| split | gold | predicted | P | R | F1 | not in corpus | confusions |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|")


def _line(r: QualityRow, extra: str = "") -> str:
    return (f"| {r.split} | {r.gold} | {r.predicted} | {r.prf.precision:.3f} | {r.prf.recall:.3f} | {r.prf.f1:.3f} | "
            f"{r.not_in_corpus} | {len(r.confusions)}{extra} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a LEXPIPE_HOME with published corpora (read only)")
    ap.add_argument("--sample-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--details", choices=("dev", "test"), help="list that split's misses, extras and confusions")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of Markdown")
    args = ap.parse_args()
    if not (args.home / "corpus").is_dir():
        ap.error(f"--home {args.home}: no corpus/ folder (build one with `make run`)")
    refex = args.sample_dir / "de" / "refex"
    saos = {k: args.sample_dir / "pl" / "saos" / v for k, v in SAOS_PAGES.items()}
    for p in (refex, *saos.values()):
        if not p.exists():
            ap.error(f"--sample-dir {args.sample_dir}: {p} not found")

    resolver = CitationResolver.at(args.home)
    t0 = time.perf_counter()
    de = refex_rows(resolver, resolver.reads, refex)
    t1 = time.perf_counter()
    pl = saos_rows(resolver, resolver.reads, saos)
    t2 = time.perf_counter()
    if args.json:
        print(json.dumps({"refex": [r.to_dict() for r in de], "saos": [r.to_dict() for r in pl]}, indent=1))
    else:
        print(f"German, refex ({de[0].docs} dev / {de[-1].docs} test documents; held acts only; {t1 - t0:.1f} s)\n")
        print(HEAD)
        print("\n".join(_line(r) + (f" (neighbour exact: {r.neighbour_exact})" if r.neighbour_exact else "")
                        for r in de))
        print(f"\nPolish, SAOS referencedRegulations ((act, article) pairs of held acts; {t2 - t1:.1f} s)\n")
        print(HEAD.replace("| confusions |", "| confusions (superscript readings) |"))
        print("\n".join(_line(r, f" ({len(r.superscript_readings)})") for r in pl))
    if args.details:
        for r in (*de, *pl):
            if not r.split.startswith(args.details):
                continue
            print(f"\n## {r.split}")
            for name in ("missed", "extra", "confusions", "superscript_readings"):
                items = getattr(r, name)
                if items:
                    print(f"{name} ({len(items)}):")
                    print("\n".join(f"  {json.dumps(i, ensure_ascii=False)}" for i in items))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
