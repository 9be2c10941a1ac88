"""Merging the ranked hits of several acts searched separately into one ranking.

Why a module: a search that names no act searches every act of its jurisdiction. The embedded
backend searches small statute tables as one corpus (``EmbeddedBackend._union_of``), so their
scores share one scale; where acts are searched one by one (the Elasticsearch backend, one index
per act behind ``act_router.ActRouter``; a union too large for memory) their scores do not: a
reranker's score, a BM25 score, a z-score are relative to the act's own candidates, so sorting
the concatenation by raw score lets the act whose scores happen to run high win.

Methods: ``score`` (raw score), ``zscore`` (each act's scores standardised over its own top hits
first), ``rrf`` (reciprocal rank across acts). Measured (bench/retrieval.py, dev = exam questions
of 2012–2020 with in-corpus gold in k.c./k.p.c./k.p./k.k., 913; hybrid with the trained reranker,
question alone, no act filter and no act detection; R@1 / R@10): one corpus ("union") 0.865 /
0.968, ``score`` 0.860 / 0.953, ``zscore`` 0.688 / 0.932, ``rrf`` 0.461 / 0.931. Standardising
each act separately throws away what the reranker's scores do share across acts (a question's
gold paragraph scores far above any paragraph of another act), and RRF puts every act's first
hit at the top. So: one corpus where the backend can, else ``score``.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Sequence

from pipelines.retrieval.interface import Hit

METHODS: tuple[str, ...] = ("union", "score", "zscore", "rrf")
RRF_K = 60
ZSCORE_TOP = 50  # hits of an act whose mean / spread standardise its scores


def merge_acts(per_act: Sequence[Sequence[Hit]], method: str = "score") -> list[Hit]:
    """One ranking of several acts' hits (chunks or articles), best first; ``rank`` renumbered.
    ``union`` is not a merge (the backend searched the acts as one corpus): here it means
    ``score``, the best-measured merge for acts that could not be searched as one."""
    if method not in METHODS:
        raise ValueError(f"unknown cross-act merge {method!r}; use one of {METHODS}")
    if method in ("score", "union"):
        keyed = [(h.score, h) for hits in per_act for h in hits]
    elif method == "rrf":
        keyed = [(1.0 / (RRF_K + h.rank), h) for hits in per_act for h in hits]
    else:
        keyed = []
        for hits in per_act:
            top = [h.score for h in hits[:ZSCORE_TOP]]
            if not top:
                continue
            mean = statistics.fmean(top)
            sd = statistics.pstdev(top) or 1.0
            keyed += [((h.score - mean) / sd, h) for h in hits]
    keyed.sort(key=lambda p: (-p[0], p[1].rank, p[1].chunk_id))
    return [replace(h, score=float(s), rank=i) for i, (s, h) in enumerate(keyed, 1)]
