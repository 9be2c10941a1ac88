"""The answer tables of ``lexpipe run`` and ``lexpipe prefect answers`` show the citation check."""

from __future__ import annotations

from lexpipe.cli import _CITED_COLS, _cited
from pipelines.answers.citation_check import citation_scores


def test_rates_of_a_scored_group_and_dashes_for_a_run_without_the_check():
    scores = {"n": 3, "answer": 1.0, "context": 1.0, "joint": 1.0, "failed": 0,
              "cited_units": 4, "verified_units": 3, "unverified_units": 1, "hallucinated_units": 1,
              "not_in_force_units": 0, "answers_with_hallucination": 1, "hallucination_rate": 0.3333,
              "not_in_force_rate": 0.0}
    assert _cited(scores) == ("4", "0.333", "0.000", "1")
    assert _cited({"n": 3, "answer": 1.0}) == ("-",) * len(_CITED_COLS)  # a run written before the check


def test_the_columns_read_keys_the_check_writes():
    assert _cited({"n": 0, **citation_scores([])}) == ("0", "0.000", "0.000", "0")
