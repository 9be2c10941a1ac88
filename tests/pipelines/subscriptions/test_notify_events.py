"""Events of a real publication (the session's Civil Code, 2024-12-19 → 2025-11-13): act and unit
subscriptions get exactly what changed under them, saved queries what entered or left their top k,
each as one signed POST with a stable event id."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest

from pipelines.subscriptions.events import event_id, notify
from pipelines.subscriptions.matching import QueryNotAnswerable, backend_runner
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.signing import verify
from pipelines.subscriptions.store import SubscriptionStore
from subscription_fixtures import PAST, SECRET, Receiver, webhook_settings

OLD, NEW = "2024-12-19", "2025-11-13"


def _events(rx: Receiver) -> dict[str, dict]:
    """Subscription id → the event it received (each verified)."""
    out = {}
    for r in rx.received:
        assert verify(SECRET, r.headers, r.body)
        event = json.loads(r.body)
        assert r.event_id == event["id"]
        out[event["subscription"]["id"]] = event
    assert len(out) == len(rx.received)  # one event per subscription
    return out


def test_act_and_unit_subscriptions_match_exactly_what_changed(kc_home):
    diff = pq.read_table(kc_home.version_dir("pl:kc", NEW) / f"diff_from_{OLD}.parquet").to_pylist()
    with Receiver() as rx:
        store = SubscriptionStore(kc_home, clock=lambda: PAST)
        make = lambda **kw: store.create(url=rx.url, secret=SECRET, **kw).subscription.id  # noqa: E731
        act = make(act_id="pl:kc")
        article = make(unit_id="pl:kc:art:709^13")
        changed_par = make(unit_id="pl:kc:art:709^13:par:2")
        # only art. 166 changed in book two, editorially (a Dz. U. citation refreshed): the form, not
        # the law, so no event (issue 24: an editorial change raises no "changed" event; the feed says it)
        book = make(unit_id="pl:kc:book:DRUGA")
        quiet = [make(unit_id=u) for u in ("pl:kc:art:709^13:par:1",  # same article, unchanged §
                                           "pl:kc:art:415",  # unchanged article
                                           "pl:kc:art:385^5:par:1")]  # its article's announced reading adds § 1^1 only
        other_act = make(act_id="pl:kp")
        late = SubscriptionStore(kc_home).create(url=rx.url, act_id="pl:kc", secret=SECRET).subscription.id
        report = notify(kc_home, "pl:kc", NEW, settings=webhook_settings(kc_home.home))
        events = _events(rx)
    assert set(events) == {act, article, changed_par}
    assert not set(events) & {*quiet, book, other_act, late}  # late: created after the publication
    assert (report.events, report.new, report.delivered, report.pending, report.dead_lettered) == (3, 3, 3, 0, 0)
    assert report.subscriptions == 8  # the act's subscriptions (pl:kp's is not considered)

    whole = events[act]
    assert (whole["type"], whole["act_id"], whole["from_version"], whole["to_version"]) == ("act.changed", "pl:kc", OLD, NEW)
    assert whole["id"] == event_id(act, "pl:kc", OLD, NEW)
    assert [(c["unit_id"], c["change"], c["word_diff"]) for c in whole["changes"]] == [
        (r["article_id"], r["change"], r["unified_diff"]) for r in diff]
    assert whole["changes_total"] == 10 and not whole["truncated"] and whole["query"] is None

    art = events[article]
    assert art["type"] == "unit.changed" and art["subscription"]["unit_id"] == "pl:kc:art:709^13"
    assert [(c["unit_id"], c["level"], c["change"]) for c in art["changes"]] == [("pl:kc:art:709^13", "article", "changed")]

    par = events[changed_par]["changes"]
    assert [(c["unit_id"], c["level"], c["change"], c["reading"]) for c in par] == [
        ("pl:kc:art:709^13:par:2", "paragraph", "changed", "in_force")]
    assert "[-na piśmie korzystającemu-]" in par[0]["word_diff"] and "dokumentowej" in par[0]["new_text"]
    assert par[0]["old_text"].startswith("§ 2.") and "§ 1." not in par[0]["old_text"]
    # the act's event lists the editorial change beside the substantive ones, marked as such
    assert ("pl:kc:art:166", "editorial") in [(c["unit_id"], c["change"]) for c in whole["changes"]]


def test_the_first_version_reaches_act_subscriptions_only(kc_home):
    with Receiver() as rx:
        store = SubscriptionStore(kc_home, clock=lambda: PAST)
        act = store.create(url=rx.url, secret=SECRET, act_id="pl:kc").subscription.id
        store.create(url=rx.url, secret=SECRET, unit_id="pl:kc:art:1")
        notify(kc_home, "pl:kc", OLD, settings=webhook_settings(kc_home.home))
        events = _events(rx)
    assert list(events) == [act]
    assert events[act]["first_version"] and events[act]["from_version"] is None and events[act]["changes"] == []


def test_a_large_change_is_truncated_to_the_configured_count(kc_home):
    with Receiver() as rx:
        SubscriptionStore(kc_home, clock=lambda: PAST).create(url=rx.url, secret=SECRET, act_id="pl:kc")
        notify(kc_home, "pl:kc", NEW, settings=webhook_settings(kc_home.home, webhook_max_changes=3))
        (event,) = _events(rx).values()
    assert (len(event["changes"]), event["changes_total"], event["truncated"]) == (3, 10, True)
    assert event["feed"]["cursor"].startswith("c1.")  # where the feed lists them all


def _runner(layout):
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend

    return backend_runner(lambda act: open_embedded_backend(layout, encoder=get_encoder("hashing")))


def test_a_saved_query_reports_the_hits_that_entered_and_left_its_top_k(kc_home):
    with Receiver() as rx:
        store = SubscriptionStore(kc_home, clock=lambda: PAST)
        # the 2025 amendment drops "na piśmie pod rygorem nieważności" from art. 709^2 (leasing)
        moved = store.create(url=rx.url, secret=SECRET, act_id="pl:kc", k=5, retriever="bm25",
                             query="umowa leasingu na piśmie pod rygorem nieważności").subscription.id
        stayed = store.create(url=rx.url, secret=SECRET, act_id="pl:kc", k=5, retriever="bm25",
                              query="umowa leasingu forma dokumentowa").subscription.id
        untouched = store.create(url=rx.url, secret=SECRET, act_id="pl:kc", k=5, retriever="bm25",
                                 query="dobra osobiste człowieka zdrowie wolność cześć").subscription.id
        report = notify(kc_home, "pl:kc", NEW, runner=_runner(kc_home), settings=webhook_settings(kc_home.home))
        events = _events(rx)
    assert report.deferred == []
    assert set(events) == {moved, stayed}  # untouched: same top 5, none of it changed
    q = events[moved]["query"]
    assert events[moved]["type"] == "query.changed" and q["k"] == 5 and q["retriever"] == "bm25"
    assert [(h["article_id"], h["previous_rank"], h["change"]) for h in q["left"]] == [("pl:kc:art:709^2", 1, "changed")]
    assert [h["article_id"] for h in q["entered"]] == ["pl:kc:art:764^6"]
    assert q["entered"][0]["rank"] == 5 and q["entered"][0]["previous_rank"] is None
    # art. 647^1 (subcontractors' payment, "na piśmie" too) stays in the top 5 but was amended
    assert [(h["article_id"], h["change"]) for h in q["changed"]] == [("pl:kc:art:647^1", "changed")]
    # the event carries the diff rows of the hits that moved or changed
    assert [c["unit_id"] for c in events[moved]["changes"]] == ["pl:kc:art:647^1", "pl:kc:art:709^2"]
    s = events[stayed]["query"]
    assert s["entered"] == [] and s["left"] == []
    assert [(h["article_id"], h["rank"], h["previous_rank"]) for h in s["changed"]] == [("pl:kc:art:709^2", 1, 1)]
    assert "{+wymaga zachowania formy dokumentowej.+}" in s["changed"][0]["word_diff"]
    assert untouched not in events


def test_a_saved_query_that_cannot_run_is_deferred_then_sent(kc_home):
    def down(*args):
        raise ConnectionError("search backend unreachable")

    with Receiver() as rx:
        sub = SubscriptionStore(kc_home, clock=lambda: PAST).create(
            url=rx.url, secret=SECRET, act_id="pl:kc", k=5, retriever="bm25",
            query="umowa leasingu na piśmie pod rygorem nieważności").subscription.id
        first = notify(kc_home, "pl:kc", NEW, runner=down, settings=webhook_settings(kc_home.home))
        assert first.events == 0 and first.deferred == [(sub, "ConnectionError: search backend unreachable")]
        assert rx.received == [] and Outbox(kc_home).events() == []
        second = notify(kc_home, "pl:kc", NEW, runner=_runner(kc_home), settings=webhook_settings(kc_home.home))
        assert (second.events, second.delivered) == (1, 1)
    with pytest.raises(QueryNotAnswerable):
        from pipelines.subscriptions.feed import publication
        from pipelines.subscriptions.matching import query_delta

        query_delta(down, publication(kc_home, "pl:kc", NEW), query="x", k=5, retriever="bm25", diff_rows=[])


def test_a_subscription_created_after_the_publication_hears_of_the_next_one_only(kc_home):
    published = dt.datetime.fromisoformat(json.loads(
        (kc_home.version_dir("pl:kc", NEW) / "manifest.json").read_text())["published_at"])
    with Receiver() as rx:
        SubscriptionStore(kc_home, clock=lambda: published + dt.timedelta(seconds=1)).create(
            url=rx.url, secret=SECRET, act_id="pl:kc")
        at = SubscriptionStore(kc_home, clock=lambda: published).create(url=rx.url, secret=SECRET, act_id="pl:kc")
        notify(kc_home, "pl:kc", NEW, settings=webhook_settings(kc_home.home))
        assert list(_events(rx)) == [at.subscription.id]  # created at the publication second: included
