"""The act registry: which acts lexpipe builds, where they come from and how they are cited.

One row per act in ``schemas/acts.toml`` (or the file ``$LEXPIPE_ACT_REGISTRY`` names). Every
layer reads it: the ELI connector (address, sample files), the parsers (what page 1 must print),
the Dagster assets (one partitioned asset family per act), sensors, Prefect flows, the CLI
(``--acts`` / ``--jurisdiction``), the search router and the benchmarks (citation forms). Adding a
Polish act whose PDF uses the ISAP layout is one row plus its sample files.

Why a data file and not Python: a row is reviewed as data (no code path changes with it), a test
can point ``LEXPIPE_ACT_REGISTRY`` at a temporary file to register an act, and the Dagster code
location reads the same file the CLI does. Why read at call time (``registry()``): so that a
registry set for a test or a run is what every layer sees; the file is parsed once per
(path, mtime), about 0.2 ms.

The curated rows are not the list of acts lexpipe holds: connectors discover every act a source
lists (``schemas/catalogue.py``: the gesetze repository's 6,183–6,636 German federal acts, the
ELI listing) into the home's catalogue, and :func:`registry` is that catalogue *enriched* by the
curated rows — a curated row with the same (source, address) lends its id, citation forms and
units to the discovered act; a discovered act without one gets ``de:<slug>`` and the source's own
title and abbreviation. A curated row never gates an act: nothing names acts but this registry.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from schemas.catalogue import Catalogue, CatalogueEntry

DEFAULT_REGISTRY = Path(__file__).with_name("acts.toml")
REGISTRY_ENV = "LEXPIPE_ACT_REGISTRY"

JURISDICTIONS = ("pl", "de")
LANGUAGES = ("pl", "de")
SOURCES = ("eli", "gesetze")
LAYOUTS = {"eli": ("isap",), "gesetze": ("gesetze",)}
ARTICLE_UNITS = ("art", "§", "Art")
PARAGRAPH_UNITS = ("§", "ust.", "Abs.")
# a slug as the source spells it: the gesetze folder name ("1-dm-goldmuenzg", "bimschv_11_2004")
_ID_RE = re.compile(r"^(?P<jur>[a-z]{2}):(?P<slug>[a-z0-9][a-z0-9_\-]{0,59})$")
_ELI_RE = re.compile(r"^[A-Z]{2,}/\d{4}/\d+$")


class RegistryError(ValueError):
    """The registry file is unusable; the message names the file, the row and the field."""


@dataclass(frozen=True)
class Act:
    """One act lexpipe builds. Ids are version-free: ``pl:kc``; unit ids hang below it."""

    id: str  # pl:kc
    jurisdiction: str  # pl
    language: str  # pl: analysers, stop words, Elasticsearch analyser
    title: str  # Kodeks cywilny
    citation: str  # k.c. (short citation form, as exams and courts print it)
    source: str  # eli | gesetze
    address: str  # ELI "DU/1964/93"; bundestag/gesetze slug "bgb"
    sample_stem: str  # D19640093Lj → <sample_dir>/pl/isap/D19640093Lj_<date>.pdf; bgb → de/gesetze/bgb.md
    layout: str  # parser family: isap | gesetze
    article_unit: str = "art"  # the numbered unit: art (Polish), § or Art (German)
    paragraph_unit: str = "§"  # § (Polish codes), ust. (most Polish statutes), Abs. (German)
    display_address: str = ""  # Dz. U. 1964 Nr 16 poz. 93 (page 1 of the ISAP PDF)
    official_title: str = ""  # Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny
    citation_aliases: tuple[str, ...] = ()
    curated: bool = True  # a row of acts.toml (False: discovered from its source only)
    path: str = ""  # where the source keeps it ("a/aeg/index.md"); discovered acts only

    @property
    def slug(self) -> str:
        """``pl:kc`` → ``kc`` (asset keys ``pl/kc/...``, partitions ``pl_kc_versions``)."""
        return self.id.split(":", 1)[1]

    @property
    def key(self) -> str:
        """``pl:kc`` → ``pl_kc``: the act in Dagster names (jobs, partitions, sources); a
        discovered slug's ``-`` becomes ``_`` too (Dagster names are ``[A-Za-z0-9_]``)."""
        return self.id.replace(":", "_").replace("-", "_")

    @property
    def citations(self) -> tuple[str, ...]:
        return (self.citation, *self.citation_aliases)


_REQUIRED = ("id", "jurisdiction", "language", "title", "citation", "source", "address", "sample_stem", "layout")


