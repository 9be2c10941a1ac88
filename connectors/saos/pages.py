"""One page of the SAOS dump API (``links`` / ``items`` / ``queryTemplate`` / ``info``), read
record by record.

Why a module of its own: a dump page carries up to 100 full judgments (2.5 MB of JSON); one
record that is not valid JSON (an unescaped quote in a judgment's HTML, say) must cost only that
record, not the other 99. The envelope and every item are decoded with the C JSON scanner
(``raw_decode``), one value at a time; an item that does not decode is delimited by a string- and
bracket-aware scan instead and kept as text with its error, to be quarantined byte for byte
(that scanner is ``connectors.record_pages``, shared with the Open Legal Data pages). Only a page
whose *envelope* cannot be read (an HTML error page served with 200, a body cut short, no
``items`` array, unreadable ``links``) raises ``PageFormatError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from connectors.record_pages import RawRecord, walk_envelope
from connectors.saos.errors import PageFormatError

# Landed page bodies are <sha>.page: RawLandingZone keeps its provenance sidecar at <sha>.json.
PAGE_SUFFIX = ".page"
ITEMS_KEY = "items"


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
        envelope, records = walk_envelope(text, ITEMS_KEY)
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
