"""Polish Sejm ELI API connector (https://api.sejm.gov.pl/eli) and its offline sample twin.

Why two sources behind one protocol: pipelines and sensors must run identically offline (CI, dev
machines: ``SampleEliSource`` serving ``<sample_dir>/pl/isap``) and online (``HttpEliSource``).
Everything that arrives is validated (JSON with an ``ELI``; bytes that look like a whole PDF)
before it can reach the landing zone.

API facts used (no others assumed): ``GET {base}/acts/DU/1964/93`` returns JSON metadata with
``ELI``, ``changeDate`` (last change, ISO datetime), ``textPDF``, ``status``, ``inForce``, ``title``
and ``texts`` ([{"fileName", "type"}], type "U" = consolidated "tekst ujednolicony"). The unified
PDF is ``{base}/acts/DU/1964/93/text/U/<fileName>``; ``{base}/acts/DU/1964/93/text.pdf`` is the
original text, used only when there is no "U" text. The year listing ``GET {base}/acts/DU/{year}``
and what is read from it: :mod:`connectors.eli_listing` (the discovered catalogue, the changesets).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from connectors.eli_listing import FrontPage, FrontPageReader, ListedAct, ListingError, listing_item, parse_listing
from connectors.http import PoliteHttpClient
from connectors.landing import LandedFile, RawLandingZone
from schemas.acts import Act, registry

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.sejm.gov.pl/eli"
_ELI_RE = re.compile(r"^[A-Z]{2,}/\d{4}/\d+$")
_SAMPLE_FILE_RE = re.compile(r"^(?P<stem>.+)_(?P<version>\d{4}-\d{2}-\d{2})\.pdf$")
# an ISAP file stem names its act: D19970553Lj = Dziennik Ustaw (D; M = Monitor Polski), 1997, position 553
_STEM_RE = re.compile(r"^(?P<pub>[DM])(?P<year>\d{4})(?P<pos>\d{4})(?P<suffix>[A-Za-z]*)$")
_PUBLISHERS = {"D": "DU", "M": "MP"}
_EOF_WINDOW = 1024  # %%EOF must appear this close to the end (PDF readers use the same slack)


def eli_for_act(act_id: str, home: Path | None = None) -> str:
    """The ELI address of a registry act (``pl:kc`` → ``DU/1964/93``, a discovered
    ``pl:du1997_553`` → ``DU/1997/553``) in ``home``'s registry (default ``$LEXPIPE_HOME``);
    KeyError for an act that is unknown or not published through ELI."""
    act = registry(home).get(act_id)
    if act.source != "eli":
        raise KeyError(f"act {act_id!r} is not an ELI act (source {act.source!r})")
    return act.address


def act_for_eli(eli: str, home: Path | None = None) -> Act | None:
    """The registry act with this ELI address, or None."""
    return registry(home).by_address("eli", eli)


def eli_of_stem(stem: str) -> str | None:
    """``D19970553Lj`` → ``DU/1997/553`` (None for a stem of another shape)."""
    m = _STEM_RE.match(stem)
    return f"{_PUBLISHERS[m['pub']]}/{m['year']}/{int(m['pos'])}" if m else None


# -- errors -------------------------------------------------------------------------------------


class EliError(Exception):
    """Something from the ELI source is unusable; the message names the URL."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}")


class InvalidMetadataError(EliError):
    pass


class InvalidPdfError(EliError):
    pass


class VersionUnavailableError(EliError):
    pass


# -- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActMetadata:
    """The fields we rely on, plus the untouched API JSON in ``raw`` (unknown fields kept)."""

    eli: str
    title: str
    change_date: str | None
    text_pdf: bool
    in_force: str | None
    status: str | None
    unified_pdf_file: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def version(self) -> str | None:
        """Text-state version: the date part of ``changeDate`` (YYYY-MM-DD)."""
        if not self.change_date:
            return None
        return date.fromisoformat(self.change_date[:10]).isoformat()

    @property
    def pdf_path(self) -> str:
        """Path below ``acts/<eli>/``: the unified text, else the original ``text.pdf``."""
        return f"text/U/{self.unified_pdf_file}" if self.unified_pdf_file else "text.pdf"

    @classmethod
    def from_api(cls, data: Any, *, url: str) -> "ActMetadata":
        if not isinstance(data, dict) or not isinstance(data.get("ELI"), str) or not data["ELI"]:
            raise InvalidMetadataError(url, "act metadata lacks the 'ELI' field")
        change = data.get("changeDate")
        if change is not None:
            try:
                date.fromisoformat(str(change)[:10])
            except ValueError:
                raise InvalidMetadataError(url, f"unparseable changeDate {change!r}") from None
        texts = data.get("texts") or []
        unified = next((t.get("fileName") for t in texts
                        if isinstance(t, dict) and t.get("type") == "U" and t.get("fileName")),
                       None)
        return cls(eli=data["ELI"], title=str(data.get("title", "")),
                   change_date=str(change) if change is not None else None,
                   text_pdf=bool(data.get("textPDF", False)), in_force=data.get("inForce"),
                   status=data.get("status"), unified_pdf_file=unified, raw=data)


