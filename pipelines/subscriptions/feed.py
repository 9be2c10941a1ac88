"""The change feed: one entry per (act, version) publication, read from what ``published`` wrote.

Source of truth is the corpus on disk, nothing else: every published version folder
(``corpus/<jur>/<act>/<version>/`` with a ``manifest.json``), the manifest's ``published_at`` and
the version's diff table ``diff_from_<prev>.parquet`` (schemas.arrow.DIFF: one row per article
added / changed / repealed / removed / editorial, with the word diff). So the feed is exactly the
publication history and needs no state of its own. A version re-published (e.g. a new parser)
carries a new ``published_at`` and moves to that place in the feed: the folder keeps only its
latest publication.

Order: publication time, then act, then version. Paging: an opaque cursor naming the position of
the last entry returned (``published_at``, act, version) with a keyed checksum; a cursor that was
altered or truncated is refused (:class:`InvalidCursor`). The cursor is tamper-evident, not secret:
it only says where to continue, which ``since=<timestamp>`` can say too.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import pyarrow.parquet as pq

from core.layout import Layout
from pipelines.statutes.store import CorpusStore

CHANGE_KINDS = ("added", "changed", "repealed", "removed", "editorial")
MAX_LIMIT = 500
ACT_PATTERN = r"^[a-z]{2}:[a-z0-9][a-z0-9_-]{0,59}$"  # the registry's ids, and the German catalogue's slugs
ACT_ID = re.compile(ACT_PATTERN)
_CURSOR_PREFIX = "c1."
CURSOR_PATTERN = r"^c1\.[A-Za-z0-9_-]{1,300}\.[A-Za-z0-9_-]{16}$"  # what encode_cursor makes (12-byte checksum)
# RFC 3339 date-time (JSON Schema's `format: date-time`): T or t, seconds, an optional fraction, Z or ±hh:mm
DATE_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# a keyed checksum, so a cursor edited by hand (or cut short in a copy) is caught; the key is no
# secret (the cursor only says where to continue) and versioned with the cursor format
_CURSOR_KEY = b"lexpipe.changes.cursor.v1"
ATOM_NS = "http://www.w3.org/2005/Atom"
TAG_AUTHORITY = "tag:lexpipe,2025:"


class FeedError(ValueError):
    """A malformed request to the feed (the API answers 422); ``field`` names the parameter."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class InvalidCursor(FeedError, LookupError):
    """A cursor the feed did not issue: altered, truncated or of another format (404: no such
    position)."""


class PublicationNotFound(FeedError, LookupError):
    """No published version with that act and version (the API answers 404)."""


class UnknownAct(FeedError, LookupError):
    """An act the registry does not have (404, as everywhere in the API)."""


# ----------------------------------------------------------------------------------------------
# publications on disk


@dataclass(frozen=True, order=True)
class Position:
    """Where an entry sits in the feed (its sort key)."""

    published_at: dt.datetime
    act_id: str
    version: str


@dataclass(frozen=True)
class Publication:
    """One published (act, version): where it lives and, read on demand, its diff rows."""

    act_id: str
    version: str
    published_at: dt.datetime
    directory: Path
    from_version: str | None  # the version the diff table compares against (None: first version)
    diff_path: Path | None

    @property
    def position(self) -> Position:
        return Position(self.published_at, self.act_id, self.version)

    def diff_rows(self, columns: list[str] | None = None) -> list[dict]:
        """The version's DIFF rows (every column, or ``columns``), in table order."""
        if self.diff_path is None:
            return []
        return pq.read_table(self.diff_path, columns=columns).to_pylist()


