import numpy as np
import pytest

from pipelines.retrieval.encoders import HashingEncoder, QueryCachingEncoder, get_encoder


class CountingEncoder(HashingEncoder):
    def __init__(self):
        super().__init__(dim=16)
        self.queries: list[str] = []

    def encode_queries(self, texts):
        self.queries += list(texts)
        return super().encode_queries(texts)


def test_query_cache_encodes_each_text_once_and_keeps_order():
    inner = CountingEncoder()
    enc = QueryCachingEncoder(inner, maxsize=2)
    first = enc.encode_queries(["a b", "c d", "a b"])
    assert inner.queries == ["a b", "c d"]
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(enc.encode_queries(["c d"])[0], first[1])
    assert inner.queries == ["a b", "c d"]  # served from the cache
    enc.encode_queries(["e f"])  # evicts the least recently used ("a b")
    enc.encode_queries(["a b"])
    assert inner.queries == ["a b", "c d", "e f", "a b"]
    assert enc.encode_queries([]).shape == (0, 16)
    assert enc.id == inner.id and enc.dim == 16


def test_passages_are_not_cached():
    inner = CountingEncoder()
    enc = QueryCachingEncoder(inner)
    np.testing.assert_array_equal(enc.encode_passages(["x"]), inner.encode_passages(["x"]))


def test_get_encoder_rejects_unknown_specs():
    with pytest.raises(ValueError, match="unknown encoder"):
        get_encoder("word2vec")
    assert isinstance(get_encoder("hashing"), QueryCachingEncoder)
