"""Term hashes and posting lists against plain-Python references."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa

from pipelines.retrieval.language_index import hashing
from pipelines.retrieval.language_index import postings as P


def test_vectorised_hash_equals_the_reference_and_bigrams_compose():
    terms = ["§", "823", "schadensersatz", "straße", "109^1", "ä", "a", "ab", "ba", "x" * 300, "gläubiger"]
    got = hashing.hash_strings(terms).tolist()
    assert got == [hashing.hash_reference(t) for t in terms]
    assert len(set(got)) == len(terms)
    poly, blen = hashing.poly_of(terms)
    a, b = np.array([0, 2, 3]), np.array([1, 4, 10])
    bp, bl = hashing.bigram_poly(poly[a], blen[a], poly[b], blen[b])
    assert hashing.finish(bp, bl).tolist() == [hashing.hash_reference(f"{terms[i]}_{terms[j]}") for i, j in zip(a, b)]
    assert hashing.hash_strings([]).tolist() == []


def _reference(term_lists):
    post: dict[str, list[tuple[int, int]]] = {}
    for row, terms in enumerate(term_lists):
        for t, tf in Counter(terms).items():
            post.setdefault(t, []).append((row, tf))
    return post


def test_postings_equal_a_counter_reference_across_batches():
    rnd = random.Random(3)
    vocab = [f"w{i}" for i in range(60)] + ["§", "ä", "straße"]
    term_lists = [[rnd.choice(vocab) for _ in range(rnd.randint(0, 30))] for _ in range(500)]
    postings, lengths = P.build(P.join_terms(term_lists), batch_rows=37)
    assert lengths["terms"].tolist() == [len(t) for t in term_lists]
    assert lengths["bigrams"].tolist() == [max(len(t) - 1, 0) for t in term_lists]
    for field, lists in (("terms", term_lists), ("bigrams", [P.bigram_strings(t) for t in term_lists])):
        p = postings[field]
        assert np.all(np.diff(p.hash.astype(np.uint64)) > 0)  # sorted, distinct
        ref = _reference(lists)
        assert p.terms == len(ref)
        for term, expected in ref.items():
            docs, tf = p.lookup(hashing.hash_reference(term))
            assert list(zip(docs.tolist(), tf.tolist())) == expected, term
        assert p.lookup(hashing.hash_reference("not-there")) is None


def test_merge_drops_mapped_out_rows_and_renumbers():
    a = [["x", "y"], ["y"], ["z", "x"]]
    b = [["x"], ["q", "x"]]
    pa_, _ = P.build(P.join_terms(a))
    pb, _ = P.build(P.join_terms(b))
    merged = P.merge([(pa_["terms"], np.array([0, -1, 1])), (pb["terms"], np.array([2, 3]))])
    expected, _ = P.build(P.join_terms([a[0], a[2], b[0], b[1]]))
    for name in ("hash", "off", "doc", "tf"):
        assert getattr(merged, name).tolist() == getattr(expected["terms"], name).tolist()


def test_empty_rows_and_nulls_have_no_terms():
    postings, lengths = P.build(pa.array(["", None, "a a"], pa.large_string()))
    assert lengths["terms"].tolist() == [0, 0, 2]
    docs, tf = postings["terms"].lookup(hashing.hash_reference("a"))
    assert docs.tolist() == [2] and tf.tolist() == [2]
    assert postings["bigrams"].lookup(hashing.hash_reference("a_a"))[1].tolist() == [1]
