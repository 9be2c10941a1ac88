"""A polite, resilient HTTP GET client for public legal-data APIs.

Why: the ELI API is a shared public service. We identify ourselves (User-Agent), never hammer it
(min interval between requests), back off on 429/5xx/transport errors, and avoid re-downloading
unchanged PDFs (ETag / Last-Modified conditional requests). A body shorter than announced is an
error, never a "successful" half PDF.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit, urlunsplit

import httpx

from core.atomic import atomic_write_json

log = logging.getLogger(__name__)

# Transport failures worth another try: timeouts, resets/refused connections, truncated bodies.
_RETRYABLE_EXC = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


@dataclass(frozen=True)
class HttpResult:
    """One completed GET. ``content`` is empty when ``not_modified`` (HTTP 304)."""

    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    not_modified: bool = False
    attempts: int = 1


class HttpFetchError(Exception):
    """A GET that did not produce a usable response (after retries, or a non-retryable status)."""

    def __init__(self, url: str, attempts: int, status: int | None, reason: str,
                 *, retryable: bool = True) -> None:
        self.url = url
        self.attempts = attempts
        self.status = status
        self.reason = reason
        self.retryable = retryable
        last = f"HTTP {status} {reason}".strip() if status is not None else reason
        what = "gave up after" if retryable else "failed (not retryable) after"
        super().__init__(f"GET {redact_url(url)} {what} {attempts} attempt(s); last: {last}")


class TruncatedBodyError(httpx.RemoteProtocolError):
    """Received fewer/more body bytes than Content-Length announced (treated as transport error)."""


def redact_url(url: str) -> str:
    """Drop ``user:password@`` from a URL before it reaches logs or exception messages."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds to wait (delta-seconds or an HTTP date); None if absent/garbage."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())


