"""Train and measure the Polish last search stage: the article fusion with the representation legs,
the calibrated confidence and the out-of-corpus flag — all out of fold.

    .venv/bin/python bench/train_lay_fusion.py --home H [--cache DIR] [--save] [--legs …] [--lay-weight 3]

The home must hold the four codes indexed (``make run``) and the representation store
(``lexpipe representations`` or the pipeline step). Query sets (training material only):

* exam 2012–2020: every unique question whose gold article is in a held code (the product path:
  the code the question names is searched, its lead-in left out); each exam year is scored with the
  representation rows of the *other* years only (its own questions and their LQAD copies masked),
  and its fusion weights are fitted without it (leave one year out);
* lay dev (``bench/data/pl_lay_questions_dev.jsonl``, 120): five folds (sha256 of the id);
* out of corpus: ``bench/data/pl_out_of_corpus.jsonl`` (60, five folds) and the exam questions of
  2012–2020 about acts the corpus does not hold (lead-in left out, leave one year out);
* the query-topic model (``out_of_corpus_topic``: the query embedding's act, or outside) is fitted
  per fold too — without the query's exam year's store rows, or without its lay / out-of-corpus
  dev fold — and its log-odds feed the confidence and out-of-corpus models.

The test files (lay test, out-of-corpus test, exam 2021–2023) are never read here. ``--save`` fits
every model on all of it and writes ``pipelines/retrieval/models/{article_fusion,confidence,
out_of_corpus,query_topic}_pl.json``. The backend's rankings are cached in --cache (they do not depend on
anything trained here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pickle
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parent / "data"
HELD = ("pl:kc", "pl:kpc", "pl:kp", "pl:kk")


@dataclass
class Query:
    qid: str
    text: str
    kind: str  # exam | lay | ooc | exam_out
    gold: list[str]
    act: str | None
    fold: int | str  # exam: year; others: 0..4
    year: int | None = None
    # filled by the backend pass
    searched: str = ""
    acts: tuple[str, ...] = ()
    named_held: bool = False
    rankings: dict = field(default_factory=dict)
    vec: np.ndarray | None = None


def load_queries(sample_dir: Path) -> list[Query]:
    from pipelines.benchmarks.legal_basis import gold_articles
    from pipelines.benchmarks.section_prior import assign_folds
    from pipelines.retrieval.evaluation import load_exam_questions
    from pipelines.retrieval.query_prep import strip_boilerplate
    from pipelines.retrieval.representations.sources import TRAINING_EXAM_YEARS

    out: list[Query] = []
    exams = load_exam_questions(sample_dir / "pl" / "exams", TRAINING_EXAM_YEARS, act_suffix=None,
                                resolve=lambda b: gold_articles(b, list(HELD)))
    seen = set()
    for q in exams:
        year = int(q.qid[:4])
        out.append(Query(q.qid, q.question, "exam", list(q.gold_articles), q.act, year, year))
        seen.add(q.question)
    # questions about acts not held: the legal basis resolves to no held article
    for year in TRAINING_EXAM_YEARS:
        for f in sorted((sample_dir / "pl" / "exams" / str(year)).glob("*.jsonl")):
            for line in f.open(encoding="utf-8"):
                r = json.loads(line)
                if r["question"] in seen or gold_articles(r["legal_basis"], list(HELD)):
                    continue
                seen.add(r["question"])
                text = strip_boilerplate(r["question"])
                if text != r["question"].strip():  # only questions whose act-naming lead-in could be left out
                    out.append(Query(f"{year}/{f.stem}#{r['id']}", text, "exam_out", [], None, year, year))
    for kind, name in (("lay", "pl_lay_questions_dev.jsonl"), ("ooc", "pl_out_of_corpus.jsonl")):
        rows = [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        folds = assign_folds([r["id"] for r in rows], 5, 13)
        for r, fold in zip(rows, folds):
            out.append(Query(r["id"], r["question"], kind, r.get("gold_articles", []), r.get("act"), fold))
    return out


class Recorder:
    """A last stage that records what the real one would see (the request after the service's act
    narrowing and lead-in stripping) and answers with the backend's hybrid."""

    def __init__(self, lay):
        self.lay = lay
        self.last = None

    def search(self, backend, request, *, named_held=False):
        rankings, hits, vec = self.lay.rankings(backend, request)
        self.last = (request, rankings, vec, named_held)
        return [hits[a] for a, _ in rankings["hybrid"][:request.k]], None


