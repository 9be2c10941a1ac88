"""BM25 over the persisted postings equals MemoryBM25 (LanceDB's scoring) over the same rows."""

from __future__ import annotations

import random

import numpy as np
import pytest

from language_index_helpers import SplitAnalyzer, WORDS, STOP, chunks, random_act, random_text, texts_of
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.interface import Filters
from pipelines.retrieval.language_index import LanguageIndex
from pipelines.retrieval.language_index.postings import bigram_strings
from pipelines.retrieval.memory_bm25 import MemoryBM25


def _memory(snap, rows):
    """MemoryBM25 over ``rows`` of the snapshot (unigram and bigram token strings)."""
    t = snap._take(rows, ["text_analyzed"])["text_analyzed"].to_pylist()
    return (MemoryBM25.from_token_strings(t),
            MemoryBM25.from_token_strings([" ".join(bigram_strings(s.split())) for s in t]))


def _queries(rnd, n=40):
    return [random_text(rnd, rnd.randint(1, 60)).lower().split() + rnd.sample(WORDS, 2) for _ in range(n)]


@pytest.fixture
def index(tmp_path):
    rnd = random.Random(7)
    idx = LanguageIndex(tmp_path / "statutes_de", "de")
    # three commits (three segments), one act in two versions: closed and carried rows
    for c in range(3):
        with idx.writer(SplitAnalyzer()) as w:
            for a in range(4):
                w.add_version(f"de:a{c}{a}", "2012-07-02", random_act(rnd, f"de:a{c}{a}", rnd.randint(5, 40)))
    return idx


def test_whole_index_visible_scores_and_ranks_equal_memory_bm25(index):
    snap = index.snapshot()
    assert len(snap.segments) == 3
    mask = snap.mask(Filters())
    assert mask.all()
    uni, bi = _memory(snap, np.arange(snap.n_rows))
    rnd = random.Random(1)
    for q in _queries(rnd):
        assert snap.bm25(q, mask, k=snap.n_rows) == uni.top(q, snap.n_rows)
        # bit-identical scores, not only close
        assert np.array_equal(snap.scorer("terms").scores(q), uni.scores(q))
        assert np.array_equal(snap.scorer("bigrams").scores(bigram_strings(q)), bi.scores(bigram_strings(q)))
        top = snap.bm25(q, mask, k=10)
        assert top == snap.bm25(q, mask, k=snap.n_rows)[:10]
        assert snap.bm25_bigrams(q, mask, k=snap.n_rows) == bi.top(bigram_strings(q), snap.n_rows)


def test_closed_and_tombstoned_rows_statistics_are_over_live_rows(index):
    rnd = random.Random(2)
    with index.writer(SplitAnalyzer()) as w:
        # a new version of one act (rows closed, new rows) and a dropped act (tombstones)
        t = random_act(rnd, "de:a00", 30, "2013-01-01")
        w.add_version("de:a00", "2013-01-01", t)
        w.drop_act("de:a11")
    snap = index.snapshot()
    live = np.flatnonzero(snap.live)
    assert len(live) < snap.n_rows or snap.n_rows == snap.n_live  # tombstoned rows may be merged away
    uni, _ = _memory(snap, live)
    visible = snap.mask(Filters())
    assert not visible[live].all()  # closed rows are live but not visible
    for q in _queries(rnd, 20):
        expected = [(int(live[i]), s) for i, s in uni.top(q, len(live), visible[live])]
        assert snap.bm25(q, visible, k=len(live)) == expected
        # the default mask: every live row
        assert snap.bm25(q, None, k=len(live)) == [(int(live[i]), s) for i, s in uni.top(q, len(live))]


def test_real_german_analyser_terms(tmp_path):
    an = get_analyzer("de")
    texts = [("823", "Wer vorsätzlich oder fahrlässig das Leben, den Körper, die Gesundheit, die Freiheit, "
                     "das Eigentum oder ein sonstiges Recht eines anderen widerrechtlich verletzt, ist dem "
                     "anderen zum Ersatz des daraus entstehenden Schadens verpflichtet."),
             ("433", "Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet, dem Käufer die Sache "
                     "zu übergeben und das Eigentum an der Sache zu verschaffen."),
             ("535", "Durch den Mietvertrag wird der Vermieter verpflichtet, dem Mieter den Gebrauch der "
                     "Mietsache während der Mietzeit zu gewähren.")]
    table = chunks("de:bgb", texts)
    idx = LanguageIndex(tmp_path / "de", "de")
    with idx.writer(an) as w:
        w.add_version("de:bgb", "2012-07-02", table)
    snap = idx.snapshot()
    mem = MemoryBM25.from_token_strings([" ".join(an.analyze(t)) for t in texts_of(table)])
    q = an.analyze("Muss der Verkäufer mir das Eigentum an der gekauften Sache verschaffen?")
    assert snap.bm25(q, None, 10) == mem.top(q, 10)
    assert snap.rows([snap.bm25(q, None, 1)[0][0]])[0]["article_id"] == "de:bgb:433"


def test_stop_words_only_query_and_unknown_terms(index):
    snap = index.snapshot()
    assert snap.bm25(["zzz-unknown"], None, 10) == []
    assert snap.bm25([], None, 10) == []
    assert len(snap.bm25(STOP[:1], None, 5)) == 5


def test_top_masked_equals_the_plain_top_k_with_ties_and_masks():
    from pipelines.retrieval.language_index.bm25 import top_k, top_masked

    rng = np.random.default_rng(0)
    for trial in range(30):
        n = int(rng.integers(1, 40_000))
        scores = np.round(rng.random(n).astype(np.float32) * rng.choice([3, 50, 1000]), 1).astype(np.float32)
        scores[rng.random(n) < rng.random()] = 0  # rows no term matched
        mask = rng.random(n) < rng.choice([0.01, 0.5, 1.0])
        for k in (1, 10, 100):
            expected = top_k(scores, np.flatnonzero((scores > 0) & mask), k)
            assert top_masked(scores, mask, k) == expected, (trial, n, k)
