"""The citation resolver's precision / recall on real citations: German refex, Polish SAOS, and its
act identification on all the SAOS pages.

    .venv/bin/python bench/resolver_quality.py --home /work/main/.lexpipe [--sample-dir ../shared/data]
                                               [--details dev|test] [--json] [--no-identity]

Three tables (``pipelines/benchmarks/citation_resolution.py`` and ``act_identity.py`` say how each is
measured): refex (dev/test split of ``split_dev_test``), one row per split and level (§/Art.,
Absatz); SAOS (page 347 dev, page 355 test), one row per page and date rule (the judgment date; the
nearest held text) — columns: gold units, predicted (exact) units, P, R, F1, gold units no held
version contains, § 823 / § 1823 style confusions (and, for SAOS, superscript readings that differ
from SAOS's); and act identity over every SAOS page (pages in ascending number alternate dev, test:
347, 924, 1117, 1324 dev; 355, 995, 1287, 1338 test), one row per split and held / not-held acts.
The figures are the resolver's current rules, chosen on dev. ``--details dev|test`` lists that
split's misses, extras, confusions and act-identity disagreements for reading.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.benchmarks.act_identity import IdentityRow, identity_rows, page_files  # noqa: E402
from pipelines.benchmarks.citation_resolution import QualityRow, held_acts, refex_rows, saos_rows  # noqa: E402
from pipelines.resolver import CitationResolver  # noqa: E402

SAOS_PAGES = {"dev": "judgments-page-347.json", "test": "judgments-page-355.json"}
HEAD = ("| split | gold | predicted | P | R | F1 | not in corpus | confusions |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|")


def _line(r: QualityRow, extra: str = "") -> str:
    return (f"| {r.split} | {r.gold} | {r.predicted} | {r.prf.precision:.3f} | {r.prf.recall:.3f} | {r.prf.f1:.3f} | "
            f"{r.not_in_corpus} | {len(r.confusions)}{extra} |")


ID_HEAD = ("| split | acts | identity P | (correct / comparable) | identity R | (identified / found) | "
           "act-set P | act-set R | judgments (annotated) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")


def _id_line(r: IdentityRow) -> str:
    return (f"| {r.split} | {r.scope} | {r.precision:.3f} | {r.correct} / {r.comparable} | {r.recall:.3f} | "
            f"{r.gold_identified} / {r.gold_found} | {r.act_precision:.3f} | {r.act_recall:.3f} | "
            f"{r.judgments} ({r.annotated}) |")


def _pages(files: list[Path]) -> str:
    return ", ".join(p.stem.rsplit("-", 1)[1] for p in files)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a LEXPIPE_HOME with published corpora (read only)")
    ap.add_argument("--sample-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--details", choices=("dev", "test"), help="list that split's misses, extras and confusions")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of Markdown")
    ap.add_argument("--no-identity", action="store_true", help="leave out the act-identity table (all SAOS pages)")
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
    saos_dir = args.sample_dir / "pl" / "saos"
    ident = [] if args.no_identity else identity_rows(resolver, saos_dir, held_acts(resolver.reads))
    t3 = time.perf_counter()
    if args.json:
        print(json.dumps({"refex": [r.to_dict() for r in de], "saos": [r.to_dict() for r in pl],
                          "act_identity": [r.to_dict() for r in ident]}, indent=1))
    else:
        print(f"German, refex ({de[0].docs} dev / {de[-1].docs} test documents; held acts only; {t1 - t0:.1f} s)\n")
        print(HEAD)
        print("\n".join(_line(r) + (f" (neighbour exact: {r.neighbour_exact})" if r.neighbour_exact else "")
                        for r in de))
        print(f"\nPolish, SAOS referencedRegulations ((act, article) pairs of held acts; {t2 - t1:.1f} s)\n")
        print(HEAD.replace("| confusions |", "| confusions (superscript readings) |"))
        print("\n".join(_line(r, f" ({len(r.superscript_readings)})") for r in pl))
        if ident:
            files = page_files(saos_dir)
            print(f"\nPolish, act identity on every SAOS page (dev: pages {_pages(files['dev'])}; test: pages "
                  f"{_pages(files['test'])}; {t3 - t2:.1f} s)\n")
            print(ID_HEAD)
            print("\n".join(_id_line(r) for r in ident))
    if args.details:
        for r in ident:
            if r.split == args.details and r.wrong:
                print(f"\n## act identity, {r.split}, {r.scope}: another act than SAOS's ({len(r.wrong)})")
                print("\n".join(f"  {json.dumps(w, ensure_ascii=False)}" for w in r.wrong))
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
