"""A JSON list page read record by record: one record that is not valid JSON costs only itself.

Why shared: the Open Legal Data pages (``results``) and the SAOS dump pages (``items``) are both an
envelope object around one array of records, and both connectors need the same salvage: decode
the envelope and every record with the C JSON scanner (``raw_decode``), one value at a time, and
delimit a record that does not decode (an invalid ``\\'`` escape, an unescaped quote in HTML) by a
string- and bracket-aware scan, kept as text with its error. The envelope's meaning (``next`` and
``count``, or ``links`` and ``queryTemplate``) and the connector's ``PageFormatError`` stay in each
connector's ``pages`` module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RawRecord:
    """One element of the page's record array: the parsed ``obj`` or the JSON ``error``, plus
    its exact text."""

    index: int
    text: str
    obj: Any = None
    error: str | None = None


_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


def walk_envelope(text: str, records_key: str) -> tuple[dict[str, Any], list[RawRecord] | None]:
    """The envelope's other members, and the records of its ``records_key`` array (None when it
    has no such array).

    Raises ``ValueError`` (or ``IndexError``) when the envelope itself cannot be read: not a JSON
    object, trailing data, or a record that cannot even be delimited.
    """
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
            if key == records_key and text.startswith("[", i):
                records, i = _walk_records(text, i, records_key)
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


def _walk_records(text: str, i: int, records_key: str) -> tuple[list[RawRecord], int]:
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
        raise ValueError(f"expected ',' or ']' in {records_key} at offset {i}")


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
