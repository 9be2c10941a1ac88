"""What a read can refuse, in two families the HTTP layer maps to status codes.

``NotFound`` (404): the act, version, unit or table is not there. ``InvalidRead`` (422): the request
is well-formed enough to route but cannot be answered as asked — a malformed date, a date before the
oldest held version, a reversed version pair, an unsatisfiable byte range. Every message names what
was asked and what there is, so a consumer can correct the request without reading the code.
"""

from __future__ import annotations


class ReadError(Exception):
    """Base of every refusal of the read layer; ``str(exc)`` is the message for the consumer."""


class NotFound(ReadError):
    """Something named in the request is not held (HTTP 404)."""


class UnknownAct(NotFound):
    pass


class UnknownVersion(NotFound):
    pass


class UnknownUnit(NotFound):
    pass


class UnknownTable(NotFound):
    pass


class InvalidRead(ReadError):
    """The request cannot be answered as asked (HTTP 422)."""


class BadDate(InvalidRead):
    pass


class NotCovered(InvalidRead):
    """The date is before the oldest held version: lexpipe does not know the text in force then."""


class BadVersionPair(InvalidRead):
    pass


class BadRange(InvalidRead):
    """An HTTP byte range that cannot be served (HTTP 416 at the API, not 422)."""

    def __init__(self, message: str, size: int):
        super().__init__(message)
        self.size = size
