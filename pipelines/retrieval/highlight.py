"""Where a query's terms occur in a hit's text, and a short HTML snippet with them marked.

Why analysed terms, not the query's strings: a Polish query says "umowy leasingu" (genitive) and the
article says "Umowa leasingu"; a German one "Kaufvertrags" and the § "Kaufvertrag". A text token
matches a query token when their keys meet; a token's keys are

* its term from the language's BM25 analyser (``analyzers.get_analyzer(lang)``: what the index holds;
  the German lookup lemma, the Polish lowercased form — the Polish default indexes surface forms,
  measured better on exam questions, so it alone would not mark "Umowa" for "umowy"),
* its simplemma dictionary lemma (umowy/umowa/umową/umowie → umowa; Kaufvertrags → Kaufvertrag),
* and both diacritic-folded (a query typed without Polish letters still marks "zawarta"/"zawartą").

Stop words of the language (spaCy's list) mark nothing unless the query has no other word: "co to
jest umowa" marks "umowa", not every "to". Numbers match as the analyser writes them ("709^2" ↔ "709²").

Words are cut by one regular expression (letters/digits runs, "709^2", "§") on both sides, not by
the spaCy pipeline: the pipeline cost ~0.45 ms per 1,000 characters, ~11 ms for a page of 10
articles of 2,500 characters, over the page's 10 ms budget; the regex plus a memoised key per
distinct word costs ~0.09 ms per 1,000 characters (measured on this 2-core machine, warm memo). A
word's index term is still the analyser's (``analyze(word)``, memoised). Texts longer than
``MAX_ANALYSED_CHARS`` are marked in their first part only.

Output is HTML-escaped text with ``<mark>`` as the only markup: the text and the query are untrusted.
Marks that overlap or are separated only by spaces are merged ("<mark>Umowa leasingu</mark>").
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from dataclasses import dataclass

from pipelines.retrieval.analyzers import _number_term, fold_term, get_analyzer, stop_words

SNIPPET_CHARS = 300
MAX_ANALYSED_CHARS = 20_000
_HAS_DIGIT = re.compile(r"\d").search
_SPACES_ONLY = re.compile(r"[ \t\u00a0]*")


_WORD = re.compile(r"§|[^\W_]+(?:\^\d+)?")


@functools.lru_cache(maxsize=200_000)
def word_keys(word: str, lang: str) -> frozenset[str]:
    """The matching keys of one word (memoised: a page's words are mostly seen before)."""
    if word == "§":
        return frozenset({"§"})
    if _HAS_DIGIT(word):
        return frozenset({_number_term(word)})
    low = word.lower()
    terms = get_analyzer(lang).analyze(word)
    keys = {low, terms[0] if terms else low, _dictionary_lemma(low, lang)}
    keys |= {fold_term(k) for k in keys}
    return frozenset(k for k in keys if k)


def _dictionary_lemma(word: str, lang: str) -> str:
    import simplemma

    try:
        return simplemma.lemmatize(word, lang=lang).lower()
    except ValueError:  # a language simplemma does not know: the word itself
        return word


@functools.lru_cache(maxsize=1024)
def query_keys(query: str, lang: str) -> frozenset[str]:
    """The keys a text word must share one of to be marked (stop words left out unless the query
    has nothing else)."""
    stop = stop_words(lang)
    all_keys: set[str] = set()
    content: set[str] = set()
    for m in _WORD.finditer(_nfc(query)):
        keys = word_keys(m.group(), lang)
        all_keys |= keys
        if m.group().lower() not in stop:
            content |= keys
    return frozenset(content or all_keys)


def _nfc(text: str) -> str:
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def merge(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Sorted spans with overlapping ones and those apart by spaces only joined into one."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and (start <= out[-1][1] or _SPACES_ONLY.fullmatch(text, out[-1][1], start)):
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def highlight(text: str, query: str, language: str) -> list[tuple[int, int]]:
    """(start, end) character spans of ``text`` (NFC) whose tokens match the query's analysed
    terms, merged; ``language`` is the text's ("pl", "de")."""
    text = _nfc(text or "")[:MAX_ANALYSED_CHARS]
    wanted = query_keys(query, language)
    if not text or not wanted:
        return []
    spans = [m.span() for m in _WORD.finditer(text) if word_keys(m.group(), language) & wanted]
    return merge(spans, text)


@dataclass(frozen=True)
class Snippet:
    text: str  # the window of the text shown, NFC
    spans: list[tuple[int, int]]  # marks within ``text``
    cut_start: bool  # the window starts after the text's start ("…" before it)
    cut_end: bool

    def html(self) -> str:
        """Escaped text with ``<mark>`` around the spans; "…" where the text was cut."""
        parts, pos = [], 0
        for start, end in self.spans:
            parts.append(html.escape(self.text[pos:start]))
            parts.append(f"<mark>{html.escape(self.text[start:end])}</mark>")
            pos = end
        parts.append(html.escape(self.text[pos:]))
        body = "".join(parts)
        return ("… " if self.cut_start else "") + body + (" …" if self.cut_end else "")


def _best_window(spans: list[tuple[int, int]], keys: list[str], width: int) -> int:
    """Start of the ``width``-character window holding the most distinct matched terms, then the
    most marks (earliest on ties). One pass with two pointers: a long text can hold hundreds of marks."""
    from collections import Counter

    best, best_score = spans[0][0], (-1, -1)
    inside: Counter = Counter()
    j = 0
    for i, (start, _) in enumerate(spans):
        while j < len(spans) and spans[j][1] <= start + width:
            inside[keys[j]] += 1
            j += 1
        score = (len(inside), j - i)
        if score > best_score:
            best, best_score = start, score
        if j > i:  # span i leaves the window before the next start
            inside[keys[i]] -= 1
            if not inside[keys[i]]:
                del inside[keys[i]]
        else:
            j = i + 1
    return best


def snippet(text: str, query: str, language: str, width: int = SNIPPET_CHARS) -> Snippet:
    """About ``width`` characters of ``text`` around the best cluster of matches (the text's start
    when nothing matches), cut at word boundaries, with its marks."""
    text = _nfc(text or "")
    spans = highlight(text, query, language)
    if len(text) <= width:
        return Snippet(text, spans, False, False)
    if not spans:
        end = _word_end(text, width)
        return Snippet(text[:end].rstrip(), [], False, end < len(text))
    keys = [text[s:e].lower() for s, e in spans]
    first = _best_window(spans, keys, width)
    start = max(0, first - width // 5)  # a little context before the first mark
    start = _word_start(text, start)
    end = _word_end(text, min(len(text), start + width))
    window = [(max(s, start) - start, min(e, end) - start) for s, e in spans if s < end and e > start]
    return Snippet(text[start:end].strip(), _shift(window, text[start:end]), start > 0, end < len(text))


def _shift(spans: list[tuple[int, int]], window: str) -> list[tuple[int, int]]:
    lead = len(window) - len(window.lstrip())
    return [(s - lead, e - lead) for s, e in spans if s >= lead]


def _word_start(text: str, pos: int) -> int:
    if pos <= 0:
        return 0
    cut = text.rfind(" ", 0, pos)
    return 0 if cut < 0 or pos - cut > 30 else cut + 1


def _word_end(text: str, pos: int) -> int:
    if pos >= len(text):
        return len(text)
    cut = text.find(" ", pos)
    return len(text) if cut < 0 else cut if cut - pos <= 30 else pos


def snippet_html(text: str, query: str, language: str, width: int = SNIPPET_CHARS) -> str:
    return snippet(text, query, language, width).html()