def backend_pass(queries: list[Query], home: Path, cache: Path) -> None:
    """Fill each query's backend rankings (cached on disk by query id + text)."""
    store = cache / "backend.pkl"
    known = pickle.loads(store.read_bytes()) if store.exists() else {}
    todo = [q for q in queries if (q.qid, q.text) not in known]
    if todo:
        os.environ["LEXPIPE_HOME"] = str(home)
        from core.settings import get_settings
        from pipelines.retrieval import lay_search
        from pipelines.retrieval.service import SearchService

        service = SearchService.from_settings(get_settings())
        lay = lay_search.open_polish(home, service.backend.encoder.id)
        if lay is None:
            raise SystemExit(f"{home}: no Polish representation store built with {service.backend.encoder.id}")
        rec = Recorder(lay)
        service._lay["pl"] = rec
        for i, q in enumerate(todo, 1):
            service.search(q.text, k=10, retriever="hybrid")
            request, rankings, vec, named_held = rec.last
            known[(q.qid, q.text)] = {"searched": request.query, "acts": request.filters.act_ids,
                                      "named_held": named_held, "rankings": rankings, "vec": vec}
            if i % 200 == 0:
                print(f"  backend pass {i}/{len(todo)}", file=sys.stderr, flush=True)
                store.write_bytes(pickle.dumps(known))
        store.write_bytes(pickle.dumps(known))
    for q in queries:
        k = known[(q.qid, q.text)]
        q.searched, q.acts, q.named_held, q.vec = k["searched"], tuple(k["acts"]), k["named_held"], k["vec"]
        q.rankings = {leg: k["rankings"][leg] for leg in ("hybrid", "dense", "bm25")}


def exclusion(index, q: Query) -> np.ndarray | None:
    """Rows a training query must not see: its own exam year's questions (and their LQAD copies)."""
    if q.year is None:
        return None
    return np.isin(index.kinds, ["exam", "lqad"]) & (index.years == q.year)


def rep_pass(queries: list[Query], index, analyzer, kinds=None) -> None:
    from pipelines.retrieval.representations.search import outside_evidence, rep_legs

    for q in queries:
        ex = exclusion(index, q)
        legs = rep_legs(index, analyzer.analyze(q.searched), q.vec, acts=q.acts or None, kinds=kinds, exclude=ex)
        q.rankings.update(rep_bm25=legs.rep_bm25, rep_dense=legs.rep_dense, rep_knn=legs.rep_knn)
        pool = list(dict.fromkeys(a for leg in ("hybrid", "dense", "bm25") for a, _ in q.rankings[leg]))
        q.rankings["article_dense"] = index.article_scores(q.vec, pool)
        q.outside = outside_evidence(index, q.vec, exclude=ex)


def topic_fit(queries: list[Query], index, *, lay_weight: float, exclude_year=None, exclude_fold=None, provenance=None):
    """The query-topic model (held act or outside) on the store's exam/LQAD questions (``exclude_year``:
    that exam year's rows left out) and the lay / out-of-corpus dev questions (``exclude_fold``: that
    fold of both left out)."""
    from pipelines.retrieval.out_of_corpus_topic import OUTSIDE, fit_topic, training_rows

    ex = None if exclude_year is None else np.isin(index.kinds, ["exam", "lqad"]) & (index.years == exclude_year)
    x, labels = training_rows(index, exclude=ex, held_acts=HELD)
    xs, ws = [x], [np.ones(len(labels))]
    for q in queries:
        if q.kind in ("lay", "ooc") and q.fold != exclude_fold:
            xs.append(np.asarray(q.vec, dtype=np.float64)[None])
            labels.append(q.act if q.kind == "lay" else OUTSIDE)
            ws.append(np.array([lay_weight]))
    return fit_topic(np.concatenate(xs), labels, classes=[*HELD, OUTSIDE], sample_weight=np.concatenate(ws),
                     provenance=provenance)


