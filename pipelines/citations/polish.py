"""Rule-based extraction of Polish statute citations from judgments, as a spaCy component.

The Polish counterpart of :mod:`pipelines.citations.german`. What a citation looks like in the
SAOS judgments (common courts, Supreme Court, Constitutional Tribunal, Krajowa Izba Odwoławcza),
all handled here:

* ``art. 415 k.c.``, ``art. 98 § 1 i 3 k.p.c.``, ``art. 5 ust. 2 pkt 3 lit. a``, ``art. 1018 § 1,
  § 2 i § 3 k.c.``, ``art. 192 ust. 1, 2 i ust. 3 pkt 1 ustawy pzp``; ``przepis art.``,
  ``artykułu``, ``Artykuł 83 ust. 1 u.s.m.``, plural ``art.`` / ``artt.``; ``§ 2 art. 5``;
* superscript article numbers: ``art. 626(13) § 2``, ``art. 626^13``, ``art. 626¹³`` (the HTML
  cleaner prints ``<sup>13</sup>`` as ``626 ¹³``), and the Supreme Court's PDF texts that lost the
  superscript (``art. 39814 k.p.c.``: a number above the act's last article is split into base and
  superscript, ``398^14``); letters, also printed apart (``art. 183b``, ``art. 198 a i 198 b``);
  corpus form ``626^13`` / ``18^3a``;
* lists (``art. 58, 353 i 354 k.c.``) and ranges (``art. 353–356``): an act printed after the list
  applies to every member; chains (``art. 385 w zw. z art. 6 k.c.``, ``w związku z``, ``w zb. z``):
  the act named after a chain applies to the chain's earlier articles too, as Polish drafting does;
* the act as an abbreviation (``k.c.``, ``kc``, ``K.c.``, ``Pzp``, ``u.s.m.``), a full name in any
  case ending (``Kodeksu postępowania cywilnego``, ``ustawy z dnia 29 stycznia 2004 r. Prawo
  zamówień publicznych``, ``Konstytucji RP``), a statute or regulation by date and subject with its
  Dz. U. address (``ustawy z dnia 14 grudnia 1982 r. o zaopatrzeniu … (Dz. U. Nr 40, poz. 267)``);
  an act named once before a list (``Kodeksu cywilnego: art. 5, art. 6``, ``naruszenie przepisów
  ustawy pzp: 1. Art. 89 …, 2. Art. 82 …``) applies to the list's members until a gap of more
  than :data:`SCOPE_GAP` characters; ``tej ustawy`` / ``powołanej ustawy`` … refer to the statute
  named last;
* Polish ``§`` citations of regulations (``§ 5 ust. 2 pkt 1 rozporządzenia Prezesa Rady Ministrów
  z dnia 15 marca 2010 r. …``) — kept only when an act follows (a bare ``§ 11 umowy`` is a
  contract clause); Dz. U. addresses as citations of a whole act (``article`` None).

Which act, in order: the act printed after the member (``own``), after its list (``list``), before
the list (``scope``), after the chain (``chain``). An ``art.`` with no act anywhere near keeps
``act_id=None`` (the judgment's unknown act: often the act the whole judgment is about, but which
one is a guess this module does not make). Act ids come from :mod:`pipelines.citations.pl_acts`.

Unit ids are the corpus ids of :mod:`pipelines.statutes.pl.parser`: ``pl:kpc:art:98:par:1``,
``pl:x:art:5:ust:2:pt:3:lit:a`` (a point is ``pt``), ``pl:kc:art:626^13``; a regulation's top unit
is its ``§``: ``pl:du:2010:238:par:5:ust:2:pt:1``.

Why a hand-written scanner over the text, as for German: the grammar is recursive (members,
qualifier value lists, chains) and the cues are characters the tokenizer splits inconsistently
(``§1``, ``ust.1``, ``626¹³``). Measured against SAOS's own ``referencedRegulations`` on the dev
page (``bench/pl_citations.py``, figures in :mod:`pipelines.citations.pl_evaluation`): (act, article)
F1 for the held acts 0.945 on the dev page (SAOS page 347), 0.932 on the test page (355); all acts
0.859 / 0.843. ``extract_citations`` alone handles a 100-judgment page (about 2 MB, 4,000 citations) in
0.3 s; through spaCy (the tokenizer dominates) 750–1,100 citations/s.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from pipelines.citations import pl_acts as PA
from pipelines.citations.registry_pin import pinned

SCOPE_GAP = 400  # an act named before a list ("przepisów ustawy pzp: 1. Art. 89 …") reaches this far between citations
RANGE_CAP = 60  # a range cites every article up to this many
GENERIC_TOP = 1300  # no Polish act has more articles (k.p.c.: 1217): above it, a lost superscript (2231 → 223^1)

# -------------------------------------------------------------------------------------- lexicon

GAP = r"[ \t\u00a0]*(?:\n[ \t\u00a0]*(?:\d{1,3}[ \t\u00a0]*\n[ \t\u00a0]*)?)?"  # a line break, and a page number line between
_GAP = re.compile(GAP)
GAP0 = r"[ \t\u00a0]*(?:\n[ \t\u00a0]*)?"  # between a sign and its number: a line break, never a page number
_GAP0 = re.compile(GAP0)
SUP_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUP_TO_DIGIT = str.maketrans(SUP_DIGITS, "0123456789")
PAR = r"§§?|[Pp]ar\.|[Pp]ar(?=[ \t\u00a0]*\d)|[Pp]aragraf(?:u|ie|em|y|ów)?(?![\wąćęłńóśźż])"  # "par. 2" is § 2
SIGN = re.compile(r"(?<![\wąćęłńóśźżĄĆĘŁŃÓŚŹŻ])(?:(?P<art>[Aa]rt(?:t|ykuł(?:u|em|y|ów|ach|ami|ach)?)?)\.?|(?P<par>" + PAR + r"))"
                  r"(?=" + GAP0 + r"\d)")
NUM = re.compile(
    r"(?P<num>\d{1,6})(?![.,]\d)"
    r"(?:[ \u00a0]?(?P<sup>[" + SUP_DIGITS + r"]{1,3})|\^(?P<sup2>\d{1,3})|[ \u00a0]?\([ \u00a0]?(?P<sup3>\d{1,3})[ \u00a0]?\)"
    r"|[ \u00a0]?⁽(?P<sup4>[" + SUP_DIGITS + r"]{1,3}|\d{1,3})⁾)?"
    r"(?:(?P<let>[a-z]{1,2})(?![\wąćęłńóśźż])"
    r"|[ \u00a0](?P<slet>[a-hj-npr-vx-y])(?!\.)(?=\s*(?:[,;)\n]|i\s|oraz\s|lub\s|albo\s|w\s+zw|w\s+związku|ust|pkt|§|"
    r"ustaw|[kKpPuU]\.|Pzp|pzp|$)))?")
NOT_A_NUMBER = re.compile(r"\s*(?:r\.|roku|rok|zł|złotych|%|proc\.|lat\b|dni\b|m-c|godz)")
LEVEL = {"par": 0, "ust": 1, "pt": 2, "lit": 3}
_W = r"(?![\wąćęłńóśźż])"
QUAL = re.compile(GAP + r"(?:(?P<par>" + PAR + r")|(?P<ust>ust\.|(?:ust|ustęp(?:u|ie|em)?)" + _W + r")"
                  r"|(?P<pt>pkt\.|(?:pkt|punkt(?:u|ie|em|y|ów)?)" + _W + r")|(?P<lit>lit\.|(?:lit|liter(?:a|y|ze|ą))" + _W + r"))" + GAP)
IGNORED_QUAL = re.compile(GAP + r"(?:zd(?:anie|\.)?" + GAP + r"(?:\d{1,2}|pierwsz\w*|drugi\w*|trzeci\w*|ostatni\w*)"
                          r"|in\s+fine|ab\s+initio|tiret\s+\w+|zdanie\s+\w+"
                          r"|i\s+n(?:ast|n)?\.|i\s+następne)(?![\wąćęłńóśźż])")  # "art. 91 i n. Prawo o notariacie"
VAL = re.compile(r"(?P<val>(?:\d{1,3}|l)(?:[a-z]{1,2}|\^\d{1,2}[a-z]?|[" + SUP_DIGITS + r"]{1,2})?)(?![\d.,]\d)(?![\wąćęłńóśźż])")
LETTER_VAL = re.compile(r"(?P<val>[a-z]{1,2})\)?(?![\wąćęłńóśźż])")
CONJ = r"(?:i|oraz|lub|albo|a\s+także|jak\s+również|bądź|z)(?![\w])"
LIST_SEP = re.compile(r"[ \t\u00a0]*(?:\n?[ \t\u00a0]*[,;]" + GAP + r"(?:" + CONJ + GAP + r")?|" + GAP + CONJ + GAP + r")")
RANGE_SEP = re.compile(r"[ \t\u00a0]*[-–—][ \t\u00a0]*|" + GAP + r"do" + GAP)
CHAIN = re.compile(r"[ \t\u00a0]*,?" + GAP + r"(?:w\s+zw\.?\s*z\.?|w\s+związku\s+z|w\s+zb\.?\s*z\.?|w\s+zbiegu\s+z|wzw\.?\s*z"
                   r"|w\s+zw\s+z|z\s+uwzględnieniem|oraz\s+w\s+zw\.?\s*z)(?![\w])" + GAP)
ANAPHOR = re.compile(r"(?:(?:tej|tejże|powołanej|cyt\.|cytowanej|wymienionej|wskazanej|ww\.|w\.w\.|w/w|przywołanej|wyżej\s+"
                     r"(?:powołanej|wymienionej|cyt\.))" + GAP + r")(?P<kind>ustaw[yie]|rozporządzeni[au]|kodeksu)(?![\w])")
USTAWA_DATED = re.compile(r"(?P<kind>ustaw(?:a|ą|y|ę|ie)|rozporządzeni(?:e|a|u|em)|dekret(?:u|em)?)(?P<issuer>(?:\s+[A-ZŁŚŻŹ]"
                          r"[\wąćęłńóśźż]*(?:\s+(?:i|do\s+[Ss]praw))?){0,8})?\s+" + PA.DATE_RX)
USTAWA_PREFIX = re.compile(PA.USTAWA + r"(?:\s+" + PA.DATE_NC + r")?\s*[-–—,]?\s*")
DEFINITION = re.compile(r"\s*[(,;]?\s*(?:dalej|zwan\w+\s+dalej|dalej\s+jako|dalej\s+zwan\w+|zw\.\s+dalej)\s*[:–-]?\s*[„\"']?"
                        r"(?:ustaw\w*\s+)?(?P<alias>[A-Za-ząćęłńóśźżŁŚŻ.]{2,12})[”\"']?")
# "ustawy o <subject>", "rozporządzenia Ministra … w sprawie <subject>": the title words up to punctuation
# (at most twelve); "ustawy, o której mowa" is no title
UNKNOWN_TITLED = re.compile(
    r"(?P<kind>ustaw(?:a|ą|y|ę|ie)|rozporządzeni(?:e|a|u|em)|dekret(?:u|em)?)(?:\s+[A-ZŁŚŻŹ][\wąćęłńóśźż]*){0,8}"
    r"\s+(?P<title>(?:o|w\s+sprawie)\s+(?!któr|ile\b|tyle\b|czym\b|tym\b|tej\b|ten\b|to\b|niej\b|nim\b)"
    r"[\wąćęłńóśźżĄĆĘŁŃÓŚŹŻ„”\"-]+(?:[ \t\u00a0]+[\wąćęłńóśźżĄĆĘŁŃÓŚŹŻ„”\"-]+){0,11})")
YEAR_AFTER = re.compile(r"[ \t\u00a0]+z[ \t\u00a0]+(?P<year>(?:19|20)\d\d)[ \t\u00a0]*(?:r\.|roku)")
UNKNOWN_TITLE = "unknown_title"  # ActRef.how of an act named by a title no table knows (its id is "")
PAREN_ADDRESS = re.compile(r"\s*\((?P<inner>[^()]{0,200}?Dz\.\s?U\.[^()]{0,200})\)")


def _normalise_number(raw: str) -> str:
    """``626¹³`` / ``626^13`` / ``626(13)`` → ``626^13``; ``18³a`` → ``18^3a``; ``l`` (a letter l
    printed for 1) → ``1``."""
    if raw == "l":
        return "1"
    m = re.fullmatch(r"(\d+)(?:\^(\d+)|\((\d+)\)|\s?([" + SUP_DIGITS + r"]+))?([a-z]{0,2})", raw)
    if not m:
        return raw
    base, sup = m.group(1), m.group(2) or m.group(3) or (m.group(4) or "").translate(_SUP_TO_DIGIT)
    return base + (f"^{sup}" if sup else "") + m.group(5)


# -------------------------------------------------------------------------------------- model


@dataclass
class Citation:
    start: int
    end: int
    text: str
    unit: str = "art"  # "art" | "§" (a regulation's top unit) | None (a whole act: a Dz. U. address)
    article: str | None = None  # corpus form: "415", "626^13", "18^3a"; the § number for unit "§"
    par: list[str] = field(default_factory=list)  # § values (par in unit ids)
    ust: list[str] = field(default_factory=list)
    point: list[str] = field(default_factory=list)  # pkt (pt in unit ids)
    letter: list[str] = field(default_factory=list)  # lit.
    paths: list[tuple[tuple[str, str], ...]] = field(default_factory=list)  # (("par","1"),("pt","2")) per unit cited
    range_end: str | None = None  # "356" on "art. 353–356"
    act_id: str | None = None
    in_corpus: bool = False
    act_text: str | None = None  # the act as printed (on the member that prints it)
    act_source: str | None = None  # own | list | scope | chain | anaphor | None
    act_how: str | None = None  # abbreviation | name | address | unified | title | date | alias | unknown_title
    # (unknown_title: an act named by a title no table knows, act_id None, act_text what was printed)
    relation: str | None = None  # "chain" when introduced by "w zw. z"; "list" for a later list member
    group: int = 0
    raw_article: str | None = None  # as printed when the superscript was restored ("39814")

    @property
    def paragraph(self) -> list[str]:
        """§ values of a code's article, else ust. values (the article's paragraph level)."""
        return self.par or self.ust

    def article_numbers(self, cap: int = RANGE_CAP) -> list[str]:
        """The article numbers cited: the article, or every article of a range (up to ``cap``)."""
        if self.article is None:
            return []
        if self.range_end:
            lo, hi = _split_sup(self.article), _split_sup(self.range_end)
            if lo and hi and lo[1] is None and hi[1] is None and lo[0] < hi[0] <= lo[0] + cap:
                return [str(n) for n in range(lo[0], hi[0] + 1)]
            if lo and hi and lo[0] == hi[0] and lo[1] is not None and hi[1] is not None and lo[1] < hi[1] <= lo[1] + cap:
                return [self.article] + [f"{lo[0]}^{n}" for n in range(lo[1] + 1, hi[1] + 1)]
            if lo and hi and lo[0] == hi[0] and lo[1] is None and hi[1] is not None and hi[1] <= cap:
                return [self.article] + [f"{lo[0]}^{n}" for n in range(1, hi[1] + 1)]
            return [self.article, self.range_end]
        return [self.article]

    @property
    def bare_paragraph(self) -> bool:
        """A ``§`` with no article, of an act whose top unit is the article ("na mocy 386 § 3
        k.p.c." with "art." left out, "art. 58 § 1 w zw. z § 3 k.c."): a paragraph of some article
        the citation does not name, so no unit id and no (act, article) pair rather than a wrong one
        (``pl:kpc:par:3``). Regulations, whose top unit is the ``§``, keep theirs."""
        return self.unit == "§" and PA.top_unit(self.act_id) not in (None, "§")

    def _prefix(self) -> str | None:
        if self.act_id is None or self.article is None or self.bare_paragraph:
            return None
        return f"{self.act_id}:{'par' if self.unit == '§' else 'art'}"

    def article_ids(self, cap: int = RANGE_CAP) -> list[str]:
        """Article-level ids (``pl:kc:art:415``; every article of a range, up to ``cap``); none
        without an act."""
        p = self._prefix()
        return [f"{p}:{n}" for n in self.article_numbers(cap)] if p else []

    def unit_ids(self) -> list[str]:
        """The most specific unit ids cited, corpus form: ``pl:kpc:art:98:par:1``,
        ``pl:x:art:5:ust:2:pt:3:lit:a``; article ids when no paragraph/point is cited (and for a
        range); none without an act."""
        p = self._prefix()
        if not p:
            return []
        if self.range_end or not self.paths:
            return self.article_ids()
        base = f"{p}:{self.article}"
        return list(dict.fromkeys(base + "".join(f":{t}:{v}" for t, v in path) for path in self.paths))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["paths"] = [list(map(list, p)) for p in self.paths]
        d["article_ids"] = self.article_ids()
        d["unit_ids"] = self.unit_ids()
        return d


def _split_sup(n: str) -> tuple[int, int | None] | None:
    m = re.fullmatch(r"(\d+)(?:\^(\d+))?", n)
    if not m:
        return None
    return int(m.group(1)), (int(m.group(2)) if m.group(2) else None)


# -------------------------------------------------------------------------------------- acts


@dataclass
class _Act:
    end: int
    text: str
    ref: PA.ActRef | None  # None: an anaphor not resolved yet
    kind: str = "ustawa"  # ustawa | kodeks | rozporządzenie | other
    anaphor: str | None = None


class _Doc:
    """Per-judgment state: the acts named so far (for anaphora and definitions)."""

    def __init__(self, text: str, date: str | None) -> None:
        self.text = text
        self.date = date
        self.aliases: dict[str, PA.ActRef] = {}
        self.last: dict[str, PA.ActRef] = {}
        lx = PA.lexicon()
        self.abbr_rx, self.name_rx = lx.abbr_rx, lx.name_rx
        # a statute or regulation the judgment gives with its address once is that address everywhere
        self.dated: dict[tuple[str, str], PA.ActRef] = {}
        for m in USTAWA_DATED.finditer(text):
            tail = _TITLE_TAIL.match(text, m.end())
            hit = _address_after(text, tail.end(), int(m.group("year"))) if tail else None
            if hit:
                self.dated.setdefault(_dated_key(m), hit[1])

    def remember(self, act: _Act, at: int) -> None:
        if act.ref is None:
            return
        self.last[act.kind] = act.ref
        d = DEFINITION.match(self.text, act.end)
        if d and not PA.by_abbreviation(d.group("alias"), self.date):
            self.aliases[d.group("alias").lower().strip(".")] = act.ref


def _kind(text: str, ref: PA.ActRef | None) -> str:
    low = text.lower()
    if low.startswith("rozporządz"):
        return "rozporządzenie"
    if "kodeks" in low or (ref is not None and re.fullmatch(r"pl:k\w{1,3}", ref.id or "")):
        return "kodeks"
    return "ustawa"


_TITLE_TAIL = re.compile(r"[^()\n;]{0,260}?(?=\s*\()")


def _dated_key(m: re.Match) -> tuple[str, str]:
    kind = "rozporządzenie" if m.group("kind").startswith("rozp") else m.group("kind")[:5]
    return kind, PA.iso_date(m)


def _address_after(text: str, pos: int, year_hint: int | None) -> tuple[int, PA.ActRef] | None:
    """``(Dz. U. z 1964 r. Nr 43, poz. 296)`` / ``(t.j. Dz. U. …)`` right after ``pos``."""
    m = PAREN_ADDRESS.match(text, pos)
    if not m:
        return None
    inner = m.group("inner")
    a = PA.ADDRESS.search(inner)
    if not a:
        return None
    year = int(a.group("year")) if a.group("year") else year_hint
    unified = bool(PA.UNIFIED.search(inner[:a.start()]))
    ref = PA.by_address(year, int(a.group("poz")), unified=unified)
    d = DEFINITION.search(inner, a.end())
    if ref is not None and ref.id.startswith("pl:du:") and d:
        # "(t.j. Dz. U. z 2001 r. Nr 124, poz. 1361; dalej – „u.k.w.h.”)": a unified text no table
        # knows, named by a known abbreviation
        ref = PA.by_abbreviation(d.group("alias"), None) or ref
    return (m.end(), ref) if ref else None


def _match_act(doc: _Doc, pos: int) -> _Act | None:
    """An act printed at ``pos`` (after a gap): abbreviation, name, dated statute / regulation,
    anaphor, a defined alias, or a Dz. U. address in parentheses."""
    text = doc.text
    g = _GAP.match(text, pos)
    q = g.end() if g else pos
    if q == pos and q < len(text) and text[q].isalnum():
        return None
    if q >= len(text):
        return None
    c = text[q]
    # "(Dz. U. z 1997 r. Nr 78, poz. 483)" right after the number
    if c == "(":
        hit = _address_after(text, q, None)
        if hit:
            return _Act(hit[0], text[q:hit[0]], hit[1], "other")
        return None
    # full names, also after "ustawy (z dnia …) -"
    starts = [q]
    u = USTAWA_PREFIX.match(text, q)
    if u and u.end() > q:
        starts.append(u.end())
    for s in starts:
        m = doc.name_rx.match(text, s)
        if m:
            name = text[q:m.end()]
            year = YEAR_AFTER.match(text, m.end())  # "Prawa budowlanego z 1961 r.": that year's act
            ref = PA.by_name(name, doc.date, int(year.group("year")) if year else None)
            if ref:
                end = year.end() if year else m.end()
                hit = _address_after(text, end, None)
                if hit and hit[1].id == ref.id:
                    end = hit[0]
                return _Act(end, text[q:end], ref, _kind(name, ref))
        m = doc.abbr_rx.match(text, s)
        if m:
            ref = PA.by_abbreviation(m.group(0), doc.date)
            if ref:
                return _Act(m.end(), text[q:m.end()], ref, _kind(m.group(0), ref))
    # a statute / regulation by its date: its address in parentheses, else its date; also after an
    # anaphor ("cyt. ustawy z 16 grudnia 2010 r." is that statute, not the one named last)
    m = USTAWA_DATED.match(text, q)
    a = ANAPHOR.match(text, q) if m is None else None
    if a is not None:
        m = USTAWA_DATED.match(text, a.start("kind"))
        n = doc.name_rx.match(text, a.start("kind")) if m else None
        ref = PA.by_name(n.group(0), doc.date) if n else None
        if ref is not None:
            return _Act(n.end(), text[q:n.end()], ref, _kind(n.group(0), ref))
    if m:
        kind = "rozporządzenie" if m.group("kind").startswith("rozp") else "ustawa"
        ref = None  # a known act's name after the date was tried above; an amending act is its own act
        year = int(m.group("year"))
        tail = _TITLE_TAIL.match(text, m.end())
        hit = _address_after(text, tail.end(), year) if tail else None
        if ref is None and hit:
            ref = hit[1]
        if ref is None:
            ref = doc.dated.get(_dated_key(m))
        if ref is None:
            date = PA.iso_date(m)
            ref = PA.ActRef(f"pl:{'rozporzadzenie' if kind == 'rozporządzenie' else 'ustawa'}:{date}", False, "date")
        end = hit[0] if hit else m.end()
        return _Act(end, text[q:end], ref, kind)
    # "tej ustawy", "powołanej ustawy", "cyt. rozporządzenia"
    m = ANAPHOR.match(text, q)
    if m:
        kind = ("rozporządzenie" if m.group("kind").startswith("rozp")
                else "kodeks" if m.group("kind").startswith("kodeks") else "ustawa")
        return _Act(m.end(), m.group(0), doc.last.get(kind), kind, anaphor=kind)
    # an alias the judgment defined ("dalej: u.o.p.")
    m = re.compile(r"(?:ustaw\w*\s+)?(?P<alias>[A-Za-ząćęłńóśźżŁŚŻ.]{2,12})").match(text, q)
    if m and doc.aliases:
        ref = doc.aliases.get(m.group("alias").lower().strip("."))
        if ref:
            return _Act(m.end(), m.group(0), PA.ActRef(ref.id, ref.in_corpus, "alias", ref.max_article))
    # a statute or regulation named by a title no table knows ("ustawy o zmianie ustawy o finansach
    # publicznych", "rozporządzenia w sprawie …"): an act is named, just not one lexpipe can identify
    m = UNKNOWN_TITLED.match(text, q)
    if m:
        kind = "rozporządzenie" if m.group("kind").startswith("rozp") else "ustawa"
        return _Act(m.end(), m.group(0), PA.ActRef("", False, UNKNOWN_TITLE), kind)
    return None


# -------------------------------------------------------------------------------------- scanner


@dataclass
class _Member:
    start: int
    end: int
    sign: str  # "art" | "§"
    number: str
    raw: str
    paths: list[dict[str, str]] = field(default_factory=list)
    range_end: str | None = None
    relation: str | None = None  # None (first) | list | chain
    act: _Act | None = None


def _values(text: str, pos: int, qual: str, cur_level: int) -> tuple[list[str], int]:
    """Values of one qualifier: ``1``, ``1 i 3``, ``1, 2``, ``1-3``; letters for lit. Stops before
    a number followed by its own qualifier of the same or a higher level (a new member)."""
    rx = LETTER_VAL if qual == "lit" else VAL
    m = rx.match(text, pos)
    if not m or (qual != "lit" and NOT_A_NUMBER.match(text, m.end())):
        return [], pos
    vals, end = [m.group("val")], m.end()
    while True:
        r = RANGE_SEP.match(text, end)
        if r and qual != "lit":
            v = VAL.match(text, r.end())
            if v and v.group("val").isdigit() and vals[-1].isdigit() and int(vals[-1]) < int(v.group("val")) <= int(vals[-1]) + 20:
                vals += [str(n) for n in range(int(vals[-1]) + 1, int(v.group("val")) + 1)]
                end = v.end()
                continue
        s = LIST_SEP.match(text, end)
        if not s or s.end() == end:
            break
        if CHAIN.match(text, end):
            break
        v = rx.match(text, s.end())
        if not v or (qual != "lit" and NOT_A_NUMBER.match(text, v.end())):
            break
        nq = QUAL.match(text, v.end())
        if nq and LEVEL[next(k for k in LEVEL if nq.group(k))] <= LEVEL[qual]:
            break  # "ust. 1, 6 ust. 2": 6 is a new article
        vals.append(v.group("val"))
        end = v.end()
    return vals, end


def _parse_member(text: str, pos: int, sign: str) -> _Member | None:
    m = NUM.match(text, pos)
    if not m or NOT_A_NUMBER.match(text, m.end()):
        return None
    raw = m.group(0)
    sup = m.group("sup") or m.group("sup2") or m.group("sup3") or m.group("sup4")
    number = m.group("num")
    if sup:
        number += "^" + sup.translate(_SUP_TO_DIGIT)
    number += m.group("let") or m.group("slet") or ""
    mem = _Member(pos, m.end(), sign, number, raw)
    end = m.end()
    path: dict[str, str] = {}
    paths: list[dict[str, str]] = []
    while True:
        ig = IGNORED_QUAL.match(text, end)
        if ig:
            end = ig.end()
            continue
        q = QUAL.match(text, end)
        cont = False
        if q is None and paths:
            # "§ 1, § 2 i § 3" / "ust. 1, 2 i ust. 3 pkt 1": a separator followed by a qualifier continues
            s = LIST_SEP.match(text, end)
            if s and s.end() > end and not CHAIN.match(text, end):
                q = QUAL.match(text, s.end())
                cont = q is not None
        if q is None:
            break
        name = next(k for k in LEVEL if q.group(k))
        if sign == "§" and name == "par":
            break  # "§ 5, § 6" after a § member: new members
        if cont and LEVEL[name] < min(LEVEL[k] for p in paths for k in p):
            break  # "art. 186 ust. 6 pkt 1 oraz § 5 ust. 1 rozporządzenia": a § above the ust. starts something else
        vals, vend = _values(text, q.end(), name, LEVEL[name])
        if not vals:
            break
        lvl = LEVEL[name]
        base = {k: v for k, v in path.items() if LEVEL[k] < lvl}
        if paths and not cont:
            # a deeper level refines the paths that end one level up
            parents = [p for p in paths if p and max(LEVEL[k] for k in p) < lvl] or [base]
            last_parent = parents[-1]
            new = [{**last_parent, name: v} for v in vals]
            paths = [p for p in paths if p is not last_parent] + new
        else:
            new = [{**base, name: v} for v in vals]
            paths += new
        path = new[-1]
        end = vend
    mem.paths = paths
    mem.end = end
    return mem


@dataclass
class _Run:
    members: list[_Member]
    start: int
    end: int


def _parse_run(doc: _Doc, pos: int, sign_m: re.Match) -> _Run | None:
    text = doc.text
    sign = "art" if sign_m.group("art") else "§"
    g = _GAP0.match(text, sign_m.end())
    first = _parse_member(text, g.end() if g else sign_m.end(), sign)
    if first is None:
        return None
    first.start = pos
    # "§ 2 art. 5 k.c.": the § is the article's paragraph
    if sign == "§":
        s2 = re.compile(GAP + r"(?:[Aa]rt\.?|artykułu)" + GAP0).match(text, first.end)
        if s2:
            art = _parse_member(text, s2.end(), "art")
            if art is not None:
                qual = {"par": first.number}
                art.paths = [{**qual, **p} for p in art.paths] if art.paths else [qual]
                art.start = pos
                first = art
    members = [first]
    while True:
        cur = members[-1]
        act = _match_act(doc, cur.end)
        if act:
            cur.act = act
            cur.end = act.end
            doc.remember(act, cur.start)
        # a range: "art. 353–356", "art. 117-125"
        if not act:
            r = RANGE_SEP.match(text, cur.end)
            if r:
                s = SIGN.match(text, r.end())
                p = _GAP0.match(text, s.end()).end() if s and s.group("art") else r.end()
                nxt = _parse_member(text, p, cur.sign) if (s is None or s.group("art")) else None
                if nxt is not None and not nxt.paths and not cur.paths:
                    cur.range_end = nxt.number
                    cur.end = nxt.end
                    act = _match_act(doc, cur.end)
                    if act:
                        cur.act, cur.end = act, act.end
                        doc.remember(act, cur.start)
        ch = CHAIN.match(text, cur.end)
        if ch:
            relation, p = "chain", ch.end()
        else:
            s = LIST_SEP.match(text, cur.end)
            if not s or s.end() == cur.end:
                break
            relation, p = "list", s.end()
        sm = SIGN.match(text, p)
        if sm:
            if sm.group("par") and cur.sign == "art":
                break  # "art. 5 k.c. i § 3 umowy": a § after an article list is something else
            sign = "art" if sm.group("art") else "§"
            g = _GAP0.match(text, sm.end())
            mem = _parse_member(text, g.end(), sign)
        elif relation == "list" and not cur.act:
            mem = _parse_member(text, p, cur.sign)  # "art. 58, 353 i 354 k.c."
        else:
            break
        if mem is None:
            break
        mem.start = p
        mem.relation = relation
        members.append(mem)
    return _Run(members, members[0].start, members[-1].end)


def _restore_superscript(number: str, act: PA.ActRef | None, known: frozenset[str] | None) -> str:
    """``39814`` cited from an act whose last article is below it → ``398^14`` (the longest base
    that is an article); with corpus ids, the split that exists."""
    m = re.fullmatch(r"(\d{4,6})([a-z]{0,2})", number)
    if not m or act is None:
        return number
    number, letters = m.groups()
    cands = [(number[:k], number[k:]) for k in range(len(number) - 1, 1, -1) if number[k] != "0"]
    if known is not None and act.in_corpus:
        if f"{act.id}:art:{number}{letters}" in known:
            return number + letters
        for b, s in cands:
            if f"{act.id}:art:{b}^{s}{letters}" in known:
                return f"{b}^{s}{letters}"
    top = act.max_article or GENERIC_TOP
    if int(number) <= top:
        return number + letters
    for b, s in cands:
        if int(b) <= top and len(s) <= 2:
            return f"{b}^{s}{letters}"
    return number + letters


def extract_citations(text: str, *, date: str | None = None, known_ids: Iterable[str] | None = None,
                      keep_unresolved: bool = True, addresses: bool = True) -> list[Citation]:
    """All citations in ``text``, in document order.

    ``date`` (``YYYY-MM-DD``, the judgment's date) picks among acts sharing an abbreviation
    (``p.z.p.`` is the 2019 act from 2021). ``known_ids`` (corpus unit ids) decide how a lost
    superscript splits. An ``art.`` whose act is named nowhere near is kept with ``act_id=None``
    unless ``keep_unresolved`` is False; a ``§`` without an act is never kept (contract clauses,
    specifications). ``addresses``: also return each Dz. U. address as a whole-act citation."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    with pinned():  # one registry for the whole text
        return _extract(text, date, known_ids, keep_unresolved, addresses)


def _extract(text: str, date: str | None, known_ids: Iterable[str] | None, keep_unresolved: bool,
             addresses: bool) -> list[Citation]:
    known = frozenset(known_ids) if known_ids is not None else None
    doc = _Doc(text, date)
    runs: list[_Run] = []
    pos = 0
    for m in SIGN.finditer(text):
        if m.start() < pos:
            continue
        run = _parse_run(doc, m.start(), m)
        if run is None:
            continue
        runs.append(run)
        pos = run.end
    out = _to_citations(doc, runs, known)
    if addresses:
        out.extend(_address_citations(text, out))
    if not keep_unresolved:
        out = [c for c in out if c.act_id is not None]
    out.sort(key=lambda c: (c.start, c.end))
    return out


def _scope_before(doc: _Doc, run: _Run, prev_end: int) -> PA.ActRef | None:
    """An act named right before the run and ended by ':' (``Kodeksu cywilnego: art. 5``,
    ``przepisów ustawy pzp: 1. Art. 89``)."""
    text = doc.text
    lo = max(prev_end, run.start - 160)
    window = text[lo:run.start]
    m = re.search(r":\s*(?:\d{1,2}[.)]\s*|[a-z]\)\s*|[-–•]\s*)?(?:przepis\w*\s+|naruszeni\w+\s+)?$", window)
    if not m:
        return None
    head = window[:m.start()].rstrip()
    head = re.sub(r"\s*\([^()]*\)$", "", head)
    best = None
    for rx in (doc.name_rx, doc.abbr_rx):
        for a in rx.finditer(head):
            if a.end() == len(head):
                best = a
    if best is None:
        return None
    s = best.group(0)
    return PA.by_name(s, doc.date) or PA.by_abbreviation(s, doc.date)


def _to_citations(doc: _Doc, runs: list[_Run], known: frozenset[str] | None) -> list[Citation]:
    text = doc.text
    out: list[Citation] = []
    scope: PA.ActRef | None = None
    prev_end = 0
    for gi, run in enumerate(runs):
        s = _scope_before(doc, run, prev_end)
        if s is not None:
            scope = s
        elif scope is not None and run.start - prev_end > SCOPE_GAP:
            scope = None
        # acts: own, then list (later member of the same list), then scope, then chain
        resolved: list[tuple[PA.ActRef | None, str | None, str | None]] = [(None, None, None)] * len(run.members)
        pending: PA.ActRef | None = None
        via_chain = False
        for k in range(len(run.members) - 1, -1, -1):
            mem = run.members[k]
            if mem.act is not None and mem.act.ref is not None:
                resolved[k] = (mem.act.ref, "anaphor" if mem.act.anaphor else "own", mem.act.text)
                pending, via_chain = mem.act.ref, False
            elif mem.act is not None and mem.act.anaphor:
                resolved[k] = (None, None, mem.act.text)
                pending, via_chain = None, False
            elif pending is not None and not via_chain:
                resolved[k] = (pending, "list", None)
            elif scope is not None:
                resolved[k] = (scope, "scope", None)
            elif pending is not None:
                resolved[k] = (pending, "chain", None)
            if mem.relation == "chain":
                via_chain = True
        for k, mem in enumerate(run.members):
            ref, source, act_text = resolved[k]
            if mem.sign == "§" and ref is None:
                continue  # a § without an act: a contract clause, a specification, not a statute
            number = _restore_superscript(mem.number, ref, known)
            paths = [tuple(sorted(p.items(), key=lambda kv: LEVEL[kv[0]])) for p in mem.paths]
            paths = [tuple((t, _normalise_number(v)) for t, v in p) for p in paths]
            c = Citation(
                start=mem.start, end=mem.end, text=text[mem.start:mem.end], unit=mem.sign, article=number,
                paths=paths, range_end=_restore_superscript(mem.range_end, ref, known) if mem.range_end else None,
                act_id=(ref.id or None) if ref else None, in_corpus=bool(ref and ref.in_corpus), act_text=act_text,
                act_source=source, act_how=ref.how if ref else None, relation=mem.relation, group=gi,
                raw_article=mem.number if number != mem.number else None)
            for t, attr in (("par", "par"), ("ust", "ust"), ("pt", "point"), ("lit", "letter")):
                vals = list(dict.fromkeys(v for p in paths for tt, v in p if tt == t))
                setattr(c, attr, vals)
            out.append(c)
        prev_end = run.end
    return out


def _address_citations(text: str, existing: list[Citation]) -> list[Citation]:
    """Each Dz. U. address as a whole-act citation (``article`` None)."""
    out = []
    for m in PA.ADDRESS.finditer(text):
        year = int(m.group("year")) if m.group("year") else None
        if year is None:
            dates = list(re.finditer(PA.DATE_RX, text[max(0, m.start() - 400):m.start()]))
            year = int(dates[-1].group("year")) if dates else None
        if year is None:
            continue
        unified = bool(PA.UNIFIED.search(text[max(0, m.start() - 30):m.start()]))
        ref = PA.by_address(year, int(m.group("poz")), unified=unified)
        if ref is None:
            continue
        out.append(Citation(m.start(), m.end(), m.group(0), unit=None, article=None, act_id=ref.id,
                            in_corpus=ref.in_corpus, act_text=m.group(0), act_source="own", act_how=ref.how))
    return out


# -------------------------------------------------------------------------------------- pairs


def article_pairs(citations: Iterable[Citation], *, cap: int = RANGE_CAP) -> set[tuple[str, str]]:
    """(act id, article) pairs of citations with an act and an article (``§`` units as ``§5``)."""
    out: set[tuple[str, str]] = set()
    for c in citations:
        if c.act_id is None or c.article is None or c.bare_paragraph:
            continue
        for n in c.article_numbers(cap):
            out.add((c.act_id, n if c.unit == "art" else f"§{n}"))
    return out


# -------------------------------------------------------------------------------------- spaCy

COMPONENT = "polish_statute_citations"


def _register() -> None:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

    if not Span.has_extension("pl_citation"):
        Span.set_extension("pl_citation", default=None)
    if not Doc.has_extension("pl_citations"):
        Doc.set_extension("pl_citations", default=None)
    if not Doc.has_extension("judgment_date"):
        Doc.set_extension("judgment_date", default=None)
    if COMPONENT in Language.factories:
        return

    @Language.factory(COMPONENT, default_config={"spans_key": "citations", "keep_unresolved": True})
    def _make(nlp: Language, name: str, spans_key: str, keep_unresolved: bool) -> "PolishCitations":
        return PolishCitations(spans_key=spans_key, keep_unresolved=keep_unresolved)


class PolishCitations:
    """spaCy component: ``doc.spans[spans_key]`` (label ``LAW``), ``span._.pl_citation`` and
    ``doc._.pl_citations`` (every :class:`Citation`, exact character offsets). Set
    ``doc._.judgment_date`` before the component runs to date-resolve shared abbreviations, and
    ``known_ids`` (corpus unit ids) to split lost superscripts by what exists."""

    def __init__(self, spans_key: str = "citations", known_ids: Iterable[str] | None = None,
                 keep_unresolved: bool = True) -> None:
        self.spans_key = spans_key
        self.known_ids = frozenset(known_ids) if known_ids is not None else None
        self.keep_unresolved = keep_unresolved

    def __call__(self, doc):
        cits = extract_citations(doc.text, date=doc._.judgment_date, known_ids=self.known_ids,
                                 keep_unresolved=self.keep_unresolved)
        spans, kept = [], []
        for c in cits:
            span = doc.char_span(c.start, c.end, label="LAW", alignment_mode="expand")
            if span is None:
                continue
            spans.append(span)
            kept.append(c)
        doc.spans[self.spans_key] = spans
        for span, c in zip(spans, kept):
            span._.pl_citation = c
        doc._.pl_citations = cits
        return doc


def make_pl_nlp(known_ids: Iterable[str] | None = None, *, keep_unresolved: bool = True):
    """``spacy.blank("pl")`` + the Polish citation component."""
    import spacy

    _register()
    nlp = spacy.blank("pl")
    nlp.max_length = 5_000_000
    comp = nlp.add_pipe(COMPONENT, config={"keep_unresolved": keep_unresolved})
    comp.known_ids = frozenset(known_ids) if known_ids is not None else None
    return nlp


def citations_of(text: str, *, date: str | None = None, nlp=None) -> list[Citation]:
    """Citations of one judgment text through the spaCy pipeline (``make_pl_nlp()`` when none given)."""
    nlp = nlp or make_pl_nlp()
    doc = nlp.make_doc(text)
    doc._.judgment_date = date
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    return doc._.pl_citations


_register()
