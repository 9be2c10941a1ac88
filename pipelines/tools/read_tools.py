"""The point-in-time read tools over :class:`~pipelines.reads.ReadService`: ``get_unit``,
``law_at_date``, ``diff``, ``unit_history``, ``list_acts``.

Results are compact for a model's context: ids, act, version, status, the heading path and the
text; fields without a value are left out. A diff lists 25 articles unless asked for more (up to
1000) and clips each word diff at 2,000 characters. Measured on the real corpus (newest pair of
versions): k.c. 7 amended articles, word diff median 937 / max 2,247 characters (1 clipped); k.p.
184, median 331, 22 clipped; BGB 340, median 839, 32 clipped. At 25 rows a diff answer stays
around 25 kB; the full wording is one ``get_unit`` call away.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pipelines.reads.dates import parse_day
from pipelines.reads.errors import BadDate
from pipelines.tools.definitions import ToolDefinition
from pipelines.tools.errors import ToolError
from pipelines.tools.fields import ACT, AS_OF, JURISDICTIONS, UNIT_ID, date, obj
from pipelines.tools.services import Services

MAX_CHILDREN = 60
MAX_DIFF_CHARS = 2000


def clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + " […]"


def compact(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without None values, empty lists and False flags: what a model need not read."""
    return {k: v for k, v in d.items() if v is not None and v != [] and v is not False}


def day(value: str | None, field: str = "as_of") -> dt.date | None:
    """A real ``YYYY-MM-DD`` day (the schema's pattern only checks the shape); None stays None."""
    if value is None:
        return None
    try:
        return parse_day(value, field)
    except BadDate as exc:
        raise ToolError(str(exc), field) from None


def _act(services: Services, act_id: str, field: str = "act"):
    from pipelines.reads.errors import NotFound

    try:
        summary = services.reads.act(act_id)
    except NotFound as exc:
        raise ToolError(str(exc), field) from None
    if not summary.versions:
        raise ToolError(f"{act_id} ({summary.title}) is in the registry but no version of it is published", field)
    return summary


def _unit_act(services: Services, unit_id: str):
    return _act(services, ":".join(unit_id.split(":")[:2]), "unit_id")


# -- get_unit -------------------------------------------------------------------------------------

