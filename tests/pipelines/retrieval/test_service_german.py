"""The search service over German statutes and court decisions: the German analyser is chosen by
the act prefix, and target=cases/both searches the de:cases collection with the 70/30 mix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from core.layout import Layout
from pipelines.case_law.chunks import case_chunks
from pipelines.statutes.de.build import build_all
from pipelines.retrieval.case_index import CASES_ACT, case_index_step
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import index_step, open_embedded_backend
from pipelines.retrieval.service import InvalidRequest, SearchService


@pytest.fixture(scope="module")
def service(sample_dir: Path, tmp_path_factory) -> SearchService:
    root = tmp_path_factory.mktemp("de_search")
    samples = root / "samples" / "de" / "gesetze"
    samples.mkdir(parents=True)
    shutil.copy(sample_dir / "de" / "gesetze" / "gg.md", samples / "gg.md")
    layout, encoder = Layout(root / "home"), get_encoder("hashing")
    [gg] = build_all(layout, root / "samples", acts=("de:gg",))
    index_step(layout, act_id="de:gg", version=gg.version, encoder=encoder,
               backend=open_embedded_backend(layout, encoder=encoder, lang="de"))
    cases, _ = synced_cases(sample_dir, root / "oldp")
    case_index_step(layout, case_chunks(cases), encoder=encoder)
    pl = open_embedded_backend(layout, encoder=encoder, lang="pl")
    return SearchService(pl, backend_for=lambda lang: open_embedded_backend(layout, encoder=encoder, lang=lang))


def test_german_act_uses_the_german_backend(service: SearchService):
    page = service.search("Würde des Menschen unantastbar", acts=["de:gg"], retriever="bm25", k=3)
    assert page.hits[0].article_id == "de:gg:art:1" and set(page.versions) == {"de:gg"}


def test_cases_target(service: SearchService):
    page = service.search("Anhörungsrüge rechtliches Gehör Revision", target="cases", retriever="bm25", k=3)
    assert page.hits[0].article_id == "de:case:bgh-2018-04-10-4-str-32817"
    assert {h.act_id for h in page.hits} == {CASES_ACT}


def test_both_mixes_by_the_query_class(service: SearchService):
    law = service.search("Welche Grundrechte schützt Artikel 5 des Grundgesetzes, Meinungsfreiheit?",
                         target="both", retriever="bm25", k=10)
    assert law.classification.label == "law" and law.quotas == {"statutes": 7, "cases": 3}
    assert [h.act_id for h in law.hits].count("de:gg") == 7 and law.hits[0].act_id == "de:gg"
    case = service.search("Urteil des BGH zur Anhörungsrüge", target="both", retriever="bm25", k=10)
    assert case.classification.label == "case" and case.hits[0].act_id == CASES_ACT
    # 6 decisions only: the case quota (7) is backfilled with statutes
    assert case.quotas == {"statutes": 4, "cases": 6} and len(case.hits) == 10


@pytest.mark.parametrize("kw,message", [
    ({"acts": ["pl:kc", "de:gg"]}, "one language"),
    ({"acts": ["fr:cc"], "target": "cases"}, "Polish and German law only"),  # a language without case law
    ({"target": "everything"}, "target must be"),
    ({"acts": [CASES_ACT], "target": "both"}, "chosen by target"),
])
def test_bad_requests(service: SearchService, kw, message):
    with pytest.raises(InvalidRequest, match=message):
        service.search("Frage", **kw)


def test_an_unnamed_search_stays_in_its_jurisdiction(service: SearchService):
    """A search naming no act searches the default language's (Polish) statutes only: here the
    database holds German acts and cases alone, so it is refused instead of answering with
    German paragraphs analysed as Polish (before, "Kto jest konsumentem?" ranked BGB § 13 4th)."""
    with pytest.raises(InvalidRequest, match="no pl: statute is indexed"):
        service.search("Würde des Menschen unantastbar", retriever="bm25", k=3)
    page = service.search("Würde des Menschen unantastbar", acts=["de:gg"], retriever="bm25", k=3)
    assert {h.act_id for h in page.hits} == {"de:gg"}
