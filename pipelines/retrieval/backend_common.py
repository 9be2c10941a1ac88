"""What both search backends (embedded LanceDB and Elasticsearch) share: the analyser protocol,
the lexical leg's bigram rule, the candidate depth and the build report.

Why a module of its own: the two backends are siblings under one interface
(``pipelines.retrieval.interface``); neither may import the other. Their lexical legs must agree
token for token (same analyser input, same ``bigrams``) or hybrid weights tuned on one stop fitting
the other, and their builds report the same figures to ``index_build``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

CANDIDATES = 100  # per-retriever depth before fusion / article collapse


def bigrams(tokens: Sequence[str]) -> list[str]:
    """Adjacent analysed tokens joined: rewards the phrase overlap of questions that quote the law."""
    return [f"{a}_{b}" for a, b in zip(tokens, tokens[1:])]


class TextAnalyzer(Protocol):
    id: str

    def analyze(self, text: str) -> list[str]: ...

    def fold(self, tokens: list[str]) -> list[str]: ...

    def analyze_many(self, texts: Sequence[str], batch_size: int = 64) -> list[list[str]]: ...


@dataclass
class BuildReport:
    act_id: str
    version: str
    table: str
    documents: int
    vectors: int
    seconds: float
