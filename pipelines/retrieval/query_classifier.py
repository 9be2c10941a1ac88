"""Is a query after statutes ("law") or court decisions ("case")? And which language's are they?

Why: the RWTH legal assistant (``../shared/papers/rwth-rag-legal-assistant.txt``) retrieves 70 % of
its context from the collection the query is classified into and 30 % from the other, and 50/50
when the classifier gives no usable answer. Its classifier is an LLM prompt; we use that prompt
when an LLM endpoint is configured and a lexical classifier otherwise (and whenever the LLM fails),
so the mix works offline.

The lexical classifier scores explicit evidence only: signs that the asker wants decisions (court
names, file numbers, ECLIs, "Urteil", "Rechtsprechung", "wyrok", "orzecznictwo", "sygn. akt", …)
against signs that they want the statute text (§/Art. citations, "Gesetz", "Vorschrift",
"art. 415 k.c.", "ustawa", "przepis", …). Without case evidence a query is "law": a layperson's
question about their situation ("Mein Vermieter …", "Mój pracodawca …") is answered from the
statute first, and GerLayQA's 2,151 questions, all answered by a BGB §, are exactly that kind.
The cues are per language (:data:`CUES`); a caller that knows the query's language passes it,
otherwise every language's cues count (they are words of their language and rarely fire on the
other's).

Case law is per language (``de:cases``, ``pl:cases``), so a case search that names no act needs
the query's language: :func:`detect_query_language` weighs letters only one language has (ą ę ł
ś ż … / ä ö ü ß), stop words only one language has (spaCy's lists), and the language's own
law/case cues.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence

QueryClass = Literal["law", "case", "both"]
LABELS: tuple[str, ...] = ("law", "case", "both")
Cue = tuple[re.Pattern[str], float, str]


def _cues(specs) -> tuple[Cue, ...]:
    return tuple((re.compile(p, re.IGNORECASE if ci else 0), w, n) for p, w, n, ci in specs)


# (pattern, weight, name): weights are log-odds-like evidence; tuned by hand on the wording of the
# cues, never on an evaluation set (there is no labelled case-query set to tune on).
_CASE_CUES: tuple[Cue, ...] = _cues([
        # Aktenzeichen such as "VI ZR 194/17", "4 StR 328/17", "1 BvR 357/05", "3 U 12/20"
        (r"\b(?:[IVX]{1,5}[a-z]?|\d{1,2})\s+[A-Z][A-Za-z]{0,3}\s+\d{1,5}/\d{2}(?:\d{2})?\b", 3.0, "file number", False),
        (r"\bECLI:[A-Z]{2}:", 3.0, "ECLI", False),
        (r"\b(?:BGH|BVerfG|BAG|BSG|BFH|BVerwG|BPatG|EuGH|EGMR|OLG|OVG|VGH|LAG|LSG|FG|KG)\b", 2.0, "court", False),
        (r"\b(?:Bundesgerichtshof|Bundesverfassungsgericht|Bundesarbeitsgericht|Bundessozialgericht|"
         r"Bundesfinanzhof|Bundesverwaltungsgericht|Oberlandesgericht|Landgericht|Amtsgericht|"
         r"Verwaltungsgericht|Arbeitsgericht|Sozialgericht|Finanzgericht|Gerichtshof)\w*", 1.5, "court", True),
        (r"\b(?:Urteil|Urteile|Urteils|Urteilen|Gerichtsurteil\w*|Grundsatzurteil\w*)\b", 2.5, "judgment", True),
        (r"\b(?:Beschluss|Beschlüsse|Beschlusses)\b", 1.0, "order", True),
        (r"\b(?:Rechtsprechung|höchstrichterlich\w*|Präzedenzf\w+|Leitsatz|Leitsätze|Aktenzeichen|Az\.)",
         2.5, "case law", True),
        (r"\b(?:Gerichtsentscheidung\w*|Entscheidung(?:en)? (?:des|der|eines|zum|zur)\s+\w*(?:gericht|hof)\w*)",
         2.0, "decision", True),
        (r"\b(?:entschieden|geurteilt|verurteilt|Richter\w*|Revision\w*|Vorinstanz\w*|Kläger\w*|Beklagte\w*)",
         1.0, "litigation", True),
        (r"\b(?:Fälle|Urteilsbegründung|Tenor|Tatbestand|Entscheidungsgründe)\b", 1.0, "decision parts", True),
    ])
_LAW_CUES: tuple[Cue, ...] = _cues([
        (r"(?:§§?|\bArt\.|\bArtikel)\s*\d+", 1.5, "section/article", False),
        (r"\b(?:Paragraph\w*|Paragrafen?)\b", 1.5, "section/article", True),
        (r"\b(?:BGB|GG|HGB|StGB|StPO|ZPO)\b", 1.0, "code", False),
        (r"\b(?:Gesetz\w*|gesetzlich\w*|Vorschrift\w*|Norm(?:en)?|Wortlaut|Gesetzestext|Gesetzbuch\w*)\b",
         1.0, "statute", True),
        (r"\b(?:regelt|geregelt|besagt|vorgeschrieben|Frist\w*|Anspruch|Ansprüche)\b", 0.5, "rule", True),
    ])
# Polish: the same kinds of evidence in Polish wording. "uchwała" and "postanowienie" weigh little:
# they are also a company's resolution ("uchwała wspólników") and a contract's clause
# ("postanowienie umowy"); "orzeczenie" also a medical or disability certificate.
_PL_CASE_CUES: tuple[Cue, ...] = _cues([
        # sygnatury: "II AKa 105/11", "I CSK 123/10", "III CZP 111/10", "XVII AmC 1331/09", "I SA/Po 915/09"
        (r"\b(?:[IVX]{1,5}|\d{1,2})\s+[A-Z][A-Za-z]{0,4}(?:/[A-Z][a-z]{1,3})?\s+\d{1,5}/\d{2}(?:\d{2})?\b",
         3.0, "sygnatura", False),
        # the courts' own prefixes without a division number: KIO, TK (K, SK, P, U, Kp, Ts, Tw), SN (SNO)
        (r"\b(?:KIO(?:/UZP)?|SK|Kp|Ts|Tw|Tp|Pp|SNO|K|P|U)\s+\d{1,5}/\d{2}(?:\d{2})?\b", 3.0, "sygnatura", False),
        (r"\bsygn(?:\.|atur\w*)(?:\s*akt)?", 2.5, "sygnatura", True),
        (r"\b(?:SN|TK|KIO|NSA|WSA|TSUE|ETPC|ETPCz)\b", 2.0, "court", False),
        (r"\b(?:Sąd\w*\s+Najwyższ\w*|Trybunał\w*\s+Konstytucyjn\w*|Krajow\w*\s+Izb\w*\s+Odwoławcz\w*|"
         r"Naczeln\w*\s+Sąd\w*\s+Administracyjn\w*|Trybunał\w*\s+Sprawiedliwości)", 2.0, "court", True),
        (r"\bsąd\w*\s+(?:apelacyjn|okręgow|rejonow|administracyjn|wojewódzk|pracy)\w*", 1.5, "court", True),
        (r"\b(?:wyrok\w*|orzecznictw\w*|judykatur\w*|precedens\w*)", 2.5, "judgment", True),
        (r"\b(?:orzeczeni\w*|orzeczeń|orzekł\w*|orzeka\w*)", 2.0, "judgment", True),
        (r"\b(?:uchwał\w*)", 1.0, "resolution", True),
        (r"\b(?:postanowieni\w*)", 1.0, "order", True),
        (r"\b(?:skarg\w*\s+kasacyjn\w*|kasacj\w*|apelacj\w*|zażaleni\w*|sędzi\w*|skazan\w*|oskarżon\w*|"
         r"pozwan\w*|rozstrzygnięci\w*|rozstrzygn\w*|zdani\w*\s+odrębn\w*)", 1.0, "litigation", True),
        (r"\b(?:sentencj\w*|uzasadnieni\w*\s+(?:wyroku|orzeczenia|postanowienia|uchwały)|tez[aęy]\b|tezie)",
         1.0, "decision parts", True),
    ])
_PL_LAW_CUES: tuple[Cue, ...] = _cues([
        (r"\bart\.\s*\d+|\bartyku\w*\s+\d+", 1.5, "article", True),
        (r"(?:§\s*\d+|\bust\.\s*\d+|\bpkt\.?\s*\d+)", 1.0, "article", True),
        (r"\b(?:k\.\s?c|k\.\s?p\.\s?c|k\.\s?k|k\.\s?p\.\s?k|k\.\s?p|k\.\s?r\.\s?o|k\.\s?s\.\s?h)\.|"
         r"\b(?:kc|kpc|kk|kpk|krio|ksh)\b", 1.0, "code", True),
        (r"\b(?:kodeks\w*|ustaw\w*|przepis\w*|rozporządzeni\w*|konstytucj\w*|regulacj\w*|brzmieni\w*|"
         r"norm[aęy]\b)", 1.0, "statute", True),
        (r"\b(?:reguluje|regulują|stanowi|przewiduje|przewidują|termin\w*|roszczeni\w*|obowiąz\w*|"
         r"uprawnieni\w*)", 0.5, "rule", True),
    ])
# per language: (case cues, law cues)
CUES: dict[str, tuple[tuple[Cue, ...], tuple[Cue, ...]]] = {
    "de": (_CASE_CUES, _LAW_CUES),
    "pl": (_PL_CASE_CUES, _PL_LAW_CUES),
}
# net evidence for "case": "Urteil"/"wyrok" or a court abbreviation (BGH, SN) alone reaches it; a
# court's full name alone does not ("das Testament liegt beim Amtsgericht" describes the asker's
# situation, as does "sprawa toczy się przed sądem rejonowym")
CASE_THRESHOLD = 2.0


@dataclass(frozen=True)
class Classification:
    label: QueryClass
    score: float  # net evidence towards "case" (lexical); 0.0 for the LLM
    method: str  # "lexical" | "llm" | "lexical (llm failed: …)"
    evidence: tuple[str, ...] = ()


def _evidence(query: str, cues) -> tuple[float, list[str]]:
    total, names = 0.0, []
    for pattern, weight, name in cues:
        found = pattern.findall(query)
        if found:
            # repeated mentions count, with diminishing weight (a decision quoted at length is
            # not ten times more about case law than one that names the court once)
            total += weight * min(len(found), 3) ** 0.5
            names.append(f"{name}: {found[0] if isinstance(found[0], str) else found[0][0]}")
    return total, names


def _cues_of(lang: str | None) -> tuple[tuple[Cue, ...], tuple[Cue, ...]]:
    if lang is not None:
        if lang not in CUES:
            raise ValueError(f"no query cues for language {lang!r}; known: {', '.join(CUES)}")
        return CUES[lang]
    return (tuple(c for case, _ in CUES.values() for c in case), tuple(c for _, law in CUES.values() for c in law))


def classify_lexical(query: str, lang: str | None = None) -> Classification:
    """``lang``: the query's language (its cues only); None: every language's cues."""
    case_cues, law_cues = _cues_of(lang)
    case, case_names = _evidence(query, case_cues)
    law, law_names = _evidence(query, law_cues)
    net = case - 0.5 * law  # a query citing § 823 and a BGH judgment wants the judgment most
    label: QueryClass = "case" if net >= CASE_THRESHOLD else "law"
    return Classification(label, round(net, 3), "lexical", tuple(case_names + law_names))


# letters only one of the languages writes
_LETTERS = {"pl": frozenset("ąćęłńóśźżĄĆĘŁŃÓŚŹŻ"), "de": frozenset("äöüßÄÖÜ")}
_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=8)
def _stop_words(lang: str) -> frozenset[str]:
    import importlib

    from pipelines.retrieval.languages import profile

    return frozenset(importlib.import_module(profile(lang).stop_words).STOP_WORDS)


def language_scores(query: str, candidates: Sequence[str]) -> dict[str, float]:
    """Evidence per candidate language: its own letters (1 each, at most 5), stop words no other
    candidate has (1 each), and its law/case cues (their weights)."""
    words = [w.lower() for w in _WORD.findall(query)]
    scores: dict[str, float] = {}
    for lang in candidates:
        others = set().union(*(_stop_words(o) for o in candidates if o != lang))
        own = _stop_words(lang) - others
        letters = sum(ch in _LETTERS.get(lang, ()) for ch in query)
        case, law = (_evidence(query, cues)[0] for cues in CUES.get(lang, ((), ())))
        scores[lang] = min(letters, 5) + sum(w in own for w in words) + case + law
    return scores


def detect_query_language(query: str, candidates: Sequence[str]) -> str | None:
    """The candidate language the query is written in, or None when the evidence does not decide
    (no candidate scores, or two score alike)."""
    scores = language_scores(query, candidates)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] <= 0 or (len(ranked) > 1 and ranked[0][1] - ranked[1][1] < 1.0):
        return None
    return ranked[0][0]


# the RWTH report's prompt (Listing 1.1), in substance; answers "Legal Cases" or "Laws"
LLM_PROMPT = """You are a legal assistant. Analyze the user query and decide which category it belongs to:
- Legal Cases
- Laws