def _row(raw: dict, where: str) -> Act:
    known = {f.name for f in fields(Act)} - {"curated", "path"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise RegistryError(f"{where}: unknown field(s) {unknown}; fields are {sorted(known)}")
    for name in _REQUIRED:
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise RegistryError(f"{where}: field {name!r} is required (a non-empty string)")
    m = _ID_RE.match(raw["id"])
    if not m:
        raise RegistryError(f"{where}: field 'id' must look like 'pl:kc', got {raw['id']!r}")
    checks = (("jurisdiction", JURISDICTIONS), ("language", LANGUAGES), ("source", SOURCES),
              ("article_unit", ARTICLE_UNITS), ("paragraph_unit", PARAGRAPH_UNITS))
    for name, allowed in checks:
        if name in raw and raw[name] not in allowed:
            raise RegistryError(f"{where}: field {name!r} must be one of {list(allowed)}, got {raw[name]!r}")
    if m["jur"] != raw["jurisdiction"]:
        raise RegistryError(f"{where}: id {raw['id']!r} does not start with its jurisdiction {raw['jurisdiction']!r}")
    if raw["layout"] not in LAYOUTS[raw["source"]]:
        raise RegistryError(f"{where}: field 'layout' {raw['layout']!r} is not a layout of source "
                            f"{raw['source']!r} ({list(LAYOUTS[raw['source']])})")
    if raw["source"] == "eli":
        if not _ELI_RE.match(raw["address"]):
            raise RegistryError(f"{where}: field 'address' must be an ELI like 'DU/1964/93', got {raw['address']!r}")
        if not raw.get("display_address"):
            raise RegistryError(f"{where}: field 'display_address' is required for an ELI act "
                                "(page 1 of its PDF must print it)")
    aliases = raw.get("citation_aliases", ())
    if not isinstance(aliases, (list, tuple)) or not all(isinstance(a, str) and a for a in aliases):
        raise RegistryError(f"{where}: field 'citation_aliases' must be a list of strings")
    return Act(**{**raw, "citation_aliases": tuple(aliases)})


@dataclass(frozen=True)
class ActRegistry:
    acts: tuple[Act, ...]
    path: Path | None = None

    def __post_init__(self) -> None:
        # lookups by id and address in O(1): with a discovered catalogue the registry holds 6,000+ acts
        object.__setattr__(self, "_by_id", {a.id: a for a in self.acts})
        object.__setattr__(self, "_by_address", {(a.source, a.address): a for a in self.acts})

    @classmethod
    def load(cls, path: Path) -> "ActRegistry":
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RegistryError(f"{path}: act registry not found (set {REGISTRY_ENV} or restore schemas/acts.toml)") from None
        except tomllib.TOMLDecodeError as exc:
            raise RegistryError(f"{path}: not valid TOML: {exc}") from None
        rows = data.get("act")
        if not isinstance(rows, list) or not rows:
            raise RegistryError(f"{path}: no [[act]] rows")
        acts = tuple(_row(r, f"{path}: [[act]] row {i} ({r.get('id', '?')})") for i, r in enumerate(rows, 1))
        return cls.of(acts, path)

    @classmethod
    def of(cls, acts: Iterable[Act], path: Path | None = None) -> "ActRegistry":
        acts = tuple(acts)
        where = str(path) if path else "act registry"
        for attr in ("id", "key"):
            seen: set[str] = set()
            for a in acts:
                value = getattr(a, attr)
                if value in seen:
                    raise RegistryError(f"{where}: two rows share the {attr} {value!r}")
                seen.add(value)
        addresses: set[tuple[str, str]] = set()
        for a in acts:
            if (a.source, a.address) in addresses:
                raise RegistryError(f"{where}: two rows share the {a.source} address {a.address!r}")
            addresses.add((a.source, a.address))
        return cls(acts, path)

    def get(self, act_id: str) -> Act:
        found = self._by_id.get(act_id)  # type: ignore[attr-defined]
        if found is not None:
            return found
        held = self.ids()
        shown = ", ".join(held[:12]) + (f" … ({len(held)} acts)" if len(held) > 12 else "")
        raise KeyError(f"unknown act id {act_id!r}; the registry ({self.path or 'in memory'}) holds {shown}")

    def __contains__(self, act_id: object) -> bool:
        return act_id in self._by_id  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self.acts)

    def ids(self, jurisdiction: str | None = None) -> tuple[str, ...]:
        return tuple(a.id for a in self.of_jurisdiction(jurisdiction))

    def of_jurisdiction(self, jurisdiction: str | None = None) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if jurisdiction is None or a.jurisdiction == jurisdiction)

    def of_source(self, source: str) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if a.source == source)

    def of_language(self, language: str) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if a.language == language)

    def curated(self) -> "ActRegistry":
        """The curated rows only (``acts.toml``): the acts with benchmark and exam ties, sample
        files of their own, hand-checked citation forms."""
        return ActRegistry(tuple(a for a in self.acts if a.curated), self.path)

    def by_address(self, source: str, address: str) -> Act | None:
        return self._by_address.get((source, address))  # type: ignore[attr-defined]

    def select(self, acts: Iterable[str] = (), jurisdictions: Iterable[str] = ()) -> tuple[Act, ...]:
        """The acts a command names: ``--acts pl:kc,de:bgb`` and/or ``--jurisdiction de`` (union,
        registry order). An unknown id or jurisdiction raises, naming what the registry holds."""
        acts, jurisdictions = list(acts), list(jurisdictions)
        for j in jurisdictions:
            if not self.of_jurisdiction(j):
                raise KeyError(f"no act of jurisdiction {j!r} in the registry; jurisdictions: "
                               f"{', '.join(sorted({a.jurisdiction for a in self.acts}))}")
        wanted = {self.get(a).id for a in acts}
        return tuple(a for a in self.acts if a.id in wanted or a.jurisdiction in jurisdictions)

    def with_catalogues(self, catalogues: Iterable["Catalogue"]) -> "ActRegistry":
        """This (curated) registry enriched with discovered acts: a catalogue entry whose (source,
        address) a curated row has becomes that row (its path noted); any other becomes an act of
        its own (:func:`discovered_act`). Curated rows keep their order; discovered acts follow,
        by id."""
        acts = list(self.acts)
        index = {(a.source, a.address): i for i, a in enumerate(acts)}
        ids = {a.id for a in acts}
        extra: list[Act] = []
        for cat in catalogues:
            for entry in cat.acts:
                at = index.get((cat.source, entry.address))
                if at is not None:
                    acts[at] = replace(acts[at], path=entry.path)
                    continue
                act = discovered_act(cat.source, entry)
                if act.id in ids:  # a curated row already uses this id for another address
                    raise RegistryError(f"{cat.path}: discovered act {act.id} ({entry.address}) has the id of a "
                                        f"curated row with another address; rename the curated row")
                ids.add(act.id)
                extra.append(act)
        return ActRegistry.of([*acts, *sorted(extra, key=lambda a: a.id)], self.path)


