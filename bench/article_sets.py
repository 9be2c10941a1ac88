"""Article sets of the ISAP sample PDFs: the independent census against the parser.

    .venv/bin/python bench/article_sets.py [--sample-dir ../shared/data] [--workers 2]

For every ``<sample-dir>/pl/isap/*.pdf`` prints one row: pages, the number of articles the census
(:mod:`pipelines.statutes.pl.article_census`, which reads the PDF without the parser or
``pipelines.pdf_lines``) finds, the number the parser finds, the numbers only one side has (first
10 each) and the gaps in the census's numbering run. A file the parser refuses or fails on is
printed as such (``parse failed: …``), not a crash. Details (every gap, duplicate heads, repealed
ranges, order differences) follow the table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.statutes.pl.article_census import ArticleCensus, article_numbers  # noqa: E402
from pipelines.statutes.pl.parser import parse_statute  # noqa: E402

from parse_acts import SPECS  # noqa: E402  (bench/, on sys.path as the script's folder)

SHOW = 10


def _first(items: list[str], n: int = SHOW) -> str:
    if not items:
        return "–"
    more = f" …(+{len(items) - n})" if len(items) > n else ""
    return ", ".join(items[:n]) + more


def _parser_numbers(pdf: Path, workers: int) -> tuple[list[str] | None, str]:
    prefix, _, version = pdf.stem.partition("Lj_")
    spec = SPECS.get(prefix)
    if spec is None:
        return None, f"no ActSpec for {prefix}"
    try:
        parsed = parse_statute(pdf, dt.date.fromisoformat(version), spec, workers=workers)
    except Exception as exc:  # noqa: BLE001 — another engineer is changing the parser: report, go on
        return None, f"parse failed: {type(exc).__name__}: {str(exc).replace(str(pdf), pdf.name)}"
    return [a.number for a in parsed.articles], ""


def _gap_text(census: ArticleCensus) -> str:
    return _first([f"{g.after or '∅'}→{g.before}" + ("*" if g.notes else "") + (" (order)" if g.kind == "order" else "")
                   for g in census.gaps], 6)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--workers", type=int, default=2, help="page-reading workers of the parser")
    args = ap.parse_args()
    pdfs = sorted((Path(args.sample_dir) / "pl" / "isap").glob("*.pdf"))
    if not pdfs:
        sys.exit(f"no PDFs in {Path(args.sample_dir) / 'pl' / 'isap'}")

    rows = []
    details: list[str] = []
    for pdf in pdfs:
        t0 = time.perf_counter()
        census = article_numbers(pdf)
        t_census = time.perf_counter() - t0
        t0 = time.perf_counter()
        parser, error = _parser_numbers(pdf, args.workers)
        t_parser = time.perf_counter() - t0
        if parser is None:
            only_census = only_parser = "(parse failed, see below)"
            parser_count = "failed"
        else:
            pset, cset = set(parser), set(census.numbers)
            only_census = _first([n for n in census.numbers if n not in pset])
            only_parser = _first([n for n in parser if n not in cset])
            parser_count = str(len(parser))
        rows.append((pdf.name, str(census.pages), str(len(census.numbers)), parser_count,
                     only_census, only_parser, _gap_text(census)))

        lines = [f"{pdf.name}: census {t_census:.1f} s, parser {t_parser:.1f} s"]
        if error:
            lines.append(f"  parser: {error}")
        elif parser == census.numbers:
            lines.append("  parser: the same numbers in the same order")
        elif set(parser) == set(census.numbers):
            lines.append("  parser: the same numbers in a different order")
        elif len(parser) != len(set(parser)):
            lines.append(f"  parser: lists {len(parser) - len(set(parser))} number(s) more than once")
        for g in census.gaps:
            note = f"  [{'; '.join(g.notes)}]" if g.notes else ""
            lines.append(f"  {g.kind}: {g.after or '(start)'} → {g.before} (p. {g.page}){note}")
        for number in census.duplicates:
            marks = ", ".join(f"{h.mark or 'plain'} p. {h.page}" for h in census.heads if h.number == number)
            lines.append(f"  printed twice: {number} ({marks})")
        for r in census.repealed:
            span = r.first if r.first == r.last else f"{r.first}–{r.last}"
            lines.append(f"  repealed {r.source}: {span} = {len(r.numbers)} number(s) (p. {r.page}): {r.text}")
        details.append("\n".join(lines))

    header = ("file", "pages", "census", "parser", "only in census", "only in parser", "gaps")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    widths = [min(w, 70) for w in widths]

    def fmt(row):
        return " | ".join(str(c)[:w].ljust(w) for c, w in zip(row, widths)).rstrip()

    print(fmt(header))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(fmt(r))
    print("\n(census = printed article heads, each number once; repealed ranges are extra, see below;"
          "\n gaps marked * follow a structural unit printed as repealed without its article numbers)\n")
    print("\n\n".join(details))


if __name__ == "__main__":
    main()
