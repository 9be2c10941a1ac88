"""Polish judgments as the ``pl:cases`` collection: the 200 real SAOS judgments chunked, indexed
beside the session's published Kodeks cywilny (embedded backend, hashing encoder), and searched
through ``SearchService`` with target cases and both; the Elasticsearch bodies of ``pl:cases``
against the recording fake."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pytest_httpserver import HTTPServer

from saos_fixtures import saos_judgments  # tests/, on sys.path via conftest
from fake_elasticsearch import FakeElasticsearch, walk
from core.layout import Layout
from core.settings import Settings
from pipelines.case_law.pl.build import pl_case_chunks
from pipelines.retrieval.case_index import (CASES_ACT, PL_CASES_ACT, case_documents, case_index_step,
                                            pl_case_index_step)
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import index_chunks, open_backend, open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest
from pipelines.retrieval.service import InvalidRequest, SearchService
from schemas import elasticsearch as es_schema

HEADING = re.compile(r"^(?:Sąd|Trybunał|Krajowa)[^·]+ · (?:Wyrok|Postanowienie|Uchwała|Uzasadnienie) · "
                     r"\d{4}-\d{2}-\d{2} · [^·]+ · (?:komparycja|teza|sentencja|pouczenie|uzasadnienie|rozwazania|"
                     r"zdanie_odrebne)$")


@pytest.fixture(scope="module")
def judgments(sample_dir: Path) -> pa.Table:
    return saos_judgments(sample_dir)


@pytest.fixture(scope="module")
def chunks(judgments: pa.Table) -> pa.Table:
    return pl_case_chunks(judgments, max_tokens=256)


@pytest.fixture(scope="module")
def world(tmp_path_factory, published_corpus, chunks):
    """A copy of the session's published k.c. (indexed with the hashing encoder) plus pl:cases."""
    home = tmp_path_factory.mktemp("pl_cases") / "home"
    shutil.copytree(published_corpus.home, home, symlinks=True)
    layout, encoder = Layout(home), get_encoder("hashing")
    report = pl_case_index_step(layout, chunks, encoder=encoder)
    service = SearchService(open_embedded_backend(layout, encoder=encoder, lang="pl"),
                            backend_for=lambda lang: open_embedded_backend(layout, encoder=encoder, lang=lang))
    return layout, encoder, report, service


def test_documents_are_judgments_with_their_place(judgments, chunks):
    version, docs = case_documents(chunks, act_id=PL_CASES_ACT)
    assert version == max(judgments["judgment_date"].to_pylist()).isoformat() == "2011-06-16"
    assert set(docs["act_id"].to_pylist()) == {PL_CASES_ACT}
    assert set(docs["article_id"].to_pylist()) == {f"pl:case:saos-{j}" for j in judgments["judgment_id"].to_pylist()}
    assert docs.num_rows == chunks.num_rows and len(set(docs["chunk_id"].to_pylist())) == docs.num_rows
    heads = dict(zip(docs["chunk_id"].to_pylist(), docs["heading_path"].to_pylist()))
    assert all(HEADING.match(h) for h in heads.values()), [h for h in heads.values() if not HEADING.match(h)][:5]
    assert "Sąd Najwyższy · Wyrok · 2011-04-29 · I CSK 428/10 · uzasadnienie" in heads.values()
    assert "Sąd Apelacyjny we Wrocławiu · Wyrok · 2011-04-28 · II AKa 105/11 · sentencja" in heads.values()
    assert "Trybunał Konstytucyjny · Wyrok · 2011-06-14 · Kp 1/11 · zdanie_odrebne" in heads.values()
    assert "Krajowa Izba Odwoławcza · Wyrok · 2011-04-29 · KIO 771/11 · pouczenie" in heads.values()
    with pytest.raises(ValueError, match="no case-law collection"):
        case_documents(chunks, act_id="pl:kc")
    _, german = case_documents(chunks)  # the German default is unchanged: de:cases, German headings
    assert set(german["act_id"].to_pylist()) == {CASES_ACT}


def test_index_holds_every_judgment_once(world, judgments, chunks):
    layout, encoder, report, _ = world
    assert (report.act_id, report.version, report.documents) == (PL_CASES_ACT, "2011-06-16", chunks.num_rows)
    backend = open_embedded_backend(layout, encoder=encoder, lang="pl", rerank=False)
    assert PL_CASES_ACT in backend.acts() and "pl:kc" in backend.acts()
    hits = backend.search(SearchRequest("sąd wyrok postanowienie orzeka oddala", k=200, retriever="bm25",
                                        filters=Filters(act_ids=(PL_CASES_ACT,))))
    assert len({h.article_id for h in hits}) == len(hits)  # one hit per judgment
    assert {h.article_id for h in hits} <= {f"pl:case:saos-{j}" for j in judgments["judgment_id"].to_pylist()}
    again = pl_case_index_step(layout, chunks, encoder=encoder)  # the same sync again: nothing embedded
    assert again.version == report.version and again.embedded == 0 and again.cached == report.documents


