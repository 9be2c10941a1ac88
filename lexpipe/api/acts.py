"""Acts and their versions: ``/acts``, ``/acts/{act}``, ``/acts/{act}/versions[/{v}]``,
``/acts/{act}/toc?as_of=`` and ``/acts/{act}/diff?from=&to=`` (:mod:`pipelines.reads`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lexpipe.api.deps import get_reads
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE, ActOut, DiffOut, TocOut, VersionOut
from lexpipe.api.params import ActPath, AsOf, VersionPath, day
from pipelines.reads import ReadService

router = APIRouter(tags=["acts"])

ERRORS = {**NOT_FOUND, **UNPROCESSABLE}


@router.get("/acts", response_model=list[ActOut])
def acts(reads: ReadService = Depends(get_reads)) -> list[ActOut]:
    """Every act of the registry with its held versions and the one served."""
    return [ActOut.model_validate(a) for a in reads.acts()]


@router.get("/acts/{act}", response_model=ActOut, responses=ERRORS)
def act(act: ActPath, reads: ReadService = Depends(get_reads)) -> ActOut:
    return ActOut.model_validate(reads.act(act))


@router.get("/acts/{act}/versions", response_model=list[VersionOut], responses=ERRORS)
def versions(act: ActPath, reads: ReadService = Depends(get_reads)) -> list[VersionOut]:
    """The held versions of an act, oldest first: source, counts, publication time, diff tables."""
    return [VersionOut.model_validate(v) for v in reads.versions(act)]


@router.get("/acts/{act}/versions/{version}", response_model=VersionOut, responses=ERRORS)
def version(act: ActPath, version: VersionPath, reads: ReadService = Depends(get_reads)) -> VersionOut:
    return VersionOut.model_validate(reads.version(act, version))


@router.get("/acts/{act}/toc", response_model=TocOut, responses=ERRORS)
def toc(act: ActPath, as_of: AsOf = None, reads: ReadService = Depends(get_reads)) -> TocOut:
    """The hierarchy (book … article) of the version in force on ``as_of`` (omitted or empty: today);
    a date before the oldest held version is 404."""
    return TocOut.model_validate(reads.toc(act, as_of))


@router.get("/acts/{act}/diff", response_model=DiffOut, responses=ERRORS)
def diff(act: ActPath, from_: Annotated[str, Query(alias="from", description="older held version (YYYY-MM-DD)"),
                                        *day("from")],
         to: Annotated[str, Query(description="newer held version (YYYY-MM-DD)"), *day("to")],
         reads: ReadService = Depends(get_reads)) -> DiffOut:
    """Per-article changes from one held version to a newer one, editorial reprints apart."""
    return DiffOut.model_validate(reads.diff(act, from_, to))