@dataclass(frozen=True)
class FetchedPdf:
    """PDF bytes as fetched. ``content`` is empty when ``not_modified`` (HTTP 304)."""

    content: bytes
    url: str
    headers: dict[str, str]
    version: str
    not_modified: bool = False


@dataclass(frozen=True)
class MetadataPoll:
    """What one poll of an act's metadata returned. ``metadata`` is None when ``not_modified``
    (HTTP 304: the act did not change since the validators were stored)."""

    url: str
    metadata: ActMetadata | None
    not_modified: bool = False
    etag: str | None = None
    last_modified: str | None = None


@runtime_checkable
class EliSource(Protocol):
    def metadata(self, eli: str) -> ActMetadata: ...

    def available_versions(self, eli: str) -> list[str]: ...

    def fetch_pdf(self, eli: str, version: str | None = None, *,
                  conditional: bool = True) -> FetchedPdf: ...

    def listing(self, year: int, publisher: str = "DU") -> list[ListedAct]: ...

    def listing_years(self) -> list[int]: ...


def validate_pdf(content: bytes, url: str) -> None:
    """Reject bodies that are not a whole PDF (HTML error pages, truncated downloads)."""
    if not content.startswith(b"%PDF-"):
        raise InvalidPdfError(url, f"not a PDF: body starts with {content[:16]!r}")
    if b"%%EOF" not in content[-_EOF_WINDOW:]:
        raise InvalidPdfError(url, f"PDF has no %%EOF in its last {_EOF_WINDOW} bytes "
                                   f"(truncated?); {len(content)} bytes received")


def _check_eli(eli: str) -> str:
    eli = eli.strip().strip("/")
    if not _ELI_RE.match(eli):
        raise ValueError(f"not an ELI like 'DU/1964/93': {eli!r}")
    return eli


# -- online -------------------------------------------------------------------------------------


