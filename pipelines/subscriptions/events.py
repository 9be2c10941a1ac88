"""Events: one JSON document per (subscription, publication) that concerns it, and the notify step.

An event's id is ``evt_`` + the first 32 hex digits of SHA-256 over subscription id, act, from
and to version: the same publication notified twice (a re-run, a crash, a second orchestrator) is
the same event, written to the outbox once (``INSERT OR IGNORE``) and de-duplicated by receivers
on the ``Lexpipe-Event-Id`` header. The body is fixed when the event is written, so every attempt
sends identical bytes (only the signature's timestamp changes).

Event JSON (docs/subscriptions.md)::

    {"id": "evt_…", "type": "unit.changed", "created_at": "…Z",
     "subscription": {"id": "sub_…", "kind": "unit", "act_id": "pl:kc", "unit_id": "pl:kc:art:709^13"},
     "act_id": "pl:kc", "from_version": "2024-12-19", "to_version": "2025-11-13",
     "published_at": "…Z", "changes_total": 1, "truncated": false,
     "changes": [{"unit_id": …, "article_id": …, "level": "article", "number": "709^13",
                  "change": "changed", "old_text": …, "new_text": …, "word_diff": "…", "reading": "in_force",
                  "effective_date": null}],
     "query": null | {"text": …, "k": 10, "retriever": "hybrid", "entered": […], "left": […], "changed": […]},
     "feed": {"cursor": "c1.…"}}

A subscription hears of a publication made at or after its creation; act subscriptions also of an
act's first version (``from_version`` null, no changes), unit and query subscriptions only of
changes against a previous version.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from core.layout import Layout
from core.settings import Settings, get_settings
from pipelines.subscriptions import db
from pipelines.subscriptions.feed import Publication, encode_cursor, iso, publication, publications
from pipelines.subscriptions.matching import (PublicationTables, QueryNotAnswerable, QueryRunner, UnitChange,
                                              article_changes, query_delta, unit_changes)
from pipelines.subscriptions.outbox import Outbox
from pipelines.subscriptions.store import Subscription, SubscriptionStore

log = logging.getLogger("lexpipe.webhooks")
EVENT_TYPES = {"act": "act.changed", "unit": "unit.changed", "query": "query.changed"}  # and "ping" (a test)


def event_id(subscription_id: str, act_id: str, from_version: str | None, to_version: str) -> str:
    """Stable: the same subscription, act and versions always give the same id."""
    key = "\n".join((subscription_id, act_id, from_version or "", to_version)).encode()
    return "evt_" + hashlib.sha256(key).hexdigest()[:32]


@dataclass(frozen=True)
class Event:
    id: str
    subscription_id: str
    type: str
    act_id: str
    from_version: str | None
    to_version: str
    url: str
    created_at: str
    payload: dict = field(repr=False)

    @property
    def body(self) -> str:
        """The exact JSON text sent (and signed)."""
        return json.dumps(self.payload, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass
class Built:
    events: list[Event]
    deferred: list[tuple[str, str]]  # (subscription id, why): a saved query that could not run


def _subscription_view(sub: Subscription) -> dict:
    view = {"id": sub.id, "kind": sub.kind, "act_id": sub.act_id}
    if sub.kind == "unit":
        view["unit_id"] = sub.unit_id
    if sub.kind == "query":
        view.update(query=sub.query, k=sub.k, retriever=sub.retriever)
    return view


def _event(sub: Subscription, pub: Publication, changes: list[UnitChange], *, max_changes: int, now: dt.datetime,
           query: dict | None = None) -> Event:
    eid = event_id(sub.id, pub.act_id, pub.from_version, pub.version)
    created = iso(now)
    payload = {"id": eid, "type": EVENT_TYPES[sub.kind], "created_at": created,
               "subscription": _subscription_view(sub), "act_id": pub.act_id, "from_version": pub.from_version,
               "to_version": pub.version, "published_at": iso(pub.published_at), "first_version": pub.from_version is None,
               "changes_total": len(changes), "truncated": len(changes) > max_changes,
               "changes": [c.to_dict() for c in changes[:max_changes]], "query": query,
               "feed": {"cursor": encode_cursor(pub.position)}}
    return Event(eid, sub.id, EVENT_TYPES[sub.kind], pub.act_id, pub.from_version, pub.version, sub.url, created,
                 payload)


def build_events(layout: Layout, pub: Publication, subscriptions: list[Subscription], *,
                 runner: QueryRunner | None = None, max_changes: int = 500,
                 now: dt.datetime | None = None) -> Built:
    """The events of one publication for ``subscriptions`` (the caller picks those of its act and
    old enough). ``runner``: the search for saved queries (``matching.backend_runner`` opens its
    backend only when first asked, so a publication without query subscriptions never opens one)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    tables = PublicationTables.of(layout, pub)
    events, deferred = [], []

    def get_runner() -> QueryRunner:
        if runner is None:
            raise QueryNotAnswerable("no search backend was given to run saved queries")
        return runner

    for sub in subscriptions:
        if sub.act_id != pub.act_id:
            continue
        if sub.kind == "act":
            found = article_changes(tables.rows) if pub.from_version else []
            if pub.from_version and not _substantive(found):
                continue  # only the form changed (a converter fix): the feed says so, no change event
            events.append(_event(sub, pub, found, max_changes=max_changes, now=now))
        elif sub.kind == "unit":
            if pub.from_version is None:
                continue
            found = unit_changes(tables, sub.unit_id or "")
            if _substantive(found):
                events.append(_event(sub, pub, found, max_changes=max_changes, now=now))
        elif sub.kind == "query":
            if pub.from_version is None:
                continue
            try:
                delta = query_delta(get_runner(), pub, query=sub.query or "", k=sub.k or 10,
                                    retriever=sub.retriever or "hybrid", diff_rows=tables.rows)
            except QueryNotAnswerable as exc:
                deferred.append((sub.id, str(exc)))
                log.warning(f"{sub.id}: saved query not run on {pub.act_id} {pub.from_version} → {pub.version}, "
                            f"event deferred: {exc}")
                continue
            if delta.empty:
                continue
            hit_ids = {h["article_id"] for h in (*delta.entered, *delta.left, *delta.changed)}
            changes = [c for c in article_changes(tables.rows) if c.article_id in hit_ids]
            events.append(_event(sub, pub, changes, max_changes=max_changes, now=now,
                                 query={"text": sub.query, "k": sub.k, "retriever": sub.retriever, **delta.to_dict()}))
    return Built(events, deferred)


