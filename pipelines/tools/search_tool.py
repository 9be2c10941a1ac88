"""``search``: ranked articles (or court decisions) for a query, over
:class:`~pipelines.retrieval.service.SearchService` with the HTTP API's validation and limits.

Each hit carries what a model needs to decide whether to read on: the article id (for
``get_unit``), act, version, status, heading path and a snippet of the matching chunk (400
characters, as the HTTP API; the k.c. articles in force, 2025-11-13, average 370 characters, median
296, and 66% of them fit in 400, so most hits come whole).
"""

from __future__ import annotations

from typing import Any

from pipelines.retrieval.interface import RETRIEVERS
from pipelines.retrieval.service import ACT_ID, MAX_K, TARGETS
from pipelines.tools.definitions import ToolDefinition
from pipelines.tools.errors import ToolError
from pipelines.tools.fields import ACTS, AS_OF, K, QUERY, STATUS, date, obj
from pipelines.tools.read_tools import compact, day
from pipelines.tools.services import Services
from schemas.acts import registry
from schemas.cases import CASES_ACT, PL_CASES_ACT

SNIPPET_CHARS = 400


def unknown_act(acts: list[str]) -> str | None:
    """The refusal of the first act id that is neither a registry act nor a case-law collection."""
    known = (*registry().ids(), CASES_ACT, PL_CASES_ACT)
    for a in acts:
        if ACT_ID.match(a) and a not in known:
            return f"unknown act {a!r}; known acts: {', '.join(known)}"
    return None


def search(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    acts = args["acts"] or []
    refused = unknown_act(acts)
    if refused:
        raise ToolError(refused, "acts")
    day(args["as_of"])
    day(args["version"], "version")
    page = services.search.search(args["query"], k=args["k"], retriever=args["retriever"], acts=acts,
                                  statuses=args["status"] or None, as_of=args["as_of"], version=args["version"],
                                  target=args["target"], offset=args["offset"])
    hits = [compact({"rank": h.rank, "article_id": h.article_id, "act_id": h.act_id, "version": h.version,
                     "status": h.status, "heading_path": h.heading_path,
                     "snippet": h.text if len(h.text) <= SNIPPET_CHARS else h.text[:SNIPPET_CHARS].rstrip() + " […]",
                     "score": round(h.score, 6)}) for h in page.hits]
    out: dict[str, Any] = {"query": args["query"], "retriever": page.retriever, "versions": page.versions,
                           "hits": hits}
    if page.named_acts:
        out["narrowed_to"] = list(page.named_acts)
    if page.classification is not None:
        out["mix"] = {"label": page.classification.label, **(page.quotas or {})}
    if page.confidence is not None:
        out["confidence"] = round(page.confidence, 3)
    if page.flags:
        out["flags"] = list(page.flags)
        out["reasons"] = list(page.reasons)
    if page.outside_acts:
        out["outside_acts"] = [dict(a) for a in page.outside_acts]
    return out


SEARCH = ToolDefinition(
    name="search", title="Search the statutes",
    description=("Search the held statutes (Polish and German codes) for the articles that best match a query; "
                 "optionally court decisions. Returns ranked hits with the article id (read it in full with "
                 "get_unit), act, version, status, heading path and a snippet. A short query in the words the "
                 "statute itself uses works best; if the right provision is missing, search again with other "
                 "words. A query naming an act ('art. 415 k.c.', 'nach dem BGB') is narrowed to that act. "
                 "'confidence' is the calibrated probability that the first hit answers the query; 'flags' say "
                 "when there was nothing to search for (garbage_query: no hits) or when the held acts probably "
                 "do not answer it (out_of_corpus), with 'reasons' and, where the query names or implies one, "
                 "the act lexpipe does not hold ('outside_acts')."),
    input_schema=obj({
        "query": QUERY, "k": K, "acts": ACTS, "as_of": AS_OF,
        "version": date("search exactly this held version, YYYY-MM-DD"),
        "status": STATUS,
        "retriever": {"type": "string", "enum": list(RETRIEVERS), "default": "hybrid",
                      "description": "ranking: hybrid (default; BM25 + dense), bm25, dense, gaius (fuzzy)"},
        "target": {"type": "string", "enum": list(TARGETS), "default": "statutes",
                   "description": "statutes (default), cases (court decisions of the query's language), or "
                                  "both (statutes and decisions mixed)"},
        "offset": {"type": "integer", "minimum": 0, "maximum": 10 * MAX_K, "default": 0,
                   "description": "skip this many hits (paging)"},
    }, ("query",)),
    handler=search)
