"""Removed / added articles between two ISAP versions of an act, and a side-by-side sample.

    .venv/bin/python bench/diff_sample.py [--act D19740141] [--old 2016-09-22] [--new 2025-12-10]
                                          [--sample N] [--seed 0] [--sample-dir ../shared/data]

Runs ``pipelines.statutes.diff.diff_versions`` on the two ``articles_table``s, prints the counts,
the removed ids (grouped by the old structural unit, with the new version's node of that id and
its heading: "(zawierający art. … – uchylony)" says the unit was repealed whole) and the added ids;
with ``--sample N``, N random units of each of changed / added / removed, old and new text side by
side.

Finding for k.p. 2016-09-22 → 2025-12-10 (53 added, 161 changed, 4 repealed, 49 removed, 1
editorial): the 49 "removed" are real. All 49 article heads (pdfium plain text, superscripts fused:
"Art. 675", "Art. 24125a") occur once in the 2016 PDF and not at all in the 2025 PDF, which prints
in their place "Rozdział IIb (zawierający art. 67⁵–67¹⁷ – uchylony)" (telework, replaced by
Rozdział IIc "Praca zdalna", art. 67¹⁸–67³⁴: 17 of the 53 added) and "DZIAŁ JEDENASTY
(uchylony)" (collective agreements, art. 238–241³⁰). Not a parser / id bug. They are "removed"
rather than "repealed" because the repeal is recorded on the chapter / division node, not on
article rows.

Of the 161 "changed", 80 differ only typographically: 59 only in "(uchylony)." (2016) vs
"(uchylony)" (2025) and a refreshed citation, 21 more in "20%" / "20 %", "(uchylona)," and the
like. ISAP reprinted them; they were not amended. ``diff_versions`` (``pipelines/statutes/diff.py``)
counts them as "changed", not "editorial" — a diff normalisation gap, not a parser bug.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import sys
import textwrap
from collections import Counter
from itertools import zip_longest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from parse_acts import SPECS  # noqa: E402
from pipelines.statutes.diff import diff_versions, strip_citations  # noqa: E402
from pipelines.statutes.pl.parser import parse_statute  # noqa: E402
from pipelines.statutes.pl.tables import articles_table  # noqa: E402


def _typo(text: str | None) -> str:
    """Text without what ISAP reprints without an amendment: citations, '.' after '(uchylony)',
    spaces, '.;,' (for counting typographic-only "changed" rows; diff_versions keeps them)."""
    return re.sub(r"[\s.;,]+", "", re.sub(r"\((uchylon\w)\)\.?", r"(\1)", strip_citations(text or "")))


def side_by_side(old: str | None, new: str | None, width: int = 70) -> str:
    wrap = lambda t: [ln for para in (t or "—").split("\n") for ln in (textwrap.wrap(para, width) or [""])]  # noqa: E731
    return "\n".join(f"  {a:<{width}} | {b}" for a, b in zip_longest(wrap(old), wrap(new), fillvalue=""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--act", default="D19740141", help="ISAP file prefix (bench/parse_acts.py SPECS)")
    ap.add_argument("--old", default="2016-09-22")
    ap.add_argument("--new", default="2025-12-10")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    isap, spec = Path(args.sample_dir) / "pl" / "isap", SPECS[args.act]
    old_ps, new_ps = (parse_statute(isap / f"{args.act}Lj_{v}.pdf", dt.date.fromisoformat(v), spec)
                      for v in (args.old, args.new))
    rows = diff_versions(articles_table(old_ps), articles_table(new_ps)).to_pylist()
    print(f"{spec.short_name} {args.old} → {args.new}: {dict(Counter(r['change'] for r in rows))}")
    typo = [r["number"] for r in rows if r["change"] == "changed" and _typo(r["old_text"]) == _typo(r["new_text"])]
    print(f"of the changed, {len(typo)} differ only typographically ('(uchylony).' / '(uchylony)', "
          f"'20%' / '20 %', punctuation, citations): {', '.join(typo)}")

    old_path = {a.id: a.path for a in old_ps.articles}
    new_nodes = {n.id: n for n in new_ps.structure}
    removed = [r for r in rows if r["change"] == "removed"]
    print(f"\nremoved ({len(removed)}), by the old unit they were in → that unit in {args.new}:")
    groups: dict[str, list[str]] = {}
    for r in removed:
        path = old_path[r["article_id"]]
        groups.setdefault(path[-1].id if path else "(top)", []).append(r["number"])
    for unit, nums in groups.items():
        node = new_nodes.get(unit)
        now = f"{node.status}: {node.heading}" if node else "absent"
        print(f"  {unit}: {', '.join(nums)}\n      → {now}")
    added = [r["number"] for r in rows if r["change"] == "added"]
    print(f"\nadded ({len(added)}): {', '.join(added)}")

    rng = random.Random(args.seed)
    for kind in ("changed", "added", "removed"):
        pool = [r for r in rows if r["change"] == kind]
        for r in rng.sample(pool, min(args.sample, len(pool))):
            print(f"\n=== {kind}: Art. {r['number']}  ({args.old} | {args.new})")
            print(side_by_side(r["old_text"], r["new_text"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
