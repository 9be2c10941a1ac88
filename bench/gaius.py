"""gAIus retriever: speed of the vectorised scorer against the plain definition, and article-level
recall on the 2021–2023 Civil Code exam questions.

    .venv/bin/python bench/gaius.py [--corpus DIR] [--exams DIR] [--ref-queries 5] [--repeat 3]

* speed: the plain reference (Algorithms 1/2 written literally, imported from
  tests/pipelines/retrieval/test_gaius.py) scores all chunks of the corpus for ``--ref-queries``
  questions (it takes seconds per query, so only a few are timed); the fast scorer runs on the same
  queries (median of ``--repeat`` runs) and on every question. Scores must be identical (asserted).
* recall: for the unique questions whose legal_basis ends with "k.c.", chunks are ranked by gAIus
  over all chunks of the version (no filters), collapsed to articles (best chunk per article), and
  recall@1/5/10/50 and MRR (over the full ranking, no cut-off) are computed against the cited
  article(s): ``art. N[^M]`` → ``pl:kc:art:N[^M]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pipelines.retrieval.gaius import GaiusIndex, GaiusRetriever  # noqa: E402
from pipelines.retrieval.interface import Hit, SearchRequest, collapse_to_articles  # noqa: E402
from pipelines.retrieval.query_prep import strip_boilerplate  # noqa: E402

KS = (1, 5, 10, 50)


def load_reference():
    """The plain reference implementation lives in the test file: one definition for both."""
    path = REPO / "tests" / "pipelines" / "retrieval" / "test_gaius.py"
    spec = importlib.util.spec_from_file_location("_gaius_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.reference_score


def gold_articles(legal_basis: str, act: str) -> set[str]:
    return {f"{act}:art:{n}" for n in re.findall(r"art\.\s*(\d+(?:\^\d+)?)", legal_basis)}


def load_questions(exams: Path, years: list[int]) -> list[tuple[str, set[str]]]:
    """Unique Civil Code questions (legal_basis ends with 'k.c.'), gold = union of cited articles."""
    by_q: dict[str, set[str]] = {}
    for y in years:
        for f in sorted((exams / str(y)).glob("*.jsonl")):
            for line in f.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                r = json.loads(line)
                if r["legal_basis"].strip().endswith("k.c."):
                    by_q.setdefault(r["question"], set()).update(gold_articles(r["legal_basis"], "pl:kc"))
    return list(by_q.items())


def article_ranking(retriever: GaiusRetriever, query: str) -> list[Hit]:
    hits = retriever.search(SearchRequest(query=query, k=len(retriever), retriever="gaius"))
    return collapse_to_articles(hits, k=len(retriever))


def evaluate(retriever: GaiusRetriever, questions, prep) -> dict[str, float]:
    recall = {k: 0.0 for k in KS}
    rr = 0.0
    for q, gold in questions:
        ranked = [h.article_id for h in article_ranking(retriever, prep(q))]
        for k in KS:
            recall[k] += len(gold & set(ranked[:k])) / len(gold)
        first = next((i for i, a in enumerate(ranked, 1) if a in gold), None)
        rr += 1.0 / first if first else 0.0
    n = len(questions)
    return {**{f"R@{k}": recall[k] / n for k in KS}, "MRR": rr / n}


def main() -> None:
    shared = Path(os.environ.get("LEXPIPE_SAMPLE_DIR", REPO.parent / "shared" / "data"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(Path(os.environ.get("LEXPIPE_HOME", ".lexpipe")) / "corpus" / "pl" / "kc" / "2025-11-13"),
                    help="folder with chunks.parquet (build it with: lexpipe run)")
    ap.add_argument("--exams", default=str(shared / "pl" / "exams"))
    ap.add_argument("--years", default="2021,2022,2023")
    ap.add_argument("--ref-queries", type=int, default=5, help="questions timed with the slow reference")
    ap.add_argument("--repeat", type=int, default=3, help="fast runs per query; the median is reported")
    args = ap.parse_args()

    table = pq.read_table(Path(args.corpus) / "chunks.parquet")
    texts = table.column("text").to_pylist()
    questions = load_questions(Path(args.exams), [int(y) for y in args.years.split(",")])
    n_chars = sum(map(len, texts))
    print(f"corpus: {args.corpus}  chunks={len(texts)}  characters={n_chars}  cpus={os.cpu_count()}")
    print(f"questions: {len(questions)} unique Civil Code questions ({args.years})")

    # ---------------------------------------------------------------- speed
    reference_score = load_reference()
    t0 = time.perf_counter()
    index = GaiusIndex(texts)  # raw characters, exactly the reference's input
    build_s = time.perf_counter() - t0
    raw = [q for q, _ in questions]
    stripped = [strip_boilerplate(q) for q in raw]
    # reference queries: spread over lengths (shortest, median, longest stripped question, ...)
    by_len = sorted(range(len(stripped)), key=lambda i: (len(stripped[i]), i))
    picks = [by_len[round(j * (len(by_len) - 1) / max(1, args.ref_queries - 1))] for j in range(args.ref_queries)]
    bench_queries = [stripped[i] for i in picks]
    ref_s, fast_s, ref_cpu, fast_cpu = [], [], [], []
    for q in bench_queries:
        t0, c0 = time.perf_counter(), time.process_time()
        ref = [reference_score(q, d) for d in texts]
        ref_s.append(time.perf_counter() - t0)
        ref_cpu.append(time.process_time() - c0)
        runs, cpu = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            fast = index.scores(q)
            runs.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        fast_s.append(statistics.median(runs))
        fast_cpu.append(statistics.median(cpu))
        assert fast.tolist() == ref, f"fast scores differ from the reference for {q!r}"
    all_s = []
    for q in raw + stripped:
        t0 = time.perf_counter()
        index.scores(q)
        all_s.append(time.perf_counter() - t0)

    print(f"\nindex build: {build_s:.3f} s (once)   load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    print(f"\n{'query (stripped)':<24} {'chars':>5} {'reference s':>11} {'fast s':>9} {'speed-up':>9}"
          f" {'(CPU s: ref':>12} {'fast':>7} {'speed-up)':>9}  identical")
    for q, r, f, rc, fc in zip(bench_queries, ref_s, fast_s, ref_cpu, fast_cpu):
        print(f"{(q[:21] + '…') if len(q) > 22 else q:<24} {len(q):5d} {r:11.3f} {f:9.4f} {r / f:8.0f}× {rc:12.3f} {fc:7.4f} {rc / fc:8.0f}×  yes")
    mean_ref, mean_fast = statistics.mean(ref_s), statistics.mean(fast_s)
    print(f"{'mean':<24} {round(statistics.mean(map(len, bench_queries))):5d} {mean_ref:11.3f} {mean_fast:9.4f} "
          f"{mean_ref / mean_fast:8.0f}× {statistics.mean(ref_cpu):12.3f} {statistics.mean(fast_cpu):7.4f} "
          f"{statistics.mean(ref_cpu) / statistics.mean(fast_cpu):8.0f}×  (reference timed on these "
          f"{len(bench_queries)} queries only)")
    mean_all = statistics.mean(all_s)
    # reference cost model: a per window + b per character comparison (Algorithm 1 × Algorithm 2),
    # fitted on the timed queries, predicted for every query
    lengths = np.array([len(t) for t in texts])

    def work(q: str) -> tuple[float, float]:
        w = float(np.maximum(lengths - len(q) + 1, 0).sum()) if q else float((lengths + 1).sum())
        return w, w * len(q)

    (a, b), *_ = np.linalg.lstsq(np.array([work(q) for q in bench_queries]), np.array(ref_s), rcond=None)
    if a < 0 or b < 0:  # noisy timings: fall back to one rate per character comparison
        a, b = 0.0, sum(ref_s) / sum(work(q)[1] for q in bench_queries)
    predicted = [a * w + b * c for w, c in map(work, raw + stripped)]
    mean_len_all = statistics.mean(map(len, raw + stripped))
    print(f"fast, all {len(all_s)} queries (raw + stripped, mean {mean_len_all:.0f} chars): mean {mean_all:.4f} s, "
          f"median {statistics.median(all_s):.4f} s, max {max(all_s):.4f} s (wall)")
    print(f"reference extrapolated to those {len(all_s)} queries (fit on the timed ones: {a * 1e9:.0f} ns/window + "
          f"{b * 1e9:.0f} ns/char comparison): mean ~{statistics.mean(predicted):.2f} s/query "
          f"→ speed-up ~{sum(predicted) / sum(all_s):.0f}×")
    speedup = mean_ref / mean_fast
    assert speedup >= 100, f"speed-up {speedup:.0f}× < 100×"

    # ---------------------------------------------------------------- recall
    variants = [
        ("(a) raw question", GaiusRetriever(table), lambda q: q),
        ("(b) boilerplate stripped", GaiusRetriever(table), strip_boilerplate),
        ("(b') stripped, first letter capitalised", GaiusRetriever(table),
         lambda q: strip_boilerplate(q, capitalize=True)),
        ("(c) stripped + lowercase (not in paper)", GaiusRetriever(table, lowercase=True), strip_boilerplate),
    ]
    present = {a for a in table.column("article_id").to_pylist()}
    missing = sorted({g for _, gold in questions for g in gold} - present)
    print(f"\narticle-level recall, {len(questions)} questions, gold articles missing from the corpus: {missing or 'none'}")
    print(f"{'query':42} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'R@50':>6} {'MRR':>6}")
    for name, retr, prep in variants:
        m = evaluate(retr, questions, prep)
        print(f"{name:42} " + " ".join(f"{m[k]:6.3f}" for k in ("R@1", "R@5", "R@10", "R@50", "MRR")))

    # questions whose gold article cannot score at all: every chunk of it is shorter than the query
    art_len: dict[str, int] = {}
    for a, t in zip(table.column("article_id").to_pylist(), texts):
        art_len[a] = max(art_len.get(a, 0), len(t))
    for label, qs in (("raw", raw), ("stripped", stripped)):
        blind = sum(1 for q, (_, gold) in zip(qs, questions) if all(art_len.get(g, 0) < len(q) for g in gold))
        print(f"{label}: {blind} questions whose gold article(s) are shorter than the query (score 0 by definition)")


if __name__ == "__main__":
    main()
