"""The two records every answerer (LLM agent or offline) and the scorer share.

Why one module: the gAIus agent, the offline answerer and the benchmark table are built by
different people; agreeing on a question record and a result record is the whole contract between
them. Both are plain dataclasses (no pydantic, no Arrow) so any producer can fill them and results
serialise to one JSON line each with :meth:`AnswerResult.to_dict`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

__all__ = ["AnswerQuestion", "AnswerResult"]


@dataclass(frozen=True)
class AnswerQuestion:
    """One single-choice question with its gold answer and gold provisions.

    ``options`` maps an option letter to its text, in the letter case of the source (the exam files
    use ``"A"``/``"B"``/``"C"``, the paper ``a``/``b``/``c``); letters are compared
    case-insensitively everywhere. ``gold_article_ids`` are corpus ids (``pl:kc:art:109^1``);
    finer units (``…:par:2``) are accepted and scored at article level.
    """

    question_id: str
    question: str
    options: Mapping[str, str]
    gold_option: str
    gold_article_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A gold letter outside the options is a data bug; it would silently score every answer wrong.
        letters = {k.strip().lower() for k in self.options}
        if not letters:
            raise ValueError(f"question {self.question_id!r} has no options")
        if self.gold_option.strip().lower() not in letters:
            raise ValueError(f"question {self.question_id!r}: gold option {self.gold_option!r} is not "
                             f"one of {sorted(self.options)}")
        object.__setattr__(self, "gold_article_ids", tuple(self.gold_article_ids))

    @classmethod
    def from_exam(cls, exam: Any) -> "AnswerQuestion":
        """From ``pipelines.retrieval.evaluation.ExamQuestion`` (duck-typed: qid, question, choices,
        answer, gold_articles), so the exam loader that already exists can feed the answerers."""
        return cls(question_id=exam.qid, question=exam.question, options=dict(exam.choices),
                   gold_option=exam.answer, gold_article_ids=tuple(exam.gold_articles))

    def option_letter(self, letter: str | None) -> str | None:
        """``letter`` spelled as in ``options`` (``"c"`` → ``"C"``), or None when it is not an option."""
        if letter is None:
            return None
        wanted = letter.strip().lower()
        return next((k for k in self.options if k.strip().lower() == wanted), None)


@dataclass
class AnswerResult:
    """What one answerer produced for one question.

    ``option`` is None when no valid option could be read (no JSON, a letter that is not an option,
    …) — that answer is simply wrong. ``error`` is set only when the question *failed* (endpoint
    unreachable after retries, timeout, retriever crash): the scorer counts it wrong as well, but
    reports failures separately so an outage is not mistaken for a weak model.

    ``cited_unit_ids`` hold only citations that resolve to the corpus (article or finer unit ids);
    citations that do not exist (invented articles, other acts) are kept in ``invalid_citations`` —
    the scorer counts them as non-gold citations, so hallucinating provisions costs context score.
    """

    question_id: str
    option: str | None
    explanation: str = ""
    cited_unit_ids: tuple[str, ...] = ()
    error: str | None = None
    latency_s: float = 0.0
    answerer: str = ""
    invalid_citations: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # malformed-output notes (not failures), e.g. "option 'd' is not an option"
    queries: tuple[str, ...] = ()  # retrieval queries the agent issued, in order
    retrieved_article_ids: tuple[str, ...] = ()  # every article shown to the model (first-seen order)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AnswerResult":
        """Inverse of :meth:`to_dict`; unknown keys are ignored so old result files stay readable."""
        known = set(cls.__dataclass_fields__)
        kw = {k: v for k, v in data.items() if k in known}
        for k in ("cited_unit_ids", "invalid_citations", "problems", "queries", "retrieved_article_ids"):
            if k in kw and kw[k] is not None:
                kw[k] = tuple(kw[k])
        return cls(**kw)
