"""One page of the DRF list API (``count``/``next``/``results``), read record by record.

Why a module of its own: ``/cases/``, ``/courts/`` and the change probe all read pages the same
way, and one record that is not valid JSON must cost only that record, not the page. The tolerant
scanner that does this (strings, brackets, escapes) is ``connectors.record_pages``, shared with
the SAOS dump pages; this module gives the DRF envelope its meaning (``next``, ``count``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connectors.openlegaldata.errors import PageFormatError
from connectors.record_pages import RawRecord, walk_envelope

# Landed page bodies are <sha>.page: a ".json" blob would be overwritten by its own sidecar
# (<sha>.json) in RawLandingZone, and any "*.json" blob would be read as a sidecar by find().
PAGE_SUFFIX = ".page"


@dataclass(frozen=True)
class ParsedPage:
    records: list[RawRecord]
    next_url: str | None
    count: int | None
    salvaged: bool = False  # the body was not valid JSON; records were split one by one


def parse_page(body: bytes) -> ParsedPage:
    """Read a DRF page record by record, keeping each record's exact text.

    The envelope and every record are decoded with the C JSON scanner (``raw_decode``), one value
    at a time. A record that is not valid JSON (say an invalid ``\\'`` escape) is delimited by
    a string- and bracket-aware scan instead and returned with its ``error``: one bad record does
    not cost the page. Raises ``PageFormatError`` when the envelope itself cannot be read.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PageFormatError(f"page body is not UTF-8: {exc}") from None
    try:
        envelope, records = walk_envelope(text, "results")
    except (ValueError, IndexError) as exc:
        raise PageFormatError(f"not a paginated JSON list: {exc}; body starts with "
                              f"{text[:60]!r}") from None
    if records is None:
        raise PageFormatError("page is JSON but not a paginated list (no 'results' array)")
    return ParsedPage(records, _next_url(envelope.get("next")), _count(envelope.get("count")),
                      salvaged=any(r.error is not None for r in records))


def _next_url(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise PageFormatError(f"'next' is neither a URL nor null: {value!r}")


def _count(value: Any) -> int | None:
    return value if type(value) is int else None
