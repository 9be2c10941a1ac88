"""The ELI listing: the acts a Dziennik Ustaw year holds, as the Sejm ELI API lists them — the
Polish half of the discovered catalogue (``schemas/catalogue.py``, source ``"eli"``) and the Polish
changesets (``connectors/changesets.py``).

Why discovery and not a registry row per act: the Dziennik Ustaw holds ~12,000 acts in force, and
the act that changes tomorrow is rarely one somebody wrote a row for. The connector lists a year
(``HttpEliSource.listing``; offline ``SampleEliSource.listing`` serves a listing of the held PDFs)
and :func:`update_catalogue` writes every listed statute to ``$LEXPIPE_HOME/catalogue/eli.json``,
so :func:`schemas.acts.registry` holds it; a curated row of ``schemas/acts.toml`` with the same
ELI address only enriches it (id, citation forms, display address, benchmark ties).

API facts relied upon (the API's published resource types ``YearResource`` /
``YearItemResource``; no others assumed): ``GET {base}/acts/DU/{year}`` answers
``{"totalCount", "offset", "count", "items": [...]}``; each item has ``ELI`` (``"DU/1997/553"``),
``title`` (the official title: ``"Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny"``),
``displayAddress`` (``"Dz.U. 1997 nr 88 poz. 553"``), ``changeDate`` (ISO datetime of the last
change: the text-state version, as in an act's own metadata), ``type`` (``"Ustawa"``), ``status``
(``"obowiązujący"``) and ``textPDF``. Unknown fields are kept in ``raw``. A listing whose ``count``
is not its number of items, or an item without ``ELI`` or with an unparseable ``changeDate``, is
refused naming the URL and the item.

What is catalogued: items of type :data:`LISTED_TYPES` (statutes: the ISAP unified-text layout the
parser reads) in force (:data:`IN_FORCE`) with a PDF text. Regulations, announcements (the
``Obwieszczenie`` of a unified text is not an act of its own) and repealed acts are left out.

Ids of discovered acts (:func:`act_id_for_eli`): ``pl:<publisher><year>_<position>`` in lower
case — ``DU/1997/553`` → ``pl:du1997_553`` — stable (the ELI address never changes) and valid as a
registry id and in Dagster names (``pl_du1997_553``). A curated row keeps its own id (``pl:kk``).

A Polish changeset (:func:`polish_changeset`) is one ELI text state of one act: key
``<version>_<slug>`` (``2025-11-13_kc``, ``2026-07-28_du1997_553``), the partition key of
``pl_changesets`` (``assets/pl_statutes.py``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from connectors.changesets import ActChange, Changeset
from schemas.catalogue import Catalogue, CatalogueEntry, CatalogueError, load_catalogue, save_catalogue

SOURCE = "eli"
LISTED_TYPES = ("Ustawa",)
IN_FORCE = ("obowiązujący",)
_ELI_RE = re.compile(r"^(?P<pub>[A-Z]{2,})/(?P<year>\d{4})/(?P<pos>\d+)$")
_KEY_RE = re.compile(r"^(?P<version>\d{4}-\d{2}-\d{2})_(?P<slug>[a-z0-9][a-z0-9_\-]*)$")
# "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny" → "Kodeks karny"; "… r. o systemie …" → "o systemie …"
_OFFICIAL_RE = re.compile(r"^\s*\w+\s+z\s+dnia\s+\d{1,2}\s+\w+\s+\d{4}\s*r\.\s*(?:[-–]\s*)?", re.I)


class ListingError(ValueError):
    """A listing is unusable; the message names the URL (and the item)."""


@dataclass(frozen=True)
class FrontPage:
    """What page 1 of an ISAP unified text prints about its act (read by the parser's rules:
    ``pipelines.statutes.pl.front_page.read_front_page``): the title under "USTAWA / z dnia …",
    the act's own Dz. U. address (``""`` when page 1 prints none) and the enactment line."""

    title: str
    display_address: str = ""
    enacted: str = ""  # "z dnia 6 czerwca 1997 r."

    @property
    def official_title(self) -> str:
        """The API's form: ``Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny``."""
        if not self.enacted:
            return self.title
        sep = " " if self.title[:2] in ("o ", "w ", "z ") else " - "
        return f"Ustawa {self.enacted}{sep}{self.title}"


