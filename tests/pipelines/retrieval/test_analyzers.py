"""Lexical analysers for BM25 (pipelines.retrieval.analyzers): spaCy components, Polish and German
lemmas/stems, folding, legal numbering, and one code path for index and query time."""

from __future__ import annotations

import pytest
import spacy
from spacy.language import Language

from pipelines.retrieval.analyzers import (
    ANALYZER_VERSION, DEFAULT_VARIANTS, MAX_PIECE_CHARS, Analyzer, _pieces, canonical_variant,
    fold_term, get_analyzer)

SAMPLE = [
    "§ 1. Jeżeli strony prowadzą negocjacje w celu zawarcia oznaczonej umowy, umowa zostaje "
    "zawarta, gdy strony dojdą do porozumienia co do wszystkich jej postanowień.",
    "Przepisy art. 385^1–385^3 stosuje się do umów zawieranych z konsumentem; art. 109¹ § 2.",
    "",
    "   ",
    "(uchylony)",
    "Zgodnie z Kodeksem cywilnym, oświadczenie woli złożone konsumentowi 05.01.2022 r.:",
]


@pytest.fixture(scope="module")
def simplemma_pl() -> Analyzer:
    return get_analyzer("pl", "pl_simplemma")


@pytest.fixture(scope="module")
def stempel_pl() -> Analyzer:
    return get_analyzer("pl", "pl_stempel")


@pytest.fixture(scope="module")
def lookup_de() -> Analyzer:
    return get_analyzer("de", "de_lookup")


def one(analyzer: Analyzer, word: str) -> str:
    toks = analyzer.analyze(word)
    assert len(toks) == 1, toks
    return toks[0]


# --- Polish --------------------------------------------------------------------------------------

def test_polish_inflections_collapse_with_simplemma(simplemma_pl):
    assert {one(simplemma_pl, w) for w in ("umowa", "umowy", "umowę", "umową", "Umowie")} == {"umowa"}
    assert {one(simplemma_pl, w) for w in ("konsument", "konsumenta", "konsumentowi",
                                            "konsumentem")} == {"konsument"}
    assert one(simplemma_pl, "Kodeksem") == "kodeks"


def test_polish_inflections_collapse_with_morfeusz():
    """Morfeusz is optional (not in the lock: its dictionary licence is unverified). Without it
    the variant must fail loudly, naming the package; with it, lemmas must collapse."""
    try:
        import morfeusz2  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="morfeusz2"):
            get_analyzer("pl", "pl_morfeusz").analyze("umowy")
        return
    a = get_analyzer("pl", "pl_morfeusz")
    assert {one(a, w) for w in ("umowa", "umowy", "umowę", "umową")} == {"umowa"}
    assert {one(a, w) for w in ("konsument", "konsumenta", "konsumentowi")} == {"konsument"}
    assert one(a, "rzeczy") == one(a, "rzecz") == "rzecz"
    assert one(a, "posiadania") == one(a, "posiadanie") == "posiadanie"


def test_stempel_stems_like_lucene(stempel_pl):
    assert one(stempel_pl, "kodeksem") == "kodeks"
    assert one(stempel_pl, "prokury") == one(stempel_pl, "prokura") == "prokura"
    assert one(stempel_pl, "spadku") == one(stempel_pl, "spadek") == "spadek"
    assert one(stempel_pl, "konsumentowi") == one(stempel_pl, "konsument") == "konsument"
    # Lucene's StempelFilter leaves words of <= 3 characters alone (the trie mangles them)
    assert stempel_pl.analyze("a w z art") == ["a", "w", "z", "art"]


def test_default_polish_analyser_is_cached_and_lowercases():
    a = get_analyzer("pl")
    assert a is get_analyzer("pl", DEFAULT_VARIANTS["pl"]) is get_analyzer("pl", None)
    assert all(t == t.lower() for t in a.analyze("UMOWA Sprzedaży KONSUMENTA"))


def test_stopwords_modifier(simplemma_pl):
    stop = get_analyzer("pl", "pl_simplemma+stop")
    text = "Umowa jest zawarta, gdy strony się porozumiały i w tym czasie"
    assert {"być", "się", "i", "w", "gdy"} <= set(simplemma_pl.analyze(text))
    out = stop.analyze(text)
    assert not {"się", "i", "w", "gdy", "jest"} & set(out)
    assert {"umowa", "strona"} <= set(out)


def test_keep_modifier_emits_surface_and_lemma():
    a = get_analyzer("pl", "pl_simplemma+keep")
    assert a.analyze("umowy umowa") == ["umowy", "umowa", "umowa"]


# --- German --------------------------------------------------------------------------------------