class HttpEliSource:
    """The live API. It only serves the *current* text state of an act."""

    def __init__(self, client: PoliteHttpClient, base_url: str = DEFAULT_BASE_URL) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")

    def act_url(self, eli: str) -> str:
        return f"{self.base_url}/acts/{_check_eli(eli)}"

    def metadata(self, eli: str) -> ActMetadata:
        url = self.act_url(eli)
        res = self.client.get(url, headers={"Accept": "application/json"}, conditional=False)
        return self._parse_metadata(eli, url, res.content)

    def poll_metadata(self, eli: str, *, conditional: bool = True) -> MetadataPoll:
        """One conditional GET of the act's metadata, for change watchers: with validators from an
        earlier poll, an unchanged act costs a 304 and no body. Callers that lost what the earlier
        poll told them (no known change date) should pass ``conditional=False``."""
        url = self.act_url(eli)
        res = self.client.get(url, headers={"Accept": "application/json"}, conditional=conditional)
        meta = None if res.not_modified else self._parse_metadata(eli, url, res.content)
        return MetadataPoll(url=url, metadata=meta, not_modified=res.not_modified,
                            etag=res.headers.get("etag"), last_modified=res.headers.get("last-modified"))

    @staticmethod
    def _parse_metadata(eli: str, url: str, content: bytes) -> ActMetadata:
        try:
            data = json.loads(content)
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidMetadataError(url, f"metadata is not JSON ({exc}); "
                                            f"body starts with {content[:40]!r}") from None
        meta = ActMetadata.from_api(data, url=url)
        if meta.eli != _check_eli(eli):
            raise InvalidMetadataError(url, f"asked for {eli!r}, metadata says ELI {meta.eli!r}")
        return meta

    def available_versions(self, eli: str) -> list[str]:
        version = self.metadata(eli).version
        return [version] if version else []

    def listing(self, year: int, publisher: str = "DU") -> list[ListedAct]:
        """Every act of ``publisher``'s ``year`` (``GET {base}/acts/DU/{year}``). Unconditional: the
        body is the listing (a 304 would leave nothing to compare with). When ``totalCount`` exceeds
        the items received, the next page is asked for with ``?offset=N``; a page that brings
        nothing new ends the walk (logged), so a server that ignores the offset costs one request."""
        if not re.fullmatch(r"[A-Z]{2,}", publisher):
            raise ValueError(f"not an ELI publisher like 'DU': {publisher!r}")
        url = f"{self.base_url}/acts/{publisher}/{int(year)}"
        items: dict[str, ListedAct] = {}
        page_url = url
        while True:
            res = self.client.get(page_url, headers={"Accept": "application/json"}, conditional=False)
            try:
                data = json.loads(res.content)
            except (UnicodeDecodeError, ValueError) as exc:
                raise InvalidMetadataError(page_url, f"listing is not JSON ({exc}); "
                                                     f"body starts with {res.content[:40]!r}") from None
            try:
                page, total = parse_listing(data, url=page_url)
            except ListingError as exc:
                raise InvalidMetadataError(page_url, str(exc).removeprefix(f"{page_url}: ")) from None
            before = len(items)
            items.update((i.eli, i) for i in page)
            if len(items) >= total or not page:
                break
            if len(items) == before:
                log.warning("%s: totalCount %d but %d acts listed, and offset paging brings nothing new",
                            url, total, len(items))
                break
            page_url = f"{url}?offset={len(items)}"
        return list(items.values())

    def listing_years(self) -> list[int]:
        """The live API holds every year; which ones to list is the caller's choice (the registry's)."""
        return []

    def fetch_pdf(self, eli: str, version: str | None = None, *,
                  conditional: bool = True) -> FetchedPdf:
        meta = self.metadata(eli)
        act_url = self.act_url(eli)
        if meta.version is None:
            raise InvalidMetadataError(act_url, "metadata has no changeDate; cannot name a version")
        if version is not None and version != meta.version:
            raise VersionUnavailableError(
                act_url, f"the API serves only the current text state ({meta.version}), "
                         f"not {version}")
        if not meta.unified_pdf_file and not meta.text_pdf:
            raise EliError(act_url, "act has neither a unified ('U') text nor textPDF")
        url = f"{act_url}/{meta.pdf_path}"
        res = self.client.get(url, headers={"Accept": "application/pdf"}, conditional=conditional)
        if not res.not_modified:
            validate_pdf(res.content, url)
        return FetchedPdf(content=res.content, url=url, headers=res.headers,
                          version=meta.version, not_modified=res.not_modified)


# -- offline ------------------------------------------------------------------------------------

_DISPLAY_RE = re.compile(r"Dz\.\s*U\.\s*(?P<year>\d{4})(?:\s+Nr\s+(?P<nr>\d+))?\s+poz\.\s+(?P<pos>\d+)", re.I)


def sample_metadata(act: Act) -> dict[str, Any]:
    """API-shaped metadata of a registry act for the offline source (only fields known to exist in
    the API; ``changeDate`` and ``texts`` are filled per version). ``address`` is the API's
    ``WDU<year><Nr:3><poz:4>`` form, derived from the printed Dz. U. address."""
    publisher, year, pos = act.address.split("/")
    m = _DISPLAY_RE.search(act.display_address)
    nr = int(m["nr"]) if m and m["nr"] else 0
    return {
        "ELI": act.address, "address": f"W{publisher}{year}{nr:03d}{int(pos):04d}", "publisher": publisher,
        "year": int(year), "pos": int(pos), "title": act.official_title or act.title,
        "displayAddress": re.sub(r"Dz\.\s*U\.", "Dz.U.", act.display_address).replace(" Nr ", " nr "),
        "type": "Ustawa", "status": "obowiązujący", "inForce": "IN_FORCE", "textPDF": True, "textHTML": False,
        "keywords": [], "references": {},
    }


