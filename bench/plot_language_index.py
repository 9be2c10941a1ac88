"""The growth plot of BENCHMARKS.md's "One index per language" table (issue 24, point 7).

    .venv/bin/python bench/plot_language_index.py [--benchmarks BENCHMARKS.md] [--out docs/img/language_index_growth.png]

Reads the table that ``bench/language_index.py`` printed (as pasted into BENCHMARKS.md: the rows
10 / 100 / 1,000 / 6,636 acts) and draws, against the number of acts (log scale): build wall time,
disk, serving RSS, and the lexical query p95 (CPU on one core, and bm25s's wall time beside it).
The figures are the table's, so the plot always shows what the table says.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## One index per language: all German federal law"


def _num(cell: str, index: int = 0) -> float | None:
    found = re.findall(r"[\d,]+(?:\.\d+)?", cell)
    return float(found[index].replace(",", "")) if len(found) > index else None


def read_table(text: str) -> list[dict]:
    """The rows of the section's first table, by the header's column names."""
    body = text[text.index(SECTION):]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(header) or not re.match(r"^[\d,]+$", cells[0]):
            break
        rows.append(dict(zip(header, cells)))
    if not rows:
        raise ValueError(f"no table rows under {SECTION!r}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "language_index_growth.png")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_table(args.benchmarks.read_text(encoding="utf-8"))
    col = {k: next(c for c in rows[0] if c.startswith(k)) for k in
           ("acts", "build s", "disk MB", "serving RSS", "lexical p50", "bm25s p50")}
    acts = [_num(r[col["acts"]]) for r in rows]
    series = {
        "build, s wall": [_num(r[col["build s"]]) for r in rows],
        "disk, MB": [_num(r[col["disk MB"]]) for r in rows],
        "serving RSS, MB": [_num(r[col["serving RSS"]]) for r in rows],
        "lexical p95, ms CPU (1 core)": [_num(r[col["lexical p50"]], 3) for r in rows],
        "bm25s p95, ms wall (1 core)": [_num(r[col["bm25s p50"]], 1) for r in rows],
    }
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in ("build, s wall", "disk, MB", "serving RSS, MB"):  # 0 (under 1 MB) has no place on a log axis
        axes[0].plot(acts, [v if v else float("nan") for v in series[name]], marker="o", label=name)
    for name in ("lexical p95, ms CPU (1 core)", "bm25s p95, ms wall (1 core)"):
        axes[1].plot(acts, series[name], marker="o", label=name)
    axes[1].axhline(150, color="grey", linestyle="--", linewidth=1, label="goal: p95 150 ms")
    for ax, title in zip(axes, ("building and holding the index", "a GerLayQA-length query")):
        ax.set_xscale("log")
        ax.set_xlabel("German acts in the index")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_yscale("log")
    fig.suptitle("One index per language: cost as the corpus grows (BENCHMARKS.md table)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out} ({len(rows)} rows: {', '.join(f'{a:,.0f}' for a in acts)} acts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
