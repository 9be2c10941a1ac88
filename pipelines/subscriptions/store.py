"""Webhook subscriptions: who wants to hear about which change, at which URL, signed with which secret.

Three kinds, told apart by what is given:

* ``act`` — every publication of an act (``act_id="pl:kc"``);
* ``unit`` — one unit and its descendants (``unit_id="pl:kc:art:415"`` also covers
  ``pl:kc:art:415:par:1``; a structure unit such as ``pl:kc:book:TRZECIA:title:VI`` covers the
  articles under it);
* ``query`` — a saved search (``query`` + ``act_id`` + ``k`` + ``retriever``): the hits that
  entered or left its top k between two versions.

A subscription hears of publications made after it was created (``created_at``), never of history.
Deleting one cancels its undelivered events. ``owner`` is an opaque string the API may set (e.g. an
API key's hash) to scope list/get/delete; this layer only filters by it.

The secret signs every delivery (:mod:`.signing`); it is returned once, by :func:`create`, and
otherwise only read to sign (:meth:`SubscriptionStore.secret_of`): :class:`Subscription` does not
carry it, so it cannot end up in a log line or an API answer by accident.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets as _secrets
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from core.layout import Layout
from pipelines.subscriptions import db
from pipelines.subscriptions.feed import ACT_PATTERN

KINDS = ("act", "unit", "query")
MAX_URL = 2048
MAX_DESCRIPTION = 500
MAX_QUERY_K = 100
SECRET_MIN, SECRET_MAX = 16, 256
# the API's contract (lexpipe/api/params.py) uses the same patterns: what they accept, the store accepts
# a unit id: the act, then segments (kind:number pairs; numbers as printed: pl:kpc:part:PIĄTA,
# de:bgb:par:573b:abs:1:nr:2', de:gg:praeambel); the read layer decides which exist
# (no space, control or separator character in a segment, spelled out: ECMA's \s, the schema's, is not Python's)
_SEGMENT = r"[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff:/?#%]"
UNIT_PATTERN = rf"^[a-z]{{2}}:[a-z0-9][a-z0-9_-]{{0,59}}(?::{_SEGMENT}{{1,60}})+$"
ACT_ID = re.compile(ACT_PATTERN)
UNIT_ID = re.compile(UNIT_PATTERN)
# an http(s) URL without credentials, fragment or spaces; a host name or IPv4 address (an IPv6
# receiver is reached by its name: a literal's validity is more than a pattern can say); a port 1-65535
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*\.?"
URL_PATTERN = rf"^[hH][tT][tT][pP][sS]?://{_HOST}(?::{_PORT})?(?:[/?][!$&'()*+,;=:@%/?A-Za-z0-9._~-]*)?$"
URL_RE = re.compile(URL_PATTERN)
SECRET_PATTERN = r"^[!-~](?:[ -~]*[!-~])?$"  # printable ASCII, no space at either end


class InvalidSubscription(ValueError):
    """The request cannot become a subscription (the API answers 422); the message says why and
    ``field`` names the part of the request at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class UnknownTarget(InvalidSubscription):
    """The act or unit named is not there (the API answers 404, like any unknown act or unit)."""


class SubscriptionNotFound(LookupError):
    """No subscription with that id (for that owner): the API answers 404."""


@dataclass(frozen=True)
class Subscription:
    """A subscription as the API shows it (no secret)."""

    id: str
    kind: str
    act_id: str
    url: str
    created_at: dt.datetime
    unit_id: str | None = None
    query: str | None = None
    k: int | None = None
    retriever: str | None = None
    owner: str | None = None
    description: str | None = None

    def to_dict(self) -> dict:
        out = {"id": self.id, "kind": self.kind, "act_id": self.act_id, "url": self.url,
               "created_at": self.created_at.isoformat().replace("+00:00", "Z"), "description": self.description}
        if self.kind == "unit":
            out["unit_id"] = self.unit_id
        if self.kind == "query":
            out.update(query=self.query, k=self.k, retriever=self.retriever)
        return out


