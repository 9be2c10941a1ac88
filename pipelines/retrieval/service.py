"""Validated search requests, shared by ``lexpipe search`` and the HTTP API, so both refuse the
same bad input with the same message (the API maps :class:`InvalidRequest` to 4xx)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import Callable

from pipelines.reads.dates import parse_day
from pipelines.reads.errors import BadDate
from pipelines.retrieval.interface import RETRIEVERS, EncoderMismatch, Filters, Hit, SearchError, SearchRequest
from pipelines.retrieval.languages import DEFAULT_LANGUAGE, PROFILES, case_law_languages, cases_acts

# a layperson question is long (GerLayQA dev: p99 3,291, max 4,025 characters); 100 kB is refused
MAX_QUERY_CHARS = 8000
MAX_K = 200
ACT_ID = re.compile(r"^[a-z]{2}:[a-z0-9_]{1,40}$")
STATUSES = ("in_force", "repealed", "pending")


class InvalidRequest(ValueError):
    """A request that cannot be answered, with the HTTP ``status`` every surface (the API, the search
    page) answers it with, so none of them decides it again from the message's words:

    * 422 (default): the request cannot be answered as asked (a malformed field, a bad combination);
    * 404: nothing indexed to search — an unknown act, a version or date no index holds (every
      backend's ``SearchError``, see :meth:`from_search_error`), no statute of the language indexed;
    * 503: the server's own configuration (its query encoder differs from the index's).
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status

    @classmethod
    def from_search_error(cls, exc: SearchError) -> "InvalidRequest":
        return cls(str(exc), 503 if isinstance(exc, EncoderMismatch) else 404)


@dataclass
class SearchPage:
    hits: list[Hit]
    offset: int
    k: int
    retriever: str
    versions: dict[str, str]  # act → version searched
    classification: object | None = None  # query_classifier.Classification for target=both
    quotas: dict[str, int] | None = None  # statute / case hits of the mix
    named_acts: tuple[str, ...] = ()  # acts the query named, to which an unfiltered search was narrowed
    # how sure the answer is (``lay_search``): calibrated P(the first hit answers), None where no model
    # applies (another retriever, a case search, a home without a representation store)
    confidence: float | None = None
    flags: tuple[str, ...] = ()  # garbage_query | out_of_corpus | names_outside_act
    reasons: tuple[str, ...] = ()  # one plain sentence per flag, for people
    outside_acts: tuple[dict, ...] = ()  # acts not held that the query names or implies: {"id", "name", "how"}


def parse_date(value: str | dt.date | None, name: str = "as_of") -> dt.date | None:
    """``value`` as a date, with the read layer's wording for a refusal: the API, the page and the
    service then name the same fault the same way (a malformed day vs. a day the calendar lacks)."""
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return parse_day(value, name)
    except BadDate as exc:
        raise InvalidRequest(str(exc)) from None


