"""One profile per search language: everything retrieval does differently for Polish and German.

Why one table: the language used to be decided by ``if lang == "de"`` branches spread over the
analysers, the index build, the Elasticsearch backend, the act router and the search service.
Each branch now reads a field of :class:`LanguageProfile`, so a language is added (or a choice
changed) in one row here and every layer sees the same answer.

What a profile does NOT hold: which acts a language has. Those are the act registry's rows
(``schemas/acts.toml``, :func:`schemas.acts.registry`), read at call time so that a registry set
for a test or a run (``$LEXPIPE_ACT_REGISTRY``) is what retrieval sees too. The collections that
are not registry rows, the court decisions of a language (``schemas.cases.CASES_ACT`` =
``de:cases``, ``PL_CASES_ACT`` = ``pl:cases``), are named here as the language's ``cases_act``:
case law is per language, and a language without it answers ``target=cases/both`` with a refusal
naming the languages that have it (:func:`case_law_languages`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from schemas.cases import CASES_ACT, PL_CASES_ACT
from pipelines.retrieval.fusion import HybridConfig
from schemas import elasticsearch as es_schema

DEFAULT_LANGUAGE = "pl"  # a search naming no act and no case-law target searches this language


class UnknownLanguage(KeyError, ValueError):
    """A language without a :class:`LanguageProfile` (the message lists the known ones)."""

    def __str__(self) -> str:  # KeyError would print the message with quotes
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class LanguageProfile:
    code: str  # ISO 639-1, also the act id prefix of its acts ("pl" of "pl:kc")
    name: str  # in messages: "court decisions exist for Polish and German law only"
    # project analyser (analyzers.get_analyzer): default variant and the base variants it knows
    analyzer: str
    analyzer_variants: tuple[str, ...]
    stop_words: str  # module whose STOP_WORDS are the language's stop words (spaCy's list)
    # Elasticsearch analyser of ``text`` / ``heading_path``; when it needs a plugin the cluster
    # lacks, the plain standard+lowercase analyser (``schemas.elasticsearch.PLAIN_ANALYZER``)
    es_analyzer: str
    es_analyzer_plugin: str | None = None
    # hybrid fusion when no trained model (reranker, section fusion) applies
    hybrid: HybridConfig = HybridConfig()
    # query_prep.strip_boilerplate before gAIus on the embedded backend (Polish exam lead-ins)
    strip_exam_lead_ins: bool = False
    # the long-question section fusion (section_fusion.py) may serve hybrid, if its model is shipped
    section_fusion: bool = False
    # the court-decision collection of the language, if any (search target=cases/both)
    cases_act: str | None = None
    # a statute search naming no act is restricted to the language's statutes: the embedded
    # database holds the other languages' acts and the case collection too, and a Polish question
    # must not rank BGB § 13 "Verbraucher" above art. 22^1 k.c. (seen before this rule held for
    # Polish too); another jurisdiction is searched only when an act of it is named
    scope_unnamed_search: bool = True
    # a search naming no act but whose query names acts of the language (act_mentions: titles in
    # any case, citations "k.p.c.") searches those acts only. Measured for Polish (exam questions
    # name their code); off for German until measured on GerLayQA
    detect_named_acts: bool = False

    def es_text_analyzer(self, has_plugin: bool) -> str:
        """The analyser of ``text`` / ``heading_path``: ``es_analyzer``, or the plain one when it
        needs a plugin that is not installed on every node."""
        if self.es_analyzer_plugin is None or has_plugin:
            return self.es_analyzer
        return es_schema.PLAIN_ANALYZER


PROFILES: Mapping[str, LanguageProfile] = MappingProxyType({
    "pl": LanguageProfile(
        code="pl", name="Polish",
        # plain lowercase tokens beat every lemmatiser/stemmer on the Civil Code exam questions
        # (analyzers.DEFAULT_VARIANTS keeps the measurement)
        analyzer="pl_lower",
        analyzer_variants=("pl_simplemma", "pl_stempel", "pl_stempel_polimorf", "pl_morfeusz", "pl_lower"),
        stop_words="spacy.lang.pl.stop_words",
        es_analyzer="polish", es_analyzer_plugin=es_schema.STEMPEL_PLUGIN,
        hybrid=HybridConfig(),  # z-score, tuned on the 2012–2020 exam questions
        strip_exam_lead_ins=True,
        cases_act=PL_CASES_ACT,  # SAOS judgments (pipelines/case_law/pl)
        detect_named_acts=True,
    ),
    "de": LanguageProfile(
        code="de", name="German",
        analyzer="de_lookup",
        analyzer_variants=("de_lookup", "de_lower"),
        stop_words="spacy.lang.de.stop_words",
        es_analyzer="german",
        # RRF of lexical and dense only: nothing tuned on Polish questions, and no gAIus leg (its
        # windows are as long as the query; GerLayQA's lay questions run ~300 tokens)
        hybrid=HybridConfig(method="rrf", weights=(("bm25", 1.0), ("dense", 1.0))),
        section_fusion=True,
        cases_act=CASES_ACT,
    ),
})


def profile(lang: str) -> LanguageProfile:
    """The profile of ``lang`` (:class:`UnknownLanguage` naming the known ones otherwise)."""
    try:
        return PROFILES[lang]
    except KeyError:
        raise UnknownLanguage(f"no search language {lang!r}; known: {', '.join(PROFILES)}") from None


def language_of(act_id: str) -> str:
    """The language an act is searched in: its registry row's ``language``; for an act that is no
    registry row (the case collection, an act of a test), the language of its id prefix."""
    from schemas.acts import registry

    reg = registry()
    if act_id in reg:
        return reg.get(act_id).language
    return profile(act_id.split(":", 1)[0]).code


def case_law_languages() -> tuple[str, ...]:
    """The languages whose profile has a court-decision collection (what target=cases/both can
    search), in profile order."""
    return tuple(p.code for p in PROFILES.values() if p.cases_act)


def cases_acts() -> tuple[str, ...]:
    """Every language's court-decision collection (``pl:cases``, ``de:cases``)."""
    return tuple(p.cases_act for p in PROFILES.values() if p.cases_act)
