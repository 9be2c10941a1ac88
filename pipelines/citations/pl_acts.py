"""Polish act names, abbreviations and Dz. U. addresses → one act id, and which acts the corpus holds.

Why: Polish courts cite one act as ``k.p.c.``, ``kpc``, ``k. p. c.``, ``Kodeksu postępowania
cywilnego``, ``ustawy z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego`` (or ``z dnia
17.11.1964 r.``), by its original address ``Dz. U. z 1964 r. Nr 43, poz. 296`` or by a unified text
(``t.j. Dz. U. z 2023 r. poz. 1550``); SAOS's ``referencedRegulations`` name the same act by journal
year/number/entry, often the *Obwieszczenie Marszałka Sejmu … w sprawie ogłoszenia jednolitego
tekstu ustawy - …* that republished it. Every one of these must give the same id, or the citations
of a judgment cannot be compared with SAOS's list, counted per act or linked to corpus units.

Ids:

* acts of the act registry (``schemas.acts.registry().of_jurisdiction("pl")``, read at every call,
  so a registry set for a test or a run counts) keep their registry id (``pl:kc``) and are
  ``in_corpus``; their short citation (``k.c.``), aliases, title (any case ending: the title is
  turned into a stem pattern, ``Kodeksu pracy`` / ``Kodeksem pracy``) and address (``DU/1964/93``
  → Dz. U. 1964 poz. 93) come from the registry row;
* the Polish and EU acts of the table of known acts (``schemas/known_acts.toml``, loaded by
  :mod:`schemas.known_acts`: title, date, citation forms, original and unified addresses) get their
  table id (``pl:kpk``, ``pl:upk``, ``pl:konstytucja``, ``eu:2016/679`` for ``RODO``), out of
  corpus; a table row whose address is a registry act's address is merged into that act (its t.j.
  addresses and extra forms then resolve to the registry id) — the table says nothing about what
  is held;
* any other act cited by address gets ``pl:du:<year>:<poz>`` (the ELI form of the registry:
  a position is unique within a year's journal, and texts drop or misprint the ``Nr``), out of
  corpus; a statute or regulation cited by date only, ``pl:ustawa:<yyyy-mm-dd>`` /
  ``pl:rozporzadzenie:<yyyy-mm-dd>``.

An amending act (``ustawy … o zmianie ustawy - Kodeks cywilny``) is never the act it amends.

Speed with a large registry (issue 24 adds thousands of German rows): the Polish rows, held ids and
top units are computed once per registry object (:func:`_per_registry`), the lexicon once per
(Polish rows, table) — never a scan of the registry per citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, TypeVar

from pipelines.citations.registry_pin import current as current_registry
from schemas.acts import Act, ActRegistry
from schemas.known_acts import KnownAct, KnownActs, known_acts

# ------------------------------------------------------------------------------------------ table

MONTHS = {"stycznia": 1, "lutego": 2, "marca": 3, "kwietnia": 4, "maja": 5, "czerwca": 6, "lipca": 7,
          "sierpnia": 8, "września": 9, "października": 10, "listopada": 11, "grudnia": 12}
_MONTH_RX = "|".join(MONTHS)
_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10, "XI": 11, "XII": 12}
# "z dnia 29 stycznia 2004 r." / "z 17 grudnia 1998 r." / "z dnia 17.12.1998r." / "z dnia 6.VII.1982 r."
DATE_RX = (rf"z\s+(?:dnia\s+)?(?P<day>\d{{1,2}})(?:\s+(?P<month>{_MONTH_RX})\s+"
           r"|\.[ \u00a0]?(?P<mnum>0?[1-9]|1[0-2]|XII|XI|IX|X|VIII|VII|VI|IV|V|III|II|I)\.[ \u00a0]?)"
           r"(?P<year>(?:1[89]|20)\d\d)\s*(?:r\.|roku)?")
DATE_NC = re.sub(r"\(\?P<\w+>", "(?:", DATE_RX)  # the same without named groups, to combine in one pattern
USTAWA = r"ustaw(?:a|ą|y|ę|ie)"
# "rozporządzenia Prezesa Rady Ministrów z dnia 15 marca 2010 r. w sprawie " (issuer and date optional)
REGULATION = (r"rozporządzeni(?:e|a|u|em)(?:\s+(?:[A-ZŁŚŻŹ][\wąćęłńóśźż]*|i|do\s+[Ss]praw)){0,8}(?:\s+" + DATE_NC
              + r")?\s+w\s+sprawie\s+")


def month_of(m: re.Match) -> int:
    """The month of a :data:`DATE_RX` match (a name, a number or a Roman numeral)."""
    if m.group("month"):
        return MONTHS[m.group("month")]
    num = m.group("mnum")
    return int(num) if num.isdigit() else _ROMAN[num]


def iso_date(m: re.Match) -> str:
    """``z dnia 17.12.1998 r.`` → ``1998-12-17`` (a :data:`DATE_RX` match)."""
    return f"{int(m.group('year')):04d}-{month_of(m):02d}-{int(m.group('day')):02d}"


# "Dz. U. z 1964 r. Nr 43, poz. 296", "Dz.U. 2023 poz. 1550", "Dz. U. z 2010 r. 113, poz. 759", "Dz. U. Nr 169, poz. 1417"
ADDRESS = re.compile(
    r"Dz\.\s?U\.?(?:\s*(?:RP|UE))?\s*(?:z\s*)?(?:(?P<year>(?:19|20)\d\d)\s*(?:r\.?|roku)?)?\s*,?\s*"
    r"(?:(?:Nr|nr|Nr\.)\s*(?P<nr>\d{1,3})|(?P<barenr>\d{1,3})(?=\s*,?\s*poz))?\s*,?\s*poz\.?\s*(?P<poz>\d{1,4})")
UNIFIED = re.compile(r"(?:t\.\s?j\.|j\.\s?t\.|tekst\s+jednolity|tekst\s+jedn\.|jednolity\s+tekst)\s*:?\s*$", re.I)
AMENDING = re.compile(r"\bo\s+zmianie\b|\bzmieniając", re.I)
OBWIESZCZENIE = re.compile(
    r"jednolitego\s+tekstu\s+(?P<kind>ustawy|rozporządzenia|dekretu)(?:\s+" + DATE_RX + r")?\s*[-–]?\s*(?P<name>.+)$",
    re.I | re.S)

# ------------------------------------------------------------------------------------------ model


@dataclass(frozen=True)
class ActRef:
    """The act a citation names: its id, whether the corpus holds it, and how it was recognised."""

    id: str
    in_corpus: bool
    how: str  # abbreviation | name | address | unified | title | date | alias
    max_article: int | None = None


@dataclass
class _Entry:
    id: str
    in_corpus: bool
    abbreviations: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # regexes
    addresses: set[tuple[int, int]] = field(default_factory=set)
    unified: set[tuple[int, int]] = field(default_factory=set)
    max_article: int | None = None
    valid_from: str | None = None
    date: str | None = None  # the date the act bears (YYYY-MM-DD), when the registry or the table says

    def ref(self, how: str) -> ActRef:
        return ActRef(self.id, self.in_corpus, how, self.max_article)


@dataclass
class Lexicon:
    entries: list[_Entry]
    abbr_rx: re.Pattern
    name_rx: re.Pattern
    by_abbr: dict[str, list[_Entry]]
    by_address: dict[tuple[int, int], tuple[_Entry, str]]
    name_res: list[tuple[re.Pattern, _Entry]]
    by_id: dict[str, _Entry] = field(default_factory=dict)


def _stem_word(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return re.escape(w)
    stem = re.sub(r"[aeiouyąęó]{1,2}$", "", w)
    if len(stem) < 4:
        stem = w[:4]
    return re.escape(stem) + r"\w{0,4}"


def name_pattern(title: str) -> str:
    """A title in any case ending and any capitalisation (``Kodeksu Pracy``, ``o Zakładowym
    Funduszu …``): ``Kodeks pracy`` → ``(?i:[Kk]odeks\\w{0,4}\\s+prac\\w{0,4})``; a title ``o …``
    (a statute named by its subject) needs ``ustawa`` / ``ustawy`` … before it, optionally with its
    date (``ustawy z dnia 28 lipca 2005 r. o kosztach …``)."""
    words = title.split()
    parts = [_stem_word(w) for w in words]
    first = words[0]
    if first[0].isalpha():
        parts[0] = f"[{first[0].upper()}{first[0].lower()}]" + parts[0][1:] if not parts[0].startswith("\\") else parts[0]
    body = r"\s+".join(parts)
    if words[0] == "o":
        return rf"(?i:{USTAWA}\s+(?:{DATE_NC}\s*)?{body})"
    return f"(?i:{body})"


def _letters(abbr: str) -> str:
    return re.sub(r"[.\s]", "", abbr).lower()


def abbreviation_pattern(abbr: str) -> str:
    """``k.p.c.`` → ``k.p.c.``, ``k.p.c``, ``K.p.c.``, and with every dot printed also spaced,
    ``k. p. c.`` (a tight form has no space inside: ``k.k. w`` is k.k. and a word); an undotted form
    (``kpc``, ``Pzp``) as printed. Matched case-insensitively."""
    if "." not in abbr:
        return re.escape(abbr)
    chunks = [re.escape(c) for c in re.split(r"\.\s?", abbr) if c]
    if " " in abbr:  # "pr. bank." keeps its space
        return r"\.\s?".join(chunks) + r"\.?"
    if len(chunks) == 1:
        return chunks[0] + r"\.?"
    return "(?:" + r"\.".join(chunks) + r"\.?|" + r"\.[ \u00a0]".join(chunks) + r"\.)"


T = TypeVar("T")


def _per_registry(fn: Callable[[ActRegistry], T]) -> Callable[[], T]:
    """``fn(registry())`` computed once per registry object (``registry()`` returns the same object
    until its file changes): a registry of thousands of rows is scanned once, not per citation."""
    memo: list = [None, None]

    def wrapper() -> T:
        reg = current_registry()
        if memo[0] is not reg:
            memo[1] = fn(reg)
            memo[0] = reg
        return memo[1]

    wrapper.__doc__ = fn.__doc__
    return wrapper


@_per_registry
def _registry_acts(reg: ActRegistry) -> tuple[Act, ...]:
    return reg.of_jurisdiction("pl")


@_per_registry
def _top_units(reg: ActRegistry) -> dict[str, str]:
    return {a.id: "§" if a.article_unit.strip().rstrip(".") == "§" else "art" for a in reg.of_jurisdiction("pl")}


def _address_of(act: Act) -> tuple[int, int] | None:
    m = re.fullmatch(r"DU/(\d{4})/(\d+)", act.address)
    return (int(m.group(1)), int(m.group(2))) if m else None


_lexicon_memo: list = [None, None, None]  # registry rows, table, lexicon


def lexicon() -> Lexicon:
    """The lookup tables for the registry in force and the table of known acts (built once per pair;
    compared by identity: hashing the rows on every call cost more than the lookups)."""
    acts, table = _registry_acts(), known_acts()
    if _lexicon_memo[0] is not acts or _lexicon_memo[1] is not table:
        _lexicon_memo[2] = _lexicon(acts, table)
        _lexicon_memo[0], _lexicon_memo[1] = acts, table
    return _lexicon_memo[2]


_TITLED = ("ustawa", "dekret", "konstytucja", "umowa międzynarodowa")  # types whose title is also a name pattern


@lru_cache(maxsize=8)
def _lexicon(acts: tuple[Act, ...], table: KnownActs) -> Lexicon:
    entries: list[_Entry] = []
    by_addr_entry: dict[tuple[int, int], _Entry] = {}
    for a in acts:
        e = _Entry(a.id, True, list(a.citations), [name_pattern(a.title)], date=date_of(a.official_title or ""))
        addr = _address_of(a)
        if addr:
            e.addresses.add(addr)
            by_addr_entry[addr] = e
        entries.append(e)
    by_id = {e.id: e for e in entries}
    for k in table.of_jurisdiction("pl", "eu"):
        e = by_addr_entry.get(k.position) if k.position else None
        if e is None:
            e = by_id.get(k.id)
        if e is None:
            e = _Entry(k.id, False)  # "pl:du:2010:238" rows keep the address id
            entries.append(e)
            by_id[k.id] = e
            if k.position:
                e.addresses.add(k.position)
        e.abbreviations += [x for x in k.citations if x not in e.abbreviations]
        pat = name_pattern(k.title) if k.type in _TITLED else None
        if pat and pat not in e.names:
            e.names.append(pat)
        e.names += [n for n in k.names if n not in e.names]
        e.unified |= {p for p in map(_position_of, k.unified) if p}
        e.max_article = e.max_article or k.max_article
        e.valid_from = k.valid_from
        e.date = e.date or k.date
    by_abbr: dict[str, list[_Entry]] = {}
    for e in entries:
        for ab in e.abbreviations:
            by_abbr.setdefault(_letters(ab), []).append(e)
    abbrs = sorted({abbreviation_pattern(ab) for e in entries for ab in e.abbreviations}, key=len, reverse=True)
    abbr_rx = re.compile(r"(?<![\w.])(?:" + "|".join(abbrs) + r")(?![\w])", re.I)
    names = sorted({n for e in entries for n in e.names}, key=len, reverse=True)
    name_rx = re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{n})" for n in names) + r")(?![\w])")
    by_address: dict[tuple[int, int], tuple[_Entry, str]] = {}
    for e in entries:
        for ad in e.unified:
            by_address.setdefault(ad, (e, "unified"))
    for e in entries:
        for ad in e.addresses:
            by_address[ad] = (e, "address")
    name_res = [(re.compile(rf"(?:{n})$"), e) for e in entries for n in e.names]
    return Lexicon(entries, abbr_rx, name_rx, by_abbr, by_address, name_res, {e.id: e for e in entries})


def _position_of(address: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"DU/(\d{4})/(\d+)", address)
    return (int(m.group(1)), int(m.group(2))) if m else None


# ------------------------------------------------------------------------------------------ lookups


def _pick(cands: list[_Entry], date: str | None) -> _Entry:
    """Of entries sharing an abbreviation or title, the newest one in force at ``date``; entries
    without ``valid_from`` count in table order (the table lists an older act of the same title
    before the newer one)."""
    if len(cands) == 1:
        return cands[0]
    dated = sorted(cands, key=lambda e: e.valid_from or "")
    chosen = dated[0]
    for e in dated:
        if e.valid_from is None or (date is not None and date >= e.valid_from):
            chosen = e
    return chosen


@_per_registry
def held_ids(reg: ActRegistry) -> frozenset[str]:
    """Ids of the Polish acts the corpus holds (the registry in force)."""
    return frozenset(a.id for a in reg.of_jurisdiction("pl"))


def top_unit(act_id: str | None) -> str | None:
    """The top unit of a held act as the registry says (``art`` for the codes: a ``§`` is then a
    paragraph of an article); None for an act the corpus does not hold."""
    return _top_units().get(act_id) if act_id else None


def in_corpus(act_id: str | None) -> bool:
    return act_id is not None and act_id in held_ids()


def by_abbreviation(abbr: str, date: str | None = None) -> ActRef | None:
    """``k.p.c.`` / ``kpc`` / ``K.p.c.`` → the act (``date`` picks among successive acts sharing
    an abbreviation: ``p.z.p.`` is the 2019 act from 2021)."""
    cands = lexicon().by_abbr.get(_letters(abbr))
    return _pick(cands, date).ref("abbreviation") if cands else None


def by_name(name: str, date: str | None = None, year: int | None = None) -> ActRef | None:
    """A full name in any case ending (``Kodeksu postępowania cywilnego``, ``ustawy z dnia 29
    stycznia 2004 r. Prawo zamówień publicznych``). The year printed in the name picks among acts
    of one title (p.z.p. 2004 / 2019); a date printed in the name that is not the act's date means
    another act whose title begins the same way (``ustawy z dnia 14 grudnia 1982 r. o ubezpieczeniu
    społecznym rolników indywidualnych …`` is not the 1990 ``… o ubezpieczeniu społecznym
    rolników``): no match; so is a ``year`` printed after the name (``Prawa budowlanego z 1961 r.``)
    that is neither the year of the act's date nor of its address; an amending act (``o zmianie
    ustawy - …``) is no match."""
    s = re.sub(r"\s+", " ", name).strip().rstrip(" .,;")
    rest = re.sub(rf"^(?:{USTAWA}|Ustawa)\s*(?:{DATE_NC})?\s*[-–—]?\s*", "", s, flags=re.I)
    if re.match(r"o\s+zmianie|zmieniając", rest, re.I):
        return None
    lx = lexicon()
    cands: list[_Entry] = []
    for rx, e in lx.name_res:
        if rx.search(s) and e not in cands:
            cands.append(e)
    if not cands:
        return None
    if year is not None:
        cands = [e for e in cands if (e.date or "")[:4] == str(year) or any(a[0] == year for a in e.addresses)]
        if not cands:
            return None
    printed = re.search(DATE_RX, s)
    if printed:
        cands = [e for e in cands if e.date is None or e.date == iso_date(printed)]
        if not cands:
            return None
    y = re.search(r"\b(19|20)\d\d\b", s)
    if y and len(cands) > 1:
        year = int(y.group(0))
        exact = [e for e in cands if any(a[0] == year for a in e.addresses)]
        if exact:
            cands = exact
    return _pick(cands, date).ref("name")


def by_address(year: int | None, poz: int | None, *, unified: bool = False) -> ActRef | None:
    """Dz. U. (year, position) → the act published or republished (t.j.) there, else the
    constructed ``pl:du:<year>:<poz>`` (out of corpus)."""
    if year is None or poz is None:
        return None
    hit = lexicon().by_address.get((int(year), int(poz)))
    if hit:
        e, how = hit
        return e.ref("unified" if unified or how == "unified" else "address")
    return ActRef(f"pl:du:{int(year)}:{int(poz)}", False, "address")


def parse_address(text: str) -> tuple[int | None, int | None, int | None] | None:
    """``Dz. U. z 1964 r. Nr 43, poz. 296`` → (1964, 43, 296); no year printed → (None, nr, poz)."""
    m = ADDRESS.search(text)
    if not m:
        return None
    nr = m.group("nr") or m.group("barenr")
    return (int(m.group("year")) if m.group("year") else None, int(nr) if nr else None, int(m.group("poz")))


def date_of(text: str) -> str | None:
    """``z dnia 29 stycznia 2004 r.`` → ``2004-01-29``."""
    m = re.search(DATE_RX, text)
    if not m:
        return None
    return iso_date(m)


def by_title(title: str, year: int | None = None, poz: int | None = None) -> ActRef | None:
    """An act as a journal lists it (SAOS ``journalTitle`` with its year and entry):
    ``Obwieszczenie … w sprawie ogłoszenia jednolitego tekstu ustawy - Kodeks pracy`` → the act it
    republishes; ``Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny`` → ``pl:kc``; an amending act
    or an act no table knows → its address. The address decides first when it is an act's own
    original or unified address."""
    title = re.sub(r"\s+", " ", title or "").strip().rstrip(" .,;")
    if year and poz:
        hit = lexicon().by_address.get((int(year), int(poz)))
        if hit:
            return hit[0].ref("unified" if hit[1] == "unified" else "address")
    ob = OBWIESZCZENIE.search(title)
    if ob and not AMENDING.search(ob.group("name")):
        name = ob.group("name")
        ref = by_name(("ustawy " if name.startswith("o ") else "") + name)
        if ref is None and ob.group("year"):
            month = next(k for k, v in MONTHS.items() if v == month_of(ob))
            ref = by_name(f"ustawy z dnia {int(ob.group('day'))} {month} {ob.group('year')} r. {name}")
        if ref:
            return ActRef(ref.id, ref.in_corpus, "unified", ref.max_article)
    elif not AMENDING.search(title) and re.match(r"(?:Ustawa|Konstytucja|Konwencja)\b", title):
        ref = by_name(title)
        if ref:
            return ActRef(ref.id, ref.in_corpus, "title", ref.max_article)
    return by_address(year, poz) if year and poz else None


def max_article(act_id: str | None) -> int | None:
    e = lexicon().by_id.get(act_id) if act_id else None
    return e.max_article if e else None
