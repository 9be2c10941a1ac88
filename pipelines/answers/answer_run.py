"""One answer-job run without an orchestrator: select → answer → score → write, for one corpus version.

Why: Dagster (``assets/answers.py``) and Prefect (``lexpipe/prefect_flows.py``) run the same job and
must choose the answerer the same way — the gAIus agent when ``LEXPIPE_LLM_BASE_URL`` and
``LEXPIPE_LLM_MODEL`` are set, else the offline answerer — skip the same stale questions and write
the same ``benchmarks/answers/<run id>.parquet`` + ``.json``.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from core.layout import Layout

REPORT_YEARS = (2021, 2022, 2023)  # the years BENCHMARKS.md compares with the gAIus paper


def llm_settings_from_env():
    """LLM endpoint settings when configured, else None (offline answerer)."""
    if not (os.environ.get("LEXPIPE_LLM_BASE_URL") and os.environ.get("LEXPIPE_LLM_MODEL")):
        return None
    from connectors.llm_client import LLMSettings

    return LLMSettings()


@dataclass
class AnswerRunOutcome:
    run_id: str
    answerer: str
    path: Path
    table: pa.Table
    scores: dict[str, dict]
    questions: int
    counts: dict[str, int]
    seconds: float


def answer_run_id(act_id: str, version: str, answerer: str, run_tag: str) -> str:
    """``pl-kc_2025-11-13_offline_1a2b3c4d``: act, version, answerer, the first 8 characters of the
    orchestrator's run id — the same shape for every act. Runs written before issue 24 named the
    Civil Code's runs without the act (``2025-11-13_offline_1a2b3c4d``); they need no shim: runs are
    found by their run-tag suffix (``*_<tag>.json``, as ``lexpipe run`` does), which both share,
    and nothing reads the act out of a run id."""
    return f"{act_id.replace(':', '-')}_{version}_{answerer.replace(':', '-').replace('/', '-')}_{run_tag[:8]}"


def answers_step(layout: Layout, *, act_id: str, version: str, backend: Any, run_tag: str, llm: Any = None,
                 max_questions: int = 0, progress: Callable[[str], None] | None = None) -> AnswerRunOutcome:
    """Answer every multiple-choice question citing ``act_id`` that is not stale in ``version`` with
    cited articles (hybrid search over ``backend``), verify every citation with the citation
    resolver on the question's date (:mod:`pipelines.answers.citation_check`: the exam's date when
    the question has one, else ``version``), score them and write the run files.

    ``run_tag``: the orchestrator's run id (its first 8 characters end the answer run id).
    ``max_questions``: a stable sample (smallest sha1 of the question id) for quick runs; 0 = all."""
    from pipelines.answers.answer_job import questions_from_benchmark, results_table, score_rows, write_run
    from pipelines.answers.citation_check import CitationVerifier, question_date, verify_all
    from pipelines.benchmarks.nightly import questions_path, stale_ids_of
    from pipelines.retrieval.interface import Filters, SearchRequest

    say = progress or (lambda _msg: None)
    stale = stale_ids_of(layout, act_id=act_id, version=version)
    selected, counts = questions_from_benchmark(pq.read_table(questions_path(layout)), act_id=act_id, stale_ids=stale)
    if max_questions and len(selected) > max_questions:
        keep = {s.question.question_id for s in sorted(
            selected, key=lambda s: hashlib.sha1(s.question.question_id.encode()).hexdigest())[:max_questions]}
        selected = [s for s in selected if s.question.question_id in keep]
    filters = Filters(act_ids=(act_id,), version=version)

    def search(query: str, k: int):
        return backend.search(SearchRequest(query[:4000], k, "hybrid", filters))

    t0 = time.perf_counter()
    qs = [s.question for s in selected]
    if llm is None:
        from pipelines.answers.offline_answerer import ArticleStore, OfflineAnswerer

        store = ArticleStore.from_parquet(layout.version_dir(act_id, version) / "articles.parquet")
        answerer, name = OfflineAnswerer(search, store, stats=store.stats), "offline"
        results = []
        for i, q in enumerate(qs, 1):
            results.append(answerer.answer(q))
            if i % 100 == 0 or i == len(qs):
                say(f"answered {i}/{len(qs)} ({time.perf_counter() - t0:.0f}s)")
    else:
        from pipelines.answers.extraction import known_unit_ids_from_corpus
        from pipelines.answers.gaius_agent import answer_questions

        name = f"gaius:{llm.model}"
        say(f"answering {len(qs)} questions with the gAIus agent on {llm.model}")
        results = answer_questions(qs, search, llm, act_id=act_id,
                                   known_unit_ids=known_unit_ids_from_corpus(layout.version_dir(act_id, version)))
    seconds = time.perf_counter() - t0
    run_id = answer_run_id(act_id, version, name, run_tag)
    checks = verify_all(CitationVerifier.at(layout.home), results,
                        [question_date(s.exam_date, version) for s in selected])
    table = results_table(selected, results, run_id=run_id, answerer=name, corpus_version=version,
                          citation_checks=checks)
    scores = score_rows(selected, results, {
        "all": lambda s: True,
        f"{REPORT_YEARS[0]}–{REPORT_YEARS[-1]}": lambda s: s.year in REPORT_YEARS,
    }, citation_checks=checks)
    path = write_run(layout.benchmarks / "answers", table, scores, run_id=run_id)
    return AnswerRunOutcome(run_id, name, path, table, scores, len(qs), counts, seconds)
