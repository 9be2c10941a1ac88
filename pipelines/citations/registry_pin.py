"""One registry for the length of one call: ``with pinned(): …`` reads ``schemas.acts.registry()`` once.

Why: the citation code asks for the registry at every lookup (so a registry set for a test or a run
counts), and ``registry()`` is no longer a bare ``stat``: with issue 24 it stats the curated file and
the home's catalogues and reads the settings for the home. Measured on 94 SAOS requests (2 cores, load
~14): 4,050 ``registry()`` calls cost 18 s of 42 s. Extracting one text or resolving one request
pins the registry once (:func:`pinned`); everything below asks :func:`current`. Outside a pinned call
:func:`current` is ``registry()`` itself. A ``ContextVar``: threads and tasks each see their own pin.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from schemas.acts import ActRegistry, registry

_PIN: ContextVar[ActRegistry | None] = ContextVar("lexpipe_registry_pin", default=None)


def current() -> ActRegistry:
    """The pinned registry, else ``registry()``."""
    reg = _PIN.get()
    return reg if reg is not None else registry()


@contextmanager
def pinned() -> Iterator[ActRegistry]:
    """Pin ``registry()`` for the block (nested blocks keep the outer pin)."""
    reg = _PIN.get()
    if reg is not None:
        yield reg
        return
    token = _PIN.set(registry())
    try:
        yield _PIN.get()
    finally:
        _PIN.reset(token)
