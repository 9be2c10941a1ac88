"""Classify every diff of a replayed German home again with the current rules (issue 24, point 4).

    .venv/bin/python bench/reclassify_replay.py --home H --out NOW.jsonl [--compare BEFORE.jsonl]

For each act of ``H/corpus/de`` and each published version after its first, ``diff_german`` of the
previous version's articles against this one's, from the published Parquet (nothing is parsed or
written in ``H``). Writes one line per differing unit (act, version, commit, commit kind, unit,
class) and prints units per commit kind and class. With ``--compare`` (the same command's output
under other code, e.g. a clone at the commit before a rule) it prints the units whose class
differs and the publications that turn from amendment to editorial or back: how a new
converter-fix rule is measured on a replay without replaying it again.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from pipelines.statutes.de.build import diff_german


def classify(home: Path, out: Path) -> list[dict]:
    rows = []
    for current in sorted((home / "corpus" / "de").glob("*/current.json")):
        act = current.parent
        versions = json.loads(current.read_text())["published_versions"]
        for prev, version in zip(versions, versions[1:]):
            source = json.loads((act / version / "source.json").read_text())
            diff = diff_german(pq.read_table(act / prev / "articles.parquet"),
                               pq.read_table(act / version / "articles.parquet"))
            for r in diff.select(["article_id", "change"]).to_pylist():
                rows.append({"act": act.name, "version": version, "commit": source.get("commit", "")[:8],
                             "kind": source.get("kind"), **r})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def publications(rows: list[dict]) -> dict[tuple, str]:
    kinds: dict[tuple, set] = defaultdict(set)
    for r in rows:
        kinds[(r["kind"], r["act"], r["version"])].add(r["change"])
    return {k: ("amendment" if v - {"editorial"} else "editorial") for k, v in kinds.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    rows = classify(args.home, args.out)
    print("| kind | class | units |\n|---|---|---:|")
    for (kind, change), n in sorted(Counter((r["kind"], r["change"]) for r in rows).items()):
        print(f"| {kind} | {change} | {n} |")
    if args.compare:
        before = [json.loads(line) for line in args.compare.read_text().splitlines()]
        was = {(r["act"], r["version"], r["article_id"]): r for r in before}
        flips = Counter((r["kind"], r["commit"], was[k]["change"], r["change"]) for r in rows
                        if (k := (r["act"], r["version"], r["article_id"])) in was and was[k]["change"] != r["change"])
        print("\n| kind | commit | was | now | units |\n|---|---|---|---|---:|")
        for (kind, commit, old, new), n in sorted(flips.items()):
            print(f"| {kind} | {commit} | {old} | {new} | {n} |")
        p_was, p_now = publications(before), publications(rows)
        for k in sorted(p_now):
            if k in p_was and p_was[k] != p_now[k]:
                print(f"publication {k[1]} {k[2]} ({k[0]}): {p_was[k]} → {p_now[k]}")


if __name__ == "__main__":
    main()