FrontPageReader = Callable[[Path], FrontPage]


@dataclass(frozen=True)
class ListedAct:
    """One item of a year listing: the fields relied upon, the untouched JSON in ``raw``."""

    eli: str
    title: str  # official title
    display_address: str
    change_date: str | None
    type: str
    status: str
    text_pdf: bool
    file: str = ""  # offline: the held PDF this item was read from
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def version(self) -> str | None:
        return dt.date.fromisoformat(self.change_date[:10]).isoformat() if self.change_date else None

    @property
    def year(self) -> int:
        return int(self.eli.split("/")[1])

    @property
    def short_title(self) -> str:
        """The title as page 1 prints it under "z dnia …" (what the parser's identity check wants)."""
        return _OFFICIAL_RE.sub("", self.title).strip() or self.title

    @property
    def catalogued(self) -> bool:
        return self.type in LISTED_TYPES and self.status in IN_FORCE and self.text_pdf


def act_id_for_eli(eli: str) -> str:
    """``DU/1997/553`` → ``pl:du1997_553``: the id of an act no curated row names."""
    m = _ELI_RE.match(eli.strip().strip("/"))
    if not m:
        raise ValueError(f"not an ELI like 'DU/1997/553': {eli!r}")
    return f"pl:{m['pub'].lower()}{m['year']}_{int(m['pos'])}"


def parse_listing(data: Any, *, url: str) -> tuple[list[ListedAct], int]:
    """The items of one listing page and the listing's ``totalCount``."""
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ListingError(f"{url}: a listing has an 'items' list; got {type(data).__name__} "
                           f"with keys {sorted(data)[:8] if isinstance(data, dict) else '-'}")
    items = data["items"]
    if isinstance(data.get("count"), int) and data["count"] != len(items):
        raise ListingError(f"{url}: 'count' says {data['count']} items, the listing has {len(items)}")
    out = []
    for i, item in enumerate(items):
        where = f"{url}: items[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("ELI"), str) or not _ELI_RE.match(item["ELI"]):
            raise ListingError(f"{where}: no 'ELI' like 'DU/1997/553' "
                               f"({item.get('ELI') if isinstance(item, dict) else item!r})")
        change = item.get("changeDate")
        if change is not None:
            try:
                dt.date.fromisoformat(str(change)[:10])
            except ValueError:
                raise ListingError(f"{where} ({item['ELI']}): unparseable changeDate {change!r}") from None
        out.append(ListedAct(eli=item["ELI"], title=str(item.get("title") or ""),
                             display_address=str(item.get("displayAddress") or ""),
                             change_date=str(change) if change is not None else None,
                             type=str(item.get("type") or ""), status=str(item.get("status") or ""),
                             text_pdf=bool(item.get("textPDF", False)), file=str(item.get("file") or ""), raw=item))
    total = data.get("totalCount")
    return out, total if isinstance(total, int) else len(out)


def listing_item(eli: str, front: FrontPage, change_date: str, *, file: str = "") -> dict[str, Any]:
    """An API-shaped listing item for a held PDF (the offline source's listing): what page 1
    prints, the version as ``changeDate``; ``file`` names the PDF (not an API field)."""
    m = _ELI_RE.match(eli)
    assert m is not None
    display = front.display_address or f"Dz. U. {m['year']} poz. {int(m['pos'])}"
    return {"ELI": eli, "publisher": m["pub"], "year": int(m["year"]), "pos": int(m["pos"]),
            "title": front.official_title, "displayAddress": display, "changeDate": f"{change_date}T00:00:00",
            "type": "Ustawa", "status": "obowiązujący", "textPDF": True, "textHTML": False, "file": file}


# -- changesets ----------------------------------------------------------------------------------


def changeset_key(version: str, slug: str) -> str:
    """``("2025-11-13", "kc")`` → ``2025-11-13_kc``: sorts by version date, names the act."""
    return f"{dt.date.fromisoformat(version).isoformat()}_{slug}"


