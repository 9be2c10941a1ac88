"""Webhook subscriptions and their events over HTTP (:mod:`pipelines.subscriptions`).

Every endpoint here needs an API key (:func:`lexpipe.api.security.require_key`); the key's sha256
digest owns what it creates, and a key sees, deletes and redelivers only its own subscriptions and
their events (another key's are 404, as if they did not exist).

    POST   /subscriptions                      201: the subscription and its secret (shown this once)
    GET    /subscriptions[?act=]               the caller's subscriptions
    GET    /subscriptions/{id}                 one (no secret)
    DELETE /subscriptions/{id}                 204; its undelivered events are cancelled
    POST   /subscriptions/{id}/test            201: a signed ping event, attempted once now
    GET    /subscriptions/{id}/dead-letters    events parked after too many failed attempts
    GET    /events/{event_id}                  status and attempt log
    POST   /events/{event_id}/redeliver        a dead-lettered or stuck pending event, attempted now

The responses carry OpenAPI links (a created subscription's id → its get/delete/test/dead-letters; a
test event's id → its status and redelivery), so a client generator, or schemathesis' stateful phase,
can follow them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, model_validator

from lexpipe.api.deps import get_layout, get_reads
from lexpipe.api.errors import ApiError
from lexpipe.api.models import TOO_LARGE, UNPROCESSABLE, ErrorOut
from lexpipe.api.params import ActQuery, Body, EventId, OptionalAct, OptionalUnit, SubscriptionId, _drop_null, text
from lexpipe.api.security import require_key
from pipelines.subscriptions import delivery, events, store

router = APIRouter(tags=["subscriptions"])

UNAUTHORIZED = {401: {"model": ErrorOut, "description": "no API key, or one that is not configured"}}
NOT_FOUND = {404: {"model": ErrorOut, "description": "no such subscription or event for this API key"}}
INVALID = {422: {**UNPROCESSABLE[422], "description": "a malformed id"}}


def _check(check):
    def run(value):
        if value is None:
            return value
        try:
            return check(value)
        except store.InvalidSubscription as exc:
            raise ValueError(str(exc)) from None
    return run


Url = Annotated[str, AfterValidator(_check(store.validate_url)),
                WithJsonSchema({"type": "string", "maxLength": store.MAX_URL, "pattern": store.URL_PATTERN,
                                "description": "http(s) URL the signed POSTs go to (a public address; no "
                                               "user:password@, no #fragment)"})]
Secret = Annotated[str | None, AfterValidator(_check(store.validate_secret)),
                   WithJsonSchema({"type": "string", "minLength": store.SECRET_MIN, "maxLength": store.SECRET_MAX,
                                   "pattern": store.SECRET_PATTERN,
                                   "description": "signing secret: printable ASCII (default: a fresh one, returned "
                                                  "once)"})]
SavedQuery = Annotated[str | None, *text("query", max_length=2000)]

_OTHERS = {"act": ("unit_id", "query", "k", "retriever"), "unit": ("act", "query", "k", "retriever"),
           "query": ("unit_id",)}


def _subscription_schema(schema: dict) -> None:
    _drop_null(schema)
    schema["oneOf"] = [
        {"title": "act", "required": ["act"],
         "not": {"anyOf": [{"required": [f]} for f in _OTHERS["act"]]}},
        {"title": "unit", "required": ["unit_id"],
         "not": {"anyOf": [{"required": [f]} for f in _OTHERS["unit"]]}},
        {"title": "query", "required": ["act", "query"],
         "not": {"anyOf": [{"required": [f]} for f in _OTHERS["query"]]}}]
    schema["examples"] = [
        {"url": "https://hooks.example.com/lexpipe", "act": "pl:kc", "description": "every k.c. publication"},
        {"url": "https://hooks.example.com/lexpipe", "unit_id": "pl:kc:art:709^2"},
        {"url": "https://hooks.example.com/lexpipe", "act": "pl:kc", "query": "forma umowy leasingu", "k": 5,
         "retriever": "bm25", "secret": "a-shared-secret-of-32-characters"}]


class SubscriptionBody(Body):
    """Exactly one of: ``act`` (every publication of the act), ``unit_id`` (the unit and its
    descendants), or ``query`` + ``act`` (+ ``k``, ``retriever``): the hits that entered or left the
    query's top k. ``k`` and ``retriever`` belong to a query; ``unit_id`` names its act itself."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_subscription_schema)

    url: Url = Field(max_length=store.MAX_URL)
    secret: Secret = None
    act: OptionalAct = Field(None, description="act id, e.g. pl:kc")
    unit_id: OptionalUnit = Field(None, description="e.g. pl:kc:art:415")
    query: SavedQuery = Field(None, max_length=2000, description="a saved search over `act`")
    k: int | None = Field(None, ge=1, le=store.MAX_QUERY_K, description="query: the top k watched (default 10)")
    retriever: Literal["hybrid", "bm25", "dense", "gaius"] | None = Field(None, description="query: default hybrid")
    description: str | None = Field(None, max_length=store.MAX_DESCRIPTION)

    @model_validator(mode="after")
    def _one_kind(self) -> "SubscriptionBody":
        given = {f for f in ("act", "unit_id", "query", "k", "retriever") if getattr(self, f) is not None}
        if "unit_id" in given:
            extra = sorted(given & set(_OTHERS["unit"]))
            if extra:
                raise ValueError(f"{extra[0]}: a unit subscription takes unit_id alone (its act is in the id); "
                                 f"leave out {', '.join(extra)}")
        elif "query" in given:
            if "act" not in given:
                raise ValueError("act is required with a query: the act the saved search runs over")
        elif "act" in given:
            extra = sorted(given & {"k", "retriever"})
            if extra:
                raise ValueError(f"{extra[0]}: k applies to a query subscription only" if extra[0] == "k" else
                                 f"{extra[0]}: retriever applies to a query subscription only")
        else:
            raise ValueError("act is required: give act (an act's publications), unit_id (a unit), or act and "
                             "query (a saved search); act_id must look like 'pl:kc'")
        return self


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
    type: str = Field(description="act.changed | unit.changed | query.changed | ping (a test event)")
    act_id: str
    from_version: str | None
    to_version: str = Field(description="the version published (empty for a ping)")
    status: str = Field(description="pending | delivered | dead | cancelled")
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


