"""The change feed: exactly the publication history on disk, paged by a tamper-evident cursor, as
JSON pages and as Atom."""

from __future__ import annotations

import datetime as dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from core.layout import Layout
from pipelines.subscriptions import feed
from pipelines.subscriptions.feed import FeedError, InvalidCursor, PublicationNotFound
from subscription_fixtures import write_publication

OLD, NEW = "2024-12-19", "2025-11-13"
A = "{http://www.w3.org/2005/Atom}"


# -- over the session's published Civil Code (read only) -------------------------------------------


def test_the_feed_lists_both_publications_with_their_changed_units(corpus_home: Path):
    layout = Layout(corpus_home)
    page = feed.changes(layout, act="pl:kc")
    assert [(e.act_id, e.version, e.from_version) for e in page.entries] == [("pl:kc", OLD, None), ("pl:kc", NEW, OLD)]
    assert not page.has_more and page.next_cursor == page.entries[-1].cursor
    first, second = page.entries
    assert first.changes == () and first.to_dict()["first_version"]
    # exactly the diff table the publication wrote, with kinds and word diffs
    diff = pq.read_table(corpus_home / "corpus/pl/kc" / NEW / f"diff_from_{OLD}.parquet").to_pylist()
    assert [(c.unit_id, c.change, c.word_diff) for c in second.changes] == [
        (r["article_id"], r["change"], r["unified_diff"]) for r in diff]
    assert second.counts == {"added": 0, "changed": 7, "repealed": 0, "removed": 0, "editorial": 3}
    leasing = next(c for c in second.changes if c.unit_id == "pl:kc:art:709^2")
    assert leasing.change == "changed" and "{+wymaga zachowania formy dokumentowej.+}" in leasing.word_diff
    # published_at comes from the manifests, in publication order
    manifests = [json.loads((corpus_home / "corpus/pl/kc" / v / "manifest.json").read_text()) for v in (OLD, NEW)]
    assert [e.published_at for e in page.entries] == [dt.datetime.fromisoformat(m["published_at"]) for m in manifests]
    json.dumps(page.to_dict())  # the API's JSON as is


