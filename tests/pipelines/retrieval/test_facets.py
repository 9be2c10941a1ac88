"""Facet counts over one search's candidates: each article once, most frequent first."""

from __future__ import annotations

from pipelines.retrieval.facets import facet_counts
from pipelines.retrieval.interface import Hit


def hit(article: str, act: str, status: str, rank: int) -> Hit:
    return Hit(chunk_id=f"{article}#0", article_id=article, act_id=act, version="2025-11-13", score=1.0 / rank,
               rank=rank, status=status)


def test_counts_per_act_and_status_each_article_once():
    hits = [hit("pl:kc:art:1", "pl:kc", "in_force", 1), hit("pl:kp:art:2", "pl:kp", "repealed", 2),
            hit("pl:kc:art:3", "pl:kc", "in_force", 3), hit("pl:kc:art:1", "pl:kc", "in_force", 4),
            hit("pl:kc:art:4", "pl:kc", "repealed", 5), hit("pl:case:saos-1", "pl:cases", "", 6)]
    f = facet_counts(hits)
    assert f.total == 5
    assert f.acts == [("pl:kc", 3), ("pl:cases", 1), ("pl:kp", 1)]  # ties by id
    assert f.statuses == [("in_force", 2), ("repealed", 2)]  # a decision has no status to count
    assert facet_counts([]).acts == [] and facet_counts([]).total == 0
