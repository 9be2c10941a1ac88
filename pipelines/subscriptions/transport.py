"""The delivery's HTTP transport: connect only to addresses the guard checked at connect time.

httpx resolves a host inside the socket connect. A guard that checks the name first and lets the
client resolve it again is open to DNS rebinding (the second answer can be ``127.0.0.1``). Here the
connection pool's network backend is replaced: its ``connect_tcp`` resolves the host once through
:class:`~pipelines.subscriptions.addresses.AddressGuard`, refuses it unless every address is allowed,
and opens the socket to exactly a checked address. Everything above the socket is untouched: the
request still names the host (``Host`` header), and TLS still sends it as SNI and verifies the
certificate against it.

No proxies (``trust_env=False``): a proxy would resolve the name itself, out of the guard's sight.
"""

from __future__ import annotations

import ssl
import typing

import httpcore
import httpx

from pipelines.subscriptions.addresses import AddressGuard


class GuardedBackend(httpcore.NetworkBackend):
    """``httpcore``'s sync backend, connecting to the guard's checked addresses of a host."""

    def __init__(self, guard: AddressGuard):
        self.guard = guard
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: typing.Iterable | None = None) -> httpcore.NetworkStream:
        addresses = self.guard.addresses(host)  # AddressRefused / HostNotFound propagate to the caller
        error: Exception | None = None
        for ip in addresses:  # the first that answers; each one checked
            try:
                return self._backend.connect_tcp(str(ip), port, timeout=timeout, local_address=local_address,
                                                 socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: typing.Iterable | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks are delivered over TCP only")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """:class:`httpx.HTTPTransport` whose connections go through :class:`GuardedBackend`.
    ``verify``: as httpx's (tests pass an ``ssl.SSLContext`` trusting their own CA)."""

    def __init__(self, guard: AddressGuard, *, verify: ssl.SSLContext | bool = True,
                 limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)):
        super().__init__(verify=verify, trust_env=False, limits=limits)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections, max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry, network_backend=GuardedBackend(guard))


def guarded_client(guard: AddressGuard, *, timeout_s: float, user_agent: str,
                   verify: ssl.SSLContext | bool = True) -> httpx.Client:
    """The client every delivery attempt posts with: guarded transport, no redirects, no proxies."""
    return httpx.Client(transport=GuardedTransport(guard, verify=verify), timeout=httpx.Timeout(timeout_s),
                        follow_redirects=False, trust_env=False, headers={"User-Agent": user_agent})
