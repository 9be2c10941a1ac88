"""Scores exactly as the papers define them, over the shared records of :mod:`.types`.

gAIus (Matak & Chudziak, sect. 4.2): *answer score* — the chosen option is the gold one; *context
score* — the assistant referred to the appropriate regulation, "if the assistant refers to more
regulations than necessary, we still consider it a good answer, as long as the extra references are
minimal (typically no more than two articles)"; *joint score* — both. We make that rule exact:

* citations are compared at **article** level (``…:art:109^1:par:2`` counts as ``…:art:109^1``),
  because the gold legal basis of the exams is an article (often with a §) and the paper counts
  "articles";
* context is correct when at least one cited article is a gold article (``require_all_gold``
  demands every gold article instead) **and** at most ``max_extra_citations`` (default 2) distinct
  cited articles are not gold. Citations that do not resolve to the corpus (invented articles,
  other acts) count as such extras: a hallucinated provision is a wrong reference.

A failed question (``AnswerResult.error``) and a question without a result count wrong in every
score; failures are reported separately with their reasons.

LegalAgentBench (appendix E.2): for keyword set K_i and output O_i, s_i = |{k ∈ K_i : k appears in
O_i}| / |K_i|, averaged over tasks; K = ``key`` gives the *success rate*, K = ``key`` ∪ ``key_middle``
the *progress rate*. K is a set (duplicates count once); "appears" is a plain substring test after
Unicode NFC normalisation of both sides.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from pipelines.answers.types import AnswerQuestion, AnswerResult

__all__ = [
    "article_id_of", "answer_correct", "context_correct", "QuestionScore", "AnswerScores",
    "score_answers", "pair_results",
    "LegalAgentBenchTask", "load_legalagentbench", "keyword_rate", "success_rate", "progress_rate",
    "KeywordScores", "keyword_scores",
]

DEFAULT_MAX_EXTRA_CITATIONS = 2
_ARTICLE = re.compile(r"^(.*?:art:[^:]+)")


# --- gAIus: answer / context / joint ------------------------------------------------------------

def article_id_of(unit_id: str) -> str:
    """The article a unit id belongs to: ``pl:kc:art:109^1:par:2:pt:3`` → ``pl:kc:art:109^1``.
    Ids that are not article-or-finer (structure nodes, free text) come back unchanged."""
    m = _ARTICLE.match(unit_id.strip())
    return m.group(1) if m else unit_id.strip()


def answer_correct(question: AnswerQuestion, result: AnswerResult | None) -> bool:
    """Chosen option == gold option (letters compared case-insensitively); failures are wrong."""
    if result is None or result.error is not None or result.option is None:
        return False
    return result.option.strip().lower() == question.gold_option.strip().lower()


def context_correct(gold_article_ids: Iterable[str], cited_unit_ids: Iterable[str],
                    invalid_citations: Iterable[str] = (), *,
                    max_extra_citations: int = DEFAULT_MAX_EXTRA_CITATIONS,
                    require_all_gold: bool = False) -> bool:
    """The gAIus context rule (module docstring). No gold articles → never correct (nothing to cite)."""
    gold = {article_id_of(g) for g in gold_article_ids}
    if not gold:
        return False
    cited = {article_id_of(c) for c in cited_unit_ids}
    hit = gold <= cited if require_all_gold else bool(gold & cited)
    extras = len(cited - gold) + len({c.strip() for c in invalid_citations if c.strip()})
    return hit and extras <= max_extra_citations


@dataclass(frozen=True)
class QuestionScore:
    question_id: str
    answer: bool
    context: bool
    joint: bool
    failed: bool
    error: str | None
    extra_citations: int  # distinct non-gold cited articles + invalid citations


@dataclass
class AnswerScores:
    """Counts as in the paper's Table 2 plus rates over ``n`` (all questions, failures included)."""

    n: int
    answer_correct: int
    context_correct: int
    joint_correct: int
    failed: int
    per_question: list[QuestionScore] = field(default_factory=list)

    @property
    def answer_rate(self) -> float:
        return self.answer_correct / self.n if self.n else 0.0

    @property
    def context_rate(self) -> float:
        return self.context_correct / self.n if self.n else 0.0

    @property
    def joint_rate(self) -> float:
        return self.joint_correct / self.n if self.n else 0.0

    @property
    def failures(self) -> dict[str, str]:
        """question id → failure reason."""
        return {q.question_id: q.error or "" for q in self.per_question if q.failed}

    def summary(self) -> dict[str, float | int]:
        return {"n": self.n, "answer": self.answer_correct, "context": self.context_correct,
                "joint": self.joint_correct, "failed": self.failed,
                "answer_rate": self.answer_rate, "context_rate": self.context_rate,
                "joint_rate": self.joint_rate}


