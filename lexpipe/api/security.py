"""The API's hardening: API keys for writes, rate limits, a body size limit and the webhook URL guard.

* **API keys** — writes (``/subscriptions``, ``/events``) need ``Authorization: Bearer <key>`` or
  ``X-API-Key: <key>``. Keys are configured as sha256 digests only (``LEXPIPE_API_KEY_HASHES``,
  ``LEXPIPE_API_KEY_HASHES_FILE``; ``lexpipe api-key`` prints a new key and its digest), compared in
  constant time. The digest is the key's identity: a subscription's ``owner``. A key is never logged,
  echoed in an answer or kept in memory beyond the request.
* **Rate limits** — token buckets in memory, a tighter pair for writes than for reads: a request
  with a valid key draws on that key's bucket only (wherever it comes from); one without a key on its
  client IP's; one with a wrong key (or a write without a key: it will be refused) on its IP's
  *failed-authentication* bucket, which nothing else draws on. So guessing keys from an address is
  throttled, and never throttles a valid key used from the same address (a NAT, a proxy). An empty
  bucket answers 429 with ``Retry-After``.
* **Body size** — a body larger than ``LEXPIPE_API_MAX_BODY_BYTES`` is refused with 413, whether it
  announces its length or not.
* **Webhook URLs** — a subscription URL whose host is (or resolves to) a private, loopback,
  link-local (cloud metadata), multicast, reserved or unspecified address is refused (403) unless
  ``LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS`` names it (:mod:`pipelines.subscriptions.addresses`; the
  delivery checks the address again when it connects).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from core.settings import Settings
from lexpipe.api import errors
from pipelines.subscriptions.addresses import AddressGuard, AddressRefused, HostNotFound, networks

KEY_PREFIX = "lxp_"
_HEX64 = frozenset("0123456789abcdef")
WRITE_PREFIXES = ("/subscriptions", "/events")


# ----------------------------------------------------------------------------------------------
# API keys


def hash_key(key: str) -> str:
    """The sha256 hex digest a key is configured (and owns subscriptions) by."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh random key (256 bits) and its digest."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    return key, hash_key(key)


def _digests(text: str) -> list[str]:
    out = []
    for item in text.replace("\n", ",").split(","):
        item = item.split("#", 1)[0].strip().lower().removeprefix("sha256:")
        if not item:
            continue
        if len(item) != 64 or not set(item) <= _HEX64:
            raise ValueError("an API key digest must be 64 hex characters (sha256; `lexpipe api-key` prints one)")
        out.append(item)
    return out


class KeyRing:
    """The configured key digests; :meth:`owner` is the digest of a presented key, or None."""

    def __init__(self, digests: list[str]):
        self._digests = tuple(dict.fromkeys(digests))

    @classmethod
    def from_settings(cls, settings: Settings) -> "KeyRing":
        digests = _digests(settings.api_key_hashes)
        if settings.api_key_hashes_file is not None:
            digests += _digests(Path(settings.api_key_hashes_file).read_text(encoding="utf-8"))
        return cls(digests)

    def __len__(self) -> int:
        return len(self._digests)

    def owner(self, key: str | None) -> str | None:
        if not key:
            return None
        digest = hash_key(key).encode()
        match = None
        for d in self._digests:  # every digest is compared, in constant time each
            if hmac.compare_digest(digest, d.encode()):
                match = d
        return match


def presented_key(headers) -> str | None:
    """The key of ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (None: neither)."""
    auth = headers.get("authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    key = headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


# declared for the OpenAPI schema (either scheme will do); the key itself is read by presented_key
_BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="Authorization: Bearer <API key>")
_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey", description="X-API-Key: <API key>")


def require_key(request: Request, _b: HTTPAuthorizationCredentials | None = Depends(_BEARER),
                _h: str | None = Depends(_HEADER)) -> str:
    """Dependency of the write endpoints: the owner (the key's digest), else 401."""
    keys: KeyRing = request.app.state.security.keys
    owner = keys.owner(presented_key(request.headers))
    if owner is None:
        detail = ("an API key is required: Authorization: Bearer <key> or X-API-Key: <key>"
                  if presented_key(request.headers) is None else "invalid API key")
        raise errors.ApiError(401, detail, "Authorization", {"WWW-Authenticate": "Bearer"})
    return owner