@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
@pytest.mark.parametrize("query,judgment", [
    ("wystąpienie wspólnika ze spółki cywilnej rozliczenie majątku", 94826),  # I CSK 428/10
    ("walne zgromadzenie spółdzielni mieszkaniowej części głosowanie uchwały", 94846),  # III CZP 111/10
    ("racjonalizacja zatrudnienia w państwowych jednostkach budżetowych", 110289),  # TK Kp 1/11
])
def test_cases_target_finds_the_judgment(world, query, judgment, retriever):
    *_, service = world
    page = service.search(query, target="cases", retriever=retriever, k=5)
    assert page.hits[0].article_id == f"pl:case:saos-{judgment}"
    assert {h.act_id for h in page.hits} == {PL_CASES_ACT} and page.versions == {PL_CASES_ACT: "2011-06-16"}
    assert all(HEADING.match(h.heading_path) for h in page.hits)
    assert page.classification is None and page.quotas == {"statutes": 0, "cases": 5}


def test_both_mixes_polish_statutes_and_judgments_by_the_query_class(world):
    *_, service = world
    case = service.search("Wyrok Sądu Najwyższego: rozliczenie wspólnika występującego ze spółki cywilnej",
                          target="both", retriever="bm25", k=10)
    assert case.classification.label == "case" and case.quotas == {"statutes": 3, "cases": 7}
    assert [h.act_id for h in case.hits].count(PL_CASES_ACT) == 7 and case.hits[0].act_id == PL_CASES_ACT
    assert case.hits[0].article_id == "pl:case:saos-94826"
    assert {h.act_id for h in case.hits} == {PL_CASES_ACT, "pl:kc"}
    law = service.search("Kto jest konsumentem w rozumieniu art. 22^1 k.c.?", target="both", retriever="bm25", k=10)
    assert law.classification.label == "law" and law.quotas == {"statutes": 7, "cases": 3}
    assert [h.act_id for h in law.hits].count("pl:kc") == 7 and law.hits[0].act_id == "pl:kc"
    assert [h.rank for h in law.hits] == list(range(1, 11))


def test_case_law_language_follows_the_query(world):
    *_, service = world
    assert service.case_law_language("wyrok SN w sprawie odsetek") == "pl"
    assert service.case_law_language("Urteil des BGH zur Anhörungsrüge") == "de"
    assert service.case_law_language("II AKa 105/11") == "pl"  # undecided: the one collection indexed


@pytest.mark.parametrize("kw,message", [
    ({"acts": ["fr:cc"], "target": "cases"}, r"court decisions exist for Polish and German law only \(target=cases/both "
                                             r"needs pl: or de: acts"),
    ({"acts": [PL_CASES_ACT], "target": "both"}, "pl:cases is chosen by target=both"),
    ({"acts": ["pl:kc", CASES_ACT], "target": "cases"}, "one language"),
])
def test_bad_requests(world, kw, message):
    *_, service = world
    with pytest.raises(InvalidRequest, match=message):
        service.search("wyrok", **kw)


def test_a_statute_search_never_returns_judgments(world):
    *_, service = world
    page = service.search("rozliczenie wspólnika występującego ze spółki cywilnej", retriever="bm25", k=20)
    assert page.hits and {h.act_id for h in page.hits} == {"pl:kc"}


# ---------------------------------------------------------------------- Elasticsearch bodies


def _kc_chunks() -> pa.Table:
    rows = [("pl:kc:art:864", "Art. 864", "Wspólnicy są solidarnie odpowiedzialni za zobowiązania spółki."),
            ("pl:kc:art:871", "Art. 871", "Wspólnikowi występującemu ze spółki zwraca się w pieniądzu wartość wkładu.")]
    return pa.table({"chunk_id": [f"{a}#0" for a, _, _ in rows], "article_id": [a for a, _, _ in rows],
                     "act_id": ["pl:kc"] * 2, "version": [dt.date(2025, 11, 13)] * 2,
                     "chunk_index": [0, 0], "heading_path": [h for _, h, _ in rows], "text": [t for *_, t in rows],
                     "status": ["in_force"] * 2, "content_hash": [a for a, _, _ in rows]})


