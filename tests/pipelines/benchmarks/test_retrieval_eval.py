"""Retrieval evaluation and its history (pipelines/benchmarks/retrieval_eval.py): question
selection, metrics over a fake search, idempotent appends, the regression comparison and the plot."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipelines.benchmarks.benchmark_table import questions_to_table
from pipelines.benchmarks.legal_basis import UnitRef, parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option
from pipelines.benchmarks.retrieval_eval import (
    METRICS,
    EvalContext,
    EvalHistory,
    EvalQuestion,
    QuestionSet,
    changes_markdown,
    compare_to_previous,
    evaluate_retrievers,
    metrics_markdown,
    plot_history,
    prime_query_cache,
    regressions,
    select_questions,
)
from schemas.arrow import RETRIEVAL_EVAL, from_rows

V = "2025-11-13"


def exam_q(n: int, basis: str, year: int = 2030) -> BenchmarkQuestion:
    return BenchmarkQuestion(benchmark="pl_exams", source=f"pl/exams/{year}/notarialny.jsonl", source_format="jsonl",
                             question_id=str(n), language="pl", question=f"Pytanie {n}?", legal_basis=basis,
                             gold_refs=parse_legal_basis(basis), options=[Option("A", "tak"), Option("B", f"nie {n}")],
                             gold_option="A", year=year, exam="notarialny")


def lay_q(n: int) -> BenchmarkQuestion:
    return BenchmarkQuestion(benchmark="gerlayqa", source="de/gerlayqa/bgb_dev.json", source_format="json",
                             question_id=str(n), language="de", question=f"Frage {n}?", legal_basis="§ 1",
                             gold_refs=[UnitRef("de:bgb", "de:bgb:par:1", "de:bgb:par:1", False, "§ 1")])


@pytest.fixture
def table() -> pa.Table:
    return questions_to_table([
        exam_q(1, "art. 5 § 1 k.c."), exam_q(2, "art. 6 i art. 7 k.c."), exam_q(3, "art. 1 k.p.c."),
        exam_q(4, "art. 8 § 1 i 2 k.c.", year=2031), lay_q(0)])


def qid(n: int, year: int = 2030) -> str:
    return f"pl_exams:pl/exams/{year}/notarialny.jsonl#{n}"


# --------------------------------------------------------------------------- questions


def test_select_questions_with_in_corpus_gold(table: pa.Table):
    qs, skipped = select_questions(table, act_id="pl:kc")
    assert [q.id for q in qs] == [qid(1), qid(2), qid(4, 2031)] and skipped == {}
    assert qs[1].gold_articles == ("pl:kc:art:6", "pl:kc:art:7")
    assert qs[2].gold_articles == ("pl:kc:art:8",)  # two paragraphs, one article
    assert qs[0].text("question") == "Pytanie 1?"
    assert qs[0].text("question+options") == "Pytanie 1? A) tak B) nie 1"
    with pytest.raises(ValueError, match="unknown query style"):
        qs[0].text("options")


def test_stale_questions_are_skipped_and_counted(table: pa.Table):
    qs, skipped = select_questions(table, act_id="pl:kc", stale={qid(2), "some:other#1"})
    assert [q.id for q in qs] == [qid(1), qid(4, 2031)] and skipped == {"pl_exams": 1}


def test_question_set_filters_and_stable_sample(table: pa.Table):
    qs, _ = select_questions(table, act_id="pl:kc", question_set=QuestionSet(years=(2031,)))
    assert [q.id for q in qs] == [qid(4, 2031)]
    assert select_questions(table, act_id="pl:kc", question_set=QuestionSet(benchmarks=("gerlayqa",)))[0] == []
    s1, _ = select_questions(table, act_id="pl:kc", question_set=QuestionSet(max_questions=2))
    s2, _ = select_questions(table, act_id="pl:kc", question_set=QuestionSet(max_questions=2), stale={qid(1)})
    assert len(s1) == 2 and [q.id for q in s2] == [q.id for q in s1 if q.id != qid(1)]  # same sample, minus stale
    assert QuestionSet().label == "in_corpus_gold"
    assert QuestionSet(("pl_exams",), (2031, 2030), 50).label == "in_corpus_gold;benchmarks=pl_exams;years=2030,2031;max=50"


# --------------------------------------------------------------------------- metrics


def ctx(run_id: str = "run-1", ts: str = "2026-01-01T02:00:00", question_set: str = "in_corpus_gold") -> EvalContext:
    return EvalContext(run_id=run_id, run_ts=dt.datetime.fromisoformat(ts).replace(tzinfo=dt.timezone.utc),
                       act_id="pl:kc", version=V, encoder="hashing-384", backend="Fake", question_set=question_set)


QS = [EvalQuestion("q1", "pl_exams", "kto", (("A", "tak"),), ("pl:kc:art:1",)),
      EvalQuestion("q2", "pl_exams", "co", (), ("pl:kc:art:2", "pl:kc:art:3"))]
RANKS = {
    ("kto", "bm25"): ["pl:kc:art:1", "pl:kc:art:9"],
    ("kto A) tak", "bm25"): ["pl:kc:art:9", "pl:kc:art:1"],
    ("co", "bm25"): ["pl:kc:art:9"] * 5 + ["pl:kc:art:3"],
    ("kto", "dense"): [], ("kto A) tak", "dense"): [], ("co", "dense"): ["pl:kc:art:2", "pl:kc:art:3"],
}


def fake_search(query: str, retriever: str, k: int) -> list[str]:
    return RANKS[(query, retriever)][:k]


def test_metrics_per_retriever_and_style():
    messages: list[str] = []
    rows = evaluate_retrievers(QS, fake_search, ctx(), retrievers=["bm25", "dense"], skipped_stale={"pl_exams": 3},
                               progress=messages.append).to_pylist()
    assert [(r["retriever"], r["query_style"], r["n"], r["skipped_stale"]) for r in rows] == [
        ("bm25", "question", 2, 3), ("bm25", "question+options", 2, 3),
        ("dense", "question", 2, 3), ("dense", "question+options", 2, 3)]
    bm25 = rows[0]
    assert bm25["recall_at_1"] == pytest.approx(0.5)  # q1 at 1; q2 nothing in the top 1
    assert bm25["recall_at_10"] == pytest.approx((1 + 0.5) / 2)  # q2: art. 3 of its two gold at rank 6
    assert bm25["mrr"] == pytest.approx((1 + 1 / 6) / 2)
    assert rows[1]["mrr"] == pytest.approx((0.5 + 1 / 6) / 2)
    assert rows[2]["recall_at_5"] == pytest.approx(0.5) and rows[2]["ndcg_at_5"] == pytest.approx(0.5)
    assert all(r["run_id"] == "run-1" and r["version"] == dt.date(2025, 11, 13) for r in rows)
    assert messages[-1] == "dense / question+options / pl_exams: 2/2 questions (100% of the evaluation)"
    assert "| pl_exams | bm25 | question | 2 | 3 | 0.500 |" in metrics_markdown(
        evaluate_retrievers(QS, fake_search, ctx(), retrievers=["bm25"], styles=["question"], skipped_stale={"pl_exams": 3}))


def test_a_benchmark_with_every_question_stale_still_reports():
    rows = evaluate_retrievers([], fake_search, ctx(), retrievers=["bm25"], styles=["question"],
                               skipped_stale={"pl_exams": 4}).to_pylist()
    assert [(r["n"], r["skipped_stale"], r["mrr"]) for r in rows] == [(0, 4, None)]


# --------------------------------------------------------------------------- history


def run_rows(run_id: str, ts: str, mrr: float, *, question_set: str = "in_corpus_gold", version: str = V,
             retrievers=("bm25", "dense"), act_id: str = "pl:kc", scope: str | None = "act") -> pa.Table:
    rows = []
    for r in retrievers:
        for style in ("question", "question+options"):
            rows.append({"run_id": run_id, "run_ts": dt.datetime.fromisoformat(ts).replace(tzinfo=dt.timezone.utc),
                         "act_id": act_id, "version": dt.date.fromisoformat(version), "benchmark": "pl_exams",
                         "question_set": question_set, "retriever": r, "query_style": style, "n": 100,
                         "skipped_stale": 3, **{m: mrr for m in METRICS}, "k": 50, "encoder": "hashing-384",
                         "backend": "Fake", "seconds": 1.0, "scope": scope})
    return from_rows(rows, RETRIEVAL_EVAL)


def test_acts_and_scopes_compare_only_with_themselves(tmp_path: Path):
    """Another act's run, or the across-acts scope of the same run, is never "the previous run"."""
    h = EvalHistory(tmp_path)
    h.append(run_rows("kc-1", "2026-01-01T02:00:00", 0.95))
    h.append(run_rows("kp-1", "2026-01-01T03:00:00", 0.40, act_id="pl:kp", version="2025-12-10"))
    first_kp = h.append(run_rows("kp-2", "2026-01-02T03:00:00", 0.41, act_id="pl:kp", version="2025-12-10"))
    assert first_kp.name == "pl_kp__2025-12-10__kp-2.parquet"
    h.append(pa.concat_tables([run_rows("kc-2", "2026-01-02T02:00:00", 0.94),
                               run_rows("kc-2", "2026-01-02T02:00:00", 0.50, scope="jurisdiction")]))
    kc = compare_to_previous(h.read(), "kc-2", act_id="pl:kc")
    assert {(c.scope, c.previous_run_id) for c in kc} == {("act", "kc-1"), ("jurisdiction", None)}
    assert regressions(kc, 0.02) == []  # 0.95 → 0.94 within the act scope; the new scope has no history
    kp = compare_to_previous(h.read(), "kp-2", act_id="pl:kp")
    assert {c.previous_run_id for c in kp} == {"kp-1"} and regressions(kp, 0.02) == []


