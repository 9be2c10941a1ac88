"""The change feed over HTTP (:mod:`pipelines.subscriptions.feed`): ``GET /changes`` (JSON, paged by
an opaque cursor), ``GET /changes.atom`` (Atom 1.0) and ``GET /changes/{act}/{version}`` (one
publication). Open to every client (reads); a malformed ``since``/``act``/``limit``/version is 422, an
unknown act, an unpublished version or a cursor the feed did not issue 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, Field

from lexpipe.api.deps import get_layout
from lexpipe.api.errors import ApiError
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE
from lexpipe.api.params import ActPath, ActQuery, Since, VersionPath
from pipelines.subscriptions import feed

router = APIRouter(tags=["changes"])

ERRORS = {404: {**NOT_FOUND[404], "description": "an unknown act, or a cursor the feed did not issue (altered "
                                                 "or truncated)"}, **UNPROCESSABLE}
ACT = Annotated[ActQuery, Query(description="only this act, e.g. pl:kc")]
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


def _feed_error(exc: feed.FeedError) -> ApiError:
    """404 for what is not there (an act, a publication, the position a forged cursor names), 422 for
    a malformed parameter."""
    return ApiError(404 if isinstance(exc, LookupError) else 422, str(exc), exc.field)


@router.get("/changes", response_model=ChangePageOut, responses=ERRORS)
def changes(request: Request, response: Response, since: Since = None, act: ACT = None,
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
          "description": "an Atom 1.0 feed, newest entry first"}, **ERRORS})
def changes_atom(request: Request, since: Since = None, act: ACT = None, limit: int = LIMIT,
                 layout=Depends(get_layout)) -> Response:
    """The feed as Atom: without ``since`` the latest ``limit`` publications (what a feed reader polls);
    with it the page after it and a ``rel="next"`` link while more follow."""
    try:
        text = feed.atom(layout, since=since, act=act, limit=limit, base_url=str(request.base_url).rstrip("/"))
    except feed.FeedError as exc:
        raise _feed_error(exc) from None
    return Response(text, media_type="application/atom+xml")


@router.get("/changes/{act}/{version}", response_model=ChangeEntryOut, responses={
    404: {**NOT_FOUND[404], "description": "an unknown act, or no such published version of it"}, **UNPROCESSABLE})
def publication(act: ActPath, version: VersionPath, layout=Depends(get_layout)) -> ChangeEntryOut:
    """The feed entry of one publication."""
    try:
        return ChangeEntryOut(**feed.publication_entry(layout, act, version).to_dict())
    except feed.FeedError as exc:
        raise _feed_error(exc) from None