def _utc(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


def iso(value: dt.datetime) -> str:
    """RFC 3339 in UTC with a ``Z`` (Atom's date format; JSON uses the same)."""
    text = _utc(value).isoformat()
    return text.removesuffix("+00:00") + "Z"


def _published_at(directory: Path, manifest: dict) -> dt.datetime:
    value = manifest.get("published_at")
    if value:
        try:
            return _utc(dt.datetime.fromisoformat(value))
        except ValueError:
            pass
    # a manifest without the field (written before it existed): the manifest's own write time
    return _utc(dt.datetime.fromtimestamp((directory / "manifest.json").stat().st_mtime, dt.timezone.utc))


def _diff_file(directory: Path, version: str, previous: str | None) -> tuple[str | None, Path | None]:
    """The diff table of a version folder: the one against the previous published version, else
    the newest against an older version (a version published before one older than it was)."""
    if previous is not None and (directory / f"diff_from_{previous}.parquet").exists():
        return previous, directory / f"diff_from_{previous}.parquet"
    found = sorted((p.name.removeprefix("diff_from_").removesuffix(".parquet"), p)
                   for p in directory.glob("diff_from_*.parquet"))
    older = [(v, p) for v, p in found if v < version]
    return older[-1] if older else (None, None)


def published_acts(layout: Layout) -> list[str]:
    """Every act with a corpus folder (``corpus/<jur>/<act>/``), sorted."""
    root = layout.home / "corpus"
    if not root.is_dir():
        return []
    return sorted(f"{j.name}:{a.name}" for j in root.iterdir() if j.is_dir() and not j.name.startswith(".")
                  for a in j.iterdir() if a.is_dir() and not a.name.startswith("."))


def publications(layout: Layout, act: str | None = None) -> list[Publication]:
    """Every published version (of ``act``, or of every act), in feed order.

    Read from the publications log the store appends to (``CorpusStore.publications_log``) when it
    covers every act folder — one file read instead of a manifest per version: a whole
    jurisdiction holds 6,000+ acts — else by walking the corpus (a home published before the log
    existed)."""
    logged = _from_log(layout, act)
    if logged is not None:
        return logged
    return _scan(layout, act)


def _from_log(layout: Layout, act: str | None) -> list[Publication] | None:
    store = CorpusStore(layout)
    path = store.publications_log()
    if not path.exists():
        return None
    latest: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash: the scan below still sees its folder
        if act is None or d.get("act_id") == act:
            latest[(d["act_id"], d["version"])] = d.get("published_at") or ""
    acts = [act] if act else published_acts(layout)
    by_act: dict[str, list[str]] = {}
    for (a, v) in latest:
        by_act.setdefault(a, []).append(v)
    for a in acts:  # a folder the log does not know (published before the log): walk the corpus
        if not (layout.act_dir(a) / "current.json").exists():
            continue
        if a not in by_act:
            return None
    out = []
    for a, versions in by_act.items():
        versions.sort()
        for i, version in enumerate(versions):
            directory = layout.version_dir(a, version)
            if not (directory / "manifest.json").exists():
                continue  # logged, then re-published under a new folder state (or removed): the scan's job
            prev = versions[i - 1] if i else None
            diff = directory / f"diff_from_{prev}.parquet" if prev else None
            if diff is not None and not diff.exists():
                prev, diff = _diff_file(directory, version, prev)
            when = latest[(a, version)]
            try:
                published = _utc(dt.datetime.fromisoformat(when)) if when else _published_at(directory, {})
            except ValueError:
                published = _published_at(directory, {})
            out.append(Publication(a, version, published, directory, prev, diff))
    return sorted(out, key=lambda p: p.position)


def _scan(layout: Layout, act: str | None = None) -> list[Publication]:
    """Every published version, from the corpus folders (a manifest per version)."""
    store = CorpusStore(layout)
    out = []
    for act_id in ([act] if act else published_acts(layout)):
        versions = store.published_versions(act_id)
        for i, version in enumerate(versions):
            directory = layout.version_dir(act_id, version)
            manifest = store.manifest(directory)
            frm, path = _diff_file(directory, version, versions[i - 1] if i else None)
            out.append(Publication(act_id, version, _published_at(directory, manifest), directory, frm, path))
    return sorted(out, key=lambda p: p.position)


def publication(layout: Layout, act_id: str, version: str) -> Publication:
    """One published version; :class:`PublicationNotFound` when it is not published."""
    _check_act(act_id)
    for p in publications(layout, act_id):
        if p.version == version:
            return p
    raise PublicationNotFound(f"{act_id} {version} is not published", "version")


# ----------------------------------------------------------------------------------------------
# cursors


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, key=_CURSOR_KEY, digest_size=12).digest()


def encode_cursor(position: Position) -> str:
    """The opaque cursor of a feed position: the position as compact JSON plus its checksum."""
    payload = json.dumps([iso(position.published_at), position.act_id, position.version],
                         separators=(",", ":")).encode()
    return f"{_CURSOR_PREFIX}{_b64(payload)}.{_b64(_checksum(payload))}"


