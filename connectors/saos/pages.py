"""One page of the SAOS dump API (``links`` / ``items`` / ``queryTemplate`` / ``info``), read
record by record.

Why a module of its own: a dump page carries up to 100 full judgments (2.5 MB of JSON); one
record that is not valid JSON (an unescaped quote in a judgment's HTML, say) must cost only that
record, not the other 99. The envelope and every item are decoded with the C JSON scanner
(``raw_decode``), one value at a time; an item that does not decode is delimited by a string- and
bracket-aware scan instead and kept as text with its error, to be quarantined byte for byte.
Only a page whose *envelope* cannot be read (an HTML error page served with 200, a body cut short,
no ``items`` array, unreadable ``links``) raises ``PageFormatError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from connectors.saos.errors import PageFormatError

# Landed page bodies are <sha>.page: RawLandingZone keeps its provenance sidecar at <sha>.json.
PAGE_SUFFIX = ".page"
ITEMS_KEY = "items"


@dataclass(frozen=True)
class RawRecord:
    """One element of ``items``: the parsed ``obj`` or the JSON ``error``, plus its exact text."""

    index: int
    text: str
    obj: Any = None
    error: str | None = None


@dataclass(frozen=True)
class DumpPage:
    """A dump page: its records, its links by ``rel`` (self / prev / next) and the echoed query."""

    records: list[RawRecord]
    links: dict[str, str] = field(default_factory=dict)
    query_template: dict[str, Any] | None = None
    salvaged: bool = False  # some item was not valid JSON and was split out as text

    @property
    def next_url(self) -> str | None:
        return self.links.get("next")

    @property
    def self_url(self) -> str | None:
        return self.links.get("self")


def parse_dump_page(body: bytes) -> DumpPage:
    """Read a dump page record by record, keeping each record's exact text.

    Raises ``PageFormatError`` when the envelope cannot be read: not UTF-8, not a JSON object,
    no ``items`` array, or ``links`` that are not a list of ``{"rel", "href"}`` objects.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PageFormatError(f"page body is not UTF-8: {exc}") from None
    try:
        envelope, records = _walk_envelope(text)
    except (ValueError, IndexError) as exc:
        raise PageFormatError(f"not a SAOS dump page: {exc}; body starts with "
                              f"{text[:60]!r}") from None
    if records is None:
        raise PageFormatError(f"page is JSON but not a dump page (no '{ITEMS_KEY}' array); keys: "
                              f"{sorted(envelope)}")
    template = envelope.get("queryTemplate")
    return DumpPage(records, _links(envelope.get("links")),
                    template if isinstance(template, dict) else None,
                    salvaged=any(r.error is not None for r in records))


def _links(value: Any) -> dict[str, str]:
    """``[{"rel": "next", "href": "…"}, …]`` → ``{"next": "…"}`` (absent or null → no links)."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise PageFormatError(f"'links' is not a list: {str(value)[:80]!r}")
    links: dict[str, str] = {}
    for link in value:
        if not (isinstance(link, dict) and isinstance(link.get("rel"), str)
                and isinstance(link.get("href"), str) and link["href"]):
            raise PageFormatError(f"unreadable link {str(link)[:80]!r}: expected "
                                  "{'rel': text, 'href': URL}")
        if link["rel"] in links and links[link["rel"]] != link["href"]:
            raise PageFormatError(f"two different '{link['rel']}' links")
        links[link["rel"]] = link["href"]
    return links


_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


def _walk_envelope(text: str) -> tuple[dict[str, Any], list[RawRecord] | None]:
    i = _skip_ws(text, 0)
    if not text.startswith("{", i):
        raise ValueError("body is not a JSON object")
    envelope: dict[str, Any] = {}
    records: list[RawRecord] | None = None
    i = _skip_ws(text, i + 1)
    if text.startswith("}", i):
        i += 1
    else:
        while True:
            key, i = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                raise ValueError(f"object key is not a string at offset {i}")
            i = _skip_ws(text, i)
            if not text.startswith(":", i):
                raise ValueError(f"expected ':' at offset {i}")
            i = _skip_ws(text, i + 1)
            if key == ITEMS_KEY and text.startswith("[", i):
                records, i = _walk_items(text, i)
            else:
                envelope[key], i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text.startswith(",", i):
                i = _skip_ws(text, i + 1)
                continue
            if text.startswith("}", i):
                i += 1
                break
            raise ValueError(f"expected ',' or '}}' at offset {i}")
    if _skip_ws(text, i) != len(text):
        raise ValueError(f"trailing data at offset {i}")
    return envelope, records


def _walk_items(text: str, i: int) -> tuple[list[RawRecord], int]:
    records: list[RawRecord] = []
    i = _skip_ws(text, i + 1)
    if text.startswith("]", i):
        return records, i + 1
    while True:
        start = i
        try:
            obj, i = _DECODER.raw_decode(text, start)
            records.append(RawRecord(len(records), text[start:i], obj))
        except ValueError:
            i = _value_end(text, start)  # a ValueError here: not even delimitable → envelope
            piece = text[start:i]
            try:
                json.loads(piece)
                error = "not valid JSON"
            except ValueError as exc:  # the message with positions relative to the record
                error = str(exc)
            records.append(RawRecord(len(records), piece, error=error))
        i = _skip_ws(text, i)
        if text.startswith(",", i):
            i = _skip_ws(text, i + 1)
            continue
        if text.startswith("]", i):
            return records, i + 1
        raise ValueError(f"expected ',' or ']' in items at offset {i}")


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    """Index past the string starting at ``text[i] == '"'``; any backslash escapes one char."""
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == '"':
            return j + 1
        else:
            j += 1
    raise ValueError("unterminated string")


def _value_end(text: str, i: int) -> int:
    """Index past the (possibly invalid) JSON value at ``i``, tracking strings and brackets."""
    if i >= len(text):
        raise ValueError("unexpected end of body")
    ch = text[i]
    if ch == '"':
        return _string_end(text, i)
    if ch in "{[":
        depth, j = 0, i
        while j < len(text):
            ch = text[j]
            if ch == '"':
                j = _string_end(text, j)
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ValueError("unterminated object or array")
    j = i
    while j < len(text) and text[j] not in ",}]" + _WS:
        j += 1
    if j == i:
        raise ValueError(f"unexpected {ch!r} at offset {i}")
    return j