def _deliverer(request: Request, layout) -> delivery.Deliverer:
    """The app's delivery settings, HTTP client and address resolver (tests inject the last two)."""
    state = request.app.state
    return delivery.Deliverer(layout, settings=state.settings, client=state.webhook_client, resolve=state.resolve)


def _unknown_act_filter(act: str | None) -> None:
    from schemas.acts import registry

    reg = registry()
    if act is not None and act not in reg:
        raise ApiError(404, f"unknown act {act!r}; known acts: {', '.join(reg.ids())}", "act")


CREATED_LINKS = {
    "GetSubscription": {"operationId": "get_subscription", "parameters": {"subscription_id": "$response.body#/id"}},
    "DeleteSubscription": {"operationId": "delete_subscription",
                           "parameters": {"subscription_id": "$response.body#/id"}},
    "TestSubscription": {"operationId": "test_subscription", "parameters": {"subscription_id": "$response.body#/id"}},
    "DeadLetters": {"operationId": "dead_letters", "parameters": {"subscription_id": "$response.body#/id"}}}
EVENT_LINKS = {
    "GetEvent": {"operationId": "get_event", "parameters": {"event_id": "$response.body#/id"}},
    "RedeliverEvent": {"operationId": "redeliver_event", "parameters": {"event_id": "$response.body#/id"}}}


