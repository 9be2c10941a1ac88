"""The HTTP app: one FastAPI app, one router per concern, the services on ``app.state``.

Routers: search (``/search``, ``/health``), acts (``/acts…``: versions, toc, diff), units
(``/units/{id}`` at a date, history), export (``/acts/{act}/versions/{v}/download``), changes (the change
feed: ``/changes``, ``/changes.atom``, ``/changes/{act}/{v}``), subscriptions (webhooks: ``/subscriptions…``,
``/events/{id}…``; API key required). A new concern is one module with a ``router`` and one
``include_router`` line below.

Hardening (:mod:`lexpipe.api.security`, ``LEXPIPE_API_*`` settings): API keys for writes, rate limits per
valid key, per client IP, and for failed authentication apart (429 + Retry-After), a body size limit
(413), CORS only for configured origins.

Contract: parameters are typed once (:mod:`lexpipe.api.params`: ``format: date``, id and act patterns)
and every refusal has one shape and one status per kind of fault (:mod:`lexpipe.api.errors`:
``{"status", "field", "message", "detail"}``; 404 for what is not there, 422 for malformed input, …);
anything unexpected is logged and answered 500 without internals.
"""

from __future__ import annotations

from typing import Callable

import httpx
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from core.layout import Layout
from core.settings import Settings, get_settings
from lexpipe.api import acts, changes, citations, errors, export, search, subscriptions, units
from lexpipe.api.models import RATE_LIMITED
from lexpipe.api.security import HardeningMiddleware, Security
from lexpipe.web.router import STATIC_DIR
from lexpipe.web.router import router as pages
from pipelines.reads import ReadService
from pipelines.retrieval.service import SearchService

DESCRIPTION = """Search, point-in-time reads and bulk export of the lexpipe corpus.

* `/search`: ranked articles for a query (hybrid, BM25, dense, gAIus), `/health`: what is served.
* `/acts`, `/acts/{act}/versions`, `/acts/{act}/toc?as_of=`, `/acts/{act}/diff?from=&to=`: acts, their
  held versions, the hierarchy at a date, the changes between two versions.
* `/units/{unit_id}?as_of=`: a unit's wording in force at a date; `/units/{unit_id}/history`: its changes.
* `POST /citations/resolve` (`text`, `as_of`, `language`): each statute citation of a text, the units it names,
  their wording at the date and how exactly each matched (exact, partial, not_found, ambiguous, …).
* `/acts/{act}/versions/{v}/download?format=parquet|jsonl&table=…`: a published table (ETag, byte ranges).
* `/changes?since=&act=&limit=`, `/changes.atom`, `/changes/{act}/{version}`: the change feed (JSON, Atom).
* `/subscriptions`, `/events/{event_id}`: webhook subscriptions, a signed test event, their dead letters and
  delivery log. These need an API key (`Authorization: Bearer <key>` or `X-API-Key`); a key sees only its
  own subscriptions.

Every refusal is `{"status", "field", "message", "detail"}`: 404 for anything named that is not there (an
unknown act, anywhere), 422 for malformed input (a date that is no real YYYY-MM-DD day, an id off its
pattern). Every client is rate-limited (429 with `Retry-After`); request bodies are limited in size (413).
"""


def create_app(service: SearchService | None = None, *, reads: ReadService | None = None,
               layout: Layout | None = None, settings: Settings | None = None,
               clock: Callable[[], float] | None = None,
               resolve: Callable[[str], list[str]] | None = None,
               webhook_client: httpx.Client | None = None) -> FastAPI:
    """The app over ``service`` (search), ``reads`` (the corpus) and ``layout`` (the change feed and
    subscriptions; default: the reads' home); each, when not given, is opened from the settings on
    first use. ``settings``: the ``LEXPIPE_API_*`` hardening and ``LEXPIPE_WEBHOOK_*`` delivery
    (default: the environment); ``clock`` (monotonic seconds) drives the rate limits, ``resolve``
    (host → addresses) the webhook address guard at subscription and at delivery, ``webhook_client``
    the HTTP client redeliveries and test events are posted with (default: the guarded one) — tests
    inject them."""
    settings = settings or get_settings()
    app = FastAPI(title="lexpipe", version="1", description=DESCRIPTION)
    app.state.search = service
    app.state.reads = reads
    app.state.layout = layout
    app.state.settings = settings
    app.state.resolve = resolve
    app.state.webhook_client = webhook_client
    app.state.security = Security.from_settings(settings, clock=clock, resolve=resolve)
    errors.install(app)
    for module in (search, acts, units, export, changes, subscriptions, citations):
        app.include_router(module.router, responses=RATE_LIMITED)
    # the HTML pages (/ → /ui/search, /ui/units/{id}; lexpipe.web), hidden from the OpenAPI schema
    app.include_router(pages)
    app.mount("/ui/static", StaticFiles(directory=STATIC_DIR), name="ui-static")
    app.add_middleware(HardeningMiddleware, security=app.state.security)
    origins = [o.strip() for o in settings.api_cors_origins.split(",") if o.strip()]
    if origins:
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type"],
                           expose_headers=["Retry-After", "Link", "ETag", "Content-Range"], max_age=600)
    return app
