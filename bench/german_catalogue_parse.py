"""Every German federal act of a bundestag/gesetze repository at one commit: parse, tables, chunks, checks.

    .venv/bin/python bench/german_catalogue_parse.py --repo /path/to/gesetze-clone [--commit SHA]
        [--workers 1] [--max-tokens 256] [--batch 200] [--no-checks] [--fidelity] [--limit N] [--json out.json]

``--repo`` is a clone of the repository (e.g. ``git clone ../shared/data/de/gesetze-history/gesetze-md.bundle``);
``--commit`` reads the acts at that commit (``git archive`` into a temporary folder: the clone is not
touched), else the working tree. Every ``<letter>/<slug>/index.md`` is parsed with
:func:`~pipelines.statutes.de.markdown.parse_markdown` (``version=`` the commit's date, as the catalogue
passes it), its ARTICLES and NODES tables built (:mod:`pipelines.statutes.de.tables`), its chunks
(:func:`~pipelines.statutes.de.build.build_german_chunks`, ``--max-tokens``), and the three suites the
build uses run on them (``articles_suite(None, 0.02, allow_pending=True)``, ``nodes_suite()``,
``chunks_suite(1, max_tokens)``, as :func:`~pipelines.statutes.de.build.validate_step`).

Why the suites run per batch: one Great Expectations validation costs ~0.5 s whatever its size (measured
here: 1.7–2.7 s for the three suites of a 6-§ act), i.e. ~3 h for 6,636 acts one by one. A batch
validates the tables of ``--batch`` acts concatenated, with each act's ``sort_key`` and ``ordinal``
shifted above the previous act's, so document order stays per act; every expectation of the three
suites is then a per-row check, a uniqueness check over ids that start with the act's id, or the
increasing ``sort_key`` within each act: a batch passes exactly when each of its acts does. A batch
that fails is halved until the acts that fail are named (a few validations per failing act).

Prints one table (acts, parsed, passed checks, refused, units per kind, chunks, seconds per phase:
parse wall and CPU, tables, chunks, checks), then every refusal reason with its count and up to five
slugs, and every failed expectation with the acts that fail it. ``--fidelity`` adds the source audit
(:func:`~pipelines.statutes.de.source_fidelity.markdown_fidelity`): acts whose parse loses or invents
words, and the most frequent such words.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from pipelines.statutes.de.build import build_german_chunks  # noqa: E402
from pipelines.statutes.de.markdown import parse_markdown  # noqa: E402
from pipelines.statutes.de.model import GermanStatuteError  # noqa: E402
from pipelines.statutes.de.tables import articles_table, nodes_table  # noqa: E402

KINDS = ("§", "Art", "Nr", "Anlage", "Anhang", "preamble", "text", "text (metadata only)")
CONTAINED = "in a container"  # §§ scoped by their Artikel or Anlage (de:x:art:2:par:1)
ANNEXED = "acts with Anlagen not parsed"  # an act with §§: its Anlagen are listed (GermanStatute.annexes)


@dataclass
class ActResult:
    slug: str
    ok: bool
    reason: str = ""
    units: Counter = field(default_factory=Counter)
    parse_cpu: float = 0.0
    tables_s: float = 0.0
    chunks_s: float = 0.0
    tables: tuple[pa.Table, pa.Table, pa.Table] | None = None
    missing: Counter = field(default_factory=Counter)
    invented: Counter = field(default_factory=Counter)


def _reason(message: str, path: Path) -> str:
    """A refusal message without its file name and numbers: the reason to count."""
    text = message.split(f"{path}: ", 1)[-1]
    return re.sub(r"(§|Art\.) \S+", r"\1 N", text)[:120]


def _one(args: tuple[str, str, str, int, bool]) -> ActResult:
    file, slug, version, max_tokens, fidelity = args
    path = Path(file)
    c0 = time.process_time()
    try:
        st = parse_markdown(path, version=dt.date.fromisoformat(version))
    except GermanStatuteError as exc:
        return ActResult(slug, False, _reason(str(exc), path), parse_cpu=time.process_time() - c0)
    except Exception as exc:  # a crash is a finding of this census, not an end of it
        return ActResult(slug, False, f"CRASH {type(exc).__name__}: {exc}"[:120], parse_cpu=time.process_time() - c0)
    parse_cpu = time.process_time() - c0
    units: Counter = Counter()
    for s in st.sections:
        units["text (metadata only)" if st.metadata_only else s.kind] += 1
        if s.kind == "§" and not s.id.startswith(f"{st.act.act_id}:par:"):
            units[CONTAINED] += 1
    if st.annexes:  # an act with §§: its Anlagen are listed, not parsed
        units[ANNEXED] += 1
    t0 = time.perf_counter()
    articles, nodes = articles_table(st), nodes_table(st)
    t1 = time.perf_counter()
    chunks = build_german_chunks(articles, max_tokens=max_tokens)
    t2 = time.perf_counter()
    res = ActResult(slug, True, units=units, parse_cpu=parse_cpu, tables_s=t1 - t0, chunks_s=t2 - t1,
                    tables=(articles, nodes, chunks))
    if fidelity:
        from pipelines.statutes.de.source_fidelity import markdown_fidelity

        f = markdown_fidelity(st)
        res.missing = Counter({w: n for w, n in f.missing.items() if w != "XXXX"})
        res.invented = f.invented
    return res


def _commit_date(repo: Path, commit: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), "show", "-s", "--format=%cs", commit], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def _export(repo: Path, commit: str, target: Path) -> None:
    """The tree of ``commit`` under ``target`` (``git archive``: the clone's checkout is not touched)."""
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {commit} in {repo} failed")


def _shifted(articles: list[pa.Table]) -> pa.Table:
    """Articles of several acts as one table, each act's sort_key and ordinal above the previous act's."""
    out, key_base, ord_base = [], 0, 0
    for t in articles:
        keys = t["sort_key"].to_pylist()
        present = [k for k in keys if k is not None]
        low = min(present) if present else 0
        shifted = [None if k is None else k - low + key_base for k in keys]
        key_base = (max(shifted_k for shifted_k in shifted if shifted_k is not None) + 1) if present else key_base
        ords = [o + ord_base for o in t["ordinal"].to_pylist()]
        ord_base = max(ords) + 1 if ords else ord_base
        t = t.set_column(t.schema.get_field_index("sort_key"), t.schema.field("sort_key"), pa.array(shifted, pa.int64()))
        t = t.set_column(t.schema.get_field_index("ordinal"), t.schema.field("ordinal"), pa.array(ords, pa.int32()))
        out.append(t)
    return pa.concat_tables(out)


def _check(results: list[ActResult], batch: int, max_tokens: int) -> tuple[dict[str, list[str]], int]:
    """slug → failed expectations (labels), validations run. Batched as the module docstring says."""
    from pipelines.validation import validate_table
    from schemas.expectations import articles_suite, chunks_suite, nodes_suite

    suites = {"articles": articles_suite(None, 0.02, allow_pending=True), "nodes": nodes_suite(),
              "chunks": chunks_suite(1, max_tokens)}
    failed: dict[str, list[str]] = defaultdict(list)
    runs = 0

    def validate(name: str, tables: list[pa.Table], label: str):
        nonlocal runs
        runs += 1
        table = _shifted(tables) if name == "articles" else pa.concat_tables(tables)
        return validate_table(table, suites[name], name=f"{name} {label}")

    def search(name: str, k: int, group: list[ActResult], label: str) -> None:
        """Validate ``group``; a failed group is halved until the failing acts are named."""
        report = validate(name, [r.tables[k] for r in group], label)
        if report.success:
            return
        if len(group) == 1:
            failed[group[0].slug] += [f"{name}: {f.label()}" for f in report.failed]
            return
        half = len(group) // 2
        search(name, k, group[:half], label + "a")
        search(name, k, group[half:], label + "b")

    for i in range(0, len(results), batch):
        for k, name in enumerate(("articles", "nodes", "chunks")):
            search(name, k, results[i:i + batch], f"batch {i // batch}")
    return failed, runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a clone of a bundestag/gesetze repository")
    ap.add_argument("--commit", help="the commit to read (default: the working tree, dated by HEAD)")
    ap.add_argument("--workers", type=int, default=1, help="parse/chunk processes (default 1: one core)")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--batch", type=int, default=200, help="acts per validation batch")
    ap.add_argument("--no-checks", action="store_true", help="skip the Great Expectations suites")
    ap.add_argument("--fidelity", action="store_true", help="audit every parse against its source words")
    ap.add_argument("--limit", type=int, help="the first N acts only (a quick look)")
    ap.add_argument("--json", type=Path, help="write the figures and every refusal here")
    args = ap.parse_args(argv)

    repo = args.repo.resolve()
    commit = args.commit or "HEAD"
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=8", commit], capture_output=True, text=True,
                         check=True).stdout.strip()
    version = _commit_date(repo, commit)
    with tempfile.TemporaryDirectory(prefix="gesetze-") as tmp:
        root = repo
        if args.commit:
            _export(repo, args.commit, Path(tmp))
            root = Path(tmp)
        files = sorted(root.glob("*/*/index.md"))[: args.limit]
        jobs = [(str(f), f.parent.name, version, args.max_tokens, args.fidelity) for f in files]
        t0, c0 = time.perf_counter(), time.process_time()
        if args.workers > 1:
            with ProcessPoolExecutor(args.workers) as pool:
                results = list(pool.map(_one, jobs, chunksize=16))
        else:
            results = [_one(j) for j in jobs]
        build_wall = time.perf_counter() - t0
    parsed = [r for r in results if r.ok]
    refused = [r for r in results if not r.ok]
    failed: dict[str, list[str]] = {}
    check_s, runs = 0.0, 0
    if not args.no_checks:
        t1 = time.perf_counter()
        failed, runs = _check(parsed, args.batch, args.max_tokens)
        check_s = time.perf_counter() - t1
    units = sum((r.units for r in parsed), Counter())
    chunks = sum(r.tables[2].num_rows for r in parsed)
    passed = None if args.no_checks else len(parsed) - len(failed)
    figures = {
        "commit": sha, "date": version, "acts": len(results), "parsed": len(parsed),
        "passed_checks": passed, "refused": len(refused),
        "units": {k: units.get(k, 0) for k in (*KINDS, CONTAINED, ANNEXED)}, "chunks": chunks,
        "parse_cpu_s": round(sum(r.parse_cpu for r in results), 1),
        "tables_s": round(sum(r.tables_s for r in parsed), 1), "chunks_s": round(sum(r.chunks_s for r in parsed), 1),
        "build_wall_s": round(build_wall, 1), "checks_s": round(check_s, 1), "validations": runs,
        "workers": args.workers,
    }
    print(f"\nbundestag/gesetze at {sha} ({version}): {figures['acts']} acts, {args.workers} worker(s)\n")
    print("| commit | acts | parsed | passed checks | refused | §§ | Art. | Nr. | Anlagen | Anhänge | formulas "
          "| text | text (metadata only) | §§ in a container | acts with Anlagen not parsed | chunks | parse CPU s "
          "| tables s | chunks s | build wall s | checks s |")
    print("|---|" + "---:|" * 21)
    u = figures["units"]
    pct = f" ({100 * passed / len(results):.2f} %)" if passed is not None and results else ""
    print(f"| {sha} ({version}) | {len(results):,} | {len(parsed):,} | "
          f"{'—' if passed is None else f'{passed:,}'}{pct} | {len(refused):,} | {u['§']:,} | {u['Art']:,} | "
          f"{u['Nr']:,} | {u['Anlage']:,} | {u['Anhang']:,} | {u['preamble']:,} | {u['text']:,} | "
          f"{u['text (metadata only)']:,} | {u[CONTAINED]:,} | {u[ANNEXED]:,} | {chunks:,} | {figures['parse_cpu_s']} | "
          f"{figures['tables_s']} | {figures['chunks_s']} | {figures['build_wall_s']} | {figures['checks_s']} |")
    reasons: dict[str, list[str]] = defaultdict(list)
    for r in refused:
        reasons[r.reason].append(r.slug)
    print("\nrefused, by reason:" if reasons else "\nrefused: none")
    for reason, slugs in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(slugs):5d}  {reason}  (e.g. {', '.join(slugs[:5])})")
    by_check: dict[str, list[str]] = defaultdict(list)
    for slug, labels in failed.items():
        for label in dict.fromkeys(labels):
            by_check[label].append(slug)
    if not args.no_checks:
        print(f"\nfailed checks ({len(failed)} acts; {runs} validations):" if by_check else
              f"\nfailed checks: none ({runs} validations)")
        for label, slugs in sorted(by_check.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(slugs):5d}  {label}  (e.g. {', '.join(slugs[:5])})")
    if args.fidelity:
        lossy = [r for r in parsed if r.missing]
        inventive = [r for r in parsed if r.invented]
        print(f"\nsource fidelity: {len(lossy)} acts lose words ({sum(sum(r.missing.values()) for r in lossy):,} words), "
              f"{len(inventive)} invent words ({sum(sum(r.invented.values()) for r in inventive):,})")
        for label, group, attr in (("lose", lossy, "missing"), ("invent", inventive, "invented")):
            worst = sorted(group, key=lambda r: -sum(getattr(r, attr).values()))[:8]
            if worst:
                print(f"  most words {label}: " + ", ".join(f"{r.slug} ({sum(getattr(r, attr).values())}: "
                                                          f"{', '.join(w for w, _ in getattr(r, attr).most_common(4))})"
                                                          for r in worst))
        figures["fidelity"] = {"acts_losing_words": len(lossy), "acts_inventing_words": len(inventive)}
    if args.json:
        figures["refusals"] = {k: v for k, v in reasons.items()}
        figures["failed_checks"] = {k: v for k, v in by_check.items()}
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
