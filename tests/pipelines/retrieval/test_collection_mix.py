"""The RWTH 70/30 mix over two collections: quotas, proportional interleaving, backfill."""

from __future__ import annotations

import pytest

from pipelines.retrieval.collection_mix import Collections, interleave, mixed_search, quotas
from pipelines.retrieval.interface import Filters, Hit, SearchRequest
from pipelines.retrieval.query_classifier import Classification


class FakeCollection:
    """Ranked hits for whatever act filter it is asked with; records the requests."""

    def __init__(self, act: str, n: int):
        self.act, self.n, self.requests = act, n, []

    def search(self, request: SearchRequest) -> list[Hit]:
        self.requests.append(request)
        assert request.filters.act_ids == (self.act,)
        return [Hit(f"{self.act}#{i}", f"{self.act}:{i}", self.act, "2024-11-28", 1.0 / i, i)
                for i in range(1, min(self.n, request.k) + 1)]


def collections(n_law: int = 50, n_case: int = 50) -> Collections:
    return Collections(FakeCollection("de:bgb", n_law), FakeCollection("de:cases", n_case),
                       Filters(act_ids=("de:bgb",)), Filters(act_ids=("de:cases",)))


@pytest.mark.parametrize("label,n,expected", [
    ("law", 21, (14, 7)), ("case", 21, (7, 14)), ("both", 21, (11, 10)), ("law", 10, (7, 3)), ("case", 1, (1, 0)),
])
def test_quotas_follow_the_report(label, n, expected):
    # the report's code: int(21 * 0.7) = 14 from the predicted collection
    assert quotas(label, n) == expected


def test_interleave_is_proportional_and_reranks():
    major = [Hit(f"a{i}", f"a{i}", "a", "v", 0, i) for i in range(1, 8)]
    minor = [Hit(f"b{i}", f"b{i}", "b", "v", 0, i) for i in range(1, 4)]
    out = interleave(major, minor, 7, 3)
    assert [h.chunk_id[0] for h in out] == list("aabaabaaab")
    assert [h.rank for h in out] == list(range(1, 11))
    # each collection keeps its own order
    assert [h.chunk_id for h in out if h.act_id == "a"] == [f"a{i}" for i in range(1, 8)]


def test_law_query_gets_seventy_percent_statutes():
    r = mixed_search(collections(), SearchRequest("Was regelt § 573b BGB?", k=21))
    assert r.classification.label == "law" and (r.statute_quota, r.case_quota) == (14, 7)
    assert sum(h.act_id == "de:bgb" for h in r.hits) == 14 and len(r.hits) == 21
    assert r.hits[0].act_id == "de:bgb"
    assert sum(h.act_id == "de:bgb" for h in r.hits[:10]) == 7  # the split holds at the top too


def test_case_query_gets_seventy_percent_cases():
    r = mixed_search(collections(), SearchRequest("Wie hat der BGH zur Mietminderung entschieden?", k=10))
    assert r.classification.label == "case"
    assert [h.act_id for h in r.hits].count("de:cases") == 7 and r.hits[0].act_id == "de:cases"


def test_given_classification_is_used_and_both_is_half():
    r = mixed_search(collections(), SearchRequest("x", k=10), classification=Classification("both", 0, "llm"))
    assert (r.statute_quota, r.case_quota) == (5, 5)


def test_short_collection_is_backfilled():
    r = mixed_search(collections(n_case=2), SearchRequest("Was regelt § 573b BGB?", k=10))
    assert (r.statute_quota, r.case_quota) == (8, 2) and len(r.hits) == 10
    r = mixed_search(collections(n_law=0), SearchRequest("Was regelt § 573b BGB?", k=10))
    assert (r.statute_quota, r.case_quota) == (0, 10) and all(h.act_id == "de:cases" for h in r.hits)


def test_single_targets_do_not_classify():
    c = collections()
    r = mixed_search(c, SearchRequest("Urteil des BGH", k=5), target="statutes")
    assert r.classification is None and {h.act_id for h in r.hits} == {"de:bgb"} and not c.cases.requests
    r = mixed_search(c, SearchRequest("§ 573b", k=5), target="cases")
    assert {h.act_id for h in r.hits} == {"de:cases"}
    with pytest.raises(ValueError, match="target must be one of"):
        mixed_search(c, SearchRequest("x"), target="everything")
