"""Statute-citation extraction against the refex gold standard: precision / recall / F1.

    .venv/bin/python bench/citations.py [--sample-dir ../shared/data] [--errors] [--set all|dev|test]

Runs the spaCy pipeline (``spacy.blank("de")`` + ``german_statute_citations``) over the canonical
``text`` of every refex document that has gold annotations and scores law citations
(``pipelines/citations/evaluation.py`` defines the matching rules): span detection by exact span
and by one-to-one overlap, and the linked target (act + § / Art. number) on overlap-matched
pairs. Rows for the dev half (even positions by doc_id), the test half (odd positions) and all.
Then: how many predicted citations of corpus acts (BGB, GG, HGB, StGB, StPO, ZPO) resolve to an
existing unit id of the parsed statutes (``<sample-dir>/de/gesetze``). ``--errors`` lists every
false positive / false negative (overlap rule) and every target disagreement.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.citations.evaluation import (Scores, Span, label_contradicts_span, load_refex,  # noqa: E402
                                            match_overlap, split_dev_test)
from pipelines.citations.german import make_nlp  # noqa: E402
from pipelines.citations.known_ids import corpus_unit_ids  # noqa: E402


def _row(name: str, docs: int, gold: int, prf) -> str:
    return (f"| {name} | {docs} | {gold} | {prf.tp} | {prf.fp} | {prf.fn} | "
            f"{prf.precision:.3f} | {prf.recall:.3f} | {prf.f1:.3f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-dir", type=Path, default=Path("../shared/data"))
    ap.add_argument("--errors", action="store_true", help="list false positives / negatives")
    ap.add_argument("--set", choices=("all", "dev", "test"), default="all", help="which docs --errors lists")
    ap.add_argument("--keep-unresolved", action="store_true",
                    help="also emit citations whose act is named nowhere in their list/chain")
    args = ap.parse_args()

    refex_dir = args.sample_dir / "de" / "refex"
    docs = load_refex(refex_dir)
    dev, test = split_dev_test(docs)
    annotated = dev + test
    known = corpus_unit_ids(args.sample_dir / "de" / "gesetze")
    nlp = make_nlp(known_ids=known, keep_unresolved=args.keep_unresolved)

    t0 = time.perf_counter()
    preds: dict[str, list] = {}
    for d in annotated:
        preds[d.doc_id] = list(nlp(d.text)._.citations)
    secs = time.perf_counter() - t0
    spans = {k: [Span(c.start, c.end, c.text, c.act_key, c.number) for c in v] for k, v in preds.items()}

    print(f"refex: {len(docs)} documents, {len(annotated)} with gold annotations "
          f"({sum(len(d.gold) for d in annotated)} law citations); "
          f"{len(docs) - len(annotated)} without annotations (not scored)")
    chars = sum(len(d.text) for d in annotated)
    print(f"extraction: {sum(len(v) for v in preds.values())} citations in {secs:.2f} s "
          f"({chars:,} characters, {chars / secs / 1000:.0f} k chars/s, spaCy tokenizer included)\n")
    print("| set | docs | gold | TP | FP | FN | P | R | F1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, subset in (("dev", dev), ("test", test), ("all", annotated)):
        sc = Scores()
        for d in subset:
            sc.add(d.gold, spans[d.doc_id])
        gold_n = sum(len(d.gold) for d in subset)
        gold_t = sum(1 for d in subset for g in d.gold if g.target)
        print(_row(f"{label}: span exact", sc.docs, gold_n, sc.exact))
        print(_row(f"{label}: span overlap", sc.docs, gold_n, sc.overlap))
        print(_row(f"{label}: target (act + §) on overlap", sc.docs, gold_t, sc.target))
        clean = Scores()
        for d in subset:
            keep = [i for i, g in enumerate(d.gold) if not label_contradicts_span(g)]
            dropped = [g for g in d.gold if label_contradicts_span(g)]
            pred = [p for p in spans[d.doc_id]
                    if not any(min(p.end, g.end) > max(p.start, g.start) for g in dropped)]
            clean.add([d.gold[i] for i in keep], pred)
        n_bad = sum(label_contradicts_span(g) for d in subset for g in d.gold)
        print(_row(f"{label}: target, without {n_bad} gold labels contradicting their span", clean.docs,
                   gold_t - sum(1 for d in subset for g in d.gold if g.target and label_contradicts_span(g)),
                   clean.target))

    status = Counter(c.link_status for v in preds.values() for c in v)
    corpus = [c for v in preds.values() for c in v if c.in_corpus]
    print(f"\nlinks: {dict(sorted(status.items()))}")
    if corpus:
        verified = sum(c.link_status == "verified" for c in corpus)
        full = sum(1 for c in corpus if c.unit_id and c.unit_id.count(":") >= 3 and
                   c.unit_id == _most_specific(c))
        print(f"corpus-act citations: {len(corpus)}; resolved to an existing unit id: {verified} "
              f"({verified / len(corpus):.1%}); at the most specific level cited: {full}")

    if args.errors:
        chosen = {"all": annotated, "dev": dev, "test": test}[args.set]
        for d in chosen:
            pred = spans[d.doc_id]
            pairs = match_overlap(d.gold, pred)
            mg = {g for g, _ in pairs}
            mp = {p for _, p in pairs}
            lines = []
            for gi, g in enumerate(d.gold):
                if gi not in mg:
                    lines.append(f"  FN  {g.text!r:60} gold={g.target} ctx={_ctx(d.text, g)!r}")
            for pi, p in enumerate(pred):
                if pi not in mp:
                    lines.append(f"  FP  {p.text!r:60} pred={p.target} ctx={_ctx(d.text, p)!r}")
            for gi, pi in pairs:
                g, p = d.gold[gi], pred[pi]
                if (g.start, g.end) != (p.start, p.end):
                    lines.append(f"  BOUND gold={g.text!r} pred={p.text!r}")
                if g.target and p.target and g.target != p.target:
                    lines.append(f"  TARGET gold={g.target} pred={p.target} {p.text!r}")
            if lines:
                print(f"\n{d.doc_id}")
                print("\n".join(lines))
    return 0


def _most_specific(c) -> str:
    from pipelines.citations.german import candidate_ids

    ids = candidate_ids(c)
    return ids[-1] if ids else ""


def _ctx(text: str, s: Span, width: int = 40) -> str:
    return text[max(0, s.start - width):s.end + width].replace("\n", " ")


if __name__ == "__main__":
    raise SystemExit(main())