@dataclass(frozen=True)
class Created:
    """What :func:`create` returns: the subscription and its secret (shown this once)."""

    subscription: Subscription
    secret: str

    def to_dict(self) -> dict:
        return {**self.subscription.to_dict(), "secret": self.secret}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _row(r) -> Subscription:
    return Subscription(id=r["id"], kind=r["kind"], act_id=r["act_id"], url=r["url"],
                        created_at=dt.datetime.fromisoformat(r["created_at"]), unit_id=r["unit_id"],
                        query=r["query"], k=r["k"], retriever=r["retriever"], owner=r["owner"],
                        description=r["description"])


def _known_act(act_id: str, field: str = "act") -> None:
    from schemas.acts import registry

    reg = registry()
    if act_id not in reg:
        raise UnknownTarget(f"unknown act {act_id!r}; known: {', '.join(reg.ids())}", field)


def _held_unit(layout: Layout, act_id: str, unit_id: str, reads=None) -> None:
    """:class:`UnknownTarget` unless some held version of the act has the unit (in force, repealed, or
    only in an announced wording): a subscription to ``pl:kc:art:99999`` would never hear anything.
    ``reads``: a :class:`~pipelines.reads.ReadService` over the same home whose indexes are warm (the
    API's); default: one opened for this check."""
    from pipelines.reads import NotFound, ReadService

    reads = reads or ReadService.from_layout(layout)
    versions = reads.reader.versions(act_id)
    if not versions:
        raise UnknownTarget(f"no version of {act_id} is held, so unit {unit_id} cannot be checked; subscribe to "
                            f"the act (act={act_id}) to hear of its first version", "unit_id")
    for version in reversed(versions):
        try:
            reads.unit(unit_id, version)
            return
        except NotFound:
            continue
    raise UnknownTarget(f"unknown unit {unit_id!r}: no held version of {act_id} ({', '.join(versions)}) has it; "
                        f"subscribe to the act (act={act_id}) to hear of units it adds", "unit_id")


def validate_url(url: object) -> str:
    """An http(s) URL as :data:`URL_PATTERN` describes it (the API's schema shows the same pattern),
    with a reason for each way it can fail."""
    if not isinstance(url, str) or not url:
        raise InvalidSubscription("url is required", "url")
    if len(url) > MAX_URL:
        raise InvalidSubscription(f"url is {len(url)} characters; the limit is {MAX_URL}", "url")
    if url != url.strip() or any(c.isspace() for c in url):
        raise InvalidSubscription("url must not contain spaces", "url")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port out of range)
    except ValueError as exc:
        raise InvalidSubscription(f"url is not a URL: {exc}", "url") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidSubscription(f"url must be an http(s) URL with a host, got {url[:200]!r}", "url")
    if "@" in parts.netloc:
        raise InvalidSubscription("url must not carry credentials (user:password@host): a receiver authenticates "
                                  "a delivery by its signature (Lexpipe-Signature)", "url")
    if parts.fragment or "#" in url:
        raise InvalidSubscription("url must not have a #fragment", "url")
    if "[" in parts.netloc:
        raise InvalidSubscription("url host must be a name or an IPv4 address (reach an IPv6 receiver by its "
                                  "host name)", "url")
    if not URL_RE.fullmatch(url):
        raise InvalidSubscription(f"url must be http(s)://host[:port][/path][?query] with a host name or an IP "
                                  f"address and URL characters only, got {url[:200]!r}", "url")
    return url


def validate_secret(secret: object) -> str:
    if not isinstance(secret, str) or not SECRET_MIN <= len(secret) <= SECRET_MAX:
        raise InvalidSubscription(f"secret must be {SECRET_MIN} to {SECRET_MAX} characters", "secret")
    if not re.fullmatch(SECRET_PATTERN, secret):
        raise InvalidSubscription("secret must be printable ASCII without leading or trailing spaces", "secret")
    return secret