def _substantive(changes: list[UnitChange]) -> bool:
    """Whether a change is law: anything but ``editorial`` (the same words in another form)."""
    return any(c.change != "editorial" for c in changes)


# ----------------------------------------------------------------------------------------------
# a test event


PING = "ping"


def ping_event(sub: Subscription, *, now: dt.datetime | None = None) -> Event:
    """A signed test event for a receiver (``POST /subscriptions/{id}/test``): delivered, retried and
    logged like any event, so the receiver can be checked before a publication happens. A fresh id
    each time (``evt_`` + 32 random hex digits): every ping is a new event."""
    import secrets

    now = now or dt.datetime.now(dt.timezone.utc)
    eid = "evt_" + secrets.token_hex(16)
    payload = {"id": eid, "type": PING, "created_at": iso(now), "subscription": _subscription_view(sub),
               "act_id": sub.act_id, "from_version": None, "to_version": "",
               "message": "a test event from lexpipe: verify its signature, answer 2xx; no publication happened"}
    return Event(eid, sub.id, PING, sub.act_id, None, "", sub.url, iso(now), payload)


def send_ping(layout: Layout, subscription_id: str, *, owner: str | None = None, deliverer=None,
              settings: Settings | None = None):
    """Write a ping for the subscription to the outbox and attempt it once now (a failure leaves it
    pending for the next delivery run, as any event). The event after the attempt
    (:class:`~pipelines.subscriptions.outbox.OutboxEvent`); ``SubscriptionNotFound`` for another
    owner's or a missing subscription."""
    from pipelines.subscriptions.delivery import Deliverer, event_status

    store = SubscriptionStore(layout)
    try:
        sub = store.get(subscription_id, owner=owner)
    finally:
        store.close()
    ev = ping_event(sub)
    d = deliverer or Deliverer(layout, settings=settings)
    try:
        d.outbox.add([ev], now=d.clock.time())
        d.run(ids=[ev.id], budget_s=0)  # one attempt now; a retry it asks for is the next run's
    finally:
        if deliverer is None:
            d.close()
    return event_status(layout, ev.id)


# ----------------------------------------------------------------------------------------------
# the notify step


