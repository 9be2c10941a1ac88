"""German act names and abbreviations → one act key, and which acts lexpipe's corpus holds.

Why a table: courts cite the same act as ``BGB``, ``Bürgerliches Gesetzbuch``, ``des Bürgerlichen
Gesetzbuchs`` or ``bgb``; the Sozialgesetzbuch as ``SGB V``, ``SGB 5`` or ``Fünftes Buch
Sozialgesetzbuch``. A key (``bgb``, ``sgb-v``) makes them one act; ``de:<key>`` is the act id,
which for the German acts of the act registry (:func:`corpus_keys`, from ``schemas/acts.toml``) is
exactly the corpus act id (``de:bgb``). Acts outside the corpus are kept — they are real citations — but
flagged, and their ids cannot be checked against corpus units.

Abbreviations are matched case-insensitively (``Stpo``, ``ZPO``, ``zpo``); an unknown token that
looks like a statute abbreviation (``BayKatFortGebG``, ``HeizkostenV``) is accepted by
:func:`looks_like_abbreviation` so rare Landesrecht is not lost, and its key is its lower case.
"""

from __future__ import annotations

import re
import unicodedata

from pipelines.citations.registry_pin import current as current_registry
from pipelines.statutes.de.model import german_acts


_acts_memo: list = [None, {}, frozenset()]  # registry, german_acts(), its keys


def corpus_acts() -> dict:
    """:func:`~pipelines.statutes.de.model.german_acts` of the registry in force, built once per
    registry object (a registry of thousands of German acts is not walked per citation)."""
    reg = current_registry()
    if _acts_memo[0] is not reg:
        acts = german_acts()
        _acts_memo[1], _acts_memo[2] = acts, frozenset(acts)
        _acts_memo[0] = reg
    return _acts_memo[1]


def corpus_keys() -> frozenset[str]:
    """Keys of the acts the corpus holds: the German acts of the registry (bgb gg hgb stgb stpo zpo),
    read at call time so a registry set for a test or a run (``$LEXPIPE_ACT_REGISTRY``) counts."""
    corpus_acts()
    return _acts_memo[2]


# Abbreviation as usually printed → key. Federal acts cited in German decisions, general knowledge
# (Schönfelder/Sartorius abbreviations), not taken from any evaluation document.
ABBREVIATIONS: tuple[str, ...] = (
    "BGB", "GG", "HGB", "StGB", "StPO", "ZPO",
    "AEUV", "AGBG", "AGG", "AktG", "AO", "ArbGG", "ArbSchG", "ArbZG", "AsylG", "AsylVfG", "AufenthG",
    "AuslG", "AVG", "BAföG", "BauGB", "BauNVO", "BBG", "BBiG", "BDSG", "BeamtStG", "BEEG", "BetrAVG",
    "BetrVG", "BeurkG", "BewG", "BGBEG", "BImSchG", "BJagdG", "BKAG", "BNatSchG", "BORA", "BPolG",
    "BRAGO", "BRAO", "BRKG", "BtMG", "BUrlG", "BVerfGG", "BVG", "BVwVfG", "BWahlG", "BZRG", "DepotG",
    "DSGVO", "EEG", "EGBGB", "EGGVG", "EGHGB", "EGStGB", "EGV", "EGZPO", "EMRK", "EnWG", "ErbStG",
    "EStG", "EStDV", "EUV", "FamFG", "FamGKG", "FeV", "FGG", "FGO", "FlurbG", "FStrG", "GBO", "GenG",
    "GewO", "GewStG", "GKG", "GmbHG", "GNotKG", "GrEStG", "GrStG", "GVG", "GWB", "HeimG", "HwO",
    "IfSG", "InsO", "IRG", "JGG", "JVEG", "KostO", "KrWG", "KSchG", "KStG", "KWG", "LPartG", "LuftVG",
    "MarkenG", "MuSchG", "OEG", "OWiG", "PatG", "PAuswG", "PBefG", "PostG", "ProdHaftG", "PStG",
    "RDG", "RPflG", "RVG", "RVO", "ScheckG", "SchwarzArbG", "SGB", "SGG", "SigG", "StAG", "StBerG",
    "StromStG", "StVG", "StVO", "StVollzG", "StVZO", "TierSchG", "TKG", "TMG", "TVG", "TVöD",
    "TzBfG", "UhVorschG", "UKlaG", "UmwG", "UrhG", "UStG", "UVPG", "UWG", "VAG", "VereinsG", "VermG",
    "VersAusglG", "VOB/B", "VVG", "VwGO", "VwVfG", "VwVG", "VwZG", "WaffG", "WEG", "WHG", "WoBindG",
    "WoGG", "WPflG", "WpHG", "WpÜG", "WRV", "ZDG", "ZVG", "HeizkostenV", "BetrKV", "WoFG", "II. BV",
    "RpflG", "ZSEG", "AnfG", "BNotO", "GüKG", "HOAI", "PflVG", "LadSchlG", "JArbSchG", "ArbPlSchG",
)
# SGB books: "SGB V", "SGB 5", "SGB-V"
ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10,
         "XI": 11, "XII": 12, "XIV": 14}
