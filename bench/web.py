"""What the search page adds to the search API's latency (issue 17, point 4: ≤ 10 ms).

    .venv/bin/python bench/web.py [--home .lexpipe] [--queries 20] [--n 5] [--seed 0] [--profile]

The same app ``lexpipe serve`` runs (``create_app`` over ``SearchService.from_settings`` and the
home's reads, encoder from ``LEXPIPE_ENCODER``: the real one for the real home), in process through
FastAPI's TestClient (routing, validation, the JSON or HTML answer; no network). Queries, fixed: the
first ``--queries`` Civil Code questions of the Polish professional exams 2021–2023
(``<sample dir>/pl/exams``) when a Polish statute index is served, and as many GerLayQA dev questions
(``<sample dir>/de/gerlayqa/bgb_dev.json``, lay questions of ~1,100 characters, searched with
``act=de:bgb``) when ``de:bgb`` is served. ``make run``'s home has no German search index; a German
one is built in minutes with the hashing encoder (``LEXPIPE_ENCODER=hashing lexpipe index --act
de:bgb --home DIR`` over a copy of ``corpus/de/bgb``), the real encoder needs about an hour on 2
busy cores.

Per query and repetition, in shuffled order: ``GET /search?q=…&k=10`` (JSON, one page),
``GET /search?q=…&k=33`` (JSON, the same search the page makes: ``lexpipe.web.views.candidate_k``)
and ``GET /ui/search?q=…`` (the page of 10), after one warm-up round of all three. Every triple is
checked: the page lists the JSON answer's first 10 articles in the same order. Warm means warm: after
the warm-up every query's vector is in the encoder's cache, so the figures are the search itself
plus each answer's own work. Prints p50 / p95 / mean per path and language and the added ms
(page − JSON) at p50 / p95 — of the two distributions, and per triple (which also carries the jitter
of two independent requests on a shared machine). ``--profile``: the page's endpoint called in
process per query under cProfile, the cumulative ms of its parts (search, highlight, facets,
template render) per view.
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import json
import os
import pstats
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reads import cpu_times, pct, stolen_share  # noqa: E402  (bench/, the script's folder)

HIT_ID = re.compile(r'<li[^>]*class="[^"]*\bhit\b[^"]*"[^>]*data-article-id="([^"]+)"')
# a question's lead-in names its act ("Zgodnie z Kodeksem cywilnym, …"); kept: a real query
PL_GLOB = ("2021", "2022", "2023")


def polish_queries(sample_dir: Path, n: int) -> list[str]:
    """The first ``n`` distinct Civil Code exam questions (``legal_basis`` ending in "k.c."),
    2021–2023, in file order."""
    out: list[str] = []
    for year in PL_GLOB:
        for f in sorted(glob.glob(str(sample_dir / "pl" / "exams" / year / "*.jsonl"))):
            for line in open(f, encoding="utf-8"):
                r = json.loads(line)
                if r["legal_basis"].strip().endswith("k.c.") and r["question"] not in out:
                    out.append(r["question"])
                    if len(out) == n:
                        return out
    if not out:
        raise SystemExit(f"no exam questions under {sample_dir / 'pl' / 'exams'}")
    return out


def german_queries(sample_dir: Path, n: int) -> list[str]:
    """The first ``n`` GerLayQA dev questions (lay questions about the BGB, ~1,100 characters)."""
    path = sample_dir / "de" / "gerlayqa" / "bgb_dev.json"
    return [q["Question_text"] for q in json.loads(path.read_text(encoding="utf-8"))[:n]]


def page_ids(html: str) -> list[str]:
    from html import unescape

    return [unescape(i) for i in HIT_ID.findall(html)]


def row(name: str, xs: list[float]) -> str:
    return (f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, .95):.1f} | "
            f"{statistics.fmean(xs):.1f} |")


PROFILED = {  # (file suffix, function) → what it is, in the order of a page view
    ("lexpipe/web/router.py", "search_page"): "the page's endpoint, all of it",
    ("lexpipe/web/views.py", "search_view"): "search_view: the search, facets, highlights, pager",
    ("pipelines/retrieval/service.py", "search"): "SearchService.search (the same call the JSON API makes)",
    ("pipelines/retrieval/highlight.py", "snippet_html"): "highlight: snippet_html",
    ("pipelines/retrieval/facets.py", "facet_counts"): "facet_counts",
    ("jinja2/environment.py", "render"): "template render (Jinja2)",
    ("lexpipe/web/views.py", "href"): "links (pager, facets, hits: urlencode)",
}


def profile(app, sets: dict[str, tuple[list[str], dict]]) -> None:
    """Where a page view's time goes: the page endpoint called in this thread (the TestClient runs
    the app in another, out of cProfile's sight) once per query, the cumulative time of its parts
    per view. cProfile's overhead inflates every figure; the shares are what to read."""
    from starlette.requests import Request
    from urllib.parse import urlencode

    from lexpipe.web import router as web

    from lexpipe.web.views import SearchParams, candidate_k

    service = app.state.search
    k = candidate_k(SearchParams(q="x"))

    def page_view(q: str, extra: dict):
        scope = {"type": "http", "method": "GET", "path": "/ui/search", "headers": [],
                 "query_string": urlencode({"q": q, **extra}).encode(), "app": app}
        return web.search_page(Request(scope), service=service)

    # first without the profiler: the endpoint against its own search call, same thread, no HTTP
    print()
    print(f"the page's endpoint in process against the same SearchService.search(k={k}), 3 rounds, no profiler:")
    print()
    print("| language | endpoint p50 / p95 ms | search p50 / p95 ms | the page's own work p50 / p95 ms |")
    print("|---|---:|---:|---:|")
    for lang, (queries, extra) in sets.items():
        ends, searches = [], []
        for _ in range(3):
            for q in queries:
                t = time.perf_counter()
                page_view(q, extra)
                ends.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                service.search(q, k=k, acts=[extra["act"]] if "act" in extra else None)
                searches.append((time.perf_counter() - t) * 1000)
        own = [e - s for e, s in zip(ends, searches)]
        print(f"| {lang} | {statistics.median(ends):.1f} / {pct(ends, .95):.1f} | {statistics.median(searches):.1f} / "
              f"{pct(searches, .95):.1f} | {statistics.median(own):.1f} / {pct(own, .95):.1f} |")

    views = 0
    prof = cProfile.Profile()
    for queries, extra in sets.values():
        for q in queries:
            prof.enable()
            page_view(q, extra)
            prof.disable()
            views += 1
    stats = pstats.Stats(prof).stats
    print()
    print(f"where a page view's time goes (cProfile, {views} views, cumulative ms per view):")
    print()
    print("| part | ms per view |")
    print("|---|---:|")
    for (suffix, name), what in PROFILED.items():
        ct = sum(v[3] for (f, _, fn), v in stats.items() if fn == name and f.replace(os.sep, "/").endswith(suffix))
        print(f"| {what} | {ct * 1000 / views:.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--queries", type=int, default=20, help="queries per language")
    ap.add_argument("--n", type=int, default=5, help="timed repetitions of every query")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="cProfile the page requests afterwards")
    args = ap.parse_args()

    from fastapi.testclient import TestClient

    from core.settings import get_settings
    from lexpipe.api import create_app
    from pipelines.reads import ReadService
    from pipelines.retrieval.service import SearchService

    home = Path(args.home).resolve()
    # one client sends every request: lift the per-client read limit, as bench/reads.py does
    settings = get_settings().model_copy(update={"home": home, "api_rate_read_burst": 10 ** 9,
                                                  "api_rate_read_per_s": 1e9})
    client = TestClient(create_app(SearchService.from_settings(settings), reads=ReadService.at(home),
                                   settings=settings))
    served = client.get("/health").json()["serving"]
    sample_dir = Path(args.sample_dir)
    sets: dict[str, tuple[list[str], dict]] = {}
    if any(a.startswith("pl:") and a != "pl:cases" for a in served):
        sets["pl"] = (polish_queries(sample_dir, args.queries), {})
    if "de:bgb" in served:
        sets["de"] = (german_queries(sample_dir, args.queries), {"act": "de:bgb"})
    if not sets:
        raise SystemExit(f"no Polish statute nor de:bgb index served under {home}: {served}")

    queries0, extra0 = next(iter(sets.values()))
    first = client.get("/ui/search", params={"q": queries0[0], **extra0})
    if first.status_code != 200:
        raise SystemExit(f"GET /ui/search answered {first.status_code}: {first.text[:300]}")
    per_page = len(page_ids(first.text))
    if not per_page:
        raise SystemExit("GET /ui/search answered no li.hit with data-article-id: is the page built to the contract?")

    try:  # how many articles the page's one search asks for (page 1)
        from lexpipe.web.views import SearchParams, candidate_k
        CANDIDATES = candidate_k(SearchParams(q="x"))
    except ImportError:
        from lexpipe.web.views import CANDIDATES
    kinds = {"api": {"k": per_page}, "api_deep": {"k": CANDIDATES}, "page": None}
    mismatched: dict[str, set[str]] = {}

    def one(kind: str, q: str, extra: dict) -> tuple[float, object]:
        t = time.perf_counter()
        if kinds[kind] is None:
            r = client.get("/ui/search", params={"q": q, **extra})
        else:
            r = client.get("/search", params={"q": q, **kinds[kind], **extra})
        ms = (time.perf_counter() - t) * 1000
        assert r.status_code == 200, (kind, q[:60], r.text[:200])
        return ms, r

    def timed(q: str, extra: dict, lang: str, order: list[str]) -> dict[str, float]:
        out, ids = {}, {}
        for kind in order:
            out[kind], r = one(kind, q, extra)
            ids[kind] = page_ids(r.text) if kind == "page" else [h["article_id"] for h in r.json()["hits"]][:per_page]
        assert ids["page"] == ids["api_deep"], ("the page is not the API's answer", q[:60], ids)
        if ids["page"] != ids["api"]:
            mismatched.setdefault(lang, set()).add(q)
        return out

    for lang, (queries, extra) in sets.items():  # warm-up: every query once each way (vectors cached, pools built)
        for q in queries:
            timed(q, extra, lang, list(kinds))

    rng = random.Random(args.seed)
    load0, cpu0 = os.getloadavg()[0], cpu_times()
    results: dict[str, dict[str, list[float]]] = {}
    for lang, (queries, extra) in sets.items():
        res = results.setdefault(lang, {"api": [], "api_deep": [], "page": [], "added": [], "added_deep": []})
        for rep in range(args.n):
            order = list(range(len(queries)))
            rng.shuffle(order)
            for i in order:
                kinds_order = list(kinds)
                rng.shuffle(kinds_order)  # neither path always first
                ms = timed(queries[i], extra, lang, kinds_order)
                for kind in kinds:
                    res[kind].append(ms[kind])
                res["added"].append(ms["page"] - ms["api"])
                res["added_deep"].append(ms["page"] - ms["api_deep"])
    load1, cpu1 = os.getloadavg()[0], cpu_times()

    print(f"home {home}: served {', '.join(sorted(served))}; {per_page} hits a page; "
          f"{args.queries} queries a language × {args.n} repetitions (seed {args.seed}), warm, TestClient")
    for lang, what in (("pl", "Polish statute"), ("de", "de:bgb")):
        if lang not in sets:
            print(f"{lang}: no {what} index served under this home, so no {lang} queries")
    print()
    print("| path | requests | p50 ms | p95 ms | mean ms |")
    print("|---|---:|---:|---:|---:|")
    for lang, res in results.items():
        print(row(f"{lang}: GET /search (JSON, k={per_page}: one page)", res["api"]))
        print(row(f"{lang}: GET /search (JSON, k={CANDIDATES}: the page's own search)", res["api_deep"]))
        print(row(f"{lang}: GET /ui/search (page of {per_page})", res["page"]))
        print(row(f"{lang}: added per pair, page − JSON k={per_page}", res["added"]))
        print(row(f"{lang}: added per pair, page − JSON k={CANDIDATES}", res["added_deep"]))
    print()
    print(f"| language | vs | added at p50 ms | added at p95 ms | per-pair added p50 / p95 ms |")
    print("|---|---|---:|---:|---:|")
    for lang, res in results.items():
        for vs, key, added in ((f"JSON k={per_page}", "api", "added"), (f"JSON k={CANDIDATES}", "api_deep", "added_deep")):
            print(f"| {lang} | {vs} | {statistics.median(res['page']) - statistics.median(res[key]):.1f} | "
                  f"{pct(res['page'], .95) - pct(res[key], .95):.1f} | "
                  f"{statistics.median(res[added]):.1f} / {pct(res[added], .95):.1f} |")
    print()
    for lang, (queries, _) in sets.items():
        n = len(mismatched.get(lang, ()))
        print(f"{lang}: the page's {per_page} articles equal the JSON k={CANDIDATES} answer's first {per_page} for "
              f"every query; they differ from the JSON k={per_page} answer for {n} of {len(queries)} queries")
    print(f"load average {load0:.2f} → {load1:.2f}; CPU stolen by the hypervisor during the timed runs: "
          f"{stolen_share(cpu0, cpu1):.1%}; {os.cpu_count()} CPUs")

    if args.profile:
        profile(client.app, sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
