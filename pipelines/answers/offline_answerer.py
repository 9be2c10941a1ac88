"""The offline answerer: no LLM, no endpoint — pick the option the retrieved law supports best.

It is the baseline the LLM path must beat, and what answers when no endpoint is configured.

Why it works at all: exam questions on the Civil Code are sentences of the code cut in two. The
question stem is the first half, nearly verbatim; the right option is the second half, the wrong
ones are the same half with a number, a negation or a clause changed. So the answerer

1. searches once with the question and its options (``search(query, k)``, any backend) and splits
   the top-``depth`` articles into paragraphs (``§``) — the *units*;
2. picks the unit that best continues the stem: IDF-weighted share of the stem's words in the unit
   (``stem_coverage``) + the best option's share of (prefix-)stemmed words + a small retrieval-rank
   prior; that unit's article is the citation (its ``…:par:N`` id when the article has §§);
3. describes every option against that unit with fifteen lexical features — IDF-weighted word
   coverage (exact and prefix-stemmed), coverage of the words *only this option* has, bigram and
   trigram overlap including the junction "end of stem + start of option", a token alignment of
   "stem tail + option" against the unit (:class:`difflib.SequenceMatcher`), how far the option
   runs on contiguously from the stem, matched and unmatched IDF mass, and polarity mismatches
   (an option word that the unit only has with "nie" before it, or vice versa);
4. scores each option with a linear model (:class:`OptionModel`: conditional logit over the
   options, trained by ``bench/answers.py`` on the 2012–2020 exam questions, weights in
   ``models/offline_answerer_pl.json`` with provenance) and answers the best-scored option;
5. inverts the choice for *inverted* questions — the answer is the option the law does **not**
   support: an explicit cue in the stem ("…, z wyjątkiem:", "nieprawdziwe", "błędne", "nie jest
   prawdą") or a stem whose polarity contradicts the unit ("bieg przedawnienia nie przerywa się
   przez:" against "Bieg przedawnienia przerywa się: …") while at least two options are well
   covered by the unit (the listed items).

Ties are broken deterministically (score, then the option's plain coverage, then letter order).
Per question it costs one search plus ~5–30 ms of tokenising and matching. A question that
cannot be answered (blank question or option text, fewer than two options, the search raising)
gives an :class:`AnswerResult` with ``error`` set; it never raises for one bad question.
"""

from __future__ import annotations

import difflib
import functools
import math
import random
import re
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar, Iterable, Mapping, Sequence

import numpy as np

from pipelines.answers.types import AnswerQuestion, AnswerResult
from pipelines.linear_model import StandardisedLinearModel
from pipelines.retrieval.interface import Hit

__all__ = [
    "SearchFn", "ArticleTextFn", "FEATURES", "OfflineConfig", "Unit", "CorpusStats", "ArticleStore",
    "OptionModel", "QuestionAnalysis", "OfflineAnswerer", "split_units", "question_query",
    "naive_answer", "train_option_model", "default_model_path", "is_inverted_question",
]

SearchFn = Callable[[str, int], Sequence[Hit]]
ArticleTextFn = Callable[[str], "str | None"]

MODELS_DIR = Path(__file__).with_name("models")

FEATURES: tuple[str, ...] = (
    "coverage",            # IDF-weighted share of the option's distinct words found in the unit
    "unique_coverage",     # … of the words only this option has (0 when it has none)
    "stem_coverage",       # coverage on prefix stems (inflection-tolerant)
    "stem_unique_coverage",
    "bigram",              # share of the option's bigrams (incl. stem-end junction) in the unit
    "trigram",
    "aligned",             # share of option tokens aligned (stem tail + option vs unit)
    "junction",            # an aligned block runs across the stem/option boundary
    "polarity_mismatch",   # option words whose "nie" differs from every occurrence in the unit
    "matched_mass",        # IDF mass of matched option words / 10
    "unmatched_mass",      # IDF mass of option words absent from the unit / 10
    "unique_matched_mass",
    "unique_unmatched_mass",
    "run",                 # option tokens continuing the stem contiguously in the unit (≤ 10) / 10
    "log_length",          # log(1 + option tokens)
)

