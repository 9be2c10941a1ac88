"""The Prefect flows against Prefect's temporary test server (``prefect_test_harness``), on the real
sample PDFs and benchmark files, with the model-free hashing encoder.

One module fixture refreshes a home three times — the old version only, then every version, then
again — and the other tests work on copies of that home (never on the shared one), so the slow
parts (parsing, the GX import, indexing) are paid once.
"""

from __future__ import annotations

import json

import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import pyarrow.parquet as pq
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from core.layout import Layout
from pipelines.statutes.store import CorpusStore

OLD, NEW = "2024-12-19", "2025-11-13"
ACT = "pl:kc"
PDF_NAME = "D19640093Lj_{}.pdf"


def _env(home: Path, sample_dir: Path, **extra: str) -> dict[str, str]:
    return {"LEXPIPE_HOME": str(home), "LEXPIPE_SAMPLE_DIR": str(sample_dir), "LEXPIPE_OFFLINE": "true",
            "LEXPIPE_ENCODER": "hashing", "LEXPIPE_PARSE_WORKERS": "2", "LEXPIPE_PREFECT_RETRY_DELAY_S": "0.05",
            "LEXPIPE_ELASTICSEARCH_URL": "", **extra}


def _task_runs(flow_run_id: UUID) -> list:
    """Task runs of one flow run, as the Prefect server recorded them."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.client.schemas.sorting import TaskRunSort

    with get_client(sync_client=True) as client:  # (the 3.8 server refuses a null sort or limit)
        return client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
                                     sort=TaskRunSort.EXPECTED_START_TIME_ASC, limit=200)


def _named(runs: list, task: str) -> list:
    return [r for r in runs if r.name.rsplit("-", 1)[0] == task]


@dataclass
class Refresh:
    state: object
    report: object
    parse_calls: list[str]  # versions whose parse_step actually ran during this flow run
    task_runs: list


def _refresh(monkeypatch: pytest.MonkeyPatch, versions=None, **kw) -> Refresh:
    from lexpipe import prefect_flows
    from pipelines.statutes.pl import build as statute_build

    calls: list[str] = []
    real = statute_build.parse_step

    def counting(layout, **kwargs):
        calls.append(kwargs["version"])
        return real(layout, **kwargs)

    monkeypatch.setattr(statute_build, "parse_step", counting)
    try:
        state = prefect_flows.corpus_refresh(versions=versions, act_id=ACT, return_state=True, **kw)
    finally:
        monkeypatch.setattr(statute_build, "parse_step", real)
    report = state.result(raise_on_failure=False)
    return Refresh(state, report, calls, _task_runs(state.state_details.flow_run_id))


@dataclass
class Refreshed:
    home: Path
    old_only: Path  # a copy of the home taken when only OLD was published
    first: Refresh  # OLD only
    second: Refresh  # every version offered (OLD again, NEW for the first time)
    third: Refresh  # every version, nothing changed


@pytest.fixture(scope="module")
def refreshed(prefect_server, sample_dir: Path, tmp_path_factory) -> Refreshed:
    root = tmp_path_factory.mktemp("prefect_refresh")
    home = root / "home"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in _env(home, sample_dir).items():
            mp.setenv(k, v)
        first = _refresh(mp, [OLD], index_versions=False)  # (the second run indexes both)
        assert first.state.is_completed(), first.report
        old_only = root / "old_only"
        shutil.copytree(home, old_only, symlinks=True)
        second = _refresh(mp)
        assert second.state.is_completed(), second.report
        third = _refresh(mp, index_versions=False)
        assert third.state.is_completed(), third.report
    return Refreshed(home, old_only, first, second, third)


def _copy_home(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


# ----------------------------------------------------------------------------------------------
# the refresh publishes and indexes; re-runs hit the cache


def test_refresh_publishes_and_indexes_every_version(refreshed: Refreshed):
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_embedded_backend
    from pipelines.retrieval.interface import Filters, SearchRequest

    store = CorpusStore(Layout(refreshed.home))
    assert store.published_versions(ACT) == [OLD, NEW]
    assert store.current_version(ACT) == NEW
    report = refreshed.second.report
    assert [v.status for v in report.versions] == ["published", "published"]
    new = report.versions[1]
    assert new.articles == store.read(ACT, NEW, "articles", published_only=True).num_rows > 1200
    assert new.chunks == store.read(ACT, NEW, "chunks", published_only=True).num_rows
    assert new.diff.previous_version == OLD and new.diff.counts["changed"] > 0  # the 2025 amendment
    assert new.indexed == new.chunks
    assert (refreshed.home / "corpus/pl/kc" / NEW / f"diff_from_{OLD}.parquet").exists()
    assert not (refreshed.home / "corpus/pl/kc/.staging" / NEW).exists()  # promoted by rename
    # the index really serves the new version: a search over it finds the consumer definition
    backend = open_embedded_backend(Layout(refreshed.home), encoder=get_encoder("hashing"))
    hits = backend.search(SearchRequest("za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą "
                                        "czynności prawnej", 5, "bm25",
                                        Filters(act_ids=(ACT,), version=NEW)))
    assert "pl:kc:art:22^1" in [h.article_id for h in hits]
    # every step ran as a task on the Prefect server, in order, and completed
    names = [r.name.rsplit("-", 1)[0] for r in refreshed.second.task_runs]
    assert names[:11] == ["discover", "list-versions", "download", "parse", "validate-articles", "chunk",
                          "validate-chunks", "diff", "publish", "index", "notify"]
    # each version's outcome is in its pl_changesets record, as the Dagster assets write it
    for v in (OLD, NEW):
        rec = json.loads((Layout(refreshed.home).changesets("pl") / f"{v}_kc.json").read_text())
        assert rec["state"] == "applied" and [(o["act_id"], o["outcome"]) for o in rec["outcomes"]] == [
            (ACT, "published")]
    # webhook subscribers are notified after each publication (none subscribed here: nothing written)
    assert [(v.notified.version, v.notified.events) for v in report.versions] == [(OLD, 0), (NEW, 0)]
    assert not (refreshed.home / "subscriptions").exists()
    assert all(r.state.is_completed() for r in refreshed.second.task_runs)


def test_second_run_hits_the_cache_for_unchanged_inputs(refreshed: Refreshed):
    # run 1 parsed OLD; run 2 parsed only NEW (OLD's parse came from the cache); run 3 parsed nothing
    assert refreshed.first.parse_calls == [OLD]
    assert refreshed.second.parse_calls == [NEW]
    assert refreshed.third.parse_calls == []
    def parse_states(run: Refresh) -> list[str]:
        return sorted(t.state.name for t in _named(run.task_runs, "parse"))

    assert parse_states(refreshed.second) == ["Cached", "Completed"]
    assert parse_states(refreshed.third) == ["Cached", "Cached"]
    assert sorted(t.state.name for t in _named(refreshed.third.task_runs, "chunk")) == ["Cached", "Cached"]
    assert [v.parse_cached for v in refreshed.third.report.versions] == [True, True]
    # a cached parse still returns the real outcome (counts of the tables on disk)
    store = CorpusStore(Layout(refreshed.home))
    assert [v.articles for v in refreshed.third.report.versions] == [
        store.read(ACT, v, "articles", published_only=True).num_rows for v in (OLD, NEW)]
    # cached results live beside the data, not in PREFECT_HOME
    assert any((refreshed.home / "cache" / "prefect").iterdir())


def test_a_cached_parse_is_not_trusted_when_its_build_is_gone(refreshed: Refreshed, tmp_path: Path,
                                                              sample_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """The cache record says "parsed", but the published folder was deleted: the parse runs again."""
    home = _copy_home(refreshed.home, tmp_path / "home")
    for k, v in _env(home, sample_dir).items():
        monkeypatch.setenv(k, v)
    warm = _refresh(monkeypatch, [OLD], index_versions=False)  # a new home: fills its own cache
    assert warm.state.is_completed() and warm.parse_calls == [OLD]  # (reuses the copied build, no parsing)
    again = _refresh(monkeypatch, [OLD], index_versions=False)
    assert again.parse_calls == [] and again.report.versions[0].parse_cached
    shutil.rmtree(home / "corpus/pl/kc" / OLD)
    rebuilt = _refresh(monkeypatch, [OLD], index_versions=False)
    assert rebuilt.state.is_completed(), rebuilt.report
    assert rebuilt.parse_calls == [OLD] and not rebuilt.report.versions[0].parse_cached
    assert not rebuilt.report.versions[0].parse_reused  # really parsed the PDF again
    assert CorpusStore(Layout(home)).published_versions(ACT) == [OLD, NEW]


# ----------------------------------------------------------------------------------------------
# a broken PDF: the flow fails naming the file, nothing is published, the last good version serves


def _sample_with(tmp_path: Path, sample_dir: Path, new_pdf: bytes) -> Path:
    """A sample folder offering the real OLD PDF and ``new_pdf`` as NEW."""
    isap = tmp_path / "sample" / "pl" / "isap"
    isap.mkdir(parents=True)
    (isap / PDF_NAME.format(OLD)).symlink_to(sample_dir / "pl" / "isap" / PDF_NAME.format(OLD))
    (isap / PDF_NAME.format(NEW)).write_bytes(new_pdf)
    return tmp_path / "sample"


def _first_pages(pdf: Path, n: int) -> bytes:
    """A real PDF cut after ``n`` pages: a download that lost most of the act, still a valid PDF."""
    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(str(pdf))
    out = pdfium.PdfDocument.new()
    out.import_pages(src, list(range(n)))
    buf = io.BytesIO()
    out.save(buf)
    return buf.getvalue()


def test_truncated_pdf_fails_validation_and_the_last_good_version_keeps_serving(
        refreshed: Refreshed, sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from lexpipe.prefect_flows import RefreshFailed

    home = _copy_home(refreshed.old_only, tmp_path / "home")
    sample = _sample_with(tmp_path, sample_dir, _first_pages(sample_dir / "pl/isap" / PDF_NAME.format(NEW), 60))
    for k, v in _env(home, sample).items():
        monkeypatch.setenv(k, v)
    run = _refresh(monkeypatch, [NEW], index_versions=False)
    assert run.state.is_failed()
    exc = run.report
    assert isinstance(exc, RefreshFailed)
    message = str(exc)
    assert f"{ACT} {NEW}" in message and "validate articles failed" in message
    assert PDF_NAME.format(NEW) in message  # names the file it came from
    assert "expect_table_row_count_to_be_between" in message  # the ±2 % article-count bound, with numbers
    assert f"serving {OLD}" in message
    store = CorpusStore(Layout(home))
    assert store.published_versions(ACT) == [OLD] and store.current_version(ACT) == OLD
    assert not (home / "corpus/pl/kc" / NEW).exists()
    assert exc.report.versions[0].status == "failed: validate articles"
    states = {r.name.rsplit("-", 1)[0]: r.state.name for r in run.task_runs}
    assert states["validate-articles"] == "Failed"
    assert "publish" not in states and "chunk" not in states  # stopped before chunking and publishing
    (o,) = json.loads((Layout(home).changesets("pl") / f"{NEW}_kc.json").read_text())["outcomes"]
    assert (o["outcome"], o["reason"]) == ("quarantined", "articles_check") and PDF_NAME.format(NEW) in o["message"]


def test_unreadable_pdf_fails_the_parse_naming_the_file(refreshed: Refreshed, sample_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    from lexpipe.prefect_flows import RefreshFailed

    home = _copy_home(refreshed.old_only, tmp_path / "home")
    garbage = b"%PDF-1.7\n" + b"this is not a PDF body\n" * 200 + b"%%EOF\n"
    for k, v in _env(home, _sample_with(tmp_path, sample_dir, garbage)).items():
        monkeypatch.setenv(k, v)
    run = _refresh(monkeypatch, [NEW], index_versions=False)
    assert run.state.is_failed() and isinstance(run.report, RefreshFailed)
    assert "parse failed" in str(run.report) and PDF_NAME.format(NEW) in str(run.report)
    assert CorpusStore(Layout(home)).current_version(ACT) == OLD
    assert [r.state.name for r in _named(run.task_runs, "parse")] == ["Failed"]
    (o,) = json.loads((Layout(home).changesets("pl") / f"{NEW}_kc.json").read_text())["outcomes"]
    assert (o["outcome"], o["reason"]) == ("quarantined", "parse_error")


# ----------------------------------------------------------------------------------------------
# retries: a transient 503 of the ELI API and a transient index-write error, each once


ELI_PATH = "/eli/acts/DU/1964/93"


def _metadata(version: str) -> dict:
    return {"ELI": "DU/1964/93", "title": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny",
            "changeDate": f"{version}T10:22:31", "textPDF": True, "status": "obowiązujący", "inForce": "IN_FORCE",
            "texts": [{"fileName": "D19640093Lj.pdf", "type": "U"}]}


def test_transient_failures_are_retried(refreshed: Refreshed, sample_dir: Path, tmp_path: Path,
                                        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch):
    """The live ELI source behind a loopback server answers 503 once; the HTTP client's own retries
    are off (LEXPIPE_HTTP_MAX_RETRIES=0), so only the download task's retry can save the run. The
    first index write fails with a connection error; only the index task's retry can save that."""
    from pipelines.retrieval import index_build

    pdf = (sample_dir / "pl/isap" / PDF_NAME.format(NEW)).read_bytes()
    metadata_calls: list[int] = []

    def metadata(request: Request) -> Response:
        metadata_calls.append(1)
        if len(metadata_calls) == 1:
            return Response("busy", status=503)
        return Response(__import__("json").dumps(_metadata(NEW)), content_type="application/json")

    httpserver.expect_request(ELI_PATH).respond_with_handler(metadata)
    httpserver.expect_request(f"{ELI_PATH}/text/U/D19640093Lj.pdf").respond_with_data(
        pdf, content_type="application/pdf")

    real_index_step = index_build.index_step
    index_calls: list[str] = []

    def flaky_index_step(layout, **kw):
        index_calls.append(kw["version"])
        if len(index_calls) == 1:
            raise ConnectionError("search backend unreachable (injected once)")
        return real_index_step(layout, **kw)

    monkeypatch.setattr(index_build, "index_step", flaky_index_step)
    home = _copy_home(refreshed.home, tmp_path / "home")
    for k, v in _env(home, sample_dir, LEXPIPE_OFFLINE="false", LEXPIPE_ELI_BASE_URL=httpserver.url_for("/eli"),
                     LEXPIPE_HTTP_MAX_RETRIES="0", LEXPIPE_HTTP_MIN_INTERVAL_S="0",
                     LEXPIPE_PREFECT_TASK_RETRIES="2").items():
        monkeypatch.setenv(k, v)
    run = _refresh(monkeypatch)  # versions from the live API: only its current one
    assert run.state.is_completed(), run.report
    assert [v.version for v in run.report.versions] == [NEW]
    assert run.report.versions[0].sha256 == __import__("hashlib").sha256(pdf).hexdigest()
    # list-versions asked first (503 → retried → 200), then download's metadata + PDF: all via retries
    by_task = {name: _named(run.task_runs, name) for name in ("list-versions", "download", "index")}
    assert [r.run_count for r in by_task["list-versions"]] == [2]
    assert [r.run_count for r in by_task["download"]] == [1]
    assert [r.run_count for r in by_task["index"]] == [2] and index_calls == [NEW, NEW]
    assert len(metadata_calls) == 3  # 503, then list-versions' 200, then download's 200
    assert CorpusStore(Layout(home)).current_version(ACT) == NEW


