"""Citation verification in the answer job, over the real Civil Code (``corpus_home``: k.c. published
in OLD 2024-12-19 and NEW 2025-11-13) with the real citation resolver: an existing article is
verified, an invented one is a hallucination, a repealed one is not in force, a date before every
held version leaves a citation unverified; the offline answerer's run scores as before."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pytest

from pipelines.answers.answer_job import SelectedQuestion, questions_from_benchmark, results_table, score_rows
from pipelines.answers.citation_check import (CitationVerifier, citation_scores, citation_text, question_date,
                                              verify_all)
from pipelines.answers.types import AnswerQuestion, AnswerResult

OLD, NEW = "2024-12-19", "2025-11-13"


@pytest.fixture(scope="module")
def verifier(corpus_home) -> CitationVerifier:
    return CitationVerifier.at(corpus_home)


def test_unit_ids_are_printed_as_acts_cite_them():
    assert citation_text("pl:kc:art:415") == "art. 415 k.c."
    assert citation_text("pl:kc:art:109^1:par:2:pt:3") == "art. 109^1 § 2 pkt 3 k.c."
    assert citation_text("de:bgb:par:823:abs:1") == "§ 823 Abs. 1 BGB"
    assert citation_text("de:gg:art:1:abs:1") == "Art. 1 Abs. 1 GG"
    assert citation_text("art. 5 k.p.c.") == "art. 5 k.p.c."  # not an id: unchanged
    assert citation_text("pl:nosuchact:art:1") == "pl:nosuchact:art:1"  # unknown act: unchanged


def test_question_date_is_the_exam_date_else_the_corpus_version():
    import datetime as dt

    assert question_date(dt.date(2025, 3, 8), NEW) == ("2025-03-08", "exam_date")
    assert question_date(None, NEW) == (NEW, "corpus_version")
    with pytest.raises(ValueError):
        question_date(None, "not-a-date")


def test_existing_invented_and_repealed_articles(verifier):
    result = AnswerResult("q", "A", cited_unit_ids=("pl:kc:art:415",),
                          invalid_citations=("art. 9999 k.c.", "art. 2 k.c."))
    check = verifier.verify(result, NEW)
    by_id = {u.unit_id: u for u in check.units}
    assert set(by_id) == {"pl:kc:art:415", "pl:kc:art:9999", "pl:kc:art:2"}
    art415 = by_id["pl:kc:art:415"]
    assert (art415.match, art415.exists, art415.in_force, art415.version) == ("exact", True, True, NEW)
    assert (by_id["pl:kc:art:9999"].match, by_id["pl:kc:art:9999"].exists) == ("not_found", False)
    repealed = by_id["pl:kc:art:2"]  # "(uchylony)" in both versions: it exists, it is not in force
    assert (repealed.match, repealed.exists, repealed.in_force, repealed.status) == ("exact", True, False, "repealed")
    assert check.hallucinated == ("pl:kc:art:9999",) and check.not_in_force == ("pl:kc:art:2",)
    scores = citation_scores([check])
    assert (scores["cited_units"], scores["verified_units"], scores["hallucinated_units"]) == (3, 3, 1)
    assert scores["hallucination_rate"] == round(1 / 3, 4) and scores["not_in_force_rate"] == round(1 / 3, 4)


def test_invented_paragraph_is_a_hallucination_and_a_duplicate_counts_once(verifier):
    # art. 415 has no paragraphs: "§ 7" is invented (the resolver's partial), not a real unit
    check = verifier.verify(AnswerResult("q", "A", cited_unit_ids=("pl:kc:art:415",),
                                         invalid_citations=("art. 415 § 7 k.c.", "art. 415 k.c.")), NEW)
    assert [(u.unit_id, u.match, u.exists) for u in check.units] == [
        ("pl:kc:art:415", "exact", True), ("pl:kc:art:415:par:7", "partial", False)]
    assert check.hallucinated == ("pl:kc:art:415:par:7",)


def test_before_every_held_version_nothing_is_verified_nor_hallucinated(verifier):
    check = verifier.verify(AnswerResult("q", "A", cited_unit_ids=("pl:kc:art:415",),
                                         invalid_citations=("art. 9999 k.c.", "no article here")), "2019-06-01")
    assert {u.match for u in check.units} == {"not_covered", "no_citation"}
    assert check.verified == () and check.hallucinated == ()
    assert set(check.unverified) == {"pl:kc:art:415", "pl:kc:art:9999", "no article here"}
    scores = citation_scores([check, None])
    assert (scores["verified_units"], scores["unverified_units"], scores["hallucination_rate"]) == (0, 3, 0.0)


def test_results_table_and_scores_carry_the_verification(verifier):
    qs = [SelectedQuestion(AnswerQuestion(f"q{i}", "?", {"A": "a", "B": "b"}, "A", ("pl:kc:art:415",)), 2022)
          for i in range(3)]
    results = [AnswerResult("q0", "A", cited_unit_ids=("pl:kc:art:415",)),
               AnswerResult("q1", "A", cited_unit_ids=("pl:kc:art:415",), invalid_citations=("pl:kc:art:9999",)),
               None]
    checks = verify_all(verifier, results, [question_date(None, NEW)] * 3)
    table = results_table(qs, results, run_id="r", answerer="t", corpus_version=NEW, citation_checks=checks).to_pylist()
    assert [r["hallucinated_citations"] for r in table] == [[], ["pl:kc:art:9999"], None]
    assert table[0]["citations_as_of"] == NEW and table[0]["citations_verified"][0]["match"] == "exact"
    assert table[1]["context_correct"] is True  # one extra (the invented article) is within the paper's two
    plain = score_rows(qs, results, {"all": lambda s: True})
    verified = score_rows(qs, results, {"all": lambda s: True}, citation_checks=checks)
    assert {k: verified["all"][k] for k in plain["all"]} == plain["all"]  # the paper scores are unchanged
    assert verified["all"]["hallucination_rate"] == 0.3333 and verified["all"]["answers_with_hallucination"] == 1
    with pytest.raises(ValueError, match="citation checks"):
        results_table(qs, results, run_id="r", answerer="t", corpus_version=NEW, citation_checks=checks[:2])


def test_offline_answerer_run_scores_as_before_and_cites_only_existing_units(corpus_home, verifier, benchmark_table):
    from core.settings import Settings
    from pipelines.answers.offline_answerer import ArticleStore, OfflineAnswerer
    from pipelines.retrieval.index_build import open_backend
    from pipelines.retrieval.interface import Filters, SearchRequest

    selected, _ = questions_from_benchmark(benchmark_table, act_id="pl:kc")
    selected = sorted(selected, key=lambda s: hashlib.sha1(s.question.question_id.encode()).hexdigest())[:8]
    backend = open_backend(Settings(home=corpus_home, encoder="hashing", elasticsearch_url=None), act_id="pl:kc")
    filters = Filters(act_ids=("pl:kc",), version=NEW)
    store = ArticleStore.from_parquet(corpus_home / "corpus" / "pl" / "kc" / NEW / "articles.parquet")
    answerer = OfflineAnswerer(lambda q, k: backend.search(SearchRequest(q[:4000], k, "hybrid", filters)), store,
                               stats=store.stats)
    results = [answerer.answer(s.question) for s in selected]
    checks = verify_all(verifier, results, [question_date(s.exam_date, NEW) for s in selected])
    groups = {"all": lambda s: True}
    plain = score_rows(selected, results, groups)
    verified = score_rows(selected, results, groups, citation_checks=checks)
    assert {k: verified["all"][k] for k in plain["all"]} == plain["all"]
    assert verified["all"]["cited_units"] >= 8 and verified["all"]["verified_units"] == verified["all"]["cited_units"]
    assert verified["all"]["hallucination_rate"] == 0.0 and verified["all"]["not_in_force_rate"] == 0.0
    table = results_table(selected, results, run_id="r", answerer="offline", corpus_version=NEW, citation_checks=checks)
    assert isinstance(table, pa.Table) and table.num_rows == 8
    assert all(r["citations_verified"] and all(u["exists"] for u in r["citations_verified"]) for r in table.to_pylist())