def test_history_written_before_the_scope_column_reads_as_act_scope(tmp_path: Path):
    import pyarrow.parquet as pq

    old = run_rows("old", "2026-01-01T02:00:00", 0.9)
    old = old.drop_columns(["scope"])  # a file of a run before the column existed
    (tmp_path / "history").mkdir()
    pq.write_table(old, tmp_path / "history" / f"{V}__old.parquet")
    h = EvalHistory(tmp_path)
    h.append(run_rows("new", "2026-01-02T02:00:00", 0.9))
    assert set(h.read()["scope"].to_pylist()) == {"act"}
    assert {c.previous_run_id for c in compare_to_previous(h.read(), "new")} == {"old"}


def test_backend_search_scopes():
    from pipelines.benchmarks.retrieval_eval import backend_search
    from pipelines.retrieval.interface import Hit

    seen = []

    class Backend:
        def search(self, request):
            seen.append(request.filters)
            return [Hit(chunk_id="c", article_id="pl:kp:art:1", act_id="pl:kp", version=V, score=1.0, rank=1)]

    assert backend_search(Backend(), act_id="pl:kp", version=V)("q", "hybrid", 5) == ["pl:kp:art:1"]
    assert backend_search(Backend(), act_id="pl:kp", version=V, scope="jurisdiction")("q", "hybrid", 5)
    assert [(f.act_ids, f.version, f.jurisdictions) for f in seen] == [(("pl:kp",), V, ()), ((), None, ("pl",))]
    with pytest.raises(ValueError, match="unknown evaluation scope 'planet'"):
        backend_search(Backend(), act_id="pl:kp", version=V, scope="planet")


