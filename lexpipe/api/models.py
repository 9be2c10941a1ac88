"""Response models of the read endpoints (``/acts``, ``/units``): the OpenAPI contract.

They mirror the read layer's dataclasses (:mod:`pipelines.reads`) field for field and are built from
them (``from_attributes``); the field descriptions are what ``/docs`` shows.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ErrorOut(BaseModel):
    """Every refusal of every endpoint (:mod:`lexpipe.api.errors`)."""

    status: int = Field(description="the HTTP status again")
    field: str | None = Field(description="the request field at fault (as_of, act, unit_id, body, url, …); null "
                                          "when no one field is")
    message: str = Field(description="what was wrong with the request, and what there is instead")
    detail: str = Field(description="the message again, for clients written against FastAPI's {\"detail\": …}")


InvalidOut = ErrorOut  # one shape: a 422 is no different


class ActOut(_Out):
    act_id: str = Field(description="e.g. pl:kc")
    jurisdiction: str
    language: str
    title: str
    citation: str = Field(description="short citation form, e.g. k.c.")
    official_title: str
    source: str = Field(description="eli | gesetze")
    address: str = Field(description="ELI address (DU/1964/93) or the gesetze slug")
    served_version: str | None = Field(description="the version current.json names (the newest published)")
    versions: list[str] = Field(description="held (published) versions, oldest first")
    oldest_version: str | None
    newest_version: str | None


class VersionOut(_Out):
    act_id: str
    version: str = Field(description="text-state date of the consolidated text (YYYY-MM-DD)")
    source_date: str = Field(description="the date the source gives for this text (ELI change date)")
    source_sha256: str | None = Field(description="sha256 of the source document the version was parsed from")
    source_url: str | None
    based_on: str | None = Field(description="the consolidated text it rests on, as printed")
    parser_version: str | None
    published_at: str | None = Field(description="when lexpipe published the version (ISO 8601, UTC)")
    counts: dict[str, int | float] = Field(description="the manifest's stats: articles, repealed, pending_changes, …")
    served: bool = Field(description="this is the version current.json names")
    previous_version: str | None
    next_version: str | None
    diff_from: list[str] = Field(description="versions a diff table was published against")
    tables: list[str] = Field(description="tables /download serves for this version")


class PathEntryOut(_Out):
    level: str
    number: str | None
    heading: str | None
    id: str


class UnitOut(_Out):
    unit_id: str
    act_id: str
    level: str = Field(description="book … section | article | paragraph | point | letter")
    number: str | None = Field(description="as printed, superscripts as ^N")
    as_of: str = Field(description="the date asked for")
    version: str = Field(description="the held version read: the newest on or before as_of")
    next_version: str | None = Field(description="the next held version (the wording may change there); null: newest")
    newest_version: str
    covered: bool = Field(description="as_of is on or after the oldest held version (earlier dates are refused)")
    status: str = Field(description="in_force | repealed | pending (only in an announced wording)")
    status_note: str | None = Field(description="the printed status, e.g. (uchylony)")
    heading: str | None = Field(description="structure units: the heading")
    title: str | None = Field(description="articles: the article's own heading, where the act prints one")
    text: str | None = Field(description="the wording in force on the version date; null for structure units and "
                                         "units only an announced wording has")
    text_pending: str | None = Field(description="the announced wording of this unit, when the version announces a "
                                                 "change of it")
    pending_effective_date: str | None = Field(description="when the announced wording takes effect")
    pending_note: str | None = Field(description="the source's note announcing the change")
    pending_applies: bool = Field(description="as_of is on or after pending_effective_date: on as_of the announced "
                                              "wording (text_pending) is the one in force")
    article_id: str | None
    path: list[PathEntryOut] = Field(description="the units above, from the top level down to the parent")
    path_text: str | None
    children: list[str] = Field(description="ids of the units directly below")


class TocEntryOut(_Out):
    id: str
    level: str
    number: str | None
    number_display: str | None = Field(description="as printed: 22¹")
    heading: str | None = Field(description="structure heading, or the article's own title")
    status: str | None
    children: list["TocEntryOut"] = Field(default_factory=list)


TocEntryOut.model_rebuild()


class TocOut(_Out):
    act_id: str
    as_of: str
    version: str = Field(description="the held version whose hierarchy this is")
    next_version: str | None
    articles: int
    repealed: int
    entries: list[TocEntryOut] = Field(description="top-level units (books, or articles of an act without books)")


class UnitChangeOut(_Out):
    from_version: str
    to_version: str
    change: str = Field(description="added | changed | repealed | removed | editorial (only the source's printing "
                                    "differs: not an amendment)")
    old_text: str | None = Field(description="the reading in from_version (text in force, then any announced wording)")
    new_text: str | None
    word_diff: str = Field(description="[-removed-]{+added+} with unchanged words between")
    old_status: str | None
    new_status: str | None
    source: str = Field(description="stored: the published diff table | computed: compared for this unit")


class HistoryOut(_Out):
    unit_id: str
    act_id: str
    held_versions: list[str]
    present_in: list[str] = Field(description="held versions that have the unit")
    changes: list[UnitChangeOut] = Field(description="changes between consecutive held versions, oldest first")


class PartChangeOut(_Out):
    unit_id: str
    level: str
    change: str
    word_diff: str


class DiffEntryOut(_Out):
    unit_id: str = Field(description="the article")
    number: str | None
    change: str = Field(description="added | changed | repealed | removed | editorial")
    old_text: str | None
    new_text: str | None
    word_diff: str
    old_hash: str | None
    new_hash: str | None
    parts: list[PartChangeOut] = Field(description="the article's paragraphs, points and letters that changed")


class DiffOut(_Out):
    act_id: str
    from_version: str
    to_version: str
    consecutive: bool = Field(description="no held version lies between the two")
    source: str = Field(description="stored: the published diff table | computed: the same diff over the two "
                                    "versions")
    counts: dict[str, int]
    changes: list[DiffEntryOut] = Field(description="amendments: added, changed, repealed, removed")
    editorial: list[DiffEntryOut] = Field(description="printed differently, not amended")


NOT_FOUND = {404: {"model": ErrorOut, "description": "unknown act, version or unit, or a date before the oldest "
                                                      "held version"}}
UNPROCESSABLE = {422: {"model": ErrorOut, "description": "malformed input: a date that is no real YYYY-MM-DD day, "
                                                         "an id off its pattern, a body that is not JSON, or a "
                                                         "version pair that cannot be compared"}}
TOO_LARGE = {413: {"model": ErrorOut, "description": "the request body is larger than LEXPIPE_API_MAX_BODY_BYTES"}}
RATE_LIMITED = {429: {"model": ErrorOut, "description": "too many requests from this client IP or API key; retry "
                                                        "after the Retry-After header's seconds",
                      "headers": {"Retry-After": {"schema": {"type": "integer"},
                                                  "description": "seconds until a request is allowed again"}}}}
