"""Exam legal-basis containment for the four codes: is the quoted text of the cited unit in our parse?

    .venv/bin/python bench/containment.py [--sample-dir ../shared/data] [--years 2021 2022 2023]
                                          [--home H] [--exceptions bench/data/containment_exceptions.jsonl]
                                          [--details]

For every exam question of the given years whose ``legal_basis`` cites exactly one unit of k.c.,
k.p.c., k.p. or k.k. (``pipelines.benchmarks.legal_basis.parse_legal_basis``), the question's
``legal_basis_content`` is looked for in the parsed unit the basis names (article, §, point,
letter: the ``units`` of ``parse_statute``); when it is not in that unit but is in the whole
article it counts as "article only" (the cited unit id is wrong or the exam quotes more than the
unit). Questions citing several units (``art. 5 i 6 k.c.``) or other acts are left out and counted.

Versions: every version we hold is checked. "used" is the PDF whose date is nearest *before* the
exam (exam date taken as 1 January of the exam year), else the earliest one (nearest after);
"serving" is the latest version (with ``--home``: the act's ``current.json``); "any" counts a
question when some version contains it (an exam may quote the text in force at its date, which
none of our PDFs need be). Without ``--home`` the PDFs of ``<sample-dir>/pl/isap`` are parsed with
the current parser; with ``--home`` the published ``nodes.parquet`` / ``articles.parquet`` of each
published version are read instead (what is served, parser of that build).

Normalisation (``_lenient``, the headline; ``strict`` = whitespace only, shown alongside): the
exam's Unicode superscripts → ``^N`` (as ``normalize_basis``); whitespace collapsed; superscripts
dropped on both sides, a letter printed in the superscript included (``§ 2^1a`` → ``§ 2``); a space
before ``. , ; )`` closed up (the exam files lose superscripts as "§ 2 ." / "art. 64 § 1 ," / "5 )");
an appended "dd.mm.yyyy" stamp removed. It extends ``_lenient`` of
``tests/pipelines/statutes/pl/test_pl_parser.py`` (the Civil Code measurement) by the letter after
a superscript and by ", ; )"; both changes only level typography the exam files lose.

Misses: every question not contained in its cited unit of the "used" version is listed with the
class of ``bench/data/containment_exceptions.jsonl`` (one object per line, keyed by ``qid`` =
``<year>/<file>#<id>``: ``class`` exam | amendment | parser | unit_id | normalisation, ``why``, and
optionally a check of the explanation: ``edits`` ([old, new] pairs applied to the exam quote) and
``cut_at`` (the quote is cut before this string), after which the quote must be contained in the
cited unit of ``version`` (default: the used one) — "verified" in the list). Unclassified misses are
marked ``UNCLASSIFIED`` with the expected/found text, and the script exits 1 when there are any;
entries of the file that no longer match a miss are reported as stale.

Result (2021–2023, 339 questions, 2026-11-25): see BENCHMARKS.md "Exam containment per code".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from parse_acts import SPECS  # noqa: E402
from pipelines.benchmarks.legal_basis import _SUP_RUN, _SUPERSCRIPTS, parse_legal_basis  # noqa: E402

ACTS = ["pl:kc", "pl:kpc", "pl:kp", "pl:kk"]
SHORT = {"pl:kc": "k.c.", "pl:kpc": "k.p.c.", "pl:kp": "k.p.", "pl:kk": "k.k."}
CLASSES = ("exam", "amendment", "parser", "unit_id", "normalisation")
EXCEPTIONS = Path(__file__).resolve().parent / "data" / "containment_exceptions.jsonl"
RANK = {"unit": 2, "article": 1, "none": 0, "missing": 0}


def _norm(s: str) -> str:  # as tests/pipelines/statutes/pl/test_pl_parser.py
    return re.sub(r"\s+", " ", s).strip()


def _lenient(s: str) -> str:
    """Whitespace collapsed; superscripts (with a letter printed raised: ^1a) dropped; a space before
    . , ; ) closed up; an appended date stamp removed (module docstring)."""
    s = re.sub(r"\s\d{2}\.\d{2}\.\d{4}$", "", _norm(s))
    s = re.sub(r"\^\d+(?:[a-z](?![a-ząćęłńóśźż]))?", "", s)
    return re.sub(r"\s+([.,;)])", r"\1", s)


def _sup(s: str) -> str:
    return _SUP_RUN.sub(lambda m: "^" + "".join(_SUPERSCRIPTS[c] for c in m.group()), s)


def pick_version(versions: list[dt.date], exam: dt.date) -> dt.date:
    before = [v for v in versions if v <= exam]
    return max(before) if before else min(versions)


def unit_texts(ps) -> tuple[dict[str, str], dict[str, str]]:
    """(unit id → text, article id → text incl. pending reading) of a ``parse_statute`` result."""
    units, arts = {}, {}
    for a in ps.articles:
        arts[a.id] = a.text + ("\n" + a.text_pending if a.text_pending else "")
        for u in a.units:
            units[u.id] = u.text
    return units, arts


def home_texts(version_dir: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The same from a published version (``nodes.parquet``: unit texts; ``articles.parquet``)."""
    import pyarrow.parquet as pq

    units = {r["id"]: r["text"] or "" for r in pq.read_table(version_dir / "nodes.parquet",
             columns=["id", "level", "text"]).to_pylist() if r["level"] in ("paragraph", "point", "letter")}
    arts = {r["id"]: r["text"] + ("\n" + r["text_pending"] if r["text_pending"] else "")
            for r in pq.read_table(version_dir / "articles.parquet", columns=["id", "text", "text_pending"]).to_pylist()}
    return units, arts