NEGATIONS = frozenset({"nie"})
STEM_CHARS = 6  # prefix stem: folded word cut at 6 characters ("ofertę"/"oferta" → "oferta"/"ofert")
_PARAGRAPH = re.compile(r"(?m)^§\s*(\d+[a-z]?(?:\^\d+)?)\.\s*")
_ARTICLE_NUMBER = re.compile(r":art:([^:]+)$")
# Stems announcing that the answer is the exception / the false statement.
_INVERTED_CUES = re.compile(
    r"z\s+wyjątkiem\s*[:?…]*\s*$|\bnieprawdziw\w*|\bbłędn\w*|\bnie\s+jest\s+prawdą|\bfałszyw\w+\s+jest"
    r"|\bniezgodn\w*\s+z\s+(?:prawdą|przepisami|kodeksem)",
    re.IGNORECASE)


# --- configuration, units, corpus statistics --------------------------------------------------

@dataclass(frozen=True)
class OfflineConfig:
    """Knobs of the answerer. Defaults were chosen on the 2012–2020 exam questions (see
    ``bench/answers.py``): the question-with-options query alone finds the unit as often as adding
    a question-only query and one query per option (extra searches measured: no gain)."""

    depth: int = 5                 # articles of the question+options search turned into units
    option_queries: bool = False   # also search "question + option" per option (top option_depth)
    option_depth: int = 3
    stem_tail: int = 10            # stem tokens put before an option for the alignment features
    select_option_weight: float = 1.0  # unit selection: stem coverage + w · best option stem coverage
    select_rank_weight: float = 0.5    # … + w / (article rank + 1)
    invert_min_covered: int = 2    # polarity-inverted stem: at least this many options covered …
    invert_coverage: float = 0.8   # … to at least this share
    # Analyser variant for the stem/unit polarity check; None = the word forms of the features.
    # "pl_simplemma" (lemmas) also aligns "ograniczonym prawem … nie jest" with "Ograniczonymi
    # prawami … są"; neutral on 2012–2020, found by reading 2021–2023 errors, so not the default.
    polarity_variant: str | None = None
    snippet_chars: int = 240
    answerer: str = "offline"


@dataclass(frozen=True)
class Unit:
    """A paragraph (§) of a retrieved article, or the whole article when it has no §§."""

    unit_id: str      # "pl:kc:art:210:par:1" or "pl:kc:art:7"
    article_id: str
    label: str        # "art. 210 § 1"
    text: str
    rank: float       # best retrieval rank of its article (1 = top)


def article_label(article_id: str) -> str:
    m = _ARTICLE_NUMBER.search(article_id)
    return f"art. {m.group(1)}" if m else article_id


def unit_citation(unit: Unit) -> str:
    """The unit as its act prints it (``art. 210 § 1 k.c.``, ``art. 5 k.p.``: the act's citation
    from the registry), or its label alone for an act the registry does not hold."""
    from pipelines.answers.citation_check import citation_text

    text = citation_text(unit.unit_id)
    return unit.label if text == unit.unit_id else text


def split_units(article_id: str, text: str, rank: float = 1.0) -> list[Unit]:
    """An article's text → its paragraphs ("§ 1. …" at line starts), ids as in the corpus
    (``…:par:1``, ``…:par:2^1``); an article without §§ is one unit with the article id."""
    text = (text or "").strip()
    if not text:
        return []
    label = article_label(article_id)
    ms = list(_PARAGRAPH.finditer(text))
    if not ms:
        return [Unit(article_id, article_id, label, text, rank)]
    out = []
    head = text[:ms[0].start()].strip()
    if head:  # text before § 1 (rare): keep it as part of the article
        out.append(Unit(article_id, article_id, label, head, rank))
    for m, nxt in zip(ms, ms[1:] + [None]):
        body = text[m.start():nxt.start() if nxt else len(text)].strip()
        out.append(Unit(f"{article_id}:par:{m.group(1)}", article_id, f"{label} § {m.group(1)}", body, rank))
    return out


@functools.lru_cache(maxsize=200_000)
def prefix_stem(token: str) -> str:
    from pipelines.retrieval.analyzers import fold_term

    return fold_term(token)[:STEM_CHARS]