@dataclass
class NotifyReport:
    """What one notify run did, for the orchestrators' metadata."""

    act_id: str
    versions: list[str]
    subscriptions: int = 0  # subscriptions of the act considered
    event_ids: list[str] = field(default_factory=list)  # events of these publications (new or not)
    new: int = 0  # written to the outbox by this run
    delivered: int = 0  # of event_ids: delivered (now or earlier)
    pending: int = 0  # of event_ids: failed so far, retried later (the outbox keeps them)
    dead_lettered: int = 0  # of event_ids: parked in the dead-letter list
    cancelled: int = 0
    deferred: list[tuple[str, str]] = field(default_factory=list)
    attempts: int = 0  # delivery attempts made by this run
    seconds: float = 0.0

    @property
    def events(self) -> int:
        return len(self.event_ids)

    def to_dict(self) -> dict:
        return {"act_id": self.act_id, "versions": self.versions, "subscriptions": self.subscriptions,
                "events": self.events, "new": self.new, "delivered": self.delivered, "failed": self.pending,
                "dead_lettered": self.dead_lettered, "cancelled": self.cancelled, "deferred": len(self.deferred),
                "attempts": self.attempts, "seconds": round(self.seconds, 2)}


def _notify(layout: Layout, act_id: str, pubs: list[Publication], *, runner, deliver: bool,
            settings: Settings | None, deliverer=None, clock: Callable[[], dt.datetime] | None = None) -> NotifyReport:
    t0 = time.perf_counter()
    settings = settings or get_settings()
    report = NotifyReport(act_id, [p.version for p in pubs])
    if not db.exists(layout):  # no subscription was ever made: touch nothing
        report.seconds = time.perf_counter() - t0
        return report
    store = SubscriptionStore(layout)
    outbox = Outbox(layout)
    try:
        subs = store.list(act_id=act_id)
        report.subscriptions = len(subs)
        now = (clock or (lambda: dt.datetime.now(dt.timezone.utc)))()
        for pub in pubs:
            eligible = [s for s in subs if s.created_at <= pub.published_at]
            # an event already in the outbox is never rebuilt (nor its saved query re-run)
            known = outbox.known(event_id(s.id, pub.act_id, pub.from_version, pub.version) for s in eligible)
            todo = [s for s in eligible if event_id(s.id, pub.act_id, pub.from_version, pub.version) not in known]
            built = build_events(layout, pub, todo, runner=runner, max_changes=settings.webhook_max_changes, now=now)
            report.deferred += built.deferred
            report.new += len(outbox.add(built.events, now=now.timestamp()))
            report.event_ids += sorted(known) + [e.id for e in built.events]
        if deliver and report.event_ids:
            from pipelines.subscriptions.delivery import Deliverer

            d = deliverer or Deliverer(layout, settings=settings)
            try:
                report.attempts = d.run(ids=report.event_ids).attempts
            finally:
                if deliverer is None:
                    d.close()
        states = [e.status for e in outbox.events(ids=report.event_ids)]
        report.delivered, report.pending = states.count("delivered"), states.count("pending")
        report.dead_lettered, report.cancelled = states.count("dead"), states.count("cancelled")
    finally:
        store.close()
        outbox.close()
    report.seconds = time.perf_counter() - t0
    log.info(f"{act_id} {', '.join(report.versions)}: {report.events} events ({report.new} new), "
             f"{report.delivered} delivered, {report.pending} to retry, {report.dead_lettered} dead-lettered, "
             f"{len(report.deferred)} deferred")
    return report


def notify(layout: Layout, act_id: str, version: str, *, runner: QueryRunner | None = None,
           deliver: bool = True, settings: Settings | None = None, deliverer=None,
           clock: Callable[[], dt.datetime] | None = None) -> NotifyReport:
    """Events of the publication of ``act_id`` ``version`` for every matching subscription, written
    to the outbox, then (``deliver``) delivered. Idempotent: a second call writes nothing new and
    only retries what is still pending."""
    return _notify(layout, act_id, [publication(layout, act_id, version)], runner=runner, deliver=deliver,
                   settings=settings, deliverer=deliverer, clock=clock)


def notify_act(layout: Layout, act_id: str, *, runner: QueryRunner | None = None,
               deliver: bool = True, settings: Settings | None = None, deliverer=None,
               clock: Callable[[], dt.datetime] | None = None) -> NotifyReport:
    """:func:`notify` for every published version of the act (a German act publishes all its text
    states in one run); each subscription hears only of publications made after it was created."""
    return _notify(layout, act_id, publications(layout, act_id), runner=runner, deliver=deliver, settings=settings,
                   deliverer=deliverer, clock=clock)
