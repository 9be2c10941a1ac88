"""The API's parameter types, declared once: what each accepts is what its schema says.

Every router takes its act ids, unit ids, dates, versions, feed positions and subscription/event ids
through these ``Annotated`` types. Each one validates (pydantic, with a message naming the field:
rendered by :mod:`lexpipe.api.errors`) and carries its OpenAPI schema (``WithJsonSchema``): a
``format: date`` for dates, a ``pattern`` for ids and acts. A request the schema calls valid is never
refused as malformed, and one it calls invalid is always refused (schemathesis checks both ways in
``tests/lexpipe/test_api_schema.py``); what is well formed but not there is a 404 (an act not in the
registry, a date before the oldest held version).

The act id pattern is wider than today's registry (``pl:kc``) so that the German federal catalogue's
slugs (``de:1-dm-goldmuenzg``, ``de:bimschv_11_2004``, up to ~40 characters) need no change here.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from pipelines.subscriptions.feed import CURSOR_PATTERN, parse_timestamp
from pipelines.subscriptions.store import ACT_PATTERN, UNIT_PATTERN

DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
SUBSCRIPTION_PATTERN = r"^sub_[0-9a-f]{24}$"
EVENT_PATTERN = r"^evt_[0-9a-f]{32}$"

_HINTS = {"act": "an act id like pl:kc or de:bgb (two letters, a colon, lower-case letters, digits, _ or -)",
          "unit_id": "a unit id like pl:kc:art:415 or pl:kc:art:415:par:1 (act, then kind:number pairs)",
          "subscription_id": "a subscription id like sub_ and 24 hex digits",
          "event_id": "an event id like evt_ and 32 hex digits"}


def hint(field: str | None) -> str | None:
    """What a field looks like, for a pattern mismatch's message."""
    if field is None:
        return None
    return _HINTS.get(field.split(".")[0]) or ("an act id like pl:kc" if field.startswith("act") else None)


def _real_day(name: str):
    def check(value: Any) -> Any:
        if value is None:
            return value
        if not isinstance(value, str) or not re.fullmatch(DAY_PATTERN, value):
            raise PydanticCustomError("date", f"{name} must be a date YYYY-MM-DD, got {str(value)[:40]!r}")
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError("date", f"{name} must be a real date YYYY-MM-DD, got {value!r}") from None
        return value
    return check


def _blank_is_none(value: Any) -> Any:
    return None if value == "" else value


DATE_SCHEMA = {"type": "string", "format": "date"}


def day(name: str, *, blank_is_today: bool = False) -> list:
    """A ``YYYY-MM-DD`` day (a real one: 2025-02-30 is refused). ``blank_is_today``: an empty value
    is the same as none (today), as the docs promise for ``as_of=``."""
    schema = {"anyOf": [DATE_SCHEMA, {"type": "string", "maxLength": 0}]} if blank_is_today else DATE_SCHEMA
    before = [BeforeValidator(_blank_is_none)] if blank_is_today else []
    return [*before, AfterValidator(_real_day(name)), WithJsonSchema(schema)]


def _pattern_check(name: str, pattern: str):
    rx = re.compile(pattern)

    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or not rx.fullmatch(value)):
            raise PydanticCustomError("string_pattern_mismatch", f"{name} must be {hint(name) or pattern}, "
                                                                 f"got {str(value)[:120]!r}")
        return value
    return check


def _since(value: Any) -> Any:
    if value is None or value == "":
        return None
    if isinstance(value, str) and (re.fullmatch(CURSOR_PATTERN, value) or parse_timestamp(value) is not None):
        return value
    raise PydanticCustomError("since", f"since must be an RFC 3339 timestamp (2025-11-13T12:00:00Z), a date "
                                       f"(2025-11-13) or a cursor the feed returned, got {str(value)[:60]!r}")


# -- the types -------------------------------------------------------------------------------------

# no maxLength beside a pattern (the pattern bounds an act id; a unit id has no bound but what exists):
# schemathesis 4.32 folds maxLength into a pattern's repetitions wrongly ((…)+ became (…){1,3})
ACT_SCHEMA = {"type": "string", "pattern": ACT_PATTERN}
UNIT_SCHEMA = {"type": "string", "pattern": UNIT_PATTERN}
ActPath = Annotated[str, Path(description="act id, e.g. pl:kc", examples=["pl:kc"]),
                    AfterValidator(_pattern_check("act", ACT_PATTERN)), WithJsonSchema(ACT_SCHEMA)]
