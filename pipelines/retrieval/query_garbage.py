"""Queries that hold nothing to search for: answered with no hits and a reason, never ten confident hits.

Why: every retriever ranks *something* for any input — the dense leg embeds an emoji or "asdfgh"
like any text and returns its ten nearest paragraphs with a score. A person who typed a keyboard mash
or pasted a control character then sees "results" that mean nothing. The search service asks
:func:`garbage_reason` first and answers such a query with an empty page saying why
(``SearchPage.flags`` has ``"garbage_query"``, ``SearchPage.reasons`` the sentence).

What counts (each rule is deliberately narrow: a real question must never be refused):

* **control characters** (NUL and the other C0/C1 controls but tab and line breaks): no keyboard
  types them; they come from broken clients or probing;
* **no word**: no letter and no digit — emoji, punctuation, symbols only;
* **only stop words**: every word is a stop word of Polish, German or English (spaCy's lists):
  "i", "czy", "und", "the" — nothing a statute could match;
* **keyboard mash**: no word is a known word (simplemma's dictionaries of pl/de/en), none is an
  acronym ("RODO", "ZUS": 2–6 capitals) or carries a digit ("art. 415"), and every word looks
  typed at random — a run along a keyboard row ("asdf", "qwer", "hjkl"), a repeated short unit
  ("jkjkjk", "sdfsdf"), or 5+ consonants in a row; words under four letters never count ("kpk",
  "ksh", "krs" are abbreviations typed without dots). A query with one real or plausible word (a
  typo such as "konsumnet") is searched as usual.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

WORD = re.compile(r"[^\W_]+", re.UNICODE)
ACRONYM = re.compile(r"^[A-ZĄĆĘŁŃÓŚŹŻÄÖÜ]{2,6}$")
VOWELS = set("aeiouyąęóäöüéáí")
ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890", "qwertzuiop", "yxcvbnm")
LANGS = ("pl", "de", "en")


@functools.lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    from spacy.lang.de.stop_words import STOP_WORDS as DE
    from spacy.lang.en.stop_words import STOP_WORDS as EN
    from spacy.lang.pl.stop_words import STOP_WORDS as PL

    return frozenset(w.lower() for w in (*PL, *DE, *EN))


@functools.lru_cache(maxsize=4096)
def known_word(word: str) -> bool:
    """A word of simplemma's Polish, German or English dictionary (as typed or lower-cased)."""
    from simplemma import is_known

    return any(is_known(w, lang=lang) for lang in LANGS for w in {word, word.lower()})


def _keyboard_share(word: str) -> float:
    """Share of the word's adjacent letter pairs that are neighbours on a keyboard row (either way)."""
    w = word.lower()
    if len(w) < 2:
        return 0.0
    near = sum(any(a + b in row or b + a in row for row in ROWS) for a, b in zip(w, w[1:]))
    return near / (len(w) - 1)


def mash_like(word: str) -> bool:
    """Whether an unknown word looks typed at random (see the module docstring)."""
    w = word.lower()
    if len(w) < 4:
        return False  # "kpk", "ksh", "krs": lower-cased abbreviations are short
    if _keyboard_share(w) >= 0.6:
        return True
    if re.fullmatch(r"(.{1,3})\1{1,}.{0,2}", w):  # jkjkjk, sdfsdf, aaaa
        return True
    if not (set(w) & VOWELS):
        return True
    return bool(re.search(r"[^aeiouyąęóäöüéáí\W\d]{5,}", w))


@dataclass(frozen=True)
class Garbage:
    kind: str  # controls | no_words | stop_words | mash (a page words its own message by kind)
    reason: str  # the sentence the API, CLI and MCP tool give
    detail: str = ""  # the characters or words concerned


def check(query: str) -> Garbage | None:
    """What is wrong with ``query``, or None when it should be searched."""
    controls = sorted({f"U+{ord(c):04X}" for c in query
                       if unicodedata.category(c) == "Cc" and c not in "\t\n\r"})
    if controls:
        shown = ", ".join(controls)
        return Garbage("controls", f"the query contains control characters ({shown}), which no statute text holds",
                       shown)
    words = WORD.findall(query)
    if not words:
        return Garbage("no_words", "the query has no words: only symbols, emoji or punctuation")
    if any(any(ch.isdigit() for ch in w) for w in words):
        return None  # a number: "art. 415", "2024", a file number
    stops = stop_words()
    if all(w.lower() in stops for w in words):
        shown = ", ".join(dict.fromkeys(w.lower() for w in words))
        return Garbage("stop_words", f"the query has only stop words ({shown}): nothing a provision could match",
                       shown)
    content = [w for w in words if w.lower() not in stops]
    # the shape test first: loading simplemma's dictionaries costs ~5 s of CPU the first time in a
    # process (a `lexpipe search` took 13 s, 5 of them here), and a query with one word that is not
    # mash-like is searched whatever the dictionaries say
    if not all(mash_like(w) for w in content):
        return None
    if any(ACRONYM.match(w) or known_word(w) for w in content):
        return None
    return Garbage("mash", "the query looks like random typing: none of its words is a Polish, German or "
                           "English word")


def garbage_reason(query: str) -> str | None:
    """Why ``query`` holds nothing to search for, or None when it should be searched."""
    found = check(query)
    return found.reason if found else None
