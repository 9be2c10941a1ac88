"""In-memory BM25 (LanceDB's scoring) on a hand-checkable corpus; its agreement with LanceDB on the
real tables is tested in test_embedded_backend.py and test_section_fusion.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipelines.retrieval.memory_bm25 import MemoryBM25

DOCS = ["najem czynsz czynsz", "najem lokalu", "dzierżawa", "", None]


def bm25(tf: int, df: int, n: int, dl: int, avgdl: float) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


def test_scores_follow_the_formula_with_repeated_query_tokens():
    index = MemoryBM25.from_token_strings(DOCS)
    avgdl = 6 / 5  # token counts 3, 2, 1, 0, 0
    s = index.scores(["czynsz", "najem", "najem"])
    assert s[0] == pytest.approx(bm25(2, 1, 5, 3, avgdl) + 2 * bm25(1, 2, 5, 3, avgdl), rel=1e-6)
    assert s[1] == pytest.approx(2 * bm25(1, 2, 5, 2, avgdl), rel=1e-6)
    assert s[2] == s[3] == s[4] == 0


def test_top_keeps_matching_rows_best_first_ties_in_row_order():
    index = MemoryBM25.from_token_strings(["a b", "c", "a b", "a", "b a"])
    assert [i for i, _ in index.top(["a"], 10)] == [3, 0, 2, 4]  # the shortest first, equal ones by row
    assert [i for i, _ in index.top(["a"], 2)] == [3, 0]
    mask = np.array([True, True, False, False, True])
    assert [i for i, _ in index.top(["a"], 10, mask)] == [0, 4]
    assert index.top(["zzz"], 10) == [] and index.top([], 10) == []


def test_empty_table():
    index = MemoryBM25.from_token_strings([])
    assert index.rows == 0 and index.top(["a"], 3) == []