ARABIC_TO_ROMAN = {v: k for k, v in ROMAN.items()}
ORDINAL_BOOK = {"erstes": 1, "zweites": 2, "drittes": 3, "viertes": 4, "fünftes": 5, "sechstes": 6,
                "siebtes": 7, "achtes": 8, "neuntes": 9, "zehntes": 10, "elftes": 11, "zwölftes": 12,
                "vierzehntes": 14}

# Full names (any inflection: the regex allows the genitive -s/-es and adjective endings) → key
FULL_NAMES: tuple[tuple[str, str], ...] = (
    (r"B[üu]rgerliche[nm]?s? Gesetzbuch(?:e?s)?", "bgb"),
    (r"Grundgesetz(?:e?s)?(?: f[üu]r die Bundesrepublik Deutschland)?", "gg"),
    (r"Handelsgesetzbuch(?:e?s)?", "hgb"),
    (r"Strafgesetzbuch(?:e?s)?", "stgb"),
    (r"Strafproze(?:ss|ß)ordnung", "stpo"),
    (r"Zivilproze(?:ss|ß)ordnung", "zpo"),
    (r"Sozialgerichtsgesetz(?:e?s)?", "sgg"),
    (r"Finanzgerichtsordnung", "fgo"),
    (r"Verwaltungsgerichtsordnung", "vwgo"),
    (r"Verwaltungsverfahrensgesetz(?:e?s)?", "vwvfg"),
    (r"Gerichtsverfassungsgesetz(?:e?s)?", "gvg"),
    (r"Arbeitsgerichtsgesetz(?:e?s)?", "arbgg"),
    (r"Abgabenordnung", "ao"),
    (r"Einkommensteuergesetz(?:e?s)?", "estg"),
    (r"Umsatzsteuergesetz(?:e?s)?", "ustg"),
    (r"Insolvenzordnung", "inso"),
    (r"Baugesetzbuch(?:e?s)?", "baugb"),
    (r"Baunutzungsverordnung", "baunvo"),
    (r"Bundesverfassungsgerichtsgesetz(?:e?s)?", "bverfgg"),
    (r"Kündigungsschutzgesetz(?:e?s)?", "kschg"),
    (r"Betriebsverfassungsgesetz(?:e?s)?", "betrvg"),
    (r"Gesetz(?:e?s)? gegen den unlauteren Wettbewerb", "uwg"),
    (r"Gerichtskostengesetz(?:e?s)?", "gkg"),
    (r"Bundesausbildungsförderungsgesetz(?:e?s)?", "bafög"),
    (r"Aufenthaltsgesetz(?:e?s)?", "aufenthg"),
    (r"Asylgesetz(?:e?s)?", "asylg"),
    (r"Strafvollzugsgesetz(?:e?s)?", "stvollzg"),
    (r"Straßenverkehrsgesetz(?:e?s)?", "stvg"),
    (r"Ordnungswidrigkeitengesetz(?:e?s)?|Gesetz(?:e?s)? über Ordnungswidrigkeiten", "owig"),
)
SGB_FULL = r"(?:(?P<ord>Erste|Zweite|Dritte|Vierte|Fünfte|Sechste|Siebte|Achte|Neunte|Zehnte|Elfte|Zwölfte|Vierzehnte)[sn]? Buch(?:e?s)?(?: des)? Sozialgesetzbuch(?:e?s)?|Sozialgesetzbuch(?:e?s)? (?P<ord2>Erste|Zweite|Dritte|Vierte|Fünfte|Sechste|Siebte|Achte|Neunte|Zehnte|Elfte|Zwölfte|Vierzehnte)[sn]? Buch(?:e?s)?)"

