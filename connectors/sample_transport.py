"""An offline API emulator put behind ``PoliteHttpClient`` as an in-process httpx transport.

Why shared: each connector's offline source is an emulator of its live API with one method,
``respond(path, args, base_url) -> Reply``; turning that into what the HTTP client sees must be
the same for all of them, or the offline default would stop exercising the client's own checks.
In particular the body goes out as a byte *stream* with its ``Content-Length``, as off a socket.
"""

from __future__ import annotations

from typing import Mapping, Protocol

import httpx


class _Reply(Protocol):  # each emulator's frozen ``Reply`` (its own default content type)
    @property
    def status(self) -> int: ...

    @property
    def body(self) -> bytes: ...

    @property
    def content_type(self) -> str: ...


class ApiEmulator(Protocol):
    def respond(self, path: str, args: Mapping[str, str], base_url: str) -> _Reply: ...


def emulator_transport(emulator: ApiEmulator) -> httpx.MockTransport:
    """An httpx transport answering every GET with ``emulator.respond`` (looked up per request)."""

    def handle(request: httpx.Request) -> httpx.Response:
        url = request.url
        base = str(url.copy_with(query=None, fragment=None))
        reply = emulator.respond(url.path, dict(url.params), base)
        # a byte *stream*, as off a socket: the client checks bytes received against
        # Content-Length, and a response built from ``content=`` reports none received
        return httpx.Response(reply.status, stream=httpx.ByteStream(reply.body),
                              headers={"Content-Type": reply.content_type,
                                       "Content-Length": str(len(reply.body))})

    return httpx.MockTransport(handle)