def decode_cursor(cursor: str) -> Position:
    """The position a cursor names; :class:`InvalidCursor` for anything the feed did not issue."""
    bad = InvalidCursor("invalid cursor: it was altered or truncated (use a cursor exactly as the feed "
                        "returned it, or since=<ISO timestamp>)", "since")
    if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX) or cursor.count(".") != 2:
        raise bad
    body, _, check = cursor[len(_CURSOR_PREFIX):].partition(".")
    try:
        payload, given = _unb64(body), _unb64(check)
    except (ValueError, TypeError):
        raise bad from None
    if not hmac.compare_digest(_checksum(payload), given):
        raise bad
    try:
        when, act_id, version = json.loads(payload)
        return Position(_utc(dt.datetime.fromisoformat(when.replace("Z", "+00:00"))), str(act_id), str(version))
    except (ValueError, TypeError):
        raise bad from None


def parse_timestamp(value: str) -> dt.datetime | None:
    """An RFC 3339 timestamp (any fraction: its first six digits; a leap second :60 read as :59) or a
    real ``YYYY-MM-DD`` day (midnight UTC) as an aware datetime; None for anything else."""
    m = DATE_TIME.fullmatch(value)
    if m is None:
        if not DAY.fullmatch(value):
            return None
        try:
            return dt.datetime.combine(dt.date.fromisoformat(value), dt.time(), dt.timezone.utc)
        except ValueError:
            return None
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    micro = int((m.group(7) or ".0")[1:7].ljust(6, "0"))
    tz = m.group(8)
    if tz in ("Z", "z"):
        zone = dt.timezone.utc
    else:
        hours, minutes = int(tz[1:3]), int(tz[4:6])
        if hours > 23 or minutes > 59:
            return None
        zone = dt.timezone((1 if tz[0] == "+" else -1) * dt.timedelta(hours=hours, minutes=minutes))
    if h > 23 or mi > 59 or sec > 60:
        return None
    try:
        return dt.datetime(y, mo, d, h, mi, min(sec, 59), micro, tzinfo=zone)
    except ValueError:
        return None


def parse_since(since: str | dt.datetime | None) -> tuple[str, object] | None:
    """``("cursor", Position)`` or ``("time", datetime)`` (None, or "": from the start)."""
    if since is None or since == "":
        return None
    if isinstance(since, dt.datetime):
        return "time", _utc(since)
    if not isinstance(since, str):
        raise FeedError(f"since must be an ISO 8601 timestamp or a cursor, got {since!r}", "since")
    if since.startswith(_CURSOR_PREFIX):
        return "cursor", decode_cursor(since)
    when = parse_timestamp(since.strip())
    if when is None:
        raise FeedError(f"since must be an RFC 3339 timestamp (2025-11-13T12:00:00Z), a date (2025-11-13) or a "
                        f"cursor the feed returned, got {since[:60]!r}", "since")
    return "time", _utc(when)


# ----------------------------------------------------------------------------------------------
# entries and pages


@dataclass(frozen=True)
class ChangedUnit:
    """One changed unit of a publication (an article row of the diff table)."""

    unit_id: str
    number: str | None
    change: str  # added | changed | repealed | removed | editorial
    word_diff: str | None  # [-removed-]{+added+} words

    def to_dict(self) -> dict:
        return {"unit_id": self.unit_id, "number": self.number, "change": self.change, "word_diff": self.word_diff}


