"""The answer job without an orchestrator: benchmark rows → questions → answers → scores → Parquet.

Why a separate module: Dagster (``assets/answers.py``), the CLI and Prefect bind the same three
steps — select questions, answer them (offline answerer, or the gAIus agent when an LLM endpoint
is configured), score — and must produce identical tables. Each answer's citations, verified by
:mod:`pipelines.answers.citation_check`, fill the citation columns of the table and add the
hallucination / not-in-force rates to the scores (the paper scores are computed as before).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa

from pipelines.answers.citation_check import AnswerCitationCheck, citation_scores
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
    # citation verification (pipelines.answers.citation_check); null when the run did not verify
    pa.field("citations_as_of", pa.string()),
    pa.field("citations_verified", pa.list_(pa.struct([
        pa.field("citation", pa.string()), pa.field("unit_id", pa.string()), pa.field("match", pa.string()),
        pa.field("exists", pa.bool_()), pa.field("in_force", pa.bool_()), pa.field("status", pa.string()),
        pa.field("version", pa.string())]))),
    pa.field("hallucinated_citations", pa.list_(pa.string())),
    pa.field("not_in_force_citations", pa.list_(pa.string())),
])


@dataclass(frozen=True)
class SelectedQuestion:
    question: AnswerQuestion
    year: int | None
    exam_date: dt.date | None = None  # the exam's day when the source prints it (citations are verified on it)


def questions_from_benchmark(table: pa.Table, *, act_id: str, stale_ids: Iterable[str] = (),
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
        out.append(SelectedQuestion(q, r["year"], r.get("exam_date")))
    counts["selected"] = len(out)
    return out, counts


def results_table(selected: Sequence[SelectedQuestion], results: Sequence[AnswerResult | None], *, run_id: str,
                  answerer: str, corpus_version: str,
                  citation_checks: Sequence[AnswerCitationCheck | None] | None = None) -> pa.Table:
    """One row per selected question; ``citation_checks`` (same order, from
    :func:`pipelines.answers.citation_check.verify_all`) fill the citation columns."""
    checks = list(citation_checks) if citation_checks is not None else [None] * len(selected)
    if len(checks) != len(selected):
        raise ValueError(f"{len(checks)} citation checks for {len(selected)} questions")
    scored = score_answers(pair_results([s.question for s in selected], [r for r in results if r is not None]))
    detail = {d.question_id: d for d in scored.per_question}
    rows = []
    for s, res, chk in zip(selected, results, checks):
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
            "citations_as_of": chk.as_of if chk else None,
            "citations_verified": [u.to_dict() for u in chk.units] if chk else None,
            "hallucinated_citations": list(chk.hallucinated) if chk else None,
            "not_in_force_citations": list(chk.not_in_force) if chk else None,
        })
    return pa.Table.from_pylist(rows, schema=ANSWER_RESULTS)


def score_rows(selected: Sequence[SelectedQuestion], results: Sequence[AnswerResult | None],
               groups: dict[str, Callable[[SelectedQuestion], bool]],
               citation_checks: Sequence[AnswerCitationCheck | None] | None = None) -> dict[str, dict]:
    """answer/context/joint rates per named group of questions (e.g. all, 2021–2023); with
    ``citation_checks`` also the hallucination and not-in-force rates of the group's cited units
    (:func:`pipelines.answers.citation_check.citation_scores`)."""
    checks = list(citation_checks) if citation_checks is not None else None
    if checks is not None and len(checks) != len(selected):
        raise ValueError(f"{len(checks)} citation checks for {len(selected)} questions")
    out = {}
    for name, keep in groups.items():
        idx = [i for i, s in enumerate(selected) if keep(s)]
        pairs = [(selected[i].question, results[i]) for i in idx]
        if not pairs:
            continue
        sc = score_answers(pair_results([q for q, _ in pairs], [r for _, r in pairs if r is not None]))
        out[name] = {"n": len(pairs), "answer": round(sc.answer_rate, 4), "context": round(sc.context_rate, 4),
                     "joint": round(sc.joint_rate, 4), "failed": sc.failed}
        if checks is not None:
            out[name].update(citation_scores(checks[i] for i in idx))
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
