"""Compiled exam questions ``pl/exams/<year>/<exam>.jsonl`` → benchmark questions.

Each line: ``id`` (the number in the exam), ``question``, ``choices`` {letter: text}, ``answer``,
``legal_basis`` (``art. 58 § 1 k.c.``), ``legal_basis_content``, ``exam_type``, ``year``. The
compiler kept only questions whose legal basis it could resolve, so a year holds ~50–90 of the
exam's 150 questions; the official PDFs (:mod:`pipelines.benchmarks.exam_pdf`) fill the gaps.

A malformed line raises :class:`ExamJsonlError` naming ``file:line`` — a silently skipped line
would quietly shrink the benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from pipelines.benchmarks.legal_basis import parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option, relative_source

BENCHMARK = "pl_exams"
REQUIRED = ("id", "question", "choices", "answer", "legal_basis")


class ExamJsonlError(ValueError):
    """A JSONL exam file has a line that is not a valid question record."""


def load_exam_jsonl(path: Path, *, sample_dir: Path | None = None,
                    corpus_acts: Iterable[str] | None = None) -> list[BenchmarkQuestion]:
    """Questions of one file, in file order. ``year`` and ``exam`` come from the record, falling
    back to the path (``<year>/<exam>.jsonl``)."""
    path = Path(path)
    source = relative_source(path, sample_dir)
    out: list[BenchmarkQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                r = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ExamJsonlError(f"{where}: not valid JSON ({exc.msg})") from exc
            missing = [k for k in REQUIRED if k not in r or r[k] in (None, "")]
            if missing:
                raise ExamJsonlError(f"{where}: missing {', '.join(missing)}")
            choices = r["choices"]
            if not isinstance(choices, dict) or not choices:
                raise ExamJsonlError(f"{where}: 'choices' must be a non-empty object {{letter: text}}")
            if r["answer"] not in choices:
                raise ExamJsonlError(f"{where}: answer {r['answer']!r} is not one of the choices {sorted(choices)}")
            year = r.get("year") or (int(path.parent.name) if path.parent.name.isdigit() else None)
            out.append(BenchmarkQuestion(
                benchmark=BENCHMARK, source=source, source_format="jsonl", question_id=str(r["id"]),
                language="pl", question=r["question"].strip(), legal_basis=r["legal_basis"].strip(),
                gold_refs=parse_legal_basis(r["legal_basis"], corpus_acts=corpus_acts),
                options=[Option(k, str(v).strip()) for k, v in sorted(choices.items())],
                gold_option=r["answer"], year=int(year) if year else None,
                exam=r.get("exam_type") or path.stem,
            ))
    return out


def load_exam_jsonl_dir(exams_dir: Path, *, sample_dir: Path | None = None,
                        corpus_acts: Iterable[str] | None = None) -> list[BenchmarkQuestion]:
    """All ``<year>/*.jsonl`` under ``exams_dir``, ordered by year, then exam file name."""
    exams_dir = Path(exams_dir)
    if not exams_dir.is_dir():
        raise FileNotFoundError(f"{exams_dir}: exam JSONL directory not found")
    files = sorted(exams_dir.glob("*/*.jsonl"), key=lambda f: (f.parent.name, f.name))
    if not files:
        raise FileNotFoundError(f"{exams_dir}: no <year>/*.jsonl exam files")
    return [q for f in files for q in load_exam_jsonl(f, sample_dir=sample_dir, corpus_acts=corpus_acts)]
