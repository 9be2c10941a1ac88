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

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.statutes.de.build import diff_german


class InputError(SystemExit):
    """A home or a comparison file this script cannot read: the message names the file."""


def _read(path: Path, read):
    try:
        return read(path)
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot read it ({type(exc).__name__}: {exc})") from exc


def classify(home: Path, out: Path) -> list[dict]:
    acts = sorted((home / "corpus" / "de").glob("*/current.json"))
    if not acts:
        raise InputError(f"{home}: no German corpus here (no corpus/de/<act>/current.json); give the home a "
                         "`lexpipe load de` and a replay wrote")
    rows = []
    for current in acts:
        act = current.parent
        versions = _read(current, lambda p: json.loads(p.read_text())["published_versions"])
        previous = None  # each version's articles are read once: as the new side, then as the old one
        for version in versions:
            articles = _read(act / version / "articles.parquet", pq.read_table)
            if previous is not None:
                source = _read(act / version / "source.json", lambda p: json.loads(p.read_text()))
                for r in diff_german(previous, articles).select(["article_id", "change"]).to_pylist():
                    rows.append({"act": act.name, "version": version, "commit": source.get("commit", "")[:8],
                                 "kind": source.get("kind"), **r})
            previous = articles
    staged = out.with_name(out.name + ".partial")  # an interrupted run leaves the last output whole
    staged.write_text("".join(json.dumps(r) + "\n" for r in rows))
    staged.replace(out)
    return rows


def read_rows(path: Path) -> list[dict]:
    """An earlier output of :func:`classify`; a line that is not one names the file and line."""
    rows = []
    for n, line in enumerate(_read(path, Path.read_text).splitlines(), 1):
        try:
            row = json.loads(line)
            if not all(k in row for k in ("act", "version", "kind", "commit", "article_id", "change")):
                raise ValueError("a row needs act, version, kind, commit, article_id and change")
        except ValueError as exc:
            raise InputError(f"{path}:{n}: not a row of this script's output ({exc})") from exc
        rows.append(row)
    return rows


def publications(rows: list[dict]) -> dict[tuple, str]:
    kinds: dict[tuple, set] = defaultdict(set)
    for r in rows:
        kinds[(r["kind"], r["act"], r["version"])].add(r["change"])
    return {k: ("amendment" if v - {"editorial"} else "editorial") for k, v in kinds.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args(argv)
    before = read_rows(args.compare) if args.compare else None  # a bad file fails before the work
    rows = classify(args.home, args.out)
    print("| kind | class | units |\n|---|---|---:|")
    for (kind, change), n in sorted(Counter((r["kind"], r["change"]) for r in rows).items()):
        print(f"| {kind} | {change} | {n} |")
    if before is not None:
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