def new_secret() -> str:
    return "whsec_" + _secrets.token_urlsafe(32)


def _target(layout: Layout, act_id: str | None, unit_id: str | None, query: str | None, k: int | None,
            retriever: str | None, reads=None) -> dict:
    """The kind and target columns of a request, validated (the unit against the held versions)."""
    if unit_id is not None and query is not None:
        raise InvalidSubscription("give a unit_id or a query, not both", "query")
    if unit_id is not None:
        m = UNIT_ID.match(unit_id) if isinstance(unit_id, str) else None
        if m is None:
            raise InvalidSubscription(f"unit_id must look like 'pl:kc:art:415' or 'pl:kc:art:415:par:1', "
                                      f"got {unit_id!r}", "unit_id")
        unit_act = unit_id.split(":", 2)[0] + ":" + unit_id.split(":", 2)[1]
        if act_id is not None and act_id != unit_act:
            raise InvalidSubscription(f"unit {unit_id} is not of act {act_id}", "act")
        if k is not None or retriever is not None:
            raise InvalidSubscription("k and retriever apply to a query subscription only", "k" if k is not None
                                      else "retriever")
        _known_act(unit_act, "unit_id")
        _held_unit(layout, unit_act, unit_id, reads)
        return {"kind": "unit", "act_id": unit_act, "unit_id": unit_id}
    if not isinstance(act_id, str) or not ACT_ID.match(act_id):
        raise InvalidSubscription(f"act_id must look like 'pl:kc' (or give a unit_id), got {act_id!r}", "act")
    _known_act(act_id)
    if query is None:
        if k is not None or retriever is not None:
            raise InvalidSubscription("k applies to a query subscription only" if k is not None else
                                      "retriever applies to a query subscription only",
                                      "k" if k is not None else "retriever")
        return {"kind": "act", "act_id": act_id}
    from pipelines.retrieval.service import InvalidRequest, build_request

    k = 10 if k is None else k
    retriever = retriever or "hybrid"
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_QUERY_K:
        raise InvalidSubscription(f"k must be between 1 and {MAX_QUERY_K}, got {k!r}", "k")
    try:
        request = build_request(query, k=k, retriever=retriever, acts=[act_id])
    except InvalidRequest as exc:
        raise InvalidSubscription(str(exc), "retriever" if "retriever" in str(exc) else "query") from None
    return {"kind": "query", "act_id": act_id, "query": request.query, "k": k, "retriever": retriever}


