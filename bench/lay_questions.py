"""Retrieval on lay questions over every Polish code in the corpus: R@1/5/10 and MRR (article level)
per act and overall, per retriever — BM25, dense, the backend's hybrid, each representation leg alone
and the product's hybrid (the backend's hybrid fused with them) — then the search answer's calibrated
confidence, the out-of-corpus flag and latency.

    .venv/bin/python bench/lay_questions.py --home H [--split dev|test] [--retrievers …] [--filters none,act]

Why: exam stems copy the statute's wording; people do not. ``bench/data/pl_lay_questions_*.jsonl``
(hand-written, see its README) asks as a person would. ``dev`` is for choosing methods;
``test`` is held out and judges the result: run it only to report, never to tune (the script says
so when asked for it). The home must hold the acts of the questions (``lexpipe run`` with their
registry rows) and, for the representation rows and the product hybrid's last stage, the
representation store; questions of an act the home lacks are counted as misses and reported.

Retrievers: ``bm25``, ``dense``, ``gaius`` (the service's), ``hybrid_backend`` (the backend's hybrid:
what the search answered before issue 25), ``rep_bm25`` / ``rep_dense`` / ``rep_knn`` (each
representation leg alone, over the acts the search covers), ``hybrid`` (the product: the search
service with its last stage). The out-of-corpus figures read ``pl_out_of_corpus.jsonl`` (dev) or
``pl_out_of_corpus_test.jsonl`` (test) as the questions the corpus cannot answer and the split's lay
questions as those it can.
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
REP_LEGS = ("rep_bm25", "rep_dense", "rep_knn", "article_dense")


def load(split: str) -> list[dict]:
    path = DATA / f"pl_lay_questions_{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_ooc(split: str) -> list[dict]:
    path = DATA / ("pl_out_of_corpus.jsonl" if split == "dev" else "pl_out_of_corpus_test.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_rank(articles, gold: set[str]) -> int | None:
    for i, a in enumerate(articles, 1):
        if a in gold:
            return i
    return None


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {"n": len(ranks), **{f"R@{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)},
            "MRR": sum(1 / r for r in ranks if r) / n}


class Recorder:
    """Stands in for the service's last stage to read the representation legs the product computes
    for a query (the request after the service's act narrowing)."""

    def __init__(self, lay):
        self.lay = lay
        self.rankings = None

    def search(self, backend, request, *, named_held=False):
        self.rankings, hits, _ = self.lay.rankings(backend, request)
        return [hits[a] for a, _ in self.rankings["hybrid"][:request.k]], None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="LEXPIPE_HOME holding the indexed acts")
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--retrievers", default="bm25,dense,hybrid_backend,rep_bm25,rep_dense,rep_knn,article_dense,hybrid")
    ap.add_argument("--filters", default="none", help="none (no act filter, the product default), act (the gold's act)")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    if args.split == "test":
        print("note: the test split is held out — report its figures, never choose a method on them", file=sys.stderr)
    os.environ["LEXPIPE_HOME"] = str(Path(args.home).resolve())
    from core.settings import get_settings
    from pipelines.retrieval.service import InvalidRequest, SearchService

    service = SearchService.from_settings(get_settings())
    plain = SearchService(service.backend)  # no home: no last stage (the backend's hybrid)
    lay = service.lay_stage("pl")
    probe = SearchService(service.backend, home=Path(args.home))
    probe._lay["pl"] = Recorder(lay) if lay is not None else None
    questions = load(args.split)
    indexed = set(service.backend.acts()) if hasattr(service.backend, "acts") else set()
    encoder = getattr(service.backend, "encoder", None)
    rows = []
    product_pages: dict[str, object] = {}
    for retriever in args.retrievers.split(","):
        if retriever in REP_LEGS and lay is None:
            print(f"skipping {retriever}: the home has no representation store", file=sys.stderr)
            continue
        for filt in args.filters.split(","):
            filtered = filt == "act"
            ranks: dict[str, list[int | None]] = defaultdict(list)
            seconds: list[float] = []

            def run(q):
                acts = [q["act"]] if filtered else None
                if retriever in REP_LEGS:
                    probe.search(q["question"], k=args.k, retriever="hybrid", acts=acts)
                    return [a for a, _ in probe._lay["pl"].rankings[retriever]], None
                svc = plain if retriever == "hybrid_backend" else service
                page = svc.search(q["question"], k=args.k, retriever="hybrid" if retriever == "hybrid_backend"
                                  else retriever, acts=acts)
                return [h.article_id for h in page.hits], page

            try:  # warm-up: table contexts, gAIus index, analyser caches
                run(questions[0])
            except InvalidRequest:
                pass
            if hasattr(encoder, "clear"):
                encoder.clear()  # every row pays its own query encodes
            for q in questions:
                t0 = time.perf_counter()
                try:
                    ranked, page = run(q)
                except InvalidRequest:
                    ranked, page = [], None
                seconds.append(time.perf_counter() - t0)
                ranks[q["act"]].append(first_rank(ranked[:args.k], set(q["gold_articles"])))
                if retriever == "hybrid" and not filtered:
                    product_pages[q["id"]] = page
            label = "act filter" if filtered else "no filter"
            for act in sorted(ranks) + ["all"]:
                r = [x for v in ranks.values() for x in v] if act == "all" else ranks[act]
                rows.append((retriever, label, act, metrics(r)))
            qs = sorted(seconds)
            rows.append((retriever, label, "latency", {"p50_ms": 1000 * statistics.median(qs),
                                                       "p95_ms": 1000 * qs[int(0.95 * (len(qs) - 1))]}))
    missing = sorted({q["act"] for q in questions} - indexed)
    print(f"lay questions ({args.split}, {len(questions)}), home {args.home}; indexed: {', '.join(sorted(indexed))}"
          + (f"; NOT indexed (their questions count as misses): {', '.join(missing)}" if missing else ""))
    print(f"{'retriever':15} {'filter':10} {'act':7} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for retriever, filt, act, m in rows:
        if act == "latency":
            print(f"{retriever:15} {filt:10} latency p50 {m['p50_ms']:.0f} ms, p95 {m['p95_ms']:.0f} ms (fresh query "
                  "encodes: the query-vector cache is emptied before every row)")
            continue
        print(f"{retriever:15} {filt:10} {act:7} {m['n']:>4} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f} "
              f"{m['MRR']:>6.3f}")
    if product_pages and lay is not None:
        assess(service, questions, product_pages, load_ooc(args.split), args)
    return 0


def assess(service, questions, pages, ooc, args) -> None:
    """The product hybrid's confidence and out-of-corpus flag on the split: in-corpus = the lay
    questions, out of corpus = the split's out-of-corpus file."""
    import numpy as np

    conf, top_ok, flagged_in = [], [], []
    for q in questions:
        page = pages.get(q["id"])
        if page is None:
            continue
        flagged_in.append("out_of_corpus" in page.flags)  # counted with or without a confidence model
        if page.confidence is None:
            continue
        conf.append(page.confidence)
        top_ok.append(float(bool(page.hits) and page.hits[0].article_id in set(q["gold_articles"])))
    flagged_out, named = [], []
    for q in ooc:
        page = service.search(q["question"], k=args.k, retriever="hybrid")
        flagged_out.append("out_of_corpus" in page.flags)
        named.append(any(a["id"] == q["governing_act"] for a in page.outside_acts))
        if page.confidence is not None:
            conf.append(page.confidence)
            top_ok.append(0.0)
    p, y = np.array(conf), np.array(top_ok)
    n_in, n_out = len(flagged_in), len(flagged_out)
    tp, fp = sum(flagged_out), sum(flagged_in)
    print(f"\nout-of-corpus flag ({args.split}): flags {tp}/{n_out} = {tp / max(n_out, 1):.3f} of the out-of-corpus "
          f"questions (recall), {fp}/{n_in} = {fp / max(n_in, 1):.3f} of the lay questions; precision over both sets "
          f"{tp / max(tp + fp, 1):.3f}; the governing act named on {sum(named)}/{n_out}")
    if len(p):
        bins = np.minimum((p * 10).astype(int), 9)
        ece = sum(abs(p[bins == b].mean() - y[bins == b].mean()) * (bins == b).sum() for b in range(10)
                  if (bins == b).any()) / len(p)
        print(f"confidence ({args.split}, lay + out-of-corpus, {len(p)} answers): mean {p.mean():.3f} vs first-hit "
              f"rate {y.mean():.3f}; Brier {np.mean((p - y) ** 2):.3f}; ECE (10 bins) {ece:.3f}")
        for lo, hi in ((0, .2), (.2, .4), (.4, .6), (.6, .8), (.8, 1.01)):
            s = (p >= lo) & (p < hi)
            if s.any():
                print(f"  confidence [{lo:.1f}, {min(hi, 1):.1f}): n {s.sum():3}, mean {p[s].mean():.2f}, "
                      f"first hit right {y[s].mean():.2f}")


if __name__ == "__main__":
    sys.exit(main())
