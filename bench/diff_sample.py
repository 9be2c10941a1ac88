"""The diff of two ISAP versions of an act: counts, removed / added ids, and a sample checked against
the PDFs.

    .venv/bin/python bench/diff_sample.py [--act D19740141] [--old 2016-09-22] [--new 2025-12-10]
                                          [--home DIR [--rediff]] [--check N] [--sample N] [--seed 0]
                                          [--sample-dir ../shared/data]

Runs ``pipelines.statutes.diff.diff_versions`` on the two ARTICLES tables, parsed from the PDFs by
the current parser or, with ``--home``, as published in that ``$LEXPIPE_HOME``; ``--rediff`` also
rewrites the published ``diff_from_<old>.parquet`` / ``.md`` of ``--new`` there (staged copy of the
published folder, ``pipelines.statutes.pl.build.diff_step``, then ``publish_version``: what the
Dagster ``diff`` asset does). Prints the counts, before and after editorial normalisation (what a
diff comparing citations only would say), the removed ids grouped by the old structural unit (with
the new version's node of that id: "(zawierający art. … – uchylony)" says the unit was repealed
whole) and the added ids.

``--check N`` (and ``--units 88,986^1``): N units of each class (and those articles) (editorial ones of distinct kinds of difference first), each
looked up in both PDFs' pdfium text (the pages the parser gave, the span from its "Art. N." head,
superscripts fused, footnote references dropped) and printed as one table row: act, unit, class,
what the two PDFs print at the word diff (one hunk, shortened), and an automatic verdict —
``ok`` when the PDFs bear the class out (added: the head is only in the new PDF; removed: only in the
old; repealed: the new span says "uchylon…"; changed / editorial: the old words are in the old PDF
and the new words in the new one), ``REVIEW`` otherwise. The sample and its verdicts read by hand
are in BENCHMARKS.md ("Diffs of k.p. and k.p.c.").

k.p. 2016-09-22 → 2025-12-10 (the published articles of the issue 14 home): 53 added, 80 changed,
4 repealed, 49 removed, 82 editorial (161 changed and 1 editorial before ``editorial_form``). The 49
"removed" are real: all 49 article heads occur once in the 2016 PDF and not at all in the 2025 PDF,
which prints in their place "Rozdział IIb (zawierający art. 67⁵–67¹⁷ – uchylony)" (telework,
replaced by Rozdział IIc "Praca zdalna", art. 67¹⁸–67³⁴: 17 of the 53 added) and "DZIAŁ JEDENASTY
(uchylony)" (collective agreements, art. 238–241³⁰). They are "removed" rather than "repealed"
because the repeal is recorded on the chapter / division node, not on article rows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
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

import pyarrow as pa  # noqa: E402

from parse_acts import SPECS  # noqa: E402
from pipelines.statutes.diff import diff_versions, editorial_form, strip_citations  # noqa: E402
from pipelines.statutes.pl.parser import parse_statute  # noqa: E402
from pipelines.statutes.pl.tables import articles_table, nodes_table  # noqa: E402

KINDS = ("added", "changed", "repealed", "removed", "editorial")


def side_by_side(old: str | None, new: str | None, width: int = 70) -> str:
    wrap = lambda t: [ln for para in (t or "—").split("\n") for ln in (textwrap.wrap(para, width) or [""])]  # noqa: E731
    return "\n".join(f"  {a:<{width}} | {b}" for a, b in zip_longest(wrap(old), wrap(new), fillvalue=""))


def citation_only(rows: list[dict]) -> Counter:
    """The counts when only ``(Dz. U. …)`` citations are ignored (the rule before ``editorial_form``)."""
    def kind(r: dict) -> str:
        if r["change"] not in ("changed", "editorial"):
            return r["change"]
        return "editorial" if strip_citations(r["old_text"]) == strip_citations(r["new_text"]) else "changed"
    return Counter(kind(r) for r in rows)


# -- the PDFs' text ---------------------------------------------------------------------------------

_HEADER = re.compile(r"^(©Kancelaria Sejmu s\. \d+/\d+|\d{4}-\d{2}-\d{2})\s*$", re.M)
_FOOTNOTE_REF = re.compile(r"(?<=[a-ząćęłńóśźż.,;:)])\d{1,3}\)")


def pdf_pages(pdf: Path) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return [_HEADER.sub("", doc[i].get_textpage().get_text_range()).replace("\r", "") for i in range(len(doc))]
    finally:
        doc.close()


def fused(number: str) -> str:
    """"67^5" as pdfium prints it: "675" (the superscript is a separate, smaller glyph run)."""
    return number.replace("^", "")


def article_span(pages: list[str], number: str, first: int | None, last: int | None) -> str | None:
    """The text from the line "Art. <number>." to the next article head, on the pages the parser
    gave (± 1), or anywhere when it has no pages; None when the head is not printed."""
    lo, hi = ((first or 1) - 2, (last or first or 1) + 1) if first else (0, len(pages))
    text = "\n".join(pages[max(lo, 0):hi])
    digits = r"\s*".join(map(re.escape, fused(number)))  # pdfium may put the superscript on a line of its own
    m = re.search(rf"(?m)^[<\[]?Art\. {digits}\s*\.", text)  # <Art. …: printed for a later date
    if not m:
        return None
    nxt = re.search(r"(?m)^[<\[]?Art\. \d", text[m.end():])
    return text[m.start(): m.end() + (nxt.start() if nxt else len(text))]


def squeeze(text: str) -> str:
    """For finding a parsed passage in pdfium text: no spaces, superscripts fused, footnote refs and
    ISAP's < > [ ] markers of announced / expiring wording dropped."""
    t = _FOOTNOTE_REF.sub("", re.sub(r"[\s<>\[\]]+", "", text or ""))
    return re.sub(r"[\u2010-\u2015\u2212]", "-", t.replace("^", ""))


