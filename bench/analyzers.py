"""Which Polish analyser is best for BM25 on the real task, and how fast each one is.

    .venv/bin/python bench/analyzers.py [--articles PATH] [--chunks PATH] [--exams DIR]

Corpus: the Civil Code articles of one corpus version (default
$LEXPIPE_HOME/corpus/pl/kc/2025-11-13/articles.parquet; build it with
``lexpipe run``). Queries: the unique Civil Code questions of the 2021–2023
exams (``legal_basis`` ending in "k.c."); gold = ``pl:kc:art:<number after "art. ">``.
Retrieval: a self-contained Okapi BM25 (k1=1.2, b=0.75, Lucene idf ln(1+(N-df+.5)/(df+.5)),
every query-token occurrence counts) over article texts. Query = the question ("q") or the
question plus the three choices ("q+opt"); "lead-in" = whether "Zgodnie z Kodeksem cywilnym," is
cut from the question first. Prints recall@1/5/10 and MRR per variant, then analysis throughput
of the retrieval chunks (chunks.parquet beside articles.parquet) and per-query latency.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.retrieval.analyzers import (  # noqa: E402
    Analyzer, build_pipeline, canonical_variant, fold_term, get_analyzer)

K1, B = 1.2, 0.75
LEAD_IN = re.compile(r"^\s*zgodnie\s+z\s+kodeksem\s+cywilnym\s*,\s*", re.IGNORECASE)
BASES = ["pl_lower", "pl_stempel", "pl_stempel_polimorf", "pl_simplemma", "pl_morfeusz"]
MODS = ["", "+fold", "+stop", "+stop+fold", "+keep", "+keep+fold", "+keep+stop"]


class BM25:
    def __init__(self, docs: list[list[str]]):
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for i, toks in enumerate(docs):
            for term, tf in Counter(toks).items():
                rows.append(i)
                cols.append(vocab.setdefault(term, len(vocab)))
                vals.append(tf)
        n = len(docs)
        tf = sparse.csr_matrix((np.array(vals, float), (rows, cols)), shape=(n, len(vocab)))
        dl = np.array([len(d) for d in docs], float)
        avgdl = dl.mean() if n else 1.0
        df = np.bincount(cols, minlength=len(vocab)).astype(float)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        tf = tf.tocoo()
        norm = K1 * (1 - B + B * dl[tf.row] / avgdl)
        w = idf[tf.col] * tf.data * (K1 + 1) / (tf.data + norm)
        self.w = sparse.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape).tocsc()
        self.vocab = vocab

    def scores(self, query: list[str]) -> np.ndarray:
        q = np.zeros(len(self.vocab))
        for t in query:
            j = self.vocab.get(t)
            if j is not None:
                q[j] += 1
        return self.w @ q


def load_queries(exams: str) -> list[dict]:
    seen: dict[str, dict] = {}
    for f in sorted(glob.glob(os.path.join(exams, "202[123]", "*.jsonl"))):
        for line in open(f, encoding="utf-8"):
            r = json.loads(line)
            basis = r["legal_basis"].strip()
            if not basis.endswith("k.c.") or r["question"] in seen:
                continue
            m = re.match(r"art\.\s*([0-9]+(?:\^[0-9]+)?)", basis)
            if not m:
                continue
            seen[r["question"]] = {"q": r["question"], "choices": [r["choices"][k] for k in
                                                                    sorted(r["choices"])],
                                   "gold": f"pl:kc:art:{m.group(1)}"}
    return list(seen.values())


def query_text(q: dict, options: bool, strip_lead_in: bool, no_diacritics: bool = False) -> str:
    text = LEAD_IN.sub("", q["q"]) if strip_lead_in else q["q"]
    text += " " + " ".join(q["choices"]) if options else ""
    return fold_term(text) if no_diacritics else text


def evaluate(index: BM25, ids: list[str], qtoks: list[list[str]], golds: list[str]) -> dict:
    pos = {d: i for i, d in enumerate(ids)}
    ranks = []
    for toks, gold in zip(qtoks, golds):
        s = index.scores(toks)
        order = np.argsort(-s, kind="stable")
        r = int(np.nonzero(order == pos[gold])[0][0]) + 1
        ranks.append(r)
    ranks_a = np.array(ranks)
    return {"R@1": float((ranks_a <= 1).mean()), "R@5": float((ranks_a <= 5).mean()),
            "R@10": float((ranks_a <= 10).mean()), "MRR": float((1 / ranks_a).mean()),
            "ranks": ranks}


def sign_test(a: list[int], b: list[int]) -> tuple[int, int, float]:
    """Queries where a has the gold at rank 1 and b not, the reverse, and the exact two-sided
    binomial (McNemar) p-value of that split."""
    wa = sum(1 for x, y in zip(a, b) if x == 1 and y != 1)
    wb = sum(1 for x, y in zip(a, b) if y == 1 and x != 1)
    n = wa + wb
    if n == 0:
        return 0, 0, 1.0
    k = min(wa, wb)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n * 2
    return wa, wb, min(1.0, p)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--articles", default=str(Path(str(Path(os.environ.get("LEXPIPE_HOME", ".lexpipe")) / "corpus" / "pl" / "kc" / "2025-11-13")) / "articles.parquet"))
    ap.add_argument("--chunks", default=None, help="default: chunks.parquet beside --articles")
    ap.add_argument("--exams", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                           / "pl" / "exams"))
    ap.add_argument("--bases", default=",".join(BASES))
    args = ap.parse_args()

    arts = pq.read_table(args.articles, columns=["id", "text"]).to_pylist()
    ids, texts = [a["id"] for a in arts], [a["text"] or "" for a in arts]
    chunks_path = args.chunks or str(Path(args.articles).with_name("chunks.parquet"))
    chunk_texts = [t or "" for t in pq.read_table(chunks_path, columns=["text"]).column(0)
                   .to_pylist()]
    queries = load_queries(args.exams)
    missing = [q["gold"] for q in queries if q["gold"] not in set(ids)]
    print(f"corpus: {len(ids)} articles; queries: {len(queries)} unique questions "
          f"({len(missing)} gold ids missing from corpus: {missing})")
    queries = [q for q in queries if q["gold"] not in missing]
    golds = [q["gold"] for q in queries]

    bases = [b for b in args.bases.split(",") if b]
    rows = []
    speed = []
    for base in bases:
        try:
            t0 = time.perf_counter()
            get_analyzer("pl", base).analyze("Umowa została zawarta.")  # loads dictionaries
            load_s = time.perf_counter() - t0
        except ImportError as e:
            print(f"skip {base}: {e}")
            continue
        # throughput on a fresh pipeline (empty word memo), tables already loaded
        fresh = Analyzer("pl", base, build_pipeline("pl", base))
        t0 = time.perf_counter()
        out = fresh.analyze_many(chunk_texts, batch_size=256)
        dt = time.perf_counter() - t0
        n_terms = sum(len(x) for x in out)
        an = get_analyzer("pl", base)
        qs = [query_text(q, False, False) for q in queries]
        for q in qs:
            an.analyze(q)  # warm
        lat = []
        for q in qs:
            t1 = time.perf_counter()
            an.analyze(q)
            lat.append(time.perf_counter() - t1)
        speed.append((base, load_s, len(chunk_texts), n_terms, dt, n_terms / dt,
                      statistics.median(lat) * 1e3, max(lat) * 1e3))

        for mod in MODS:
            if base == "pl_lower" and "keep" in mod:
                continue  # no lemma to keep the surface form beside
            variant = canonical_variant("pl", base + mod)
            a = get_analyzer("pl", variant)
            index = BM25(a.analyze_many(texts))
            for strip in (False, True):
                res = {}
                for opt in (False, True):
                    qt = a.analyze_many([query_text(q, opt, strip) for q in queries])
                    res["opt" if opt else "q"] = evaluate(index, ids, qt, golds)
                qt = a.analyze_many([query_text(q, False, strip, True) for q in queries])
                res["nodiac"] = evaluate(index, ids, qt, golds)
                rows.append((variant, strip, res))
                print(f"  done {variant} lead-in-cut={strip}", file=sys.stderr)

    print("\nBM25 (k1=1.2, b=0.75) over article texts; R@k / MRR")
    print("cut = exam lead-in removed from the query; q = question only; q+o = question + the "
          "three choices;\nno-diac = question typed without diacritics (folded query text)")
    hdr = (f"{'variant':28} {'cut':>3} | {'q R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} | "
           f"{'q+o R@1':>7} {'R@5':>6} {'R@10':>6} {'MRR':>6} | {'no-diac R@1':>11} {'MRR':>6}")
    print(hdr)
    print("-" * len(hdr))
    for variant, strip, res in rows:
        q, o, nd = res["q"], res["opt"], res["nodiac"]
        print(f"{variant:28} {'yes' if strip else 'no':>3} | {q['R@1']:6.3f} {q['R@5']:6.3f} "
              f"{q['R@10']:6.3f} {q['MRR']:6.3f} | {o['R@1']:7.3f} {o['R@5']:6.3f} "
              f"{o['R@10']:6.3f} {o['MRR']:6.3f} | {nd['R@1']:11.3f} {nd['MRR']:6.3f}")
    key = lambda r: (round(r[2]["q"]["R@1"], 6), r[2]["q"]["MRR"])  # noqa: E731
    best = max(rows, key=key)
    print(f"\nbest by question-only R@1 then MRR: {best[0]} (lead-in cut: {best[1]})")
    uncut = [r for r in rows if not r[1]]
    best = max(uncut, key=key)
    print(f"best analyser (queries as given, no lead-in cut): {best[0]}  "
          f"R@1 {best[2]['q']['R@1']:.3f} MRR {best[2]['q']['MRR']:.4f}")
    lemma_rows = [r for r in uncut if not r[0].startswith("pl_lower")]
    if lemma_rows:
        bl = max(lemma_rows, key=key)
        print(f"best lemmatising/stemming analyser: {bl[0]}  R@1 {bl[2]['q']['R@1']:.3f} "
              f"MRR {bl[2]['q']['MRR']:.4f}")
    print(f"\nPaired R@1, question only, no cut: {best[0]} vs each (wins / losses, exact "
          "two-sided sign-test p)")
    for variant, strip, res in uncut:
        if variant == best[0]:
            continue
        for mode in ("q", "opt"):
            wa, wb, p = sign_test(best[2][mode]["ranks"], res[mode]["ranks"])
            if mode == "q":
                line = f"  {variant:28} q: {wa:2d}/{wb:2d} p={p:.3f}"
            else:
                line += f"   q+o: {wa:2d}/{wb:2d} p={p:.3f}"
        print(line)

    print(f"\nAnalysis throughput: {len(chunk_texts)} chunks, fresh pipeline (cold word memo), "
          "one process; query latency = analyze(question), warm")
    print(f"{'variant':22} {'load s':>7} {'terms':>8} {'secs':>6} {'terms/s':>9} "
          f"{'q p50 ms':>8} {'q max ms':>8}")
    for base, load_s, _n, n_terms, dt, tps, p50, mx in speed:
        print(f"{base:22} {load_s:7.2f} {n_terms:8d} {dt:6.2f} {tps:9.0f} {p50:8.2f} {mx:8.2f}")


if __name__ == "__main__":
    main()