class _Tokenizer:
    """The project's Polish analyser (``pl_lower``: lowercase word forms, numbers kept, punctuation
    dropped), memoised per text: units recur across questions."""

    def __init__(self, analyzer=None, maxsize: int = 50_000) -> None:
        if analyzer is None:
            from pipelines.retrieval.analyzers import get_analyzer

            analyzer = get_analyzer("pl")
        self.analyzer = analyzer
        self._memo: dict[str, tuple[str, ...]] = {}
        self.maxsize = maxsize

    def __call__(self, text: str) -> tuple[str, ...]:
        out = self._memo.get(text)
        if out is None:
            if len(self._memo) >= self.maxsize:
                self._memo.clear()
            out = self._memo[text] = tuple(self.analyzer.analyze(text))
        return out


@dataclass
class CorpusStats:
    """IDF of words and of prefix stems over paragraph units (log((N+1)/(df+0.5))); words never
    seen get the maximum. Without statistics every word weighs 1."""

    idf: dict[str, float] = field(default_factory=dict)
    stem_idf: dict[str, float] = field(default_factory=dict)
    max_idf: float = 1.0
    units: int = 0

    @classmethod
    def from_texts(cls, article_texts: Mapping[str, str], analyzer=None) -> "CorpusStats":
        tok = _Tokenizer(analyzer)
        df: Counter[str] = Counter()
        sdf: Counter[str] = Counter()
        n = 0
        for aid, text in article_texts.items():
            for u in split_units(aid, text or ""):
                t = tok(u.text)
                df.update(set(t))
                sdf.update({prefix_stem(w) for w in t})
                n += 1
        mx = math.log((n + 1) / 0.5)
        return cls({w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()},
                   {w: math.log((n + 1) / (c + 0.5)) for w, c in sdf.items()}, mx, n)

    def word(self, w: str) -> float:
        return self.idf.get(w, self.max_idf) if self.idf else 1.0

    def stem(self, s: str) -> float:
        return self.stem_idf.get(s, self.max_idf) if self.stem_idf else 1.0


