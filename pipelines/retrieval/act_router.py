"""One language's acts behind one search interface, when each act has a backend of its own.

Why: the embedded backend holds every act in one LanceDB database and resolves the act filter
itself, so ``SearchService`` can keep one backend per language. An Elasticsearch backend serves
exactly one act (one index family and its aliases: ``lexpipe-chunks-de-gg``, ``…-de-cases``); asked
for another act it answers "unknown act". :class:`ActRouter` gives the service the embedded
backend's shape over such backends: a search goes to the backend of each act its filter names,
per act, and ``acts()`` lists the acts of the language that have a loaded version.

Results of several acts are merged by score (``cross_act_merge.merge_acts``: of the merges of
acts searched one by one, raw score measured best; the embedded backend searches small statute
tables as one corpus instead, which measured better still) and collapsed to articles; one act's
results pass through unchanged. Routing only: no score is changed here.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable, Protocol, Sequence

from pipelines.retrieval.cross_act_merge import merge_acts
from pipelines.retrieval.interface import Hit, SearchError, SearchRequest, collapse_to_articles
from pipelines.retrieval.languages import PROFILES
from schemas.acts import registry


class ActBackend(Protocol):
    def search(self, request: SearchRequest) -> list[Hit]: ...

    def acts(self) -> list[str]: ...

    def serving_version(self, act_id: str | None = None) -> str | None: ...


def known_acts(lang: str) -> tuple[str, ...]:
    """The acts lexpipe builds for a language: where an act-per-backend router looks for loaded
    versions when a search names no act. The act registry's acts of the language (sorted ids;
    read now, so a registry set for a run or a test counts), then the language's court-decision
    collection if its profile has one (German: ``de:cases``)."""
    lp = PROFILES.get(lang)
    statutes = sorted(a.id for a in registry().of_language(lang))
    return (*statutes, *((lp.cases_act,) if lp is not None and lp.cases_act else ()))


class ActRouter:
    """Searches of ``lang`` routed to ``open_act(act_id)``, one backend per act (opened once).

    ``candidates``: the acts ``acts()`` checks for a loaded version. A search naming an act
    outside them is still routed; that act's backend then answers (or refuses) it."""

    def __init__(self, lang: str, open_act: Callable[[str], ActBackend], candidates: Sequence[str]):
        self.lang = lang
        self._open = open_act
        self.candidates = tuple(candidates)
        self._backends: dict[str, ActBackend] = {}
        self._lock = threading.Lock()

    def backend(self, act_id: str) -> ActBackend:
        if not act_id.startswith(f"{self.lang}:"):
            raise SearchError(f"act {act_id!r} is not a {self.lang!r} act")
        with self._lock:
            if act_id not in self._backends:
                self._backends[act_id] = self._open(act_id)
            return self._backends[act_id]

    def acts(self) -> list[str]:
        """Candidate acts with a loaded version (one alias lookup per candidate)."""
        return [a for a in self.candidates if self.backend(a).acts()]

    def serving_version(self, act_id: str) -> str | None:
        return self.backend(act_id).serving_version(act_id)

    def search(self, request: SearchRequest) -> list[Hit]:
        acts = request.filters.act_ids or tuple(self.acts())
        if not acts:
            raise SearchError(f"no {self.lang!r} act is indexed")
        per_act = [self.backend(a).search(replace(request, filters=replace(request.filters, act_ids=(a,))))
                   for a in acts]
        if len(per_act) == 1:
            return per_act[0]
        return collapse_to_articles(merge_acts(per_act, "score"), request.k)
