"""View models of the pages: what a template shows, computed from the search and read services.

Why here and not in the templates: the rules (one search per page view, pages and facets cut from its
candidates; labels of units; word diffs as HTML) are testable functions, and the templates only lay
out fields. Everything that becomes HTML here is escaped first (``markupsafe.Markup`` marks the few
fields that carry our own ``<mark>``/``<del>``/``<ins>``).

Cost of a search page over its one search, measured on the full corpus (``make run``; 2 cores, warm):
the search ~20 ms (hybrid), snippets, marks and facets for 10 hits ~0.7 ms, the template ~0.4 ms;
over HTTP, ``/ui/search`` against ``/search?k=10`` for 8 queries × 5 rounds: median 42.0 vs 41.2 ms,
paired median difference 0.1 ms (budget: 10 ms).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from markupsafe import Markup, escape

from pipelines.reads import ReadService
from pipelines.retrieval.facets import Facets, facet_counts
from pipelines.retrieval.highlight import snippet_html
from pipelines.retrieval.service import MAX_K, STATUSES, TARGETS, InvalidRequest, SearchService, parse_date

RETRIEVERS_SHOWN = ("hybrid", "bm25", "dense", "gaius")
PAGE_SIZE = 10
# One search per page view; the page, the facet counts and the pager are cut from its candidates.
# How many it asks for (``candidate_k``) is chosen so the page lists exactly what GET /search lists for
# k=10, offset=10·(page-1): the embedded backend fuses at depth max(100, 3·(k+offset)), so asking for
# 100 reorders the hybrid's top 10 (checked on the full corpus: 4 of 4 queries differ at k=100, none at
# k=33), and target=both splits its 70/30 mix by k (any other k interleaves differently). Statute and
# case searches therefore ask for max(33, 10·page) — the same depth as the API's pages, 33 candidates
# to count facets over and to know whether a next page exists; target=both asks for 10·page.
STABLE_K = 33
MAX_PAGE = MAX_K // PAGE_SIZE
HIGHLIGHT_LANGUAGES = ("pl", "de")
_UNIT_LEVELS = ("article", "paragraph", "point", "letter")

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

# the law's own words for its levels, by the act's language (never translated: they are part of the text)
LEVEL_NAMES = {
    "pl": {"book": "Księga", "part": "Część", "title": "Tytuł", "division": "Dział", "chapter": "Rozdział",
           "section": "Oddział", "subdivision": "Poddział", "subtitle": "Podtytuł", "subchapter": "Podrozdział",
           "group": "Grupa", "paragraph": "§", "point": "pkt", "letter": "lit."},
    "de": {"book": "Buch", "part": "Teil", "title": "Titel", "division": "Abschnitt", "chapter": "Kapitel",
           "section": "Unterabschnitt", "subdivision": "Unterabschnitt", "subtitle": "Untertitel",
           "subchapter": "Unterkapitel", "group": "Gruppe", "paragraph": "Abs.", "point": "Nr.", "letter": "Buchst."},
}


def sup(number: str | None) -> str:
    """'709^2' → '709²' (the corpus writes superscripts as ^N)."""
    return re.sub(r"\^(\d+)", lambda m: m.group(1).translate(_SUPERSCRIPT), number or "")


def href(path: str, **params) -> str:
    """``path`` with the non-empty ``params`` as a query string (lists repeat the name)."""
    items = [(k, v) for k, vs in params.items() for v in (vs if isinstance(vs, (list, tuple)) else [vs])
             if v not in (None, "")]
    return f"{path}?{urlencode(items)}" if items else path


def unit_href(unit_id: str, as_of: str | None = None, lang: str | None = None) -> str:
    return href(f"/ui/units/{quote(unit_id, safe=':^')}", as_of=as_of, lang=lang)


def _act(act_id: str):
    from schemas.acts import registry

    reg = registry()
    return reg.get(act_id) if act_id in reg else None


def act_name(act_id: str) -> str:
    act = _act(act_id)
    return act.citation if act else act_id


def act_title(act_id: str) -> str:
    act = _act(act_id)
    return f"{act.title} ({act.citation})" if act else act_id


def article_label(act_id: str, number: str | None) -> str:
    act = _act(act_id)
    unit = act.article_unit if act else "art"
    unit = {"art": "Art.", "Art": "Art.", "§": "§"}.get(unit, unit)
    return f"{unit} {sup(number)}"


def level_label(act_id: str, level: str, number: str | None, heading: str | None = None) -> str:
    lang = act_id.split(":", 1)[0]
    if level == "article":
        return article_label(act_id, number)
    name = LEVEL_NAMES.get(lang, LEVEL_NAMES["pl"]).get(level, level.capitalize())
    if level == "paragraph" and lang == "pl":
        text = f"§ {sup(number)}"
    elif level == "point" and lang == "pl":
        text = f"pkt {sup(number)}"
    else:
        text = f"{name} {sup(number)}".strip()
    if heading and heading.casefold() == text.casefold():  # a named unit: k.k. "CZĘŚĆ OGÓLNA" is its own heading
        return text
    return f"{text} {heading}".strip() if heading else text


# -- search page -----------------------------------------------------------------------------------


@dataclass
class SearchParams:
    q: str = ""
    retriever: str = "hybrid"
    act: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    as_of: str | None = None
    target: str = "statutes"
    page: int = 1
    lang: str | None = None

    def query(self, **changes) -> dict:
        """The request's parameters (for links), with ``changes``; defaults left out."""
        out = {"q": self.q, "retriever": self.retriever if self.retriever != "hybrid" else None,
               "act": self.act, "status": self.status, "as_of": self.as_of,
               "target": self.target if self.target != "statutes" else None,
               "page": self.page if self.page != 1 else None, "lang": self.lang}
        out.update(changes)
        return out

    def link(self, **changes) -> str:
        return href("/ui/search", **self.query(**changes))