def build_request(query: str, *, k: int = 10, retriever: str = "hybrid", acts: list[str] | None = None,
                  statuses: list[str] | None = None, as_of: str | dt.date | None = None,
                  version: str | None = None, offset: int = 0) -> SearchRequest:
    if not isinstance(query, str) or not query.strip():
        raise InvalidRequest("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if retriever not in RETRIEVERS:
        raise InvalidRequest(f"unknown retriever {retriever!r}; use one of {', '.join(RETRIEVERS)}")
    if not 1 <= k <= MAX_K:
        raise InvalidRequest(f"k must be between 1 and {MAX_K}, got {k}")
    if not 0 <= offset <= 10 * MAX_K or offset + k > 10 * MAX_K:
        raise InvalidRequest(f"offset must be between 0 and {10 * MAX_K - k}, got {offset}")
    for a in acts or []:
        if not ACT_ID.match(a):
            raise InvalidRequest(f"act must look like 'pl:kc', got {a!r}")
    for s in statuses or []:
        if s not in STATUSES:
            raise InvalidRequest(f"status must be one of {', '.join(STATUSES)}, got {s!r}")
    if version is not None:
        parse_date(version, "version")
    return SearchRequest(query.strip(), k + offset, retriever,
                         Filters(act_ids=tuple(acts or ()), statuses=tuple(statuses or ()),
                                 version=version, as_of=parse_date(as_of)))


TARGETS = ("statutes", "cases", "both")


class SearchService:
    """Validated searches. Both backends raise ``SearchError`` (the Elasticsearch one a subclass
    of it) for requests the index cannot answer: a 4xx here.

    Why a backend per language: BM25 runs on analysed tokens, and a German act must be queried
    with the German analyser it was indexed with; the acts' prefix (``pl:``, ``de:``) picks it.
    With Elasticsearch, where one backend serves one act, a language's "backend" is an
    :class:`~pipelines.retrieval.act_router.ActRouter` over one backend per act.
    ``target`` chooses statutes (default), court decisions, or both with the RWTH 70/30 mix
    (:mod:`pipelines.retrieval.collection_mix`). Case law is per language: ``pl:cases`` (SAOS
    judgments) for Polish, ``de:cases`` (Open Legal Data) for German. The language is the named
    acts' (``--act pl:kc`` → Polish); a case search naming no act takes the query's language
    (:func:`~pipelines.retrieval.query_classifier.detect_query_language`: "wyrok SN …" → ``pl:cases``,
    "Urteil des BGH …" → ``de:cases``), and when the query does not tell, the one language whose
    collection is indexed, else the default language (Polish)."""

    def __init__(self, backend, *, backend_for: Callable[[str], object] | None = None, llm_settings=None,
                 act_backend_for: Callable[[str], object] | None = None, home=None):
        self.backend = backend  # the default language's (Polish) backend
        # the home whose representation store the last stage reads (``lay_search``); None: none
        self.home = home
        self._lay: dict[str, object] = {}
        self._backend_for = backend_for
        self._backends: dict[str, object] = {DEFAULT_LANGUAGE: backend}
        self.llm_settings = llm_settings
        # opens the backend of one act, for a language backend that serves one act only (the
        # default language's on Elasticsearch: pl:kc) when its case collection is searched
        self._act_backend_for = act_backend_for
        self._act_backends: dict[str, object] = {}

    @classmethod
    def from_settings(cls, settings) -> "SearchService":
        """Over the backends ``settings`` configure (``index_build.open_backend``: Elasticsearch
        when ``elasticsearch_url`` is set, else embedded). The embedded backend of a language holds
        all its acts; an Elasticsearch backend holds one act, so a language gets an ``ActRouter``
        opening one backend per act (asked for ``de:gg``, a ``de:cases`` backend only answers
        "unknown act")."""
        from pipelines.retrieval.index_build import open_backend

        def backend_for(lang: str):
            lp = PROFILES.get(lang)
            if lp is None:
                raise InvalidRequest(f"no search backend for language {lang!r}")
            if settings.elasticsearch_url:
                from pipelines.retrieval.act_router import ActRouter, known_acts

                return ActRouter(lang, lambda act: open_backend(settings, act_id=act), known_acts(lang))
            return open_backend(settings, lang=lang)

        def act_backend_for(act: str):
            return open_backend(settings, act_id=act)
        return cls(open_backend(settings, lang=DEFAULT_LANGUAGE), backend_for=backend_for,
                   act_backend_for=act_backend_for if settings.elasticsearch_url else None, home=settings.home)

    def backend_of(self, lang: str):
        if lang not in self._backends:
            if self._backend_for is None:
                raise InvalidRequest(f"no search backend for language {lang!r}")
            self._backends[lang] = self._backend_for(lang)
        return self._backends[lang]

    def case_law_language(self, query: str) -> str:
        """The language a case search naming no act goes to: the query's (among the languages with
        case law), else the one language whose collection is indexed, else the default."""
        from pipelines.retrieval.query_classifier import detect_query_language

        langs = case_law_languages()
        found = detect_query_language(query, langs)
        if found is not None:
            return found
        indexed = [lang for lang in langs if self._has_case_law(lang)]
        if len(indexed) == 1:
            return indexed[0]
        return DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in langs else langs[0]

    def case_backend_of(self, lang: str, backend):
        """The backend that holds the language's case collection: ``backend`` itself when it holds
        several acts (embedded, an ``ActRouter``) or is that collection's, else the collection's own
        (Elasticsearch: the default language's backend serves pl:kc only)."""
        act = PROFILES[lang].cases_act
        own = getattr(backend, "act_id", None)
        if own is None or own == act or self._act_backend_for is None:
            return backend
        if act not in self._act_backends:
            self._act_backends[act] = self._act_backend_for(act)
        return self._act_backends[act]

    def _has_case_law(self, lang: str) -> bool:
        try:
            backend = self.case_backend_of(lang, self.backend_of(lang))
            return hasattr(backend, "acts") and PROFILES[lang].cases_act in backend.acts()
        except Exception:  # a language whose backend cannot be opened has nothing indexed to offer
            return False

    def search(self, query: str, *, offset: int = 0, target: str = "statutes", detect_acts: bool = True,
               **kw) -> SearchPage:
        """``detect_acts``: a statute search without an act filter whose query names indexed acts
        of its language ("Zgodnie z Kodeksem pracy, …", "art. 5 k.p.c.": ``act_mentions``) searches
        those acts only; ``SearchPage.named_acts`` says so. A lead-in naming only searched acts
        ("Zgodnie z Kodeksem pracy, …") is then left out of the query: it tells nothing more once
        the search is in that act. Off, every act of the language is searched, the query as
        given."""
        if target not in TARGETS:
            raise InvalidRequest(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
        request = build_request(query, offset=offset, **kw)
        from pipelines.retrieval.query_garbage import garbage_reason

        garbage = garbage_reason(request.query)
        if garbage is not None:  # nothing to search for: no hits, and why (never ten "confident" hits)
            return SearchPage([], offset, request.k - offset, request.retriever, {}, flags=("garbage_query",),
                              reasons=(garbage,))
        langs = {a.split(":", 1)[0] for a in request.filters.act_ids}
        if len(langs) > 1:
            raise InvalidRequest(f"acts of one language per search, got {', '.join(sorted(request.filters.act_ids))}")
        named_cases = [a for a in request.filters.act_ids if a in cases_acts()]
        if target != "statutes" and named_cases:
            raise InvalidRequest(f"name statute acts with --act; {named_cases[0]} is chosen by target={target}")
        if langs:
            lang = langs.pop()
        elif target == "statutes":
            lang = DEFAULT_LANGUAGE
        else:
            lang = self.case_law_language(request.query)
        lp = PROFILES.get(lang)
        if target != "statutes" and (lp is None or lp.cases_act is None):
            raise InvalidRequest(no_case_law(lang))
        backend = self.backend_of(lang)
        named: tuple[str, ...] = ()
        if lp is not None and lp.scope_unnamed_search and not request.filters.act_ids and target != "cases":
            # the language's statutes, named: never let a German query touch Polish tables
            acts = tuple(a for a in backend.acts() if a.startswith(f"{lang}:") and a != lp.cases_act) \
                if hasattr(backend, "acts") else ()
            if not acts:  # an empty act filter would mean "every act indexed"
                raise InvalidRequest(f"no {lang}: statute is indexed; search target=cases, or index one first", 404)
            detect = detect_acts and lp.detect_named_acts and target == "statutes"
            named = _named_in_scope(request.query, acts) if detect else ()
            request = replace(request, filters=replace(request.filters, act_ids=named or acts))
        if lp is not None and lp.detect_named_acts and lp.strip_exam_lead_ins and detect_acts and target == "statutes":
            request = _without_named_lead_in(request)
        classification, quotas = None, None
        assessment = None
        try:
            lay = self.lay_stage(lang) if target == "statutes" and request.retriever == "hybrid" else None
            if lay is not None:
                hits, assessment = lay.search(backend, request, named_held=bool(named))
            elif target == "statutes":
                hits = backend.search(request)
            else:
                from pipelines.retrieval.collection_mix import Collections, mixed_search

                collections = Collections(backend, self.case_backend_of(lang, backend), request.filters,
                                          replace(request.filters, act_ids=(lp.cases_act,), statuses=()))
                mixed = mixed_search(collections, request, target=target, llm_settings=self.llm_settings,
                                     lang=lang)
                hits, classification = mixed.hits, mixed.classification
                quotas = {"statutes": mixed.statute_quota, "cases": mixed.case_quota}
        except SearchError as exc:
            raise InvalidRequest.from_search_error(exc) from exc
        page = hits[offset:offset + request.k - offset]
        versions = {h.act_id: h.version for h in hits}
        extra = {} if assessment is None else {
            "confidence": assessment.confidence, "flags": assessment.flags, "reasons": assessment.reasons,
            "outside_acts": assessment.outside_acts}
        return SearchPage(page, offset, request.k - offset, request.retriever, versions,
                          classification=classification, quotas=quotas, named_acts=named, **extra)

    def lay_stage(self, lang: str):
        """The language's last stage (``lay_search``) over this home's representation store, opened
        once; None without a home, a store or (Polish) the encoder the store was embedded with."""
        if self.home is None:
            return None
        if lang not in self._lay:
            from pipelines.retrieval import lay_search

            encoder = getattr(self.backend_of(lang), "encoder", None)
            opener = {"pl": lay_search.open_polish, "de": lay_search.open_german}.get(lang)
            self._lay[lang] = opener(self.home, getattr(encoder, "id", None)) if opener else None
        return self._lay[lang]


def no_case_law(lang: str) -> str:
    """The refusal of target=cases/both for a language without court decisions, naming those with."""
    have = [PROFILES[c] for c in case_law_languages()]
    names = " and ".join(p.name for p in have)
    prefixes = " or ".join(f"{p.code}:" for p in have)
    return (f"court decisions exist for {names} law only (target=cases/both needs {prefixes} acts, "
            f"or a query in one of these languages; got {lang}:)")


def _named_in_scope(query: str, scope: tuple[str, ...]) -> tuple[str, ...]:
    """The acts of ``scope`` (indexed, of the search's language) that ``query`` names."""
    from pipelines.retrieval.act_mentions import acts_of, named_acts

    return named_acts(query, acts_of(scope))


def _without_named_lead_in(request: SearchRequest) -> SearchRequest:
    """The request without a leading "Zgodnie z Kodeksem …, " (``query_prep.strip_boilerplate``)
    when every act the lead-in names is searched. Why: on the dev exam questions (2012–2020, 913,
    hybrid, the named act searched) R@1 0.874 → 0.878, MRR 0.910 → 0.913 (k.p.c. 0.840 → 0.858,
    k.c. 0.917 → 0.913): the act's name is noise inside that act, and gAIus already strips it."""
    from pipelines.retrieval.act_mentions import named_acts
    from pipelines.retrieval.query_prep import strip_boilerplate

    query = request.query.strip()
    stripped = strip_boilerplate(query)
    if stripped == query:
        return request
    named = named_acts(query[: len(query) - len(stripped)])
    if not named or set(named) - set(request.filters.act_ids):
        return request
    return replace(request, query=stripped)
