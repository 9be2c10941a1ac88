"""Language profiles: every Polish/German choice of retrieval reads one row of ``languages.py``,
and a language's acts come from the act registry (read at call time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.retrieval.act_router import known_acts
from pipelines.retrieval.case_index import CASES_ACT, PL_CASES_ACT
from pipelines.retrieval.fusion import HybridConfig
from pipelines.retrieval.languages import (
    DEFAULT_LANGUAGE, PROFILES, UnknownLanguage, case_law_languages, cases_acts, language_of, profile,
)
from schemas import elasticsearch as es_schema
from schemas.acts import DEFAULT_REGISTRY
from registry_rows import KK  # tests/, on sys.path via conftest



def _shipped_pl() -> tuple[str, ...]:
    """The Polish acts of schemas/acts.toml (k.c., and the codes of issue 14 once shipped)."""
    from schemas.acts import registry

    return tuple(sorted(a.id for a in registry().of_language("pl")))


def test_known_acts_are_the_registry_acts_of_the_language():
    # the registry's acts of the language, then its case collection (Polish: pl:cases, SAOS)
    assert "pl:kc" in known_acts("pl") and known_acts("pl") == (*_shipped_pl(), PL_CASES_ACT)
    # what the German statute parser's KNOWN_ACTS gave before the registry, sorted, then the cases
    assert known_acts("de") == ("de:bgb", "de:gg", "de:hgb", "de:stgb", "de:stpo", "de:zpo", CASES_ACT)
    assert known_acts("fr") == ()


def test_known_acts_follow_a_swapped_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "acts.toml"
    header, *rows = DEFAULT_REGISTRY.read_text(encoding="utf-8").split("\n[[act]]\n")
    without_kk = "\n[[act]]\n".join([header, *(r for r in rows if not r.startswith('id = "pl:kk"'))])
    path.write_text(without_kk + KK, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    assert "pl:kk" in known_acts("pl") and known_acts("pl") == (*sorted({*_shipped_pl(), "pl:kk"}), PL_CASES_ACT)
    assert language_of("pl:kk") == "pl"
    only_kc = tmp_path / "only_kc.toml"  # another file: the registry is cached per (path, mtime)
    kc = [r for r in rows if r.startswith('id = "pl:kc"')]
    only_kc.write_text("\n[[act]]\n".join([header, *kc]), encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(only_kc))
    assert known_acts("pl") == ("pl:kc", PL_CASES_ACT)
    assert known_acts("de") == (CASES_ACT,)  # no German statute registered: the case collection only
    monkeypatch.delenv("LEXPIPE_ACT_REGISTRY")
    assert known_acts("pl") == (*_shipped_pl(), PL_CASES_ACT)


def test_language_of_an_act():
    assert [language_of(a) for a in ("pl:kc", "de:gg", CASES_ACT, "pl:kk", PL_CASES_ACT)] == ["pl", "de", "de", "pl", "pl"]
    with pytest.raises(UnknownLanguage, match="no search language 'fr'") as err:
        language_of("fr:cc")
    assert isinstance(err.value, KeyError) and isinstance(err.value, ValueError)


def test_the_profiles_hold_what_the_branches_decided():
    pl, de = profile("pl"), profile("de")
    assert DEFAULT_LANGUAGE == "pl"  # a language, never an act, is the default of a search naming none
    # case law is per language: Polish SAOS judgments, German Open Legal Data decisions
    assert (case_law_languages(), cases_acts()) == (("pl", "de"), (PL_CASES_ACT, CASES_ACT))
    assert (pl.cases_act, de.cases_act) == (PL_CASES_ACT, CASES_ACT)
    assert (pl.strip_exam_lead_ins, de.strip_exam_lead_ins) == (True, False)
    assert (pl.section_fusion, de.section_fusion) == (False, True)
    assert (pl.scope_unnamed_search, de.scope_unnamed_search) == (True, True)
    assert pl.hybrid == HybridConfig()
    assert de.hybrid == HybridConfig(method="rrf", weights=(("bm25", 1.0), ("dense", 1.0)))
    with pytest.raises(UnknownLanguage):
        profile("en")


def test_index_build_reads_the_profiles():
    from pipelines.retrieval.index_build import hybrid_config, load_section_fusion
    from pipelines.retrieval.section_fusion import SectionFusion, default_model_path

    assert hybrid_config("de") == PROFILES["de"].hybrid and hybrid_config("pl") == HybridConfig()
    assert hybrid_config("en") == HybridConfig()  # a language without a profile: the default fusion
    encoder = SectionFusion.load(default_model_path("de")).provenance["encoder"]  # the shipped model's
    assert load_section_fusion("de", encoder) is not None
    assert load_section_fusion("pl", encoder) is None and load_section_fusion("en", encoder) is None


def test_analysers_and_stop_words_come_from_the_profiles():
    from spacy.lang.de.stop_words import STOP_WORDS as DE
    from spacy.lang.pl.stop_words import STOP_WORDS as PL

    from pipelines.retrieval.analyzers import BASE_VARIANTS, DEFAULT_VARIANTS, stop_words

    assert DEFAULT_VARIANTS == {"pl": "pl_lower", "de": "de_lookup"}
    assert BASE_VARIANTS["de"] == ("de_lookup", "de_lower") and "pl_stempel" in BASE_VARIANTS["pl"]
    assert stop_words("pl") == {w.lower() for w in PL} and stop_words("de") == {w.lower() for w in DE}
    with pytest.raises(ValueError, match="no stop words for 'en'"):
        stop_words("en")


@pytest.mark.parametrize("lang", sorted(PROFILES))
@pytest.mark.parametrize("has_plugin", [True, False])
def test_elasticsearch_analyser_of_a_profile_is_the_schema_one(lang: str, has_plugin: bool):
    """The index bodies do not change: a profile's analyser is what ``schemas.elasticsearch``
    picks for the language (Polish: ``polish`` with stempel, else the plain analyser)."""
    lp = profile(lang)
    has_stempel = has_plugin and lp.es_analyzer_plugin == es_schema.STEMPEL_PLUGIN
    assert lp.es_text_analyzer(has_plugin) == es_schema.language_analyzer(lang, has_stempel)
    assert es_schema.index_body(384, has_stempel, lang, text_analyzer=lp.es_text_analyzer(has_plugin)) == \
        es_schema.index_body(384, has_stempel, lang)
