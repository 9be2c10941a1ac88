"""Issue 25 where people and programs see it: the API's /search, the search page and the MCP ``search``
tool answer garbage queries with no hits and a reason, and carry the confidence and the out-of-corpus
flag (naming an act lexpipe does not hold)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from fastapi.testclient import TestClient

from core.layout import Layout
from lexpipe.api import create_app
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.article_fusion import FEATURES, ArticleFusion
from pipelines.retrieval.confidence import FEATURES as QFEATURES, LogisticModel
from pipelines.retrieval.embedded_backend import EmbeddedBackend
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.index_build import index_root
from pipelines.retrieval.lay_search import PolishLaySearch
from pipelines.retrieval.representations.store import RepresentationIndex, write_store
from pipelines.retrieval.service import SearchService
from pipelines.tools import Services
from pipelines.tools.search_tool import search as search_tool

TEXTS = {
    "445": "Sąd może przyznać poszkodowanemu odpowiednią sumę tytułem zadośćuczynienia pieniężnego za doznaną krzywdę.",
    "535": "Przez umowę sprzedaży sprzedawca zobowiązuje się przenieść na kupującego własność rzeczy.",
    "659": "Przez umowę najmu wynajmujący zobowiązuje się oddać najemcy rzecz do używania.",
}
REPS = [("saos", "pl:kc:art:445", "powód domagał się pieniędzy za ból i cierpienie po wypadku"),
        ("exam", None, "jaki jest minimalny kapitał zakładowy spółki z ograniczoną odpowiedzialnością")]


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> SearchService:
    layout = Layout(tmp_path_factory.mktemp("assess"))
    nums = list(TEXTS)
    chunks = pa.table({
        "chunk_id": [f"pl:kc:art:{n}#0" for n in nums], "article_id": [f"pl:kc:art:{n}" for n in nums],
        "act_id": ["pl:kc"] * len(nums), "version": [dt.date(2025, 11, 13)] * len(nums),
        "heading_path": [f"Art. {n}" for n in nums], "text": list(TEXTS.values()),
        "status": ["in_force"] * len(nums), "content_hash": nums, "chunk_index": [0] * len(nums),
        "chunk_count": [1] * len(nums), "token_count": [len(t.split()) for t in TEXTS.values()]})
    enc, an = HashingEncoder(), get_analyzer("pl")
    backend = EmbeddedBackend(index_root(layout), encoder=enc, analyzer=an)
    backend.build("pl:kc", "2025-11-13", chunks, enc.encode_passages(list(TEXTS.values())))
    rows = [{"rep_id": f"r{i}", "kind": k, "article_id": a, "act_id": a.split(":art:")[0] if a else "pl:ksh",
             "year": 2015, "text": t, "tokens": " ".join(an.analyze(t))} for i, (k, a, t) in enumerate(REPS)]
    write_store(layout.home, "pl", rows, enc.encode_queries([t for _, _, t in REPS]), {"encoder": enc.id})
    zeros = [0.0] * len(QFEATURES)
    lay = PolishLaySearch(RepresentationIndex.open(layout.home, "pl"),
                          ArticleFusion([1.0 if f == "hybrid_lr" else 0.0 for f in FEATURES], [0.0] * len(FEATURES),
                                        [1.0] * len(FEATURES), list(FEATURES)),
                          LogisticModel(zeros, zeros, [1.0] * len(QFEATURES), list(QFEATURES), bias=0.0),
                          LogisticModel(zeros, zeros, [1.0] * len(QFEATURES), list(QFEATURES), bias=-5.0, threshold=0.5),
                          an, {"pl:kc": "k.c."})
    svc = SearchService(backend, home=layout.home)
    svc._lay["pl"] = lay
    return svc


@pytest.fixture(scope="module")
def client(service) -> TestClient:
    return TestClient(create_app(service))


@pytest.mark.parametrize("q, why", [("😀😀😀", "no words"), ("asdfgh", "random typing"), ("i", "only stop words"),
                                    ("umowa\x00najmu", "control characters")])
def test_api_garbage_is_no_hits_with_a_reason(client, q, why):
    for r in (client.get("/search", params={"q": q}), client.post("/search", json={"q": q})):
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["hits"] == [] and body["flags"] == ["garbage_query"] and why in body["reasons"][0]
        assert body["confidence"] is None


def test_api_carries_confidence_and_names_an_act_not_held(client):
    body = client.get("/search", params={"q": "umowa najmu rzecz do używania"}).json()
    assert body["hits"][0]["article_id"] == "pl:kc:art:659"
    assert body["confidence"] == pytest.approx(0.5) and body["flags"] == [] and body["outside_acts"] == []
    body = client.get("/search", params={"q": "Czy według ustawy o prawach konsumenta mogę zwrócić buty?"}).json()
    assert body["flags"] == ["out_of_corpus", "names_outside_act"]
    assert body["outside_acts"][0]["id"] == "pl:upk" or "prawach konsumenta" in body["outside_acts"][0]["name"]
    assert body["hits"]  # the nearest provisions are still listed, the flag says what they are worth


def test_page_says_nothing_was_searched(client):
    r = client.get("/ui/search", params={"q": "😀😀😀", "lang": "en"})
    assert r.status_code == 200
    assert 'id="no-search"' in r.text and "no words" in r.text and 'id="results"' not in r.text


def test_page_says_the_answer_is_probably_outside_and_names_the_act(client):
    r = client.get("/ui/search", params={"q": "Czy zgodnie z RODO sklep musi usunąć moje dane?", "lang": "pl"})
    assert r.status_code == 200
    assert 'id="out-of-corpus"' in r.text and "prawdopodobnie nie ma w aktach" in r.text
    assert 'id="outside-named"' in r.text and "RODO" in r.text
    r = client.get("/ui/search", params={"q": "umowa najmu rzecz do używania", "lang": "en"})
    assert 'id="out-of-corpus"' not in r.text and 'id="confidence"' in r.text and "50 %" in r.text


def test_mcp_search_tool_carries_the_assessment(service):
    tools = Services(search=service)
    args = {"query": "asdfgh", "k": 5, "acts": [], "as_of": None, "version": None, "status": [],
            "retriever": "hybrid", "target": "statutes", "offset": 0}
    out = search_tool(tools, args)
    assert out["hits"] == [] and out["flags"] == ["garbage_query"] and "random typing" in out["reasons"][0]
    out = search_tool(tools, {**args, "query": "Czy zgodnie z RODO sklep musi usunąć moje dane?"})
    assert "out_of_corpus" in out["flags"] and out["outside_acts"][0]["name"] == "RODO"
    assert "confidence" in out