@router.post("/subscriptions", status_code=201, response_model=CreatedOut, operation_id="create_subscription",
             responses={201: {"description": "the subscription and its secret (shown this once)",
                              "links": CREATED_LINKS},
                        **UNAUTHORIZED, **TOO_LARGE,
                        403: {"model": ErrorOut, "description": "the URL's host is, or resolves to, a private, "
                                                                "loopback, link-local or reserved address"},
                        404: {"model": ErrorOut, "description": "an unknown act or unit (no held version has it), "
                                                                "or a URL host that does not resolve"},
                        422: {**UNPROCESSABLE[422], "description": "not a valid subscription (the message says "
                                                                   "why): a malformed URL, act, unit or secret, a "
                                                                   "URL with user:password@, two kinds at once"}})
def create(request: Request, body: SubscriptionBody, owner: str = Depends(require_key),
           layout=Depends(get_layout)) -> CreatedOut:
    """Subscribe a URL; the answer carries the signing secret, which is never shown again."""
    refused = request.app.state.security.urls.check(body.url)
    if refused:
        raise ApiError(refused[0], refused[1], "url")
    try:
        created = store.create_subscription(layout, url=body.url, secret=body.secret, act_id=body.act,
                                            unit_id=body.unit_id, query=body.query, k=body.k,
                                            retriever=body.retriever, owner=owner, description=body.description,
                                            reads=get_reads(request))
    except store.UnknownTarget as exc:
        raise ApiError(404, str(exc), exc.field) from None
    except store.InvalidSubscription as exc:
        raise ApiError(422, str(exc), exc.field) from None
    return CreatedOut(**created.to_dict())


@router.get("/subscriptions", response_model=list[SubscriptionOut], operation_id="list_subscriptions",
            responses={**UNAUTHORIZED, 404: {"model": ErrorOut, "description": "an unknown act"},
                       **UNPROCESSABLE})
def list_(act: Annotated[ActQuery, Query(description="only this act's")] = None,
          owner: str = Depends(require_key), layout=Depends(get_layout)) -> list[SubscriptionOut]:
    """The caller's subscriptions, oldest first (no secrets)."""
    _unknown_act_filter(act)
    return [SubscriptionOut(**s.to_dict()) for s in store.list_subscriptions(layout, owner=owner, act_id=act)]


def _own(layout, subscription_id: str, owner: str) -> store.Subscription:
    try:
        return store.get_subscription(layout, subscription_id, owner=owner)
    except store.SubscriptionNotFound as exc:
        raise ApiError(404, str(exc), "subscription_id") from None


@router.get("/subscriptions/{subscription_id}", response_model=SubscriptionOut, operation_id="get_subscription",
            responses={**UNAUTHORIZED, **NOT_FOUND, **INVALID})
def get(subscription_id: SubscriptionId, owner: str = Depends(require_key),
        layout=Depends(get_layout)) -> SubscriptionOut:
    return SubscriptionOut(**_own(layout, subscription_id, owner).to_dict())


@router.delete("/subscriptions/{subscription_id}", status_code=204, response_class=Response,
               operation_id="delete_subscription", responses={**UNAUTHORIZED, **NOT_FOUND, **INVALID})
def delete(subscription_id: SubscriptionId, owner: str = Depends(require_key), layout=Depends(get_layout)) -> Response:
    """Delete the subscription; its pending and dead-lettered events are cancelled."""
    try:
        store.delete_subscription(layout, subscription_id, owner=owner)
    except store.SubscriptionNotFound as exc:
        raise ApiError(404, str(exc), "subscription_id") from None
    return Response(status_code=204)


@router.post("/subscriptions/{subscription_id}/test", status_code=201, response_model=EventOut,
             operation_id="test_subscription",
             responses={201: {"description": "the ping event after its first attempt (delivered, or pending with "
                                             "next_attempt_at)", "links": EVENT_LINKS,
                              "headers": {"Location": {"schema": {"type": "string"},
                                                       "description": "/events/{id} of the ping"}}},
                        **UNAUTHORIZED, **NOT_FOUND, **INVALID})