class SubscriptionStore:
    """Subscriptions in the package's SQLite file. ``clock``: when "now" is (tests set it, so a
    subscription can predate a corpus published during the test session)."""

    def __init__(self, layout: Layout, *, clock: Callable[[], dt.datetime] | None = None):
        self.layout = layout
        self.clock = clock or _now
        self._conn = None

    @property
    def conn(self):
        if self._conn is None:
            self._conn = db.connect(self.layout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- the API's operations --------------------------------------------------------------------
    def create(self, *, url: str, secret: str | None = None, act_id: str | None = None, unit_id: str | None = None,
               query: str | None = None, k: int | None = None, retriever: str | None = None,
               owner: str | None = None, description: str | None = None, reads=None) -> Created:
        url = validate_url(url)
        secret = new_secret() if secret is None else validate_secret(secret)
        if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION):
            raise InvalidSubscription(f"description must be text of at most {MAX_DESCRIPTION} characters",
                                      "description")
        if owner is not None and not isinstance(owner, str):
            raise InvalidSubscription("owner must be a string", "owner")
        target = _target(self.layout, act_id, unit_id, query, k, retriever, reads)
        sub = Subscription(id="sub_" + _secrets.token_hex(12), url=url, owner=owner, description=description,
                           created_at=self.clock().astimezone(dt.timezone.utc), **target)
        with db.transaction(self.conn) as c:
            c.execute("INSERT INTO subscriptions (id, kind, act_id, unit_id, query, k, retriever, url, secret, owner, "
                      "description, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                      (sub.id, sub.kind, sub.act_id, sub.unit_id, sub.query, sub.k, sub.retriever, sub.url, secret,
                       sub.owner, sub.description, sub.created_at.isoformat()))
        return Created(sub, secret)

    def list(self, *, owner: str | None = None, act_id: str | None = None) -> list[Subscription]:
        if not db.exists(self.layout):
            return []
        sql, args = "SELECT * FROM subscriptions WHERE 1=1", []
        if owner is not None:
            sql, args = sql + " AND owner = ?", [*args, owner]
        if act_id is not None:
            sql, args = sql + " AND act_id = ?", [*args, act_id]
        return [_row(r) for r in self.conn.execute(sql + " ORDER BY created_at, id", args)]

    def get(self, subscription_id: str, *, owner: str | None = None) -> Subscription:
        row = None
        if db.exists(self.layout):
            row = self.conn.execute("SELECT * FROM subscriptions WHERE id = ?", (subscription_id,)).fetchone()
        if row is None or (owner is not None and row["owner"] != owner):
            raise SubscriptionNotFound(f"no subscription {subscription_id!r}")
        return _row(row)

    def delete(self, subscription_id: str, *, owner: str | None = None) -> int:
        """Delete the subscription; its pending and dead-lettered events are cancelled (returned:
        how many)."""
        self.get(subscription_id, owner=owner)
        with db.transaction(self.conn) as c:
            c.execute("DELETE FROM subscriptions WHERE id = ?", (subscription_id,))
            cur = c.execute("UPDATE events SET status = 'cancelled', lease_until = NULL "
                            "WHERE subscription_id = ? AND status IN ('pending', 'dead')", (subscription_id,))
        return cur.rowcount

    # -- what the notify step needs -------------------------------------------------------------
    def for_act(self, act_id: str, *, created_by: dt.datetime | None = None) -> list[Subscription]:
        """The subscriptions of an act, created at or before ``created_by`` (a publication's time)."""
        subs = self.list(act_id=act_id)
        return subs if created_by is None else [s for s in subs if s.created_at <= created_by]

    def secret_of(self, subscription_id: str) -> str | None:
        """The signing secret (None once the subscription is deleted). Never log it."""
        row = self.conn.execute("SELECT secret FROM subscriptions WHERE id = ?", (subscription_id,)).fetchone()
        return row["secret"] if row else None


# module-level functions: what the HTTP layer calls


def create_subscription(layout: Layout, **request) -> Created:
    """Create a subscription (keyword arguments of :meth:`SubscriptionStore.create`).
    :class:`InvalidSubscription` when the request is not valid, :class:`UnknownTarget` (a subclass)
    when its act or unit is not there."""
    store = SubscriptionStore(layout)
    try:
        return store.create(**request)
    finally:
        store.close()


def list_subscriptions(layout: Layout, *, owner: str | None = None, act_id: str | None = None) -> list[Subscription]:
    store = SubscriptionStore(layout)
    try:
        return store.list(owner=owner, act_id=act_id)
    finally:
        store.close()


def get_subscription(layout: Layout, subscription_id: str, *, owner: str | None = None) -> Subscription:
    """:class:`SubscriptionNotFound` when there is none (for that owner)."""
    store = SubscriptionStore(layout)
    try:
        return store.get(subscription_id, owner=owner)
    finally:
        store.close()


def delete_subscription(layout: Layout, subscription_id: str, *, owner: str | None = None) -> int:
    """Delete it and cancel its undelivered events; :class:`SubscriptionNotFound` when there is none."""
    store = SubscriptionStore(layout)
    try:
        return store.delete(subscription_id, owner=owner)
    finally:
        store.close()