class ArticleStore:
    """Article id → text lookup (the ``article_text`` callable) over a published ``articles.parquet``,
    plus the corpus statistics of the same texts. Repealed articles have no text."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = dict(texts)
        self._stats: CorpusStats | None = None

    @classmethod
    def from_parquet(cls, path: Path | str) -> "ArticleStore":
        import pyarrow.parquet as pq

        rows = pq.read_table(path, columns=["id", "text", "status"]).to_pylist()
        return cls({r["id"]: r["text"] or "" for r in rows if r["status"] != "repealed"})

    def __call__(self, article_id: str) -> str | None:
        return self.texts.get(article_id)

    @property
    def stats(self) -> CorpusStats:
        if self._stats is None:
            self._stats = CorpusStats.from_texts(self.texts)
        return self._stats


# --- the option model -------------------------------------------------------------------------

@dataclass
class OptionModel(StandardisedLinearModel):
    """Linear option scorer: score = ((x − mean) / std) · weights, one row per option."""

    features: list[str] = field(default_factory=lambda: list(FEATURES))

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    RETRAIN: ClassVar[str] = "retrain with `.venv/bin/python bench/answers.py --train`"


def default_model_path(lang: str = "pl") -> Path:
    return MODELS_DIR / f"offline_answerer_{lang}.json"


def train_option_model(groups: Iterable[tuple[np.ndarray, int]], *, l2: float = 3e-2, iters: int = 3000,
                       lr: float = 0.5, provenance: dict | None = None) -> OptionModel:
    """Conditional logit: minimise −log softmax(score)[gold] over questions (rows = options),
    full-batch gradient descent with L2 on standardised features (numpy only)."""
    groups = [(np.asarray(x, dtype=np.float64), int(y)) for x, y in groups]
    if not groups:
        raise ValueError("no training questions")
    allx = np.vstack([x for x, _ in groups])
    mu, sd = allx.mean(0), allx.std(0) + 1e-9
    w = np.zeros(allx.shape[1])
    by_size: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for size in {len(x) for x, _ in groups}:
        xs = np.stack([(x - mu) / sd for x, _ in groups if len(x) == size])
        ys = np.array([y for x, y in groups if len(x) == size])
        by_size[size] = (xs, ys)
    n = len(groups)
    for _ in range(iters):
        g = l2 * w
        for size, (xs, ys) in by_size.items():
            s = xs @ w
            s -= s.max(1, keepdims=True)
            p = np.exp(s)
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(ys)), ys] -= 1.0
            g = g + np.einsum("nk,nkf->f", p, xs) / n
        w -= lr * g
    return OptionModel(w.tolist(), mu.tolist(), sd.tolist(), list(FEATURES), dict(provenance or {}))


# --- analysis of one question ------------------------------------------------------------------

def _grams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(tokens[i:] for i in range(n))))


def polarity_mismatches(tokens: Sequence[str], unit: Sequence[str]) -> int:
    """Words of ``tokens`` (3+ characters) present in ``unit`` whose "nie" before them differs from
    every occurrence in the unit: "ma wpływ" against "nie ma wpływu" → 1 ("ma")."""
    positions: dict[str, list[int]] = {}
    for i, t in enumerate(unit):
        positions.setdefault(t, []).append(i)
    n = 0
    for j, t in enumerate(tokens):
        if len(t) < 3 or t in NEGATIONS or t not in positions:
            continue
        negated = j > 0 and tokens[j - 1] in NEGATIONS
        if all((i > 0 and unit[i - 1] in NEGATIONS) != negated for i in positions[t]):
            n += 1
    return n


def stem_polarity_conflicts(stem: Sequence[str], unit: Sequence[str]) -> list[tuple[str, str]]:
    """Aligned stretches of the stem and the unit that one side negates and the other does not
    ("nie przerywa się" ↔ "przerywa się"): the evidence for an inverted question."""
    out = []
    sm = difflib.SequenceMatcher(None, list(stem), list(unit), autojunk=False)
    for a, b, size in sm.get_matching_blocks():
        if not size or not any(len(t) >= 3 and t not in NEGATIONS for t in stem[a:a + size]):
            continue
        s_neg = a > 0 and stem[a - 1] in NEGATIONS
        u_neg = b > 0 and unit[b - 1] in NEGATIONS
        if s_neg != u_neg:
            out.append((" ".join(stem[max(0, a - 1):a + size]), " ".join(unit[max(0, b - 1):b + size])))
    return out


def is_inverted_question(question: str) -> bool:
    """Explicit cue that the answer is the exception / the false statement."""
    return bool(_INVERTED_CUES.search(question))


def question_query(question: str, options: Mapping[str, str]) -> str:
    """The search query: question and options, as the retrieval benchmarks' "question + options"."""
    return question.strip() + " " + " ".join(f"{k}) {v}" for k, v in sorted(options.items()))


@dataclass
class QuestionAnalysis:
    """Everything the answerer derived for one question (training reads ``features``)."""

    letters: list[str]
    units: list[Unit]
    unit: Unit | None                 # the selected unit
    unit_scores: list[float]
    stem_coverage: float
    features: np.ndarray              # (options, FEATURES) on the selected unit
    inverted: bool = False
    inverted_reason: str = ""
    queries: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class _InvalidQuestion(ValueError):
    pass


class _RetrievalFailed(RuntimeError):
    pass


def _validate(q: AnswerQuestion) -> list[str]:
    if not isinstance(q, AnswerQuestion):
        raise TypeError(f"expected AnswerQuestion, got {type(q).__name__}")
    if not isinstance(q.question, str) or not q.question.strip():
        raise _InvalidQuestion("the question text is empty")
    letters = sorted(q.options, key=lambda k: k.strip().lower())
    if len(letters) < 2:
        raise _InvalidQuestion(f"a single-choice question needs at least two options, got {len(letters)}")
    seen = set()
    for k in letters:
        v = q.options[k]
        if not isinstance(v, str) or not v.strip():
            raise _InvalidQuestion(f"option {k!r} has no text")
        if k.strip().lower() in seen:
            raise _InvalidQuestion(f"option letter {k!r} occurs twice")
        seen.add(k.strip().lower())
    return letters