def test(request: Request, response: Response, subscription_id: SubscriptionId, owner: str = Depends(require_key),
         layout=Depends(get_layout)) -> EventOut:
    """Send the subscription a signed test event (``type: "ping"``) now: one attempt within the request
    (at most ``LEXPIPE_WEBHOOK_TIMEOUT_S``); a failure is retried like any event, and the event's
    status and attempts are at ``/events/{id}``."""
    d = _deliverer(request, layout)
    try:
        ev = events.send_ping(layout, subscription_id, owner=owner, deliverer=d)
    except store.SubscriptionNotFound as exc:
        raise ApiError(404, str(exc), "subscription_id") from None
    finally:
        d.close()
    response.headers["Location"] = f"/events/{ev.id}"
    return EventOut(**ev.to_dict())


@router.get("/subscriptions/{subscription_id}/dead-letters", response_model=list[EventOut],
            operation_id="dead_letters", responses={**UNAUTHORIZED, **NOT_FOUND, **INVALID})
def dead_letters(subscription_id: SubscriptionId, owner: str = Depends(require_key),
                 layout=Depends(get_layout)) -> list[EventOut]:
    """The subscription's events parked after too many failed attempts (or a refusal)."""
    _own(layout, subscription_id, owner)
    return [EventOut(**e.to_dict()) for e in delivery.dead_letters(layout, subscription_id=subscription_id)]


def _own_event(layout, event_id: str, owner: str):
    try:
        ev = delivery.event_status(layout, event_id)
        store.get_subscription(layout, ev.subscription_id, owner=owner)
    except (delivery.EventNotFound, store.SubscriptionNotFound):
        raise ApiError(404, f"no event {event_id!r}", "event_id") from None
    return ev


@router.get("/events/{event_id}", response_model=EventStatusOut, operation_id="get_event",
            responses={**UNAUTHORIZED, **NOT_FOUND, **INVALID})
def event(event_id: EventId, owner: str = Depends(require_key), layout=Depends(get_layout)) -> EventStatusOut:
    """An event's status and its delivery attempts."""
    ev = _own_event(layout, event_id, owner)
    return EventStatusOut(event=EventOut(**ev.to_dict()),
                          attempts=[AttemptOut(**a.to_dict()) for a in delivery.delivery_log(layout, event_id)])


@router.post("/events/{event_id}/redeliver", response_model=EventOut, operation_id="redeliver_event", responses={
    **UNAUTHORIZED, **NOT_FOUND, **INVALID,
    409: {"model": ErrorOut, "description": "the event was delivered or cancelled, or a sender holds it right now "
                                            "(Retry-After: until its lease expires)",
          "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds until the lease of "
                                                                                      "the sender holding it expires"}}}})
def redeliver(request: Request, event_id: EventId, owner: str = Depends(require_key),
              layout=Depends(get_layout)) -> EventOut:
    """Attempt an event again now: a dead-lettered one with a fresh attempt budget; a pending one — a
    retry waiting for its backoff, or one a crashed process left behind (once its lease expired) —
    as it is (``status``: delivered, or pending with ``next_attempt_at`` when the receiver failed again;
    a further retry is the next delivery run's, not held in this request)."""
    _own_event(layout, event_id, owner)
    d = _deliverer(request, layout)
    try:
        delivery.redeliver(layout, event_id, deliver=False, deliverer=d)
        d.run(ids=[event_id], budget_s=0)  # one attempt now (at most LEXPIPE_WEBHOOK_TIMEOUT_S)
    except delivery.EventNotFound as exc:
        raise ApiError(404, str(exc), "event_id") from None
    except delivery.InFlight as exc:
        raise ApiError(409, str(exc), "event_id", {"Retry-After": str(max(1, round(exc.retry_after_s)))}) from None
    except delivery.NotRedeliverable as exc:
        raise ApiError(409, str(exc), "event_id") from None
    finally:
        d.close()
    return EventOut(**delivery.event_status(layout, event_id).to_dict())