# ----------------------------------------------------------------------------------------------
# rate limits


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class TokenBuckets:
    """Token buckets by name: ``rate`` tokens a second up to ``burst``; :meth:`take` is 0 when a token
    was taken, else the seconds until one is there. ``clock``: monotonic seconds (tests inject one)."""

    rate: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    max_buckets: int = 100_000
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> float:
        now = self.clock()
        with self._lock:
            b = self._buckets.get(name)
            if b is None:
                if len(self._buckets) >= self.max_buckets:
                    self._prune(now)
                b = self._buckets[name] = _Bucket(float(self.burst), now)
            b.tokens = min(float(self.burst), b.tokens + max(0.0, now - b.at) * self.rate)
            b.at = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return 0.0
            return (1.0 - b.tokens) / self.rate

    def _prune(self, now: float) -> None:
        full = [k for k, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]
        for k in full:
            del self._buckets[k]
        if len(self._buckets) >= self.max_buckets:
            self._buckets.clear()


# ----------------------------------------------------------------------------------------------
# webhook URLs


class UrlGuard:
    """Refuses webhook URLs that point inside (SSRF): :class:`AddressGuard` at subscription time."""

    def __init__(self, allow: list, resolve: Callable[[str], list[str]] | None = None):
        self.guard = AddressGuard(allow, resolve)
        self.allow, self.resolve = self.guard.allow, self.guard.resolve

    def check(self, url: str) -> tuple[int, str] | None:
        """None when the URL may be used, else (status, why): 403 for an internal address, 404 for a
        host that does not resolve."""
        try:
            self.guard.check_url(url)
        except AddressRefused as exc:
            return 403, str(exc)
        except HostNotFound as exc:
            return 404, str(exc)
        return None


# ----------------------------------------------------------------------------------------------
# what the app holds, and the middleware


@dataclass
class Security:
    keys: KeyRing
    reads: TokenBuckets
    writes: TokenBuckets
    auth_failures: TokenBuckets
    max_body: int
    urls: UrlGuard

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] | None = None,
                      resolve: Callable[[str], list[str]] | None = None) -> "Security":
        clock = clock or time.monotonic
        return cls(keys=KeyRing.from_settings(settings),
                   reads=TokenBuckets(settings.api_rate_read_per_s, settings.api_rate_read_burst, clock),
                   writes=TokenBuckets(settings.api_rate_write_per_s, settings.api_rate_write_burst, clock),
                   auth_failures=TokenBuckets(settings.api_rate_auth_fail_per_s, settings.api_rate_auth_fail_burst,
                                              clock),
                   max_body=settings.api_max_body_bytes,
                   urls=UrlGuard(networks(settings.api_webhook_allow_networks), resolve))

    def bucket(self, *, path: str, client: str, key: str | None) -> tuple[TokenBuckets, str, str]:
        """Which bucket a request draws on: (buckets, name, what it limits, for the 429's message)."""
        write = is_write(path)
        owner = self.keys.owner(key) if key else None
        if owner is not None:  # a valid key: its own limit, wherever it comes from
            return (self.writes if write else self.reads), f"key:{owner}", "writes" if write else "reads"
        if key is not None or write:  # a wrong key, or a write that will be refused for want of one
            return self.auth_failures, f"ip:{client}", "requests without a valid API key"
        return self.reads, f"ip:{client}", "reads"


def is_write(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in WRITE_PREFIXES)


class BodyTooLarge(HTTPException):
    """Raised while the body is read (an HTTPException: FastAPI lets it through its body parsing, and
    the app answers it as 413; the middleware does, should it get through)."""

    def __init__(self, limit: int):
        super().__init__(status_code=413, detail=f"request body too large: the limit is {limit} bytes")


async def _send_json(send, status: int, message: str, field: str | None = None,
                     headers: dict[str, str] | None = None) -> None:
    body = errors.raw(status, message, field)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class HardeningMiddleware:
    """Rate limits (429 + Retry-After) and the body size limit (413), before any route runs."""

    def __init__(self, app, security: Security):
        self.app = app
        self.security = security

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        sec = self.security
        path = scope.get("path", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope.get("method") != "OPTIONS":
            client = scope.get("client")
            buckets, name, kind = sec.bucket(path=path, client=client[0] if client else "-",
                                             key=presented_key(headers))
            wait = buckets.take(name)
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                return await _send_json(send, 429, f"rate limit of {kind} exceeded; retry after {seconds} s",
                                        None, {"Retry-After": str(seconds)})
        limit = sec.max_body
        too_large = f"request body too large: the limit is {limit} bytes"
        length = headers.get("content-length")
        if length is not None:
            try:
                if int(length) > limit:
                    return await _send_json(send, 413, too_large, "body")
            except ValueError:
                return await _send_json(send, 400, "invalid Content-Length header", "Content-Length")
        seen = 0
        started = False

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if started:
                raise
            await _send_json(send, 413, too_large, "body")
