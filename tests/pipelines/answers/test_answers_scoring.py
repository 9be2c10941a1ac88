"""Answer/context/joint scores (gAIus paper) and keyword success/progress rates (LegalAgentBench)."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from pipelines.answers.scoring import (answer_correct, article_id_of, context_correct, keyword_rate,
                                       keyword_scores, load_legalagentbench, pair_results,
                                       progress_rate, score_answers, success_rate)
from pipelines.answers.types import AnswerQuestion, AnswerResult

REPO = Path(__file__).resolve().parents[3]

PROKURA = AnswerQuestion("q1", "Zgodnie z Kodeksem cywilnym, prokura:",
                         {"A": "może być zawsze ograniczona ze skutkiem wobec osób trzecich,",
                          "B": "nigdy nie może być ograniczona ze skutkiem wobec osób trzecich,",
                          "C": "nie może być ograniczona ze skutkiem wobec osób trzecich, chyba że "
                               "przepis szczególny stanowi inaczej."},
                         "C", ("pl:kc:art:109^1",))


def res(option: str | None, cited: tuple[str, ...] = (), *, qid: str = "q1", error: str | None = None,
        invalid: tuple[str, ...] = ()) -> AnswerResult:
    return AnswerResult(qid, option, "", cited, error, 0.1, invalid_citations=invalid)


# --- gAIus ------------------------------------------------------------------------------------

def test_article_id_of_units_and_other_ids():
    assert article_id_of("pl:kc:art:109^1:par:2:pt:3:lit:a") == "pl:kc:art:109^1"
    assert article_id_of("pl:kc:art:5") == "pl:kc:art:5"
    assert article_id_of("pl:kc:book:PIERWSZA") == "pl:kc:book:PIERWSZA"


def test_answer_is_case_insensitive_and_failures_are_wrong():
    assert answer_correct(PROKURA, res("c"))
    assert answer_correct(PROKURA, res("C"))
    assert not answer_correct(PROKURA, res("B"))
    assert not answer_correct(PROKURA, res(None))
    assert not answer_correct(PROKURA, res("C", error="llm: HTTP 503"))  # failed: never correct
    assert not answer_correct(PROKURA, None)


@pytest.mark.parametrize("cited, invalid, ok", [
    (("pl:kc:art:109^1",), (), True),
    (("pl:kc:art:109^1:par:2",), (), True),  # paragraph of the gold article
    (("pl:kc:art:109^1:par:2", "pl:kc:art:109^1:par:1"), (), True),  # same article twice: no extra
    (("pl:kc:art:109^1", "pl:kc:art:95", "pl:kc:art:96"), (), True),  # two extras tolerated
    (("pl:kc:art:109^1", "pl:kc:art:95", "pl:kc:art:96", "pl:kc:art:97"), (), False),  # three: not
    (("pl:kc:art:109^1", "pl:kc:art:95"), ("pl:kc:art:1500", "art. 5 k.p.c."), False),  # invalid = extras
    (("pl:kc:art:109^1",), ("pl:kc:art:1500",), True),
    (("pl:kc:art:109^3",), (), False),  # a near miss is a miss
    ((), (), False),
])
def test_context_rule(cited, invalid, ok):
    assert context_correct(PROKURA.gold_article_ids, cited, invalid) is ok


def test_context_rule_options():
    gold = ("pl:kc:art:5", "pl:kc:art:6")
    assert context_correct(gold, ["pl:kc:art:5"])
    assert not context_correct(gold, ["pl:kc:art:5"], require_all_gold=True)
    assert context_correct(gold, ["pl:kc:art:5:par:1", "pl:kc:art:6"], require_all_gold=True)
    assert not context_correct(gold, ["pl:kc:art:5", "pl:kc:art:7"], max_extra_citations=0)
    assert not context_correct((), ["pl:kc:art:5"])  # no gold: nothing can be cited correctly


def test_score_answers_counts_rates_and_failures():
    qs = [AnswerQuestion(f"q{i}", "?", {"a": "x", "b": "y", "c": "z"}, "a", ("pl:kc:art:1",))
          for i in range(5)]
    results = [
        res("a", ("pl:kc:art:1",), qid="q0"),  # joint
        res("a", ("pl:kc:art:2",), qid="q1"),  # answer only
        res("b", ("pl:kc:art:1:par:1",), qid="q2"),  # context only
        res(None, (), qid="q3"),  # malformed output: wrong, not failed
        res("a", ("pl:kc:art:1",), qid="q4", error="timeout: question not answered within 5s"),
    ]
    s = score_answers(zip(qs, results))
    assert (s.n, s.answer_correct, s.context_correct, s.joint_correct, s.failed) == (5, 2, 2, 1, 1)
    assert s.answer_rate == pytest.approx(0.4) and s.joint_rate == pytest.approx(0.2)
    assert s.failures == {"q4": "timeout: question not answered within 5s"}
    assert s.per_question[1].extra_citations == 1
    assert s.summary()["context_rate"] == pytest.approx(0.4)


def test_score_answers_rejects_misjoined_pairs_and_pair_results_joins_by_id():
    q0 = AnswerQuestion("q0", "?", {"a": "x", "b": "y"}, "a")
    q1 = AnswerQuestion("q1", "?", {"a": "x", "b": "y"}, "b")
    with pytest.raises(ValueError, match="paired with"):
        score_answers([(q0, res("a", qid="q1"))])
    pairs = pair_results([q0, q1], [res("b", qid="q1")])
    assert pairs[0] == (q0, None) and pairs[1][1].option == "b"
    s = score_answers(pairs)
    assert (s.answer_correct, s.failed, s.failures) == (1, 1, {"q0": "no result"})
    with pytest.raises(ValueError, match="two results"):
        pair_results([q0], [res("a", qid="q0"), res("a", qid="q0")])
    with pytest.raises(ValueError, match="unknown"):
        pair_results([q0], [res("a", qid="zz")])


def test_question_validation_and_result_roundtrip():
    with pytest.raises(ValueError, match="gold option"):
        AnswerQuestion("x", "?", {"A": "1", "B": "2"}, "D")
    assert PROKURA.option_letter("c") == "C" and PROKURA.option_letter("d") is None
    r = AnswerResult("q1", "C", "bo tak", ("pl:kc:art:109^1:par:2",), None, 1.5, queries=("prokura",))
    assert AnswerResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_question_from_exam_question():
    from pipelines.retrieval.evaluation import ExamQuestion
    exam = ExamQuestion("2023/notarialny#1", "Pytanie?", {"A": "x", "B": "y", "C": "z"}, "A",
                        "art. 7 k.c.", ("pl:kc:art:7",))
    q = AnswerQuestion.from_exam(exam)
    assert (q.question_id, q.gold_option, q.gold_article_ids) == ("2023/notarialny#1", "A", ("pl:kc:art:7",))


# --- LegalAgentBench --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab_tasks():
    env = os.environ.get("LEXPIPE_SAMPLE_DIR")
    path = (Path(env) if env else REPO.parent / "shared" / "data") / "legalagentbench" / "dataset.json"
    if not path.is_file():
        pytest.skip(f"LegalAgentBench dataset not found at {path} (set LEXPIPE_SAMPLE_DIR)")
    return {t.id: t for t in load_legalagentbench(path)}


def test_keyword_rate_definition():
    assert keyword_rate(["a", "b", "c", "d"], "xx a yy c") == 0.5
    assert keyword_rate(["a", "a", "b"], "a") == 0.5  # a set: the duplicate counts once
    assert keyword_rate(["é"], "cafe\u0301") == 1.0  # NFC on both sides
    assert keyword_rate(["a"], "") == 0.0
    with pytest.raises(ValueError):
        keyword_rate([], "anything")


def test_legalagentbench_structure(lab_tasks):
    assert len(lab_tasks) == 300
    t = lab_tasks[1]
    assert t.key == ("688106", "金向华", "陈莹") and t.key_middle == () and t.way == "get_company_info"
    assert all(task.key for task in lab_tasks.values())


def test_success_and_progress_rate_on_tasks(lab_tasks):
    t1 = lab_tasks[1]
    assert success_rate(t1, t1.answer) == 1.0
    assert success_rate(t1, "股票代码是688106，董秘是陈莹。") == pytest.approx(2 / 3)
    assert progress_rate(t1, t1.answer) == 1.0  # no key_middle: progress = success

    t67 = lab_tasks[67]  # key ['127天'], key_middle: two dates not in the reference answer
    assert success_rate(t67, t67.answer) == 1.0
    assert progress_rate(t67, t67.answer) == pytest.approx(1 / 3)
    assert progress_rate(t67, "2019年08月07日立案，2019年12月12日终本，相差127天") == 1.0

    t114 = lab_tasks[114]  # '1家' is not literally in the reference answer ("1个")
    assert success_rate(t114, t114.answer) == pytest.approx(1 / 2)

    t64 = lab_tasks[64]  # key lists the same string twice
    assert success_rate(t64, "303945.00元") == 1.0

    t275 = lab_tasks[275]  # one keyword is in key and key_middle: |key ∪ key_middle| = 9
    assert progress_rate(t275, "北京久安建设投资集团有限公司") == pytest.approx(1 / 9)


def test_keyword_scores_over_the_dataset(lab_tasks):
    tasks = list(lab_tasks.values())
    ref = keyword_scores(tasks, {t.id: t.answer for t in tasks})
    # Reference answers miss 1/2 (task 114), 1/2 (240) and 1/9 (292) of their keys: 1 - (10/9)/300.
    assert Fraction(ref.success_rate).limit_denominator(10_000) == Fraction(269, 270)
    assert ref.n == 300 and ref.per_task[1] == (1.0, 1.0)
    assert 0.5 < ref.progress_rate < ref.success_rate

    empty = keyword_scores(tasks, {})  # no outputs: every task scores 0
    assert (empty.success_rate, empty.progress_rate) == (0.0, 0.0)


def test_loader_rejects_tasks_without_keys(tmp_path):
    bad = tmp_path / "dataset.json"
    bad.write_text(json.dumps([{"id": 7, "question": "?", "answer": "", "key": [], "key_middle": []}]))
    with pytest.raises(ValueError, match="task id 7"):
        load_legalagentbench(bad)
    bad.write_text(json.dumps([{"id": 8}]))
    with pytest.raises(ValueError, match="malformed"):
        load_legalagentbench(bad)
