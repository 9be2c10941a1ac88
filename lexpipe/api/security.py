"""The API's hardening: API keys for writes, rate limits, a body size limit and the webhook URL guard.

* **API keys** — writes (``/subscriptions``, ``/events``) need ``Authorization: Bearer <key>`` or
  ``X-API-Key: <key>``. Keys are configured as sha256 digests only (``LEXPIPE_API_KEY_HASHES``,
  ``LEXPIPE_API_KEY_HASHES_FILE``; ``lexpipe api-key`` prints a new key and its digest), compared in
  constant time. The digest is the key's identity: a subscription's ``owner``. A key is never logged,
  echoed in an answer or kept in memory beyond the request.
* **Rate limits** — token buckets in memory, per client IP and per key (when one is given), one pair
  for reads and a tighter one for writes; an empty bucket answers 429 with ``Retry-After``.
* **Body size** — a body larger than ``LEXPIPE_API_MAX_BODY_BYTES`` is refused with 413, whether it
  announces its length or not.
* **Webhook URLs** — a subscription URL whose host is (or resolves to) a private, loopback,
  link-local (cloud metadata), multicast, reserved or unspecified address is refused unless
  ``LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS`` names it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from fastapi import HTTPException, Request

from core.settings import Settings

KEY_PREFIX = "lxp_"
_HEX64 = frozenset("0123456789abcdef")
WRITE_PREFIXES = ("/subscriptions", "/events")
METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
                            "instance-data.ec2.internal"})


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


def require_key(request: Request) -> str:
    """Dependency of the write endpoints: the owner (the key's digest), else 401."""
    keys: KeyRing = request.app.state.security.keys
    owner = keys.owner(presented_key(request.headers))
    if owner is None:
        detail = ("an API key is required: Authorization: Bearer <key> or X-API-Key: <key>"
                  if presented_key(request.headers) is None else "invalid API key")
        raise HTTPException(status_code=401, detail=detail, headers={"WWW-Authenticate": "Bearer"})
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


def _networks(text: str) -> list:
    return [ipaddress.ip_network(item.strip(), strict=False) for item in text.split(",") if item.strip()]


def _blocked(ip) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
            or ip.is_unspecified or not ip.is_global)


class UrlGuard:
    """Refuses webhook URLs that point inside (SSRF): see the module docstring."""

    def __init__(self, allow: list, resolve: Callable[[str], list[str]] | None = None):
        self.allow = allow
        self.resolve = resolve or _resolve

    def check(self, url: str) -> str | None:
        """None when the URL may be used, else why not."""
        try:
            host = urlsplit(url).hostname
        except ValueError:
            return None  # not a URL: the store's validation says so
        if not host:
            return None
        host = host.rstrip(".").lower()
        if host in METADATA_HOSTS or host == "localhost" or host.endswith(".localhost"):
            # always: the allow list names addresses (http://127.0.0.1:…), never these names
            return f"url host {host!r} is internal; webhooks must point at a public address"
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in self.resolve(host)]
            except OSError:
                return f"url host {host!r} does not resolve"
            if not addresses:
                return f"url host {host!r} does not resolve"
        for ip in addresses:
            if _blocked(ip) and not any(ip in n for n in self.allow if n.version == ip.version):
                return (f"url points at a private, loopback, link-local or reserved address ({ip}); webhooks must "
                        f"point at a public address")
        return None


def _resolve(host: str) -> list[str]:
    return sorted({info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})


# ----------------------------------------------------------------------------------------------
# what the app holds, and the middleware


@dataclass
class Security:
    keys: KeyRing
    reads: TokenBuckets
    writes: TokenBuckets
    max_body: int
    urls: UrlGuard

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] | None = None,
                      resolve: Callable[[str], list[str]] | None = None) -> "Security":
        clock = clock or time.monotonic
        return cls(keys=KeyRing.from_settings(settings),
                   reads=TokenBuckets(settings.api_rate_read_per_s, settings.api_rate_read_burst, clock),
                   writes=TokenBuckets(settings.api_rate_write_per_s, settings.api_rate_write_burst, clock),
                   max_body=settings.api_max_body_bytes,
                   urls=UrlGuard(_networks(settings.api_webhook_allow_networks), resolve))


def is_write(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in WRITE_PREFIXES)


class BodyTooLarge(HTTPException):
    """Raised while the body is read (FastAPI answers it as 413; the middleware, should it get through)."""

    def __init__(self, limit: int):
        super().__init__(status_code=413, detail=f"request body too large: the limit is {limit} bytes")


async def _send_json(send, status: int, content: dict, headers: dict[str, str] | None = None) -> None:
    body = json.dumps(content).encode()
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
            buckets = sec.writes if is_write(path) else sec.reads
            client = scope.get("client")
            names = [f"ip:{client[0] if client else '-'}"]
            owner = sec.keys.owner(presented_key(headers)) if presented_key(headers) else None
            if owner is not None:
                names.append(f"key:{owner}")
            wait = max(buckets.take(n) for n in names)
            if wait > 0:
                kind = "writes" if buckets is sec.writes else "reads"
                return await _send_json(send, 429, {"detail": f"rate limit of {kind} exceeded; retry after "
                                                              f"{math.ceil(wait)} s"},
                                        {"Retry-After": str(max(1, math.ceil(wait)))})
        limit = sec.max_body
        too_large = {"detail": f"request body too large: the limit is {limit} bytes"}
        length = headers.get("content-length")
        if length is not None:
            try:
                if int(length) > limit:
                    return await _send_json(send, 413, too_large)
            except ValueError:
                return await _send_json(send, 400, {"detail": "invalid Content-Length"})
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
            await _send_json(send, 413, too_large)