class RateLimiter:
    """Thread-safe minimum interval between request starts.

    Each caller reserves the next free slot under a lock and sleeps outside it, so concurrent
    threads are spaced ``min_interval_s`` apart without serialising the requests themselves.
    """

    def __init__(self, min_interval_s: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.min_interval_s = max(0.0, min_interval_s)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_slot: float | None = None

    def wait(self) -> float:
        """Block until this caller may start a request; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            start = now if self._next_slot is None else max(now, self._next_slot)
            self._next_slot = start + self.min_interval_s
        delay = start - now
        if delay > 0:
            self._sleep(delay)
        return delay


class ValidatorCache:
    """ETag / Last-Modified per URL, persisted as JSON (atomic writes; a corrupt file is ignored)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, str]] = self._load()

    def _load(self) -> dict[str, dict[str, str]]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            # The cache only saves bandwidth; losing it is safe, crashing the pipeline is not.
            log.warning("ignoring unreadable HTTP cache %s: %s", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, url: str) -> dict[str, str]:
        with self._lock:
            return dict(self._entries.get(url, {}))

    def update(self, url: str, headers: Mapping[str, str]) -> None:
        entry = {k: v for k, v in (("etag", headers.get("etag")),
                                   ("last_modified", headers.get("last-modified"))) if v}
        with self._lock:
            if entry:
                entry["stored_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                self._entries[url] = entry
            elif self._entries.pop(url, None) is None:
                return
            self._save()

    def forget(self, url: str) -> None:
        with self._lock:
            if self._entries.pop(url, None) is not None:
                self._save()

    def _save(self) -> None:
        if self.path is not None:
            atomic_write_json(self.path, self._entries)


@dataclass
class PoliteHttpClient:
    """Synchronous GET client: UA, timeout, rate limit, retries with backoff, conditional GETs.

    ``max_retries`` counts retries after the first attempt (attempts = max_retries + 1).
    ``sleep``/``clock``/``rng`` are injectable so tests run instantly and deterministically.
    """

    user_agent: str
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    min_interval_s: float = 1.0
    cache_path: Path | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    default_headers: Mapping[str, str] = field(default_factory=dict)
    transport: httpx.BaseTransport | None = None

    def __post_init__(self) -> None:
        if not self.user_agent.strip():
            raise ValueError("a descriptive User-Agent is required")
        self._limiter = RateLimiter(self.min_interval_s, clock=self.clock, sleep=self.sleep)
        self._cache = ValidatorCache(self.cache_path)
        headers = {"User-Agent": self.user_agent, **self.default_headers}
        self._client = httpx.Client(timeout=self.timeout_s, headers=headers,
                                    follow_redirects=True, transport=self.transport)

    @classmethod
    def from_settings(cls, settings: Any, *, cache_path: Path | None = None,
                      **overrides: Any) -> "PoliteHttpClient":
        """Build from ``core.settings.Settings`` (cache usually ``Layout.raw / 'http_cache.json'``)."""
        kwargs: dict[str, Any] = dict(
            user_agent=settings.user_agent, timeout_s=settings.http_timeout_s,
            max_retries=settings.http_max_retries, backoff_base_s=settings.http_backoff_base_s,
            backoff_max_s=settings.http_backoff_max_s, min_interval_s=settings.http_min_interval_s,
            cache_path=cache_path)
        kwargs.update(overrides)
        return cls(**kwargs)

    # -- public API ---------------------------------------------------------------------------

    def get(self, url: str, *, headers: Mapping[str, str] | None = None,
            conditional: bool = True) -> HttpResult:
        """GET ``url``; with ``conditional`` send cached validators and report 304 as not_modified.

        Raises ``HttpFetchError`` on non-retryable statuses (e.g. 404) or when retries run out.
        """
        req_headers = dict(headers or {})
        validators = self._cache.get(url) if conditional else {}
        if validators.get("etag"):
            req_headers["If-None-Match"] = validators["etag"]
        if validators.get("last_modified"):
            req_headers["If-Modified-Since"] = validators["last_modified"]

        attempts = self.max_retries + 1
        status: int | None = None
        reason = ""
        for attempt in range(1, attempts + 1):
            self._limiter.wait()
            try:
                resp = self._client.get(url, headers=req_headers)
                if resp.is_success:
                    _check_complete(resp)
            except _RETRYABLE_EXC as exc:
                status, reason = None, f"{type(exc).__name__}: {exc}"
                delay = self._backoff(attempt)
            else:
                status, reason = resp.status_code, resp.reason_phrase
                if resp.status_code == 304 and validators:
                    return HttpResult(url, 304, _safe_headers(resp.headers), b"", True, attempt)
                if resp.is_success:
                    self._cache.update(url, resp.headers)
                    return HttpResult(url, resp.status_code, _safe_headers(resp.headers),
                                      resp.content, False, attempt)
                if not (resp.status_code == 429 or resp.status_code >= 500):
                    raise HttpFetchError(url, attempt, status, reason, retryable=False)
                retry_after = parse_retry_after(resp.headers.get("retry-after"))
                delay = (min(retry_after, self.backoff_max_s) if retry_after is not None
                         else self._backoff(attempt))
            if attempt == attempts:
                break
            log.warning("GET %s attempt %d/%d failed (%s); retrying in %.2fs",
                        redact_url(url), attempt, attempts, status or reason, delay)
            self.sleep(delay)
        raise HttpFetchError(url, attempts, status, reason)

    def forget(self, url: str) -> None:
        """Drop cached validators for ``url`` (e.g. when the caller lost the stored body)."""
        self._cache.forget(url)

    def cached_validators(self, url: str) -> dict[str, str]:
        return self._cache.get(url)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PoliteHttpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter in [cap/2, cap]: spreads retries, keeps a floor."""
        cap = min(self.backoff_max_s, self.backoff_base_s * (2 ** (attempt - 1)))
        return cap * (0.5 + 0.5 * self.rng.random())


def _check_complete(resp: httpx.Response) -> None:
    """Compare raw bytes received with Content-Length (h11 usually catches this first)."""
    declared = resp.headers.get("content-length")
    if declared is None or "," in declared:
        return
    try:
        expected = int(declared)
    except ValueError:
        return
    if resp.num_bytes_downloaded != expected:
        raise TruncatedBodyError(
            f"body length mismatch: received {resp.num_bytes_downloaded} bytes, "
            f"Content-Length {expected}")


def _safe_headers(headers: httpx.Headers) -> dict[str, str]:
    """Response headers as a plain dict (lower-case keys) without cookies/credentials."""
    return {k: v for k, v in headers.items() if k not in _SECRET_HEADERS}
