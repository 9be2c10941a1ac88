"""JSON Schema fragments the tool definitions share: the bounds are the HTTP API's (``MAX_K``,
``MAX_QUERY_CHARS`` and the act id pattern of :mod:`pipelines.retrieval.service`), so an agent and
an HTTP consumer are refused the same requests."""

from __future__ import annotations

from pipelines.retrieval.service import ACT_ID, MAX_K, MAX_QUERY_CHARS, STATUSES
from schemas.acts import registry

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
UNIT_ID_PATTERN = r"^[a-z]{2}:[a-z0-9_]{1,40}:\S+$"
MAX_UNIT_ID_CHARS = 300
MAX_CITATION_CHARS = 2000
MAX_ACTS = 20
JURISDICTIONS = tuple(sorted({a.jurisdiction for a in registry().acts}))

__all__ = ["ACT", "AS_OF", "DATE_PATTERN", "MAX_K", "MAX_QUERY_CHARS", "UNIT_ID", "date", "obj"]


def date(description: str) -> dict:
    return {"type": "string", "pattern": DATE_PATTERN, "maxLength": 10, "x-format-hint": "YYYY-MM-DD",
            "description": description}


ACT = {"type": "string", "pattern": ACT_ID.pattern, "maxLength": 43, "x-format-hint": "'pl:kc' or 'de:bgb'",
       "description": "act id: jurisdiction and act, e.g. 'pl:kc' (Polish Civil Code), 'de:bgb' (German BGB); "
                      "list_acts names them"}
AS_OF = date("the date the law is read at, YYYY-MM-DD (default: today); the newest held version on or "
             "before it answers")
UNIT_ID = {"type": "string", "pattern": UNIT_ID_PATTERN, "maxLength": MAX_UNIT_ID_CHARS,
           "x-format-hint": "'pl:kc:art:415' or 'de:bgb:par:433:abs:1'",
           "description": "version-free unit id: an article 'pl:kc:art:709^2' (superscript as ^2), a paragraph "
                          "'pl:kc:art:415:par:1', a point 'pl:kc:art:42:par:4:pt:1', a German section "
                          "'de:bgb:par:433' or its subsection 'de:bgb:par:433:abs:1', a structure unit "
                          "'pl:kc:book:PIERWSZA'; search hits and resolve_citation give ids"}
QUERY = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
         "description": "the question or keywords, best in the words of the statute (e.g. 'forma umowy "
                        "leasingu', 'Kaufvertrag Pflichten des Verkäufers')"}
K = {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10,
     "description": f"how many articles to return (1..{MAX_K}, default 10)"}
ACTS = {"type": "array", "items": ACT, "maxItems": MAX_ACTS,
        "description": "search only these acts (one language), e.g. ['pl:kc']; default: the statutes of the "
                       "query's language named in it, else all Polish statutes"}
STATUS = {"type": "array", "items": {"type": "string", "enum": list(STATUSES)}, "maxItems": len(STATUSES),
          "description": "only articles with these statuses; default any"}


def obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """An object schema that refuses unknown arguments."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}