def check(content: str, ref, parsed) -> tuple[str, str, bool]:
    """→ (outcome unit|article|none|missing, found text, strict-contained-in-unit)."""
    units, arts = parsed
    exp = _sup(content)
    if ref.article_id not in arts:
        return "missing", "", False
    art = arts[ref.article_id]
    unit = art if ref.unit_id == ref.article_id else units.get(ref.unit_id)
    if unit is not None and _lenient(exp) in _lenient(unit):
        return "unit", unit, _norm(exp) in _norm(unit)
    if _lenient(exp) in _lenient(art):
        return "article", art, False
    return "none", unit if unit is not None else art, False


def load_exceptions(path: Path) -> dict[str, dict]:
    out = {}
    if path.exists():
        for n, line in enumerate(path.open(encoding="utf-8"), 1):
            if line.strip():
                e = json.loads(line)
                if e.get("class") not in CLASSES:
                    raise SystemExit(f"{path}:{n}: class {e.get('class')!r} not in {CLASSES}")
                out[e["qid"]] = e
    return out


def verify(entry: dict, content: str, ref, texts: dict[dt.date, tuple], used: dt.date) -> str:
    """'verified' when the corrected quote (edits, cut_at) is in the cited unit of the entry's version."""
    if not any(k in entry for k in ("edits", "cut_at", "version")):
        return ""
    text = content
    for old, new in entry.get("edits", []):
        if old not in text:
            return f"NOT verified (edit {old[:30]!r} not in the quote)"
        text = text.replace(old, new)
    if "cut_at" in entry:
        if entry["cut_at"] not in text:
            return f"NOT verified (cut_at {entry['cut_at'][:30]!r} not in the quote)"
        text = text[:text.index(entry["cut_at"])]
    v = dt.date.fromisoformat(entry["version"]) if entry.get("version") else used
    if v not in texts:
        return f"NOT verified (no version {v})"
    outcome = check(text, ref, texts[v])[0]
    return f"verified @{v}" if outcome == "unit" else f"NOT verified (corrected quote: {outcome} @{v})"


