"""The German federal-law flow (``lexpipe.prefect_de_statutes``) on Prefect's test server, on the real
gesetze history: the 47-act slice of the bundle through its first 20 commits (tests/gesetze_fixtures.py)
plus one commit that cuts ApoBetrO's file short (what a broken converter or transfer produces), with
the hashing encoder. The tests share one home and run in file order: the import; a re-run; a run
restricted to one act; the ordering guard; a check that blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.layout import Layout
from gesetze_fixtures import BUILD_ACTS, bundle_path, clone_bundle, git, make_slice
from pipelines.statutes.store import CorpusStore

APO = "de:apobetro_1987"


@pytest.fixture(scope="module")
def gesetze_repo(tmp_path_factory, sample_dir: Path) -> Path:
    if not bundle_path(sample_dir).is_file():
        pytest.skip(f"{bundle_path(sample_dir)} is absent (the gesetze history bundle)")
    full = clone_bundle(sample_dir, tmp_path_factory.mktemp("gesetze") / "full")
    repo = make_slice(full, tmp_path_factory.mktemp("gesetze") / "slice", acts=BUILD_ACTS, commits=20)
    path = repo / "a" / "apobetro_1987" / "index.md"
    path.write_bytes(path.read_bytes()[:40])  # inside the YAML front matter: not a law any more
    date = "Sat, 1 Sep 2012 12:00:00 +0200"
    git(repo, "commit", "-q", "-am", "ApoBetrO 1987: index.md cut short",
        env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return repo


@pytest.fixture(scope="module")
def env(prefect_server, tmp_path_factory, gesetze_repo: Path, sample_dir: Path):
    """One home for the module; the flow reads its settings from the environment, as in production."""
    home = tmp_path_factory.mktemp("de_prefect_home")
    mp = pytest.MonkeyPatch()
    for k, v in {"LEXPIPE_HOME": str(home), "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true",
                 "LEXPIPE_GESETZE_URL": str(gesetze_repo), "LEXPIPE_ENCODER": "hashing",
                 "LEXPIPE_ELASTICSEARCH_URL": "", "LEXPIPE_PREFECT_RETRY_DELAY_S": "0.05"}.items():
        mp.setenv(k, v)
    yield home
    mp.undo()


@pytest.fixture(scope="module")
def history(env: Path, gesetze_repo: Path):
    from connectors.gesetze import GesetzeSource

    return GesetzeSource.open(Layout(env), url=str(gesetze_repo)).history()


def _record(home: Path, key: str) -> dict:
    return json.loads((Layout(home).changesets("de") / f"{key}.json").read_text())


def _generation(home: Path) -> int | None:
    from pipelines.retrieval.language_index.manifest import Generations
    from pipelines.retrieval.statute_index import statute_index_root

    return Generations(statute_index_root(Layout(home), "de")).current()


def _touching(history, act: str) -> list[str]:
    return [c.key for c in history if act in {m.act_id for m in c.members}]


def test_the_flow_applies_the_import_and_a_re_run_publishes_nothing(env: Path, history) -> None:
    from lexpipe.prefect_de_statutes import de_changesets
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.interface import Filters, SearchRequest

    imp = next(c for c in history if c.kind == "import")
    state = de_changesets(until="import", return_state=True)
    assert state.is_completed(), state.message
    [res] = state.result().changesets
    assert (res.key, res.kind, res.status, res.acts) == (imp.key, "import", "applied", len(BUILD_ACTS) - 3)
    counts = res.applied.counts
    assert counts["published"] + counts["quarantined"] == res.acts and counts["published"] >= 30
    record = _record(env, imp.key)
    assert record["state"] == "applied" and record["counts"] == counts
    published = {o["act_id"] for o in record["outcomes"] if o["outcome"] == "published"}
    store = CorpusStore(Layout(env))
    assert {APO, "de:bgb", "de:gg"} <= published
    assert store.published_versions("de:bgb") == ["2012-08-02"]
    assert res.check.published == counts["published"] and (res.check.passed or res.check.quarantined)
    assert res.index["act_versions"] == counts["published"] and res.index["rows_added"] > 0
    backend = open_embedded_backend(Layout(env), encoder=get_encoder("hashing"), lang="de", rerank=False)
    assert published <= set(backend.acts())
    [hit] = backend.search(SearchRequest("Die Würde des Menschen ist unantastbar", k=1, retriever="bm25",
                                         filters=Filters(act_ids=("de:gg",))))
    assert hit.article_id == "de:gg:art:1"

    raw = (Layout(env).changesets("de") / f"{imp.key}.json").read_bytes()
    generation = _generation(env)
    again = de_changesets(until="import", return_state=True)
    assert again.is_completed() and again.result().changesets == []  # nothing left to apply up to the import
    assert (Layout(env).changesets("de") / f"{imp.key}.json").read_bytes() == raw
    assert store.published_versions("de:bgb") == ["2012-08-02"] and _generation(env) == generation


def test_a_run_restricted_to_one_act_applies_only_its_changesets(env: Path, history) -> None:
    from lexpipe.prefect_de_statutes import de_changesets

    touching = _touching(history, APO)  # the import, the two fixes merges, BGBl I 2012 Nr. 25 (twice), the cut
    until = touching[3]
    state = de_changesets(acts=[APO], until=until, return_state=True)
    assert state.is_completed(), state.message
    report = state.result()
    assert [c.key for c in report.changesets] == touching[1:4]
    assert [c.acts for c in report.changesets] == [1, 1, 1]
    # the fixes merges touched all 44 acts: their records hold ApoBetrO only and stay to do
    assert [c.status for c in report.changesets] == ["partial", "partial", "applied"]
    for key in touching[1:3]:
        rec = _record(env, key)
        assert rec["state"] == "in_progress" and [o["act_id"] for o in rec["outcomes"]] == [APO]
    assert _record(env, until)["state"] == "applied"
    store = CorpusStore(Layout(env))
    assert len(store.published_versions(APO)) == 4  # the import's and one per changeset
    assert store.published_versions("de:bgb") == ["2012-08-02"]  # untouched by a run for ApoBetrO


def test_a_changeset_refuses_to_run_before_the_earlier_ones(env: Path, history) -> None:
    from lexpipe.prefect_de_statutes import apply_changeset_task, de_changesets
    from pipelines.statutes.changeset_order import ChangesetOrderError

    fixes = [c.key for c in history if c.kind == "fixes"][0]  # applied for ApoBetrO only
    later = next(c for c in history if c.members and c.key > fixes and APO not in {m.act_id for m in c.members})
    state = apply_changeset_task(str(env), later.key, None, return_state=True)
    assert state.is_failed()
    with pytest.raises(ChangesetOrderError, match=f"not applied yet \\(first {fixes}\\)"):
        state.result()
    assert not (Layout(env).changesets("de") / f"{later.key}.json").exists()  # nothing written

    bad_until = de_changesets(until="0099-deadbeef", return_state=True)
    assert bad_until.is_failed()
    with pytest.raises(ChangesetOrderError, match="until='0099-deadbeef': no such changeset"):
        bad_until.result()
    bad_act = de_changesets(acts=["de:nosuch"], return_state=True)
    assert bad_act.is_failed()
    with pytest.raises(ValueError, match="de:nosuch: no changeset"):
        bad_act.result()


def test_a_quarantined_act_warns_and_the_flow_goes_on_with_the_last_good_version(env: Path, history) -> None:
    """A changeset whose one act cannot be parsed is applied with that act quarantined (a warning):
    the act's last good version serves, and the changesets after it are not held back (a single
    quarantined act once blocked the whole German stream: ``pipelines/statutes/changeset_check.py``)."""
    from lexpipe.prefect_de_statutes import de_changesets

    *_, good, cut = _touching(history, APO)
    assert cut == history[-1].key
    state = de_changesets(acts=[APO], return_state=True)
    assert state.is_completed(), state
    report = state.result()
    assert [c.key for c in report.changesets][-2:] == [good, cut]
    assert all(c.status in ("applied", "partial") for c in report.changesets), report.changesets
    last = report.changesets[-1]
    assert not last.check.passed and last.check.quarantined == 1 and last.check.published == 0
    [outcome] = _record(env, cut)["outcomes"]
    assert (outcome["outcome"], outcome["reason"]) == ("quarantined", "parse_error")
    assert "a/apobetro_1987/index.md" in outcome["message"] and "front matter" in outcome["message"]
    store = CorpusStore(Layout(env))
    good_version = _record(env, good)["outcomes"][0]["version"]
    assert store.current_version(APO) == good_version  # the last good version serves


def test_a_systemic_quarantine_blocks_the_flow(tmp_path: Path) -> None:
    """More than half of a changeset of at least 10 acts quarantined (a parser or source regression,
    not a bad act): the check task raises and the flow stops before the index."""
    import json

    from lexpipe.prefect_de_statutes import ChangesetBlocked, check_changeset
    from pipelines.statutes.changeset_check import SYSTEMIC_MIN_ACTS

    key = "0002-88a07f50"
    path = Layout(tmp_path).changesets("de") / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"outcomes": [{"act_id": f"de:a{i}", "version": "2012-08-03", "outcome": "quarantined",
                                              "reason": "parse_error", "message": "no front matter"}
                                             for i in range(SYSTEMIC_MIN_ACTS)]}), encoding="utf-8")
    from prefect.logging import disable_run_logger

    blocks = f"{key}: the changeset check blocks: .*10 quarantined"
    with disable_run_logger(), pytest.raises(ChangesetBlocked, match=blocks):
        check_changeset.fn(str(tmp_path), key, 256)
