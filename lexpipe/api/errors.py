"""One error shape and one status per kind of fault, for every endpoint (docs/api.md#errors).

Every refusal is JSON ``{"status": 422, "field": "as_of", "message": "…", "detail": "…"}``: the
status again (so a logged body says it), the request field at fault (``null`` when no one field
is: a rate limit, a missing route), the message a person can act on, and ``detail`` repeating it
for clients written against FastAPI's default ``{"detail": …}``.

The kinds of fault and their statuses (the routers raise :class:`ApiError` or the layers' own
exceptions; the handlers below map them, nothing else builds an error body):

====  ==============================================================================================
401   no API key, or one that is not configured (``WWW-Authenticate: Bearer``)
403   a webhook URL whose host is, or resolves to, an address webhooks may not reach
404   something named is not there: an unknown act (anywhere: path, query or body), version, unit,
      table, publication, subscription, event or feed cursor; no held version on or before a date; a
      diff from a version to one not newer; no index (or no case law) to search
405   a method the path does not have (``Allow`` lists every method it has)
409   an event that cannot be redelivered now (delivered, cancelled, or being sent: ``Retry-After``)
413   a body over ``LEXPIPE_API_MAX_BODY_BYTES``
416   a byte range that cannot be served (``Content-Range: bytes */size``)
422   malformed input: a parameter or body that breaks the schema (a date that is no real
      ``YYYY-MM-DD`` day, an id that does not match its pattern, a body that is not JSON or not
      UTF-8), or the few rules a schema cannot state (one language's acts per search)
429   a rate limit (``Retry-After``)
500   anything unexpected (logged; the body says nothing of the internals)
503   the server cannot serve the search as configured (an index built with another encoder)
====  ==============================================================================================
"""

from __future__ import annotations

import json
import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from pipelines.reads import InvalidRead, NotFound, ReadError
from pipelines.reads.errors import BadVersionPair, NotCovered, UnknownAct, UnknownTable, UnknownUnit, UnknownVersion

log = logging.getLogger("lexpipe.api")


class ApiError(Exception):
    """A refusal a router raises: rendered by :func:`install` in the one shape."""

    def __init__(self, status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.field, self.headers = status, message, field, headers or {}


def body(status: int, message: str, field: str | None = None) -> dict:
    """The one error body."""
    return {"status": status, "field": field, "message": message, "detail": message}


def response(status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content=body(status, message, field), headers=headers)


def raw(status: int, message: str, field: str | None = None) -> bytes:
    """The body as bytes, for the ASGI middleware that answers before any route runs."""
    return json.dumps(body(status, message, field)).encode()


# -- the read layer's refusals -------------------------------------------------------------------

_READ_FIELDS = ((UnknownAct, "act"), (UnknownVersion, "version"), (UnknownUnit, "unit_id"), (UnknownTable, "table"),
                (NotCovered, "as_of"), (BadVersionPair, "from"))


def read_status(exc: ReadError) -> int:
    """404 for what is not held: an act, version, unit or table; a date before the oldest held version
    (nothing is known in force then); a diff from a version to one not newer (diffs run from older to
    newer: no such diff). 422 for a malformed request the schema cannot catch. The unit pages
    (lexpipe/web) answer with the same statuses."""
    if isinstance(exc, (NotFound, NotCovered, BadVersionPair)):
        return 404
    return 422 if isinstance(exc, InvalidRead) else 400


def read_field(exc: ReadError) -> str | None:
    return next((f for kind, f in _READ_FIELDS if isinstance(exc, kind)), None)


# -- validation errors ---------------------------------------------------------------------------


def _field(loc: tuple) -> str | None:
    parts = [str(p) for p in loc[1:]] if loc and loc[0] in ("query", "path", "body", "header", "cookie") else \
        [str(p) for p in loc]
    return ".".join(parts) if parts else (str(loc[0]) if loc else None)


def _problem(err: dict) -> tuple[str | None, str]:
    """(field, message) of one pydantic error, in words a client can act on."""
    field = _field(tuple(err.get("loc") or ()))
    kind, msg, given = err.get("type", ""), str(err.get("msg", "")), err.get("input")
    if kind == "json_invalid":
        why = (err.get("ctx") or {}).get("error", "")
        return "body", f"body is not valid JSON{': ' + str(why) if why else ''}"
    if kind == "missing":
        return field, f"{field} is required"
    if kind == "extra_forbidden":
        return field, f"{field}: Extra inputs are not permitted (unknown field)"
    msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if field and (msg.startswith(field + " ") or msg.startswith(field + ":")):
        return field, msg  # the message names its field already
    if kind == "string_pattern_mismatch":
        from lexpipe.api.params import hint

        what = hint(field)
        shown = repr(given)[:120] if isinstance(given, str) else ""
        if what:
            return field, f"{field} must be {what}, got {shown}"
    named = re.match(r"([a-z_]+)[: ]", msg)
    if field == "body" and named and named.group(1) != "body":
        return named.group(1), msg  # a check over the whole body, naming its field first ("act is required …")
    return field, f"{field}: {msg}" if field else msg


def validation_message(errors: list[dict]) -> tuple[str | None, str]:
    problems = [_problem(e) for e in errors] or [(None, "invalid request")]
    return problems[0][0], "; ".join(dict.fromkeys(m for _, m in problems))


# -- 405 -----------------------------------------------------------------------------------------


def _routes(routes):
    """Every route, those of included routers too (FastAPI keeps an included router as one route;
    the app's routers are included without a prefix)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _routes(inner.routes)
        else:
            yield route


def allowed_methods(app: FastAPI, scope) -> list[str]:
    """Every method some route has for the request's path (Starlette's own 405 names only the first
    route it tried: ``/search`` answered ``Allow: GET`` though it has POST too)."""
    methods: set[str] = set()
    for route in _routes(app.router.routes):
        route_methods = getattr(route, "methods", None)
        if not route_methods:
            continue
        match, _ = route.matches({**scope, "method": next(iter(route_methods))})
        if match == Match.FULL:
            methods |= set(route_methods)
    methods.discard("HEAD")  # answered as a GET by no route here: not advertised
    return sorted(methods)


# -- the handlers --------------------------------------------------------------------------------


def install(app: FastAPI) -> None:
    """Every exception handler of the app: the one shape for every refusal."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return response(exc.status, exc.message, exc.field, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        field, message = validation_message(list(exc.errors()))
        return response(422, message, field)

    @app.exception_handler(ReadError)
    async def _unreadable(_: Request, exc: ReadError) -> JSONResponse:
        return response(read_status(exc), str(exc), read_field(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = dict(exc.headers or {})
        status, message, field = exc.status_code, str(exc.detail), None
        if status == 405:
            allow = allowed_methods(app, request.scope)
            headers["Allow"] = ", ".join(allow)
            message = f"{request.method} is not allowed on {request.url.path}; allowed: {', '.join(allow)}"
        elif status == 404 and message == "Not Found":
            message = f"no such path: {request.url.path} (the API's paths are listed at /docs)"
        elif status == 400 and "parsing the body" in message:
            # FastAPI's answer to a body it cannot decode (invalid UTF-8): malformed input, like bad JSON
            status, field, message = 422, "body", "body is not valid JSON in UTF-8"
        elif status == 401:
            field = "Authorization"
        elif status == 413:
            field = "body"
        return response(status, message, field, headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error answering %s %s", request.method, request.url.path)
        return response(500, "internal error (logged)")
