import pyarrow.parquet as pq
import pytest

from pipelines.answers.answer_job import questions_from_benchmark, results_table, score_rows, write_run
from pipelines.answers.types import AnswerResult
from schemas.arrow import BENCHMARK_QUESTIONS


def _row(qid, year, gold_refs, options=True, gold="A"):
    return {"id": qid, "benchmark": "pl_exams", "source": "pl/exams/x.jsonl", "source_format": "jsonl",
            "year": year, "exam": "notarialny", "exam_date": None, "question_id": qid.split("#")[-1],
            "language": "pl", "question": f"Pytanie {qid}:",
            "options": [{"letter": "A", "text": "tak"}, {"letter": "B", "text": "nie"}] if options else None,
            "gold_option": gold if options else None, "legal_basis": "art. 1 k.c.",
            "gold_refs": gold_refs, "text_hash": qid, "also_in": []}


def _ref(act, art, in_corpus=True):
    return {"act_id": act, "unit_id": art, "article_id": art, "in_corpus": in_corpus, "raw": art}


def _table():
    import pyarrow as pa

    rows = [_row("q#1", 2021, [_ref("pl:kc", "pl:kc:art:1")]),
            _row("q#2", 2022, [_ref("pl:kpc", "pl:kpc:art:5", False)]),          # other act: not selected
            _row("q#3", 2022, [_ref("pl:kc", "pl:kc:art:2")], options=False),    # no options: not selected
            _row("q#4", 2015, [_ref("pl:kc", "pl:kc:art:3")]),
            _row("q#5", 2023, [_ref("pl:kc", "pl:kc:art:4")]),                   # stale
            _row("q#6", 2023, [_ref("pl:kc", "pl:kc:art:5")], gold="D")]         # gold letter not an option
    cols = {f.name: [r.get(f.name) for r in rows] for f in BENCHMARK_QUESTIONS}
    return pa.table(cols, schema=BENCHMARK_QUESTIONS)


def test_selects_civil_code_multiple_choice_questions_and_counts_what_it_skips():
    selected, counts = questions_from_benchmark(_table(), act_id="pl:kc", stale_ids={"q#5"})
    assert [s.question.question_id for s in selected] == ["q#1", "q#4"]
    assert counts == {"candidates": 4, "stale_skipped": 1, "invalid": 1, "selected": 2}
    assert selected[0].question.gold_article_ids == ("pl:kc:art:1",) and selected[0].year == 2021
    only_2021, _ = questions_from_benchmark(_table(), act_id="pl:kc", years=[2021])
    assert [s.question.question_id for s in only_2021] == ["q#1"]


def test_the_act_is_named_by_the_caller():
    """No act is assumed: the questions of another act are its own (q#2 cites k.p.c. outside the
    corpus, so none), and a call naming no act is refused."""
    assert questions_from_benchmark(_table(), act_id="pl:kpc")[0] == []
    with pytest.raises(TypeError, match="act_id"):
        questions_from_benchmark(_table())


def test_results_scores_and_atomic_write(tmp_path):
    selected, _ = questions_from_benchmark(_table(), act_id="pl:kc")
    results = [AnswerResult("q#1", "A", "bo art. 1", ("pl:kc:art:1",)),
               AnswerResult("q#4", "B", "", ("pl:kc:art:9",)),
               None]  # q#5: no result → failed
    table = results_table(selected, results, run_id="r1", answerer="offline", corpus_version="2025-11-13")
    rows = table.to_pylist()
    assert [(r["question_id"], r["answer_correct"], r["context_correct"]) for r in rows] == [
        ("q#1", True, True), ("q#4", False, False), ("q#5", False, False)]
    assert rows[2]["error"] == "no result"
    scores = score_rows(selected, results, {"all": lambda s: True, "2021–2023": lambda s: s.year >= 2021})
    assert scores["all"]["n"] == 3 and scores["all"]["answer"] == round(1 / 3, 4)
    assert scores["2021–2023"] == {"n": 2, "answer": 0.5, "context": 0.5, "joint": 0.5, "failed": 1}
    path = write_run(tmp_path, table, scores, run_id="r1")
    assert pq.read_table(path).num_rows == 3 and (tmp_path / "r1.json").exists()
    assert not list(tmp_path.glob(".*tmp"))
