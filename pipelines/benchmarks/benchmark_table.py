"""All benchmark sources → one Arrow table (``schemas.arrow.BENCHMARK_QUESTIONS``), de-duplicated.

Source order decides which copy of a repeated question is kept (the first): the official exam
PDFs first — they are the authority, complete, and print superscript articles the JSONL compilers
could not resolve — then the compiled JSONL by year and exam, then GerLayQA. A dropped duplicate
is not lost: its id goes into the kept row's ``also_in``, so provenance (e.g. the same question
in the bar and the notary exam) remains queryable.

Duplicates are found by ``text_hash`` (normalised question *and* options): exams re-use a stem
with different options and a different gold answer, and those are different items.

:func:`build_benchmark_table` is what the Dagster asset binds; :func:`validate_benchmark_table`
runs the GX suite (``schemas.expectations.benchmark_questions_suite``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.benchmarks.exam_jsonl import load_exam_jsonl_dir
from pipelines.benchmarks.exam_pdf import exam_pdf_pairs, load_exam_pdfs
from pipelines.benchmarks.gerlayqa import load_gerlayqa
from pipelines.benchmarks.legal_basis import exam_corpus_acts
from pipelines.benchmarks.records import BenchmarkQuestion
from schemas.arrow import BENCHMARK_QUESTIONS, from_rows

if TYPE_CHECKING:  # pragma: no cover
    from pipelines.validation import ValidationReport

EXAMS_DIR = Path("pl/exams")
EXAM_PDFS_DIR = Path("pl/exam-pdfs")
GERLAYQA_FILE = Path("de/gerlayqa/bgb_dev.json")


def dedup_questions(questions: Iterable[BenchmarkQuestion]) -> list[BenchmarkQuestion]:
    """First occurrence of each ``text_hash`` wins; later ids are appended to its ``also_in``."""
    kept: dict[str, BenchmarkQuestion] = {}
    for q in questions:
        first = kept.get(q.text_hash)
        if first is None:
            kept[q.text_hash] = q
        else:
            first.also_in.append(q.id)
    return list(kept.values())


def questions_to_table(questions: Sequence[BenchmarkQuestion]) -> pa.Table:
    """Rows in the given order, cast to BENCHMARK_QUESTIONS (descriptions included)."""
    return from_rows([q.to_row() for q in questions], BENCHMARK_QUESTIONS)


def load_all_questions(sample_dir: Path, *, include_pdfs: bool = True, include_gerlayqa: bool = True,
                       corpus_acts: Iterable[str] | None = None) -> list[BenchmarkQuestion]:
    """Every source under ``sample_dir`` in precedence order (PDFs, JSONL, GerLayQA), not de-duplicated.

    A missing source directory or file raises FileNotFoundError naming it: a nightly build that
    silently lost a source would report better-looking metrics on fewer questions.
    """
    sample_dir = Path(sample_dir)
    acts = exam_corpus_acts() if corpus_acts is None else frozenset(corpus_acts)
    out: list[BenchmarkQuestion] = []
    if include_pdfs:
        pdf_dir = sample_dir / EXAM_PDFS_DIR
        if not pdf_dir.is_dir():
            raise FileNotFoundError(f"{pdf_dir}: exam PDF directory not found")
        for questions_pdf, answers_pdf in exam_pdf_pairs(pdf_dir):
            out += load_exam_pdfs(questions_pdf, answers_pdf, sample_dir=sample_dir, corpus_acts=acts)
    out += load_exam_jsonl_dir(sample_dir / EXAMS_DIR, sample_dir=sample_dir, corpus_acts=acts)
    if include_gerlayqa:
        path = sample_dir / GERLAYQA_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{path}: GerLayQA file not found")
        out += load_gerlayqa(path, sample_dir=sample_dir, corpus_acts=acts)
    return out


def build_benchmark_table(sample_dir: Path) -> pa.Table:
    """The benchmark table from every source under ``sample_dir``, de-duplicated (first source kept)."""
    return questions_to_table(dedup_questions(load_all_questions(sample_dir)))


def prepare_benchmark_frame(table: pa.Table) -> pd.DataFrame:
    """Flat frame for the GX suite with the derived columns it checks (see
    ``schemas.expectations.benchmark_questions_suite``)."""
    from pipelines.validation import prepare_frame

    options = table["options"].to_pylist()
    gold = table["gold_option"].to_pylist()
    refs = table["gold_refs"].to_pylist()
    derived = {
        "option_count": pa.array([len(o or []) for o in options], pa.int32()),
        "gold_option_listed": pa.array(
            [True if not o and g is None else g in {x["letter"] for x in (o or [])} for o, g in zip(options, gold)],
            pa.bool_()),
        "gold_ref_count": pc.fill_null(pc.list_value_length(table["gold_refs"]), 0).cast(pa.int32()),
        "unresolved_ref_count": pa.array([sum(r["act_id"] is None for r in (rs or [])) for rs in refs], pa.int32()),
    }
    for name, column in derived.items():
        table = table.append_column(name, column)
    return prepare_frame(table)


def validate_benchmark_table(table: pa.Table, *, min_rows: int | None = None) -> ValidationReport:
    """Run the benchmark suite; never raises on failures (check ``report.success``)."""
    from pipelines.validation import validate_table
    from schemas.expectations import benchmark_questions_suite

    return validate_table(table, benchmark_questions_suite(min_rows=min_rows), name="benchmark_questions",
                          prepare=prepare_benchmark_frame)


def table_stats(table: pa.Table) -> dict[str, object]:
    """Counts for logs and asset metadata: rows per source, refs, refs outside the corpus,
    superscript refs (``^`` in the unit id)."""
    refs = [r for rs in table["gold_refs"].to_pylist() for r in (rs or [])]
    return {
        "rows": table.num_rows,
        "rows_per_source": dict(Counter(table["source"].to_pylist())),
        "rows_per_benchmark": dict(Counter(table["benchmark"].to_pylist())),
        "refs": len(refs),
        "refs_in_corpus": sum(r["in_corpus"] for r in refs),
        "refs_in_corpus_per_act": dict(sorted(Counter(r["act_id"] for r in refs if r["in_corpus"]).items())),
        "refs_outside_corpus": sum(not r["in_corpus"] for r in refs),
        "refs_unresolved": sum(r["act_id"] is None for r in refs),
        "superscript_refs": sum("^" in (r["unit_id"] or "") for r in refs),
        "duplicates_dropped": sum(len(a or []) for a in table["also_in"].to_pylist()),
    }