@dataclass(frozen=True)
class ChangeEntry:
    """One publication in the feed."""

    act_id: str
    version: str
    from_version: str | None
    published_at: dt.datetime
    counts: dict[str, int]
    changes: tuple[ChangedUnit, ...]
    cursor: str  # the position right after this entry: pass it as since= to continue

    @property
    def id(self) -> str:
        """Stable and unique per publication (a re-publication is a new entry)."""
        return f"{TAG_AUTHORITY}publication/{self.act_id}/{self.version}/{iso(self.published_at)}"

    source: dict | None = None  # where the version came from: the gesetze commit and its gazette, the ELI change

    @property
    def kind(self) -> str:
        """``first`` (no earlier version), ``amendment`` (a unit added, changed, repealed or
        removed), ``editorial`` (only the form of the same words changed: a converter fix, a
        refreshed Dz. U. citation — no law changed, no webhook ``changed`` event), or ``unchanged``."""
        if self.from_version is None:
            return "first"
        if any(n for k, n in self.counts.items() if k != "editorial"):
            return "amendment"
        return "editorial" if self.counts.get("editorial") else "unchanged"

    def to_dict(self) -> dict:
        return {"id": self.id, "act_id": self.act_id, "version": self.version, "from_version": self.from_version,
                "first_version": self.from_version is None, "kind": self.kind, "published_at": iso(self.published_at),
                "counts": dict(self.counts), "changes": [c.to_dict() for c in self.changes], "source": self.source,
                "cursor": self.cursor}


@dataclass(frozen=True)
class ChangePage:
    """One page of the feed. ``next_cursor``: where the next page starts (the last entry's cursor,
    or the ``since`` cursor when the page is empty); ``has_more``: entries follow already."""

    entries: list[ChangeEntry]
    next_cursor: str | None
    has_more: bool
    limit: int
    act: str | None = None
    since: str | None = None

    def to_dict(self) -> dict:
        return {"entries": [e.to_dict() for e in self.entries], "next_cursor": self.next_cursor,
                "has_more": self.has_more, "limit": self.limit, "act": self.act, "since": self.since}


def entry(pub: Publication) -> ChangeEntry:
    """The feed entry of a publication (reads its diff table)."""
    rows = pub.diff_rows(["article_id", "number", "change", "unified_diff"])
    units = tuple(ChangedUnit(r["article_id"], r["number"], r["change"], r["unified_diff"]) for r in rows)
    counts = {k: sum(u.change == k for u in units) for k in CHANGE_KINDS}
    return ChangeEntry(pub.act_id, pub.version, pub.from_version, pub.published_at, counts, units,
                       encode_cursor(pub.position), _source(pub.directory))


_SOURCE_FIELDS = ("source", "changeset", "commit", "kind", "gazette", "date", "change_date", "source_url")


def _source(directory: Path) -> dict | None:
    """The version's provenance (``source.json`` beside its manifest), the fields a consumer needs:
    for a gesetze version its changeset, commit, kind and gazette (``BGBl. I 2012 Nr. 63``)."""
    path = directory / "source.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return {k: data[k] for k in _SOURCE_FIELDS if data.get(k) not in (None, "")}


def _check_act(act: str | None) -> None:
    if act is None:
        return
    if not isinstance(act, str) or not ACT_ID.match(act):
        raise FeedError(f"act must look like 'pl:kc', got {act!r}", "act")
    from schemas.acts import registry

    reg = registry()
    if act not in reg:
        raise UnknownAct(f"unknown act {act!r}; known acts: {', '.join(reg.ids())}", "act")


def _check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise FeedError(f"limit must be between 1 and {MAX_LIMIT}, got {limit!r}", "limit")


def _after(pubs: list[Publication], since) -> list[Publication]:
    parsed = parse_since(since)
    if parsed is None:
        return pubs
    kind, value = parsed
    if kind == "cursor":
        return [p for p in pubs if p.position > value]
    return [p for p in pubs if p.published_at >= value]


def changes(layout: Layout, since: str | dt.datetime | None = None, act: str | None = None,
            limit: int = 50) -> ChangePage:
    """The feed in publication order (oldest first) after ``since`` — a cursor from an earlier page
    (strictly after it) or an ISO timestamp (publications at or after it) — optionally of one act.
    :class:`FeedError` (:class:`InvalidCursor`) for a bad act, limit, timestamp or cursor."""
    _check_act(act)
    _check_limit(limit)
    rest = _after(publications(layout, act), since)
    page = [entry(p) for p in rest[:limit]]
    if page:
        nxt = page[-1].cursor
    else:
        parsed = parse_since(since)
        nxt = since if parsed is not None and parsed[0] == "cursor" else None
    return ChangePage(page, nxt, len(rest) > limit, limit, act,
                      since if isinstance(since, str) or since is None else iso(since))


def publication_entry(layout: Layout, act_id: str, version: str) -> ChangeEntry:
    """The feed entry of one published version (:class:`PublicationNotFound` when there is none)."""
    return entry(publication(layout, act_id, version))