def topic_pass(queries: list[Query], index, *, lay_weight: float) -> None:
    """Each query's out-of-corpus topic log-odds, out of fold: exam questions (in- and outside) from the
    model without their year's rows, lay and out-of-corpus dev from the model without their fold."""
    models = {}
    for q in queries:
        key = ("year", q.year) if q.year is not None else ("fold", q.fold)
        if key not in models:
            models[key] = (topic_fit(queries, index, lay_weight=lay_weight, exclude_year=q.year) if q.year is not None
                           else topic_fit(queries, index, lay_weight=lay_weight, exclude_fold=q.fold))
        q.topic = models[key].outside_logit(q.vec)


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {**{f"R@{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)},
            "MRR": sum(1 / r for r in ranks if r) / n, "n": len(ranks)}


def first_rank(order, gold) -> int | None:
    g = set(gold)
    return next((i for i, a in enumerate(order, 1) if a in g), None)


def fmt(m: dict) -> str:
    return f"{m['R@1']:.3f} / {m['R@5']:.3f} / {m['R@10']:.3f} / {m['MRR']:.3f}"


def fold_key(q: Query) -> tuple[str, object]:
    return ("exam", q.fold) if q.kind in ("exam", "exam_out") else (q.kind, q.fold)


def fit_fusion(train: list[Query], reps_per_article, *, legs, lay_weight: int, prior: bool):
    from pipelines.retrieval.article_fusion import candidate_features
    from pipelines.retrieval.section_fusion import fit_listwise

    groups = []
    for q in train:
        if not q.gold:
            continue
        order, x = candidate_features(q.rankings, q.question_flag, legs=legs,
                                      reps_per_article=reps_per_article if prior else None)
        y = np.array([a in set(q.gold) for a in order])
        for _ in range(lay_weight if q.kind == "lay" else 1):
            groups.append((x, y))
    return fit_listwise(groups, l2=1e-2)


def rank_with(w, mean, std, q: Query, reps_per_article, *, legs, prior: bool) -> list[tuple[str, float]]:
    from pipelines.retrieval.article_fusion import candidate_features

    order, x = candidate_features(q.rankings, q.question_flag, legs=legs,
                                  reps_per_article=reps_per_article if prior else None)
    if not order:
        return []
    s = ((x - mean) / std) @ w
    return [(order[i], float(s[i])) for i in np.argsort(-s, kind="stable")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR",
                                                           str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--cache", default=None, help="directory for the backend rankings (default: <home>/../lay_fusion_cache)")
    ap.add_argument("--legs", default="hybrid,dense,bm25,rep_bm25,rep_dense,rep_knn,article_dense")
    ap.add_argument("--kinds", default="exam,lqad,saos", help="representation kinds the legs read")
    ap.add_argument("--no-prior", action="store_true")
    ap.add_argument("--lay-weight", type=int, default=3)
    ap.add_argument("--flag-rate", type=float, default=0.07, help="largest share of lay dev questions the flag may fire on")
    ap.add_argument("--save", action="store_true", help="fit on everything and write the model files")
    args = ap.parse_args()

    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.article_fusion import POOL_LEGS, feature_names, is_question
    from pipelines.retrieval.confidence import fit_logistic, query_features
    from pipelines.retrieval.outside_acts import named_outside_acts
    from pipelines.retrieval.representations.store import RepresentationIndex

    home = Path(args.home).resolve()
    cache = Path(args.cache) if args.cache else home.parent / f"{home.name}-lay-fusion-cache"
    cache.mkdir(parents=True, exist_ok=True)
    index = RepresentationIndex.open(home, "pl")
    if index is None:
        raise SystemExit(f"{home}: no representation store; build it first")
    queries = load_queries(Path(args.sample_dir))
    counts = defaultdict(int)
    for q in queries:
        counts[q.kind] += 1
    print(f"queries: {dict(counts)}; representation store: {len(index)} rows {index.manifest.get('per_kind')}")
    backend_pass(queries, home, cache)
    kinds = [k for k in args.kinds.split(",") if k]
    analyzer = get_analyzer("pl")
    rep_pass(queries, index, analyzer, kinds=kinds)
    legs = tuple(x for x in args.legs.split(",") if x)
    if not set(POOL_LEGS) <= set(legs):
        raise SystemExit(f"--legs must include the pool legs {POOL_LEGS}")
    prior = not args.no_prior
    reps = {}
    for a, k in zip(index.article_ids, index.kinds):
        if a is not None and k in kinds:
            reps[a] = reps.get(a, 0) + 1
    for q in queries:
        q.question_flag = is_question(q.searched)
    topic_pass(queries, index, lay_weight=args.lay_weight)

    # -- article fusion, out of fold -------------------------------------------------------------
    fused: dict[str, list[tuple[str, float]]] = {}
    scored = [q for q in queries if q.kind in ("exam", "lay", "ooc", "exam_out")]
    by_fold = defaultdict(list)
    for q in scored:
        by_fold[fold_key(q)].append(q)
    for key, members in sorted(by_fold.items(), key=lambda kv: str(kv[0])):
        train = [q for q in queries if q.gold and fold_key(q) != key]
        w, mean, std = fit_fusion(train, reps, legs=legs, lay_weight=args.lay_weight, prior=prior)
        for q in members:
            fused[q.qid] = rank_with(w, mean, std, q, reps, legs=legs, prior=prior)
    print(f"\nArticle level, out of fold (exam: leave one year out; lay dev: 5 folds); legs {', '.join(legs)}; "
          f"kinds {', '.join(kinds)}; prior {prior}; lay weight {args.lay_weight}")
    shown = ("hybrid", "dense", "bm25", "rep_bm25", "rep_dense", "rep_knn", "article_dense")
    print("| set | act | n | " + " | ".join([*shown, "**fused**"]) + " |")
    print("|---|---|---:|" + "---|" * (len(shown) + 1))
    for kind in ("lay", "exam"):
        qs = [q for q in queries if q.kind == kind]
        for act in [*sorted({q.act for q in qs}), "all"]:
            sub = [q for q in qs if act == "all" or q.act == act]
            cells = [fmt(metrics([first_rank([a for a, _ in q.rankings.get(leg, [])], q.gold) for q in sub]))
                     for leg in shown]
            cells.append("**" + fmt(metrics([first_rank([a for a, _ in fused[q.qid]], q.gold) for q in sub])) + "**")
            print(f"| {kind} dev | {act} | {len(sub)} | " + " | ".join(cells) + " |")

    # -- confidence and out-of-corpus, out of fold -------------------------------------------------
    x_all, y_top, y_out, keys, kinds_of = [], [], [], [], []
    for q in scored:
        f = fused[q.qid]
        x = query_features(f, {**q.rankings}, question=q.question_flag, outside_share=q.outside.share,
                           outside_gap=q.outside.best_outside - q.outside.best_inside,
                           named_outside=bool(named_outside_acts(q.text)), named_held=q.named_held,
                           words=len(q.text.split()), outside_topic=q.topic)
        x_all.append(x)
        y_top.append(float(bool(f) and f[0][0] in set(q.gold)))
        y_out.append(float(q.kind in ("ooc", "exam_out")))
        keys.append(fold_key(q))
        kinds_of.append(q.kind)
    x_all, y_top, y_out = np.array(x_all), np.array(y_top), np.array(y_out)
    kinds_arr = np.array(kinds_of)
    weight = np.where(np.isin(kinds_arr, ["lay", "ooc"]), float(args.lay_weight), 1.0)
    p_top, p_out = np.zeros(len(y_top)), np.zeros(len(y_top))
    for key in set(keys):
        test = np.array([k == key for k in keys])
        m_top = fit_logistic(x_all[~test], y_top[~test], sample_weight=weight[~test])
        m_out = fit_logistic(x_all[~test], y_out[~test], sample_weight=weight[~test])
        p_top[test] = m_top.probability(x_all[test])
        p_out[test] = m_out.probability(x_all[test])
    print("\nConfidence (P(first hit is the gold article)), out of fold: Brier / ECE (10 bins) / mean p vs rate")
    for kind in ("lay", "exam", "ooc", "exam_out"):
        sel = kinds_arr == kind
        print(f"  {kind:8} n {sel.sum():4}: Brier {np.mean((p_top[sel] - y_top[sel]) ** 2):.3f}, "
              f"ECE {ece(p_top[sel], y_top[sel]):.3f}, mean p {p_top[sel].mean():.3f} vs top-1 rate {y_top[sel].mean():.3f}")
    sel = np.isin(kinds_arr, ["lay", "ooc"])
    print("  reliability (lay + ooc dev): " + reliability(p_top[sel], y_top[sel]))
    named = np.array([bool(named_outside_acts(q.text)) and not q.named_held for q in scored])
    lay, ooc = kinds_arr == "lay", kinds_arr == "ooc"
    cands = sorted(set(np.round(p_out[lay | ooc], 4)))
    best = None
    for t in cands:
        flag = (p_out >= t) | named
        rate = flag[lay].mean()
        if rate <= args.flag_rate and (best is None or flag[ooc].mean() > best[1]):
            best = (t, flag[ooc].mean(), rate)
    t = best[0] if best else 0.5
    flag = (p_out >= t) | named
    print(f"\nOut-of-corpus flag, out of fold, threshold {t:.3f} (chosen on these dev figures: lay dev ≤ {args.flag_rate:.0%}): "
          f"flags {flag[ooc].mean():.3f} of the out-of-corpus dev questions ({flag[ooc].sum()}/{ooc.sum()}), "
          f"{flag[lay].mean():.3f} of lay dev ({flag[lay].sum()}/{lay.sum()}), "
          f"{flag[kinds_arr == 'exam'].mean():.3f} of exam dev, {flag[kinds_arr == 'exam_out'].mean():.3f} of exam out-of-corpus")

    if args.save:
        from pipelines.retrieval.article_fusion import ArticleFusion, default_model_path
        from pipelines.retrieval.confidence import default_model_path as conf_path

        if legs != tuple(x for x in feature_names() if x.endswith("_lr") and not x.endswith("_q")) and False:
            pass
        train = [q for q in queries if q.gold]
        w, mean, std = fit_fusion(train, reps, legs=legs, lay_weight=args.lay_weight, prior=prior)
        prov = {"trained_on": "exam questions 2012–2020 (each year with the other years' representations), "
                              "lay dev (bench/data/pl_lay_questions_dev.jsonl)",
                "store": index.manifest.get("per_kind"), "encoder": index.manifest.get("encoder"),
                "lay_weight": args.lay_weight, "trained_at": dt.date.today().isoformat(),
                "command": "bench/train_lay_fusion.py --save"}
        ArticleFusion(w.tolist(), mean.tolist(), std.tolist(), list(feature_names(legs, prior=prior)),
                      prov).save(default_model_path("pl"))
        m_top = fit_logistic(x_all, y_top, sample_weight=weight, provenance={**prov, "target": "first hit is gold"})
        m_out = fit_logistic(x_all, y_out, sample_weight=weight,
                             provenance={**prov, "target": "no held act governs the question",
                                         "oof_threshold_dev": {"lay_flagged": float(flag[lay].mean()),
                                                               "ooc_flagged": float(flag[ooc].mean())}})
        m_out.threshold = float(t)
        m_top.save(conf_path("confidence", "pl"))
        m_out.save(conf_path("out_of_corpus", "pl"))
        from pipelines.retrieval.out_of_corpus_topic import default_model_path as topic_path

        topic = topic_fit(queries, index, lay_weight=args.lay_weight,
                          provenance={**prov, "trained_on": "representation store exam 2012–2020 and LQAD questions "
                                      "(held act or outside), lay dev (its act), out-of-corpus dev (outside)"})
        topic.save(topic_path("pl"))
        print(f"saved {default_model_path('pl')}, {conf_path('confidence', 'pl')}, {conf_path('out_of_corpus', 'pl')}, "
              f"{topic_path('pl')}")
    return 0


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(p[idx == b].mean() - y[idx == b].mean()) * (idx == b).sum() for b in range(bins)
                     if (idx == b).any()) / max(len(p), 1))


def reliability(p: np.ndarray, y: np.ndarray, edges=(0, 0.2, 0.4, 0.6, 0.8, 1.01)) -> str:
    out = []
    for lo, hi in zip(edges, edges[1:]):
        s = (p >= lo) & (p < hi)
        if s.any():
            out.append(f"[{lo:.1f},{min(hi, 1):.1f}) n {s.sum()} p {p[s].mean():.2f} rate {y[s].mean():.2f}")
    return "; ".join(out)


if __name__ == "__main__":
    sys.exit(main())
