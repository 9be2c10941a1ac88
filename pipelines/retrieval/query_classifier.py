"""Is a query after statutes ("law") or court decisions ("case")?

Why: the RWTH legal assistant (``../shared/papers/rwth-rag-legal-assistant.txt``) retrieves 70 % of
its context from the collection the query is classified into and 30 % from the other, and 50/50
when the classifier gives no usable answer. Its classifier is an LLM prompt; we use that prompt
when an LLM endpoint is configured and a lexical classifier otherwise (and whenever the LLM fails),
so the mix works offline.

The lexical classifier scores explicit evidence only: signs that the asker wants decisions (court
names, file numbers, ECLIs, "Urteil", "Rechtsprechung", …) against signs that they want the
statute text (§/Art. citations, "Gesetz", "Vorschrift", …). Without case evidence a query is
"law": a layperson's question about their situation ("Mein Vermieter …") is answered from the
statute first, and GerLayQA's 2,151 questions, all answered by a BGB §, are exactly that kind.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Literal

QueryClass = Literal["law", "case", "both"]
LABELS: tuple[str, ...] = ("law", "case", "both")

# (pattern, weight, name): weights are log-odds-like evidence; tuned by hand on the wording of the
# cues, never on an evaluation set (there is no labelled case-query set to tune on).
_CASE_CUES: tuple[tuple[re.Pattern[str], float, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE if ci else 0), w, n) for p, w, n, ci in [
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
_LAW_CUES: tuple[tuple[re.Pattern[str], float, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE if ci else 0), w, n) for p, w, n, ci in [
        (r"(?:§§?|\bArt\.|\bArtikel)\s*\d+", 1.5, "section/article", False),
        (r"\b(?:Paragraph\w*|Paragrafen?)\b", 1.5, "section/article", True),
        (r"\b(?:BGB|GG|HGB|StGB|StPO|ZPO)\b", 1.0, "code", False),
        (r"\b(?:Gesetz\w*|gesetzlich\w*|Vorschrift\w*|Norm(?:en)?|Wortlaut|Gesetzestext|Gesetzbuch\w*)\b",
         1.0, "statute", True),
        (r"\b(?:regelt|geregelt|besagt|vorgeschrieben|Frist\w*|Anspruch|Ansprüche)\b", 0.5, "rule", True),
    ])
# net evidence for "case": "Urteil" or a court abbreviation (BGH) alone reaches it; a court's full
# name alone does not ("das Testament liegt beim Amtsgericht" describes the asker's situation)
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


def classify_lexical(query: str) -> Classification:
    case, case_names = _evidence(query, _CASE_CUES)
    law, law_names = _evidence(query, _LAW_CUES)
    net = case - 0.5 * law  # a query citing § 823 and a BGH judgment wants the judgment most
    label: QueryClass = "case" if net >= CASE_THRESHOLD else "law"
    return Classification(label, round(net, 3), "lexical", tuple(case_names + law_names))


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


async def classify_llm(query: str, client) -> Classification:
    """Ask the endpoint; an unusable answer gives "both" (50/50) like the paper, an error the
    lexical label (the caller still gets a mix, and the reason is kept in ``method``)."""
    from connectors.llm_client import LLMError

    try:
        reply = await client.chat([{"role": "user", "content": LLM_PROMPT.format(query=query)}], max_tokens=8)
    except LLMError as exc:
        lexical = classify_lexical(query)
        return Classification(lexical.label, lexical.score, f"lexical (llm failed: {exc})", lexical.evidence)
    label = parse_llm_label(reply.content)
    return Classification(label or "both", 0.0, "llm", (f"reply: {(reply.content or '').strip()[:40]}",))


def classify(query: str, llm_settings=None) -> Classification:
    """LLM classification when ``llm_settings`` (an ``LLMSettings``) is given, else lexical."""
    if llm_settings is None:
        return classify_lexical(query)
    from connectors.llm_client import ChatClient

    async def go() -> Classification:
        async with ChatClient(llm_settings) as client:
            return await classify_llm(query, client)
    return asyncio.run(go())