def test_pages_follow_the_cursor_and_a_tampered_cursor_is_refused(corpus_home: Path):
    layout = Layout(corpus_home)
    one = feed.changes(layout, act="pl:kc", limit=1)
    assert [e.version for e in one.entries] == [OLD] and one.has_more
    two = feed.changes(layout, act="pl:kc", since=one.next_cursor, limit=1)
    assert [e.version for e in two.entries] == [NEW] and not two.has_more
    three = feed.changes(layout, act="pl:kc", since=two.next_cursor)
    assert three.entries == [] and three.next_cursor == two.next_cursor  # poll again from there
    # a timestamp works as since too (publications at or after it)
    assert [e.version for e in feed.changes(layout, act="pl:kc", since=two.entries[0].published_at.isoformat()).entries] == [NEW]
    cursor = one.next_cursor
    body, check = cursor[3:].split(".")
    forged = json.dumps(["2000-01-01T00:00:00Z", "pl:kc", "0000-00-00"], separators=(",", ":")).encode()
    import base64

    tampered = [
        cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB"),  # checksum edited
        f"c1.{base64.urlsafe_b64encode(forged).decode().rstrip('=')}.{check}",  # position edited
        cursor[: len(cursor) // 2],  # truncated
        "c1.not.base64!",
    ]
    for bad in tampered:
        with pytest.raises(InvalidCursor, match="altered or truncated"):
            feed.changes(layout, since=bad)
    with pytest.raises(FeedError, match="RFC 3339 timestamp") as bad_since:
        feed.changes(layout, since="last tuesday")
    assert bad_since.value.field == "since" and not isinstance(bad_since.value, LookupError)  # malformed: 422
    with pytest.raises(FeedError, match="act must look like"):
        feed.changes(layout, act="Kodeks cywilny")
    with pytest.raises(feed.UnknownAct, match="unknown act 'pl:zz'"):  # well formed, not in the registry: 404
        feed.changes(layout, act="pl:zz")
    with pytest.raises(FeedError, match="limit"):
        feed.changes(layout, limit=0)
    assert feed.changes(layout, act="pl:kp").entries == []  # nothing of that act published here


@pytest.mark.parametrize("since, expected", [
    ("2025-11-13", "2025-11-13T00:00:00+00:00"),
    ("2025-11-13T12:30:00Z", "2025-11-13T12:30:00+00:00"),
    ("2025-11-13t12:30:00z", "2025-11-13T12:30:00+00:00"),  # RFC 3339 allows lower case
    ("2025-11-13 12:30:00+02:00", "2025-11-13T10:30:00+00:00"),
    ("2025-11-13T12:30:00.123456789Z", "2025-11-13T12:30:00.123456+00:00"),  # any fraction: microseconds kept
    ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59+00:00"),  # a leap second
])
def test_since_takes_any_rfc_3339_timestamp_or_a_date(since, expected):
    assert feed.parse_since(since) == ("time", dt.datetime.fromisoformat(expected))


@pytest.mark.parametrize("since", ["2025-02-30", "2025-11-13T24:00:00Z", "2025-11-13T12:00:00", "20251113",
                                   "2025-11-13T12:00:00+24:00", "yesterday"])
def test_a_malformed_since_is_refused(since):
    with pytest.raises(FeedError, match="RFC 3339"):
        feed.parse_since(since)


def test_the_atom_feed_parses_with_one_entry_per_publication(corpus_home: Path):
    xml = feed.atom(Layout(corpus_home), act="pl:kc", base_url="https://lexpipe.example/api")
    root = ET.fromstring(xml.encode())
    assert root.tag == f"{A}feed"
    for name in ("id", "title", "updated", "author"):
        assert root.find(f"{A}{name}") is not None, name
    entries = root.findall(f"{A}entry")
    assert len(entries) == 2
    newest = entries[0]  # newest first, as readers expect
    assert newest.find(f"{A}title").text.startswith(f"pl:kc {NEW} published (since {OLD}): 7 changed, 3 editorial")
    assert newest.find(f"{A}link").get("href") == f"https://lexpipe.example/api/changes/pl:kc/{NEW}"
    content = newest.find(f"{A}content")
    assert content.get("type") == "html" and "pl:kc:art:709^2" in content.text and "changed" in content.text
    ids = [e.find(f"{A}id").text for e in entries]
    assert len(set(ids)) == 2 and all(i.startswith("tag:lexpipe,2025:publication/pl:kc/") for i in ids)
    for e in entries:
        updated = e.find(f"{A}updated").text
        assert updated.endswith("Z") and dt.datetime.fromisoformat(updated.replace("Z", "+00:00"))
    assert entries[1].find(f"{A}content").text.startswith("<p>First published version")


def test_one_publication_by_act_and_version(corpus_home: Path):
    entry = feed.publication_entry(Layout(corpus_home), "pl:kc", NEW)
    assert entry.from_version == OLD and len(entry.changes) == 10
    with pytest.raises(PublicationNotFound):
        feed.publication_entry(Layout(corpus_home), "pl:kc", "2030-01-01")


# -- ordering over a synthetic history -------------------------------------------------------------


def test_order_is_publication_time_then_act_and_a_republication_moves(tmp_path: Path):
    home = tmp_path / "home"
    write_publication(home, "pl:kp", "2016-09-22", "2025-01-01T10:00:00+00:00")
    write_publication(home, "pl:kc", "2024-12-19", "2025-01-01T10:00:00+00:00")  # same second: by act
    write_publication(home, "pl:kc", "2025-11-13", "2025-11-14T08:00:00+00:00", previous="2024-12-19",
                      diff=[("pl:kc:art:709^2", "changed", "[-a-] {+b+}"), ("pl:kc:art:1000", "added", "{+x+}")])
    write_publication(home, "pl:kp", "2025-12-10", "2025-12-11T08:00:00+00:00", previous="2016-09-22",
                      diff=[("pl:kp:art:9^1", "repealed", "[-a-] {+(uchylony)+}")])
    layout = Layout(home)
    order = [(e.act_id, e.version) for e in feed.changes(layout).entries]
    assert order == [("pl:kc", "2024-12-19"), ("pl:kp", "2016-09-22"), ("pl:kc", "2025-11-13"), ("pl:kp", "2025-12-10")]
    cursor = feed.changes(layout, limit=3).next_cursor
    # the Civil Code's 2025-11-13 is re-published (a new parser): it moves to the end of the feed,
    # and a consumer polling from its cursor sees it again
    write_publication(home, "pl:kc", "2025-11-13", "2026-01-05T09:00:00+00:00", previous="2024-12-19",
                      diff=[("pl:kc:art:709^2", "changed", "[-a-] {+b+}")])
    after = feed.changes(layout, since=cursor)
    assert [(e.act_id, e.version) for e in after.entries] == [("pl:kp", "2025-12-10"), ("pl:kc", "2025-11-13")]
    assert feed.changes(layout, since="2025-12-01T00:00:00Z").entries[0].version == "2025-12-10"
    assert feed.changes(layout, act="pl:kp").entries[1].counts["repealed"] == 1
    # Atom with since: that page, with a next link while more follow
    root = ET.fromstring(feed.atom(layout, since="2025-01-01T00:00:00Z", limit=2).encode())
    assert len(root.findall(f"{A}entry")) == 2
    assert [l.get("rel") for l in root.findall(f"{A}link")] == ["self", "next"]
