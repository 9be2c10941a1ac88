"""Dense vectors by content hash: a later backfill, exact search over the rows that have one."""

from __future__ import annotations

import numpy as np
import pytest

from language_index_helpers import SplitAnalyzer, chunks
from pipelines.retrieval.interface import Filters
from pipelines.retrieval.language_index import LanguageIndex


def unit(v):
    v = np.asarray(v, np.float32)
    return v / np.linalg.norm(v)


def test_backfill_dense_search_carry_over_and_view(tmp_path):
    idx = LanguageIndex(tmp_path / "de", "de", grace_s=0)
    a = chunks("de:a", [("1", "kauf"), ("2", "miete"), ("3", "pacht")])
    b = chunks("de:b", [("1", "kauf")])
    with idx.writer(SplitAnalyzer()) as w:
        w.add_version("de:a", "2012-07-02", a)
        w.add_version("de:b", "2012-07-02", b)
    snap = idx.snapshot()
    assert snap.dense(np.ones(4), None, 10) == [] and "vector" not in snap.view().column_names
    ha = a["content_hash"].to_pylist()
    vecs = {ha[0]: [1, 0, 0, 0], ha[1]: [0, 1, 0, 0]}  # § 3 and de:b not embedded yet
    with idx.writer(SplitAnalyzer()) as w:
        w.set_vectors(list(vecs), np.array(list(vecs.values())) * 3.0, "enc-1")
    assert w.report.vectors_added == 2
    snap = idx.snapshot()
    hits = snap.dense([0.9, 0.1, 0, 0], None, 10)
    assert [r["chunk_id"] for r in snap.rows([i for i, _ in hits])] == ["de:a:1#0", "de:a:2#0"]
    assert hits[0][1] == pytest.approx(float(unit([0.9, 0.1, 0, 0])[0]))
    # the mask applies; a row without a vector is never a dense hit
    only2 = snap.mask(Filters(act_ids=("de:a",))) & np.isin(np.arange(snap.n_rows), [hits[1][0]])
    assert [i for i, _ in snap.dense([1, 0, 0, 0], only2, 10)] == [hits[1][0]]
    view = snap.view(Filters(act_ids=("de:a",)))
    vec = view.column("vector").to_pylist()
    assert vec[0] == pytest.approx([1, 0, 0, 0]) and vec[2] is None
    assert snap.stats()["vectors"] == 2
    with idx.writer(SplitAnalyzer()) as w:
        with pytest.raises(ValueError, match="dimension 3"):
            w.set_vectors([ha[2]], np.ones((1, 3)))
        with pytest.raises(ValueError, match="encoder enc-2"):
            w.set_vectors([ha[2]], np.ones((1, 4)), "enc-2")
        w.abort()
    # a re-layout (out-of-order version) tombstones the rows; the new rows get their vectors back
    with idx.writer(SplitAnalyzer()) as w:
        w.add_version("de:a", "2012-01-01", chunks("de:a", [("1", "kauf")], "2012-01-01"))
    snap = idx.snapshot()
    hits = snap.dense([1, 0, 0, 0], snap.mask(Filters(act_ids=("de:a",))), 10)
    assert [r["chunk_id"] for r in snap.rows([i for i, _ in hits])] == ["de:a:1#0", "de:a:2#0"]
    # the new version's rows have vectors where their content has one (the same content in de:b)
    with idx.writer(SplitAnalyzer()) as w:
        w.set_vectors([b["content_hash"][0].as_py()], np.array([[0, 0, 1, 0]]), "enc-1")
    snap = idx.snapshot()
    assert snap.rows([snap.dense([0, 0, 1, 0], None, 1)[0][0]])[0]["chunk_id"] == "de:b:1#0"
    assert snap.stats()["vectors"] == 3
