"""One page of the DRF list API (``count``/``next``/``results``), read record by record.

Why a module of its own: ``/cases/``, ``/courts/`` and the change probe all read pages the same
way, and one record that is not valid JSON must cost only that record, not the page; the
tolerant scanner that does this (strings, brackets, escapes) is easier to read and test alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from connectors.openlegaldata.errors import PageFormatError

# Landed page bodies are <sha>.page: a ".json" blob would be overwritten by its own sidecar
# (<sha>.json) in RawLandingZone, and any "*.json" blob would be read as a sidecar by find().
PAGE_SUFFIX = ".page"


@dataclass(frozen=True)
class RawRecord:
    """One element of ``results``: parsed ``obj`` or the JSON ``error``, plus its text."""

    index: int
    text: str
    obj: Any = None
    error: str | None = None


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
        envelope, records = _walk_envelope(text)
    except (ValueError, IndexError) as exc:
        raise PageFormatError(f"not a paginated JSON list: {exc}; body starts with "
                              f"{text[:60]!r}") from None
    if records is None:
        raise PageFormatError("page is JSON but not a paginated list (no 'results' array)")
    return ParsedPage(records, _next_url(envelope.get("next")), _count(envelope.get("count")),
                      salvaged=any(r.error is not None for r in records))


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
            if key == "results" and text.startswith("[", i):
                records, i = _walk_results(text, i)
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


def _walk_results(text: str, i: int) -> tuple[list[RawRecord], int]:
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
            i = _value_end(text, start)  # ValueError here: cannot even delimit it → envelope
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
        raise ValueError(f"expected ',' or ']' in results at offset {i}")


def _next_url(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise PageFormatError(f"'next' is neither a URL nor null: {value!r}")


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


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
