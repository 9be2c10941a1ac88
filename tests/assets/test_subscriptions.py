"""The notification assets: lineage and partitions like ``published``, a materialization that builds
and delivers the events of a version with its counts, the automation condition that requests it
after a publication, and the outbox sensor."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from assets import subscriptions
from assets.definitions import defs
from assets.resources import CorpusStorage, SearchConfig
from core.layout import Layout
from pipelines.subscriptions.delivery import dead_letters
from pipelines.subscriptions.events import Event
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.store import SubscriptionStore
from subscription_fixtures import PAST, SECRET, Answer, Receiver

OLD, NEW = "2024-12-19", "2025-11-13"
PL = dg.AssetKey(["notifications", "pl", "statutes"])
KEYS = [f"{OLD}_kc", f"{NEW}_kc"]  # the Civil Code's two text states as pl_changesets partitions


def test_one_notification_asset_per_published_asset_partitioned_like_it():
    graph = defs.resolve_asset_graph()
    node = graph.get(PL)  # one asset for every Polish act: partitioned by changeset, as pl/statutes/published
    assert {k.to_user_string() for k in node.parent_keys} == {"pl/statutes/published", "pl/statutes/search_index"}
    assert node.partitions_def.name == "pl_changesets" and node.group_name == "subscriptions"
    assert node.automation_condition is not None
    assert not any(k.path[:2] == ["notifications", "pl"] and k != PL for k in graph.get_all_asset_keys())
    german = graph.get(dg.AssetKey(["notifications", "de", "statutes"]))
    assert {k.to_user_string() for k in german.parent_keys} == {"de/statutes/published", "de/statutes/search_index"}
    assert german.partitions_def == graph.get(dg.AssetKey(["de", "statutes", "published"])).partitions_def
    assert defs.resolve_job_def("pl_statutes_notify").partitions_def.name == "pl_changesets"
    assert defs.resolve_job_def("de_statutes_notify") and defs.resolve_job_def("webhook_deliver")
    # notifications run after publications once an operator turns them on; the delivery worker is on
    # by default: nothing else comes back for retries and events a crashed sender left behind
    assert defs.resolve_sensor_def("subscription_notify").default_status == dg.DefaultSensorStatus.STOPPED
    assert defs.resolve_sensor_def("webhook_outbox").default_status == dg.DefaultSensorStatus.RUNNING


@pytest.fixture
def kc_home(corpus_home: Path, tmp_path: Path) -> Layout:
    dst = tmp_path / "home"
    for part in ("corpus", "index"):
        shutil.copytree(corpus_home / part, dst / part, symlinks=True)
    return Layout(dst)


def _materialize(layout: Layout, version: str, monkeypatch: pytest.MonkeyPatch) -> dg.MaterializeResult:
    monkeypatch.setenv("LEXPIPE_WEBHOOK_TIMEOUT_S", "5")
    monkeypatch.setenv("LEXPIPE_WEBHOOK_MAX_ATTEMPTS", "1")  # no backoff wait in this test
    monkeypatch.setenv("LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS", "127.0.0.1")  # the receivers' address
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("pl_changesets", KEYS)
        result = dg.materialize([subscriptions.polish_notifications], partition_key=f"{version}_kc", instance=instance,
                                resources={"storage": CorpusStorage(home=str(layout.home)),
                                           "search_config": SearchConfig(encoder="hashing")})
        assert result.success
        (mat,) = result.asset_materializations_for_node(subscriptions.polish_notifications.op.name)
        return {k: v.value for k, v in mat.metadata.items()}


def test_the_materialization_notifies_the_version_and_reports_counts(kc_home: Layout, monkeypatch):
    with Receiver() as ok, Receiver(default=Answer(410)) as gone:
        store = SubscriptionStore(kc_home, clock=lambda: PAST)
        store.create(url=ok.url, secret=SECRET, act_id="pl:kc")
        store.create(url=ok.url, secret=SECRET, unit_id="pl:kc:art:709^2")
        store.create(url=ok.url, secret=SECRET, unit_id="pl:kc:art:415")  # unchanged: no event
        store.create(url=ok.url, secret=SECRET, act_id="pl:kc", query="umowa leasingu na piśmie pod rygorem nieważności",
                     k=5, retriever="bm25")
        parked = store.create(url=gone.url, secret=SECRET, act_id="pl:kc").subscription.id
        md = _materialize(kc_home, NEW, monkeypatch)
        assert len(ok.received) == 3 and len(gone.received) == 1
    assert (md["events"], md["new_events"], md["delivered"], md["failed"], md["dead_lettered"], md["deferred"]) == (
        4, 4, 3, 0, 1, 0)
    assert md["versions"] == NEW and md["subscriptions"] == 5
    assert [e.subscription_id for e in dead_letters(kc_home)] == [parked]
    types = sorted(r.headers["Lexpipe-Event-Type"] for r in ok.received)
    assert types == ["act.changed", "query.changed", "unit.changed"]


def test_a_home_without_subscriptions_is_left_untouched(kc_home: Layout, monkeypatch):
    md = _materialize(kc_home, NEW, monkeypatch)
    assert (md["events"], md["subscriptions"]) == (0, 0)
    assert not (kc_home.home / "subscriptions").exists()


def test_a_publication_requests_the_notification_of_that_partition():
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("pl_changesets", KEYS)
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=dg.AssetSelection.keys(PL))
        assert first.total_requested == 0  # nothing published yet
        instance.report_runless_asset_event(dg.AssetMaterialization(["pl", "statutes", "published"],
                                                                    partition=f"{NEW}_kc"))
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=dg.AssetSelection.keys(PL),
                                                   cursor=first.cursor)
        assert second.total_requested == 1
        assert second.get_requested_partitions(PL) == {f"{NEW}_kc"}
        third = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=dg.AssetSelection.keys(PL),
                                                  cursor=second.cursor)
        assert third.total_requested == 0  # handled: not requested again


def test_the_outbox_sensor_starts_a_delivery_run_only_when_one_is_due(tmp_path: Path):
    layout = Layout(tmp_path / "home")
    storage = CorpusStorage(home=str(layout.home))
    with dg.DagsterInstance.ephemeral() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={"storage": storage})
        assert isinstance(subscriptions.webhook_outbox(ctx), dg.SkipReason)
        sub = SubscriptionStore(layout).create(url="https://consumer.example/hook", act_id="pl:kc").subscription
        Outbox(layout).add([Event("evt_1", sub.id, "act.changed", "pl:kc", OLD, NEW, sub.url, "2025-01-01T00:00:00Z",
                                  {})], now=0.0)
        request = subscriptions.webhook_outbox(dg.build_sensor_context(instance=instance, resources={"storage": storage}))
        assert isinstance(request, dg.RunRequest) and request.tags["lexpipe/webhooks_due"] == "1"


def test_the_outbox_sensor_resumes_an_event_whose_sender_died(tmp_path: Path, monkeypatch):
    """An event claimed by a process that was killed (pending, its lease expired): the sensor sees it
    due and the webhook_deliver job delivers it with the same id."""
    import time

    monkeypatch.setenv("LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS", "127.0.0.1")
    layout = Layout(tmp_path / "home")
    storage = CorpusStorage(home=str(layout.home))
    with Receiver() as rx, dg.DagsterInstance.ephemeral() as instance:
        sub = SubscriptionStore(layout).create(url=rx.url, act_id="pl:kc", secret=SECRET).subscription
        eid = "evt_" + "1" * 32
        outbox = Outbox(layout)
        outbox.add([Event(eid, sub.id, "act.changed", "pl:kc", OLD, NEW, sub.url, "2025-01-01T00:00:00Z", {"a": 1})],
                   now=time.time() - 120)
        assert outbox.claim(now=time.time() - 120, lease_s=40) is not None  # the dead sender's lease: expired
        outbox.close()
        request = subscriptions.webhook_outbox(dg.build_sensor_context(instance=instance, resources={"storage": storage}))
        assert isinstance(request, dg.RunRequest)
        result = subscriptions.webhook_deliver.execute_in_process(instance=instance, resources={"storage": storage})
        assert result.success
    assert [r.event_id for r in rx.received] == [eid]
    assert Outbox(layout).get(eid).status == "delivered"