def test_append_is_idempotent_per_run_id(tmp_path: Path):
    h = EvalHistory(tmp_path / "retrieval_eval")
    assert h.read().num_rows == 0 and h.read().schema.equals(RETRIEVAL_EVAL)
    first = h.append(run_rows("run-1", "2026-01-01T02:00:00", 0.8))
    h.append(run_rows("run-1", "2026-01-01T02:00:00", 0.8))  # a retried run: replaced, not duplicated
    assert h.read().num_rows == 4
    h.append(run_rows("run-2", "2026-01-02T02:00:00", 0.9))
    assert h.read().num_rows == 8 and set(h.read()["run_id"].to_pylist()) == {"run-1", "run-2"}
    h.append(run_rows("run-2", "2026-01-02T02:00:00", 0.7))  # re-run of run-2 with other numbers wins
    assert sorted(set(h.runs("run-2")["mrr"].to_pylist())) == [0.7] and h.read().num_rows == 8
    h.append(run_rows("run-2", "2026-01-02T02:00:00", 0.7, version="2024-12-19"))  # same run, other version
    assert h.read().num_rows == 12
    assert first.name == f"pl_kc__{V}__run-1.parquet" and first.parent == tmp_path / "retrieval_eval" / "history"
    assert list((tmp_path / "retrieval_eval" / ".staging").iterdir()) == []  # staged files were promoted
    assert h.read()["run_ts"].to_pylist() == sorted(h.read()["run_ts"].to_pylist())