def test_permanent_download_errors_are_not_retried(refreshed: Refreshed, sample_dir: Path, tmp_path: Path,
                                                   httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch):
    """404 is not transient: one attempt, a clear failure, nothing changes."""
    from lexpipe.prefect_flows import RefreshFailed

    httpserver.expect_request(ELI_PATH).respond_with_data("no such act", status=404)
    home = _copy_home(refreshed.old_only, tmp_path / "home")
    for k, v in _env(home, sample_dir, LEXPIPE_OFFLINE="false", LEXPIPE_ELI_BASE_URL=httpserver.url_for("/eli"),
                     LEXPIPE_HTTP_MAX_RETRIES="0", LEXPIPE_HTTP_MIN_INTERVAL_S="0").items():
        monkeypatch.setenv(k, v)
    run = _refresh(monkeypatch, [NEW], index_versions=False)
    assert run.state.is_failed() and isinstance(run.report, RefreshFailed)
    assert "download failed" in str(run.report) and "404" in str(run.report)
    assert [r.run_count for r in _named(run.task_runs, "download")] == [1]
    assert CorpusStore(Layout(home)).current_version(ACT) == OLD


# ----------------------------------------------------------------------------------------------
# benchmark and answers


def test_benchmark_flow_writes_staleness_and_evaluation(refreshed: Refreshed, sample_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    from lexpipe import prefect_flows
    from pipelines.benchmarks.nightly import questions_path, staleness_path
    from pipelines.benchmarks.retrieval_eval import EvalHistory

    home = _copy_home(refreshed.home, tmp_path / "home")
    for k, v in _env(home, sample_dir).items():
        monkeypatch.setenv(k, v)
    layout = Layout(home)
    state = prefect_flows.benchmark(max_questions=12, act_id=ACT, return_state=True)
    assert state.is_completed(), state
    report = state.result()
    assert report.version == NEW
    assert report.questions.rows == pq.read_metadata(questions_path(layout)).num_rows > 1000
    assert not report.questions_cached
    flags = pq.read_table(staleness_path(layout, ACT, NEW)).to_pylist()
    assert report.staleness.previous_version == OLD
    assert report.staleness.flagged_refs == len(flags) and report.staleness.stale_questions >= 1
    assert {f["reason"] for f in flags} >= {"repealed"}  # exam questions citing long-repealed articles
    rows = EvalHistory(layout.benchmarks / "retrieval_eval").runs(report.evaluation.run_id).to_pylist()
    key = lambda r: (r["benchmark"], r["retriever"], r["query_style"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(report.evaluation.rows, key=key)  # written = returned
    assert {(r["retriever"], r["query_style"]) for r in rows} == {
        (ret, s) for ret in ("bm25", "dense", "hybrid", "gaius") for s in ("question", "question+options")}
    assert sum(r["n"] for r in rows if r["retriever"] == "bm25" and r["query_style"] == "question") == 12
    assert all(0 <= r["mrr"] <= 1 for r in rows if r["n"])
    assert Path(report.evaluation.plot_path).read_bytes()[:4] == b"\x89PNG"
    assert Path(report.evaluation.plot_path).name == "history_pl_kc.png"  # every act's plot names its act
    assert report.regression_passed is True and "first run" in report.regression
    # a second run: the question table comes from the cache, the evaluation is compared with run 1
    again = prefect_flows.benchmark(max_questions=12, act_id=ACT)
    assert again.questions_cached and again.questions == report.questions
    assert again.regression_passed is True and "compared with the previous run" in again.regression

    answered = prefect_flows.answers(max_questions=6, act_id=ACT)
    table = pq.read_table(answered.path).to_pylist()
    assert answered.answerer == "offline" and answered.questions == len(table) == 6
    assert answered.run_id.startswith(f"pl-kc_{NEW}_offline_")  # every act's run ids name the act
    assert answered.stale_skipped == report.staleness.stale_questions  # stale keys never score the answerer
    assert all(r["corpus_version"] == NEW and r["option"] in "ABCD" for r in table)
    assert answered.scores["all"]["n"] == 6
    assert (Path(answered.path).with_suffix(".json")).exists()


def test_benchmark_flow_refuses_an_unpublished_version(refreshed: Refreshed, sample_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    from lexpipe import prefect_flows

    for k, v in _env(refreshed.home, sample_dir).items():
        monkeypatch.setenv(k, v)
    state = prefect_flows.benchmark(version="2030-01-01", act_id=ACT, return_state=True)
    assert state.is_failed()
    with pytest.raises(RuntimeError, match="2030-01-01 is not published"):
        state.result()


# ----------------------------------------------------------------------------------------------
# the command line


def test_cli_runs_the_flows_and_prints_a_table(refreshed: Refreshed, sample_dir: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    from lexpipe.cli import main

    home = _copy_home(refreshed.home, tmp_path / "home")
    for k, v in _env(tmp_path / "unused", sample_dir).items():
        monkeypatch.setenv(k, v)
    assert main(["prefect", "refresh", "--act", ACT, "--home", str(home), "--versions", NEW, "--no-index"]) == 0
    out = capsys.readouterr().out
    assert "pl:kc corpus refresh (Prefect)" in out and NEW in out and "published" in out
    assert f"serving: pl:kc {NEW}" in out
    assert not (tmp_path / "unused").exists()  # --home wins over LEXPIPE_HOME
    assert main(["prefect", "benchmark", "--act", ACT, "--home", str(home), "--versions", "2030-01-01"]) == 1
    assert "2030-01-01 is not published" in capsys.readouterr().out