@pytest.fixture(scope="module")
def es_world(tmp_path_factory, chunks):
    root = tmp_path_factory.mktemp("es_pl_cases")
    layout = Layout(root / "home")
    sample = chunks.filter(pa.array([c in {94826, 117953, 110289} for c in chunks["case_id"].to_pylist()]))
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        fake = FakeElasticsearch(server)
        fake.plugins = [es_schema.STEMPEL_PLUGIN]
        settings = Settings(home=layout.home, encoder="hashing", elasticsearch_url=server.url_for("/"))
        encoder = get_encoder("hashing")
        loads = {
            "pl:kc": index_chunks(layout, act_id="pl:kc", version="2025-11-13", chunks=_kc_chunks(),
                                  backend=open_backend(settings, act_id="pl:kc", encoder=encoder), encoder=encoder),
            PL_CASES_ACT: case_index_step(layout, sample, act_id=PL_CASES_ACT, encoder=encoder,
                                          backend=open_backend(settings, act_id=PL_CASES_ACT, encoder=encoder)),
        }
        every = [*fake.chunk_ids(loads[PL_CASES_ACT].table), "pl:kc:art:864#0", "pl:kc:art:871#0"]
        fake.rankings = {"bm25": every, "dense": list(reversed(every)), "rrf": every}
        yield fake, settings, sample, loads
    finally:
        server.clear()
        if server.is_running():
            server.stop()


def _searches(reqs):
    """The legs' searches (not the reads of a generation's act entries)."""
    return [r for r in reqs if r.path.endswith("/_search") and "scroll" not in r.args
            and b'{"term":{"doc_kind":"act"}}' not in r.raw.replace(b" ", b"")]


def test_pl_cases_index_uses_the_polish_analyser_and_its_own_aliases(es_world):
    fake, _, sample, loads = es_world
    index = loads[PL_CASES_ACT].table
    base = "lexpipe-cases-pl"  # the language's court-decision collection: its own index, beside the statutes'
    assert index == f"{base}-1" and loads[PL_CASES_ACT].alias == base and loads["pl:kc"].table == "lexpipe-statutes-pl-1"
    assert set(fake.indices[index]["aliases"]) == {base}
    (create,) = fake.of("PUT", f"/{index}")
    mappings = create.json["mappings"]
    assert mappings["properties"]["text"] == {"type": "text", "analyzer": "polish"}
    meta = mappings["_meta"]["lexpipe"]
    assert (meta["lang"], meta["text_analyzer"], meta["has_stempel"]) == ("pl", "polish", True)
    lines = [line for r in fake.of("PUT", "/_bulk") for line in r.ndjson]
    docs = [src for action, src in zip(lines[0::2], lines[1::2])
            if action["index"]["_index"] == index and src["doc_kind"] == "chunk"]
    assert len(docs) == sample.num_rows
    assert {(d["act_id"], d["jurisdiction"], d["status"]) for d in docs} == {(PL_CASES_ACT, "pl", "decided")}
    assert {d["article_id"] for d in docs} == {"pl:case:saos-94826", "pl:case:saos-117953", "pl:case:saos-110289"}
    assert all(HEADING.match(d["heading_path"]) for d in docs)


def test_both_reaches_the_polish_statute_and_case_indices_with_structured_bodies(es_world):
    fake, settings, _, loads = es_world
    service = SearchService.from_settings(settings)
    start = len(fake.requests)
    page = service.search("wyrok SN: rozliczenie wspólnika spółki cywilnej", target="both", retriever="bm25", k=10)
    reqs = fake.requests[start:]
    assert page.classification.label == "case" and page.hits[0].act_id == PL_CASES_ACT
    bodies = {r.path: r.json for r in _searches(reqs)}
    assert set(bodies) == {f"/{loads['pl:kc'].table}/_search", f"/{loads[PL_CASES_ACT].table}/_search"}
    assert bodies[f"/{loads[PL_CASES_ACT].table}/_search"]["query"]["bool"]["filter"] == [
        {"term": {"doc_kind": "chunk"}}, {"range": {"gen_from": {"lte": 1}}}, {"range": {"gen_to": {"gt": 1}}},
        {"term": {"version_to": "9999-12-31"}}, {"terms": {"act_id": [PL_CASES_ACT]}}]
    for body in bodies.values():
        assert not {k for k, _ in walk(body)} & {"query_string", "simple_query_string", "script", "script_score"}
    assert "de-cases" not in " ".join(r.path for r in reqs)
    start = len(fake.requests)
    cases = service.search("rozliczenie wspólnika", target="cases", retriever="bm25", k=3)
    assert {h.act_id for h in cases.hits} == {PL_CASES_ACT}
    assert {r.path for r in _searches(fake.requests[start:])} == {f"/{loads[PL_CASES_ACT].table}/_search"}