def test_german_lookup_lemmas_lowercased(lookup_de):
    assert one(lookup_de, "Verträge") == one(lookup_de, "Vertrag") == "vertrag"
    assert one(lookup_de, "Kaufvertrag") == "kaufvertrag"
    assert one(lookup_de, "Häuser") == "haus"
    # lowercase query text still finds the capitalised table entry
    assert one(lookup_de, "verträge") == "vertrag"
    assert lookup_de.analyze("gemäß § 433 Abs. 2 BGB") == ["gemäß", "§", "433", "abs", "2", "bgb"]


def test_german_pipeline_uses_spacy_lookup_lemmatizer(lookup_de):
    assert "lemmatizer" in lookup_de.nlp.pipe_names
    assert lookup_de.nlp.get_pipe("lemmatizer").mode == "lookup"
    assert lookup_de.nlp.pipe_names[-1] == "lexpipe_terms"


# --- folding -------------------------------------------------------------------------------------

def test_fold():
    assert Analyzer.fold(["zażółć", "gęślą", "jaźń", "łódź"]) == ["zazolc", "gesla", "jazn", "lodz"]
    assert Analyzer.fold(["straße", "verträge", "häuser", "öl", "über"]) == [
        "strasse", "vertrage", "hauser", "ol", "uber"]
    assert fold_term("109^1") == "109^1" and fold_term("§") == "§"
    assert Analyzer.fold([]) == []


@pytest.mark.parametrize("lang,variant", [("pl", "pl_simplemma"), ("pl", "pl_lower"),
                                          ("de", "de_lookup")])
def test_fold_variant_equals_fold_of_analysis(lang, variant):
    plain, folded = get_analyzer(lang, variant), get_analyzer(lang, variant + "+fold")
    for text in SAMPLE + ["Die Verträge über Häuser an der Straße"]:
        assert folded.analyze(text) == plain.fold(plain.analyze(text))


def test_folded_query_without_diacritics_matches_folded_index():
    a = get_analyzer("pl", "pl_lower+fold")
    assert a.analyze("oświadczenie woli złożone") == a.analyze("oswiadczenie woli zlozone")


# --- one path at index and query time -------------------------------------------------------------

@pytest.mark.parametrize("lang,variant", [("pl", None), ("pl", "pl_simplemma+stop+fold"),
                                          ("pl", "pl_stempel"), ("de", None)])
