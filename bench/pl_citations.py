"""Polish citation extraction against SAOS's referencedRegulations: (act, article) P / R / F1.

    .venv/bin/python bench/pl_citations.py [--sample-dir ../shared/data] [--disagreements dev|test]
                                           [--held-only] [--limit N]

Runs the spaCy pipeline (``spacy.blank("pl")`` + ``polish_statute_citations``) over the clean text
of every judgment of two real SAOS dump pages and scores, per judgment, the extracted (act id,
article) pairs against the pairs SAOS lists (``pipelines/citations/pl_evaluation.py``): micro
precision / recall / F1 over judgments, for the acts the corpus holds (the Polish acts of the act
registry) and for all acts.

Page 347 is the **dev** page: every rule was chosen by reading its judgments and disagreements.
Page 355 is the **test** page: run only to report. Seconds are the extractor's (spaCy pipeline),
not the HTML cleaning. ``--disagreements dev|test`` prints that page's disagreements.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.citations import pl_acts  # noqa: E402
from pipelines.citations.pl_evaluation import Report, evaluate, load_page  # noqa: E402
from pipelines.citations.polish import make_pl_nlp  # noqa: E402

PAGES = (("dev", 347), ("test", 355))


def _row(split: str, page: int, r: Report) -> str:
    return (f"| {page} ({split}) | {r.judgments} | {r.saos_pairs} | {r.extracted_pairs} | {r.citations} | "
            f"{r.unresolved} | {r.held.precision:.3f} | {r.held.recall:.3f} | {r.held.f1:.3f} | "
            f"{r.all.precision:.3f} | {r.all.recall:.3f} | {r.all.f1:.3f} | {r.seconds:.2f} | "
            f"{r.citations_per_second:,.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--disagreements", choices=("dev", "test"), help="list that page's disagreements")
    ap.add_argument("--held-only", action="store_true", help="with --disagreements: held acts only")
    ap.add_argument("--limit", type=int, default=0, help="with --disagreements: at most N")
    args = ap.parse_args()

    nlp = make_pl_nlp()

    def extract(text: str, date: str | None):
        doc = nlp.make_doc(text)
        doc._.judgment_date = date
        for _, proc in nlp.pipeline:
            doc = proc(doc)
        return doc._.pl_citations

    print(f"held acts (act registry): {', '.join(sorted(pl_acts.held_ids()))}")
    print("page 347 = dev (rules chosen on it), page 355 = test (reported only)\n")
    print("| page | judgments | SAOS pairs | extracted pairs | citations | without act | held P | held R | held F1 "
          "| all P | all R | all F1 | seconds | citations/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    reports = {}
    for split, page in PAGES:
        path = args.sample_dir / "pl" / "saos" / f"judgments-page-{page}.json"
        rep = evaluate(load_page(path), extract)
        reports[split] = rep
        print(_row(split, page, rep))
        sys.stdout.flush()
    print("\nheld = pairs of acts the corpus holds; all = every act; a range counts every article; "
          "citations without an act are no pairs")
    if args.disagreements:
        rep = reports[args.disagreements]
        n = 0
        for d in rep.disagreements:
            if args.held_only and not d.held:
                continue
            print(f"{d.side}\t{d.judgment_id}\t{d.act_id}\t{d.article}")
            n += 1
            if args.limit and n >= args.limit:
                break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