def score_answers(pairs: Iterable[tuple[AnswerQuestion, AnswerResult | None]], *,
                  max_extra_citations: int = DEFAULT_MAX_EXTRA_CITATIONS,
                  require_all_gold: bool = False) -> AnswerScores:
    """Answer, context and joint scores over (question, result) pairs.

    A ``None`` result means the answerer produced nothing for that question (counted failed).
    Raises ``ValueError`` when a result belongs to another question — a join bug would otherwise
    produce plausible-looking but meaningless scores.
    """
    per: list[QuestionScore] = []
    for q, r in pairs:
        if r is not None and r.question_id != q.question_id:
            raise ValueError(f"result for {r.question_id!r} paired with question {q.question_id!r}")
        failed = r is None or r.error is not None
        error = "no result" if r is None else r.error
        a = answer_correct(q, r)
        if failed:
            c, extras = False, 0
        else:
            assert r is not None
            gold = {article_id_of(g) for g in q.gold_article_ids}
            extras = (len({article_id_of(u) for u in r.cited_unit_ids} - gold)
                      + len({s.strip() for s in r.invalid_citations if s.strip()}))
            c = context_correct(q.gold_article_ids, r.cited_unit_ids, r.invalid_citations,
                                max_extra_citations=max_extra_citations,
                                require_all_gold=require_all_gold)
        per.append(QuestionScore(q.question_id, a, c, a and c, failed, error, extras))
    return AnswerScores(n=len(per), answer_correct=sum(s.answer for s in per),
                        context_correct=sum(s.context for s in per),
                        joint_correct=sum(s.joint for s in per),
                        failed=sum(s.failed for s in per), per_question=per)


def pair_results(questions: Sequence[AnswerQuestion],
                 results: Iterable[AnswerResult]) -> list[tuple[AnswerQuestion, AnswerResult | None]]:
    """Join results to questions by id (question order; missing results → None).

    Raises on duplicate question ids or duplicate results: silently keeping one would hide a bug."""
    by_id: dict[str, AnswerResult] = {}
    for r in results:
        if r.question_id in by_id:
            raise ValueError(f"two results for question {r.question_id!r}")
        by_id[r.question_id] = r
    seen: set[str] = set()
    for q in questions:
        if q.question_id in seen:
            raise ValueError(f"duplicate question id {q.question_id!r}")
        seen.add(q.question_id)
    unknown = set(by_id) - seen
    if unknown:
        raise ValueError(f"results for unknown questions: {sorted(unknown)[:5]}")
    return [(q, by_id.get(q.question_id)) for q in questions]


# --- LegalAgentBench: success / progress rate ---------------------------------------------------

@dataclass(frozen=True)
class LegalAgentBenchTask:
    """One task of ``legalagentbench/dataset.json``: ``key`` are the final-answer keywords
    (``key_answer`` in the paper), ``key_middle`` those of the intermediate steps."""

    id: int
    question: str
    answer: str
    key: tuple[str, ...]
    key_middle: tuple[str, ...]
    type: str = ""
    way: str = ""


def load_legalagentbench(path: Path | str) -> list[LegalAgentBenchTask]:
    """Read the dataset (a JSON list of objects with id, question, answer, key, key_middle, type,
    way). A task without ``key`` has no defined success rate and is rejected, naming the task."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of tasks")
    tasks: list[LegalAgentBenchTask] = []
    for i, row in enumerate(data):
        try:
            key = tuple(str(k) for k in row["key"])
            task = LegalAgentBenchTask(id=row["id"], question=row["question"], answer=row.get("answer", ""),
                                       key=key, key_middle=tuple(str(k) for k in row.get("key_middle") or ()),
                                       type=str(row.get("type", "")), way=str(row.get("way", "")))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}: task #{i} is malformed ({type(exc).__name__}: {exc})") from exc
        if not _keyset(task.key):
            raise ValueError(f"{path}: task id {task.id} has no answer keywords ('key')")
        tasks.append(task)
    return tasks


def _norm(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def _keyset(keywords: Iterable[str]) -> set[str]:
    return {_norm(k).strip() for k in keywords if k and _norm(k).strip()}


def keyword_rate(keywords: Iterable[str], output: str) -> float:
    """|keywords found in output| / |keywords| over the keyword *set*. Raises on an empty set:
    the paper's ratio is undefined there, and 0 or 1 would both bias the average silently."""
    keys = _keyset(keywords)
    if not keys:
        raise ValueError("keyword set is empty")
    text = _norm(output or "")
    return sum(1 for k in keys if k in text) / len(keys)


def success_rate(task: LegalAgentBenchTask, output: str) -> float:
    """Share of ``key`` found in ``output``."""
    return keyword_rate(task.key, output)


def progress_rate(task: LegalAgentBenchTask, output: str) -> float:
    """Share of ``key`` ∪ ``key_middle`` found in ``output``."""
    return keyword_rate((*task.key, *task.key_middle), output)


@dataclass
class KeywordScores:
    n: int
    success_rate: float
    progress_rate: float
    per_task: dict[int, tuple[float, float]] = field(default_factory=dict)  # id → (success, progress)


def keyword_scores(tasks: Sequence[LegalAgentBenchTask],
                   outputs: Mapping[int, str | None]) -> KeywordScores:
    """Mean success and progress rate over ``tasks``; a task without an output scores 0 (it
    counts in the denominator, as a failed run does in the paper's averages)."""
    per: dict[int, tuple[float, float]] = {}
    for t in tasks:
        out = outputs.get(t.id) or ""
        per[t.id] = (success_rate(t, out), progress_rate(t, out))
    n = len(per)
    return KeywordScores(n=n,
                         success_rate=sum(s for s, _ in per.values()) / n if n else 0.0,
                         progress_rate=sum(p for _, p in per.values()) / n if n else 0.0,
                         per_task=per)
