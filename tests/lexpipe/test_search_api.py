"""The search API and CLI: happy path, pagination, and bad input answered with 4xx / exit 2."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from fastapi.testclient import TestClient

from lexpipe.api import create_app
from lexpipe.cli import main
from core.layout import Layout
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.embedded_backend import EmbeddedBackend
from pipelines.retrieval.encoders import HashingEncoder
from pipelines.retrieval.index_build import index_root
from pipelines.retrieval.service import SearchService

TEXTS = {
    "22^1": "Za konsumenta uważa się osobę fizyczną dokonującą z przedsiębiorcą czynności prawnej.",
    "709^2": "Umowa leasingu wymaga zachowania formy dokumentowej.",
    "220": "Roszczenie o zniesienie współwłasności nie ulega przedawnieniu.",
    "2": "(uchylony)",
    "535": "Przez umowę sprzedaży sprzedawca zobowiązuje się przenieść na kupującego własność rzeczy.",
    "659": "Przez umowę najmu wynajmujący zobowiązuje się oddać najemcy rzecz do używania.",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Layout:
    layout = Layout(tmp_path_factory.mktemp("api"))
    nums = list(TEXTS)
    chunks = pa.table({
        "chunk_id": [f"pl:kc:art:{n}#0" for n in nums], "article_id": [f"pl:kc:art:{n}" for n in nums],
        "act_id": ["pl:kc"] * len(nums), "version": [dt.date(2025, 11, 13)] * len(nums),
        "chunk_index": pa.array([0] * len(nums), pa.int32()), "chunk_count": pa.array([1] * len(nums), pa.int32()),
        "heading_path": [f"Art. {n}" for n in nums], "text": list(TEXTS.values()),
        "token_count": pa.array([len(t.split()) for t in TEXTS.values()], pa.int32()),
        "status": ["repealed" if n == "2" else "in_force" for n in nums], "content_hash": nums})
    enc = HashingEncoder()
    backend = EmbeddedBackend(index_root(layout), encoder=enc, analyzer=get_analyzer("pl"))
    backend.build("pl:kc", "2025-11-13", chunks, enc.encode_passages(list(TEXTS.values())))
    return layout


@pytest.fixture(scope="module")
def client(home) -> TestClient:
    backend = EmbeddedBackend(index_root(home), encoder=HashingEncoder(), analyzer=get_analyzer("pl"))
    return TestClient(create_app(SearchService(backend)))


def test_search_get_and_post(client):
    r = client.get("/search", params={"q": "umowa leasingu forma dokumentowa", "retriever": "bm25", "k": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hits"][0]["article_id"] == "pl:kc:art:709^2" and body["versions"] == {"pl:kc": "2025-11-13"}
    r2 = client.post("/search", json={"q": "umowa leasingu forma dokumentowa", "retriever": "bm25", "k": 3})
    assert r2.json()["hits"] == body["hits"]
    assert client.get("/openapi.json").status_code == 200


def test_pagination(client):
    full = client.get("/search", params={"q": "umowa rzecz", "retriever": "dense", "k": 4}).json()["hits"]
    page2 = client.get("/search", params={"q": "umowa rzecz", "retriever": "dense", "k": 2, "offset": 2}).json()["hits"]
    assert len(full) == 4
    assert [h["article_id"] for h in page2] == [h["article_id"] for h in full[2:4]]
    assert [h["rank"] for h in page2] == [3, 4]


@pytest.mark.parametrize("params", [
    {"q": ""}, {"q": "umowa", "retriever": "tfidf"}, {"q": "umowa", "k": 0}, {"q": "umowa", "k": 10000},
    {"q": "umowa", "offset": -1},
])
def test_bad_parameters_are_422(client, params):
    r = client.get("/search", params=params)
    assert r.status_code == 422, r.text


@pytest.mark.parametrize("params,status,field,fragment", [
    ({"q": "umowa", "act": "pl:kk"}, 404, "act", "unknown act"),  # a registry act this index lacks
    ({"q": "umowa", "act": "pl:zz"}, 404, "act", "unknown act"),
    ({"q": "umowa", "act": "DROP TABLE"}, 422, "act.0", "act.0 must be an act id like pl:kc"),
    ({"q": "umowa", "as_of": "2024-13-45"}, 422, "as_of", "as_of must be a real date"),
    ({"q": "umowa", "as_of": "1990-01-01"}, 404, "as_of", "on or before"),
    ({"q": "umowa", "status": "x' OR 1=1"}, 422, "status.0", "Input should be 'in_force', 'repealed' or 'pending'"),
    ({"q": "   "}, 422, "q", "nothing to search for"),
    ({"q": "umowa", "target": "cases"}, 404, "target", "no court decisions are indexed for pl (pl:cases)"),
])
def test_unanswerable_requests_are_404_or_422(client, params, status, field, fragment):
    """One status per kind of fault (docs/api.md#errors): not there 404, malformed 422 — the same as
    /units and /citations/resolve (a malformed as_of was 400 here)."""
    r = client.get("/search", params=params)
    assert r.status_code == status and r.json()["field"] == field and fragment in r.json()["message"], r.text


def test_an_index_of_another_encoder_is_the_servers_fault_503(home):
    """Query vectors of another encoder rank noise: the server refuses with 503 naming both encoders
    (its configuration, not the caller's request), on the API and on the search page alike; BM25
    still answers."""
    backend = EmbeddedBackend(index_root(home), encoder=HashingEncoder(dim=256), analyzer=get_analyzer("pl"))
    other = TestClient(create_app(SearchService(backend)))
    r = other.get("/search", params={"q": "umowa leasingu", "retriever": "hybrid"})
    assert r.status_code == 503 and r.json()["field"] == "retriever", r.text
    assert "hashing-384" in r.json()["message"] and "hashing-256" in r.json()["message"]
    page = other.get("/ui/search", params={"q": "umowa leasingu"})
    assert page.status_code == 503 and "hashing-256" in page.text
    assert other.get("/search", params={"q": "umowa leasingu", "retriever": "bm25"}).status_code == 200


def test_huge_query_is_refused_not_crashed(client):
    r = client.post("/search", json={"q": "umowa " * 20000})  # ~120 kB
    assert r.status_code == 422


def test_query_syntax_is_just_text(client):
    r = client.get("/search", params={"q": '"*:( OR AND title:x) umowę najmu wynajmujący', "retriever": "hybrid", "k": 2})
    assert r.status_code == 200 and r.json()["hits"][0]["article_id"] == "pl:kc:art:659"


def test_status_filter(client):
    hits = client.get("/search", params={"q": "uchylony", "retriever": "bm25", "status": "repealed"}).json()["hits"]
    assert [h["article_id"] for h in hits] == ["pl:kc:art:2"]


def test_health(client):
    assert client.get("/health").json() == {"status": "ok", "serving": {"pl:kc": "2025-11-13"}}


@pytest.mark.parametrize("argv,fragment", [
    (["", ], "query is empty"), (["umowa", "--k", "0"], "k must be between"),
    (["umowa", "--retriever", "tfidf"], "unknown retriever"), (["umowa", "--as-of", "2024-13-45"], "must be a real date"),
    (["umowa", "--act", "pl:kk"], "unknown act"), (["x" * 100_000], "the limit is"),
])
def test_cli_bad_input(home, monkeypatch, capsys, argv, fragment):
    monkeypatch.setenv("LEXPIPE_ENCODER", "hashing")
    assert main(["search", *argv, "--home", str(home.home)]) == 2
    assert fragment in capsys.readouterr().err


def test_cli_json(home, monkeypatch, capsys):
    import json

    monkeypatch.setenv("LEXPIPE_ENCODER", "hashing")
    assert main(["search", "umowę najmu wynajmujący", "--retriever", "bm25", "--k", "2", "--json", "--home", str(home.home)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hits"][0]["article_id"] == "pl:kc:art:659" and len(out["hits"]) == 2


@pytest.mark.parametrize("argv", [["--version", "1999-01-01"], []])
def test_cli_index_refuses_unpublished_versions(tmp_path, capsys, argv):
    assert main(["index", "--act", "pl:kc", *argv, "--home", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no published pl:kc version" in err and "lexpipe run" in err
    assert not (tmp_path / "index").exists()  # nothing built, nothing lost
