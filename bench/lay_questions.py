"""Retrieval on lay questions over every Polish code in the corpus: R@1/5/10 and MRR (article level)
per act and overall, with and without the act filter, per retriever, and query latency.

    .venv/bin/python bench/lay_questions.py --home H [--split dev] [--retrievers bm25,dense,hybrid]

Why: exam stems copy the statute's wording; people do not. ``bench/data/pl_lay_questions_*.jsonl``
(hand-written, see its README) asks as a person would. ``dev`` is for choosing methods;
``test`` is held out and judges the result: run it only to report, never to tune (the script says
so when asked for it). The home must hold the acts of the questions (``lexpipe run`` with their
registry rows); questions of an act the home lacks are counted as misses and reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parent / "data"


def load(split: str) -> list[dict]:
    path = DATA / f"pl_lay_questions_{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_rank(hits, gold: set[str]) -> int | None:
    for i, h in enumerate(hits, 1):
        if h.article_id in gold:
            return i
    return None


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {"n": len(ranks), **{f"R@{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)},
            "MRR": sum(1 / r for r in ranks if r) / n}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="LEXPIPE_HOME holding the indexed acts")
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--retrievers", default="bm25,dense,hybrid,gaius")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    if args.split == "test":
        print("note: the test split is held out — report its figures, never choose a method on them", file=sys.stderr)
    os.environ["LEXPIPE_HOME"] = str(Path(args.home).resolve())
    from core.settings import get_settings
    from pipelines.retrieval.service import InvalidRequest, SearchService

    service = SearchService.from_settings(get_settings())
    questions = load(args.split)
    indexed = set(service.backend.acts()) if hasattr(service.backend, "acts") else set()
    rows = []
    for retriever in args.retrievers.split(","):
        for filtered in (False, True):
            ranks: dict[str, list[int | None]] = defaultdict(list)
            seconds: list[float] = []
            try:  # warm-up: table contexts, gAIus index, analyser caches
                service.search(questions[0]["question"], k=args.k, retriever=retriever,
                               acts=[questions[0]["act"]] if filtered else None)
            except InvalidRequest:
                pass
            encoder = getattr(service.backend, "encoder", None)
            if hasattr(encoder, "clear"):
                encoder.clear()  # every row pays its own query encodes
            for q in questions:
                gold = set(q["gold_articles"])
                t0 = time.perf_counter()
                try:
                    page = service.search(q["question"], k=args.k, retriever=retriever,
                                          acts=[q["act"]] if filtered else None)
                    hits = page.hits
                except InvalidRequest:
                    hits = []
                seconds.append(time.perf_counter() - t0)
                ranks[q["act"]].append(first_rank(hits, gold))
            for act in sorted(ranks) + ["all"]:
                r = [x for v in ranks.values() for x in v] if act == "all" else ranks[act]
                m = metrics(r)
                rows.append((retriever, "act filter" if filtered else "no filter", act, m))
            qs = sorted(seconds)
            rows.append((retriever, "act filter" if filtered else "no filter", "latency",
                         {"p50_ms": 1000 * statistics.median(qs), "p95_ms": 1000 * qs[int(0.95 * (len(qs) - 1))]}))
    missing = sorted({q["act"] for q in questions} - indexed)
    print(f"lay questions ({args.split}, {len(questions)}), home {args.home}; indexed: {', '.join(sorted(indexed))}"
          + (f"; NOT indexed (their questions count as misses): {', '.join(missing)}" if missing else ""))
    print(f"{'retriever':9} {'filter':10} {'act':7} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for retriever, filt, act, m in rows:
        if act == "latency":
            print(f"{retriever:9} {filt:10} latency p50 {m['p50_ms']:.0f} ms, p95 {m['p95_ms']:.0f} ms (fresh query encodes: "
                  "the query-vector cache is emptied before every row)")
            continue
        print(f"{retriever:9} {filt:10} {act:7} {m['n']:>4} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f} {m['MRR']:>6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