def discovered_act(source: str, entry: "CatalogueEntry") -> Act:
    """The registry act of a catalogue entry no curated row describes: the source's title and
    citation (the gesetze ``jurabk``; the slug upper-cased when the file names none), the
    jurisdiction's units (German "§"/"Abs.", Polish "art"/"ust.")."""
    jur = SOURCE_JURISDICTION[source]
    citation = entry.citation or entry.address.upper()
    if source == "gesetze":
        return Act(id=entry.id, jurisdiction=jur, language=jur, title=entry.title or citation,
                   citation=citation, source=source, address=entry.address, sample_stem=entry.address,
                   layout="gesetze", article_unit="§", paragraph_unit="Abs.", curated=False, path=entry.path)
    extra = entry.extra or {}
    return Act(id=entry.id, jurisdiction=jur, language=jur, title=entry.title or citation, citation=citation,
               source=source, address=entry.address, sample_stem=str(extra.get("sample_stem") or ""),
               layout="isap", article_unit="art", paragraph_unit=str(extra.get("paragraph_unit") or "ust."),
               display_address=str(extra.get("display_address") or ""),
               official_title=str(extra.get("official_title") or entry.title), curated=False, path=entry.path)


SOURCE_JURISDICTION = {"gesetze": "de", "eli": "pl"}


_cache: dict[tuple, ActRegistry] = {}


def registry_path() -> Path:
    return Path(os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY)


def _home() -> Path:
    from core.settings import home_from_env

    return home_from_env()


def _stamp(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return -1


def registry(home: Path | None = None) -> ActRegistry:
    """The registry in force: the curated rows of ``$LEXPIPE_ACT_REGISTRY`` or
    ``schemas/acts.toml``, enriched with the acts discovered into ``home``'s catalogues (default
    ``$LEXPIPE_HOME``; :mod:`schemas.catalogue`). Parsed once per path and modification time of
    each file."""
    from schemas.catalogue import SOURCES, catalogue_file, load_catalogue

    path = registry_path()
    cats = [catalogue_file(home if home is not None else _home(), s) for s in SOURCES]
    key = (str(path), _stamp(path), *((str(c), _stamp(c)) for c in cats))
    if key not in _cache:
        if len(_cache) > 8:
            _cache.clear()
        curated = ActRegistry.load(path)
        loaded = [load_catalogue(c) for c in cats if c.exists()]
        _cache[key] = curated.with_catalogues(loaded) if loaded else curated
    return _cache[key]


def act(act_id: str) -> Act:
    """The registry row of ``act_id`` (KeyError naming the known acts)."""
    return registry().get(act_id)
