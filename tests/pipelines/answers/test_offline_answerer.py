"""The offline answerer on real exam questions, with a stub search over real Civil Code articles."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipelines.answers.offline_answerer import (FEATURES, ArticleStore, CorpusStats, OfflineAnswerer,
                                                OfflineConfig, OptionModel, default_model_path,
                                                is_inverted_question, naive_answer, polarity_mismatches,
                                                question_query, split_units, stem_polarity_conflicts,
                                                train_option_model)
from pipelines.answers.scoring import score_answers
from pipelines.answers.types import AnswerQuestion
from pipelines.retrieval.interface import Hit

# Texts of pl:kc as published for 2025-11-13.
ARTICLES = {
    "pl:kc:art:7": "Jeżeli ustawa uzależnia skutki prawne od dobrej lub złej wiary, domniemywa się istnienie "
                   "dobrej wiary.",
    "pl:kc:art:71": "Ogłoszenia, reklamy, cenniki i inne informacje, skierowane do ogółu lub do poszczególnych "
                    "osób, poczytuje się w razie wątpliwości nie za ofertę, lecz za zaproszenie do zawarcia umowy.",
    "pl:kc:art:86": "§ 1. Jeżeli błąd wywołała druga strona podstępnie, uchylenie się od skutków prawnych "
                    "oświadczenia woli złożonego pod wpływem błędu może nastąpić także wtedy, gdy błąd nie był "
                    "istotny, jak również wtedy, gdy nie dotyczył treści czynności prawnej.\n§ 2. Podstęp osoby "
                    "trzeciej jest jednoznaczny z podstępem strony, jeżeli ta o podstępie wiedziała i nie "
                    "zawiadomiła o nim drugiej strony albo jeżeli czynność prawna była nieodpłatna.",
    "pl:kc:art:88": "§ 1. Uchylenie się od skutków prawnych oświadczenia woli, które zostało złożone innej osobie "
                    "pod wpływem błędu lub groźby, następuje przez oświadczenie złożone tej osobie na piśmie.\n"
                    "§ 2. Uprawnienie do uchylenia się wygasa: w razie błędu – z upływem roku od jego wykrycia, "
                    "a w razie groźby – z upływem roku od chwili, kiedy stan obawy ustał.",
    "pl:kc:art:123": "§ 1. Bieg przedawnienia przerywa się:\n1) przez każdą czynność przed sądem lub innym "
                     "organem powołanym do rozpoznawania spraw lub egzekwowania roszczeń danego rodzaju albo "
                     "przed sądem polubownym, przedsięwziętą bezpośrednio w celu dochodzenia lub ustalenia albo "
                     "zaspokojenia lub zabezpieczenia roszczenia;\n2) przez uznanie roszczenia przez osobę, "
                     "przeciwko której roszczenie przysługuje;\n3) (uchylony)\n§ 2. (uchylony)",
    "pl:kc:art:210": "§ 1. Każdy ze współwłaścicieli może żądać zniesienia współwłasności. Uprawnienie to może "
                     "być wyłączone przez czynność prawną na czas nie dłuższy niż lat pięć. Jednakże w ostatnim "
                     "roku przed upływem zastrzeżonego terminu dopuszczalne jest jego przedłużenie na dalsze lat "
                     "pięć; przedłużenie można ponowić.\n§ 2. Zniesienie współwłasności nieruchomości rolnej oraz "
                     "gospodarstwa rolnego w rozumieniu przepisów ustawy, o której mowa w art. 166 § 3, "
                     "następuje z uwzględnieniem przepisów tej ustawy.",
    "pl:kc:art:336": "Posiadaczem rzeczy jest zarówno ten, kto nią faktycznie włada jak właściciel (posiadacz "
                     "samoistny), jak i ten, kto nią faktycznie włada jak użytkownik, zastawnik, najemca, "
                     "dzierżawca lub mający inne prawo, z którym łączy się określone władztwo nad cudzą rzeczą "
                     "(posiadacz zależny).",
    "pl:kc:art:337": "Posiadacz samoistny nie traci posiadania przez to, że oddaje drugiemu rzecz w posiadanie "
                     "zależne.",
}
STORE = ArticleStore(ARTICLES)


class StubSearch:
    """Returns the listed articles, best first, as hits (chunk text = the article's first 200
    characters); records every call."""

    def __init__(self, ranking: list[str]):
        self.ranking = ranking
        self.calls: list[tuple[str, int]] = []

    def __call__(self, query: str, k: int) -> list[Hit]:
        self.calls.append((query, k))
        return [Hit(f"{a}#0", a, "pl:kc", "2025-11-13", 1.0 / i, i, "", ARTICLES.get(a, "")[:200])
                for i, a in enumerate(self.ranking[:k], 1)]


def answerer(ranking: list[str], **kw) -> OfflineAnswerer:
    return OfflineAnswerer(StubSearch(ranking), STORE, **kw)


# Real exam questions (year/exam#id), gold from the exam key.
Q_OFFER = AnswerQuestion(  # 2021/komorniczy#12
    "2021/komorniczy#12",
    "Zgodnie z Kodeksem cywilnym, ogłoszenia, reklamy, cenniki i inne informacje, skierowane do ogółu lub do "
    "poszczególnych osób, poczytuje się w razie wątpliwości:",
    {"A": "za ofertę,", "B": "za zaproszenie do zawarcia umowy,", "C": "za zaproszenie do rokowań."},
    "B", ("pl:kc:art:71",))
Q_THREAT = AnswerQuestion(  # 2021/notarialny#1
    "2021/notarialny#1",
    "Zgodnie z Kodeksem cywilnym, uprawnienie do uchylenia się od skutków prawnych oświadczenia woli, które "
    "zostało złożone innej osobie pod wpływem groźby wygasa z upływem:",
    {"A": "dwóch lat od złożenia oświadczenia woli,", "B": "roku od jej wykrycia,",
     "C": "roku od chwili, kiedy stan obawy ustał."},
    "C", ("pl:kc:art:88",))
Q_COOWNERSHIP = AnswerQuestion(  # 2015/adwokacki_radcowy#33
    "2015/adwokacki_radcowy#33",
    "Zgodnie z Kodeksem cywilnym, uprawnienie każdego ze współwłaścicieli do żądania zniesienia współwłasności:",
    {"A": "nie może być wyłączone przez czynność prawną,",
     "B": "może być wyłączone przez czynność prawną na czas nie dłuższy niż lat pięć, jednakże w ostatnim roku "
          "przed upływem zastrzeżonego terminu dopuszczalne jest jego przedłużenie na dalsze lat pięć; "
          "przedłużenie można ponowić,",
     "C": "może być wyłączone przez czynność prawną na czas nie dłuższy niż lat trzy, bez możliwości "
          "przedłużenia tego okresu."},
    "B", ("pl:kc:art:210",))
Q_POSSESSION = AnswerQuestion(  # 2014/notarialny#15: the answer is the negated option
    "2014/notarialny#15",
    "Zgodnie z Kodeksem cywilnym, posiadacz samoistny, który oddaje drugiemu rzecz w posiadanie zależne:",
    {"A": "traci posiadanie,", "B": "traci posiadanie, chyba że w umowie z posiadaczem zależnym zastrzeżono "
                                   "inaczej,", "C": "nie traci posiadania."},
    "C", ("pl:kc:art:337",))
Q_GOOD_FAITH = AnswerQuestion(  # 2017/notarialny#1
    "2017/notarialny#1",
    "Zgodnie z Kodeksem cywilnym, jeżeli ustawa uzależnia skutki prawne od dobrej lub złej wiary, domniemywa "
    "się istnienie:",
    {"A": "złej wiary,", "B": "dobrej wiary,", "C": "dobrej wiary, ale tylko w sporze konsumenta z "
                                                   "przedsiębiorcą."},
    "B", ("pl:kc:art:7",))
Q_NOT_INTERRUPTED = AnswerQuestion(  # negated stem: the option the provision does NOT list
    "negated-123",
    "Zgodnie z Kodeksem cywilnym, bieg przedawnienia nie przerywa się przez:",
    {"A": "uznanie roszczenia przez osobę, przeciwko której roszczenie przysługuje,",
     "B": "wezwanie dłużnika do zapłaty,",
     "C": "każdą czynność przed sądem polubownym przedsięwziętą bezpośrednio w celu dochodzenia roszczenia."},
    "B", ("pl:kc:art:123",))
Q_EXCEPT = AnswerQuestion(  # explicit cue
    "except-123",
    "Zgodnie z Kodeksem cywilnym, bieg przedawnienia przerywa się przez każdą z poniższych czynności, "
    "z wyjątkiem:",
    dict(Q_NOT_INTERRUPTED.options), "B", ("pl:kc:art:123",))


@pytest.fixture(scope="module")
def model() -> OptionModel:
    return OptionModel.load(default_model_path("pl"))


@pytest.mark.parametrize("q, ranking, cited, label", [
    (Q_OFFER, ["pl:kc:art:71", "pl:kc:art:7"], "pl:kc:art:71", "art. 71"),
    (Q_THREAT, ["pl:kc:art:86", "pl:kc:art:88"], "pl:kc:art:88:par:2", "art. 88 § 2"),
    (Q_COOWNERSHIP, ["pl:kc:art:210", "pl:kc:art:336"], "pl:kc:art:210:par:1", "art. 210 § 1"),
    (Q_GOOD_FAITH, ["pl:kc:art:7", "pl:kc:art:71"], "pl:kc:art:7", "art. 7"),
])
def test_real_questions_answered_and_supporting_paragraph_cited(model, q, ranking, cited, label):
    search = StubSearch(ranking)
    r = OfflineAnswerer(search, STORE, model=model).answer(q)
    assert r.error is None and r.option == q.gold_option
    assert r.cited_unit_ids == (cited,)
    assert label in r.explanation and "„" in r.explanation  # names the paragraph and quotes it
    assert r.answerer == "offline" and r.queries == (question_query(q.question, q.options),)
    assert search.calls == [(question_query(q.question, q.options), OfflineConfig().depth)]
    assert set(r.retrieved_article_ids) == set(ranking)
    assert set(r.extra["scores"]) == set(q.options)


def test_supporting_paragraph_found_below_the_top_hit(model):
    """Art. 86 ranks first but art. 88 § 2 is the paragraph that continues the question."""
    r = answerer(["pl:kc:art:86", "pl:kc:art:88"], model=model).answer(Q_THREAT)
    assert r.extra["unit"] == "pl:kc:art:88:par:2"
    sc = score_answers([(Q_THREAT, r)])
    assert (sc.answer_correct, sc.context_correct, sc.joint_correct) == (1, 1, 1)


def test_negated_option_wins_when_the_provision_negates(model):
    r = answerer(["pl:kc:art:337", "pl:kc:art:336"], model=model).answer(Q_POSSESSION)
    assert r.option == "C"
    assert not r.extra["inverted"]


def test_polarity_mismatch_counts_words_the_provision_only_has_negated():
    unit = "posiadacz samoistny nie traci posiadania przez to".split()
    assert polarity_mismatches("traci posiadanie".split(), unit) == 1
    assert polarity_mismatches("nie traci posiadania".split(), unit) == 0


def test_negated_stem_answers_the_option_the_provision_does_not_list(model):
    assert stem_polarity_conflicts("bieg przedawnienia nie przerywa się przez".split(),
                                   "bieg przedawnienia przerywa się".split())
    r = answerer(["pl:kc:art:123"], model=model).answer(Q_NOT_INTERRUPTED)
    assert r.extra["inverted"] is True
    assert r.option == "B"
    assert "wyjątku" in r.explanation and r.cited_unit_ids == ("pl:kc:art:123:par:1",)


def test_explicit_exception_cue_inverts(model):
    assert is_inverted_question(Q_EXCEPT.question)
    assert not is_inverted_question(Q_OFFER.question)
    assert not is_inverted_question("Zgodnie z Kodeksem cywilnym, nie może być świadkiem przy sporządzaniu testamentu:")
    r = answerer(["pl:kc:art:123"], model=model).answer(Q_EXCEPT)
    assert r.extra["inverted"] is True and r.option == "B"


def test_law_wording_with_nie_is_not_inverted(model):
    """'nie' that the provision itself has ("nie za ofertę") must not flip the answer."""
    r = answerer(["pl:kc:art:71"], model=model).answer(Q_OFFER)
    assert r.extra["inverted"] is False and r.option == "B"


def test_ties_are_deterministic_and_independent_of_option_order(model):
    """No option has a word of the provision: equal scores, the first letter wins, every time."""
    options = {"A": "kwartału,", "B": "półrocza,", "C": "dekady."}
    q1 = AnswerQuestion("tie", Q_OFFER.question, options, "A")
    q2 = AnswerQuestion("tie", Q_OFFER.question, dict(reversed(list(options.items()))), "A")
    results = [answerer(["pl:kc:art:71"], model=model).answer(q) for q in (q1, q2, q1)]
    assert [r.option for r in results] == ["A", "A", "A"]
    assert all(any("tie" in p for p in r.problems) for r in results)
    assert results[0].extra["scores"] == results[1].extra["scores"] == results[2].extra["scores"]


def test_identical_options_lose_to_the_distinct_supported_one(model):
    same = "za ofertę,"
    q = AnswerQuestion("dup", Q_OFFER.question, {"A": same, "B": same, "C": "za zaproszenie do zawarcia umowy,"}, "C")
    assert answerer(["pl:kc:art:71"], model=model).answer(q).option == "C"


def test_lowercase_letters_are_kept_as_given(model):
    q = AnswerQuestion("lower", Q_OFFER.question, {k.lower(): v for k, v in Q_OFFER.options.items()}, "b",
                       ("pl:kc:art:71",))
    r = answerer(["pl:kc:art:71"], model=model).answer(q)
    assert r.option == "b" and score_answers([(q, r)]).answer_correct == 1


@pytest.mark.parametrize("options, gold, message", [
    ({"A": "za ofertę,"}, "A", "at least two options"),
    ({"A": "za ofertę,", "B": "   "}, "A", "option 'B' has no text"),
    ({"A": "za ofertę,", "a": "za zaproszenie"}, "A", "occurs twice"),
])
def test_invalid_questions_give_error_results(model, options, gold, message):
    search = StubSearch(["pl:kc:art:71"])
    q = AnswerQuestion("bad", Q_OFFER.question, options, gold)
    r = OfflineAnswerer(search, STORE, model=model).answer(q)
    assert r.option is None and r.error is not None and r.error.startswith("invalid question")
    assert message in r.error
    assert search.calls == []  # nothing retrieved for a malformed question
    assert score_answers([(q, r)]).failed == 1


def test_blank_question_and_missing_options():
    with pytest.raises(ValueError, match="no options"):  # the shared record refuses it already
        AnswerQuestion("none", "Pytanie?", {}, "A")
    r = answerer(["pl:kc:art:71"]).answer(AnswerQuestion("blank", "  ", {"A": "x", "B": "y"}, "A"))
    assert r.error == "invalid question: the question text is empty"
    with pytest.raises(TypeError, match="AnswerQuestion"):
        answerer(["pl:kc:art:71"]).answer({"question": "x"})  # type: ignore[arg-type]


def test_search_failure_is_an_error_result_not_an_exception(model):
    def broken(query: str, k: int):
        raise ConnectionError("index unavailable")

    r = OfflineAnswerer(broken, STORE, model=model).answer(Q_OFFER)
    assert r.option is None and r.error == "retrieval failed: ConnectionError: index unavailable"
    n = naive_answer(Q_OFFER, broken, STORE)
    assert n.error is not None and n.error.startswith("retrieval failed")


def test_no_hits_and_unknown_articles(model):
    r = answerer([], model=model).answer(Q_OFFER)
    assert r.option is None and r.error is None and "retrieval returned no article text" in r.problems
    # an article the lookup does not know: the hit's own text is read instead
    search = StubSearch(["pl:kc:art:71"])
    r = OfflineAnswerer(search, lambda aid: None, stats=STORE.stats, model=model).answer(Q_OFFER)
    assert r.option == "B" and any("no text for pl:kc:art:71" in p for p in r.problems)


def test_option_queries_search_question_plus_each_option(model):
    search = StubSearch(["pl:kc:art:88", "pl:kc:art:86"])
    r = OfflineAnswerer(search, STORE, model=model, config=OfflineConfig(option_queries=True)).answer(Q_THREAT)
    assert len(search.calls) == 4 and search.calls[1][0].endswith(Q_THREAT.options["A"])
    assert r.option == "C"


def test_split_units_ids_and_labels():
    units = split_units("pl:kc:art:109^1", "§ 1. Prokura jest …\n§ 1^1. Wstawiony.\n§ 2. Nie można ograniczyć.")
    assert [u.unit_id for u in units] == ["pl:kc:art:109^1:par:1", "pl:kc:art:109^1:par:1^1", "pl:kc:art:109^1:par:2"]
    assert [u.label for u in units] == ["art. 109^1 § 1", "art. 109^1 § 1^1", "art. 109^1 § 2"]
    assert [u.unit_id for u in split_units("pl:kc:art:7", ARTICLES["pl:kc:art:7"])] == ["pl:kc:art:7"]
    assert split_units("pl:kc:art:8", "") == []


def test_naive_baseline_is_seeded_and_cites_the_top_article():
    search = StubSearch(["pl:kc:art:71", "pl:kc:art:7"])
    a, b = naive_answer(Q_OFFER, search, STORE), naive_answer(Q_OFFER, search, STORE)
    assert a.option == b.option and a.option in Q_OFFER.options
    assert a.cited_unit_ids == ("pl:kc:art:71",) and a.answerer == "naive"


def test_corpus_stats_weigh_rare_words_more():
    st = CorpusStats.from_texts(ARTICLES)
    assert st.units == 12  # 5 articles without §§ + 7 paragraphs
    assert st.word("zaproszenie") > st.word("się") > 0
    assert st.word("nieznanesłowo") == st.max_idf
    assert CorpusStats().word("cokolwiek") == 1.0


def test_model_training_and_file_checks(tmp_path):
    rng = np.random.default_rng(0)
    groups = []
    for _ in range(60):
        x = rng.normal(size=(3, len(FEATURES)))
        groups.append((x, int(np.argmax(x[:, 0]))))  # the first feature decides
    m = train_option_model(groups, l2=1e-3, provenance={"test": True})
    assert np.argmax(np.abs(m.weights)) == 0 and m.weights[0] > 0
    assert np.mean([np.argmax(m.score(x)) == y for x, y in groups]) > 0.9
    path = tmp_path / "m.json"
    m.save(path)
    assert OptionModel.load(path).weights == m.weights
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="retrain"):
        OptionModel.load(path)
    with pytest.raises(FileNotFoundError, match="bench/answers.py --train"):
        OptionModel.load(tmp_path / "missing.json")


def test_shipped_model_has_provenance(model):
    assert model.features == list(FEATURES)
    assert "2012–2020" in model.provenance["trained_on"]
    assert model.provenance["command"].startswith("bench/answers.py")
