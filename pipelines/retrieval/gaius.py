"""gAIus fuzzy character-match retriever (Matak & Chudziak, "gAIus: Combining GenAI with Legal
Clauses Retrieval for Knowledge-based Assistant", Algorithms 1 and 2).

The paper's score of a document for a query (Algorithm 1 + 2)::

    max_score <- 0
    for i <- 0 to |document| - |query|:            # inclusive: every full-length window
        part <- document[i : i + |query|]
        part_score <- #{ j : part[j] = query[j] }    # Algorithm 2, exact character equality
        max_score <- max(max_score, part_score)

and retrieval is the top-k documents by that score (the paper uses k = 50 article chunks).

What the paper fixes, and we follow exactly:

* characters are compared with plain equality — no case folding, no accent stripping, no
  whitespace collapsing (Python ``str`` semantics: one character = one Unicode code point);
* windows are exactly ``|query|`` characters long and lie entirely inside the document; the loop
  bound ``|document| - |query|`` is inclusive (the same "to" in Algorithm 2 must be inclusive to
  visit every position), so a document as long as the query has one window;
* a document *shorter* than the query has no window, the loop never runs, and its score stays at
  the initial ``max_score = 0``;
* the score is 0 when nothing matches (``max_score`` starts at 0, never negative).

Where the paper is silent (documented choices):

* empty query: every window is empty and scores 0, so every document scores 0 (what the
  algorithm gives); :meth:`GaiusIndex.search` then returns nothing (see ``min_score``);
* ties: broken by document order (lower index first), which makes rankings deterministic;
* ``min_score`` (default 1): :meth:`GaiusIndex.search` never returns documents scoring below it,
  i.e. documents where no window agrees with the query in a single position (e.g. documents
  shorter than the query). ``min_score=0`` gives the literal "top-k by score";
* :class:`GaiusRetriever` NFC-normalises chunk texts and queries (so a decomposed "ą" typed on
  some keyboards still equals the corpus's precomposed one) and scores the chunk ``text`` only
  (no heading path), as the paper scores article texts. :class:`GaiusIndex` and
  :func:`gaius_scores` apply no normalisation by default.

Implementation (exactly equal to the definition, see tests/pipelines/retrieval/test_gaius.py):
all documents are concatenated, longest first, into one array of small character codes (rank in
the corpus alphabet; query characters outside the alphabet never match). For a query of length m
only the prefix holding documents with >= m characters is scanned. For each query position ``j``
the precomputed 0/1 indicator "corpus char == query[j]", shifted by ``j``, is added into one
uint8 accumulator ``acc[i] = #{j : corpus[i + j] = query[j]}`` over all window starts at once
(one vectorised uint8 add per query position; blocks of 255 positions are flushed into an int32
total, so nothing overflows). Windows that cross a document end are excluded by reducing with
``np.maximum.reduceat`` over each document's valid window range only. Cost: ``|query|`` passes
over the scanned prefix, ~5–10 ms per exam question on the 443k-character Civil Code on an idle
core (the literal Python definition takes seconds; ``bench/gaius.py`` measures both).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from typing import Callable, Iterable, Sequence

import numpy as np

from pipelines.retrieval.interface import Filters, Hit, SearchRequest

__all__ = ["gaius_scores", "GaiusIndex", "GaiusRetriever"]

_U8_BLOCK = 255  # query positions summed in uint8 before flushing (max 255 matches)
_INDICATOR_CACHE_BYTES = 64 * 1024 * 1024  # per query, for repeated characters the index does not cache


def _code_points(s: str) -> np.ndarray:
    """Unicode code points of ``s`` (one per Python character, lone surrogates included)."""
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype="<u4")


class GaiusIndex:
    """Precomputed corpus for gAIus scoring.

    Documents are concatenated longest first (so the documents long enough for a query of length
    m are always a prefix of the array, and passes for long queries skip the short documents) as
    alphabet-rank codes; the 0/1 indicator array of each character is kept when the whole set fits
    in ``indicator_cache_bytes`` (the Civil Code: 83 characters × 443k = 37 MB), otherwise
    indicators are cached lazily up to that budget and computed per query beyond it.

    ``normalize`` ("NFC", "NFKC", ... or None) and ``lowercase`` are applied to documents and
    queries alike before scoring; both default to off (the paper's raw characters).
    """

    def __init__(self, texts: Iterable[str], *, normalize: str | None = None, lowercase: bool = False,
                 indicator_cache_bytes: int = 128 * 1024 * 1024) -> None:
        self.normalize = normalize
        self.lowercase = lowercase
        prepared = [self._prep(t) for t in texts]
        self.n_docs = len(prepared)
        self.lengths = np.fromiter((len(t) for t in prepared), dtype=np.int64, count=self.n_docs)
        # longest first; stable, so equal lengths keep document order
        self.order = np.argsort(-self.lengths, kind="stable")
        self.sorted_lengths = self.lengths[self.order]
        self.sorted_offsets = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(self.sorted_lengths, out=self.sorted_offsets[1:])
        self.n_chars = int(self.sorted_offsets[-1])
        cps = _code_points("".join(prepared[i] for i in self.order))
        # alphabet: sorted distinct code points; codes are ranks (uint8 when the alphabet fits)
        self.alphabet, ranks = np.unique(cps, return_inverse=True)
        dtype = np.uint8 if len(self.alphabet) <= 256 else np.uint16 if len(self.alphabet) <= 65536 else np.uint32
        self.codes = ranks.astype(dtype).reshape(-1)
        self.indicator_cache_bytes = indicator_cache_bytes
        self._indicators: dict[int, np.ndarray] = {}
        if len(self.alphabet) * self.n_chars <= indicator_cache_bytes:
            for r in range(len(self.alphabet)):
                self._indicators[r] = np.equal(self.codes, r).view(np.uint8)

    def _prep(self, s: str) -> str:
        if not isinstance(s, str):
            raise TypeError(f"gAIus documents and queries must be str, got {type(s).__name__}")
        if self.normalize:
            s = unicodedata.normalize(self.normalize, s)
        if self.lowercase:
            s = s.lower()
        return s

    def __len__(self) -> int:
        return self.n_docs

    def _indicator(self, r: int, prefix: int, repeated: bool, local: dict[int, np.ndarray],
                   scratch: np.ndarray) -> np.ndarray:
        """0/1 uint8 array "code == r" over at least the first ``prefix`` characters."""
        ind = self._indicators.get(r)
        if ind is not None:
            return ind
        if len(self._indicators) * self.n_chars + self.n_chars <= self.indicator_cache_bytes:
            ind = self._indicators[r] = np.equal(self.codes, r).view(np.uint8)
            return ind
        ind = local.get(r)
        if ind is not None:
            return ind
        if repeated and (len(local) + 1) * prefix <= _INDICATOR_CACHE_BYTES:
            ind = local[r] = np.equal(self.codes[:prefix], r).view(np.uint8)
            return ind
        return np.equal(self.codes[:prefix], r, out=scratch[:prefix]).view(np.uint8)

    def scores(self, query: str) -> np.ndarray:
        """gAIus score of every document (int64 array, document order)."""
        q = _code_points(self._prep(query))
        m = len(q)
        out = np.zeros(self.n_docs, dtype=np.int64)
        # documents with at least m characters: a prefix of the length-sorted concatenation
        n_long = int(np.searchsorted(-self.sorted_lengths, -m, side="right"))
        if m == 0 or n_long == 0:
            return out  # empty query: all windows empty; query longer than every document: no window
        prefix = int(self.sorted_offsets[n_long])
        windows = prefix - m + 1  # window starts 0..windows-1 within the prefix

        # query characters as alphabet ranks; characters absent from the corpus never match
        ranks = np.searchsorted(self.alphabet, q)
        present = ranks < len(self.alphabet)
        present[present] = self.alphabet[ranks[present]] == q[present]
        positions = np.flatnonzero(present)
        repeated = np.bincount(ranks[positions], minlength=len(self.alphabet)) > 1

        counts = np.zeros(windows + 1, dtype=np.uint8)  # +1: reduceat needs an index == windows
        acc = counts[:windows]
        wide: np.ndarray | None = None  # int32 total once more than 255 positions can match
        local: dict[int, np.ndarray] = {}
        scratch = np.empty(prefix, dtype=np.bool_)
        for n, j in enumerate(positions.tolist()):
            if n and n % _U8_BLOCK == 0:  # flush before uint8 can overflow
                wide = acc.astype(np.int32) if wide is None else wide + acc
                acc[:] = 0
            r = int(ranks[j])
            ind = self._indicator(r, prefix, bool(repeated[r]), local, scratch)
            np.add(acc, ind[j:j + windows], out=acc)
        if wide is not None:
            wide += acc
            counts = np.zeros(windows + 1, dtype=np.int32)
            counts[:windows] = wide

        # document d's valid window starts: [off_d, off_d + len_d - m]; reduce over each such range
        # by interleaving (start, end) pairs — odd segments span the gaps and are discarded
        starts = self.sorted_offsets[:n_long]
        bounds = np.empty(2 * n_long, dtype=np.int64)
        bounds[0::2] = starts
        bounds[1::2] = starts + self.sorted_lengths[:n_long] - m + 1
        out[self.order[:n_long]] = np.maximum.reduceat(counts, bounds)[0::2]
        return out

    def search(self, query: str, k: int, *, mask: np.ndarray | None = None,
               min_score: int = 1) -> list[tuple[int, int]]:
        """Top-k ``(doc_index, score)`` by score, ties by document order; documents where ``mask``
        is False and documents scoring below ``min_score`` are never returned."""
        if k <= 0 or self.n_docs == 0:
            return []
        return top_k(self.scores(query), k, mask=mask, min_score=min_score)


def top_k(scores: np.ndarray, k: int, *, mask: np.ndarray | None = None,
          min_score: int = 1) -> list[tuple[int, int]]:
    """Indices of the k highest scores (ties: lower index first), as ``(index, score)`` pairs."""
    scores = np.asarray(scores, dtype=np.int64)
    eligible = scores >= min_score
    if mask is not None:
        eligible &= np.asarray(mask, dtype=bool)
    cand = np.flatnonzero(eligible)
    if k <= 0 or len(cand) == 0:
        return []
    cs = scores[cand]
    if len(cand) > k:  # keep everything >= the k-th largest score (ties kept), then order exactly
        kth = np.partition(cs, len(cs) - k)[len(cs) - k]
        keep = cs >= kth
        cand, cs = cand[keep], cs[keep]
    order = np.argsort(-cs, kind="stable")[:k]  # stable: ascending index among equal scores
    return [(int(cand[i]), int(cs[i])) for i in order]


def gaius_scores(query: str, docs: Sequence[str]) -> np.ndarray:
    """gAIus score (Algorithm 1) of each document for ``query``: int64 array in document order.

    Raw characters, no normalisation; for repeated queries build a :class:`GaiusIndex` once.
    """
    return GaiusIndex(docs).scores(query)


def _as_str(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


class GaiusRetriever:
    """:class:`~pipelines.retrieval.interface.Retriever` over a chunks table, ranked by gAIus.

    ``table``: pyarrow table with chunk_id, article_id, act_id, version, heading_path, text,
    status (extra columns ignored). Hits are chunks; :func:`collapse_to_articles` turns them into
    articles. ``query_prep`` (e.g. ``query_prep.strip_boilerplate``, or
    ``functools.partial(query_prep.prepare_query, reformulator=r)``) is applied to
    ``request.query`` first; by default the query is used as given. ``request.retriever`` is not
    looked at (routing by name is the caller's business); ``request.k`` chunks at most.
    """

    name = "gaius"

    def __init__(self, table, *, normalize: str | None = "NFC", lowercase: bool = False,
                 query_prep: Callable[[str], str] | None = None, min_score: int = 1) -> None:
        wanted = ("chunk_id", "article_id", "act_id", "version", "heading_path", "text", "status")
        if hasattr(table, "select"):  # pyarrow.Table
            table = table.select([c for c in wanted if c in table.column_names])
            cols = table.to_pydict()
        else:  # a mapping of column name -> values
            cols = dict(table)
        n = len(cols["chunk_id"])
        col = lambda name: [_as_str(v) for v in cols.get(name, [None] * n)]  # noqa: E731
        self.chunk_ids = col("chunk_id")
        self.article_ids = col("article_id")
        self.act_ids = col("act_id")
        self.versions = col("version")
        self.heading_paths = col("heading_path")
        self.texts = col("text")
        self.statuses = col("status")
        self.query_prep = query_prep
        self.min_score = min_score
        self.index = GaiusIndex(self.texts, normalize=normalize, lowercase=lowercase)
        self._act = np.array(self.act_ids, dtype=object)
        self._jur = np.array([a.split(":", 1)[0] for a in self.act_ids], dtype=object)
        self._status = np.array(self.statuses, dtype=object)
        self._version = np.array(self.versions, dtype=object)
        self._masks: dict[Filters, np.ndarray | None] = {}

    def __len__(self) -> int:
        return self.index.n_docs

    def mask(self, filters: Filters) -> np.ndarray | None:
        """Boolean mask of the chunks passing ``filters`` (None when no filter is set).

        act_ids / statuses: membership; jurisdictions: the act id's prefix ("pl" of "pl:kc");
        version: exact ISO date; as_of: per act, the newest version on or before that date."""
        try:
            cached = self._masks.get(filters)
        except TypeError:  # unhashable (lists instead of tuples): compute without caching
            return self._compute_mask(filters)
        if cached is None and filters not in self._masks:
            if len(self._masks) >= 256:
                self._masks.clear()
            cached = self._masks[filters] = self._compute_mask(filters)
        return cached

    def _compute_mask(self, filters: Filters) -> np.ndarray | None:
        n = self.index.n_docs
        conditions = []
        if filters.act_ids:
            conditions.append(np.isin(self._act, list(filters.act_ids)))
        if filters.jurisdictions:
            conditions.append(np.isin(self._jur, list(filters.jurisdictions)))
        if filters.statuses:
            conditions.append(np.isin(self._status, list(filters.statuses)))
        if filters.version is not None:
            conditions.append(self._version == _as_str(filters.version))
        if filters.as_of is not None:
            as_of = filters.as_of.isoformat()
            ok = np.zeros(n, dtype=bool)
            for act in set(self.act_ids):
                in_act = self._act == act
                versions = [v for v in set(self._version[in_act]) if v <= as_of]
                if versions:
                    ok |= in_act & (self._version == max(versions))
            conditions.append(ok)
        if not conditions:
            return None
        return np.logical_and.reduce(conditions) if len(conditions) > 1 else conditions[0]

    def search(self, request: SearchRequest) -> list[Hit]:
        query = request.query
        if self.query_prep is not None:
            query = self.query_prep(query)
        ranked = self.index.search(query, request.k, mask=self.mask(request.filters), min_score=self.min_score)
        return [Hit(chunk_id=self.chunk_ids[i], article_id=self.article_ids[i], act_id=self.act_ids[i],
                    version=self.versions[i], score=float(s), rank=r, heading_path=self.heading_paths[i],
                    text=self.texts[i], status=self.statuses[i])
                for r, (i, s) in enumerate(ranked, 1)]
