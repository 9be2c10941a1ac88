"""Where a webhook may point: one address guard for the subscription (the API) and the delivery.

A webhook URL whose host is, or resolves to, a private, loopback, link-local (cloud metadata),
multicast, reserved or unspecified address is refused unless ``LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS``
names it; ``localhost`` and the cloud metadata host names always are.

Why the delivery checks again: a name checked when the subscription was made can resolve elsewhere
later (DNS rebinding: public at creation, ``10.0.0.7`` at delivery). :meth:`AddressGuard.addresses`
resolves a host once and checks every address; the delivery's transport
(:mod:`.transport`) then connects to exactly those checked addresses, never resolving the name a
second time (the ``Host`` header and TLS SNI keep the name). The resolver is injected, so tests never
do DNS.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Callable, Iterable
from urllib.parse import urlsplit

METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
                            "instance-data.ec2.internal"})

Resolver = Callable[[str], Iterable[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressRefused(ValueError):
    """The host is internal (by name or by address): webhooks must point at a public address."""


class HostNotFound(LookupError):
    """The host does not resolve (a DNS failure: the delivery retries it, the API refuses the URL)."""


def networks(text: str) -> list:
    """``LEXPIPE_API_WEBHOOK_ALLOW_NETWORKS``: comma-separated addresses or CIDR networks."""
    return [ipaddress.ip_network(item.strip(), strict=False) for item in text.split(",") if item.strip()]


def blocked(ip: IPAddress) -> bool:
    """Private, loopback, link-local, multicast, reserved, unspecified or otherwise not global."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
            or ip.is_unspecified or not ip.is_global)


def system_resolve(host: str) -> list[str]:
    """The host's addresses from the system resolver (``getaddrinfo``)."""
    return sorted({info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})


class AddressGuard:
    """Resolves a webhook host once and refuses it unless every address is public or allowed."""

    def __init__(self, allow: list | None = None, resolve: Resolver | None = None):
        self.allow = list(allow or [])
        self.resolve = resolve or system_resolve

    @classmethod
    def from_settings(cls, settings, resolve: Resolver | None = None) -> "AddressGuard":
        return cls(networks(settings.api_webhook_allow_networks), resolve)

    def allowed(self, ip: IPAddress) -> bool:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None and \
                any(ip.ipv4_mapped in n for n in self.allow if n.version == 4):
            return True
        return not blocked(ip) or any(ip in n for n in self.allow if n.version == ip.version)

    def addresses(self, host: str) -> list[IPAddress]:
        """The checked addresses of ``host`` (an IP literal is its own): :class:`AddressRefused` when
        the name is internal or any address is not allowed, :class:`HostNotFound` when it does not
        resolve. Resolves at most once per call."""
        name = host.strip("[]").rstrip(".").lower()
        if name in METADATA_HOSTS or name == "localhost" or name.endswith(".localhost"):
            # always: the allow list names addresses (http://127.0.0.1:…), never these names
            raise AddressRefused(f"url host {name!r} is internal; webhooks must point at a public address")
        try:
            found = [ipaddress.ip_address(name.split("%", 1)[0])]
        except ValueError:
            try:
                found = [ipaddress.ip_address(a.split("%", 1)[0]) for a in self.resolve(name)]
            except (OSError, UnicodeError) as exc:
                raise HostNotFound(f"url host {name!r} does not resolve ({type(exc).__name__})") from None
            if not found:
                raise HostNotFound(f"url host {name!r} does not resolve")
        for ip in found:
            if not self.allowed(ip):
                raise AddressRefused(f"url host {name!r} is or resolves to a private, loopback, link-local or "
                                     f"reserved address ({ip}); webhooks must point at a public address")
        return found

    def check_url(self, url: str) -> None:
        """:meth:`addresses` of the URL's host (a URL without a host is left to the store's validation)."""
        try:
            host = urlsplit(url).hostname
        except ValueError:
            return
        if host:
            self.addresses(host)
