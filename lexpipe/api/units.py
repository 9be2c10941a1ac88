"""A unit at a date and its history: ``/units/{unit_id}?as_of=`` and ``/units/{unit_id}/history``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query

from lexpipe.api.deps import get_reads
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE, HistoryOut, UnitOut
from pipelines.reads import ReadService

router = APIRouter(tags=["units"])

UNIT = Path(description="version-free unit id: pl:kc:art:22^1, pl:kc:art:709^13:par:2, pl:kc:art:42:par:4:pt:1, "
                        "de:bgb:par:433:abs:1, pl:kc:book:PIERWSZA:title:II", max_length=300)


@router.get("/units/{unit_id}", response_model=UnitOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def unit(unit_id: str = UNIT,
         as_of: str | None = Query(None, max_length=40, description="YYYY-MM-DD (default: today)"),
         reads: ReadService = Depends(get_reads)) -> UnitOut:
    """The unit's wording in force on ``as_of``, from the newest held version on or before it, with any
    announced wording and its effective date. A date before the oldest held version is refused (422)."""
    return UnitOut.model_validate(reads.unit(unit_id, as_of))


@router.get("/units/{unit_id}/history", response_model=HistoryOut, responses=NOT_FOUND)
def history(unit_id: str = UNIT, reads: ReadService = Depends(get_reads)) -> HistoryOut:
    """The held versions in which the unit changed, with the word diff of each change."""
    return HistoryOut.model_validate(reads.history(unit_id))