def test_index_and_query_paths_are_identical(lang, variant):
    a = get_analyzer(lang, variant)
    texts = SAMPLE * 3 + ["umowa " * (MAX_PIECE_CHARS // 3)]  # one text split into pieces
    one_by_one = [a.analyze(t) for t in texts]
    assert a.analyze_many(texts) == one_by_one
    assert a.analyze_many(texts, batch_size=1) == one_by_one
    assert a.analyze_many(iter(texts), batch_size=1000) == one_by_one
    assert get_analyzer(lang, variant) is a  # cached: the same object on both sides


# --- legal numbering -----------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["pl_lower", "pl_simplemma", "pl_stempel"])
def test_legal_numbering_tokens(variant):
    a = get_analyzer("pl", variant)
    cite = a.analyze("art. 109^1 § 2")
    assert cite[1:] == ["109^1", "§", "2"]
    # superscript digits, capitalised "Art.", no space after "§", trailing dot: same terms
    assert a.analyze("Art. 109¹ §2.") == cite
    assert a.analyze("art. 385^1–385^3")[1:] == ["385^1", "385^3"]
    assert a.analyze("art. 1031^1. § 1^1.")[1:] == ["1031^1", "§", "1^1"]
    assert "5a" in a.analyze("pkt 5a")
    assert a.analyze("05.01.2022 r.")[:3] == ["05", "01", "2022"]
    assert "k.c" in a.analyze("art. 415 k.c.")


def test_citation_in_query_matches_reference_in_article(simplemma_pl):
    article = "Do prokury stosuje się przepisy art. 109^1 § 2 oraz art. 109¹ § 1."
    query = "art. 109¹ § 2"
    assert set(simplemma_pl.analyze(query)) <= set(simplemma_pl.analyze(article))


# --- edge cases ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", " ", "\n\t ", "...", "– , ; ( ) „ ”"])
def test_empty_and_punctuation_only(text):
    assert get_analyzer("pl").analyze(text) == []
    assert get_analyzer("de").analyze(text) == []
    assert get_analyzer("pl").analyze_many([text, text]) == [[], []]
    assert get_analyzer("pl").analyze_many([]) == []


def test_very_long_text_beyond_spacy_max_length():
    a = get_analyzer("pl", "pl_lower")
    unit = "Umowa najmu lokalu 109^1 zawarta. "
    n = 1_100_000 // len(unit) + 1
    text = unit * n
    assert len(text) > a.nlp.max_length  # spaCy alone would refuse this text
    out = a.analyze(text)
    assert out == a.analyze(unit) * n
    assert a.analyze_many([text])[0] == out


def test_pieces_cut_at_whitespace():
    text = ("słowo " * 50_000).strip()
    pieces = _pieces(text, limit=1000)
    assert "".join(pieces) == text
    assert all(len(p) <= 1000 for p in pieces)
    assert all(p.endswith(" ") for p in pieces[:-1])


# --- spaCy components and ids ---------------------------------------------------------------------

def test_components_are_real_spacy_components(simplemma_pl, stempel_pl):
    assert simplemma_pl.nlp.pipe_names == ["lexpipe_pl_simplemma", "lexpipe_terms"]
    assert stempel_pl.nlp.pipe_names == ["lexpipe_pl_stempel", "lexpipe_terms"]
    for name in ("lexpipe_pl_simplemma", "lexpipe_pl_stempel", "lexpipe_pl_morfeusz",
                 "lexpipe_terms", "lexpipe_lookup_case"):
        assert Language.has_factory(name)
    # usable on their own in any pipeline: the lemma lands in token.lemma_
    nlp = spacy.blank("pl")
    nlp.add_pipe("lexpipe_pl_simplemma")
    assert [t.lemma_ for t in nlp("umowę konsumenta")] == ["umowa", "konsument"]
    nlp.add_pipe("lexpipe_terms", config={"fold": True})
    assert nlp("Umowę zawarł konsument, art. 5")._.terms == ["umowa", "zawrzec", "konsument",
                                                            "artykul", "5"]


def test_ids_name_lang_variant_version_and_libraries():
    a, b = get_analyzer("pl", "pl_simplemma"), get_analyzer("pl", "pl_simplemma+fold")
    assert a.id.startswith(f"lexpipe-analyzer/pl/pl_simplemma/v{ANALYZER_VERSION}/")
    assert "simplemma=" in a.id and "spacy=" in a.id
    assert a.id != b.id
    assert get_analyzer("de").id.startswith("lexpipe-analyzer/de/de_lookup/")
    assert "spacy-lookups-data=" in get_analyzer("de").id
    assert get_analyzer("pl", "pl_simplemma").id == a.id  # stable


def test_variant_names():
    assert canonical_variant("pl", "simplemma+fold+stop") == "pl_simplemma+stop+fold"
    assert canonical_variant("pl") == DEFAULT_VARIANTS["pl"]
    assert get_analyzer("pl", "simplemma") is get_analyzer("pl", "pl_simplemma")
    with pytest.raises(ValueError):
        get_analyzer("pl", "pl_snowball")
    with pytest.raises(ValueError):
        get_analyzer("pl", "pl_simplemma+bogus")
    with pytest.raises(ValueError):
        get_analyzer("xx")


# -- the memo in front of the pipeline (Analyzer.analyze) gives the pipeline's terms ---------------

_MEMO_CASES = {
    "pl": ["Art. 109¹. § 1. Zgodnie z art. 5–7 k.c. (uchylony) Dz.U.\xa0z 2024 r. poz.\u00a01061,\n"
           "umowa — „sprzedaży” 3) lit. a)  zł\tKto   jest konsumentem?  m.in. 385^1–385^3",
           "§ 2.\u2009Osoba fizyczna…\u200bnie  ponosi; art.415k.c. ,, ust. 1 pkt 2a"],
    "de": ["§ 573b Abs. 1 Nr. 2 BGB i.V.m. Art. 3 GG; z.B.\nder Vermieter – „Teilkündigung“ (weggefallen)",
           "(1) Der Mieter\u00a0kann ... §§ 3 bis 6 a.F. Verträge\tZahlte er? 1. Januar 2012;\x0bEnde"],
}


@pytest.mark.parametrize("lang,variant,real", [("pl", None, True), ("pl", "pl_simplemma+keep+fold", False),
                                               ("de", None, True), ("de", "de_lookup+stop+fold", False)])
def test_memoised_analysis_equals_the_pipeline(lang, variant, real, sample_dir):
    """Every pipeline step is a function of one whitespace-delimited piece, so the memo's terms
    must equal the whole pipeline's: on odd whitespace and punctuation, and on real statute text
    (pages of the Civil Code PDF, paragraphs of the BGB and GG)."""
    from pipelines.retrieval.analyzers import canonical_variant, build_pipeline, Analyzer

    fresh = Analyzer(lang, canonical_variant(lang, variant), build_pipeline(lang, variant))
    texts = list(_MEMO_CASES[lang])
    if real and lang == "de":
        for name in ("bgb.md", "gg.md"):
            body = (sample_dir / "de" / "gesetze" / name).read_text(encoding="utf-8")
            texts += [p for p in body.split("\n\n") if p.strip()][:150]
    elif real:
        import pypdfium2
        pdf = pypdfium2.PdfDocument(sample_dir / "pl" / "isap" / "D19640093Lj_2024-12-19.pdf")
        texts += [pdf[i].get_textpage().get_text_range() for i in (0, 1, 20, 120)]
    for t in texts:
        assert fresh.analyze(t) == fresh.analyze_pipeline(t), t[:200]
    assert fresh.analyze_many(texts[:20]) == [fresh.analyze_pipeline(t) for t in texts[:20]]
