"""One language's acts behind one search interface — kept only for callers written when an
Elasticsearch backend served one act.

Why it is no longer needed: both backends now hold every act of a language (the embedded one in
one database, Elasticsearch in one index per language: ``<prefix>-statutes-<lang>`` and
``<prefix>-cases-<lang>``, see docs/elasticsearch.md), resolve the act filter themselves and
search several acts as one corpus. :class:`ActRouter` therefore opens ONE backend — the language
backend ``open_act`` returns for any act of the language — and passes every call through
unchanged; ``SearchService`` and ``nightly.across_acts_backend`` can use that backend directly.

:func:`known_acts` stays: the registry's acts of a language and its court-decision collection.
"""

from __future__ import annotations

import threading
from typing import Callable, Protocol, Sequence

from pipelines.retrieval.interface import Hit, SearchError, SearchRequest
from pipelines.retrieval.languages import PROFILES
from schemas.acts import registry


class ActBackend(Protocol):
    def search(self, request: SearchRequest) -> list[Hit]: ...

    def acts(self) -> list[str]: ...

    def serving_version(self, act_id: str | None = None) -> str | None: ...


def known_acts(lang: str) -> tuple[str, ...]:
    """The acts lexpipe builds for a language: the act registry's acts of the language (sorted ids;
    read now, so a registry set for a run or a test counts), then the language's court-decision
    collection if its profile has one (German: ``de:cases``)."""
    lp = PROFILES.get(lang)
    statutes = sorted(a.id for a in registry().of_language(lang))
    return (*statutes, *((lp.cases_act,) if lp is not None and lp.cases_act else ()))


class ActRouter:
    """The language backend of ``lang`` (opened once, through ``open_act`` of the first of
    ``candidates``: any act of the language opens it), with the backend interface."""

    def __init__(self, lang: str, open_act: Callable[[str], ActBackend], candidates: Sequence[str]):
        self.lang = lang
        self._open = open_act
        self.candidates = tuple(candidates)
        self._backend: ActBackend | None = None
        self._lock = threading.Lock()

    def backend(self, act_id: str | None = None) -> ActBackend:
        if act_id is not None and not act_id.startswith(f"{self.lang}:"):
            raise SearchError(f"act {act_id!r} is not a {self.lang!r} act")
        with self._lock:
            if self._backend is None:
                if not self.candidates:
                    raise SearchError(f"no {self.lang!r} act is known: there is no backend to open")
                self._backend = self._open(self.candidates[0])
            return self._backend

    def acts(self) -> list[str]:
        return self.backend().acts()

    def serving_version(self, act_id: str) -> str | None:
        return self.backend(act_id).serving_version(act_id)

    def search(self, request: SearchRequest) -> list[Hit]:
        for a in request.filters.act_ids:
            self.backend(a)  # another language's act: refused here, as before
        return self.backend().search(request)