class SampleEliSource:
    """Offline default: serves ``<sample_dir>/pl/isap/<stem>_<YYYY-MM-DD>.pdf`` as if downloaded.

    ``versions`` (exact dates) and/or ``up_to`` (inclusive cursor) restrict which files are
    visible, so a test or sensor can replay history: first 2024-12-19, later 2025-11-13.

    The stem names the act (``D19970553Lj`` = ``DU/1997/553``), so the folder needs no registry
    row: :meth:`listing` serves a year listing of the held PDFs shaped like the API's, each act's
    title and Dz. U. address read from page 1 of its newest visible PDF by ``front_page`` (the
    parser's reading, ``pipelines.statutes.pl.front_page.read_front_page``: a connector may not
    import the parser, so it is handed in; without it the listing is refused).
    """

    def __init__(self, sample_dir: Path, versions: Iterable[str] | None = None, *,
                 up_to: str | None = None, front_page: FrontPageReader | None = None) -> None:
        self.folder = Path(sample_dir).resolve() / "pl" / "isap"
        if not self.folder.is_dir():
            raise FileNotFoundError(f"sample folder {self.folder} does not exist "
                                    "(set LEXPIPE_SAMPLE_DIR)")
        self._files: dict[str, dict[str, Path]] = {}  # stem -> version -> path
        for path in sorted(self.folder.glob("*.pdf")):
            m = _SAMPLE_FILE_RE.match(path.name)
            if m:
                self._files.setdefault(m["stem"], {})[m["version"]] = path
        self._stems = {eli: stem for stem in self._files if (eli := eli_of_stem(stem)) is not None}
        present = {v for by_version in self._files.values() for v in by_version}
        self.versions = frozenset(versions) if versions is not None else None
        if self.versions is not None and not self.versions <= present:
            raise ValueError(f"versions {sorted(self.versions - present)} not in {self.folder}; "
                             f"present: {sorted(present)}")
        self.up_to = date.fromisoformat(up_to).isoformat() if up_to else None
        self.front_page = front_page

    def restricted(self, versions: Iterable[str] | None = None, *,
                   up_to: str | None = None) -> "SampleEliSource":
        """A copy showing other versions (handy for replaying a sensor's view over time)."""
        return SampleEliSource(self.folder.parent.parent, versions, up_to=up_to, front_page=self.front_page)

    def _stem(self, eli: str) -> str | None:
        stem = self._stems.get(eli)
        if stem is None:  # a curated row may name a stem of another shape
            act = act_for_eli(eli)
            stem = act.sample_stem if act is not None and act.sample_stem in self._files else None
        return stem

    def _visible(self, eli: str) -> dict[str, Path]:
        stem = self._stem(_check_eli(eli))
        if stem is None:
            raise KeyError(f"no sample files for ELI {eli!r} in {self.folder}")
        return self._visible_stem(stem)

    def _visible_stem(self, stem: str) -> dict[str, Path]:
        return {v: p for v, p in self._files[stem].items()
                if (self.versions is None or v in self.versions)
                and (self.up_to is None or v <= self.up_to)}

    def available_versions(self, eli: str) -> list[str]:
        return sorted(self._visible(eli))

    def _pick(self, eli: str, version: str | None) -> tuple[str, Path]:
        visible = self._visible(eli)
        if not visible:
            raise VersionUnavailableError(self.folder.as_uri(), f"no visible sample version of {eli}")
        chosen = version or max(visible)
        if chosen not in visible:
            raise VersionUnavailableError(self.folder.as_uri(),
                                          f"version {chosen} of {eli} not visible; "
                                          f"visible: {sorted(visible)}")
        return chosen, visible[chosen]

    def metadata(self, eli: str, version: str | None = None) -> ActMetadata:
        """API-shaped metadata for the latest visible version (or ``version``): a curated row's
        fields, else what the listing reads from page 1."""
        eli = _check_eli(eli)
        chosen, path = self._pick(eli, version)
        stem = _SAMPLE_FILE_RE.match(path.name)["stem"]  # type: ignore[index]
        act = act_for_eli(eli)
        if act is not None and act.curated:
            base = sample_metadata(act)
        elif self.front_page is not None:
            base = {k: v for k, v in self._item(eli, stem, chosen).items() if k != "file"}
        else:
            base = {"ELI": eli}
        raw = {**base, "changeDate": f"{chosen}T00:00:00", "texts": [{"fileName": f"{stem}.pdf", "type": "U"}]}
        return ActMetadata.from_api(raw, url=path.as_uri())

    def _item(self, eli: str, stem: str, newest: str) -> dict[str, Any]:
        """The listing item of one held act: page 1 of its newest visible PDF (an older one when
        that prints no Dz. U. address: k.p.c. 2023 is named after its t.j. entry)."""
        assert self.front_page is not None
        visible = self._visible_stem(stem)
        fronts = [self.front_page(visible[v]) for v in sorted(visible, reverse=True)]
        front = fronts[0]
        if not front.display_address:
            front = FrontPage(front.title, next((f.display_address for f in fronts if f.display_address), ""),
                              front.enacted)
        return listing_item(eli, front, newest, file=visible[newest].name)

    def listing_json(self, year: int, publisher: str = "DU") -> dict[str, Any]:
        """The API's year listing over the held PDFs with a visible version (``YearResource``)."""
        if self.front_page is None:
            raise ListingError(f"{self.folder.as_uri()}: the offline listing reads titles from page 1 and needs "
                               "a page-1 reader (pipelines.statutes.pl.front_page.read_front_page)")
        items = []
        for eli, stem in sorted(self._stems.items(), key=lambda kv: int(kv[0].split("/")[2])):
            pub, y, _ = eli.split("/")
            visible = self._visible_stem(stem)
            if pub != publisher or int(y) != int(year) or not visible:
                continue
            items.append(self._item(eli, stem, max(visible)))
        return {"totalCount": len(items), "offset": 0, "count": len(items), "items": items}

    def listing(self, year: int, publisher: str = "DU") -> list[ListedAct]:
        url = f"{self.folder.as_uri()}#acts/{publisher}/{int(year)}"
        return parse_listing(self.listing_json(year, publisher), url=url)[0]

    def listing_years(self) -> list[int]:
        """The years of the held PDFs with a visible version."""
        return sorted({int(eli.split("/")[1]) for eli, stem in self._stems.items() if self._visible_stem(stem)})

    def poll_metadata(self, eli: str, *, conditional: bool = True) -> MetadataPoll:
        """Metadata of the latest visible version; never "not modified" (a folder has no ETags), so
        watchers compare the change date with what they saw last."""
        chosen, path = self._pick(_check_eli(eli), None)
        return MetadataPoll(url=path.as_uri(), metadata=self.metadata(eli, chosen))

    def fetch_pdf(self, eli: str, version: str | None = None, *,
                  conditional: bool = True) -> FetchedPdf:
        """The sample file's bytes; ``conditional`` is accepted for protocol parity (no 304s)."""
        chosen, path = self._pick(_check_eli(eli), version)
        url = path.resolve().as_uri()
        content = path.read_bytes()
        validate_pdf(content, url)
        headers = {"content-type": "application/pdf", "content-length": str(len(content)),
                   "x-lexpipe-source": "sample"}
        return FetchedPdf(content=content, url=url, headers=headers, version=chosen)