def parse_changeset_key(key: str) -> tuple[str, str]:
    """``2025-11-13_kc`` → ``("2025-11-13", "kc")`` (ValueError naming the key otherwise)."""
    m = _KEY_RE.match(key)
    if not m:
        raise ValueError(f"not a Polish changeset key like '2025-11-13_kc': {key!r}")
    return m["version"], m["slug"]


def polish_changeset(act_id: str, address: str, version: str, *, change: str = "modified", path: str = "",
                     title: str = "", gazette: str = "") -> Changeset:
    """The changeset of one ELI text state of one act (``act_id`` ``pl:<slug>``)."""
    slug = act_id.split(":", 1)[1]
    return Changeset(key=changeset_key(version, slug), jurisdiction="pl", source=SOURCE,
                     position=f"{address}@{version}", date=version, kind="eli", gazette=gazette, title=title,
                     members=(ActChange(act_id=act_id, address=address, change=change, version=version, path=path),))


# -- the catalogue -------------------------------------------------------------------------------


class ListingSource(Protocol):
    def listing(self, year: int, publisher: str = "DU") -> list[ListedAct]: ...


@dataclass
class CatalogueUpdate:
    catalogue: Catalogue
    listed: list[ListedAct]  # every catalogued item of the listed years
    added: list[str]  # ELI addresses new to the catalogue
    changed: list[str]  # ELI addresses whose listed change date moved
    years: list[int]


def _entry(item: ListedAct, previous: CatalogueEntry | None) -> CatalogueEntry:
    extra = {"display_address": item.display_address, "official_title": item.title, "type": item.type,
             "status": item.status, "change_date": item.change_date or "", "year": item.year}
    if item.file:  # offline: the held PDF's stem (<stem>_<YYYY-MM-DD>.pdf)
        extra["sample_stem"] = item.file.rsplit("_", 1)[0]
    version = item.version or ""
    return CatalogueEntry(id=previous.id if previous else act_id_for_eli(item.eli), address=item.eli,
                          title=item.short_title, path=item.file or item.eli,
                          first_seen=previous.first_seen if previous and previous.first_seen else version,
                          last_changed=version, present=True, extra=extra)


def update_catalogue(home: Path, source: ListingSource, years: Iterable[int], *,
                     save: bool = True) -> CatalogueUpdate:
    """List ``years`` and write every catalogued act to ``catalogue/eli.json`` (atomically; only
    when something changed). Acts of other years stay as they were; an act of a listed year the
    listing no longer holds is kept with ``present: false`` (its published versions stay readable).
    ``save=False`` writes nothing: the update as it would be (a command checking an act id before
    it touches the home)."""
    from schemas.catalogue import SOURCES, Catalogue, catalogue_file

    path = catalogue_file(Path(home), SOURCE)
    try:
        old = load_catalogue(path) if path.exists() else None
    except CatalogueError:
        raise
    before = {e.address: e for e in (old.acts if old else ())}
    years = sorted(set(int(y) for y in years))
    listed = [item for y in years for item in source.listing(y) if item.catalogued]
    entries = dict(before)
    added, changed = [], []
    for item in listed:
        prev = before.get(item.eli)
        new = _entry(item, prev)
        if prev is None:
            added.append(item.eli)
        elif prev.last_changed != new.last_changed:
            changed.append(item.eli)
        entries[item.eli] = new
    seen = {i.eli for i in listed}
    for address, e in before.items():
        if e.present and address not in seen and int(e.extra.get("year") or address.split("/")[1]) in years:
            entries[address] = replace(e, present=False)
    position = max((i.version or "" for i in listed), default=old.position if old else "")
    if not save:
        cat = Catalogue(SOURCE, SOURCES[SOURCE], position, tuple(sorted(entries.values(), key=lambda a: a.id)))
    elif old is None or [*entries.values()] != [*before.values()] or old.position != position:
        cat = save_catalogue(path, SOURCE, position, entries.values())
    else:
        cat = old
    return CatalogueUpdate(cat, listed, added, changed, years)
