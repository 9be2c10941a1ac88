"""HTTP search API for downstream consumers (RAG assistants, lawyers' tools).

``GET /search`` for links and quick use, ``POST /search`` for long queries; both validate the same
way (:mod:`pipelines.retrieval.service`) and answer 4xx for bad input, never 500. Only structured
queries reach a backend: the query string is text to analyse, never query syntax.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from lexpipe.api.deps import get_search
from lexpipe.api.errors import ApiError
from lexpipe.api.models import NOT_FOUND, TOO_LARGE, UNPROCESSABLE
from lexpipe.api.params import ActItem, AsOfField, Body, day, text
from pipelines.retrieval.interface import Hit, SearchError
from pipelines.retrieval.service import MAX_K, MAX_QUERY_CHARS, InvalidRequest, SearchService

RetrieverParam = Literal["hybrid", "bm25", "dense", "gaius"]
TargetParam = Literal["statutes", "cases", "both"]
StatusParam = Literal["in_force", "repealed", "pending"]
MAX_OFFSET = 10 * MAX_K - MAX_K  # offset + k stays within the service's depth of 10 * MAX_K for every k
Query_ = Annotated[str, *text("q", max_length=MAX_QUERY_CHARS)]
Version = Annotated[str | None, *day("version")]

router = APIRouter(tags=["search"])

BAD_SEARCH = {404: {**NOT_FOUND[404], "description": "an unknown act, or nothing indexed to search: no version of "
                                                     "the act on or before as_of, no such version, no court "
                                                     "decisions of the language (target=cases/both)"},
              422: {**UNPROCESSABLE[422], "description": "malformed input: a date that is no real YYYY-MM-DD day, an "
                                                         "act id off its pattern, nothing to search for, acts of "
                                                         "two languages; POST: a body that is not JSON"},
              503: {**NOT_FOUND[404], "description": "the index was built with another encoder than the server "
                                                     "queries with (LEXPIPE_ENCODER): a configuration fault"}}


class SearchBody(Body):
    q: Query_ = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the question or keywords")
    retriever: RetrieverParam = "hybrid"
    k: int = Field(10, ge=1, le=MAX_K)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)
    act: list[ActItem] = Field(default_factory=list, description="act ids, e.g. pl:kc")
    status: list[StatusParam] = Field(default_factory=list, description="in_force | repealed | pending")
    as_of: AsOfField = Field(None, description="search the newest version on or before this date (YYYY-MM-DD)")
    version: Version = Field(None, description="search exactly this indexed version (YYYY-MM-DD)")
    target: TargetParam = Field("statutes", description="statutes, court decisions of the query's language "
                                                        "(Polish pl:cases, SAOS judgments; German de:cases; an act "
                                                        "named in `act` picks the language), or both (70/30 mix of "
                                                        "that language's statutes and decisions after classifying "
                                                        "the query as law or case)")


class HitOut(BaseModel):
    rank: int
    article_id: str
    chunk_id: str
    act_id: str
    version: str
    score: float
    heading_path: str
    snippet: str
    status: str
    sources: dict[str, int]


class SearchOut(BaseModel):
    query: str
    retriever: str
    k: int
    offset: int
    versions: dict[str, str]
    hits: list[HitOut]
    mix: dict | None = None  # target=both: {"label", "method", "statutes", "cases"}
    confidence: float | None = Field(None, description="calibrated probability that the first hit is the provision "
                                                       "that answers the query; null where no model applies")
    flags: list[str] = Field(default_factory=list, description="garbage_query (nothing to search for: no hits), "
                                                               "out_of_corpus (the held acts probably do not answer "
                                                               "it), names_outside_act")
    reasons: list[str] = Field(default_factory=list, description="one plain sentence per flag")
    outside_acts: list[dict] = Field(default_factory=list, description="acts lexpipe does not hold that the query "
                                                                       "names or implies: {id, name, how}")


def _out(h: Hit) -> HitOut:
    return HitOut(rank=h.rank, article_id=h.article_id, chunk_id=h.chunk_id, act_id=h.act_id, version=h.version,
                  score=round(h.score, 6), heading_path=h.heading_path, snippet=h.text[:400], status=h.status,
                  sources=h.sources)


def unknown_act(act_ids: list[str]) -> str | None:
    """The refusal of the first well-formed act id that is neither a registry act nor the case law,
    naming the ids there are (malformed ids are left to the service's own message)."""
    from pipelines.retrieval.case_index import CASE_COLLECTIONS
    from pipelines.subscriptions.feed import ACT_ID  # the API's act pattern (docs/api.md#errors)
    from schemas.acts import registry

    known = (*registry().ids(), *CASE_COLLECTIONS)
    for a in act_ids:
        if ACT_ID.match(a) and a not in known:
            return f"unknown act {a!r}; known acts: {', '.join(known)}"
    return None


# the service's refusals name the parameter first ("k must be …"): which field each one is about
_FIELDS = (("query", "q"), ("k ", "k"), ("offset", "offset"), ("act", "act"), ("acts of one language", "act"),
           ("name statute acts", "act"), ("status", "status"), ("as_of", "as_of"), ("version", "version"),
           ("target", "target"), ("court decisions", "target"), ("unknown retriever", "retriever"))


def _no_case_law(service: SearchService, body: SearchBody) -> str | None:
    """target=cases/both where the language's court decisions are not indexed: say so (the backend
    would call it an "unknown act 'pl:cases'", as if the caller had named one)."""
    from pipelines.retrieval.languages import PROFILES

    if body.target == "statutes":
        return None
    langs = {a.split(":", 1)[0] for a in body.act}
    lang = next(iter(langs)) if len(langs) == 1 else service.case_law_language(body.q) if not langs else None
    profile = PROFILES.get(lang) if lang else None
    if profile is None or profile.cases_act is None:
        return None  # the service's own refusal (no court decisions for that language at all)
    try:
        backend = service.case_backend_of(lang, service.backend_of(lang))
        held = profile.cases_act in (backend.acts() if hasattr(backend, "acts") else [profile.cases_act])
    except (InvalidRequest, SearchError):
        held = False
    if held:
        return None
    return (f"no court decisions are indexed for {lang} ({profile.cases_act}) here: target={body.target} needs them "
            f"(`lexpipe run --acts {profile.cases_act}` builds them); target=statutes searches the statutes")


def _refusal(exc: InvalidRequest, body: SearchBody) -> ApiError:
    """The service's refusal with the status it carries (``InvalidRequest.status``: 404 nothing
    indexed to search, 422 a request that cannot be answered as asked, 503 the server's encoder),
    naming the field it is about."""
    message = str(exc)
    if exc.status == 503:
        return ApiError(503, message, "retriever")
    if exc.status == 404:
        field = "version" if body.version else "as_of" if body.as_of else "act"
        return ApiError(404, message, field)
    field = next((f for start, f in _FIELDS if message.startswith(start)), None)
    return ApiError(exc.status, message, field)


def run(service: SearchService, body: SearchBody) -> SearchOut:
    unknown = unknown_act(body.act)
    if unknown:
        raise ApiError(404, unknown, "act")
    missing = _no_case_law(service, body)
    if missing:
        raise ApiError(404, missing, "target")
    try:
        page = service.search(body.q, k=body.k, offset=body.offset, retriever=body.retriever, acts=body.act,
                              statuses=body.status, as_of=body.as_of, version=body.version, target=body.target)
    except InvalidRequest as exc:
        raise _refusal(exc, body) from exc
    mix = None if page.classification is None else {"label": page.classification.label,
                                                     "method": page.classification.method, **page.quotas}
    return SearchOut(query=body.q, retriever=page.retriever, k=page.k, offset=page.offset,
                     versions=page.versions, hits=[_out(h) for h in page.hits], mix=mix,
                     confidence=None if page.confidence is None else round(page.confidence, 4),
                     flags=list(page.flags), reasons=list(page.reasons), outside_acts=list(page.outside_acts))


@router.get("/search", response_model=SearchOut, responses=BAD_SEARCH)
def search_get(q: Annotated[Query_, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
               retriever: RetrieverParam = "hybrid", k: int = Query(10, ge=1, le=MAX_K),
               offset: int = Query(0, ge=0, le=MAX_OFFSET), act: list[ActItem] = Query(default_factory=list),
               status: list[StatusParam] = Query(default_factory=list), as_of: AsOfField = None,
               version: Version = None, target: TargetParam = "statutes",
               service: SearchService = Depends(get_search)) -> SearchOut:
    given = dict(q=q, retriever=retriever, k=k, offset=offset, act=act, status=status, as_of=as_of,
                 version=version, target=target)
    return run(service, SearchBody(**{name: v for name, v in given.items() if v is not None}))


@router.post("/search", response_model=SearchOut, responses={**BAD_SEARCH, **TOO_LARGE})
def search_post(body: SearchBody, service: SearchService = Depends(get_search)) -> SearchOut:
    return run(service, body)


@router.get("/health")
def health(service: SearchService = Depends(get_search)) -> dict:
    backend = service.backend
    acts = backend.acts() if hasattr(backend, "acts") else []
    return {"status": "ok", "serving": {a: backend.serving_version(a) for a in acts}}
