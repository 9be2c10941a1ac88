"""The table of known acts: Polish, German and EU acts courts cite, whether lexpipe holds them or not.

One row per act in ``schemas/known_acts.toml``: its id, title, date, the short forms it is cited by
(``k.p.k.``, ``KSchG``, ``RODO``), its address (Polish ELI ``DU/1997/555``, the Fundstelle of a
German act as bundestag/gesetze prints it, an EU ELI) and, for Polish acts, the unified texts that
republished it. What it is for: a citation of an act lexpipe does not hold (``art. 27 ustawy o
prawach konsumenta``, ``art. 10 ust. 1 RODO``, ``§ 1 KSchG``) is recognised and named — title and
address — instead of being read as an act-less ``art. 27`` of whatever code the corpus holds.

The act registry (:mod:`schemas.acts`) says what lexpipe *builds*; this table says nothing about
that. An act in both (the four Polish codes, the six German acts) is one act: the registry row's id
wins (:mod:`pipelines.citations.act_catalogue` merges them by address).

Why a data file: rows are reviewed as data (title, date and address against the official journal),
a test can load another file, and the Polish citation lexicon, the German act keys and the resolver
read the same rows. Parsed once per (path, mtime); a bad row raises :class:`KnownActsError` naming
the file, the row and the field.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable

DEFAULT_TABLE = Path(__file__).with_name("known_acts.toml")

JURISDICTIONS = ("pl", "de", "eu")
_ID_RE = re.compile(r"^(?P<jur>pl|de|eu):[a-z0-9][a-z0-9:/._-]*$")
_ADDRESS_RE = {
    "pl": re.compile(r"^(?:DU|MP)/(?P<year>\d{4})/(?P<pos>\d+)$"),  # ELI of Dziennik Ustaw / Monitor Polski
    "de": re.compile(r"^(?:BGBl|RGBl|WiGBl)(?: I| II)?: \d{4}, \d+"),  # Fundstelle as bundestag/gesetze prints it
    "eu": re.compile(r"^eli/(?:reg|dir|dec|treaty)/[\w/.-]+$"),  # EU ELI
}
_TYPES = {
    "pl": ("ustawa", "rozporządzenie", "konstytucja", "dekret", "umowa międzynarodowa"),
    "de": ("Gesetz", "Verordnung", "Grundgesetz"),
    "eu": ("rozporządzenie (UE)", "dyrektywa", "traktat"),
}
_MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
           "października", "listopada", "grudnia")


class KnownActsError(ValueError):
    """The table file is unusable; the message names the file, the row and the field."""


@dataclass(frozen=True)
class KnownAct:
    """One act as courts cite it. Ids: ``pl:kpk``, ``pl:du:2010:238`` (a regulation: its Dz. U.
    position), ``de:kschg``, ``eu:2016/679``."""

    id: str
    jurisdiction: str  # pl | de | eu
    type: str  # ustawa | rozporządzenie | … (see _TYPES)
    date: str  # YYYY-MM-DD: the date the act bears ("z dnia …", Ausfertigungsdatum)
    title: str  # the title after the date: "Kodeks postępowania karnego", "o prawach konsumenta", "Kündigungsschutzgesetz"
    address: str  # DU/1997/555 | BGBl I: 1951, 499 | eli/reg/2016/679/oj
    citations: tuple[str, ...] = ()  # short forms as printed: k.p.k., kpk; KSchG; RODO, DSGVO
    names: tuple[str, ...] = ()  # extra regular expressions naming the act (inflected, as courts write it)
    unified: tuple[str, ...] = ()  # Polish unified texts (t.j.) republishing it: DU/2024/37
    issuer: str = ""  # a regulation's issuer, in the genitive: "Ministra Sprawiedliwości"
    slug: str = ""  # German: the bundestag/gesetze (gesetze-im-internet) slug, "kschg"
    max_article: int | None = None  # highest article number (splits a lost superscript: 39814 → 398^14)
    valid_from: str | None = None  # a citation form shared with an older act means this one from that date
    full_title: str = ""  # the official title when it is not "<Type> z dnia <date> r. <title>" (EU acts, treaties)

    @property
    def name(self) -> str:
        """How the act is named in a sentence: ``ustawa o prawach konsumenta``, ``Kodeks karny``,
        ``rozporządzenie Ministra Sprawiedliwości w sprawie …``, ``Kündigungsschutzgesetz``."""
        if self.jurisdiction == "pl" and (self.title.startswith(("o ", "w sprawie "))):
            return " ".join(x for x in (self.type, self.issuer, self.title) if x)
        return self.title

    @property
    def official_title(self) -> str:
        """``Ustawa z dnia 30 maja 2014 r. o prawach konsumenta``, ``Ustawa z dnia 6 czerwca 1997 r. -
        Kodeks karny``; German and EU acts: their title (or ``full_title`` when the row gives one)."""
        if self.full_title:
            return self.full_title
        if self.jurisdiction != "pl":
            return self.title
        d = dt.date.fromisoformat(self.date)
        when = f"z dnia {d.day} {_MONTHS[d.month - 1]} {d.year} r."
        if self.type == "konstytucja":
            return f"{self.title} {when}"
        if self.type == "umowa międzynarodowa":
            return f"{self.title} {when.replace('z dnia', 'sporządzona dnia')}"
        head = " ".join(x for x in (self.type[:1].upper() + self.type[1:], self.issuer, when) if x)
        sep = " " if self.title.startswith(("o ", "w sprawie ")) else " - "
        return f"{head}{sep}{self.title}"

    @property
    def gazette(self) -> str:
        """The address as printed: ``Dz. U. 1997 poz. 555`` (a position is unique within a year), the
        German Fundstelle, the EU ELI."""
        m = _ADDRESS_RE["pl"].match(self.address) if self.jurisdiction == "pl" else None
        if m:
            journal = "Dz. U." if self.address.startswith("DU/") else "M.P."
            return f"{journal} {m.group('year')} poz. {m.group('pos')}"
        return self.address

    @property
    def position(self) -> tuple[int, int] | None:
        """(year, position) of a Polish address."""
        return _position(self.address)


def _position(address: str) -> tuple[int, int] | None:
    m = _ADDRESS_RE["pl"].match(address)
    return (int(m.group("year")), int(m.group("pos"))) if m else None


def _iso(value: object) -> bool:
    try:
        dt.date.fromisoformat(str(value))
        return isinstance(value, str) and len(value) == 10
    except ValueError:
        return False


_REQUIRED = ("id", "jurisdiction", "type", "date", "title", "address")
_LISTS = ("citations", "names", "unified")


def _row(raw: dict, where: str) -> KnownAct:
    known = {f.name for f in fields(KnownAct)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise KnownActsError(f"{where}: unknown field(s) {unknown}; fields are {sorted(known)}")
    for name in _REQUIRED:
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise KnownActsError(f"{where}: field {name!r} is required (a non-empty string)")
    m = _ID_RE.match(raw["id"])
    if not m:
        raise KnownActsError(f"{where}: field 'id' must look like 'pl:kpk', 'de:kschg' or 'eu:2016/679', "
                             f"got {raw['id']!r}")
    jur = raw["jurisdiction"]
    if jur not in JURISDICTIONS:
        raise KnownActsError(f"{where}: field 'jurisdiction' must be one of {list(JURISDICTIONS)}, got {jur!r}")
    if m["jur"] != jur:
        raise KnownActsError(f"{where}: id {raw['id']!r} does not start with its jurisdiction {jur!r}")
    if raw["type"] not in _TYPES[jur]:
        raise KnownActsError(f"{where}: field 'type' must be one of {list(_TYPES[jur])} for {jur}, got {raw['type']!r}")
    if not _iso(raw["date"]):
        raise KnownActsError(f"{where}: field 'date' must be a date YYYY-MM-DD, got {raw['date']!r}")
    if not _ADDRESS_RE[jur].match(raw["address"]):
        example = {"pl": "'DU/1997/555'", "de": "'BGBl I: 1951, 499'", "eu": "'eli/reg/2016/679/oj'"}[jur]
        raise KnownActsError(f"{where}: field 'address' must be an address like {example}, got {raw['address']!r}")
    out = dict(raw)
    for name in _LISTS:
        value = raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise KnownActsError(f"{where}: field {name!r} must be a list of non-empty strings")
        out[name] = tuple(value)
    for pattern in out["names"]:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise KnownActsError(f"{where}: field 'names': {pattern!r} is not a regular expression ({exc})") from None
    for address in out["unified"]:
        if jur != "pl" or not _ADDRESS_RE["pl"].match(address):
            raise KnownActsError(f"{where}: field 'unified' holds Polish addresses like 'DU/2024/37', got {address!r}")
    if "max_article" in raw and (not isinstance(raw["max_article"], int) or isinstance(raw["max_article"], bool)
                                 or raw["max_article"] < 1):
        raise KnownActsError(f"{where}: field 'max_article' must be a positive integer, got {raw['max_article']!r}")
    if "valid_from" in raw and not _iso(raw["valid_from"]):
        raise KnownActsError(f"{where}: field 'valid_from' must be a date YYYY-MM-DD, got {raw['valid_from']!r}")
    for name in ("issuer", "slug", "full_title"):
        if name in raw and not isinstance(raw[name], str):
            raise KnownActsError(f"{where}: field {name!r} must be a string")
    return KnownAct(**out)


@dataclass(frozen=True)
class KnownActs:
    acts: tuple[KnownAct, ...]
    path: Path | None = None

    @classmethod
    def load(cls, path: Path) -> "KnownActs":
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise KnownActsError(f"{path}: table of known acts not found (restore schemas/known_acts.toml)") from None
        except tomllib.TOMLDecodeError as exc:
            raise KnownActsError(f"{path}: not valid TOML: {exc}") from None
        rows = data.get("act")
        if not isinstance(rows, list) or not rows:
            raise KnownActsError(f"{path}: no [[act]] rows")
        acts = []
        for i, r in enumerate(rows, 1):
            if not isinstance(r, dict):
                raise KnownActsError(f"{path}: [[act]] row {i} is not a table")
            acts.append(_row(r, f"{path}: [[act]] row {i} ({r.get('id', '?')})"))
        return cls.of(acts, path)

    @classmethod
    def of(cls, acts: Iterable[KnownAct], path: Path | None = None) -> "KnownActs":
        """The table of ``acts``; two rows with one id, or one address (original or unified) claimed
        by two acts, raise."""
        acts = tuple(acts)
        where = str(path) if path else "table of known acts"
        ids: set[str] = set()
        owner: dict[tuple[str, str], str] = {}
        for a in acts:
            if a.id in ids:
                raise KnownActsError(f"{where}: two rows share the id {a.id!r}")
            ids.add(a.id)
            for address in (a.address, *a.unified):
                key = (a.jurisdiction, address)
                if key in owner:
                    raise KnownActsError(f"{where}: row {a.id!r}: address {address!r} is also {owner[key]!r}'s")
                owner[key] = a.id
        return cls(acts, path)

    def get(self, act_id: str) -> KnownAct | None:
        return next((a for a in self.acts if a.id == act_id), None)

    def of_jurisdiction(self, *jurisdictions: str) -> tuple[KnownAct, ...]:
        return tuple(a for a in self.acts if a.jurisdiction in jurisdictions)


_cache: dict[tuple[str, int], KnownActs] = {}


def known_acts(path: Path | str | None = None) -> KnownActs:
    """The table (``schemas/known_acts.toml`` unless ``path``), parsed once per path and modification
    time; the same object until the file changes, so callers may key their own indexes on it."""
    path = Path(path or DEFAULT_TABLE)
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        stamp = -1
    key = (str(path), stamp)
    if key not in _cache:
        table = KnownActs.load(path)
        for old in [k for k in _cache if k[0] == key[0]] + list(_cache)[:max(0, len(_cache) - 7)]:
            _cache.pop(old, None)  # the file changed (or too many tables loaded): forget the old parse
        _cache[key] = table
    return _cache[key]
