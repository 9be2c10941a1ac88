"""Rule-based extraction of German statute citations, as a spaCy component, and their linking.

What a citation looks like (all handled here):

* ``§ 433 Abs. 1 Satz 2 BGB``, ``§ 4 Nr. 12 Buchst. a UStG``, ``§ 13 Abs 3a S 6 SGB V``,
  ``§ 74 a HGB`` (letter printed apart), ``Art. 3 Abs. 1 GG``, ``Art.11 Abs.3 AGGVG``;
* lists and ranges: ``§§ 823, 826 BGB``, ``§§ 184 bis 187 SGG``, ``§ 433 Abs. 1 und 2``,
  ``§§ 92 Abs. 1, 97 Abs. 1, 269 Abs. 3 ZPO``, ``§ 18 Abs. 1, § 19 Abs. 1 Satz 1, Abs. 2 KostO`` —
  the act printed after the list applies to every member;
* ``i.V.m.`` / ``in Verbindung mit`` chains: ``§ 1908i Abs. 1 i.V.m. § 1846 BGB`` — a member
  without its own act takes the act of the chain's next member that has one;
* ``f.`` / ``ff.``; the act before the sign in juris norm lines (``SGG § 184 Abs 1``,
  ``HGB §§ 74 ff``); full names (``§ 184 des Sozialgerichtsgesetzes``, ``§ 236 Abs 1 Fünftes Buch
  Sozialgesetzbuch``, ``§ 1 Abs. 2 des Gesetzes über … (StBerG)``); EU directives
  (``Richtlinie 77/388/EWG``, ``Art. 6 Abs. 2 Buchst. a der Richtlinie 77/388/EWG``).

Why a hand-written scanner over ``doc.text`` instead of token patterns: the grammar is small but
recursive (members, qualifier value lists, chains) and the decisive cues are characters the
tokenizer splits inconsistently (``Abs.1``, ``Art.3``, ``i.V.m``). The scanner returns exact
character offsets; the component maps them to ``doc.char_span(..., alignment_mode="expand")``
in ``doc.spans["citations"]`` and keeps the structured :class:`Citation` on ``span._.citation``.

Span convention (one citation per cited § / Art.): a list member's span runs from its number (the
first member: from the ``§``/``§§`` sign, or the act when it precedes the sign) over its
qualifiers to the act when the act directly follows it. The end of a range (``bis 187``) is its own
citation, marked ``range_end``, so a range cites both ends (:meth:`Citation.section_numbers`
expands it).

Ambiguity resolved by rule: after ``§§`` a separator and a bare number start a new member
(``§§ 3, 5 Abs. 1``), except a comma without a space (``Nr. 7,10``); after a single ``§`` they
continue the qualifier (``§ 5 Abs. 1, 2 Nr. 1``: Absätze 1 and 2).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from pipelines.citations import acts as A
from pipelines.citations.registry_pin import pinned
from pipelines.statutes.de.model import german_acts

# ------------------------------------------------------------------------------------------ lexicon

WS = r"[\s\u00a0]{0,6}"  # refex/juris text may break a citation over lines; never span a paragraph gap of more
SIGN = re.compile(r"(?P<sign>§§|§|Artt\.|Artikeln?|Art\.?)[ \u00a0]{0,3}", re.I)  # sign and number share a line
NUM = re.compile(r"(?P<num>\d{1,4})(?:(?P<letter>[a-z])(?![a-zäöüß])|[ \u00a0](?P<sletter>[a-z])(?=[\s,;)\]]|$))?")
VAL = re.compile(r"(?P<val>\d{1,3}[a-z]?)(?!\d)(?![/.]\d)")  # not a date/decimal (1.604,44 is an amount)
LETTER_VAL = re.compile(r"(?P<val>[a-z]{1,2})(?:\))?(?![a-zäöüß])")
EXT = re.compile(WS + r"(?P<ext>ff\.?|f\.)(?![a-zäöüß])")
QUALIFIERS: tuple[tuple[str, str], ...] = (
    ("unterabsatz", r"U(?:nter)?[Aa]bs(?:atz|\.)?|UAbs\.?"),
    ("absatz", r"Abs(?:atz|ätze|\.)?|Absätze"),
    ("halbsatz", r"Halbs(?:atz|\.)|Hs\.|Halbsatz|Hbs\."),
    ("satz", r"S(?:atz|ätze|\.)?|Sätze"),
    ("nummer", r"Nrn?\.?|Nummern?|Ziff(?:er|ern|\.)?"),
    ("buchstabe", r"Buchst(?:abe|aben|\.)?|lit\.?"),
    ("alternative", r"Alt(?:ernative|\.)?|Var(?:iante|\.)?"),
)
QUAL = re.compile(WS + r"(?P<qual>" + "|".join(f"(?P<{n}>(?:{p}))" for n, p in QUALIFIERS) + r")(?![A-Za-zäöüß])" + WS)
SEP = re.compile(r"(?P<sep>[\s\u00a0]*,(?P<sp>[\s\u00a0]*)|[\s\u00a0]+(?:und|oder|sowie|u\.)[\s\u00a0]+"
                 r"|[\s\u00a0]+bis[\s\u00a0]+|[\s\u00a0]*[-–][\s\u00a0]*)")
CHAIN = re.compile(WS + r"(?P<chain>i\.[\s\u00a0]?V\.[\s\u00a0]?m\.?|iVm\.?|in[\s\u00a0]+Verbindung[\s\u00a0]+mit|i\.[\s\u00a0]?V\.[\s\u00a0]?mit)" + WS)
YEAR = re.compile(r"[ \u00a0](?:(?:19|20)\d\d(?![\d.,/])|a\.[ \u00a0]?F\.|n\.[ \u00a0]?F\.)")

_abbrs = sorted({a for a in A.ABBREVIATIONS}, key=len, reverse=True)
ABBR = re.compile(r"(?<![\w/])(?P<abbr>SGB[\s\u00a0-]?(?:XIV|XII|XI|X|IX|VIII|VII|VI|V|IV|III|II|I|\d{1,2})(?![\w])"
                  r"|(?:" + "|".join(re.escape(a) for a in _abbrs) + r")(?![\wäöüÄÖÜß]))", re.I)
GENERIC_ABBR = re.compile(r"(?<![\w])(?P<abbr>[A-ZÄÖÜ][A-Za-zÄÖÜäöüß]{1,24})(?![\w])")
FULL_NAME = re.compile(
    r"(?P<full>" + A.SGB_FULL + "|" + "|".join(f"(?:{p})" for p, _ in A.FULL_NAMES)
    + r"|[A-ZÄÖÜ][a-zäöüß]+(?:-[A-ZÄÖÜ]?[a-zäöüß]+)*(?:gesetz|gesetzbuch|ordnung|verordnung)(?:e?s)?"
    + r")(?![\wäöüß])")
GESETZ_UEBER = re.compile(
    r"(?P<gesetz>Gesetz(?:e?s)?[\s\u00a0]+(?:über|zur|zum|betreffend|für)[\s\u00a0][^()§;:\n]{2,160}?)"
    r"(?:[\s\u00a0]*\((?P<paren>[A-Za-zÄÖÜäöüß/\-]{2,20})\)|(?=[\s\u00a0]*(?:[,;:)]|\.[\s\u00a0]|[\s\u00a0]vom[\s\u00a0]|$)))")
EU_ACT = re.compile(
    r"(?P<eu>(?:(?:[A-ZÄÖÜ][a-zäöü]+n[\s\u00a0]+)?(?:Richtlinie|RL|Verordnung|VO)[\s\u00a0]*(?:\((?:EG|EU|EWG)\)[\s\u00a0]*)?(?:Nr\.[\s\u00a0]*)?)?"
    r"(?P<eunum>\d{2,4}/\d{1,4}/(?:EWG|EG|EU|EGKS|Euratom)|(?<=\)[\s\u00a0])\d{2,4}/\d{1,4}|(?<=\))\d{2,4}/\d{1,4}))(?![\w/])")
ARTICLE_WORD = re.compile(r"(?P<det>des|der)[\s\u00a0]+")
# Reporter locators index decisions by norm: "AP Nr. 7 zu Art. 12 GG", "Buchholz 406.11 § 9 BauGB
# Nr. 74", "SozR 4-2500 § 13 Nr 33". The § there locates a *decision* (part of a case citation), it
# is not the court applying the norm.
REPORTER_BEFORE = re.compile(r"(?:\bAP[\s\u00a0]+Nr\.?[\s\u00a0]*\d+(?:[\s\u00a0]*(?:,|und)[\s\u00a0]*\d+)*[\s\u00a0]+zu"
                             r"|\bBuchholz[\s\u00a0]+\d{3}(?:\.\d+)*|\bSozR[\s\u00a0]+\d[\d\-/]*)[\s\u00a0]*$")


# ------------------------------------------------------------------------------------------ model


@dataclass
class Citation:
    start: int
    end: int
    text: str
    unit: str | None  # "§" | "Art" | None (an EU act cited as a whole)
    number: str | None  # "433", "573b"
    absatz: list[str] = field(default_factory=list)
    satz: list[str] = field(default_factory=list)
    nummer: list[str] = field(default_factory=list)
    buchstabe: list[str] = field(default_factory=list)
    halbsatz: list[str] = field(default_factory=list)
    alternative: list[str] = field(default_factory=list)
    unterabsatz: list[str] = field(default_factory=list)
    extension: str | None = None  # "f." | "ff."
    act_text: str | None = None  # the act as printed (on the member that carries it)
    act_key: str | None = None  # "bgb", "sgb-v", "77/388/ewg"
    act_source: str | None = None  # own | list | chain | None
    role: str = "single"  # single | range_end
    range_end: str | None = None  # on a range start: the number of the range end
    range_start: str | None = None  # on a range end: the number of the range start
    group: int = 0  # members of one list share a group; chained groups share a chain
    chain: int = 0
    relation: str | None = None  # "ivm" when introduced by i.V.m. / in Verbindung mit; "range" for range_end
    in_corpus: bool = False
    unit_id: str | None = None
    link_status: str = "no_act"  # verified | unverified | not_found | out_of_corpus | no_act | eu

    @property
    def act_id(self) -> str | None:
        if self.act_key is None:
            return None
        return f"eu:{self.act_key}" if "/" in self.act_key else A.act_id(self.act_key)

    def section_numbers(self, limit: int = 60) -> list[str]:
        """The §/Art. numbers this citation cites: its number, or the whole range on a range start."""
        if self.number is None:
            return []
        if self.range_end and _expandable(self.number, self.range_end, limit):
            lo, hi = int(self.number), int(self.range_end)
            return [str(n) for n in range(lo, hi + 1)]
        if self.role == "range_end" and self.range_start and _expandable(self.range_start, self.number, limit):
            return []  # already counted by the range start's expansion
        return [self.number]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["act_id"] = self.act_id
        return d


def _expandable(lo: str, hi: str, limit: int) -> bool:
    return lo.isdigit() and hi.isdigit() and int(lo) < int(hi) <= int(lo) + limit


# ------------------------------------------------------------------------------------------ scanner


@dataclass
class _Member:
    start: int
    end: int
    sign: str | None
    number: str
    quals: dict[str, list[str]]
    extension: str | None = None
    role: str = "single"
    act_text: str | None = None
    act_key: str | None = None
    act_end: int | None = None
    qualified_end: int = 0  # end before any act


def _match_act(text: str, pos: int) -> tuple[int, str, str] | None:
    """An act name starting at ``pos`` (after optional whitespace and 'des'/'der'):
    (end, printed name, key)."""
    m = re.compile(WS).match(text, pos)
    p = m.end() if m else pos
    if p == pos and pos < len(text) and text[pos].isalnum():
        return None  # the act must be separated from the number
    det = ARTICLE_WORD.match(text, p)
    q = det.end() if det else p
    for rx, group in ((EU_ACT, "eu"), (GESETZ_UEBER, "gesetz"), (FULL_NAME, "full"), (ABBR, "abbr")):
        m = rx.match(text, q)
        if not m or not m.group(group if group != "eu" else "eunum"):
            continue
        if rx is EU_ACT:
            if not m.group("eu") and not det:
                continue  # "§ 5 77/388/EWG" without 'der Richtlinie' is not an act
            return m.end(), m.group(0), m.group("eunum").lower()
        if rx is GESETZ_UEBER:
            paren = m.group("paren")
            key = ((A.act_key(paren) or paren.lower()) if paren
                   else re.sub(r"^gesetz(?:e?s)?", "gesetz", re.sub(r"\s+", " ", m.group("gesetz")).lower()))
            return m.end(), m.group(0), key
        name = m.group(group)
        key = A.act_key(name)
        if key:
            end = m.end()
            y = YEAR.match(text, end)
            if y:
                end = y.end()
            return end, text[q:end], key
    m = GENERIC_ABBR.match(text, q)
    if m and A.looks_like_abbreviation(m.group("abbr")) and not QUAL.match(" " + m.group("abbr")):
        end = m.end()
        y = YEAR.match(text, end)
        if y:
            end = y.end()
        return end, text[q:end], A.act_key(m.group("abbr")) or m.group("abbr").lower()
    return None


def _parse_values(text: str, pos: int, qual: str, plural: bool) -> tuple[list[str], int]:
    """Values of one qualifier: ``1``, ``1 und 2``, ``1, 2``, ``7,10``, ``1 bis 3``; letters for
    Buchstabe. Stops before a separator that starts a new member (see module doc)."""
    rx = LETTER_VAL if qual == "buchstabe" else VAL
    m = rx.match(text, pos)
    if not m:
        return [], pos
    values, end = [m.group("val")], m.end()
    while True:
        s = SEP.match(text, end)
        if not s:
            break
        v = rx.match(text, s.end())
        if not v:
            break
        tight = s.group("sep").strip() == "," and not s.group("sp")
        after = v.end()
        # a bare number followed by its own qualifier or an act after "§§" is a new member
        if plural and not tight and qual != "buchstabe":
            break
        if SIGN.match(text, s.end()):
            break
        values.append(v.group("val"))
        end = after
    return values, end


def _parse_member(text: str, pos: int, sign: str | None, plural: bool) -> _Member | None:
    m = NUM.match(text, pos)
    if not m:
        return None
    number = m.group("num") + (m.group("letter") or m.group("sletter") or "")
    end = m.end()
    member = _Member(pos, end, sign, number, {})
    e = EXT.match(text, end)
    if e:
        member.extension = "ff." if e.group("ext").startswith("ff") else "f."
        end = e.end()
    while True:
        q = QUAL.match(text, end)
        if q is None:  # "Abs. 1 Satz 1, Abs. 2": a separator followed by a qualifier continues
            s = SEP.match(text, end)
            if s and not s.group("sep").strip() in ("bis", "-", "–"):
                q = QUAL.match(text, s.end())
        if q is None:
            # "Nr. 3 a) und b)": letters right after a Nummer value
            if member.quals.get("nummer") and not member.quals.get("buchstabe"):
                lm = re.compile(r"[ \u00a0]?(?P<val>[a-z]{1,2})\)").match(text, end)
                if lm:
                    vals, vend = _parse_values(text, lm.start("val"), "buchstabe", False)
                    member.quals["buchstabe"] = vals
                    end = vend
                    continue
            break
        name = next(n for n, _ in QUALIFIERS if q.group(n))
        if name == "satz" and q.group("satz") in ("S", "s") and not re.match(r"\d", text[q.end():q.end() + 1]):
            break
        vals, vend = _parse_values(text, q.end(), name, plural)
        if not vals:
            break
        member.quals.setdefault(name, []).extend(vals)
        end = vend
        e = EXT.match(text, end)
        if e:
            member.extension = "ff." if e.group("ext").startswith("ff") else "f."
            end = e.end()
    if text[end - 1:end] == " ":  # never end a member on whitespace
        end -= 1
    member.end = member.qualified_end = end
    return member


@dataclass
class _Group:
    members: list[_Member]
    start: int
    end: int
    act_key: str | None = None
    relation: str | None = None


def _parse_group(text: str, pos: int, pre_act: tuple[int, str, str] | None) -> _Group | None:
    """A list of members opened by a sign at ``pos`` (or by an act printed before the sign)."""
    sm = SIGN.match(text, pos)
    if not sm or not NUM.match(text, sm.end()):
        return None
    sign = sm.group("sign")
    plural = sign in ("§§", "Artt.") or sign.lower() == "artikeln"
    first = _parse_member(text, sm.end(), sign, plural)
    if first is None:
        return None
    first.start = pos
    members = [first]
    while True:
        cur = members[-1]
        act = _match_act(text, cur.end)
        if act:
            cur.act_end, cur.act_text, cur.act_key = act
            cur.end = act[0]
            break
        s = SEP.match(text, cur.end)
        if not s:
            break
        nxt_pos = s.end()
        sep = s.group("sep").strip()
        sm2 = SIGN.match(text, nxt_pos)
        if sm2 and NUM.match(text, sm2.end()):
            sign2 = sm2.group("sign")
            mem = _parse_member(text, sm2.end(), sign2, sign2 in ("§§", "Artt."))
            if mem is None:
                break
            mem.start = nxt_pos
            members.append(mem)
            plural = sign2 in ("§§", "Artt.")
            continue
        if not plural and (cur.quals or sep not in ("und", "oder", ",", "sowie", "bis", "-", "–")):
            break
        mem = _parse_member(text, nxt_pos, None, plural)
        if mem is None:
            break
        if sep in ("bis", "-", "–"):
            mem.role = "range_end"
        members.append(mem)
    if pre_act:
        first.start = pre_act[0]
        for m in members:
            if m.act_key is None:
                m.act_key, m.act_text = pre_act[2], pre_act[1]
    return _Group(members, members[0].start, members[-1].end)


def _sign_starts(text: str) -> Iterable[re.Match]:
    return re.finditer(r"§|(?<![A-Za-zÄÖÜäöüß])Art(?:ikeln?|t)?\.?(?=[ \u00a0]{0,3}\d)", text)


def extract_citations(text: str, *, known_ids: set[str] | frozenset[str] | None = None,
                      keep_unresolved: bool = False, keep_reporter_locators: bool = False) -> list[Citation]:
    """All statute citations in ``text`` in document order, linked (see :func:`link`).

    A ``§ 10`` whose act is named nowhere in its list or ``i.V.m.`` chain is dropped unless
    ``keep_unresolved``: in decisions such bare numbers are mostly clauses of contracts
    ("§ 10 des Arbeitsvertrages"), pinpoints into commentaries ("Hueck-Nipperdey, aaO, § 38 II A")
    or quoted statute text, and even when they are statutory they cannot be linked. Norms inside
    reporter locators (``AP Nr. 7 zu Art. 12 GG``, ``Buchholz 406.11 § 9 BauGB``) are dropped unless
    ``keep_reporter_locators``: they are part of a case citation.
    """
    with pinned():  # one registry for the whole text
        return _extract(text, known_ids, keep_unresolved, keep_reporter_locators)


def _extract(text: str, known_ids: set[str] | frozenset[str] | None, keep_unresolved: bool,
             keep_reporter_locators: bool) -> list[Citation]:
    groups: list[_Group] = []
    pos = 0
    for m in _sign_starts(text):
        if m.start() < pos:
            continue
        pre_act = None
        # juris norm lines: "SGG § 184 Abs 1", "HGB §§ 74 ff", "GG Art 80 Abs 1"
        before = re.search(r"(?P<abbr>[A-Za-zÄÖÜäöüß][\wÄÖÜäöüß]{1,24}(?:[\s\u00a0-](?:[IVX]{1,4}|\d{1,2}))?)[ \u00a0]$",
                           text[max(pos, m.start() - 30):m.start()])
        if before:
            name = before.group("abbr")
            if ABBR.fullmatch(name) or (A.looks_like_abbreviation(name) and name.upper() != name[:1]):
                key = A.act_key(name)
                if key:
                    pre_act = (m.start() - len(before.group(0)), name, key)
        g = _parse_group(text, m.start(), pre_act)
        if g is None:
            continue
        if not keep_reporter_locators and REPORTER_BEFORE.search(text[max(0, g.start - 40):g.start]):
            pos = g.end
            continue
        if groups and groups[-1].end <= g.start and CHAIN.fullmatch(text[groups[-1].end:g.start]):
            g.relation = "ivm"  # "§ 1908i Abs. 1 i.V.m. § 1846 BGB": one chain
        groups.append(g)
        pos = g.end
    citations = _to_citations(text, groups, known_ids)
    citations.extend(_eu_acts(text, citations))
    if not keep_unresolved:
        citations = [c for c in citations if c.act_key is not None]
    citations.sort(key=lambda c: (c.start, c.end))
    return citations


def _to_citations(text: str, groups: list[_Group], known_ids) -> list[Citation]:
    out: list[Citation] = []
    chain = -1
    for gi, g in enumerate(groups):
        if g.relation != "ivm":
            chain += 1
        # act printed after the list applies to the members before it (within the group)
        act: tuple[str | None, str] = (None, "")
        for mem in reversed(g.members):
            if mem.act_key:
                act = (mem.act_key, "own")
            elif act[0]:
                mem.act_key, mem.act_text = act[0], None
                act = (act[0], "list")
        g.act_key = next((m.act_key for m in g.members if m.act_key), None)
        for k, mem in enumerate(g.members):
            sign = next((x.sign for x in reversed(g.members[:k + 1]) if x.sign), None) or "§"
            unit = "Art" if sign.lower().startswith("art") else "§"
            source = None
            if mem.act_key:
                source = "own" if mem.act_end is not None or (k == 0 and mem.start < g.start + 1 and mem.act_text) else "list"
            c = Citation(
                start=mem.start, end=mem.end, text=text[mem.start:mem.end], unit=unit, number=mem.number,
                extension=mem.extension, act_text=mem.act_text, act_key=mem.act_key, act_source=source,
                role=mem.role, group=gi, chain=chain,
                relation="range" if mem.role == "range_end" else (g.relation if k == 0 else None),
                **{q: v for q, v in mem.quals.items()},
            )
            if mem.role == "range_end" and out and out[-1].group == gi:
                out[-1].range_end = mem.number
                c.range_start = out[-1].number
            out.append(c)
    # i.V.m.: a chain member without any act takes the act of the next group of its chain
    for i, c in enumerate(out):
        if c.act_key is None:
            nxt = next((d for d in out[i + 1:] if d.chain == c.chain and d.act_key), None)
            if nxt is not None:
                c.act_key, c.act_source = nxt.act_key, "chain"
    for c in out:
        link(c, known_ids)
    return out


def _eu_acts(text: str, existing: list[Citation]) -> list[Citation]:
    """EU directives/regulations cited as a whole, outside any § / Art. citation."""
    taken = [(c.start, c.end) for c in existing]
    out = []
    for m in EU_ACT.finditer(text):
        if not m.group("eu") and not re.search(r"\($", text[max(0, m.start() - 1):m.start()]):
            if not re.fullmatch(r"\d{2,4}/\d{1,4}/(?:EWG|EG|EU|EGKS|Euratom)", m.group("eunum")):
                continue
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        c = Citation(m.start(), m.end(), m.group(0), None, None, act_text=m.group(0),
                     act_key=m.group("eunum").lower(), act_source="own", link_status="eu")
        out.append(c)
    return out


# ------------------------------------------------------------------------------------------ linking


def candidate_ids(c: Citation) -> list[str]:
    """Unit ids from the § / Art. down to the most specific level with a single value:
    ``de:bgb:par:433`` → ``…:abs:1`` → ``…:abs:1:nr:2`` → ``…:lit:a`` (Satz has no unit id)."""
    if c.act_key is None or c.number is None or "/" in c.act_key:
        return []
    corpus = A.corpus_acts()  # the registry's German acts: what the corpus holds
    tag = "art" if (c.act_key in corpus and corpus[c.act_key].unit == "Art") or \
        (c.act_key not in corpus and c.unit == "Art") else "par"
    ids = [f"{A.act_id(c.act_key)}:{tag}:{c.number}"]
    for values, t in ((c.absatz, "abs"), (c.nummer, "nr"), (c.buchstabe, "lit")):
        if len(values) != 1:
            break
        ids.append(f"{ids[-1]}:{t}:{values[0]}")
    return ids


def link(c: Citation, known_ids: set[str] | frozenset[str] | None = None) -> Citation:
    """Set ``unit_id``/``link_status``/``in_corpus``. With ``known_ids`` (the corpus unit ids) the id
    is the most specific candidate that exists (``verified``) or None (``not_found``); without,
    the most specific candidate (``unverified``). Acts outside the corpus keep their id,
    ``out_of_corpus``, so counts can still group them."""
    if c.link_status == "eu":
        return c
    c.in_corpus = A.in_corpus(c.act_key)
    ids = candidate_ids(c)
    if not ids:
        c.unit_id, c.link_status = None, "no_act" if c.act_key is None else "eu"
        return c
    if not c.in_corpus:
        c.unit_id, c.link_status = ids[-1], "out_of_corpus"
        return c
    if known_ids is None:
        c.unit_id, c.link_status = ids[-1], "unverified"
        return c
    found = next((i for i in reversed(ids) if i in known_ids), None)
    c.unit_id, c.link_status = found, ("verified" if found else "not_found")
    return c


def unit_ids(c: Citation) -> list[str]:
    """Every unit id a citation names (lists of Absätze/Nummern multiply out), without checking."""
    if not candidate_ids(c):
        return []
    return units_below(c, candidate_ids(c)[0])


def units_below(c: Citation, base: str) -> list[str]:
    """``base`` (the § or Art. id, with or without the act) extended by every Absatz × Nummer ×
    Buchstabe combination the citation names; a level is only added below the one above it."""
    out = []
    for combo in itertools.product(c.absatz or [None], c.nummer or [None], c.buchstabe or [None]):
        uid = base
        for v, t in zip(combo, ("abs", "nr", "lit")):
            if v is None:
                break
            uid += f":{t}:{v}"
        out.append(uid)
    return list(dict.fromkeys(out))


# ------------------------------------------------------------------------------------------ spaCy

COMPONENT = "german_statute_citations"


def _register() -> None:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

    if not Span.has_extension("citation"):
        Span.set_extension("citation", default=None)
    if not Doc.has_extension("citations"):
        Doc.set_extension("citations", default=None)
    if COMPONENT in Language.factories:
        return

    @Language.factory(COMPONENT, default_config={"spans_key": "citations", "keep_unresolved": False})
    def _make(nlp: Language, name: str, spans_key: str, keep_unresolved: bool) -> "StatuteCitations":
        return StatuteCitations(spans_key=spans_key, keep_unresolved=keep_unresolved)


class StatuteCitations:
    """spaCy component: ``doc.spans[spans_key]`` (label ``LAW``), ``span._.citation`` and
    ``doc._.citations`` (all :class:`Citation` objects with exact character offsets).
    Set ``known_ids`` (corpus unit ids) to verify links."""

    def __init__(self, spans_key: str = "citations", known_ids: set[str] | frozenset[str] | None = None,
                 keep_unresolved: bool = False) -> None:
        self.spans_key = spans_key
        self.known_ids = known_ids
        self.keep_unresolved = keep_unresolved

    def __call__(self, doc):
        cits = extract_citations(doc.text, known_ids=self.known_ids, keep_unresolved=self.keep_unresolved)
        spans = []
        for c in cits:
            span = doc.char_span(c.start, c.end, label="LAW", alignment_mode="expand")
            if span is None:
                continue
            spans.append(span)
        doc.spans[self.spans_key] = spans
        for span, c in zip(spans, cits):
            span._.citation = c
        doc._.citations = cits
        return doc


def make_nlp(known_ids: set[str] | frozenset[str] | None = None, *, keep_unresolved: bool = False):
    """``spacy.blank("de")`` + the citation component."""
    import spacy

    _register()
    nlp = spacy.blank("de")
    nlp.max_length = 5_000_000
    comp = nlp.add_pipe(COMPONENT, config={"keep_unresolved": keep_unresolved})
    comp.known_ids = known_ids
    return nlp


_register()