@dataclass
class Q:
    row: dict
    ref: object
    outcomes: dict = field(default_factory=dict)  # version → outcome
    strict: dict = field(default_factory=dict)

    @property
    def qid(self) -> str:
        return f"{self.row['_file']}#{self.row['id']}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--years", nargs="+", type=int, default=[2021, 2022, 2023])
    ap.add_argument("--home", help="read the published versions of this LEXPIPE_HOME instead of parsing the PDFs")
    ap.add_argument("--exceptions", type=Path, default=EXCEPTIONS)
    ap.add_argument("--details", action="store_true", help="expected/found text for classified misses too")
    args = ap.parse_args()
    root = Path(args.sample_dir) / "pl"

    texts: dict[str, dict[dt.date, tuple]] = {}
    serving: dict[str, dt.date] = {}
    if args.home:
        for act in ACTS:
            d = Path(args.home) / "corpus" / "pl" / act.split(":")[1]
            if not (d / "current.json").exists():
                continue
            cur = json.loads((d / "current.json").read_text())
            serving[act] = dt.date.fromisoformat(cur["version"])
            texts[act] = {dt.date.fromisoformat(v): home_texts(d / v) for v in cur["published_versions"]}
    else:
        from pipelines.statutes.pl.parser import parse_statute

        for pdf in sorted((root / "isap").glob("*.pdf")):
            spec = SPECS.get(pdf.name[:9])
            if spec and spec.act_id in ACTS:
                v = dt.date.fromisoformat(pdf.stem.rsplit("_", 1)[1])
                texts.setdefault(spec.act_id, {})[v] = unit_texts(parse_statute(pdf, v, spec))
        serving = {act: max(vs) for act, vs in texts.items()}
    exceptions = load_exceptions(args.exceptions)

    rows = []
    for year in args.years:
        for f in sorted((root / "exams" / str(year)).glob("*.jsonl")):
            rows += [json.loads(line) | {"_file": f"{year}/{f.stem}"} for line in f.open() if line.strip()]

    skipped = Counter()
    per_act: dict[str, list[Q]] = {a: [] for a in ACTS}
    for r in rows:
        refs = parse_legal_basis(r["legal_basis"], corpus_acts=ACTS)
        acts = {x.act_id for x in refs}
        if not acts & set(ACTS):
            continue
        if len(refs) != 1:
            skipped[next(iter(acts & set(ACTS)))] += 1
            continue
        per_act[refs[0].act_id].append(Q(r, refs[0]))

    head = (f"{'act':7} {'quest.':>6} | {'version used':22} {'unit':>4} {'+art':>4} {'%unit':>6} {'%u+art':>6} "
            f"{'strict':>6} | {'serving':10} {'%unit':>6} {'%u+art':>6} | {'any: unit':>9} {'%':>6} "
            f"{'u+art':>5} {'%':>6} | {'multi':>5}")
    print(head)
    print("-" * len(head))
    misses: list[tuple[str, Q, dt.date]] = []
    for act in ACTS:
        qs = per_act[act]
        if act not in texts or not qs:
            print(f"{act:7} (no version or no questions)")
            continue
        versions = sorted(texts[act])
        used_c, c_used, c_serv, c_any, strict = Counter(), Counter(), Counter(), Counter(), 0
        for q in qs:
            for v in versions:
                q.outcomes[v], _, q.strict[v] = check(q.row["legal_basis_content"], q.ref, texts[act][v])
            used = pick_version(versions, dt.date(q.row["year"], 1, 1))
            used_c[used] += 1
            c_used[q.outcomes[used]] += 1
            c_serv[q.outcomes[serving[act]]] += 1
            c_any[max(q.outcomes.values(), key=RANK.get)] += 1
            strict += q.strict[used]
            if q.outcomes[used] != "unit":
                misses.append((act, q, used))
        n = len(qs)

        def pct(c: Counter, art: bool) -> str:
            return f"{100 * (c['unit'] + (c['article'] if art else 0)) / n:5.1f}%"

        vtxt = ", ".join(f"{v}×{c}" for v, c in sorted(used_c.items()))
        print(f"{SHORT[act]:7} {n:6} | {vtxt:22} {c_used['unit']:4} {c_used['unit'] + c_used['article']:4} "
              f"{pct(c_used, False):>6} {pct(c_used, True):>6} {100 * strict / n:5.1f}% | {str(serving[act]):10} "
              f"{pct(c_serv, False):>6} {pct(c_serv, True):>6} | {c_any['unit']:9} {pct(c_any, False):>6} "
              f"{c_any['unit'] + c_any['article']:5} {pct(c_any, True):>6} | {skipped[act]:5}")

    print(f"\nMisses: not contained in the cited unit of the version used ({len(misses)}); "
          "outcome per version held (unit / article = in the article only / none); class from "
          f"{args.exceptions.name}")
    by_class, unclassified = Counter(), 0
    seen = set()
    for act, q, used in misses:
        seen.add(q.qid)
        e = exceptions.get(q.qid)
        per_v = " ".join(f"{v}:{o}" for v, o in sorted(q.outcomes.items()))
        cls = e["class"] if e else "UNCLASSIFIED"
        by_class[cls] += 1
        unclassified += e is None
        ver = verify(e, q.row["legal_basis_content"], q.ref, texts[act], used) if e else ""
        print(f"\n{cls:13} {q.qid:28} {q.row['legal_basis']!r:28} {per_v}" + (f"  [{ver}]" if ver else ""))
        if e:
            print(f"              why: {e['why']}")
        if e is None or args.details:
            found = check(q.row["legal_basis_content"], q.ref, texts[act][used])[1]
            print(f"              expected: {_norm(_sup(q.row['legal_basis_content']))[:160]}")
            print(f"              found:    {_norm(found)[:160]}")
    stale = [k for k in exceptions if k not in seen]
    print("\nBy class: " + ", ".join(f"{c} {k}" for c, k in by_class.most_common()))
    if stale:
        print(f"Stale entries of {args.exceptions.name} (no longer a miss): {', '.join(stale)}")
    return 1 if unclassified else 0


if __name__ == "__main__":
    sys.exit(main())
