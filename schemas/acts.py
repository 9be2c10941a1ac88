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
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable

DEFAULT_REGISTRY = Path(__file__).with_name("acts.toml")
REGISTRY_ENV = "LEXPIPE_ACT_REGISTRY"

JURISDICTIONS = ("pl", "de")
LANGUAGES = ("pl", "de")
SOURCES = ("eli", "gesetze")
LAYOUTS = {"eli": ("isap",), "gesetze": ("gesetze",)}
ARTICLE_UNITS = ("art", "§", "Art")
PARAGRAPH_UNITS = ("§", "ust.", "Abs.")
_ID_RE = re.compile(r"^(?P<jur>[a-z]{2}):(?P<slug>[a-z][a-z0-9]*)$")
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

    @property
    def slug(self) -> str:
        """``pl:kc`` → ``kc`` (asset keys ``pl/kc/...``, partitions ``pl_kc_versions``)."""
        return self.id.split(":", 1)[1]

    @property
    def key(self) -> str:
        """``pl:kc`` → ``pl_kc``: the act in Dagster names (jobs, partitions, sources)."""
        return self.id.replace(":", "_")

    @property
    def citations(self) -> tuple[str, ...]:
        return (self.citation, *self.citation_aliases)


_REQUIRED = ("id", "jurisdiction", "language", "title", "citation", "source", "address", "sample_stem", "layout")


def _row(raw: dict, where: str) -> Act:
    known = {f.name for f in fields(Act)}
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
        addresses = [(a.source, a.address) for a in acts]
        dup = next((x for x in addresses if addresses.count(x) > 1), None)
        if dup:
            raise RegistryError(f"{where}: two rows share the {dup[0]} address {dup[1]!r}")
        return cls(acts, path)

    def get(self, act_id: str) -> Act:
        for a in self.acts:
            if a.id == act_id:
                return a
        raise KeyError(f"unknown act id {act_id!r}; the registry ({self.path or 'in memory'}) holds "
                       f"{', '.join(self.ids())}")

    def __contains__(self, act_id: object) -> bool:
        return any(a.id == act_id for a in self.acts)

    def ids(self, jurisdiction: str | None = None) -> tuple[str, ...]:
        return tuple(a.id for a in self.of_jurisdiction(jurisdiction))

    def of_jurisdiction(self, jurisdiction: str | None = None) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if jurisdiction is None or a.jurisdiction == jurisdiction)

    def of_source(self, source: str) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if a.source == source)

    def of_language(self, language: str) -> tuple[Act, ...]:
        return tuple(a for a in self.acts if a.language == language)

    def by_address(self, source: str, address: str) -> Act | None:
        return next((a for a in self.acts if a.source == source and a.address == address), None)

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


_cache: dict[tuple[str, int], ActRegistry] = {}


def registry_path() -> Path:
    return Path(os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY)


def registry() -> ActRegistry:
    """The registry in force: ``$LEXPIPE_ACT_REGISTRY`` or ``schemas/acts.toml`` (parsed once per
    path and modification time)."""
    path = registry_path()
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        stamp = -1
    key = (str(path), stamp)
    if key not in _cache:
        _cache.clear()
        _cache[key] = ActRegistry.load(path)
    return _cache[key]


def act(act_id: str) -> Act:
    """The registry row of ``act_id`` (KeyError naming the known acts)."""
    return registry().get(act_id)
