"""Webhook subscriptions and their events over HTTP (:mod:`pipelines.subscriptions`).

Every endpoint here needs an API key (:func:`lexpipe.api.security.require_key`); the key's sha256
digest owns what it creates, and a key sees, deletes and redelivers only its own subscriptions and
their events (another key's are 404, as if they did not exist).

    POST   /subscriptions                      201: the subscription and its secret (shown this once)
    GET    /subscriptions[?act=]               the caller's subscriptions
    GET    /subscriptions/{id}                 one (no secret)
    DELETE /subscriptions/{id}                 204; its undelivered events are cancelled
    GET    /subscriptions/{id}/dead-letters    events parked after too many failed attempts
    GET    /events/{event_id}                  status and attempt log
    POST   /events/{event_id}/redeliver        a dead-lettered event back in the outbox, attempted now
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from lexpipe.api.deps import get_layout
from lexpipe.api.models import TOO_LARGE, ErrorOut, InvalidOut
from lexpipe.api.security import require_key
from pipelines.subscriptions import delivery, store

router = APIRouter(tags=["subscriptions"])

UNAUTHORIZED = {401: {"model": ErrorOut, "description": "no API key, or one that is not configured"}}
NOT_FOUND = {404: {"model": ErrorOut, "description": "no such subscription or event for this API key"}}
SUB_ID = Path(max_length=64, description="e.g. sub_0f3c…")
EVENT_ID = Path(max_length=64, description="e.g. evt_…")


class SubscriptionBody(BaseModel):
    """One of: ``act`` (every publication of the act), ``unit_id`` (the unit and its descendants), or
    ``query`` + ``act`` (+ ``k``, ``retriever``): the hits that entered or left the query's top k."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"url": "https://hooks.example.com/lexpipe", "act": "pl:kc", "description": "every k.c. publication"},
        {"url": "https://hooks.example.com/lexpipe", "unit_id": "pl:kc:art:709^2"},
        {"url": "https://hooks.example.com/lexpipe", "act": "pl:kc", "query": "forma umowy leasingu", "k": 5,
         "retriever": "bm25", "secret": "a-shared-secret-of-32-characters"}]})

    url: str = Field(max_length=store.MAX_URL, description="http(s) URL the signed POSTs go to (public address)")
    secret: str | None = Field(None, min_length=store.SECRET_MIN, max_length=store.SECRET_MAX,
                               description="signing secret (default: a fresh one, returned once)")
    act: str | None = Field(None, max_length=64, description="act id, e.g. pl:kc")
    unit_id: str | None = Field(None, max_length=300, description="e.g. pl:kc:art:415")
    query: str | None = Field(None, max_length=2000, description="a saved search over `act`")
    k: int | None = Field(None, ge=1, le=store.MAX_QUERY_K, description="query: the top k watched (default 10)")
    retriever: Literal["hybrid", "bm25", "dense", "gaius"] | None = Field(None, description="query: default hybrid")
    description: str | None = Field(None, max_length=store.MAX_DESCRIPTION)


class SubscriptionOut(BaseModel):
    id: str
    kind: str = Field(description="act | unit | query")
    act_id: str
    url: str
    created_at: str = Field(description="RFC 3339, UTC: only publications after it are notified")
    description: str | None = None
    unit_id: str | None = None
    query: str | None = None
    k: int | None = None
    retriever: str | None = None


class CreatedOut(SubscriptionOut):
    secret: str = Field(description="the signing secret: shown this once, store it")


class EventOut(BaseModel):
    id: str
    subscription_id: str
    type: str
    act_id: str
    from_version: str | None
    to_version: str
    status: str = Field(description="pending | delivering | delivered | dead | cancelled")
    attempts: int
    created_at: str
    delivered_at: str | None
    dead_at: str | None
    last_status: int | None
    last_error: str | None
    next_attempt_at: str | None


class AttemptOut(BaseModel):
    attempt: int
    started_at: str
    duration_ms: float | None
    status_code: int | None
    error: str | None
    outcome: str = Field(description="in_flight | interrupted | delivered | retry | dead")


class EventStatusOut(BaseModel):
    event: EventOut
    attempts: list[AttemptOut] = Field(description="every delivery attempt, oldest first")


def _invalid(exc: Exception) -> HTTPException:
    return HTTPException(status_code=422, detail=str(exc))


def _not_found(exc: Exception) -> HTTPException:
    return HTTPException(status_code=404, detail=str(exc))


@router.post("/subscriptions", status_code=201, response_model=CreatedOut, responses={
    **UNAUTHORIZED, **TOO_LARGE, 400: {"model": ErrorOut, "description": "a body that is not JSON"}, 422: {"model": InvalidOut, "description": "not a valid subscription (the message says why), or "
                                                            "a URL pointing at a private address, or a body that fails validation"}})