def parse_search_params(qp) -> SearchParams:
    """The page's parameters from a query string (``QueryParams``); InvalidRequest naming the field.
    ``act=""`` / ``status=""`` (the "all"/"any" options) mean no filter."""
    def one(name: str, default: str | None = None) -> str | None:
        value = qp.get(name)
        return default if value in (None, "") else value

    retriever = one("retriever", "hybrid")
    if retriever not in RETRIEVERS_SHOWN:
        raise InvalidRequest(f"unknown retriever {retriever!r}; use one of {', '.join(RETRIEVERS_SHOWN)}")
    target = one("target", "statutes")
    if target not in TARGETS:
        raise InvalidRequest(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    statuses = [s for s in qp.getlist("status") if s]
    for s in statuses:
        if s not in STATUSES:
            raise InvalidRequest(f"status must be one of {', '.join(STATUSES)}, got {s!r}")
    as_of = one("as_of")
    if as_of is not None:
        parse_date(as_of)  # the service's wording, so the page says what the API says
    raw_page = one("page", "1")
    try:
        page = int(raw_page)
    except ValueError:
        raise InvalidRequest(f"page must be a whole number from 1, got {raw_page!r}") from None
    if not 1 <= page <= MAX_PAGE:
        raise InvalidRequest(f"page must be between 1 and {MAX_PAGE}, got {page}")
    lang = one("lang")
    return SearchParams(q=(qp.get("q") or "").strip(), retriever=retriever, act=[a for a in qp.getlist("act") if a],
                        status=statuses, as_of=as_of, target=target, page=page, lang=lang)


@dataclass
class HitView:
    rank: int
    article_id: str
    act_id: str
    act_name: str
    title: str
    path: str
    version: str
    status: str
    snippet: Markup
    href: str
    is_case: bool


@dataclass
class FacetLink:
    value: str
    label: str
    count: int
    href: str
    active: bool


@dataclass
class SearchView:
    params: SearchParams
    searched: bool  # a query was run
    hits: list[HitView] = field(default_factory=list)
    total: int = 0  # candidates
    first: int = 0
    last: int = 0
    pages: int = 0
    prev_href: str | None = None
    next_href: str | None = None
    act_facets: list[FacetLink] = field(default_factory=list)
    status_facets: list[FacetLink] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    # how sure the search is (SearchPage): nothing searched (garbage), the corpus probably lacks the answer
    confidence: float | None = None
    garbage: object | None = None  # query_garbage.Garbage: nothing was searched
    out_of_corpus: bool = False
    outside_named: list[str] = field(default_factory=list)  # acts not held the query names
    outside_implied: list[str] = field(default_factory=list)  # … that similar questions are answered by
    held: str = ""  # the acts searched, for "not in the acts lexpipe holds (k.c., k.p.c., …)"


def _hit_view(h, params: SearchParams) -> HitView:
    parts = [p.strip() for p in (h.heading_path or "").split("›")]
    title_part, path = (parts[-1], " › ".join(parts[:-1])) if parts and parts[-1] else (h.article_id, "")
    hit_lang = h.act_id.split(":", 1)[0]
    text = h.text or ""
    snip = Markup(snippet_html(text, params.q, hit_lang)) if hit_lang in HIGHLIGHT_LANGUAGES else escape(text[:300])
    is_case = h.act_id.endswith(":cases")
    return HitView(rank=h.rank, article_id=h.article_id, act_id=h.act_id, act_name=act_name(h.act_id),
                   title=f"{act_name(h.act_id)} {title_part}".strip() if not is_case else title_part,
                   path=path or (act_title(h.act_id) if not is_case else ""), version=h.version,
                   status=h.status or "", snippet=snip,
                   href=_case_href(h.article_id) if is_case else unit_href(h.article_id, params.as_of or h.version,
                                                                             params.lang),
                   is_case=is_case)


def _assessment(view: SearchView, result, params: SearchParams) -> None:
    """The page's notices from the search answer: nothing searched, the answer probably outside the
    held acts (naming the act the query names or implies), and the confidence in the first hit."""
    from pipelines.retrieval.query_garbage import check

    if "garbage_query" in result.flags:
        view.garbage = check(params.q)
    view.confidence = result.confidence
    view.out_of_corpus = "out_of_corpus" in result.flags
    view.outside_named = [a["name"] for a in result.outside_acts if a.get("how") == "named"]
    view.outside_implied = [a["name"] for a in result.outside_acts if a.get("how") == "implied"]
    view.held = ", ".join(act_name(a) for a in sorted(result.versions) if not a.endswith(":cases"))


def _case_href(case_id: str) -> str:
    """A court decision has no unit page: SAOS judgments link to their public page, others to nothing."""
    m = re.fullmatch(r"pl:case:saos-(\d+)", case_id.split("#", 1)[0])
    return f"https://www.saos.org.pl/judgments/{m.group(1)}" if m else ""


def candidate_k(params: SearchParams) -> int:
    """How many articles the page's one search asks for (see ``STABLE_K``)."""
    if params.target == "both":
        return params.page * PAGE_SIZE
    return max(STABLE_K, params.page * PAGE_SIZE)


def search_view(service: SearchService, params: SearchParams, status_label=lambda s: s) -> SearchView:
    """One ``service.search`` of ``candidate_k`` articles; the page, facets and pager from it.
    InvalidRequest for a query the service refuses (the page answers 422, or 404, with its message)."""
    if not params.q:
        return SearchView(params, searched=False)
    from lexpipe.api.search import unknown_act

    unknown = unknown_act(params.act)
    if unknown:
        raise InvalidRequest(unknown, 404)
    k = candidate_k(params)
    result = service.search(params.q, k=k, offset=0, retriever=params.retriever, acts=params.act,
                            statuses=params.status, as_of=params.as_of, target=params.target)
    candidates = result.hits
    facets: Facets = facet_counts(candidates)
    page = params.page
    start = (page - 1) * PAGE_SIZE
    shown = candidates[start:start + PAGE_SIZE]
    # a next page: candidates beyond this one, or (asked for exactly up to this page) a full page
    more = len(candidates) > start + PAGE_SIZE or (k == start + PAGE_SIZE and len(shown) == PAGE_SIZE)
    more = more and page < MAX_PAGE
    pages = page + 1 if more else page
    if len(candidates) > start + PAGE_SIZE:
        pages = max(pages, -(-len(candidates) // PAGE_SIZE))
    view = SearchView(params, searched=True, total=len(candidates), first=start + 1 if shown else 0,
                      last=start + len(shown), pages=pages, versions=result.versions)
    _assessment(view, result, params)
    view.hits = [_hit_view(h, params) for h in shown]
    if page > 1:
        view.prev_href = params.link(page=page - 1 if page - 1 > 1 else None)
    if more:
        view.next_href = params.link(page=page + 1)
    # a case collection is chosen by target, never named as an act (the service refuses that)
    view.act_facets = [FacetLink(a, act_name(a), n, params.link(act=[], target="cases", page=None)
                                 if a.endswith(":cases") else params.link(act=[a], page=None),
                                 a in params.act or (a.endswith(":cases") and params.target == "cases"))
                       for a, n in facets.acts]
    view.status_facets = [FacetLink(s, status_label(s), n, params.link(status=[s], page=None), s in params.status)
                          for s, n in facets.statuses]
    return view


# -- unit page -------------------------------------------------------------------------------------


@dataclass
class Crumb:
    label: str
    href: str | None


@dataclass
class TimelineEntry:
    version: str
    present: bool
    change: str | None  # added | changed | repealed | removed | editorial; None: unchanged
    diff: Markup | None
    href: str
    current: bool


@dataclass
class UnitView:
    unit: object  # pipelines.reads.units.UnitAtDate
    heading: str
    crumbs: list[Crumb]
    paragraphs: list[str]
    pending_paragraphs: list[str]
    prev: tuple[str, str] | None  # (label, href)
    next: tuple[str, str] | None
    children: list[tuple[str, str]]  # (label, href)
    timeline: list[TimelineEntry]
    cited_by: object | None  # pipelines.reads.citing.CitedBy; None above articles


def html_word_diff(old: str | None, new: str | None) -> Markup:
    """Word-level diff of two wordings as escaped HTML with ``<del>``/``<ins>`` (whole texts: the
    stored diffs elide long unchanged runs, which reads badly on a page)."""
    a, b = re.findall(r"\S+", old or ""), re.findall(r"\S+", new or "")
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(str(escape(sup(" ".join(a[i1:i2])))))
        if op in ("delete", "replace"):
            out.append(f"<del>{escape(sup(' '.join(a[i1:i2])))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{escape(sup(' '.join(b[j1:j2])))}</ins>")
    return Markup(" ".join(out))


def _paragraphs(text: str | None) -> list[str]:
    """The wording's lines as the page shows them: superscripts as the headings print them (the corpus
    writes ``§ 1^1``, ``art. 33^1``; the page ``§ 1¹``, ``art. 33¹``, like its labels)."""
    return [sup(line.strip()) for line in (text or "").split("\n") if line.strip()]


def _node_label(idx, act_id: str, uid: str) -> str:
    node = idx.nodes.get(uid)
    if node is not None:
        art = idx.articles.get(uid)
        if node.level == "article" and art is not None:
            return " ".join(x for x in (article_label(act_id, art["number"]), art.get("title") or "") if x)
        return level_label(act_id, node.level, node.number, node.heading)
    art = idx.articles.get(uid)
    return article_label(act_id, art["number"]) if art else uid


def unit_view(reads: ReadService, unit_id: str, as_of: str | None, lang: str | None) -> UnitView:
    """The unit at ``as_of`` with its place in the act, neighbours, versions and citing decisions.
    Raises the read layer's NotFound / InvalidRead."""
    u = reads.unit(unit_id, as_of)
    idx = reads.reader.index(u.act_id, u.version)
    link = lambda uid: unit_href(uid, u.as_of, lang)  # noqa: E731
    crumbs = [Crumb(act_title(u.act_id), href("/ui/search", act=u.act_id, as_of=u.as_of, lang=lang))]
    crumbs += [Crumb(level_label(u.act_id, p.level, p.number, p.heading), link(p.id)) for p in u.path]
    own = level_label(u.act_id, u.level, u.number, u.heading)
    if u.level == "article" and u.title:
        own = f"{own} {u.title}"
    crumbs.append(Crumb(own, None))
    if u.level in ("article", "paragraph", "point", "letter"):  # "Art. 415 § 1 k.c.", "§ 433 Abs. 1 BGB"
        parts = [level_label(u.act_id, p.level, p.number) for p in u.path if p.level in _UNIT_LEVELS]
        heading = " ".join([*parts, level_label(u.act_id, u.level, u.number), act_name(u.act_id)])
    else:
        heading = own
    prev = nxt = None
    i = idx.article_position(u.article_id) if u.article_id else None
    if i is not None:
        order = idx.article_ids
        if i > 0:
            prev = (_node_label(idx, u.act_id, order[i - 1]), link(order[i - 1]))
        if i + 1 < len(order):
            nxt = (_node_label(idx, u.act_id, order[i + 1]), link(order[i + 1]))
    children = [(_node_label(idx, u.act_id, c), link(c)) for c in u.children]
    history = reads.history(unit_id)
    changes = {c.to_version: c for c in history.changes}
    timeline = []
    for v in history.held_versions:
        c = changes.get(v)
        timeline.append(TimelineEntry(v, v in history.present_in, c.change if c else None,
                                      html_word_diff(c.old_text, c.new_text) if c else None,
                                      unit_href(unit_id, v, lang), v == u.version))
    cited = reads.cited_by(u.article_id) if u.article_id else None
    return UnitView(u, heading, crumbs, _paragraphs(u.text), _paragraphs(u.text_pending), prev, nxt, children,
                    timeline, cited)