class OfflineAnswerer:
    """``answer(question) -> AnswerResult`` from a ``search(query, k)`` callable and an
    ``article_text(article_id)`` lookup (None for unknown articles: the hit's own text is used)."""

    def __init__(self, search: SearchFn, article_text: ArticleTextFn, *, stats: CorpusStats | None = None,
                 model: OptionModel | None = None, config: OfflineConfig | None = None, analyzer=None) -> None:
        self.search = search
        self.article_text = article_text
        self.stats = stats if stats is not None else getattr(article_text, "stats", None) or CorpusStats()
        self.model = model if model is not None else OptionModel.load(default_model_path("pl"))
        if tuple(self.model.features) != FEATURES:
            raise ValueError(f"option model features {self.model.features} differ from {list(FEATURES)}")
        self.config = config or OfflineConfig()
        self.tok = _Tokenizer(analyzer)
        self.lemmas = self.tok
        if self.config.polarity_variant:
            from pipelines.retrieval.analyzers import get_analyzer

            self.lemmas = _Tokenizer(get_analyzer("pl", self.config.polarity_variant))

    # -- retrieval → units --
    def _units(self, q: AnswerQuestion, letters: list[str]) -> tuple[list[Unit], list[str], list[str]]:
        cfg = self.config
        queries = [question_query(q.question, q.options)]
        searches = [(queries[0], cfg.depth, 0.0)]
        if cfg.option_queries:
            for k in letters:
                queries.append(f"{q.question.strip()} {q.options[k].strip()}")
                searches.append((queries[-1], cfg.option_depth, 1.0))
        ranks: dict[str, float] = {}
        fallback: dict[str, str] = {}
        for query, k, penalty in searches:
            for i, h in enumerate(self.search(query, k)[:k], 1):
                r = (h.rank or i) + penalty
                if h.article_id not in ranks or r < ranks[h.article_id]:
                    ranks[h.article_id] = r
                fallback.setdefault(h.article_id, h.text or "")
        units: list[Unit] = []
        problems: list[str] = []
        for aid, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
            text = self.article_text(aid)
            if text is None:
                problems.append(f"no text for {aid}; used the search hit's text")
                text = fallback.get(aid, "")
            units.extend(split_units(aid, text, rank))
        return units, queries, problems

    def analyse(self, q: AnswerQuestion) -> QuestionAnalysis:
        """Retrieve, select the unit, compute the option features (raises on invalid input or a
        failing search; :meth:`answer` turns those into error results)."""
        from pipelines.retrieval.query_prep import strip_boilerplate

        letters = _validate(q)
        cfg, st = self.config, self.stats
        try:
            units, queries, problems = self._units(q, letters)
        except Exception as exc:  # any backend, any lookup: reported, never raised per question
            raise _RetrievalFailed(f"{type(exc).__name__}: {exc}") from exc
        stem = self.tok(strip_boilerplate(q.question))
        opts = [self.tok(q.options[k]) for k in letters]
        opt_stems = [[prefix_stem(t) for t in o] for o in opts]
        uniq = [set(o) - set().union(*(set(p) for j, p in enumerate(opts) if j != i)) for i, o in enumerate(opts)]
        s_uniq = [set(o) - set().union(*(set(p) for j, p in enumerate(opt_stems) if j != i))
                  for i, o in enumerate(opt_stems)]
        if not units:
            problems.append("retrieval returned no article text")
            return QuestionAnalysis(letters, [], None, [], 0.0, np.zeros((len(letters), len(FEATURES))),
                                    queries=queries, problems=problems)

        def wcov(words: Iterable[str], present: set, w: Callable[[str], float]) -> float:
            words = set(words)
            tot = sum(w(t) for t in words)
            return sum(w(t) for t in words if t in present) / tot if tot else 0.0

        stem_set = set(stem)
        unit_tokens = [self.tok(u.text) for u in units]
        scores = []
        for u, ut in zip(units, unit_tokens):
            us = {prefix_stem(t) for t in ut}
            r = wcov(stem_set, set(ut), st.word)
            best_opt = max(wcov(o, us, st.stem) for o in opt_stems)
            scores.append(r + cfg.select_option_weight * best_opt + cfg.select_rank_weight / (u.rank + 1))
        best = max(range(len(units)), key=lambda i: (scores[i], -i))  # ties: the better-ranked unit
        unit, ut = units[best], unit_tokens[best]
        u_set, u_stems = set(ut), {prefix_stem(t) for t in ut}
        u_bi, u_tri = _grams(ut, 2), _grams(ut, 3)
        tail = list(stem[-cfg.stem_tail:]) if cfg.stem_tail else []
        rows = []
        for i, o in enumerate(opts):
            o_set = set(o)
            hyp = tail + list(o)
            sm = difflib.SequenceMatcher(None, hyp, list(ut), autojunk=False)
            aligned = junction = run = 0
            for a, _b, size in sm.get_matching_blocks():
                lo, hi = max(a, len(tail)), a + size
                if hi > lo:
                    aligned += hi - lo
                if a < len(tail) < a + size:
                    junction, run = 1, a + size - len(tail)
                elif a == len(tail) and size and not run:
                    run = size
            o_bi = _grams(tail[-1:] + list(o), 2)
            o_tri = _grams(tail[-2:] + list(o), 3)
            tot = sum(st.word(t) for t in o_set)
            matched = sum(st.word(t) for t in o_set if t in u_set)
            utot = sum(st.word(t) for t in uniq[i])
            umatched = sum(st.word(t) for t in uniq[i] if t in u_set)
            rows.append([
                matched / tot if tot else 0.0,
                umatched / utot if utot else 0.0,
                wcov(opt_stems[i], u_stems, st.stem),
                wcov(s_uniq[i], u_stems, st.stem),
                len(o_bi & u_bi) / (len(o_bi) or 1),
                len(o_tri & u_tri) / (len(o_tri) or 1),
                aligned / (len(o) or 1),
                float(junction),
                float(polarity_mismatches(o, ut)),
                matched / 10.0,
                (tot - matched) / 10.0,
                umatched / 10.0,
                (utot - umatched) / 10.0,
                min(run, 10) / 10.0,
                math.log1p(len(o)),
            ])
        x = np.asarray(rows, dtype=np.float64)
        inverted, reason = False, ""
        if is_inverted_question(q.question):
            inverted, reason = True, "the question asks for the exception / the false statement"
        else:
            conflicts = stem_polarity_conflicts(self.lemmas(strip_boilerplate(q.question)), self.lemmas(unit.text))
            covered = int((x[:, 0] >= cfg.invert_coverage).sum())
            if conflicts and covered >= cfg.invert_min_covered:
                inverted = True
                s, u = conflicts[0]
                reason = (f"the question negates the provision (“{s}” vs “{u}”) and {covered} options "
                          "are in the provision")
        return QuestionAnalysis(letters, units, unit, scores, wcov(stem_set, u_set, st.word), x,
                                inverted, reason, queries, problems)

    def choose(self, a: QuestionAnalysis) -> tuple[int, np.ndarray]:
        """Index of the chosen option and the model scores (inverted questions: the lowest)."""
        s = self.model.score(a.features)
        sign = -1.0 if a.inverted else 1.0
        key = [(round(sign * float(s[i]), 9), round(sign * float(a.features[i, 0]), 9), -i)
               for i in range(len(s))]
        return max(range(len(s)), key=lambda i: key[i]), s

    def answer(self, q: AnswerQuestion) -> AnswerResult:
        t0 = time.perf_counter()
        cfg = self.config
        if not isinstance(q, AnswerQuestion):
            raise TypeError(f"expected AnswerQuestion, got {type(q).__name__}")
        qid = q.question_id
        try:
            a = self.analyse(q)
        except _InvalidQuestion as exc:
            return AnswerResult(qid, None, error=f"invalid question: {exc}", answerer=cfg.answerer,
                                latency_s=time.perf_counter() - t0)
        except _RetrievalFailed as exc:
            return AnswerResult(qid, None, error=f"retrieval failed: {exc}", answerer=cfg.answerer,
                                latency_s=time.perf_counter() - t0)
        retrieved = tuple(dict.fromkeys(u.article_id for u in a.units))
        if a.unit is None:
            return AnswerResult(qid, None, explanation="Brak przepisów do porównania wariantów.",
                                answerer=cfg.answerer, problems=tuple(a.problems), queries=tuple(a.queries),
                                retrieved_article_ids=retrieved, latency_s=time.perf_counter() - t0)
        i, s = self.choose(a)
        letter = a.letters[i]
        unit = a.unit
        snippet = " ".join(unit.text.split())
        if len(snippet) > cfg.snippet_chars:
            snippet = snippet[:cfg.snippet_chars].rsplit(" ", 1)[0] + " …"
        cov = a.features[i, 0]
        cited = unit_citation(unit)
        if a.inverted:
            why = (f"Pytanie dotyczy wyjątku ({a.inverted_reason}); wariant {letter}) jest najsłabiej "
                   f"poparty przez {cited}")
        else:
            why = (f"Wariant {letter}) najlepiej odpowiada {cited} (pokrycie słów wariantu "
                   f"{cov:.0%}).")
        explanation = f"{why} {cited}: „{snippet}”"
        problems = list(a.problems)
        order = sorted(range(len(s)), key=lambda j: -s[j])
        if len(order) > 1 and abs(s[order[0]] - s[order[1]]) < 1e-9:
            problems.append("tie between options; broken by coverage, then letter order")
        return AnswerResult(
            qid, letter, explanation=explanation, cited_unit_ids=(unit.unit_id,), answerer=cfg.answerer,
            latency_s=time.perf_counter() - t0, problems=tuple(problems), queries=tuple(a.queries),
            retrieved_article_ids=retrieved,
            extra={"unit": unit.unit_id, "stem_coverage": round(a.stem_coverage, 4), "inverted": a.inverted,
                   "scores": {k: round(float(v), 4) for k, v in zip(a.letters, s)},
                   "coverage": {k: round(float(v), 4) for k, v in zip(a.letters, a.features[:, 0])}})

    def answer_all(self, questions: Sequence[AnswerQuestion]) -> list[AnswerResult]:
        return [self.answer(q) for q in questions]