# -- orchestration ------------------------------------------------------------------------------


def download_act(source: EliSource, landing: RawLandingZone, eli: str, act_id: str,
                 version: str | None = None, *, home: Path | None = None) -> LandedFile:
    """Fetch an act's PDF and land it; identical bytes are not written again (``created=False``).

    On HTTP 304 the already-landed file for (act_id, version) is returned; if the landing zone
    lost it (validators outlived the bytes), the PDF is fetched again unconditionally.
    """
    reg = registry(home)
    known = reg.get(act_id) if act_id in reg else None
    if known is not None and known.address != _check_eli(eli):
        raise ValueError(f"act {act_id!r} is ELI {known.address!r}, not {eli!r}")
    fetched = source.fetch_pdf(eli, version)
    if fetched.not_modified:
        landed = landing.find(act_id, fetched.version)
        if landed is not None and landing.verify(landed.sha256):
            log.info("%s %s not modified; already landed as %s", act_id, fetched.version,
                     landed.sha256[:12])
            return replace(landed, created=False)
        log.warning("%s not modified but %s %s is not landed; refetching", fetched.url,
                    act_id, fetched.version)
        fetched = source.fetch_pdf(eli, version, conditional=False)
    validate_pdf(fetched.content, fetched.url)
    landed = landing.store(fetched.content, source_url=fetched.url, act_id=act_id,
                           version=fetched.version, headers=fetched.headers)
    log.info("%s %s: %s %s (%d bytes)", act_id, fetched.version,
             "landed" if landed.created else "unchanged", landed.sha256[:12], landed.size)
    return landed


def eli_source_from_settings(settings: Any, landing_root: Path | None = None, *,
                             front_page: FrontPageReader | None = None) -> EliSource:
    """``settings.offline`` → sample files (``front_page``: the page-1 reader its listing needs);
    otherwise the live API with a polite client whose validator cache lives at
    ``<landing_root>/http_cache.json`` (``Layout.raw``)."""
    if settings.offline:
        return SampleEliSource(settings.sample_dir, front_page=front_page)
    cache = (Path(landing_root) / "http_cache.json") if landing_root is not None else None
    client = PoliteHttpClient.from_settings(settings, cache_path=cache)
    return HttpEliSource(client, settings.eli_base_url)
