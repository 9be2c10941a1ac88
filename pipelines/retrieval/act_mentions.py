"""Acts a query names: "Zgodnie z Kodeksem pracy, …", "w świetle k.p.c.", "art. 22^1 k.c.".

Why: a search that names no act searches every act of its jurisdiction, but exam questions
(and many practitioners' queries) say which act they ask about. On the exam questions of
2012–2020 every one of the 1,002 questions with in-corpus gold names its act ("Zgodnie z Kodeksem
cywilnym" 509, "… postępowania cywilnego" 356, "… karnym" 84, "… pracy" 53), and the named act
was always the gold's. Searching only the named act removes the other acts' look-alike
paragraphs (k.p.c. and k.c. share much wording on obligations, deadlines, parties); the measured
effect is in BENCHMARKS.md ("Retrieval, Polish: four codes").

What is recognised comes from the act registry only (``schemas/acts.toml``): each act's
``title`` in any grammatical case (every word of the title by its stem: "Kodeks cywilny" →
"Kodeksem cywilnym", "Kodeksu cywilnego") and its ``citation`` / ``citation_aliases`` with free
spacing ("k.c.", "k. c.", "K.C."). A title followed by a word that continues a longer code name
("Kodeks karny *wykonawczy*", "Kodeks karny *skarbowy*") is not a mention of the shorter act, and
"k.p." inside "k.p.c." is not "k.p.".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from schemas.acts import Act, registry

# Words that continue the title of a Polish code beyond a shorter code's title: "Kodeks karny
# wykonawczy", "Kodeks karny skarbowy", "Kodeks postępowania karnego" (the latter is already
# kept apart by word order). A mention followed by one of them names another code.
_CONTINUATIONS = r"(?:wykonawcz|skarbow|postępowani|administracyjn|wykrocze|spółek|handlow|morsk|wyborcz|celn|rodzinn|opiekuńcz)\w*"
_LETTER = "a-ząćęłńóśźż"
_TRAILING_VOWELS = re.compile(rf"[aeiouyąę]+$")


@dataclass(frozen=True)
class Mention:
    act_id: str
    start: int
    end: int
    text: str


def _stem(word: str) -> str:
    """A word of a title without its case ending: "cywilny" → "cywiln", "postępowania" →
    "postępowan", "pracy" → "prac"; never shorter than 3 letters."""
    w = word.lower()
    s = _TRAILING_VOWELS.sub("", w)
    return s if len(s) >= 3 else w


def title_pattern(title: str) -> str:
    words = title.split()
    body = r"\s+".join(re.escape(_stem(w)) + r"\w*" for w in words)
    return rf"(?<!\w){body}(?!\w)(?!\s+{_CONTINUATIONS})"


def citation_pattern(citation: str) -> str:
    """"k.p.c." → k. p. c. with optional spaces, not followed by another abbreviation letter (so
    "k.p." does not match inside "k.p.c."); citations without dots ("BGB") match as words."""
    parts = [p for p in citation.split(".") if p.strip()]
    if citation.endswith(".") and all(len(p.strip()) <= 3 for p in parts):
        body = r"\s?".join(re.escape(p.strip()) + r"\." for p in parts)
        return rf"(?<![\w.]){body}(?!\s?[{_LETTER}]\.)"
    return rf"(?<!\w){re.escape(citation)}(?!\w)"


@functools.lru_cache(maxsize=32)
def _compiled(acts: tuple[Act, ...]) -> tuple[tuple[str, re.Pattern], ...]:
    out = []
    for act in acts:
        alts = [title_pattern(act.title), *(citation_pattern(c) for c in act.citations if c)]
        out.append((act.id, re.compile("|".join(f"(?:{a})" for a in alts), re.IGNORECASE)))
    return tuple(out)


def mentions(query: str, acts: Iterable[Act] | None = None) -> list[Mention]:
    """Every mention of an act of ``acts`` (default: the registry's acts) in ``query``, in order."""
    acts = tuple(registry().acts if acts is None else acts)
    found = [Mention(act_id, m.start(), m.end(), m.group(0))
             for act_id, rx in _compiled(acts) for m in rx.finditer(query)]
    return sorted(found, key=lambda m: (m.start, -m.end))


def named_acts(query: str, acts: Iterable[Act] | None = None) -> tuple[str, ...]:
    """The ids of the acts ``query`` names, in order of first mention, unique."""
    return tuple(dict.fromkeys(m.act_id for m in mentions(query, acts)))


def acts_of(ids: Sequence[str]) -> tuple[Act, ...]:
    """Registry rows of ``ids`` (unknown ids skipped): the acts a detector should look for."""
    reg = {a.id: a for a in registry().acts}
    return tuple(reg[i] for i in ids if i in reg)
