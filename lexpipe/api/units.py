"""A unit at a date and its history: ``/units/{unit_id}?as_of=`` and ``/units/{unit_id}/history``."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from lexpipe.api.deps import get_reads
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE, HistoryOut, UnitOut
from lexpipe.api.params import AsOf, UnitPath
from pipelines.reads import ReadService

router = APIRouter(tags=["units"])


@router.get("/units/{unit_id}", response_model=UnitOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def unit(unit_id: UnitPath, as_of: AsOf = None, reads: ReadService = Depends(get_reads)) -> UnitOut:
    """The unit's wording in force on ``as_of`` (omitted or empty: today), from the newest held version on
    or before it, with any announced wording and its effective date. A date before the oldest held
    version is 404: what was in force then is not held."""
    return UnitOut.model_validate(reads.unit(unit_id, as_of))


@router.get("/units/{unit_id}/history", response_model=HistoryOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def history(unit_id: UnitPath, reads: ReadService = Depends(get_reads)) -> HistoryOut:
    """The held versions in which the unit changed, with the word diff of each change."""
    return HistoryOut.model_validate(reads.history(unit_id))
