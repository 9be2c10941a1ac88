"""Acts and versions as the read layer lists them, against the files the main job published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.reads import ReadService
from pipelines.reads.errors import UnknownAct, UnknownVersion
from reads_data import NEW, OLD, kc_dir, publish_third_version, table_rows
from schemas.acts import registry


def test_acts_are_the_registry_rows_with_the_served_version(reads: ReadService):
    acts = {a.act_id: a for a in reads.acts()}
    assert list(acts) == list(registry().ids())
    kc = acts["pl:kc"]
    assert (kc.title, kc.citation, kc.address) == ("Kodeks cywilny", "k.c.", "DU/1964/93")
    assert (kc.served_version, kc.versions, kc.oldest_version, kc.newest_version) == (NEW, [OLD, NEW], OLD, NEW)
    # the fixture builds only the Civil Code: the other registry acts are listed, with nothing held
    assert all(a.versions == [] and a.served_version is None for i, a in acts.items() if i != "pl:kc")


def test_versions_read_manifest_source_and_acts_row(reads: ReadService, corpus_home: Path):
    old, new = reads.versions("pl:kc")
    for v, summary in ((OLD, old), (NEW, new)):
        manifest = json.loads((kc_dir(corpus_home, v) / "manifest.json").read_text())
        act_row = table_rows(corpus_home, v, "acts")[0]
        assert summary.version == v and summary.source_date == v
        assert summary.source_sha256 == manifest["source_sha256"] == act_row["source_sha256"]
        assert summary.published_at == manifest["published_at"] and summary.parser_version == manifest["parser_version"]
        assert summary.counts == manifest["stats"] and summary.based_on == act_row["based_on"]
        assert summary.counts["articles"] == len(table_rows(corpus_home, v, "articles")) == 1296
        assert summary.counts["repealed"] == 100
    assert (old.counts["pending_changes"], new.counts["pending_changes"]) == (0, 4)
    assert (old.served, new.served) == (False, True)
    assert (old.previous_version, old.next_version, new.previous_version, new.next_version) == (None, NEW, OLD, None)
    assert (old.diff_from, new.diff_from) == ([], [OLD])
    assert old.tables == ["acts", "articles", "nodes", "chunks"] and new.tables == old.tables + ["diff"]
    assert reads.version("pl:kc", NEW) == new


def test_unknown_act_and_version_are_not_found(reads: ReadService):
    with pytest.raises(UnknownAct, match="unknown act 'pl:xx'; known acts: pl:kc"):
        reads.versions("pl:xx")
    with pytest.raises(UnknownVersion, match=f"no published version 2025-01-01; held: {OLD}, {NEW}"):
        reads.version("pl:kc", "2025-01-01")
    assert reads.versions("pl:kk") == []  # a registry act nothing was published for yet


def test_a_newly_published_version_is_seen_without_a_restart(writable_home: Path):
    reads = ReadService.at(writable_home)
    assert [v.version for v in reads.versions("pl:kc")] == [OLD, NEW]
    publish_third_version(writable_home)
    listed = reads.versions("pl:kc")
    assert [v.version for v in listed] == [OLD, NEW, "2026-02-01"]
    assert listed[-1].served and not listed[1].served and listed[1].next_version == "2026-02-01"
