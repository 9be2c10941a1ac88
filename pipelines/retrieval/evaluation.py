"""Article-level retrieval metrics on real exam questions (recall@k, MRR, NDCG@5)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from schemas.acts import registry

_REF = re.compile(r"art\.\s*(\d+[a-z]?(?:\^\d+)?)(?:\s*§\s*(\d+(?:\^\d+)?))?", re.I)


@dataclass(frozen=True)
class ExamQuestion:
    qid: str  # "<year>/<exam>#<id>" of the first occurrence
    question: str
    choices: dict[str, str]
    answer: str
    legal_basis: str
    gold_articles: tuple[str, ...]

    @property
    def act(self) -> str:
        """The act of the (first) gold article: ``pl:kc:art:22^1`` → ``pl:kc``."""
        return self.gold_articles[0].split(":art:", 1)[0] if self.gold_articles else ""

    def text(self, with_options: bool = False) -> str:
        if not with_options:
            return self.question
        return self.question + " " + " ".join(f"{k}) {v}" for k, v in sorted(self.choices.items()))


def gold_articles(legal_basis: str) -> tuple[str, ...]:
    """``art. 109^1 § 2 k.c.`` → ``("pl:kc:art:109^1",)``; empty when the act is not in the corpus."""
    basis = legal_basis.strip()
    act = next((a.id for a in registry().of_jurisdiction("pl") for s in a.citations if basis.endswith(s)), None)
    if act is None:
        return ()
    return tuple(dict.fromkeys(f"{act}:art:{m.group(1)}" for m in _REF.finditer(basis)))


def load_exam_questions(exams_dir: Path, years: Iterable[int] = (2021, 2022, 2023),
                        act_suffix: str | None = "k.c.", *,
                        resolve: Callable[[str], tuple[str, ...]] | None = None) -> list[ExamQuestion]:
    """Unique questions (by text) whose legal basis cites the act; order: year, exam, id.

    ``act_suffix=None``: every question whose gold resolves to an article of a registry act (the
    multi-act benchmark); ``resolve`` maps a legal basis to gold article ids (default
    :func:`gold_articles`; ``pipelines.benchmarks.legal_basis.gold_articles`` reads more forms)."""
    resolve = resolve or gold_articles
    out: dict[str, ExamQuestion] = {}
    for year in years:
        for f in sorted((Path(exams_dir) / str(year)).glob("*.jsonl")):
            for line in f.open(encoding="utf-8"):
                r = json.loads(line)
                basis = r["legal_basis"].strip()
                if (act_suffix is not None and not basis.endswith(act_suffix)) or r["question"] in out:
                    continue
                gold = resolve(basis)
                if act_suffix is None and not gold:
                    continue
                out[r["question"]] = ExamQuestion(f"{year}/{f.stem}#{r['id']}", r["question"], r["choices"],
                                                  r["answer"], r["legal_basis"], gold)
    return list(out.values())


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    gold = set(gold)
    for i, a in enumerate(ranked, 1):
        if a in gold:
            return 1.0 / i
    return 0.0


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold = set(gold)
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int = 5) -> float:
    gold = set(gold)
    dcg = sum(1.0 / math.log2(i + 1) for i, a in enumerate(ranked[:k], 1) if a in gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


@dataclass
class Metrics:
    n: int
    recall: dict[int, float]
    mrr: float
    ndcg5: float

    def row(self) -> dict:
        return {"n": self.n, **{f"R@{k}": round(v, 3) for k, v in self.recall.items()},
                "MRR": round(self.mrr, 3), "NDCG@5": round(self.ndcg5, 3)}


def evaluate(questions: Sequence[ExamQuestion], rank: Callable[[ExamQuestion], Sequence[str]],
             ks: Sequence[int] = (1, 5, 10, 50)) -> Metrics:
    """``rank`` returns article ids, best first."""
    rec = {k: 0.0 for k in ks}
    mrr = ndcg = 0.0
    for q in questions:
        ranked = list(rank(q))
        for k in ks:
            rec[k] += recall_at(ranked, q.gold_articles, k)
        mrr += reciprocal_rank(ranked, q.gold_articles)
        ndcg += ndcg_at(ranked, q.gold_articles, 5)
    n = len(questions) or 1
    return Metrics(len(questions), {k: v / n for k, v in rec.items()}, mrr / n, ndcg / n)
