"""The HTTP app: one FastAPI app, one router per concern, the services on ``app.state``.

Routers: search (``/search``, ``/health``), acts (``/acts…``: versions, toc, diff), units
(``/units/{id}`` at a date, history), export (``/acts/{act}/versions/{v}/download``). A new concern is
one module with a ``router`` and one ``include_router`` line below.

Errors: a read the corpus cannot answer is 404 (unknown act, version, unit, table) or 422 (malformed
or uncovered date, a version pair that cannot be compared) with ``{"detail": message}``; invalid
parameters 422 (``{"error": "invalid request", "detail": [...]}``); anything unexpected is logged and
answered 500 without internals.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from lexpipe.api import acts, export, search, units
from pipelines.reads import InvalidRead, NotFound, ReadError, ReadService
from pipelines.retrieval.service import SearchService

log = logging.getLogger("lexpipe.api")

DESCRIPTION = """Search, point-in-time reads and bulk export of the lexpipe corpus.

* `/search`: ranked articles for a query (hybrid, BM25, dense, gAIus), `/health`: what is served.
* `/acts`, `/acts/{act}/versions`, `/acts/{act}/toc?as_of=`, `/acts/{act}/diff?from=&to=`: acts, their
  held versions, the hierarchy at a date, the changes between two versions.
* `/units/{unit_id}?as_of=`: a unit's wording in force at a date; `/units/{unit_id}/history`: its changes.
* `/acts/{act}/versions/{v}/download?format=parquet|jsonl&table=…`: a published table (ETag, byte ranges).
"""


def create_app(service: SearchService | None = None, *, reads: ReadService | None = None) -> FastAPI:
    """The app over ``service`` (search) and ``reads`` (the corpus); either, when not given, is opened
    from the settings on first use."""
    app = FastAPI(title="lexpipe", version="1", description=DESCRIPTION)
    app.state.search = service
    app.state.reads = reads
    _error_handlers(app)
    app.include_router(search.router)
    app.include_router(acts.router)
    app.include_router(units.router)
    app.include_router(export.router)
    return app


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"error": "invalid request", "detail": exc.errors()})

    @app.exception_handler(ReadError)
    async def _unreadable(_: Request, exc: ReadError) -> JSONResponse:
        status = 404 if isinstance(exc, NotFound) else 422 if isinstance(exc, InvalidRead) else 400
        return JSONResponse(status_code=status, content={"detail": str(exc)})

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error answering %s %s", request.method, request.url.path)
        return JSONResponse(status_code=500, content={"detail": "internal error (logged)"})
