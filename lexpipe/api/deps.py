"""The services a request uses, held by the app (``app.state``) so every router reads the same ones.

The factory may be given them (tests, ``lexpipe serve``) or not: then they are opened on first use
from the settings (``LEXPIPE_HOME``), so an app that only answers ``/units`` never opens a search
index, and one that only searches never reads a corpus table.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from fastapi import Request

from pipelines.reads import ReadService
from pipelines.retrieval.service import SearchService

if TYPE_CHECKING:
    from pipelines.resolver import CitationResolver

_lock = threading.Lock()


def get_search(request: Request) -> SearchService:
    state = request.app.state
    if state.search is None:
        with _lock:
            if state.search is None:
                from core.settings import get_settings

                state.search = SearchService.from_settings(get_settings())
    return state.search


def get_reads(request: Request) -> ReadService:
    state = request.app.state
    if state.reads is None:
        with _lock:
            if state.reads is None:
                from core.settings import get_settings

                state.reads = ReadService.at(get_settings().home)
    return state.reads


def get_resolver(request: Request) -> "CitationResolver":
    """One citation resolver per app, over the app's read service (its per-version indexes stay warm
    between requests); rebuilt if the read service was replaced."""
    from pipelines.resolver import CitationResolver

    reads = get_reads(request)
    state = request.app.state
    resolver = getattr(state, "resolver", None)
    if resolver is None or resolver.reads is not reads:
        with _lock:
            resolver = getattr(state, "resolver", None)
            if resolver is None or resolver.reads is not reads:
                resolver = state.resolver = CitationResolver(reads)
    return resolver


def get_layout(request: Request):
    """The home the change feed and the subscriptions live in: the app's ``layout``, else the read
    service's home, else ``LEXPIPE_HOME``."""
    from core.layout import Layout

    state = request.app.state
    if state.layout is None:
        with _lock:
            if state.layout is None:
                if state.reads is not None:
                    state.layout = Layout(state.reads.home)
                else:
                    from core.settings import get_settings

                    state.layout = Layout(get_settings().home)
    return state.layout
