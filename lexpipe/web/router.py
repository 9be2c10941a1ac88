"""The HTML pages: ``/ui/search`` (search with facets and pages) and ``/ui/units/{id}`` (a unit at a
date: hierarchy, neighbours, versions with diffs, announced wording, citing decisions).

Server-rendered (Jinja2), plain GET forms: every page works without JavaScript. The pages use the
services the JSON API uses (``app.state``, :mod:`lexpipe.api.deps`) and are hidden from the OpenAPI
schema. Per page view: one search call (:func:`lexpipe.web.views.search_view`), templates compiled
once at import (``auto_reload=False``: a changed template needs a restart), analysers cached by
:mod:`pipelines.retrieval.highlight`.

Errors are pages, never 500s for bad input: a query the search refuses → the search page with
``#search-error`` (422 or 404 as the API answers, its message); an unknown unit → 404 page, a bad or uncovered date → 422
page, both with the read layer's message in a ``role="alert"`` paragraph.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from lexpipe.web import i18n
from lexpipe.web.views import (PAGE_SIZE, sup, RETRIEVERS_SHOWN, SearchParams, parse_search_params,
                               search_view, unit_href, unit_view)
from pipelines.reads import ReadError, ReadService
from pipelines.retrieval.service import STATUSES, TARGETS, InvalidRequest, SearchService

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
TEMPLATES = ("base.html", "search.html", "unit.html", "error.html")

env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]),
                  auto_reload=False, trim_blocks=True, lstrip_blocks=True)
env.filters["sup"] = sup  # notes print superscripts as the wording does (§ 1^1 → § 1¹)
for _name in TEMPLATES:  # compiled now, once per process
    env.get_template(_name)

router = APIRouter(include_in_schema=False)


# the API's service holders, imported when a request comes: lexpipe.api imports this module while
# building the app, so a module-level import here would be circular when lexpipe.web is imported first
def get_search(request: Request) -> SearchService:
    from lexpipe.api.deps import get_search as search_of

    return search_of(request)


def get_reads(request: Request) -> ReadService:
    from lexpipe.api.deps import get_reads as reads_of

    return reads_of(request)


def _acts() -> list[tuple[str, str]]:
    from schemas.acts import registry

    return [(a.id, f"{a.citation} — {a.title}") for a in registry().acts]


def _render(name: str, status: int = 200, **ctx) -> HTMLResponse:
    return HTMLResponse(env.get_template(name).render(**ctx), status_code=status)


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/ui/search", status_code=307)


@router.get("/ui/search", response_class=HTMLResponse)
def search_page(request: Request, service: SearchService = Depends(get_search)) -> HTMLResponse:
    qp = request.query_params
    error, status, view = None, 200, None
    try:
        params = parse_search_params(qp)
    except InvalidRequest as exc:
        params = SearchParams(q=(qp.get("q") or "").strip(), lang=qp.get("lang") or None)
        # the status the API answers with (docs/api.md): ``InvalidRequest.status``
        error, status = str(exc), exc.status
    lang = i18n.choose(params.lang, acts=params.act, query=params.q,
                       accept_language=request.headers.get("accept-language"))
    t = i18n.Strings(lang)
    if error is None:
        try:
            view = search_view(service, params, status_label=t)
        except InvalidRequest as exc:
            error, status = str(exc), exc.status
    langs = [(code, params.link(lang=code, page=None)) for code in i18n.LANGUAGES]
    return _render("search.html", status, t=t, lang=lang, params=params, view=view, error=error,
                   acts=_acts(), retrievers=RETRIEVERS_SHOWN, statuses=STATUSES, targets=TARGETS,
                   page_size=PAGE_SIZE, langs=langs)


@router.get("/ui/units/{unit_id}", response_class=HTMLResponse)
def unit_page(request: Request, unit_id: str, reads: ReadService = Depends(get_reads)) -> HTMLResponse:
    as_of = request.query_params.get("as_of") or None
    param_lang = request.query_params.get("lang") or None
    lang = i18n.choose(param_lang, acts=[unit_id.split(":", 2)[0] + ":x"] if ":" in unit_id else [],
                       accept_language=request.headers.get("accept-language"))
    t = i18n.Strings(lang)
    langs = [(code, unit_href(unit_id, as_of, code)) for code in i18n.LANGUAGES]
    try:
        view = unit_view(reads, unit_id, as_of, param_lang)
    except ReadError as exc:
        from lexpipe.api.errors import read_status  # the JSON API's status for the same refusal

        status = read_status(exc)
        title = t("not_found") if status == 404 else t("invalid") if status == 422 else t("bad_request")
        return _render("error.html", status, t=t, lang=lang, title=title, message=str(exc), code=status,
                       langs=langs)
    return _render("unit.html", t=t, lang=lang, view=view, u=view.unit, langs=langs, param_lang=param_lang,
                   unit_path=unit_href(unit_id))
