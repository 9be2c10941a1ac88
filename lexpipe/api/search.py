"""HTTP search API for downstream consumers (RAG assistants, lawyers' tools).

``GET /search`` for links and quick use, ``POST /search`` for long queries; both validate the same
way (:mod:`pipelines.retrieval.service`) and answer 4xx for bad input, never 500. Only structured
queries reach a backend: the query string is text to analyse, never query syntax.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, Field

from lexpipe.api.deps import get_search
from lexpipe.api.models import TOO_LARGE, ErrorOut
from pipelines.retrieval.interface import Hit
from pipelines.retrieval.service import MAX_K, MAX_QUERY_CHARS, InvalidRequest, SearchService

RetrieverParam = Literal["hybrid", "bm25", "dense", "gaius"]
TargetParam = Literal["statutes", "cases", "both"]

router = APIRouter(tags=["search"])

BAD_SEARCH = {400: {"model": ErrorOut, "description": "a query the service refuses: unknown act, bad status, "
                                                      "date or version, nothing to search for; POST: a body that is not JSON"}}


class SearchBody(BaseModel):
    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the question or keywords")
    retriever: RetrieverParam = "hybrid"
    k: int = Field(10, ge=1, le=MAX_K)
    offset: int = Field(0, ge=0, le=10 * MAX_K)
    act: list[str] = Field(default_factory=list, description="act ids, e.g. pl:kc")
    status: list[str] = Field(default_factory=list, description="in_force | repealed | pending")
    as_of: str | None = Field(None, description="search the newest version on or before this date")
    version: str | None = None
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


def _out(h: Hit) -> HitOut:
    return HitOut(rank=h.rank, article_id=h.article_id, chunk_id=h.chunk_id, act_id=h.act_id, version=h.version,
                  score=round(h.score, 6), heading_path=h.heading_path, snippet=h.text[:400], status=h.status,
                  sources=h.sources)


def unknown_act(act_ids: list[str]) -> str | None:
    """The refusal of the first well-formed act id that is neither a registry act nor the case law,
    naming the ids there are (malformed ids are left to the service's own message)."""
    from pipelines.retrieval.case_index import CASE_COLLECTIONS
    from pipelines.retrieval.service import ACT_ID
    from schemas.acts import registry

    known = (*registry().ids(), *CASE_COLLECTIONS)
    for a in act_ids:
        if ACT_ID.match(a) and a not in known:
            return f"unknown act {a!r}; known acts: {', '.join(known)}"
    return None


def run(service: SearchService, body: SearchBody) -> SearchOut:
    unknown = unknown_act(body.act)
    if unknown:
        raise HTTPException(status_code=400, detail=unknown)
    try:
        page = service.search(body.q, k=body.k, offset=body.offset, retriever=body.retriever, acts=body.act,
                              statuses=body.status, as_of=body.as_of, version=body.version, target=body.target)
    except InvalidRequest as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from exc
    mix = None if page.classification is None else {"label": page.classification.label,
                                                     "method": page.classification.method, **page.quotas}
    return SearchOut(query=body.q, retriever=page.retriever, k=page.k, offset=page.offset,
                     versions=page.versions, hits=[_out(h) for h in page.hits], mix=mix)


@router.get("/search", response_model=SearchOut, responses=BAD_SEARCH)
def search_get(q: str = Query(..., min_length=1, max_length=MAX_QUERY_CHARS),
               retriever: RetrieverParam = "hybrid", k: int = Query(10, ge=1, le=MAX_K),
               offset: int = Query(0, ge=0, le=10 * MAX_K), act: list[str] = Query(default_factory=list),
               status: list[str] = Query(default_factory=list), as_of: str | None = None,
               version: str | None = None, target: TargetParam = "statutes",
               service: SearchService = Depends(get_search)) -> SearchOut:
    return run(service, SearchBody(q=q, retriever=retriever, k=k, offset=offset, act=act, status=status,
                                   as_of=as_of, version=version, target=target))


@router.post("/search", response_model=SearchOut, responses={**BAD_SEARCH, **TOO_LARGE})
def search_post(body: SearchBody, service: SearchService = Depends(get_search)) -> SearchOut:
    return run(service, body)


@router.get("/health")
def health(service: SearchService = Depends(get_search)) -> dict:
    backend = service.backend
    acts = backend.acts() if hasattr(backend, "acts") else []
    return {"status": "ok", "serving": {a: backend.serving_version(a) for a in acts}}
