"""``POST /citations/resolve`` over the real published k.c. versions: shapes, spans, dates, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app
from pipelines.reads import ReadService
from pipelines.resolver.matches import KINDS


@pytest.fixture(scope="module")
def client(corpus_home: Path) -> TestClient:
    return TestClient(create_app(reads=ReadService.at(corpus_home)))


def post(client: TestClient, body: dict, status: int = 200) -> dict:
    r = client.post("/citations/resolve", json=body)
    assert r.status_code == status, r.text
    return r.json()


def test_a_paragraph_with_several_citations(client: TestClient):
    text = ("Sąd Okręgowy uznał, że pozwany odpowiada na podstawie art. 415 k.c., a umowa leasingu wymagała formy "
            "(art. 709^2 k.c.). Zarzut naruszenia art. 9999 k.c. i art. 415 § 7 k.c. jest chybiony; "
            "o kosztach orzeczono na podstawie art. 98 § 1 i 3 k.p.c.")
    d = post(client, {"text": text, "as_of": OLD})
    assert d["as_of"] == OLD and d["language"] == "pl"
    got = [(c["text"], c["match"], [u["unit_id"] for u in c["units"]]) for c in d["citations"]]
    assert got == [("art. 415 k.c.", "exact", ["pl:kc:art:415"]),
                   ("art. 709^2 k.c.", "exact", ["pl:kc:art:709^2"]),
                   ("art. 9999 k.c.", "not_found", ["pl:kc:art:9999"]),
                   ("art. 415 § 7 k.c.", "partial", ["pl:kc:art:415:par:7"]),
                   ("art. 98 § 1 i 3 k.p.c.", "act_not_held", ["pl:kpc:art:98:par:1", "pl:kpc:art:98:par:3"])]
    for c in d["citations"]:
        assert text[c["start"]:c["end"]] == c["text"]
    assert d["citations"][1]["units"][0]["text"] == ("Umowa leasingu powinna być zawarta na piśmie pod rygorem "
                                                     "nieważności.")
    assert d["citations"][1]["units"][0]["version"] == OLD
    assert set(d["counts"]) == set(KINDS)
    assert [d["counts"][k] for k in ("exact", "not_found", "partial", "act_not_held")] == [2, 1, 1, 1]


def test_the_date_picks_the_wording(client: TestClient):
    d = post(client, {"text": "art. 709^2 k.c.", "as_of": NEW})
    u = d["citations"][0]["units"][0]
    assert (u["version"], u["text"], u["status"], u["match"]) == (
        NEW, "Umowa leasingu wymaga zachowania formy dokumentowej.", "in_force", "exact")
    assert post(client, {"text": "art. 709^2 k.c."})["citations"][0]["units"][0]["version"] == NEW  # today


def test_an_act_less_citation_lists_candidates(client: TestClient):
    c = post(client, {"text": "art. 415", "as_of": NEW})["citations"][0]
    assert (c["act_id"], c["match"], c["units"][0]["candidates"], c["units"][0]["unit_id"]) == (
        None, "ambiguous", ["pl:kc:art:415"], None)


def test_a_text_without_citations(client: TestClient):
    d = post(client, {"text": "Nic tu nie ma.", "language": "pl"})
    assert d["citations"] == [] and sum(d["counts"].values()) == 0


@pytest.mark.parametrize("body", [
    {"text": ""}, {"text": "x" * 20001}, {}, {"text": 5}, {"text": "art. 415 k.c.", "language": "fr"},
    {"text": "art. 415 k.c.", "unexpected": 1}, {"text": "art. 415 k.c.", "as_of": "x" * 41},
])
def test_a_bad_body_is_422(client: TestClient, body: dict):
    d = post(client, body, 422)
    assert d["status"] == 422 and d["field"] and d["message"] == d["detail"]


@pytest.mark.parametrize("as_of", ["2025-02-30", "01.01.2025", "tomorrow"])
def test_a_bad_date_is_422_naming_the_field(client: TestClient, as_of: str):
    d = post(client, {"text": "art. 415 k.c.", "as_of": as_of}, 422)
    assert d["field"] == "as_of" and d["message"].startswith("as_of must be")


def test_an_empty_as_of_is_today(client: TestClient):
    assert post(client, {"text": "art. 415 k.c.", "as_of": ""})["as_of"] == post(client, {"text": "art. 415 k.c."})["as_of"]


def test_a_date_before_the_corpus_is_not_covered_not_an_error(client: TestClient):
    c = post(client, {"text": "art. 415 k.c.", "as_of": "1999-01-01"})["citations"][0]
    assert c["match"] == "not_covered" and c["units"][0]["held_in"] == [OLD, NEW]


def test_the_operation_is_documented(client: TestClient):
    schema = client.get("/openapi.json").json()
    op = schema["paths"]["/citations/resolve"]["post"]
    assert "422" in op["responses"] and "200" in op["responses"]
    assert "exact" in schema["components"]["schemas"]["UnitResolutionOut"]["properties"]["match"]["description"]


def test_acts_not_held_are_named_and_ranges_say_when_they_are_not_listed(client: TestClient):
    """Issue 26's repros through the endpoint: the act a citation names comes with its title and
    address, held or not; a too long or backwards range is marked, not two exact units."""
    d = post(client, {"text": "zgodnie z art. 27 ustawy o prawach konsumenta, art. 10 ust. 1 RODO, art. 148 par. 2 kk, "
                              "art. 1–70 k.c. i art. 7–5 k.c.", "as_of": NEW})
    got = [(c["text"], c["act_id"], c["match"]) for c in d["citations"]]
    assert got == [("art. 27 ustawy o prawach konsumenta", "pl:upk", "act_not_held"),
                   ("art. 10 ust. 1 RODO", "eu:2016/679", "act_not_held"),
                   ("art. 148 par. 2 kk", "pl:kk", "act_not_held"),
                   ("art. 1–70 k.c.", "pl:kc", "range_too_long"),
                   ("art. 7–5 k.c.", "pl:kc", "range_backwards")]
    upk = d["citations"][0]
    assert upk["units"][0]["candidates"] == [] and upk["range"] is None
    assert {k: upk["act"][k] for k in ("id", "held", "title", "date", "address", "gazette", "known")} == {
        "id": "pl:upk", "held": False, "title": "ustawa o prawach konsumenta", "date": "2014-05-30",
        "address": "DU/2014/827", "gazette": "Dz. U. 2014 poz. 827", "known": True}
    too_long, backwards = d["citations"][3:]
    assert too_long["range"]["problem"] == "too_long" and too_long["range"]["count"] > 60
    assert [u["match"] for u in backwards["units"]] == ["range_backwards", "range_backwards"]
    assert d["counts"]["range_too_long"] == d["counts"]["range_backwards"] == 1


def test_the_documented_example_is_what_the_service_answers(client: TestClient):
    """Issue 26, point 5: docs/api.md showed ``art. 4491 k.c.`` as ``exact``; the service answers
    ``read_as``. Every k.c. citation of the documented example (request and answer as printed there)
    is matched as the service matches it (the other acts depend on what a home holds)."""
    import json
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    request = re.search(r"curl -s -X POST localhost:8000/citations/resolve .*? -d '(\{.*?\})'", doc).group(1)
    shown = json.loads(re.search(r"```json\n(\{\n  \"as_of\": \"2025-12-01\".*?\n\})\n```", doc, re.S).group(1))
    answer = post(client, json.loads(request))
    printed = {c["text"]: (c["match"], [u["match"] for u in c["units"]]) for c in shown["citations"]
               if c["act_id"] == "pl:kc"}
    served = {c["text"]: (c["match"], [u["match"] for u in c["units"]]) for c in answer["citations"]
              if c["act_id"] == "pl:kc"}
    assert printed == served and printed["art. 4491 k.c."] == ("read_as", ["read_as"])
