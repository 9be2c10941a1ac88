"""The change feed over HTTP (:mod:`pipelines.subscriptions.feed`): ``GET /changes`` (JSON, paged by
an opaque cursor), ``GET /changes.atom`` (Atom 1.0) and ``GET /changes/{act}/{version}`` (one
publication). Open to every client (reads); a bad ``since``/``act``/``limit`` or an altered cursor is
400, an unpublished version 404."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, Field

from lexpipe.api.deps import get_layout
from lexpipe.api.models import ErrorOut
from pipelines.subscriptions import feed

router = APIRouter(tags=["changes"])

BAD_REQUEST = {400: {"model": ErrorOut, "description": "a malformed since, act or limit, or an altered cursor"}}
SINCE = Query(None, max_length=400, description="an ISO 8601 timestamp (publications at or after it) or a cursor "
                                                "the feed returned (entries strictly after it)")
ACT = Query(None, max_length=64, description="only this act, e.g. pl:kc")
LIMIT = Query(50, ge=1, le=feed.MAX_LIMIT, description="entries per page")


class ChangedUnitOut(BaseModel):
    unit_id: str = Field(description="the article")
    number: str | None
    change: str = Field(description="added | changed | repealed | removed | editorial")
    word_diff: str | None = Field(description="[-removed-]{+added+} words")


class ChangeEntryOut(BaseModel):
    id: str = Field(description="stable per publication (a re-publication is a new entry)")
    act_id: str
    version: str
    from_version: str | None = Field(description="the version compared against (null: the first version)")
    first_version: bool
    published_at: str = Field(description="RFC 3339, UTC")
    counts: dict[str, int] = Field(description="changed articles by kind")
    changes: list[ChangedUnitOut]
    cursor: str = Field(description="the position right after this entry (pass it as since=)")


class ChangePageOut(BaseModel):
    entries: list[ChangeEntryOut] = Field(description="oldest first")
    next_cursor: str | None = Field(description="where the next page starts; poll with it for what is published later")
    has_more: bool = Field(description="entries follow already")
    limit: int
    act: str | None
    since: str | None
    next: str | None = Field(description="the URL of the next page (since=next_cursor); null when there is no cursor")


def _feed_error(exc: feed.FeedError) -> HTTPException:
    status = 404 if isinstance(exc, feed.PublicationNotFound) else 400
    return HTTPException(status_code=status, detail=str(exc))


@router.get("/changes", response_model=ChangePageOut, responses=BAD_REQUEST)
def changes(request: Request, response: Response, since: str | None = SINCE, act: str | None = ACT,
            limit: int = LIMIT, layout=Depends(get_layout)) -> ChangePageOut:
    """Publications in publication order (oldest first), one entry per (act, version) with the changed
    articles and their word diffs. Continue with ``since=<next_cursor>`` (the ``next`` URL; also a
    ``Link: rel="next"`` header while ``has_more``)."""
    try:
        page = feed.changes(layout, since=since, act=act, limit=limit)
    except feed.FeedError as exc:
        raise _feed_error(exc) from None
    out = page.to_dict()
    nxt = None
    if page.next_cursor:
        nxt = str(request.url.remove_query_params("since").include_query_params(since=page.next_cursor))
        if page.has_more:
            response.headers["Link"] = f'<{nxt}>; rel="next"'
    return ChangePageOut(**out, next=nxt)


@router.get("/changes.atom", response_class=Response, responses={
    200: {"content": {"application/atom+xml": {"schema": {"type": "string"}}},
          "description": "an Atom 1.0 feed, newest entry first"}, **BAD_REQUEST})
def changes_atom(request: Request, since: str | None = SINCE, act: str | None = ACT, limit: int = LIMIT,
                 layout=Depends(get_layout)) -> Response:
    """The feed as Atom: without ``since`` the latest ``limit`` publications (what a feed reader polls);
    with it the page after it and a ``rel="next"`` link while more follow."""
    try:
        text = feed.atom(layout, since=since, act=act, limit=limit, base_url=str(request.base_url).rstrip("/"))
    except feed.FeedError as exc:
        raise _feed_error(exc) from None
    return Response(text, media_type="application/atom+xml")


@router.get("/changes/{act}/{version}", response_model=ChangeEntryOut, responses={
    404: {"model": ErrorOut, "description": "the act has no such published version"}, **BAD_REQUEST})
def publication(act: str = Path(max_length=64, description="e.g. pl:kc"),
                version: str = Path(max_length=40, description="e.g. 2025-11-13"),
                layout=Depends(get_layout)) -> ChangeEntryOut:
    """The feed entry of one publication."""
    try:
        return ChangeEntryOut(**feed.publication_entry(layout, act, version).to_dict())
    except feed.FeedError as exc:
        raise _feed_error(exc) from None