# --- the naive baseline -------------------------------------------------------------------------

def naive_answer(q: AnswerQuestion, search: SearchFn, article_text: ArticleTextFn, *, k: int = 5,
                 seed: int = 0, analyzer=None, answerer: str = "naive") -> AnswerResult:
    """The bar to beat: the top-``k`` articles of the question+options search as one bag of words;
    the option with the largest share of its distinct words in the bag wins (ties: random, seeded
    per question so reruns agree); cites the top article."""
    t0 = time.perf_counter()
    try:
        letters = _validate(q)
    except _InvalidQuestion as exc:
        return AnswerResult(q.question_id, None, error=f"invalid question: {exc}", answerer=answerer)
    try:
        hits = list(search(question_query(q.question, q.options), k))[:k]
    except Exception as exc:
        return AnswerResult(q.question_id, None, error=f"retrieval failed: {type(exc).__name__}: {exc}",
                            answerer=answerer)
    tok = _naive_tokenizer(analyzer)
    bag: set[str] = set()
    for h in hits:
        bag.update(tok((article_text(h.article_id) or h.text or "")))
    cov = []
    for letter in letters:
        words = set(tok(q.options[letter]))
        cov.append(len(words & bag) / len(words) if words else 0.0)
    top = max(cov) if cov else 0.0
    tied = [letters[i] for i, c in enumerate(cov) if c == top]
    rng = random.Random(zlib.crc32(f"{seed}:{q.question_id}".encode()))
    choice = tied[0] if len(tied) == 1 else rng.choice(tied)
    return AnswerResult(q.question_id, choice if hits else None,
                        cited_unit_ids=(hits[0].article_id,) if hits else (), answerer=answerer,
                        explanation=f"coverage {dict(zip(letters, (round(c, 3) for c in cov)))}",
                        retrieved_article_ids=tuple(h.article_id for h in hits),
                        latency_s=time.perf_counter() - t0, extra={"tied": tied})


@functools.lru_cache(maxsize=4)
def _naive_tokenizer_cached(key: int, analyzer) -> _Tokenizer:
    return _Tokenizer(analyzer)


def _naive_tokenizer(analyzer) -> _Tokenizer:
    return _naive_tokenizer_cached(id(analyzer), analyzer)
