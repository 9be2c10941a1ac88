"""Throughput of citation resolution on real text: the resolver alone and through the app.

    .venv/bin/python bench/resolver.py [--home .lexpipe] [--data ../shared/data] [--pages 347,355] [--as-of 2025-12-01]
                                       [--registry-rows 6000]

Texts: the SAOS judgments of the given dump pages (100 per page; ``textContent`` HTML cleaned as
:func:`pipelines.citations.pl_evaluation.load_page` does) and the refex German decisions
(``de/refex/documents.jsonl``). Each text is cut at line breaks into requests of at most 20,000
characters (the endpoint's limit), so both paths answer the very same requests:

* ``resolver``: ``CitationResolver.resolve(text, as_of=)`` (:mod:`pipelines.resolver`);
* ``ASGI app``: ``POST /citations/resolve`` through FastAPI's TestClient (routing, validation, the
  response model, JSON), no network.

``CitationResolver.warm()`` (loading every held version's index and the held Polish article ids,
what the first requests would otherwise do) is timed apart as ``cold``. Prints one table: texts,
requests, citations found, seconds, citations/s, p50 / p95 per request, and the match kinds.
Target (issue 17): ≥ 200 citations/s on 2 cores. ``--registry-rows N`` runs with the shipped registry
plus N generated German rows (a temporary ``$LEXPIPE_ACT_REGISTRY``): the size issue 24's catalogue of
federal acts gives it, to see that nothing scans the registry per citation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.resolver import CitationResolver  # noqa: E402
from reads import pct  # noqa: E402  (bench/, the script's folder)

LIMIT = 20000


def chunks(text: str, limit: int = LIMIT) -> list[str]:
    """``text`` cut at line breaks into pieces of at most ``limit`` characters (a longer line is cut hard)."""
    out, cur = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:
            out.append(line[:limit])
            line = line[limit:]
        if len(cur) + len(line) > limit:
            out.append(cur)
            cur = ""
        cur += line
    if cur.strip():
        out.append(cur)
    return [c for c in out if c.strip()]


def polish_texts(data: Path, pages: list[str]) -> list[str]:
    from pipelines.citations.pl_evaluation import load_page

    return [j.text for p in pages for j in load_page(data / "pl" / "saos" / f"judgments-page-{p}.json") if j.text]


def german_texts(data: Path) -> list[str]:
    path = data / "de" / "refex" / "documents.jsonl"
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def big_registry(n: int) -> Path:
    """The shipped registry plus ``n`` German rows (slug ids, jurabk citations), in a temporary file."""
    import tempfile

    from schemas.acts import DEFAULT_REGISTRY

    rows = [DEFAULT_REGISTRY.read_text(encoding="utf-8")]
    for i in range(n):
        rows.append(f'\n[[act]]\nid = "de:gen{i}"\njurisdiction = "de"\nlanguage = "de"\n'
                    f'title = "Generiertes Gesetz {i}"\ncitation = "GenG{i}"\nsource = "gesetze"\n'
                    f'address = "gen{i}"\nsample_stem = "gen{i}"\nlayout = "gesetze"\narticle_unit = "§"\n'
                    f'paragraph_unit = "Abs."\n')
    path = Path(tempfile.mkdtemp(prefix="lexpipe-registry-")) / "acts.toml"
    path.write_text("".join(rows), encoding="utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=os.environ.get("LEXPIPE_HOME", ".lexpipe"))
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--pages", default="347,355", help="SAOS dump pages (100 judgments each)")
    ap.add_argument("--as-of", default=None, help="YYYY-MM-DD (default: today)")
    ap.add_argument("--registry-rows", type=int, default=0,
                    help="add this many generated German rows to the registry (default: the shipped registry)")
    args = ap.parse_args()
    if args.registry_rows:
        os.environ["LEXPIPE_ACT_REGISTRY"] = str(big_registry(args.registry_rows))

    from fastapi.testclient import TestClient

    from core.settings import get_settings
    from lexpipe.api import create_app
    from schemas.acts import registry

    data = Path(args.data)
    sets = {"pl: SAOS judgments": polish_texts(data, args.pages.split(",")), "de: refex decisions": german_texts(data)}
    resolver = CitationResolver.at(args.home)
    t = time.perf_counter()
    n_versions = resolver.warm()
    cold = time.perf_counter() - t
    # one client sends every request: lift the per-client rate limits (the limiter's own cost stays measured)
    settings = get_settings().model_copy(update={"api_rate_read_burst": 10 ** 9, "api_rate_read_per_s": 1e9})
    client = TestClient(create_app(reads=resolver.reads, settings=settings))
    client.post("/citations/resolve", json={"text": "art. 415 k.c.", "as_of": args.as_of})

    rows = []
    kinds: Counter = Counter()
    for name, texts in sets.items():
        reqs = [c for text in texts for c in chunks(text)]
        for path in ("resolver", "ASGI app"):
            lat, found = [], 0
            t0 = time.perf_counter()
            for text in reqs:
                t = time.perf_counter()
                if path == "resolver":
                    res = resolver.resolve(text, as_of=args.as_of)
                    n = len(res.citations)
                    kinds.update(c.match for c in res.citations)
                else:
                    r = client.post("/citations/resolve", json={"text": text, "as_of": args.as_of})
                    assert r.status_code == 200, r.text[:300]
                    n = len(r.json()["citations"])
                lat.append((time.perf_counter() - t) * 1000)
                found += n
            secs = time.perf_counter() - t0
            rows.append((name, path, len(texts), len(reqs), found, secs, lat))

    print(f"home {Path(args.home).resolve()}; as_of {args.as_of or 'today'}; cold: warm() loading {n_versions} "
          f"versions' indexes {cold:.2f} s; registry rows {len(registry().acts):,}")
    print()
    print("| texts | path | texts | requests | citations | seconds | citations/s | p50 ms/request | p95 ms/request |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, path, n_texts, n_reqs, found, secs, lat in rows:
        print(f"| {name} | {path} | {n_texts} | {n_reqs} | {found:,} | {secs:.2f} | {found / secs:,.0f} | "
              f"{statistics.median(lat):.1f} | {pct(lat, .95):.1f} |")
    print()
    print("match kinds (resolver path): " + ", ".join(f"{k} {v:,}" for k, v in kinds.most_common()))
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