User Query: "{query}"
You have only these two options to choose from: either output "Legal Cases" if it's more relevant to legal cases, or "Laws" if it's more related to laws."""


def parse_llm_label(content: str | None) -> QueryClass | None:
    """The reply's label, or None when it names neither or both (the paper then mixes 50/50)."""
    text = (content or "").lower()
    case = "legal case" in text or re.search(r"\bcases?\b", text) is not None
    law = re.search(r"\blaws?\b", text) is not None
    if case == law:
        return None
    return "case" if case else "law"


async def classify_llm(query: str, client, lang: str | None = None) -> Classification:
    """Ask the endpoint; an unusable answer gives "both" (50/50) like the paper, an error the
    lexical label (the caller still gets a mix, and the reason is kept in ``method``)."""
    from connectors.llm_client import LLMError

    try:
        reply = await client.chat([{"role": "user", "content": LLM_PROMPT.format(query=query)}], max_tokens=8)
    except LLMError as exc:
        lexical = classify_lexical(query, lang)
        return Classification(lexical.label, lexical.score, f"lexical (llm failed: {exc})", lexical.evidence)
    label = parse_llm_label(reply.content)
    return Classification(label or "both", 0.0, "llm", (f"reply: {(reply.content or '').strip()[:40]}",))


def classify(query: str, llm_settings=None, lang: str | None = None) -> Classification:
    """LLM classification when ``llm_settings`` (an ``LLMSettings``) is given, else lexical (with
    the cues of ``lang``, or of every language)."""
    if llm_settings is None:
        return classify_lexical(query, lang)
    from connectors.llm_client import ChatClient

    async def go() -> Classification:
        async with ChatClient(llm_settings) as client:
            return await classify_llm(query, client, lang)
    return asyncio.run(go())
