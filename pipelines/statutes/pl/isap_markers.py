"""ISAP change markers: ``[ ]`` wording that will expire, ``< >`` wording not yet in force.

ISAP's unified texts print both readings side by side and explain them in a margin note such as
``Nowe brzmienie § 1 w art. 647^1 wejdzie w życie z dn. 4.12.2025 r. (Dz. U. z 2025 r. poz. 1508).``
We keep both readings, never the bare markers, and decide which one is in force on the version date.

Markers nest (k.p.c. 2023, art. 755² § 1: ``[§ 1. … osoba stosująca [przemoc w rodzinie] <przemoc
domową> jest obowiązana zachować.]``), so a reading is computed with a stack, not with regular
expressions: a character belongs to the wording in force before the change unless some ``< >``
encloses it, and to the wording after it unless some ``[ ]`` does. The unified texts also carry
typesetting slips — a ``>`` that nothing opened (k.p.c. 2024 art. 477⁹ § 1), a ``<`` that nothing
closes (k.p.c. 2023 art. 586 pkt 1a) — which :func:`repair` resolves before the readings.
"""

from __future__ import annotations

import datetime as dt
import re

_EFFECTIVE = re.compile(r"w\s*życie\s+z\s+dn\.\s*(\d{1,2})\.(\d{1,2})\.(\d{4})")

MARKER_CHARS = "<>[]"
OPENERS = {"<": ">", "[": "]"}  # < > not yet in force, [ ] in force until the change
CLOSERS = {">": "<", "]": "["}


def has_markers(text: str) -> bool:
    return any(c in text for c in MARKER_CHARS)


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def unmatched(text: str) -> tuple[list[int], list[int]]:
    """(positions of openers never closed, positions of closers nothing opened). A closer closes
    the innermost open marker of its kind; openers inside that one are left unclosed."""
    stack: list[int] = []
    unclosed: list[int] = []
    stray: list[int] = []
    for i, c in enumerate(text):
        if c in OPENERS:
            stack.append(i)
        elif c in CLOSERS:
            k = next((k for k in range(len(stack) - 1, -1, -1) if text[stack[k]] == CLOSERS[c]), None)
            if k is None:
                stray.append(i)
            else:
                unclosed.extend(stack[k + 1:])
                del stack[k:]
    return sorted(unclosed + stack), stray


def repair(text: str) -> str:
    """Well-formed markers: a closer that nothing opened is dropped; an opener that nothing
    closes is closed at the end of its line (the unit it opens — an added point "<1a) …"). An
    opener that should span further (a whole new article) is closed by the parser, which knows
    where the article ends. Text with well-formed markers is returned unchanged."""
    unclosed, stray = unmatched(text)
    if not unclosed and not stray:
        return text
    close_at: dict[int, str] = {}
    for i in unclosed:
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        close_at[end] = OPENERS[text[i]] + close_at.get(end, "")
    drop = set(stray)
    out = []
    for i, c in enumerate(text):
        out.append(close_at.get(i, ""))
        if i not in drop:
            out.append(c)
    out.append(close_at.get(len(text), ""))
    return "".join(out)


def _reading(text: str, drop: str) -> str:
    """The characters no ``drop`` marker encloses, markers removed."""
    out: list[str] = []
    stack: list[str] = []
    for c in text:
        if c in OPENERS:
            stack.append(c)
        elif c in CLOSERS:
            if CLOSERS[c] in stack:
                del stack[len(stack) - 1 - stack[::-1].index(CLOSERS[c]):]
        elif drop not in stack:
            out.append(c)
    return _tidy("".join(out))


def current_reading(text: str) -> str:
    """The wording before the announced change: drop ``<…>``, unwrap ``[…]``."""
    return _reading(text, "<")


def future_reading(text: str) -> str:
    """The wording after the announced change: drop ``[…]``, unwrap ``<…>``."""
    return _reading(text, "[")


def effective_dates(notes: list[str]) -> list[dt.date]:
    """Dates on which announced changes take effect, from ISAP margin notes."""
    out = []
    for note in notes:
        for d, m, y in _EFFECTIVE.findall(note):
            out.append(dt.date(int(y), int(m), int(d)))
    return sorted(out)


def readings(text: str, notes: list[str], version: dt.date) -> tuple[str, str | None, dt.date | None]:
    """(text in force on ``version``, text after the pending change or None, effective date)."""
    if not has_markers(text):
        return text, None, None
    if current_reading(text) == future_reading(text):  # only slips, no change (see repair)
        return current_reading(text), None, None
    dates = effective_dates(notes)
    effective = dates[0] if dates else None
    if effective is not None and effective <= version:
        return future_reading(text), None, effective
    return current_reading(text), future_reading(text), effective
