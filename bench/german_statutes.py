"""German statutes: parse time and counts per source, and the BGB Markdown-vs-PDF agreement.

    .venv/bin/python bench/german_statutes.py [--sample-dir ../shared/data] [--repeat 3] [--workers 2]
        [--report diff.md]

Times are medians of ``--repeat`` cold parses (a fresh parse each time, nothing cached): wall seconds
and CPU seconds (this process plus the PDF page-reader processes, so the figure does not depend on
how busy the machine is); the PDF parse reads pages in ``--workers`` processes. Prints one table row per source, then the
comparison summary: agreement over all §§ in both, the differing §§ by class (amendment / editorial
variant / parser residue, :mod:`pipelines.statutes.de.sources_classify`), agreement over the §§ not
amended, and amendments per known reform. ``--report`` writes the listing (every differing § by
class with a short word diff).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.statutes.de.source_fidelity import markdown_fidelity, pdf_fidelity  # noqa: E402
from pipelines.statutes.de.sources_compare import compare_sources  # noqa: E402
from pipelines.statutes.de.markdown import parse_markdown  # noqa: E402
from pipelines.statutes.de.model import german_acts  # noqa: E402
from pipelines.statutes.de.pdf import parse_gii_pdf  # noqa: E402

BGB_PDF = "de/pdf/BJNR001950896_bgb_gii_2024-11-28.pdf"


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the PDF page readers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(fn, repeat: int):
    """(result, median wall s, median CPU s) over ``repeat`` cold runs."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        c0, t0 = _cpu(), time.perf_counter()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(_cpu() - c0)
    return result, statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-dir", type=Path,
                    default=Path(os.environ.get("LEXPIPE_SAMPLE_DIR", Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--report", type=Path, help="write the BGB difference report (Markdown) here")
    args = ap.parse_args(argv)
    gesetze = args.sample_dir / "de" / "gesetze"

    header = f"{'source':<34} {'version':<10} {'§§/Art.':>7} {'in force':>8} {'repealed':>8} {'other':>5} " \
             f"{'units':>6} {'struct':>6} {'wall s':>7} {'cpu s':>6}"
    print(header)
    print("-" * len(header))

    def row(name: str, st, wall: float, cpu: float) -> None:
        c = Counter(s.status for s in st.sections)
        units = sum(len(s.units) for s in st.sections)
        other = len(st.sections) - c["in_force"] - c["repealed"]
        print(f"{name:<34} {str(st.version):<10} {len(st.sections):>7} {c['in_force']:>8} {c['repealed']:>8} "
              f"{other:>5} {units:>6} {len(st.structure):>6} {wall:>7.2f} {cpu:>6.2f}")

    parsed = {}
    for slug, act in german_acts().items():
        st, med, best = _timed(lambda: parse_markdown(gesetze / f"{slug}.md", act=act), args.repeat)
        parsed[slug] = st
        row(f"markdown de/gesetze/{slug}.md", st, med, best)
    pdf, med, best = _timed(lambda: parse_gii_pdf(args.sample_dir / BGB_PDF, workers=args.workers), args.repeat)
    row(f"pdf {Path(BGB_PDF).name[:30]}", pdf, med, best)

    c = compare_sources(parsed["bgb"], pdf)
    s = c.summary()
    print()
    print(f"BGB Markdown ({s['markdown_version']}) vs PDF ({s['pdf_version']})")
    print(f"  §§ in both: {s['common']}; only Markdown: {s['only_markdown']} "
          f"({s['only_markdown_in_pdf_ranges']} inside a repealed §§ range of the PDF); only PDF: {s['only_pdf']}")
    print(f"  set agreement:            {s['set_agreement']:.2%}")
    print(f"  text agreement:           {s['text_agreement']:.2%}  ({s['text_equal']}/{s['common']} §§ equal after normalisation)")
    print(f"  same title+status §§:     {s['stable_sections']}, text agreement {s['stable_text_agreement']:.2%}")
    print(f"  differing §§ by class:    {s['amendment']} amendment, {s['editorial']} editorial, "
          f"{s['residue']} parser residue")
    print(f"  not amended:              {s['not_amended']} §§, text agreement {s['not_amended_agreement']:.2%} "
          f"({s['text_equal']}/{s['not_amended']}); parser residue {s['residue']}/{s['not_amended']}")
    print(f"  highest possible over all §§ in both (amendments excluded): {s['max_text_agreement']:.2%}")
    print(f"  {'reform':<46} {'amended':>7} {'inserted':>8} {'removed':>7} {'cites':>5} {'total':>5}")
    for r in c.per_reform():
        print(f"  {r['reform']:<46} {r['amended']:>7} {r['inserted']:>8} {r['removed']:>7} {r['cites']:>5} "
              f"{r['total']:>5}")
    changes = Counter(c.diff.column("change").to_pylist())
    print(f"  diff rows (diff_german):  {dict(changes)}")
    print()
    print("Parser fidelity (words of the source file vs words of the parse; pipelines/statutes/de/source_fidelity.py)")
    for name, f in [(f"markdown {slug}.md", markdown_fidelity(st)) for slug, st in parsed.items()] + \
            [(f"pdf {Path(BGB_PDF).name[:30]}", pdf_fidelity(pdf))]:
        missing = sum(f.missing.values())
        top = ", ".join(f"{w} {n}" for w, n in f.missing.most_common(3))
        print(f"  {name:<36} source {f.source_words:>7}, parse {f.parsed_words:>7}, missing {missing:>3} ({top}), "
              f"invented {sum(f.invented.values())}")
    print(f"  cpu count: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    if args.report:
        tmp = args.report.with_name(args.report.name + ".tmp")
        tmp.write_text(c.markdown_report(), encoding="utf-8")
        tmp.replace(args.report)  # atomic: a reader never sees half a report
        print(f"  report: {args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