ActQuery = Annotated[str | None, AfterValidator(_pattern_check("act", ACT_PATTERN)), WithJsonSchema(ACT_SCHEMA)]
UnitPath = Annotated[str, Path(description="version-free unit id: pl:kc:art:22^1, pl:kc:art:709^13:par:2, "
                                           "pl:kc:art:42:par:4:pt:1, de:bgb:par:433:abs:1, "
                                           "pl:kc:book:PIERWSZA:title:II", examples=["pl:kc:art:415"]),
                     AfterValidator(_pattern_check("unit_id", UNIT_PATTERN)), WithJsonSchema(UNIT_SCHEMA)]
AsOf = Annotated[str | None, Query(description="YYYY-MM-DD: the date the law is read at (omitted or empty: today)"),
                 *day("as_of", blank_is_today=True)]
VersionPath = Annotated[str, Path(description="a held version: its text-state date YYYY-MM-DD",
                                  examples=["2025-11-13"]), *day("version")]
SubscriptionId = Annotated[str, Path(description="sub_ and 24 hex digits", examples=["sub_0f3c9a1b2c3d4e5f60718293"]),
                           AfterValidator(_pattern_check("subscription_id", SUBSCRIPTION_PATTERN)),
                           WithJsonSchema({"type": "string", "pattern": SUBSCRIPTION_PATTERN})]
EventId = Annotated[str, Path(description="evt_ and 32 hex digits"),
                    AfterValidator(_pattern_check("event_id", EVENT_PATTERN)),
                    WithJsonSchema({"type": "string", "pattern": EVENT_PATTERN})]
Since = Annotated[str | None, Query(description="an RFC 3339 timestamp (publications at or after it), a date "
                                                "(midnight UTC), or a cursor the feed returned (entries strictly "
                                                "after it); empty: from the start"),
                  BeforeValidator(_since),
                  WithJsonSchema({"anyOf": [{"type": "string", "format": "date-time"}, DATE_SCHEMA,
                                            {"type": "string", "pattern": CURSOR_PATTERN},
                                            {"type": "string", "maxLength": 0}]})]


# -- the same, as fields of a JSON body ------------------------------------------------------------

AsOfField = Annotated[str | None, *day("as_of", blank_is_today=True)]
ActItem = Annotated[str, AfterValidator(_pattern_check("act", ACT_PATTERN)), WithJsonSchema(ACT_SCHEMA)]
OptionalAct = Annotated[str | None, AfterValidator(_pattern_check("act", ACT_PATTERN)), WithJsonSchema(ACT_SCHEMA)]
OptionalUnit = Annotated[str | None, AfterValidator(_pattern_check("unit_id", UNIT_PATTERN)), WithJsonSchema(UNIT_SCHEMA)]


# what Python's str.strip() removes (the search service strips the query), spelled out so that the
# schema's pattern (ECMA regex, whose \s differs: no \x1c-\x1f or \x85, but \ufeff) says the same
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" \
         "\u200a\u2028\u2029\u202f\u205f\u3000"
WORD_PATTERN = "[^" + SPACES + "]"


def _has_a_word(name: str):
    rx = re.compile(WORD_PATTERN)

    def check(value: Any) -> Any:
        if isinstance(value, str) and not rx.search(value):
            raise PydanticCustomError("blank", f"{name} has nothing to search for (only spaces)")
        return value
    return check


def text(name: str, *, max_length: int) -> list:
    """Free text with something to search for (a character ``str.strip()`` keeps), at most ``max_length``."""
    return [AfterValidator(_has_a_word(name)),
            WithJsonSchema({"type": "string", "minLength": 1, "maxLength": max_length, "pattern": WORD_PATTERN})]


def _drop_null(schema: dict) -> None:
    """A body's optional fields are omitted, never null: their schemas say so (``null`` is refused)."""
    for prop in (schema.get("properties") or {}).values():
        branches = prop.get("anyOf")
        if isinstance(branches, list) and {"type": "null"} in branches:
            rest = [b for b in branches if b != {"type": "null"}]
            prop.pop("anyOf")
            if len(rest) == 1:
                prop.update(rest[0])
            else:
                prop["anyOf"] = rest


class Body(BaseModel):
    """A JSON request body: an optional field is left out, not sent as ``null`` (what its schema says)."""

    model_config = ConfigDict(json_schema_extra=_drop_null)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = [k for k, v in data.items() if v is None and k in cls.model_fields]
            if nulls:
                raise PydanticCustomError("null", f"{nulls[0]}: null is not a value; leave the field out")
        return data
