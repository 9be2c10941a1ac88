"""Which rows a request sees: versions as intervals, the spec's filters, carry-over, tombstones."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from language_index_helpers import SplitAnalyzer, chunks
from pipelines.retrieval.interface import Filters, SearchError
from pipelines.retrieval.language_index import LanguageIndex

D = dt.date.fromisoformat


def visible(snap, filters=Filters()) -> dict[str, tuple[str, str]]:
    """chunk_id → (text, reported version) of the visible rows."""
    ids = np.flatnonzero(snap.mask(filters))
    return {r["chunk_id"]: (r["text"], r["version"]) for r in snap.rows(ids, filters)}


@pytest.fixture
def idx(tmp_path):
    return LanguageIndex(tmp_path / "statutes_de", "de")


def publish(idx, *versions):
    """versions: (act, version, items) → one commit; returns the commit report."""
    with idx.writer(SplitAnalyzer()) as w:
        for act, version, items in versions:
            w.add_version(act, version, chunks(act, items, version))
    return w.report


def test_versions_as_intervals_day_semantics_and_exact_version(idx):
    publish(idx, ("de:a", "2012-07-02", [("1", "kauf alt"), ("2", "miete")]),
            ("de:b", "2012-07-02", [("1", "hund")]))
    r = publish(idx, ("de:a", "2012-08-06", [("1", "kauf neu"), ("2", "miete")]),
                ("de:a", "2012-08-06.02", [("1", "kauf neuer"), ("2", "miete")]))
    # carried: § 2 stays one row through three versions; § 1 closed twice
    assert (r.rows_added, r.rows_kept, r.rows_closed) == (2, 2, 2)
    snap = idx.snapshot()
    assert snap.versions("de:a") == ["2012-07-02", "2012-08-06", "2012-08-06.02"]
    assert snap.serving_version("de:a") == "2012-08-06.02" and snap.acts() == ["de:a", "de:b"]
    assert snap.n_rows == 5  # 2 + 1 + two new § 1 rows; § 2 never copied
    now = visible(snap)
    assert now == {"de:a:1#0": ("kauf neuer", "2012-08-06.02"), "de:a:2#0": ("miete", "2012-08-06.02"),
                   "de:b:1#0": ("hund", "2012-07-02")}
    # as of the day of two changes: the last of that day; the ".02" row closed the same day
    assert visible(snap, Filters(as_of=D("2012-08-06"))) == now
    # the first change of that day: visible by its exact id only
    assert visible(snap, Filters(version="2012-08-06"))["de:a:1#0"] == ("kauf neu", "2012-08-06")
    assert "de:b:1#0" not in visible(snap, Filters(version="2012-08-06"))  # b has no such version
    before = visible(snap, Filters(as_of=D("2012-08-05")))
    assert before["de:a:1#0"] == ("kauf alt", "2012-07-02") and before["de:a:2#0"] == ("miete", "2012-07-02")
    assert visible(snap, Filters(as_of=D("2012-07-01"))) == {}  # nothing in force yet
    with pytest.raises(SearchError, match="no indexed version"):
        snap.mask(Filters(act_ids=("de:b",), version="2012-08-06"))
    with pytest.raises(SearchError, match="unknown act"):
        snap.resolve(Filters(act_ids=("de:zz",)))


def test_act_status_and_jurisdiction_filters(idx):
    publish(idx, ("de:a", "2012-07-02", [("1", "kauf"), ("2", "weggefallen", "repealed")]),
            ("de:b", "2012-07-02", [("1", "kauf")]), ("eu:x", "2012-07-02", [("1", "kauf")]))
    snap = idx.snapshot()
    assert set(visible(snap, Filters(act_ids=("de:a",)))) == {"de:a:1#0", "de:a:2#0"}
    assert set(visible(snap, Filters(statuses=("in_force",)))) == {"de:a:1#0", "de:b:1#0", "eu:x:1#0"}
    assert set(visible(snap, Filters(statuses=("repealed",)))) == {"de:a:2#0"}
    assert set(visible(snap, Filters(jurisdictions=("eu",)))) == {"eu:x:1#0"}
    assert set(visible(snap, Filters(act_ids=("de:a", "de:b"), statuses=("in_force",)))) == {"de:a:1#0", "de:b:1#0"}
    # a status change is a new row (the key includes the status)
    publish(idx, ("de:a", "2013-01-01", [("1", "kauf", "repealed"), ("2", "weggefallen", "repealed")]))
    snap = idx.snapshot()
    assert set(visible(snap, Filters(act_ids=("de:a",), statuses=("repealed",)))) == {"de:a:1#0", "de:a:2#0"}
    assert set(visible(snap, Filters(act_ids=("de:a",), statuses=("in_force",), as_of=D("2012-12-31")))) == {"de:a:1#0"}


def test_idempotent_re_add_of_the_same_version(idx):
    items = [("1", "kauf"), ("2", "miete")]
    publish(idx, ("de:a", "2012-07-02", items))
    g = idx.snapshot().generation
    r = publish(idx, ("de:a", "2012-07-02", items))
    assert not r.changed and r.versions_unchanged == 1
    assert idx.snapshot().generation == g and idx.snapshot().n_rows == 2
    # the same version twice in one commit, and a re-run of a two-version changeset
    publish(idx, ("de:a", "2012-08-01", [("1", "kauf neu"), ("2", "miete")]))
    n = idx.snapshot().n_rows
    r = publish(idx, ("de:a", "2012-07-02", items), ("de:a", "2012-08-01", [("1", "kauf neu"), ("2", "miete")]))
    assert not r.changed and idx.snapshot().n_rows == n


def test_out_of_order_version_re_lays_the_act_out(idx):
    publish(idx, ("de:a", "2012-07-02", [("1", "eins"), ("2", "zwei")]))
    publish(idx, ("de:a", "2012-09-01", [("1", "eins"), ("2", "zwei neu")]))
    r = publish(idx, ("de:a", "2012-08-01", [("1", "eins"), ("3", "drei")]))
    assert r.rows_tombstoned == 3  # every earlier row of the act
    snap = idx.snapshot()
    assert snap.versions("de:a") == ["2012-07-02", "2012-08-01", "2012-09-01"]
    texts = lambda f: {c: t for c, (t, _) in visible(snap, f).items()}  # noqa: E731
    assert texts(Filters(version="2012-07-02")) == {"de:a:1#0": "eins", "de:a:2#0": "zwei"}
    assert texts(Filters(version="2012-08-01")) == {"de:a:1#0": "eins", "de:a:3#0": "drei"}
    assert texts(Filters()) == {"de:a:1#0": "eins", "de:a:2#0": "zwei neu"}
    assert snap.n_live == 4  # eins (carried through all three), zwei, drei, zwei neu
    # a re-published version with other content is laid out the same way
    publish(idx, ("de:a", "2012-08-01", [("1", "eins"), ("3", "drei korrigiert")]))
    snap = idx.snapshot()
    assert visible(snap, Filters(version="2012-08-01"))["de:a:3#0"][0] == "drei korrigiert"
    assert snap.n_live == 4


def test_replace_act_and_drop_act(idx):
    publish(idx, ("de:a", "2012-07-02", [("1", "eins")]), ("de:b", "2012-07-02", [("1", "bee")]))
    history = [("2012-09-01", chunks("de:a", [("1", "eins"), ("2", "zwei")], "2012-09-01")),
               ("2012-07-02", chunks("de:a", [("1", "eins")]))]
    with idx.writer(SplitAnalyzer()) as w:
        w.replace_act("de:a", history)
    snap = idx.snapshot()
    assert snap.versions("de:a") == ["2012-07-02", "2012-09-01"]
    assert set(visible(snap, Filters(act_ids=("de:a",)))) == {"de:a:1#0", "de:a:2#0"}
    # the same history again: nothing changes
    with idx.writer(SplitAnalyzer()) as w:
        w.replace_act("de:a", history)
    assert not w.report.changed and idx.snapshot().generation == snap.generation
    with idx.writer(SplitAnalyzer()) as w:
        w.drop_act("de:b")
    snap = idx.snapshot()
    assert snap.acts() == ["de:a"] and snap.versions("de:b") == []
    assert not any(c.startswith("de:b") for c in visible(snap))
    with pytest.raises(SearchError):
        snap.resolve(Filters(act_ids=("de:b",)))
    # tombstoned rows leave the statistics (N) and the postings' df
    assert snap.scorer("terms").n == snap.n_live == 2
    assert snap.bm25(["bee"], None, 10) == []
    # a dropped act may come back
    publish(idx, ("de:b", "2013-01-01", [("1", "bee")]))
    assert set(visible(idx.snapshot(), Filters(act_ids=("de:b",)))) == {"de:b:1#0"}


def test_bad_input_gets_a_clear_error(idx):
    with idx.writer(SplitAnalyzer()) as w:
        with pytest.raises(ValueError, match="invalid version id"):
            w.add_version("de:a", "2012-7-2", chunks("de:a", [("1", "x")]))
        with pytest.raises(ValueError, match="chunks of other acts"):
            w.add_version("de:a", "2012-07-02", chunks("de:b", [("1", "x")]))
        with pytest.raises(ValueError, match="appears more than once"):
            w.add_version("de:a", "2012-07-02", chunks("de:a", [("1", "x"), ("1", "y")]))
        with pytest.raises(ValueError, match="2 analysed term lists for 1 chunks"):
            w.add_version("de:a", "2012-07-02", chunks("de:a", [("1", "x")]), [["x"], ["y"]])
        with pytest.raises(ValueError, match="lack columns"):
            w.add_version("de:a", "2012-07-02", chunks("de:a", [("1", "x")]).drop_columns(["content_hash"]))
        with pytest.raises(ValueError, match="unknown act"):
            w.drop_act("de:nope")
        w.abort()
    assert idx.snapshot().generation == 0 and idx.snapshot().acts() == []


def test_view_feeds_the_small_scope_path(idx):
    from pipelines.retrieval.table_context import TableContext

    publish(idx, ("de:a", "2012-07-02", [("1", "der kauf"), ("2", "die miete")]),
            ("de:b", "2012-07-02", [("1", "hund")]))
    publish(idx, ("de:a", "2012-08-06", [("1", "der kauf neu"), ("2", "die miete")]))
    snap = idx.snapshot()
    view = snap.view(Filters(act_ids=("de:a",), as_of=D("2012-07-31")))
    assert view.column("chunk_id").to_pylist() == ["de:a:1#0", "de:a:2#0"]
    assert set(view.column("version").to_pylist()) == {"2012-07-02"}
    assert view.column("text_analyzed").to_pylist()[0] == "a § 1 der kauf"
    assert view.column("text_bigrams").to_pylist()[0] == "a_§ §_1 1_der der_kauf"
    ctx = TableContext.from_rows(view.to_pydict())
    assert [c for c, _ in ctx.full_text("text_analyzed", ["kauf"], Filters(), 10)] == ["de:a:1#0"]


def test_carried_over_names_exactly_the_rows_add_version_keeps(idx):
    """What the index step skips analysing (``IndexWriter.carried_over``) is what ``add_version``
    keeps: a row whose terms are left empty there must never be read."""
    publish(idx, ("de:a", "2012-07-02", [("1", "kauf alt"), ("2", "miete"), ("3", "pacht")]))
    new = chunks("de:a", [("1", "kauf neu"), ("2", "miete"), ("3", "pacht"), ("4", "leihe")], "2012-08-06")
    with idx.writer(SplitAnalyzer()) as w:
        kept = w.carried_over("de:a", "2012-08-06", new)
        assert kept.tolist() == [False, True, True, False]
        assert not w.carried_over("de:b", "2012-08-06", new).any()  # an act the index does not hold
        assert not w.carried_over("de:a", "2012-07-01", new).any()  # older: the act is laid out again
        # the carried rows' terms left empty: the search still finds them by their held terms
        terms = [[] if k else t.split() for k, t in zip(kept.tolist(), new["text"].to_pylist())]
        w.add_version("de:a", "2012-08-06", new, terms)
    assert (w.report.rows_added, w.report.rows_kept, w.report.rows_closed) == (2, 2, 1)
    snap = idx.snapshot()
    mask = snap.mask(Filters())

    def top(term: str) -> str:
        (row, _), *_ = snap.bm25([term], mask)
        return snap.rows([row])[0]["chunk_id"]

    # carried rows answer by the terms the index held; the new ones by the terms given
    assert [top(t) for t in ("miete", "pacht", "leihe", "neu")] == ["de:a:2#0", "de:a:3#0", "de:a:4#0", "de:a:1#0"]


def test_rows_come_back_in_the_order_asked_across_the_segments_batches(idx):
    """``Snapshot.rows`` reads display fields batch by batch (a segment holds a batch per act);
    any order of row ids across batches and segments comes back in that order."""
    publish(idx, *[(f"de:a{i}", "2012-07-02", [(str(n), f"text {i} {n}") for n in range(5)]) for i in range(6)])
    publish(idx, ("de:b", "2012-07-02", [("1", "spät")]))
    snap = idx.snapshot()
    seg = snap.segments[0]
    assert len(seg._display_batches(())) > 1  # several batches: the per-batch path is the one tested
    ids = np.random.default_rng(0).permutation(snap.n_rows)
    got = [r["chunk_id"] for r in snap.rows(ids)]
    expected = {int(i): r["chunk_id"] for i, r in zip(range(snap.n_rows), snap.rows(np.arange(snap.n_rows)))}
    assert got == [expected[int(i)] for i in ids]
    plain = seg.table.select(["chunk_id", "text"]).take(np.array([7, 2, 19, 0]))
    assert seg._take_display(np.array([7, 2, 19, 0]), ["chunk_id", "text"]).to_pylist() == plain.to_pylist()