_ABBR_KEY = {a.lower(): a.lower().replace(" ", "").replace(".", "") for a in ABBREVIATIONS}
_FULL_RES = [(re.compile(rf"(?:{pat})$", re.I), key) for pat, key in FULL_NAMES]


def sgb_key(book: int | str) -> str:
    """``5`` / ``"V"`` → ``sgb-v``."""
    n = book if isinstance(book, int) else (int(book) if str(book).isdigit() else ROMAN[str(book).upper()])
    return f"sgb-{ARABIC_TO_ROMAN[n].lower()}"


def looks_like_abbreviation(token: str) -> bool:
    """A statute abbreviation not in the table: ≥ 2 capitals, or a capitalised word ending in
    G / O / V / VO, letters only (``BayKatFortGebG``, ``HeizkostenV``, ``KAG``)."""
    if not re.fullmatch(r"[A-ZÄÖÜ][A-Za-zÄÖÜäöüß]{1,24}", token):
        return False
    if token.isupper() and len(token) <= 2:
        return False  # "EU", "BT" etc. are too ambiguous without the table
    if re.fullmatch(r"[IVXLC]+", token):
        return False  # an outline number of a commentary ("§ 54 III 5"), not an act
    capitals = sum(c.isupper() for c in token)
    return capitals >= 2 and (token[-1] in "GOV" or token.endswith("VO") or token.isupper())


def act_key(name: str) -> str | None:
    """Normalised key of an act as printed (abbreviation, SGB book, or full name), else None."""
    s = unicodedata.normalize("NFC", re.sub(r"\s+", " ", name)).strip().strip(",;")
    s = re.sub(r"^(?:des|der|dem|den|die|das)\s+", "", s, flags=re.I)
    s = re.sub(r"\s+(?:a\.\s?F\.|n\.\s?F\.|\d{4})$", "", s)  # "UWG 2004", "BGB a.F."
    m = re.fullmatch(r"SGB[\s-]*([IVX]+|\d{1,2})", s, re.I)
    if m:
        try:
            return sgb_key(m.group(1).upper())
        except (KeyError, ValueError):
            return None
    m = re.fullmatch(SGB_FULL, s, re.I)
    if m:
        word = (m.group("ord") or m.group("ord2")).lower() + "s"
        return sgb_key(ORDINAL_BOOK[word])
    low = s.lower()
    if low in _ABBR_KEY:
        return _ABBR_KEY[low]
    for rx, key in _FULL_RES:
        if rx.fullmatch(s):
            return key
    paren = re.search(r"\(([A-Za-zÄÖÜäöüß/\-]{2,20})\)$", s)  # "Gesetz über … (StBerG)"
    if paren:
        return act_key(paren.group(1)) or paren.group(1).lower()
    if looks_like_abbreviation(s):
        return low
    if re.fullmatch(r"[A-ZÄÖÜ][a-zäöüß\-]+(?:gesetz|gesetzbuch|ordnung|verordnung)(?:e?s)?", s):
        return re.sub(r"(?:e?s)$", "", low) if re.search(r"(?:gesetzes|gesetzbuchs|gesetzbuches)$", low) else low
    return None


def act_id(key: str) -> str:
    """``bgb`` → ``de:bgb`` (the corpus act id for acts in :func:`corpus_keys`)."""
    return f"de:{key}"


def in_corpus(key: str | None) -> bool:
    return key in corpus_keys()