def get_unit(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    _unit_act(services, args["unit_id"])
    u = services.reads.unit(args["unit_id"], day(args["as_of"]))
    out = compact({
        "unit_id": u.unit_id, "act_id": u.act_id, "level": u.level, "number": u.number, "as_of": u.as_of,
        "version": u.version, "next_version": u.next_version, "status": u.status, "status_note": u.status_note,
        "heading": u.heading, "title": u.title, "path": u.path_text, "text": u.text,
        "text_pending": u.text_pending, "pending_effective_date": u.pending_effective_date,
        "pending_applies": u.pending_applies, "children": u.children[:MAX_CHILDREN]})
    if len(u.children) > MAX_CHILDREN:
        out["children_total"] = len(u.children)
    return out


GET_UNIT = ToolDefinition(
    name="get_unit", title="Read a unit of an act at a date",
    description=("The wording of one unit of a statute (article, paragraph, point, letter, or a structure unit "
                 "such as a book or title) as in force on a date, read from the newest held consolidated "
                 "version on or before that date. Returns the version it was read from, the status (in_force, "
                 "repealed, pending), the heading path and the text; an announced future wording comes as "
                 "text_pending with its effective date."),
    input_schema=obj({"unit_id": UNIT_ID, "as_of": AS_OF}, ("unit_id",)),
    handler=get_unit)


# -- law_at_date ----------------------------------------------------------------------------------

def _outline(entries, depth: int) -> tuple[list[dict], int, str | None, str | None]:
    """Structure entries down to ``depth`` levels, each with its article count and first/last
    article; articles themselves are left out (``get_unit`` or the TOC resource lists them)."""
    out, count, first, last = [], 0, None, None
    for e in entries:
        if e.level == "article":
            count += 1
            first = first or e.number_display
            last = e.number_display
            continue
        kids, n, f, la = _outline(e.children, depth - 1)
        count += n
        first, last = first or f, la or last
        out.append(compact({"id": e.id, "level": e.level, "number": e.number, "heading": e.heading,
                            "status": e.status if e.status not in (None, "in_force") else None,
                            "articles": n, "first_article": f, "last_article": la,
                            "children": kids if depth > 1 else None}))
    return out, count, first, last


def law_at_date(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    act = _act(services, args["act"])
    when = day(args["as_of"])
    toc = services.reads.toc(act.act_id, when)
    v = services.reads.version(act.act_id, toc.version)
    outline, _, first, last = _outline(toc.entries, args["depth"])
    return compact({
        "act_id": act.act_id, "title": act.title, "citation": act.citation, "as_of": toc.as_of,
        "version": toc.version, "next_version": toc.next_version, "newest_version": act.newest_version,
        "held_versions": act.versions, "based_on": v.based_on, "source_url": v.source_url,
        "articles": toc.articles, "repealed": toc.repealed, "first_article": first, "last_article": last,
        "outline": outline})


LAW_AT_DATE = ToolDefinition(
    name="law_at_date", title="Which version of an act was in force on a date",
    description=("Which consolidated version of an act was in force on a date (the newest held version on or "
                 "before it), the next held version, the official consolidation it is based on, its article "
                 "counts and its outline (books, titles, chapters, … with the articles each spans). Use "
                 "get_unit to read a unit at the same date."),
    input_schema=obj({"act": ACT, "as_of": AS_OF,
                      "depth": {"type": "integer", "minimum": 1, "maximum": 6, "default": 2,
                                "description": "structure levels of the outline (1..6, default 2)"}},
                     ("act",)),
    handler=law_at_date)


# -- diff -----------------------------------------------------------------------------------------

def _held(field: str, version: str | None, versions: list[str], act_id: str) -> None:
    if version is not None and version not in versions:
        day(version, field)
        raise ToolError(f"{act_id} has no published version {version}; held: {', '.join(versions)}", field)


def diff(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    act = _act(services, args["act"])
    versions = act.versions
    _held("from", args["from"], versions, act.act_id)
    _held("to", args["to"], versions, act.act_id)
    to = args["to"] or versions[-1]
    before = [v for v in versions if v < to]
    frm = args["from"] or (before[-1] if before else None)
    if frm is None:
        raise ToolError(f"{to} is the oldest held version of {act.act_id}: nothing to compare it with; "
                        f"held: {', '.join(versions)}", "to")
    if frm >= to:
        raise ToolError(f"from ({frm}) must be a version older than to ({to})", "from")
    d = services.reads.diff(act.act_id, frm, to)
    rows = d.changes + (d.editorial if args["include_editorial"] else [])
    limit = args["limit"]
    changes = [compact({"unit_id": e.unit_id, "number": e.number, "change": e.change,
                        "word_diff": clip(e.word_diff, MAX_DIFF_CHARS),
                        "parts": [{"unit_id": p.unit_id, "change": p.change} for p in e.parts]})
               for e in rows[:limit]]
    return compact({"act_id": act.act_id, "from": d.from_version, "to": d.to_version, "consecutive": d.consecutive,
                    "counts": d.counts, "changes": changes, "not_shown": max(0, len(rows) - limit) or None,
                    "legend": "word_diff: [-removed-]{+added+}; editorial: reprinted differently, not amended"})


DIFF = ToolDefinition(
    name="diff", title="Changes of an act between two versions",
    description=("The articles of an act that changed from one held version to a newer one: added, changed, "
                 "repealed or removed, each with a word diff ([-removed-]{+added+}) and the paragraphs/points "
                 "that changed. Editorial reprints (not amendments) only on request. Without from/to: the "
                 "newest version against the one before it; list_acts gives the held versions."),
    input_schema=obj({"act": ACT,
                      "from": date("the older held version, YYYY-MM-DD (default: the version before `to`)"),
                      "to": date("the newer held version, YYYY-MM-DD (default: the newest)"),
                      "include_editorial": {"type": "boolean", "default": False,
                                            "description": "also list articles only reprinted differently"},
                      "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 25,
                                "description": "at most this many articles (1..1000, default 25); "
                                               "not_shown counts the rest"}},
                     ("act",)),
    handler=diff)


# -- unit_history ---------------------------------------------------------------------------------

def unit_history(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    _unit_act(services, args["unit_id"])
    h = services.reads.history(args["unit_id"])
    return {"unit_id": h.unit_id, "act_id": h.act_id, "held_versions": h.held_versions, "present_in": h.present_in,
            "changes": [compact({"from": c.from_version, "to": c.to_version, "change": c.change,
                                 "word_diff": clip(c.word_diff, MAX_DIFF_CHARS), "old_status": c.old_status,
                                 "new_status": c.new_status}) for c in h.changes],
            "legend": "one entry per pair of consecutive held versions in which the unit changed; "
                      "word_diff: [-removed-]{+added+}"}


UNIT_HISTORY = ToolDefinition(
    name="unit_history", title="How a unit changed over the held versions",
    description=("The held versions of an act in which one unit (article, paragraph, point, letter) changed, "
                 "with the kind of change and its word diff, oldest first; also the versions that hold the unit "
                 "at all."),
    input_schema=obj({"unit_id": UNIT_ID}, ("unit_id",)),
    handler=unit_history)


# -- list_acts ------------------------------------------------------------------------------------

def list_acts(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    acts = [a for a in services.reads.acts()
            if (args["jurisdiction"] is None or a.jurisdiction == args["jurisdiction"])
            and (a.versions or not args["held_only"])]
    return {"acts": [compact({"act_id": a.act_id, "title": a.title, "citation": a.citation,
                              "jurisdiction": a.jurisdiction, "language": a.language, "versions": a.versions,
                              "served_version": a.served_version}) for a in acts]}


LIST_ACTS = ToolDefinition(
    name="list_acts", title="The acts lexpipe holds",
    description=("The statutes lexpipe holds, with their ids (for the other tools), titles, short citation forms "
                 "(e.g. 'k.c.', 'BGB'), and the held consolidated versions (YYYY-MM-DD, oldest first)."),
    input_schema=obj({"jurisdiction": {"type": "string", "enum": list(JURISDICTIONS),
                                       "description": "only acts of this jurisdiction"},
                      "held_only": {"type": "boolean", "default": True,
                                    "description": "leave out registry acts with no published version "
                                                   "(default true)"}}),
    handler=list_acts)
