"""Searching several acts at once: the embedded backend searches small statute tables as one
corpus (one BM25 IDF, one dense scan, one reranking), so scores of different acts share a scale;
acts searched one by one are merged by ``cross_act_merge.merge_acts``."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

from pipelines.retrieval.cross_act_merge import merge_acts
from pipelines.retrieval.embedded_backend import EmbeddedBackend
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.interface import Filters, Hit, SearchRequest

FILLER = ["umowa sprzedaży rzeczy ruchomej", "termin zapłaty ceny", "wydanie rzeczy kupującemu",
          "odstąpienie od umowy", "rękojmia za wady", "najem lokalu mieszkalnego", "darowizna nieruchomości"]


def _chunks(act: str, texts: list[str]) -> pa.Table:
    n = len(texts)
    return pa.table({
        "chunk_id": [f"{act}:art:{i}:c0" for i in range(1, n + 1)],
        "article_id": [f"{act}:art:{i}" for i in range(1, n + 1)],
        "act_id": [act] * n, "version": ["2025-01-01"] * n, "status": ["in_force"] * n,
        "chunk_index": pa.array([0] * n, pa.int32()), "chunk_count": pa.array([1] * n, pa.int32()),
        "heading_path": [""] * n, "text": texts,
        "token_count": pa.array([len(t.split()) for t in texts], pa.int32()),
        "content_hash": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
    })


@pytest.fixture(scope="module")
def two_acts(tmp_path_factory):
    """pl:aa: two chunks, one holding both query words. pl:bb: a hundred chunks, one holding only
    the rarer-in-bb word. Per table, bb's chunk gets the higher BM25 (its word is rare in bb, while
    aa's tiny table gives every word a low IDF): sorted by raw score, bb wins. Over both acts as
    one corpus the chunk with both words wins, as it should."""
    from pipelines.retrieval.analyzers import get_analyzer

    enc = HashingEncoder()
    backend = EmbeddedBackend(tmp_path_factory.mktemp("cross") / "index", encoder=enc, analyzer=get_analyzer("pl"))
    aa = ["konsument zastaw rejestrowy", "przedsiębiorca prowadzi działalność"]
    bb = ["konsument ponosi ryzyko"] + [FILLER[i % len(FILLER)] + f" punkt {i}" for i in range(99)]
    de = ["Verbraucher ist jede natürliche Person", "konsument zastaw"]
    for act, texts in (("pl:aa", aa), ("pl:bb", bb), ("de:zz", de)):
        chunks = _chunks(act, texts)
        backend.build(act, "2025-01-01", chunks, enc.encode_passages(texts))
    return backend


def _top(backend, query, retriever="bm25", k=3):
    return [h.article_id for h in backend.search(SearchRequest(query, k, retriever, Filters(act_ids=("pl:aa", "pl:bb"))))]


def test_acts_searched_together_share_one_scale(two_acts):
    assert _top(two_acts, "konsument zastaw")[0] == "pl:aa:art:1"
    two_acts.cross_act = "score"  # the old merge: each act's own BM25, sorted by raw score
    try:
        assert _top(two_acts, "konsument zastaw")[0] == "pl:bb:art:1"
    finally:
        two_acts.cross_act = "union"


@pytest.mark.parametrize("retriever", ["bm25", "dense", "gaius", "hybrid"])
def test_every_retriever_searches_the_union(two_acts, retriever):
    hits = two_acts.search(SearchRequest("konsument zastaw rejestrowy", 5, retriever,
                                         Filters(act_ids=("pl:aa", "pl:bb"))))
    assert hits and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.article_id for h in hits}) == len(hits)
    if retriever != "dense":  # hashing vectors rank by character n-grams only
        assert hits[0].article_id == "pl:aa:art:1"


def test_one_act_is_searched_alone(two_acts):
    hits = two_acts.search(SearchRequest("konsument", 5, "bm25", Filters(act_ids=("pl:bb",))))
    assert {h.act_id for h in hits} == {"pl:bb"}


def _hits(act, scores):
    return [Hit(f"{act}:{i}", f"{act}:art:{i}", act, "v", s, i) for i, s in enumerate(scores, 1)]


def test_merge_acts_standardises_each_act():
    high = _hits("pl:aa", [10.0, 9.9, 9.8, 9.7])  # scores that run high, with nothing standing out
    low = _hits("pl:bb", [3.0, 1.0, 1.0, 1.0])  # one clear winner on a lower scale
    assert merge_acts([high, low], "score")[0].act_id == "pl:aa"
    merged = merge_acts([high, low], "zscore")
    assert merged[0].chunk_id == "pl:bb:1" and [h.rank for h in merged] == list(range(1, 9))
    assert {h.chunk_id for h in merge_acts([high, low], "rrf")[:2]} == {"pl:aa:1", "pl:bb:1"}
    with pytest.raises(ValueError, match="unknown cross-act merge"):
        merge_acts([high], "max")


def test_union_tables_are_held_once(two_acts):
    (_, _, a), (_, _, b) = two_acts._resolve(Filters(act_ids=("pl:aa", "pl:bb")))
    name = two_acts._union_of([("pl:aa", "", a), ("pl:bb", "", b)])
    assert name is not None and two_acts.section_context(name).vectors.shape == (102, 384)
    assert np.isclose(np.linalg.norm(two_acts.section_context(name).vectors[0]), 1.0)


def test_a_jurisdiction_filter_leaves_other_jurisdictions_out(two_acts):
    resolved = two_acts._resolve(Filters(jurisdictions=("pl",)))
    assert [a for a, _, _ in resolved] == ["pl:aa", "pl:bb"]
    hits = two_acts.search(SearchRequest("konsument zastaw", 5, "bm25", Filters(jurisdictions=("pl",))))
    assert hits[0].article_id == "pl:aa:art:1" and {h.act_id for h in hits} <= {"pl:aa", "pl:bb"}
