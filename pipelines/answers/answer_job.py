"""The answer job without an orchestrator: benchmark rows → questions → answers → scores → Parquet.

Why a separate module: Dagster (``assets/answers.py``), the CLI and Prefect bind the same three
steps — select questions, answer them (offline answerer, or the gAIus agent when an LLM endpoint
is configured), score — and must produce identical tables.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa

from pipelines.answers.scoring import pair_results, score_answers
from pipelines.answers.types import AnswerQuestion, AnswerResult

ANSWER_RESULTS = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("answerer", pa.string(), nullable=False),
    pa.field("corpus_version", pa.string(), nullable=False),
    pa.field("question_id", pa.string(), nullable=False),
    pa.field("year", pa.int32()),
    pa.field("gold_option", pa.string()),
    pa.field("option", pa.string()),
    pa.field("answer_correct", pa.bool_()),
    pa.field("context_correct", pa.bool_()),
    pa.field("cited_unit_ids", pa.list_(pa.string())),
    pa.field("gold_article_ids", pa.list_(pa.string())),
    pa.field("explanation", pa.string()),
    pa.field("error", pa.string()),
    pa.field("latency_s", pa.float64()),
])


@dataclass(frozen=True)
class SelectedQuestion:
    question: AnswerQuestion
    year: int | None


def questions_from_benchmark(table: pa.Table, *, act_id: str = "pl:kc", stale_ids: Iterable[str] = (),
                             years: Sequence[int] | None = None) -> tuple[list[SelectedQuestion], dict]:
    """Multiple-choice questions whose gold cites ``act_id`` (at least one in-corpus reference).

    Stale questions (their gold unit changed or vanished in this corpus version) are left out and
    counted, so a stale key never scores the answerer. Returns the questions and the counts."""
    stale = set(stale_ids)
    out: list[SelectedQuestion] = []
    counts = {"candidates": 0, "stale_skipped": 0, "invalid": 0}
    for r in table.to_pylist():
        if not r["options"] or not r["gold_option"] or (years and r["year"] not in years):
            continue
        gold = tuple(dict.fromkeys(g["article_id"] for g in (r["gold_refs"] or [])
                                   if g["in_corpus"] and g["act_id"] == act_id and g["article_id"]))
        if not gold:
            continue
        counts["candidates"] += 1
        if r["id"] in stale:
            counts["stale_skipped"] += 1
            continue
        try:
            q = AnswerQuestion(r["id"], r["question"], {o["letter"]: o["text"] for o in r["options"]},
                               r["gold_option"], gold)
        except ValueError:  # a gold letter outside the options: a data bug, counted, not fatal
            counts["invalid"] += 1
            continue
        out.append(SelectedQuestion(q, r["year"]))
    counts["selected"] = len(out)
    return out, counts


def results_table(selected: Sequence[SelectedQuestion], results: Sequence[AnswerResult | None], *, run_id: str,
                  answerer: str, corpus_version: str) -> pa.Table:
    scored = score_answers(pair_results([s.question for s in selected], [r for r in results if r is not None]))
    detail = {d.question_id: d for d in scored.per_question}
    rows = []
    for s, res in zip(selected, results):
        q = s.question
        d = detail.get(q.question_id)
        rows.append({
            "run_id": run_id, "answerer": answerer, "corpus_version": corpus_version,
            "question_id": q.question_id, "year": s.year, "gold_option": q.gold_option,
            "option": res.option if res else None,
            "answer_correct": d.answer if d else None, "context_correct": d.context if d else None,
            "cited_unit_ids": list(res.cited_unit_ids) if res else [],
            "gold_article_ids": list(q.gold_article_ids),
            "explanation": (res.explanation or "")[:2000] if res else None,
            "error": res.error if res else "no result",
            "latency_s": res.latency_s if res else None,
        })
    return pa.Table.from_pylist(rows, schema=ANSWER_RESULTS)


def score_rows(selected: Sequence[SelectedQuestion], results: Sequence[AnswerResult | None],
               groups: dict[str, Callable[[SelectedQuestion], bool]]) -> dict[str, dict]:
    """answer/context/joint rates per named group of questions (e.g. all, 2021–2023)."""
    out = {}
    for name, keep in groups.items():
        pairs = [(s.question, r) for s, r in zip(selected, results) if keep(s)]
        if not pairs:
            continue
        sc = score_answers(pair_results([q for q, _ in pairs], [r for _, r in pairs if r is not None]))
        out[name] = {"n": len(pairs), "answer": round(sc.answer_rate, 4), "context": round(sc.context_rate, 4),
                     "joint": round(sc.joint_rate, 4), "failed": sc.failed}
    return out


def write_run(root: Path, table: pa.Table, scores: dict, *, run_id: str) -> Path:
    """One Parquet + JSON pair per run, staged then renamed: a crash never leaves half a run."""
    import pyarrow.parquet as pq

    root.mkdir(parents=True, exist_ok=True)
    stage = root / f".{run_id}.parquet.tmp"
    pq.write_table(table, stage)
    target = root / f"{run_id}.parquet"
    stage.replace(target)
    meta = root / f".{run_id}.json.tmp"
    meta.write_text(json.dumps({"run_id": run_id, "written_at": dt.datetime.now(dt.timezone.utc).isoformat(
        timespec="seconds"), "scores": scores}, indent=1))
    meta.replace(root / f"{run_id}.json")
    return target
