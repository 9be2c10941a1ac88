"""The benchmark job through Dagster on the real corpus (hashing encoder): question table with its
blocking check, staleness per version, retrieval evaluation with history, plot and the
non-blocking regression check; and the nightly schedule."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from assets import benchmarks
from assets.resources import default_resources
from core.layout import Layout
from lexpipe.runner import run_benchmarks
from core.settings import Settings
from pipelines.benchmarks.retrieval_eval import METRICS, EvalHistory
from schemas.arrow import RETRIEVAL_EVAL, from_rows

OLD, NEW = "2024-12-19", "2025-11-13"
MAX_Q = 40


def _settings(home: Path, sample: Path) -> Settings:
    return Settings(home=home, sample_dir=sample, offline=True, encoder="hashing", benchmark_max_questions=MAX_Q)


def _checks(result) -> dict[str, tuple[bool, str]]:
    return {e.asset_check_evaluation_data.check_name: (e.asset_check_evaluation_data.passed,
                                                        e.asset_check_evaluation_data.description)
            for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def _md(instance, *key: str, partition: str | None = None) -> dict:
    ev = instance.get_latest_materialization_event(dg.AssetKey(["benchmarks", *key]))
    assert ev is not None and ev.asset_materialization.partition == (f"{partition}_kc" if partition else partition)
    return {k: v.value for k, v in ev.asset_materialization.metadata.items()}


@pytest.fixture(scope="module")
def bench(tmp_path_factory, corpus_home: Path, sample_dir: Path):
    """``lexpipe run``'s benchmark step on a copy of the session corpus: questions once,
    staleness for both versions, evaluation of the serving version."""
    home = tmp_path_factory.mktemp("bench") / "home"
    shutil.copytree(corpus_home, home)
    settings = _settings(home, sample_dir)
    resources = default_resources(settings)
    instance = dg.DagsterInstance.ephemeral()
    runs = run_benchmarks(settings, act_id="pl:kc", instance=instance, resources=resources, log_level="WARNING")
    return home, instance, resources, runs


def test_runner_materializes_questions_staleness_and_evaluation(bench):
    home, instance, _, runs = bench
    assert [(r.version, r.steps, r.success, r.failed_checks, r.error) for r in runs] == [
        (OLD, ["questions", "staleness"], True, [], None),
        (NEW, ["staleness", "retrieval_eval"], True, [], None),
        (NEW, ["answers"], True, [], None)]
    layout = Layout(home)

    q = _md(instance, "questions")
    assert q["dagster/row_count"] == 4572 and q["previous_rows"] == "none"
    assert q["rows_per_benchmark"] == {"pl_exams": 2418, "gerlayqa": 2154}
    assert q["refs_in_corpus"] == 1465 and q["refs_outside_corpus"] > 4000  # 766 when k.c. was the only act
    assert q["refs_in_corpus_per_act"]["pl:kc"] == 766 and set(q["refs_in_corpus_per_act"]) == {
        "pl:kc", "pl:kpc", "pl:kp", "pl:kk"}
    assert "| pl/exam-pdfs/2025-09-27_adwokacki_radcowy_questions.pdf | 150 |" in q["rows_per_source"]
    assert pq.read_metadata(layout.benchmarks / "questions.parquet").num_rows == 4572
    assert json.loads((layout.benchmarks / "questions.json").read_text())["rows"] == 4572

    for v, prev in ((OLD, "none"), (NEW, OLD)):
        flags = pq.read_table(benchmarks.staleness_path(layout, "pl:kc", v))
        assert sorted(flags["reason"].to_pylist()) == ["repealed"] * 3
    s = _md(instance, "pl", "kc", "staleness", partition=NEW)
    assert (s["questions_checked"], s["stale_questions"], s["refs_repealed"], s["previous_version"]) == (766, 3, 3, OLD)
    assert "pl:kc:art:188" in s["flags"]

    e = _md(instance, "pl", "kc", "retrieval_eval", partition=NEW)
    assert e["encoder"] == "hashing-384" and e["backend"] == "EmbeddedBackend"
    assert e["questions"] + e["skipped_stale"] == MAX_Q and e["question_set"] == f"in_corpus_gold;max={MAX_Q}"
    assert e["history_plot"].startswith("![retrieval history](data:image/png;base64,iVBORw0KGgo")
    assert "| act | pl_exams | hybrid | question+options |" in e["metrics"]
    assert "| jurisdiction | pl_exams | hybrid | question |" in e["metrics"]
    assert (layout.benchmarks / "retrieval_eval" / "history_pl_kc.png").read_bytes()[:4] == b"\x89PNG"
    rows = EvalHistory(layout.benchmarks / "retrieval_eval").read().to_pylist()
    assert len(rows) == 10 and {r["run_id"] for r in rows} == {runs[1].run_id}
    assert {(r["scope"], r["retriever"], r["query_style"]) for r in rows} == {
        ("act", ret, st) for ret in ("bm25", "dense", "hybrid", "gaius") for st in ("question", "question+options")
    } | {("jurisdiction", "hybrid", st) for st in ("question", "question+options")}
    assert all(r["n"] == e["questions"] and r["version"] == dt.date(2025, 11, 13) for r in rows)
    bm25 = next(r for r in rows if r["retriever"] == "bm25" and r["scope"] == "act" and r["query_style"] == "question")
    assert bm25["mrr"] > 0.7  # exam questions paraphrase their article: lexical search finds most

    keys = [dg.AssetCheckKey(dg.AssetKey(["benchmarks", "questions"]), "benchmark_questions_valid"),
            dg.AssetCheckKey(dg.AssetKey(["benchmarks", "pl", "kc", "retrieval_eval"]), "retrieval_no_regression")]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    assert set(latest) == set(keys)
    evaluations = {k.name: r.event.dagster_event.event_specific_data for k, r in latest.items()}
    assert all(e.passed for e in evaluations.values()), evaluations
    assert evaluations["retrieval_no_regression"].description == "first run of this question set: nothing to compare"


def test_regression_check_fires_on_a_drop_and_does_not_block(bench):
    home, instance, resources, runs = bench
    from assets.definitions import build_definitions

    job = build_definitions(resources).resolve_job_def("benchmark_nightly_pl_kc")
    select = [dg.AssetKey(["benchmarks", "pl", "kc", "retrieval_eval"])]
    history = EvalHistory(Layout(home).benchmarks / "retrieval_eval")

    # the same evaluation again: compared with the first run, nothing fell
    again = job.execute_in_process(partition_key=f"{NEW}_kc", instance=instance, asset_selection=select, raise_on_error=False)
    assert again.success
    passed, desc = _checks(again)["retrieval_no_regression"]
    assert passed and desc == "no metric fell by more than 0.02 (60 compared with the previous run)"

    # a better run slipped in between: tonight's (identical) metrics are a drop of 0.1 against it
    prev = history.runs(again.run_id).to_pylist()
    better = [{**r, "run_id": "injected-better-run", "run_ts": r["run_ts"] + dt.timedelta(seconds=1),
               **{m: min(1.0, r[m] + 0.1) for m in METRICS}} for r in prev]
    history.append(from_rows(better, RETRIEVAL_EVAL))
    current_before = Layout(home).current_file("pl:kc").read_text()
    worse = job.execute_in_process(partition_key=f"{NEW}_kc", instance=instance, asset_selection=select, raise_on_error=False)
    assert worse.success  # not blocking: the run and the corpus go on
    passed, desc = _checks(worse)["retrieval_no_regression"]
    check = [e for e in worse.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"][0]
    md = {k: v.value for k, v in check.asset_check_evaluation_data.metadata.items()}
    assert not passed and md["regressions"] > 0 and md["previous_run_id"] == "injected-better-run"
    assert desc.startswith(f"{md['regressions']} metric(s) fell by more than 0.02: ")
    assert "**regression**" in md["changes"]
    assert Layout(home).current_file("pl:kc").read_text() == current_before
    assert history.read().num_rows == 4 * 10


def test_failed_question_check_blocks_staleness_and_evaluation(bench, tmp_path, sample_dir):
    """A question table that lost a source (fewer rows than the previous build allows) fails the
    blocking check: staleness and evaluation do not run on it."""
    home, _, _, _ = bench
    copy = tmp_path / "home"
    shutil.copytree(home, copy)  # its questions.parquet (4572 rows) is the previous build
    shutil.rmtree(Layout(copy).benchmarks / "staleness")
    samples = tmp_path / "samples"
    shutil.copytree(sample_dir / "pl" / "exam-pdfs", samples / "pl" / "exam-pdfs")
    shutil.copytree(sample_dir / "pl" / "exams", samples / "pl" / "exams")
    (samples / "de" / "gerlayqa").mkdir(parents=True)
    (samples / "de" / "gerlayqa" / "bgb_dev.json").write_text("[]")  # GerLayQA went empty
    settings = _settings(copy, samples)
    runs = run_benchmarks(settings, act_id="pl:kc", instance=dg.DagsterInstance.ephemeral(), log_level="WARNING")
    assert len(runs) == 1 and not runs[0].success
    assert any(c.startswith("benchmark_questions_valid") and "row_count" in c for c in runs[0].failed_checks)
    assert not (Layout(copy).benchmarks / "staleness").exists()  # staleness never ran


def test_evaluation_of_an_unindexed_version_fails_clearly(bench, tmp_path):
    home, _, resources, _ = bench
    from assets.definitions import build_definitions
    from assets.resources import CorpusStorage

    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    shutil.rmtree(copy / "index")
    rows_before = EvalHistory(Layout(copy).benchmarks / "retrieval_eval").read().num_rows
    job = build_definitions({**resources, "storage": CorpusStorage(home=str(copy))}).resolve_job_def("benchmark_nightly_pl_kc")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("pl_kc_changesets", [f"{NEW}_kc"])
    result = job.execute_in_process(partition_key=f"{NEW}_kc", instance=instance, raise_on_error=False,
                                    asset_selection=[dg.AssetKey(["benchmarks", "pl", "kc", "retrieval_eval"])])
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "cannot search the index" in failure.event_specific_data.error.message
    assert EvalHistory(Layout(copy).benchmarks / "retrieval_eval").read().num_rows == rows_before


def test_nightly_schedule_targets_the_serving_version(bench, tmp_path):
    home, _, resources, _ = bench
    schedule = benchmarks.BENCHMARKS["pl:kc"].schedule
    assert schedule.cron_schedule == "0 2 * * *" and schedule.job_name == "benchmark_nightly_pl_kc"
    assert schedule.execution_timezone == "Europe/Warsaw"
    storage = {"storage": resources["storage"]}
    at = dt.datetime(2026, 1, 2, 2, 0)
    # contexts are closed (``with``): an open one keeps its instance's state storage current
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, resources=storage, scheduled_execution_time=at) as ctx:
            assert isinstance(schedule(ctx), dg.SkipReason)  # not a partition of this instance yet
        instance.add_dynamic_partitions("pl_kc_changesets", [f"{OLD}_kc", f"{NEW}_kc"])
        with dg.build_schedule_context(instance=instance, resources=storage, scheduled_execution_time=at) as ctx:
            req = schedule(ctx)
        assert isinstance(req, dg.RunRequest)
        assert (req.partition_key, req.run_key) == (f"{NEW}_kc", f"pl:kc:{NEW}@2026-01-02")
        empty = default_resources(Settings(home=tmp_path / "nothing", encoder="hashing"))["storage"]
        with dg.build_schedule_context(instance=instance, resources={"storage": empty}) as ctx:
            assert "no pl:kc version is served" in schedule(ctx).skip_message


def test_answer_job_answers_and_scores_every_civil_code_question(bench):
    home, instance, _, runs = bench
    a = _md(instance, "pl", "kc", "answers", partition=NEW)
    assert a["answerer"] == "offline" and a["stale_skipped"] == 3
    assert a["questions"] + a["stale_skipped"] + a["invalid_questions"] > 700
    assert 0.5 < a["answer_all"] <= 1 and 0.5 < a["context_all"] <= 1 and a["joint_all"] <= a["answer_all"]
    assert "| 2021–2023 | 1" in a["scores"]  # 1xx questions of the report years
    runs_dir = Layout(home).benchmarks / "answers"
    (parquet,) = runs_dir.glob("*.parquet")
    table = pq.read_table(parquet)
    assert table.num_rows == a["questions"]
    assert set(table["answerer"].to_pylist()) == {"offline"} and not any(table["error"].to_pylist())
    assert all(ids and ids[0].startswith("pl:kc:art:") for ids in table["cited_unit_ids"].to_pylist())