def first_hunk(old: str, new: str, context: int = 2, real: bool = False) -> tuple[str, str]:
    """The first word-level difference of two readings, with ``context`` words either side; with
    ``real``, the first one ``editorial_form`` does not level (a changed article may also be reprinted)."""
    a, b = re.findall(r"\S+", old or ""), re.findall(r"\S+", new or "")
    hunks = [(i1, i2, j1, j2, " ".join(a[max(i1 - context, 0):i2 + context]), " ".join(b[max(j1 - context, 0):j2 + context]))
             for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op != "equal"]
    base = editorial_form(" ".join(a))
    for i1, i2, j1, j2, ctx_a, ctx_b in hunks:  # real: applying this hunk alone changes the editorial form
        if not real or editorial_form(" ".join(a[:i1] + b[j1:j2] + a[i2:])) != base:
            return ctx_a, ctx_b
    return (hunks[0][2], hunks[0][3]) if hunks else ("", "")


def shorten(s: str, n: int = 60) -> str:
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[: n // 2 - 1] + "…" + s[-(n // 2 - 1):]


def check_row(r: dict, old_art: dict | None, new_art: dict | None, old_pages: list[str], new_pages: list[str]) -> tuple[str, str]:
    """(what the two PDFs print, verdict) for one diff row."""
    span = lambda pages, a: article_span(pages, r["number"], a and a["page_start"], a and a["page_end"])  # noqa: E731
    o_span, n_span = span(old_pages, old_art), span(new_pages, new_art)
    o_any = article_span(old_pages, r["number"], None, None)
    kind = r["change"]
    if kind == "added":
        said = f"new: {shorten(squeeze_view(n_span))}; old: {'head printed' if o_any else 'no such head'}"
        return said, "ok" if n_span and not o_any else "REVIEW"
    if kind == "removed":
        n_any = article_span(new_pages, r["number"], None, None)
        said = f"old: {shorten(squeeze_view(o_span))}; new: {'head printed' if n_any else 'no such head'}"
        return said, "ok" if o_span and not n_any else "REVIEW"
    if kind == "repealed":
        said = f"old: {shorten(squeeze_view(o_span))}; new: {shorten(squeeze_view(n_span))}"
        return said, "ok" if o_span and n_span and "uchylon" in n_span and "uchylon" not in o_span[:40] else "REVIEW"
    # the text in force first, else the announced reading (the diff's reading joins them with a
    # "[from <date>:]" line the PDFs do not print)
    o_txt, n_txt = (old_art or {}).get("text") or "", (new_art or {}).get("text") or ""
    real = kind == "changed"
    a, b = first_hunk(o_txt, n_txt, real=real) if editorial_form(o_txt) != editorial_form(n_txt) or not real else \
        first_hunk((old_art or {}).get("text_pending") or "", (new_art or {}).get("text_pending") or "", real=real)
    in_old, in_new = bool(o_span) and squeeze(a) in squeeze(o_span), bool(n_span) and squeeze(b) in squeeze(n_span)
    said = f"old «{shorten(a, 50)}» {'✓' if in_old else '✗'} / new «{shorten(b, 50)}» {'✓' if in_new else '✗'}"
    if kind == "changed":  # and the PDFs do differ there: not both readings in both PDFs
        both = squeeze(a) in squeeze(n_span) and squeeze(b) in squeeze(o_span or "")
        return said + (" (both in both PDFs)" if both else ""), "ok" if in_old and in_new and not both else "REVIEW"
    return said, "ok" if in_old and in_new else "REVIEW"


def squeeze_view(span: str | None) -> str:
    if not span:
        return "not printed"
    return re.sub(r"\s+", " ", span).strip()


def pick(rows: list[dict], kind: str, n: int, rng: random.Random) -> list[dict]:
    pool = [r for r in rows if r["change"] == kind]
    if kind != "editorial":
        return rng.sample(pool, min(n, len(pool)))
    by_kind: dict[tuple, list[dict]] = {}  # one per kind of difference first ("(uchylony)." is 59 of 82)
    for r in pool:
        a, b = first_hunk(r["old_text"], r["new_text"], context=0)
        by_kind.setdefault((re.sub(r"\w", "x", a), re.sub(r"\w", "x", b)), []).append(r)
    groups = list(by_kind.values())
    rng.shuffle(groups)
    out = [rng.choice(g) for g in groups[:n]]
    rest = [r for r in pool if r not in out]
    return out + rng.sample(rest, min(n - len(out), len(rest)))


# -- main -------------------------------------------------------------------------------------------

def tables(args, spec, isap: Path) -> tuple[tuple[pa.Table, pa.Table], tuple[pa.Table, pa.Table]]:
    if args.home:
        from core.layout import Layout
        from pipelines.statutes.store import CorpusStore

        store = CorpusStore(Layout(Path(args.home)))
        return tuple((store.read(spec.act_id, v, "articles", published_only=True),  # type: ignore[return-value]
                      store.read(spec.act_id, v, "nodes", published_only=True)) for v in (args.old, args.new))
    out = []
    for v in (args.old, args.new):
        ps = parse_statute(isap / f"{args.act}Lj_{v}.pdf", dt.date.fromisoformat(v), spec)
        out.append((articles_table(ps), nodes_table(ps)))
    return tuple(out)  # type: ignore[return-value]


def rediff(home: Path, act_id: str, old: str, new: str) -> None:
    """Rewrite the published diff of ``new`` as the pipeline would: stage, diff, publish."""
    from core.layout import Layout
    from pipelines.statutes.pl.build import diff_step
    from pipelines.statutes.publish import publish_version
    from pipelines.statutes.store import CorpusStore

    layout = Layout(home)
    store = CorpusStore(layout)
    chunker = store.manifest(layout.version_dir(act_id, new)).get("chunker")
    store.stage_published_copy(act_id, new)
    prev, _, _ = diff_step(layout, act_id=act_id, version=new)
    if prev != old:
        store.discard_staging(act_id, new)
        raise SystemExit(f"{act_id} {new}: the previous published version is {prev}, not {old}")
    publish_version(layout, act_id=act_id, version=new, chunker=chunker)
    print(f"rewrote {layout.version_dir(act_id, new)}/diff_from_{old}.parquet")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample-dir", default=os.environ.get(
        "LEXPIPE_SAMPLE_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    ap.add_argument("--act", default="D19740141", help="ISAP file prefix (bench/parse_acts.py SPECS)")
    ap.add_argument("--old", default="2016-09-22")
    ap.add_argument("--new", default="2025-12-10")
    ap.add_argument("--home", help="read the published articles of this LEXPIPE_HOME instead of parsing")
    ap.add_argument("--rediff", action="store_true", help="with --home: rewrite the published diff")
    ap.add_argument("--check", type=int, default=0, help="check N units per class against the PDFs")
    ap.add_argument("--units", default="", help="with --check: also these article numbers (comma-separated)")
    ap.add_argument("--sample", type=int, default=0, help="print N units per class side by side")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    isap, spec = Path(args.sample_dir) / "pl" / "isap", SPECS[args.act]
    if args.rediff:
        if not args.home:
            ap.error("--rediff needs --home")
        rediff(Path(args.home), spec.act_id, args.old, args.new)
    (old_a, old_n), (new_a, new_n) = tables(args, spec, isap)
    rows = diff_versions(old_a, new_a).to_pylist()
    counts, before = Counter(r["change"] for r in rows), citation_only(rows)
    print(f"{spec.short_name} {args.old} → {args.new} ({'home ' + args.home if args.home else 'parsed now'})")
    print("| | " + " | ".join(KINDS) + " |\n|---|" + "---:|" * len(KINDS))
    print("| citations only | " + " | ".join(str(before[k]) for k in KINDS) + " |")
    print("| editorial_form | " + " | ".join(str(counts[k]) for k in KINDS) + " |")

    old_path = {r["id"]: r["path"] for r in old_a.to_pylist()}
    new_nodes = {n["id"]: n for n in new_n.to_pylist()}
    removed = [r for r in rows if r["change"] == "removed"]
    if removed:
        print(f"\nremoved ({len(removed)}), by the old unit they were in → that unit in {args.new}:")
        groups: dict[str, list[str]] = {}
        for r in removed:
            path = old_path[r["article_id"]]
            groups.setdefault(path[-1]["id"] if path else "(top)", []).append(r["number"])
        for unit, nums in groups.items():
            node = new_nodes.get(unit)
            now = f"{node['status']}: {node['heading']}" if node else "absent"
            print(f"  {unit}: {', '.join(nums)}\n      → {now}")
    added = [r["number"] for r in rows if r["change"] == "added"]
    print(f"\nadded ({len(added)}): {', '.join(added)}")

    rng = random.Random(args.seed)
    for kind in KINDS:
        pool = [r for r in rows if r["change"] == kind]
        for r in rng.sample(pool, min(args.sample, len(pool))):
            print(f"\n=== {kind}: Art. {r['number']}  ({args.old} | {args.new})")
            print(side_by_side(r["old_text"], r["new_text"]))

    if args.check or args.units:
        old_pages, new_pages = (pdf_pages(isap / f"{args.act}Lj_{v}.pdf") for v in (args.old, args.new))
        old_arts = {r["id"]: r for r in old_a.to_pylist()}
        new_arts = {r["id"]: r for r in new_a.to_pylist()}
        rng = random.Random(args.seed)
        print(f"\n| act | unit | class | what the PDFs print ({args.old} / {args.new}) | verdict |\n|---|---|---|---|---|")
        verdicts = Counter()
        wanted = [n for n in args.units.split(",") if n]
        chosen = [r for kind in KINDS for r in pick(rows, kind, args.check, rng)]
        chosen += [r for n in wanted for r in rows if r["number"] == n and r not in chosen]
        for r in chosen:
            said, verdict = check_row(r, old_arts.get(r["article_id"]), new_arts.get(r["article_id"]),
                                      old_pages, new_pages)
            verdicts[verdict] += 1
            print(f"| {spec.short_name} | {r['article_id']} | {r['change']} | {said.replace('|', '/')} | {verdict} |")
        print(f"\nverdicts: {dict(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
