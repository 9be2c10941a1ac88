"""Polish act names, abbreviations and Dz. U. addresses → one act id, and which acts the corpus holds.

Why: Polish courts cite one act as ``k.p.c.``, ``kpc``, ``Kodeksu postępowania cywilnego``,
``ustawy z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego``, by its original address
``Dz. U. z 1964 r. Nr 43, poz. 296`` or by a unified text (``t.j. Dz. U. z 2023 r. poz. 1550``);
SAOS's ``referencedRegulations`` name the same act by journal year/number/entry, often the
*Obwieszczenie Marszałka Sejmu … w sprawie ogłoszenia jednolitego tekstu ustawy - …* that
republished it. Every one of these must give the same id, or the citations of a judgment cannot be
compared with SAOS's list, counted per act or linked to corpus units.

Ids:

* acts of the act registry (``schemas.acts.registry().of_jurisdiction("pl")``, read at every call,
  so a registry set for a test or a run counts) keep their registry id (``pl:kc``) and are
  ``in_corpus``; their short citation (``k.c.``), aliases, title (any case ending: the title is
  turned into a stem pattern, ``Kodeksu pracy`` / ``Kodeksem pracy``) and address (``DU/1964/93``
  → Dz. U. 1964 poz. 93) come from the registry row;
* other acts of :data:`KNOWN_ACTS` (a table of the acts Polish courts cite most, written from
  general legal knowledge: abbreviation, title, original address, unified-text addresses) get
  ``pl:<key>`` (``pl:kpk``, ``pl:pzp``, ``pl:konstytucja``), out of corpus; a table row whose
  original address is a registry act's address is merged into that act (its t.j. addresses and
  extra abbreviations then resolve to the registry id) — the table says nothing about what is held;
* any other act cited by address gets ``pl:du:<year>:<poz>`` (the ELI form of the registry:
  a position is unique within a year's journal, and texts drop or misprint the ``Nr``), out of
  corpus; a statute or regulation cited by date only, ``pl:ustawa:<yyyy-mm-dd>`` /
  ``pl:rozporzadzenie:<yyyy-mm-dd>``.

An amending act (``ustawy … o zmianie ustawy - Kodeks cywilny``) is never the act it amends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from schemas.acts import Act, registry

# ------------------------------------------------------------------------------------------ table

MONTHS = {"stycznia": 1, "lutego": 2, "marca": 3, "kwietnia": 4, "maja": 5, "czerwca": 6, "lipca": 7,
          "sierpnia": 8, "września": 9, "października": 10, "listopada": 11, "grudnia": 12}
_MONTH_RX = "|".join(MONTHS)
# "z dnia 29 stycznia 2004 r." / "z 17 grudnia 1998 r."
DATE_RX = rf"z\s+(?:dnia\s+)?(?P<day>\d{{1,2}})\s+(?P<month>{_MONTH_RX})\s+(?P<year>\d{{4}})\s*(?:r\.|roku)?"
DATE_NC = re.sub(r"\(\?P<\w+>", "(?:", DATE_RX)  # the same without named groups, to combine in one pattern
USTAWA = r"ustaw(?:a|ą|y|ę|ie)"
# "rozporządzenia Prezesa Rady Ministrów z dnia 15 marca 2010 r. w sprawie " (issuer and date optional)
REGULATION = (r"rozporządzeni(?:e|a|u|em)(?:\s+(?:[A-ZŁŚŻŹ][\wąćęłńóśźż]*|i|do\s+[Ss]praw)){0,8}(?:\s+" + DATE_NC
              + r")?\s+w\s+sprawie\s+")


@dataclass(frozen=True)
class PolishAct:
    """One Polish act as courts cite it (general knowledge, not read from any evaluation data)."""

    key: str  # id suffix: pl:<key>
    title: str  # nominative title; "o …" titles are statutes named "ustawa o …"
    abbreviations: tuple[str, ...] = ()
    address: tuple[int, int] | None = None  # original Dz. U. (year, position)
    unified: tuple[tuple[int, int], ...] = ()  # unified texts (t.j.) republishing it
    max_article: int | None = None  # highest article number (splits a lost superscript: 39814 → 398^14)
    names: tuple[str, ...] = ()  # extra name patterns (regex) besides the title
    valid_from: str | None = None  # an abbreviation shared with an older act means this one from then


KNOWN_ACTS: tuple[PolishAct, ...] = (
    PolishAct("kc", "Kodeks cywilny", ("k.c.", "kc"), (1964, 93),
              ((2014, 121), (2016, 380), (2017, 459), (2018, 1025), (2019, 1145), (2020, 1740), (2022, 1360),
               (2023, 1610), (2024, 1061)), 1088),
    PolishAct("kpc", "Kodeks postępowania cywilnego", ("k.p.c.", "kpc"), (1964, 296),
              ((2014, 101), (2016, 1822), (2018, 155), (2018, 1360), (2019, 1460), (2020, 1575), (2021, 1805),
               (2023, 1550), (2024, 1568)), 1217),
    PolishAct("kp", "Kodeks pracy", ("k.p.", "kp"), (1974, 141),
              ((1998, 94), (2014, 1502), (2016, 1666), (2018, 108), (2018, 917), (2019, 1040), (2020, 1320),
               (2022, 1510), (2023, 1465), (2025, 277)), 305),
    PolishAct("kk", "Kodeks karny", ("k.k.", "kk"), (1997, 553),
              ((2016, 1137), (2017, 2204), (2018, 1600), (2019, 1950), (2020, 1444), (2022, 1138), (2024, 17),
               (2025, 383)), 363),
    PolishAct("kpk", "Kodeks postępowania karnego", ("k.p.k.", "kpk"), (1997, 555),
              ((2016, 1749), (2017, 1904), (2018, 1987), (2020, 30), (2021, 534), (2022, 1375), (2024, 37),
               (2025, 46)), 682),
    PolishAct("kkw", "Kodeks karny wykonawczy", ("k.k.w.", "kkw"), (1997, 557), max_article=261),
    PolishAct("kks", "Kodeks karny skarbowy", ("k.k.s.", "kks"), (1999, 930), max_article=191),
    PolishAct("kw", "Kodeks wykroczeń", ("k.w.",), (1971, 114), max_article=166),
    PolishAct("kpw", "Kodeks postępowania w sprawach o wykroczenia", ("k.p.w.", "kpw"), (2001, 1148), max_article=122),
    PolishAct("ksh", "Kodeks spółek handlowych", ("k.s.h.", "ksh"), (2000, 1037), max_article=700),
    PolishAct("kro", "Kodeks rodzinny i opiekuńczy", ("k.r.o.", "kro"), (1964, 59), max_article=184),
    PolishAct("kpa", "Kodeks postępowania administracyjnego", ("k.p.a.", "kpa"), (1960, 168), max_article=269),
    PolishAct("ppsa", "Prawo o postępowaniu przed sądami administracyjnymi", ("p.p.s.a.", "ppsa"), (2002, 1270),
              max_article=330),
    PolishAct("uksc", "o kosztach sądowych w sprawach cywilnych", ("u.k.s.c.", "uksc"), (2005, 1398)),
    PolishAct("pzp", "Prawo zamówień publicznych", ("p.z.p.", "pzp"), (2004, 177),
              ((2006, 1163), (2007, 1655), (2010, 759), (2013, 907), (2015, 2164), (2017, 1579), (2018, 1986),
               (2019, 1843))),
    PolishAct("pzp2019", "Prawo zamówień publicznych", ("p.z.p.", "pzp"), (2019, 2019),
              ((2021, 1129), (2022, 1710), (2023, 1605), (2024, 1320)), valid_from="2021-01-01"),
    PolishAct("konstytucja", "Konstytucja Rzeczypospolitej Polskiej", (), (1997, 483),
              names=(r"Konstytucj(?:a|i|ę|ą|o)(?:\s+(?:RP|Rzeczypospolitej\s+Polskiej))?(?![\w])",)),
    PolishAct("ekpc", "Konwencja o ochronie praw człowieka i podstawowych wolności", ("EKPC", "EKPCz"), (1993, 284)),
    PolishAct("utk", "o Trybunale Konstytucyjnym", ("u.TK",), (1997, 643), names=(USTAWA + r"\s+o\s+TK(?![\w])",)),
    PolishAct("usn", "o Sądzie Najwyższym", ("u.SN",), (2002, 2052), names=(USTAWA + r"\s+o\s+SN(?![\w])",)),
    PolishAct("usp", "Prawo o ustroju sądów powszechnych", ("u.s.p.", "p.u.s.p."), (2001, 1070)),
    PolishAct("ukwh", "o księgach wieczystych i hipotece", ("u.k.w.h.", "ukwh"), (1982, 147)),
    PolishAct("usm", "o spółdzielniach mieszkaniowych", ("u.s.m.", "usm"), (2001, 27)),
    PolishAct("ugn", "o gospodarce nieruchomościami", ("u.g.n.", "ugn"), (1997, 741)),
    PolishAct("uefus", "o emeryturach i rentach z Funduszu Ubezpieczeń Społecznych", ("u.e.r.f.u.s.",), (1998, 1118),
              names=(USTAWA + r"\s+(?:z\s+(?:dnia\s+)?17\s+grudnia\s+1998\s*r\.\s*)?o\s+emeryturach\s+i\s+rentach"
                     r"(?:\s+z\s+(?:FUS|Funduszu\s+Ubezpieczeń\s+Społecznych))?(?![\w])",)),
    PolishAct("usus", "o systemie ubezpieczeń społecznych", ("u.s.u.s.",), (1998, 887)),
    PolishAct("op", "Ordynacja podatkowa", ("o.p.",), (1997, 926)),
    PolishAct("pun", "Prawo upadłościowe i naprawcze", ("p.u.n.",), (2003, 535)),
    PolishAct("pb", "Prawo budowlane", ("p.b.",), (1994, 414)),
    PolishAct("pos", "Prawo ochrony środowiska", ("p.o.ś.",), (2001, 627)),
    PolishAct("prbank", "Prawo bankowe", ("pr. bank.",), (1997, 939)),
    PolishAct("prspoldz", "Prawo spółdzielcze", ("pr. spółdz.",), (1982, 210)),
    PolishAct("pnot", "Prawo o notariacie", ("pr. not.",), (1991, 91)),
    PolishAct("prpras", "Prawo prasowe", ("pr. pras.",), (1984, 24)),
    PolishAct("prd", "Prawo o ruchu drogowym", ("p.r.d.",), (1997, 602)),
    PolishAct("pwp", "Prawo własności przemysłowej", ("p.w.p.",), (2001, 508)),
    PolishAct("poa", "Prawo o adwokaturze", ("p.o.a.",), (1982, 124)),
    PolishAct("urp", "o radcach prawnych", ("u.r.p.",), (1982, 145)),
    PolishAct("uznk", "o zwalczaniu nieuczciwej konkurencji", ("u.z.n.k.", "uznk"), (1993, 211)),
    PolishAct("uokik", "o ochronie konkurencji i konsumentów", ("u.o.k.k.", "u.o.k.i.k."), (2007, 331)),
    PolishAct("uwl", "o własności lokali", ("u.w.l.",), (1994, 388)),
    PolishAct("uopl", "o ochronie praw lokatorów", ("u.o.p.l.",), (2001, 733)),
    PolishAct("usg", "o samorządzie gminnym", ("u.s.g.",), (1990, 95)),
    PolishAct("upea", "o postępowaniu egzekucyjnym w administracji", ("u.p.e.a.",), (1966, 151)),
    PolishAct("updof", "o podatku dochodowym od osób fizycznych", ("u.p.d.o.f.",), (1991, 350)),
    PolishAct("updop", "o podatku dochodowym od osób prawnych", ("u.p.d.o.p.",), (1992, 86)),
    PolishAct("uptu", "o podatku od towarów i usług", ("u.p.t.u.",), (2004, 535)),
    PolishAct("upapp", "o prawie autorskim i prawach pokrewnych", ("u.p.a.p.p.", "pr. aut."), (1994, 83)),
    PolishAct("uuo", "o ubezpieczeniach obowiązkowych", ("u.u.o.",), (2003, 1152)),
    PolishAct("ukse", "o komornikach sądowych i egzekucji", ("u.k.s.e.",), (1997, 882)),
    PolishAct("uodo", "o ochronie danych osobowych", ("u.o.d.o.",), (1997, 883)),
    PolishAct("usdg", "o swobodzie działalności gospodarczej", ("u.s.d.g.",), (2004, 1807)),
    PolishAct("upg", "o Prokuratorii Generalnej Skarbu Państwa", (), (2005, 1417)),
    PolishAct("urpo", "o Rzeczniku Praw Obywatelskich", (), (1987, 147)),
    # regulations cited in nearly every judgment of a court (KIO costs and documents, lawyers' fees):
    # named by subject, they keep the address id of their Dz. U. position
    PolishAct("du:2010:238", "", (), (2010, 238),
              names=(REGULATION + r"wysokości\s+(?:i\s+sposobu\s+pobierania\s+)?wpisu\s+od\s+odwołania",)),
    PolishAct("du:2009:1817", "", (), (2009, 1817),
              names=(REGULATION + r"(?:rodzajów\s+)?dokumentów,?\s+jakich\s+może\s+żądać\s+zamawiający",)),
    PolishAct("du:2010:280", "", (), (2010, 280),
              names=(REGULATION + r"regulaminu\s+postępowania\s+przy\s+rozpoznawaniu\s+odwołań",)),
    PolishAct("du:2002:1348", "", (), (2002, 1348),
              names=(REGULATION + r"opłat\s+za\s+czynności\s+adwokackie",)),
    PolishAct("du:2002:1349", "", (), (2002, 1349),
              names=(REGULATION + r"opłat\s+za\s+czynności\s+radców\s+prawnych",)),
)

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


def _stem_word(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return re.escape(w)
    stem = re.sub(r"[aeiouyąęó]{1,2}$", "", w)
    if len(stem) < 4:
        stem = w[:4]
    return re.escape(stem) + r"\w{0,4}"


def name_pattern(title: str) -> str:
    """A title in any case ending: ``Kodeks pracy`` → ``[Kk]odeks\\w{0,4}\\s+prac\\w{0,4}``;
    a title ``o …`` (a statute named by its subject) needs ``ustawa`` / ``ustawy`` … before it,
    optionally with its date (``ustawy z dnia 28 lipca 2005 r. o kosztach …``)."""
    words = title.split()
    parts = [_stem_word(w) for w in words]
    first = words[0]
    if first[0].isalpha():
        parts[0] = f"[{first[0].upper()}{first[0].lower()}]" + parts[0][1:] if not parts[0].startswith("\\") else parts[0]
    body = r"\s+".join(parts)
    if words[0] == "o":
        return rf"{USTAWA}\s+(?:{DATE_NC}\s*)?" + body
    return body


def _letters(abbr: str) -> str:
    return re.sub(r"[.\s]", "", abbr).lower()


def abbreviation_pattern(abbr: str) -> str:
    """``k.p.c.`` → ``k.p.c.``, ``k.p.c``, ``K.p.c.`` (no space inside: ``k.k. w`` is k.k. and a word);
    an undotted form (``kpc``, ``Pzp``) as printed. Matched case-insensitively."""
    if "." not in abbr:
        return re.escape(abbr)
    chunks = [c for c in re.split(r"\.\s?", abbr) if c]
    sep = r"\.\s?" if " " in abbr else r"\."  # "pr. bank." keeps its space; "k.k. w" is k.k. and a word
    return sep.join(re.escape(c) for c in chunks) + r"\.?"


def _registry_acts() -> tuple[Act, ...]:
    return registry().of_jurisdiction("pl")


def _address_of(act: Act) -> tuple[int, int] | None:
    m = re.fullmatch(r"DU/(\d{4})/(\d+)", act.address)
    return (int(m.group(1)), int(m.group(2))) if m else None


def lexicon() -> Lexicon:
    """The lookup tables for the registry in force (built once per registry)."""
    return _lexicon(_registry_acts())


@lru_cache(maxsize=8)
def _lexicon(acts: tuple[Act, ...]) -> Lexicon:
    entries: list[_Entry] = []
    by_addr_entry: dict[tuple[int, int], _Entry] = {}
    for a in acts:
        e = _Entry(a.id, True, list(a.citations), [name_pattern(a.title)])
        addr = _address_of(a)
        if addr:
            e.addresses.add(addr)
            by_addr_entry[addr] = e
        entries.append(e)
    held_ids = {e.id for e in entries}
    for k in KNOWN_ACTS:
        e = by_addr_entry.get(k.address) if k.address else None
        if e is None and f"pl:{k.key}" in held_ids:
            e = next(x for x in entries if x.id == f"pl:{k.key}")
        if e is None:
            e = _Entry(f"pl:{k.key}", False)  # "du:2010:238" keys give the address id
            entries.append(e)
            if k.address:
                e.addresses.add(k.address)
        e.abbreviations += [x for x in k.abbreviations if x not in e.abbreviations]
        pat = name_pattern(k.title) if k.title else None
        if pat and pat not in e.names:
            e.names.append(pat)
        e.names += list(k.names)
        e.unified |= set(k.unified)
        e.max_article = e.max_article or k.max_article
        e.valid_from = k.valid_from
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
    return Lexicon(entries, abbr_rx, name_rx, by_abbr, by_address, name_res)


# ------------------------------------------------------------------------------------------ lookups


def _pick(cands: list[_Entry], date: str | None) -> _Entry:
    """Of entries sharing an abbreviation or title, the newest one in force at ``date``."""
    if len(cands) == 1:
        return cands[0]
    dated = sorted(cands, key=lambda e: e.valid_from or "")
    chosen = dated[0]
    for e in dated:
        if e.valid_from is None or (date is not None and date >= e.valid_from):
            chosen = e
    return chosen


def held_ids() -> frozenset[str]:
    """Ids of the Polish acts the corpus holds (the registry in force)."""
    return frozenset(a.id for a in _registry_acts())


def top_unit(act_id: str | None) -> str | None:
    """The top unit of a held act as the registry says (``art`` for the codes: a ``§`` is then a
    paragraph of an article); None for an act the corpus does not hold."""
    for a in _registry_acts():
        if a.id == act_id:
            return "§" if a.article_unit.strip().rstrip(".") == "§" else "art"
    return None


def in_corpus(act_id: str | None) -> bool:
    return act_id is not None and act_id in held_ids()


def by_abbreviation(abbr: str, date: str | None = None) -> ActRef | None:
    """``k.p.c.`` / ``kpc`` / ``K.p.c.`` → the act (``date`` picks among successive acts sharing
    an abbreviation: ``p.z.p.`` is the 2019 act from 2021)."""
    cands = lexicon().by_abbr.get(_letters(abbr))
    return _pick(cands, date).ref("abbreviation") if cands else None


def by_name(name: str, date: str | None = None) -> ActRef | None:
    """A full name in any case ending (``Kodeksu postępowania cywilnego``, ``ustawy z dnia 29
    stycznia 2004 r. Prawo zamówień publicznych``). The year printed in the name picks among acts
    of one title (p.z.p. 2004 / 2019); an amending act (``o zmianie ustawy - …``) is no match."""
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
    return f"{int(m.group('year')):04d}-{MONTHS[m.group('month')]:02d}-{int(m.group('day')):02d}"


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
            ref = by_name(f"ustawy z dnia {ob.group('day')} {ob.group('month')} {ob.group('year')} r. {name}")
        if ref:
            return ActRef(ref.id, ref.in_corpus, "unified", ref.max_article)
    elif not AMENDING.search(title) and re.match(r"(?:Ustawa|Konstytucja|Konwencja)\b", title):
        ref = by_name(title)
        if ref:
            return ActRef(ref.id, ref.in_corpus, "title", ref.max_article)
    return by_address(year, poz) if year and poz else None


def max_article(act_id: str | None) -> int | None:
    for e in lexicon().entries:
        if e.id == act_id:
            return e.max_article
    return None