def create(request: Request, body: SubscriptionBody, owner: str = Depends(require_key),
           layout=Depends(get_layout)) -> CreatedOut:
    """Subscribe a URL; the answer carries the signing secret, which is never shown again."""
    refused = request.app.state.security.urls.check(body.url.strip())
    if refused:
        raise HTTPException(status_code=422, detail=refused)
    try:
        created = store.create_subscription(layout, url=body.url, secret=body.secret, act_id=body.act,
                                            unit_id=body.unit_id, query=body.query, k=body.k,
                                            retriever=body.retriever, owner=owner, description=body.description)
    except store.InvalidSubscription as exc:
        raise _invalid(exc) from None
    return CreatedOut(**created.to_dict())


@router.get("/subscriptions", response_model=list[SubscriptionOut], responses=UNAUTHORIZED)
def list_(act: str | None = Query(None, max_length=64, description="only this act's"),
          owner: str = Depends(require_key), layout=Depends(get_layout)) -> list[SubscriptionOut]:
    """The caller's subscriptions, oldest first (no secrets)."""
    return [SubscriptionOut(**s.to_dict()) for s in store.list_subscriptions(layout, owner=owner, act_id=act)]


def _own(layout, subscription_id: str, owner: str) -> store.Subscription:
    try:
        return store.get_subscription(layout, subscription_id, owner=owner)
    except store.SubscriptionNotFound as exc:
        raise _not_found(exc) from None


@router.get("/subscriptions/{subscription_id}", response_model=SubscriptionOut,
            responses={**UNAUTHORIZED, **NOT_FOUND})
def get(subscription_id: str = SUB_ID, owner: str = Depends(require_key), layout=Depends(get_layout)) -> SubscriptionOut:
    return SubscriptionOut(**_own(layout, subscription_id, owner).to_dict())


@router.delete("/subscriptions/{subscription_id}", status_code=204, response_class=Response,
               responses={**UNAUTHORIZED, **NOT_FOUND})
def delete(subscription_id: str = SUB_ID, owner: str = Depends(require_key), layout=Depends(get_layout)) -> Response:
    """Delete the subscription; its pending and dead-lettered events are cancelled."""
    try:
        store.delete_subscription(layout, subscription_id, owner=owner)
    except store.SubscriptionNotFound as exc:
        raise _not_found(exc) from None
    return Response(status_code=204)


@router.get("/subscriptions/{subscription_id}/dead-letters", response_model=list[EventOut],
            responses={**UNAUTHORIZED, **NOT_FOUND})
def dead_letters(subscription_id: str = SUB_ID, owner: str = Depends(require_key),
                 layout=Depends(get_layout)) -> list[EventOut]:
    """The subscription's events parked after too many failed attempts (or a refusal)."""
    _own(layout, subscription_id, owner)
    return [EventOut(**e.to_dict()) for e in delivery.dead_letters(layout, subscription_id=subscription_id)]


def _own_event(layout, event_id: str, owner: str):
    try:
        ev = delivery.event_status(layout, event_id)
        store.get_subscription(layout, ev.subscription_id, owner=owner)
    except (delivery.EventNotFound, store.SubscriptionNotFound):
        raise HTTPException(status_code=404, detail=f"no event {event_id!r}") from None
    return ev


@router.get("/events/{event_id}", response_model=EventStatusOut, responses={**UNAUTHORIZED, **NOT_FOUND})
def event(event_id: str = EVENT_ID, owner: str = Depends(require_key), layout=Depends(get_layout)) -> EventStatusOut:
    """An event's status and its delivery attempts."""
    ev = _own_event(layout, event_id, owner)
    return EventStatusOut(event=EventOut(**ev.to_dict()),
                          attempts=[AttemptOut(**a.to_dict()) for a in delivery.delivery_log(layout, event_id)])


@router.post("/events/{event_id}/redeliver", response_model=EventOut, responses={
    **UNAUTHORIZED, **NOT_FOUND, 409: {"model": ErrorOut, "description": "the event is not dead-lettered"}})
def redeliver(event_id: str = EVENT_ID, owner: str = Depends(require_key), layout=Depends(get_layout)) -> EventOut:
    """Put a dead-lettered event back in the outbox with a fresh attempt budget and attempt it once now
    (``status``: delivered, or pending with ``next_attempt_at`` when the receiver failed again)."""
    _own_event(layout, event_id, owner)
    try:
        delivery.redeliver(layout, event_id, deliver=False)
    except delivery.EventNotFound as exc:
        raise _not_found(exc) from None
    except delivery.NotDeadLettered as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from None
    # one attempt now (at most LEXPIPE_WEBHOOK_TIMEOUT_S); a retry it asks for is left to the next
    # delivery run rather than held in this request for the run budget
    deliverer = delivery.Deliverer(layout)
    try:
        deliverer.run(ids=[event_id], budget_s=0)
    finally:
        deliverer.close()
    return EventOut(**delivery.event_status(layout, event_id).to_dict())