def test_files_named_before_the_act_was_in_every_name_are_still_found(tmp_path: Path):
    """A home evaluated before issue 24 holds the Civil Code's rows as ``<version>__<run>.parquet``
    and its plot as ``history.png``: they are read, found by (run, act, version) when the act-named
    file is absent, and replaced — not doubled — when the same run is written again."""
    import pyarrow.parquet as pq

    h = EvalHistory(tmp_path)
    h.history_dir.mkdir(parents=True)
    legacy = h.history_dir / f"{V}__old.parquet"
    pq.write_table(run_rows("old", "2026-01-01T02:00:00", 0.9), legacy)
    (tmp_path / "history.png").write_bytes(b"\x89PNG legacy")
    assert h.read().num_rows == 4 and h.existing_file_for("old", V, "pl:kc") == legacy
    assert h.existing_file_for("old", V, "pl:kp") is None  # only the Civil Code had unnamed files
    assert h.existing_plot_for("pl:kc") == tmp_path / "history.png" and h.existing_plot_for("pl:kp") is None

    again = h.append(run_rows("old", "2026-01-01T02:00:00", 0.8))  # the same run re-evaluated
    assert again.name == f"pl_kc__{V}__old.parquet" and not legacy.exists()
    assert h.existing_file_for("old", V, "pl:kc") == again and set(h.read()["mrr"].to_pylist()) == {0.8}
    assert h.write_plot("pl:kc", b"\x89PNG new") == tmp_path / "history_pl_kc.png"
    assert not (tmp_path / "history.png").exists() and h.existing_plot_for("pl:kc").read_bytes() == b"\x89PNG new"
    assert h.write_plot("pl:kp", b"\x89PNG kp").name == "history_pl_kp.png"
    with pytest.raises(TypeError, match="act_id"):
        h.file_for("old", V)


def test_append_refuses_mixed_runs(tmp_path: Path):
    mixed = pa.concat_tables([run_rows("a", "2026-01-01T00:00:00", 0.5), run_rows("b", "2026-01-01T00:00:00", 0.5)])
    with pytest.raises(ValueError, match="one run, act and version at a time"):
        EvalHistory(tmp_path).append(mixed)


@pytest.mark.parametrize("drop, fires", [(0.03, True), (0.021, True), (0.02, False), (0.01, False), (-0.05, False)])
def test_regression_fires_only_beyond_the_margin(tmp_path: Path, drop: float, fires: bool):
    h = EvalHistory(tmp_path)
    h.append(run_rows("run-1", "2026-01-01T02:00:00", 0.80))
    h.append(run_rows("run-2", "2026-01-02T02:00:00", round(0.80 - drop, 6), retrievers=("bm25",)))
    changes = compare_to_previous(h.read(), "run-2")
    assert len(changes) == 2 * len(METRICS) and {c.previous_run_id for c in changes} == {"run-1"}
    bad = regressions(changes, 0.02)
    assert bool(bad) is fires
    if fires:
        assert {(c.retriever, c.query_style) for c in bad} == {("bm25", "question"), ("bm25", "question+options")}
        assert "**regression**" in changes_markdown(changes, 0.02)


def test_previous_run_is_the_newest_earlier_one_of_the_same_key(tmp_path: Path):
    h = EvalHistory(tmp_path)
    h.append(run_rows("old", "2026-01-01T02:00:00", 0.95))
    h.append(run_rows("mid", "2026-01-02T02:00:00", 0.80))
    h.append(run_rows("other-set", "2026-01-02T12:00:00", 0.99, question_set="in_corpus_gold;max=50"))
    h.append(run_rows("now", "2026-01-03T02:00:00", 0.79))
    h.append(run_rows("later", "2026-01-04T02:00:00", 0.10))
    changes = compare_to_previous(h.read(), "now")
    assert {c.previous_run_id for c in changes} == {"mid"}  # not the other question set, not a later run
    assert regressions(changes, 0.02) == []
    first = compare_to_previous(h.read(), "old")
    assert {c.previous for c in first} == {None} and regressions(first, 0.02) == []


def test_plot_is_a_png(tmp_path: Path):
    h = EvalHistory(tmp_path)
    h.append(run_rows("run-1", "2026-01-01T02:00:00", 0.8))
    h.append(run_rows("run-2", "2026-01-02T02:00:00", 0.85))
    png = plot_history(h.read())
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert plot_history(EvalHistory(tmp_path / "empty").read())[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- query encoding


class CountingEncoder:
    id, dim = "counting-4", 4

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode_queries(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), 1, 0, 0] for t in texts], np.float32)

    encode_passages = encode_queries


def test_priming_encodes_each_query_once_in_batches():
    from pipelines.retrieval.encoders import QueryCachingEncoder

    inner = CountingEncoder()
    enc = QueryCachingEncoder(inner)
    seen = []
    assert prime_query_cache(enc, ["a", "bb", "a", "ccc"], batch_size=2,
                             progress=lambda d, n: seen.append((d, n))) == 3
    assert inner.calls == [["a", "bb"], ["ccc"]] and seen == [(2, 3), (3, 3)]
    v = enc.encode_queries(["ccc"])  # what a dense search asks for, one query at a time
    assert v[0][0] == 3 and len(inner.calls) == 2  # a cache hit
