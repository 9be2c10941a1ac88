"""Which documents a reader sees: generations, row intervals and the request's filters, as
``filter`` clauses (pure functions, no client).

A chunk document is visible to a search of generation G, resolving act A to version S(A), iff

* ``doc_kind = chunk``, ``gen_from <= G < gen_to`` (the generation; the alias filter says the same);
* its interval holds S(A). The three ways a request picks S (``interface.Filters``) each become a
  condition on the document alone, so one query serves thousands of acts:
  - no version, no date: the act's newest version — the rows still open, ``version_to = OPEN``;
  - ``as_of`` D: the act's last version whose date is on or before D —
    ``valid_from <= D < valid_to`` (a row closed on its own first day has valid_from = valid_to:
    invisible by date, as the spec wants, visible by its exact version);
  - ``version`` V: ``version_from <= V < version_to``, for the acts that hold V (the caller names
    them: an act without V shows nothing, it does not fall back to an older version);
* and act, jurisdiction and status are among the requested ones.

Values are JSON values in ``term``/``terms``/``range`` clauses, never query syntax.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from pipelines.retrieval.elasticsearch.intervals import OPEN_VERSION

OPEN_GEN = 2**31 - 1  # gen_to of a document no publication has retired


def generation_clauses(generation: int, kind: str = "chunk") -> list[dict[str, Any]]:
    return [{"term": {"doc_kind": kind}},
            {"range": {"gen_from": {"lte": generation}}},
            {"range": {"gen_to": {"gt": generation}}}]


def interval_clauses(*, version: str | None = None, as_of: dt.date | str | None = None) -> list[dict[str, Any]]:
    """The row-interval condition: exact ``version``, else ``as_of``, else the newest version."""
    if version is not None:
        return [{"range": {"version_from": {"lte": version}}}, {"range": {"version_to": {"gt": version}}}]
    if as_of is not None:
        day = as_of.isoformat() if isinstance(as_of, dt.date) else str(as_of)
        return [{"range": {"valid_from": {"lte": day}}}, {"range": {"valid_to": {"gt": day}}}]
    return [{"term": {"version_to": OPEN_VERSION}}]


def member_clauses(*, act_ids: Sequence[str] = (), jurisdictions: Sequence[str] = (),
                   statuses: Sequence[str] = ()) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if act_ids:
        out.append({"terms": {"act_id": sorted(act_ids)}})
    if jurisdictions:
        out.append({"terms": {"jurisdiction": list(jurisdictions)}})
    if statuses:
        out.append({"terms": {"status": list(statuses)}})
    return out


def row_filter(generation: int, *, version: str | None = None, as_of: dt.date | str | None = None,
               act_ids: Sequence[str] = (), jurisdictions: Sequence[str] = (),
               statuses: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Every clause of one search's ``filter`` (``act_ids`` empty: every act)."""
    return [*generation_clauses(generation), *interval_clauses(version=version, as_of=as_of),
            *member_clauses(act_ids=act_ids, jurisdictions=jurisdictions, statuses=statuses)]