# ----------------------------------------------------------------------------------------------
# Atom


def _q(name: str) -> str:
    return f"{{{ATOM_NS}}}{name}"


def _sub(parent: ET.Element, name: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, _q(name), attrs)
    if text is not None:
        el.text = text
    return el


def entry_title(e: ChangeEntry) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in e.counts.items() if n)
    if e.from_version is None:
        return f"{e.act_id} {e.version} published (first version)"
    if e.kind == "editorial":
        return (f"{e.act_id} {e.version} published (since {e.from_version}): editorial only — {counts}; "
                "the same law in another form, no amendment")
    return f"{e.act_id} {e.version} published (since {e.from_version}): {counts or 'no article changed'}"


def _entry_html(e: ChangeEntry) -> str:
    from html import escape

    if e.from_version is None:
        return f"<p>First published version of {escape(e.act_id)}: nothing to compare.</p>"
    if not e.changes:
        return f"<p>No article changed since {escape(e.from_version)}.</p>"
    items = "".join(f"<li><code>{escape(c.unit_id)}</code> — {escape(c.change)}"
                    + (f": {escape(c.word_diff)}" if c.word_diff else "") + "</li>" for c in e.changes)
    return f"<p>Changed since {escape(e.from_version)}:</p><ul>{items}</ul>"


def publication_href(base_url: str, act_id: str, version: str) -> str:
    return f"{base_url.rstrip('/')}/changes/{quote(act_id, safe=':')}/{quote(version)}"


def atom(layout: Layout, since: str | dt.datetime | None = None, act: str | None = None, limit: int = 50, *,
         base_url: str = "", feed_path: str = "/changes.atom", now: dt.datetime | None = None) -> str:
    """The feed as an Atom 1.0 document (RFC 4287), one ``<entry>`` per publication, newest first.

    Without ``since``: the latest ``limit`` publications (what a feed reader polls). With
    ``since`` (cursor or timestamp): the page after it, with a ``rel="next"`` link when more
    follow. ``rel="self"``/``"next"`` point at ``{base_url}{feed_path}?…``, entry links at
    ``{base_url}/changes/{act}/{version}`` (relative without ``base_url``); ``content`` lists the
    changed units with their word diffs. ``FeedError`` as :func:`changes`."""
    _check_act(act)
    _check_limit(limit)
    if since is None or since == "":
        pubs = publications(layout, act)
        page = ChangePage([entry(p) for p in pubs[-limit:]], encode_cursor(pubs[-1].position) if pubs else None,
                          False, limit, act, None)
    else:
        page = changes(layout, since=since, act=act, limit=limit)
    ET.register_namespace("", ATOM_NS)
    feed = ET.Element(_q("feed"))
    _sub(feed, "id", f"{TAG_AUTHORITY}changes" + (f"/{act}" if act else ""))
    _sub(feed, "title", "lexpipe: published changes" + (f" of {act}" if act else ""))
    newest = max((e.published_at for e in page.entries), default=None)
    _sub(feed, "updated", iso(newest or now or dt.datetime.now(dt.timezone.utc)))
    author = _sub(feed, "author")
    _sub(author, "name", "lexpipe")
    params = {k: v for k, v in (("act", act), ("limit", str(limit))) if v}
    base = base_url.rstrip("/")
    self_params = {**params, **({"since": page.since} if page.since else {})}
    _sub(feed, "link", rel="self", href=f"{base}{feed_path}?{urlencode(self_params)}")
    if page.has_more and page.next_cursor:
        _sub(feed, "link", rel="next", href=f"{base}{feed_path}?{urlencode({**params, 'since': page.next_cursor})}")
    for e in sorted(page.entries, key=lambda e: (e.published_at, e.act_id, e.version), reverse=True):
        el = _sub(feed, "entry")
        _sub(el, "id", e.id)
        _sub(el, "title", entry_title(e))
        _sub(el, "updated", iso(e.published_at))
        _sub(el, "published", iso(e.published_at))
        _sub(el, "link", rel="alternate", href=publication_href(base_url, e.act_id, e.version))
        _sub(el, "category", term=e.act_id)
        _sub(el, "content", _entry_html(e), type="html")
    return ET.tostring(feed, encoding="unicode", xml_declaration=True)
