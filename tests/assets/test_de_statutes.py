"""German federal law in Dagster: one ``de_changesets`` partition per gesetze commit, on the real
history (a 47-act slice of the bundle through its first 20 commits, tests/gesetze_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from assets import de_statutes
from assets.resources import CorpusStorage, GesetzeRepo, ParseConfig, SearchConfig
from core.layout import Layout
from gesetze_fixtures import BUILD_ACTS, build_slice_or_skip
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest
from pipelines.statutes.store import CorpusStore


@pytest.fixture(scope="module")
def gesetze_slice(tmp_path_factory, sample_dir: Path) -> Path:
    return build_slice_or_skip(sample_dir, tmp_path_factory, commits=20)


def _resources(home: Path, repo: Path) -> dict:
    return {"storage": CorpusStorage(home=str(home)), "gesetze": GesetzeRepo(url=str(repo)),
            "parse_config": ParseConfig(), "search_config": SearchConfig(encoder="hashing")}


def _run(home: Path, repo: Path, key: str, instance, acts: list[str] | None = None) -> dg.ExecuteInProcessResult:
    instance.add_dynamic_partitions(de_statutes.changesets.name, [key])
    return dg.materialize([*de_statutes.ASSETS, *de_statutes.CHECKS], partition_key=key, instance=instance,
                          resources=_resources(home, repo), raise_on_error=False,
                          run_config={"ops": {"de__statutes__published": {"config": {"acts": acts or []}}}})


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, gesetze_slice: Path, monkeypatch_module):
    """The import and the first BGBl changeset of the slice, applied through the assets."""
    home = tmp_path_factory.mktemp("de_home")
    monkeypatch_module.setenv("LEXPIPE_HOME", str(home))
    from connectors.gesetze import GesetzeSource

    source = GesetzeSource.open(Layout(home), url=str(gesetze_slice))
    history = source.history()
    instance = dg.DagsterInstance.ephemeral()
    results = {c.key: _run(home, gesetze_slice, c.key, instance) for c in history[:5] if c.members}
    return home, history, results, instance


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_the_import_publishes_checks_and_indexes_every_act(loaded):
    home, history, results, _ = loaded
    imp = next(c for c in history if c.kind == "import")
    result = results[imp.key]
    assert result.success
    [mat] = result.asset_materializations_for_node("de__statutes__published")
    md = {k: v.value for k, v in mat.metadata.items()}
    assert md["kind"] == "import" and md["acts_touched"] == len(BUILD_ACTS) - 3
    assert md["acts_published"] + md["acts_quarantined"] == len(BUILD_ACTS) - 3 and md["acts_published"] >= 30
    assert md["state"] == "applied"
    record = json.loads((Layout(home).changesets("de") / f"{imp.key}.json").read_text())
    assert {o["act_id"] for o in record["outcomes"]} == {m.act_id for m in imp.members}
    for o in record["outcomes"]:
        if o["outcome"] == "quarantined":  # a reason and the file it came from
            assert o["reason"] and imp.position[:12] in o["message"]
    store = CorpusStore(Layout(home))
    assert store.published_versions("de:bgb")[0] == "2012-08-02"  # the import's version: the commit's date
    [check] = [e.asset_check_evaluation_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert check.check_name == "de_changeset_valid"
    assert check.passed or check.severity == dg.AssetCheckSeverity.WARN  # quarantined acts warn, never block
    [idx] = result.asset_materializations_for_node("de__statutes__search_index")
    assert idx.metadata["act_versions"].value == md["acts_published"]
    backend = open_embedded_backend(Layout(home), encoder=get_encoder("hashing"), lang="de", rerank=False)
    published = {o["act_id"] for o in record["outcomes"] if o["outcome"] == "published"}
    assert "de:bgb" in published and len(published) == md["acts_published"]
    assert published <= set(backend.acts())  # every act the import published is searchable
    [hit] = backend.search(SearchRequest("Die Würde des Menschen ist unantastbar", k=1, retriever="bm25",
                                         filters=Filters(act_ids=("de:gg",))))
    assert hit.article_id == "de:gg:art:1"


def test_the_fixes_commits_are_versions_of_their_own_and_editorial(loaded):
    home, history, results, _ = loaded
    fixes = [c for c in history[:5] if c.kind == "fixes"]
    assert [c.date for c in fixes] == ["2012-08-03", "2012-08-03"]
    for c in fixes:
        assert results[c.key].success
        record = json.loads((Layout(home).changesets("de") / f"{c.key}.json").read_text())
        assert record["state"] == "applied"
        assert not record["diff"].get("changed") and not record["diff"].get("added"), record["diff"]
        # the index analyses only the chunks it adds: rows it holds open carry over unread
        [idx] = results[c.key].asset_materializations_for_node("de__statutes__search_index")
        md = {k: v.value for k, v in idx.metadata.items()}
        assert md["chunks_analysed"] == md["rows_added"] < md["chunks"] == md["rows_added"] + md["rows_kept"], md
    versions = CorpusStore(Layout(home)).published_versions("de:bgb")
    assert versions[:3] == ["2012-08-02", "2012-08-03", "2012-08-03.02"]


def test_a_changeset_waits_for_the_earlier_ones(tmp_path, gesetze_slice):
    from connectors.gesetze import GesetzeSource

    history = GesetzeSource.open(Layout(tmp_path), url=str(gesetze_slice)).history()
    later = next(c for c in history if c.kind == "bgbl")
    result = _run(tmp_path, gesetze_slice, later.key, dg.DagsterInstance.ephemeral())
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "earlier changeset" in failure.event_specific_data.error.message
    assert not (Layout(tmp_path).changesets("de") / f"{later.key}.json").exists()


def test_a_re_run_publishes_nothing_again(loaded, gesetze_slice):
    home, history, results, instance = loaded
    imp = next(c for c in history if c.kind == "import")
    again = _run(home, gesetze_slice, imp.key, instance)
    assert again.success
    [mat] = again.asset_materializations_for_node("de__statutes__published")
    assert mat.metadata["acts_published"].value == results[imp.key].asset_materializations_for_node(
        "de__statutes__published")[0].metadata["acts_published"].value  # the record, unchanged
    [idx] = again.asset_materializations_for_node("de__statutes__search_index")
    assert idx.metadata["act_versions"].value == 0 and idx.metadata["rows_added"].value == 0


# -- the sensor and the weekly re-validation ------------------------------------------------------


def _tick(resources: dict, cursor: str | None = None, instance=None) -> dg.SensorResult:
    import datetime as dt

    from assets.sensors import GesetzeWatcher, build_source_sensor

    sensor = build_source_sensor([GesetzeWatcher(job=de_statutes.de_statutes_job, poll_window=dt.timedelta(hours=48))],
                                 name="source_watch_de")
    context = dg.build_sensor_context(instance=instance or dg.DagsterInstance.ephemeral(), cursor=cursor,
                                      resources=resources)
    result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    return result


def test_the_sensor_requests_each_commit_once_in_source_order(tmp_path, gesetze_slice):
    from connectors.gesetze import GesetzeSource

    resources = {"storage": CorpusStorage(home=str(tmp_path)), "gesetze": GesetzeRepo(url=str(gesetze_slice))}
    history = GesetzeSource.open(Layout(tmp_path), url=str(gesetze_slice)).history()
    first = _tick(resources)
    want = [c.key for c in history if c.members]
    assert [r.partition_key for r in first.run_requests] == want  # one run per commit, not per act
    assert {r.job_name for r in first.run_requests} == {"de_statutes_refresh"}
    assert first.run_requests[0].tags["lexpipe/changeset_kind"] == "import"
    assert int(first.run_requests[0].tags["lexpipe/acts"]) == len(BUILD_ACTS) - 3  # 3 slice acts came later
    [obs] = first.asset_events
    assert obs.asset_key == dg.AssetKey(["sources", "de_gesetze"])
    again = _tick(resources, first.cursor)
    assert not again.run_requests  # requested already: never twice


def test_replay_offers_the_next_commit_once_the_last_is_applied(loaded, gesetze_slice):
    """The replay cursor of the source: the sensor sees one commit at a time, as they came."""
    home, history, results, instance = loaded
    replay = {"storage": CorpusStorage(home=str(home)), "gesetze": GesetzeRepo(url=str(gesetze_slice), replay=True)}
    applied = [c.key for c in history[:5] if c.members]
    nxt = next(c for c in history if c.members and c.key not in applied)
    # the replay starts at the first commit; each tick whose last offered commit is applied (the
    # fixture applied the first five) moves it one commit on, until one that is not applied
    cursor, requested, ticks = None, [], 0
    while not requested and ticks < 10:
        result = _tick(replay, cursor)
        cursor, requested, ticks = result.cursor, [r.partition_key for r in result.run_requests], ticks + 1
    assert requested == [nxt.key] and ticks <= nxt.seq, (requested, ticks, nxt.seq)
    assert _tick(replay, cursor).run_requests == []  # offered, not applied: no move, no second request


def test_weekly_revalidation_reruns_the_checks_of_last_weeks_changesets(loaded):
    import datetime as dt
    import os

    from assets.definitions import defs

    home, history, results, _ = loaded
    schedule = defs.resolve_schedule_def("weekly_german_revalidation_schedule")
    assert schedule.job_name == "de_statutes_revalidate"
    when = dt.datetime.now(dt.timezone.utc)
    resources = {"storage": CorpusStorage(home=str(home))}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(de_statutes.changesets.name, sorted(results))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when, resources=resources) as ctx:
            requests = schedule(ctx)
        assert sorted(r.partition_key for r in requests) == sorted(results)
        year, week, _ = when.isocalendar()
        assert all(r.run_key == f"revalidate:de:{r.partition_key}@{year}-W{week:02d}" and r.asset_selection == []
                   and [k.name for k in r.asset_check_keys] == ["de_changeset_valid"] for r in requests)
        old = when.timestamp() - 8 * 86400  # records not touched for eight days: nothing to re-validate
        for p in Layout(home).changesets("de").glob("*.json"):
            os.utime(p, (old, old))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when, resources=resources) as ctx:
            assert isinstance(schedule(ctx), dg.SkipReason)
