"""Every act lexpipe can name: the act registry and the table of known acts, merged, indexed by id and
by citation form.

Why: a citation resolver must say *which* act a citation names even when the corpus does not hold
it — ``art. 27 ustawy o prawach konsumenta`` is the consumer rights act of 30 May 2014, Dz. U. 2014
poz. 827, and ``§ 1 KSchG`` the Kündigungsschutzgesetz, BGBl I 1951, 499 — and it must map the
forms a German citation prints (``KSchG``, ``SGB V``, ``AO 1977``, ``DSGVO``) to one id, the
registry's id when the registry has the act (issue 24 fills the registry with the German federal
acts, ids taken from their slugs, which need not be the lower-cased abbreviation).

Merging: a registry row and a table row are one act when they share the id, or the address (Polish:
the ELI ``DU/1964/93``; German: the bundestag/gesetze slug, which is the registry's ``address`` and
the table's ``slug``). The merged act keeps the registry id; the table adds its title, date,
address and forms.

Speed: :func:`catalogue` builds the indexes once per (registry object, table object) — both are
re-read only when their files change — so a registry of 6,000 rows costs one pass (about 15 ms),
and every lookup is a dictionary hit.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from pipelines.citations.registry_pin import current as current_registry
from schemas.acts import Act, ActRegistry
from schemas.known_acts import KnownAct, KnownActs, known_acts


@dataclass(frozen=True)
class ActInfo:
    """What lexpipe knows about an act, held or not."""

    id: str
    jurisdiction: str  # pl | de | eu
    title: str | None  # as named in a sentence: "ustawa o prawach konsumenta", "Kündigungsschutzgesetz"
    official_title: str | None = None  # "Ustawa z dnia 30 maja 2014 r. o prawach konsumenta"
    date: str | None = None  # YYYY-MM-DD: the date the act bears
    citation: str | None = None  # the usual short form: "u.p.k.", "KSchG", "RODO"
    address: str | None = None  # ELI DU/2014/827 | BGBl I: 1951, 499 | eli/reg/2016/679/oj
    gazette: str | None = None  # the address as printed: "Dz. U. 2014 poz. 827"
    in_registry: bool = False  # a row of the act registry (lexpipe can build it)
    known: bool = True  # False: only an id read from the citation (an address, a date, an abbreviation)
    forms: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("forms")
        return d


def form_key(form: str) -> str:
    """A citation form compared loosely: case, dots, spaces and hyphens ignored (``SGB V`` =
    ``sgb-v`` = ``SGBV``; ``DS-GVO`` = ``DSGVO``; ``k. p. c.`` = ``kpc``)."""
    s = unicodedata.normalize("NFC", form).lower()
    return re.sub(r"[\s.\-–\u00a0]", "", s)


class Catalogue:
    """The registry and the table of known acts as one index (build with :func:`catalogue`)."""

    def __init__(self, reg: ActRegistry, table: KnownActs):
        self.registry, self.table = reg, table
        self._by_id: dict[str, ActInfo] = {}
        self._alias: dict[str, str] = {}  # a table id merged into a registry act → the registry id
        self._forms: dict[tuple[str, str], str] = {}  # (jurisdiction, form key) → id
        rows: dict[str, tuple[Act | None, KnownAct | None]] = {}
        by_address: dict[tuple[str, str], str] = {}
        for a in reg.acts:
            rows[a.id] = (a, None)
            by_address[(a.jurisdiction, a.address)] = a.id
        for k in table.acts:
            target = (k.id if k.id in rows else by_address.get(("de", k.slug)) if k.jurisdiction == "de" and k.slug
                      else by_address.get(("pl", k.address)) if k.jurisdiction == "pl" else None)
            if target is not None and rows[target][1] is None:
                rows[target] = (rows[target][0], k)
                if target != k.id:
                    self._alias[k.id] = target
            elif k.id not in rows:
                rows[k.id] = (None, k)
        for act_id, (a, k) in rows.items():
            info = _info(act_id, a, k)
            self._by_id[act_id] = info
            for f in info.forms:
                for j in _jurisdictions(info.jurisdiction):
                    self._forms.setdefault((j, form_key(f)), act_id)
        # registry rows' own forms win over a table form of another act
        for a in reg.acts:
            for f in _registry_forms(a):
                self._forms[(a.jurisdiction, form_key(f))] = a.id

    def get(self, act_id: str | None) -> ActInfo | None:
        """The act of ``act_id`` (a table id merged into a registry act gives the registry act)."""
        if not act_id:
            return None
        return self._by_id.get(self._alias.get(act_id, act_id))

    def canonical(self, act_id: str) -> str:
        """``act_id``, or the registry id a table id was merged into."""
        return self._alias.get(act_id, act_id)

    def by_form(self, form: str, jurisdiction: str) -> ActInfo | None:
        """The act a citation form names in texts of ``jurisdiction`` (``KSchG``, ``SGB V``, ``AO 1977``;
        EU acts answer both jurisdictions: ``DSGVO``, ``RODO``); a German form printed with its
        year (``UWG 2004``) also without it."""
        key = form_key(form)
        act_id = self._forms.get((jurisdiction, key))
        if act_id is None and jurisdiction == "de":
            bare = re.sub(r"\d{4}$", "", key)
            act_id = self._forms.get((jurisdiction, bare)) if bare != key else None
        return self._by_id.get(act_id) if act_id else None

    def __len__(self) -> int:
        return len(self._by_id)


def _jurisdictions(j: str) -> tuple[str, ...]:
    return ("pl", "de", "eu") if j == "eu" else (j,)


def _registry_forms(a: Act) -> tuple[str, ...]:
    forms = [a.citation, *a.citation_aliases]
    if a.jurisdiction == "de":
        forms.append(a.title)
        forms += [re.sub(r"\s+\d{4}$", "", f) for f in forms if re.search(r"\s\d{4}$", f)]  # "AO 1977" → "AO"
    return tuple(dict.fromkeys(f for f in forms if f))


def _info(act_id: str, a: Act | None, k: KnownAct | None) -> ActInfo:
    forms: list[str] = []
    if a is not None:
        forms += _registry_forms(a)
    if k is not None:
        forms += list(k.citations)
        if k.jurisdiction in ("de", "eu"):
            forms.append(k.title)
        if k.jurisdiction == "eu":
            forms.append(k.id.split(":", 1)[1])  # "2016/679", as a German citation's EU key prints it
    title = k.name if k else a.title if a else None
    official = k.official_title if k else (a.official_title or None) if a else None
    address = k.address if k else (a.address if a and a.source == "eli" else None)
    gazette = k.gazette if k else (a.display_address or None) if a else None
    citation = (a.citation if a else None) or (k.citations[0] if k and k.citations else None)
    jurisdiction = a.jurisdiction if a else k.jurisdiction  # type: ignore[union-attr]
    date = k.date if k else None
    if date is None and a is not None:
        m = re.search(r"z dnia (\d{1,2}) (\w+) (\d{4})", a.official_title)
        if m and m.group(2) in _MONTHS:
            date = f"{m.group(3)}-{_MONTHS.index(m.group(2)) + 1:02d}-{int(m.group(1)):02d}"
    return ActInfo(act_id, jurisdiction, title, official, date, citation, address, gazette, a is not None, True,
                   tuple(dict.fromkeys(forms)))


_memo: list = [None, None, None]  # registry, table, catalogue


def catalogue() -> Catalogue:
    """The catalogue of the registry and table in force (rebuilt when either file changes)."""
    reg, table = current_registry(), known_acts()
    if _memo[0] is not reg or _memo[1] is not table:
        _memo[2] = Catalogue(reg, table)
        _memo[0], _memo[1] = reg, table
    return _memo[2]


# ------------------------------------------------------------------------------------------ unknown acts

_DU = re.compile(r"^pl:du:(\d{4}):(\d+)$")
_MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
           "października", "listopada", "grudnia")
_DATED = re.compile(r"^pl:(ustawa|rozporzadzenie):(\d{4}-\d{2}-\d{2})$")


def describe(act_id: str, printed: str | None = None) -> ActInfo:
    """The act of ``act_id`` as the catalogue knows it; an id no table has is described from the id
    itself (``pl:du:1982:268`` → its address; ``pl:ustawa:2006-07-22`` → a statute of that date) and
    from what the citation printed (``printed``: the act as the text names it)."""
    info = catalogue().get(act_id)
    if info is not None:
        return info
    jur = act_id.split(":", 1)[0]
    m = _DU.match(act_id)
    if m:
        return ActInfo(act_id, "pl", _clean(printed), None, None, None, f"DU/{m.group(1)}/{m.group(2)}",
                       f"Dz. U. {m.group(1)} poz. {m.group(2)}", known=False)
    m = _DATED.match(act_id)
    if m:
        kind = "ustawa" if m.group(1) == "ustawa" else "rozporządzenie"
        y, mo, d = (int(x) for x in m.group(2).split("-"))
        return ActInfo(act_id, "pl", f"{kind} z dnia {d} {_MONTHS[mo - 1]} {y} r.", None, m.group(2), known=False)
    return ActInfo(act_id, jur if jur in ("pl", "de", "eu") else "?", _clean(printed), citation=_clean(printed),
                   known=False)


def _clean(printed: str | None) -> str | None:
    if not printed:
        return None
    s = re.sub(r"\s+", " ", printed).strip(" ,;:()")
    return s or None
