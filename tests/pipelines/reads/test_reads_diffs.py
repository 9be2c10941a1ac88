"""An act's diff between two held versions: stored for consecutive versions, computed otherwise."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import BadDate, BadVersionPair, UnknownAct, UnknownVersion
from pipelines.statutes.diff import diff_versions
from reads_data import NEW, OLD, THIRD, THIRD_709_2, kc_dir, publish_third_version

CHANGED = ["pl:kc:art:385^5", "pl:kc:art:556^4", "pl:kc:art:556^5", "pl:kc:art:647^1", "pl:kc:art:709^2",
           "pl:kc:art:709^11", "pl:kc:art:709^13"]
EDITORIAL = ["pl:kc:art:166", "pl:kc:art:613", "pl:kc:art:859^4"]


def test_consecutive_versions_read_the_published_diff(reads: ReadService, corpus_home: Path):
    d = reads.diff("pl:kc", OLD, NEW)
    assert (d.consecutive, d.source) == (True, "stored")
    assert d.counts == {"added": 0, "changed": 7, "repealed": 0, "removed": 0, "editorial": 3}
    assert [e.unit_id for e in d.changes] == CHANGED and [e.unit_id for e in d.editorial] == EDITORIAL
    stored = pq.read_table(kc_dir(corpus_home, NEW) / f"diff_from_{OLD}.parquet").to_pylist()
    got = {e.unit_id: e for e in d.changes + d.editorial}
    for r in stored:
        e = got[r["article_id"]]
        assert (e.change, e.old_text, e.new_text, e.word_diff, e.old_hash, e.new_hash) == (
            r["change"], r["old_text"], r["new_text"], r["unified_diff"], r["old_hash"], r["new_hash"])


def test_computing_the_diff_gives_the_published_one(corpus_home: Path):
    """What non-consecutive diffs rely on: diff_versions over the two ARTICLES tables is the table
    the pipeline published."""
    tables = [pq.read_table(kc_dir(corpus_home, v) / "articles.parquet") for v in (OLD, NEW)]
    stored = pq.read_table(kc_dir(corpus_home, NEW) / f"diff_from_{OLD}.parquet")
    assert diff_versions(*tables).to_pylist() == stored.to_pylist()


def test_parts_name_the_paragraphs_that_changed(reads: ReadService):
    d = {e.unit_id: e for e in reads.diff("pl:kc", OLD, NEW).changes}
    assert [(p.unit_id, p.level, p.change) for p in d["pl:kc:art:709^13"].parts] == [
        ("pl:kc:art:709^13:par:2", "paragraph", "changed")]
    assert "{+korzystającemu, w formie dokumentowej,+}" in d["pl:kc:art:709^13"].parts[0].word_diff
    assert [(p.unit_id, p.change) for p in d["pl:kc:art:647^1"].parts] == [
        ("pl:kc:art:647^1:par:1", "changed"), ("pl:kc:art:647^1:par:1^1", "added"), ("pl:kc:art:647^1:par:1^2", "added")]
    assert d["pl:kc:art:709^2"].parts == []  # an article without §§


def test_non_consecutive_versions_are_computed(writable_home: Path):
    publish_third_version(writable_home)
    reads = ReadService.at(writable_home)
    far = reads.diff("pl:kc", OLD, THIRD)
    assert (far.consecutive, far.source) == (False, "computed")
    by_id = {e.unit_id: e for e in far.changes}
    assert list(by_id) == CHANGED and [e.unit_id for e in far.editorial] == EDITORIAL
    assert by_id["pl:kc:art:709^2"].word_diff == (
        "Umowa leasingu [-powinna być zawarta na piśmie pod rygorem nieważności.-] {+wymaga zachowania formy "
        "pisemnej.+}")
    assert by_id["pl:kc:art:709^2"].new_text == THIRD_709_2
    near = reads.diff("pl:kc", NEW, THIRD)  # consecutive, but nothing was published for it: computed
    assert (near.consecutive, near.source, [e.unit_id for e in near.changes]) == (True, "computed", ["pl:kc:art:709^2"])


def test_a_version_published_between_makes_a_pair_non_consecutive(writable_home: Path):
    reads = ReadService.at(writable_home)
    stored = reads.diff("pl:kc", OLD, NEW)
    publish_third_version(writable_home, "2025-06-01")
    computed = reads.diff("pl:kc", OLD, NEW)
    assert (stored.consecutive, stored.source, computed.consecutive, computed.source) == (
        True, "stored", False, "computed")
    assert (computed.changes, computed.editorial, computed.counts) == (stored.changes, stored.editorial, stored.counts)


@pytest.mark.parametrize("frm,to,error,message", [
    (NEW, OLD, BadVersionPair, "must be older than"),
    (NEW, NEW, BadVersionPair, "the same version"),
    (OLD, "2025-01-01", UnknownVersion, "no published version 2025-01-01"),
    ("2024-1-1", NEW, BadDate, "from must be a date"),
    (OLD, "latest", BadDate, "to must be a date"),
])
def test_bad_version_pairs(reads: ReadService, frm, to, error, message):
    with pytest.raises(error, match=message):
        reads.diff("pl:kc", frm, to)


def test_unknown_act(reads: ReadService):
    with pytest.raises(UnknownAct):
        reads.diff("pl:nope", OLD, NEW)
