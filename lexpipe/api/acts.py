"""Acts and their versions: ``/acts``, ``/acts/{act}``, ``/acts/{act}/versions[/{v}]``,
``/acts/{act}/toc?as_of=`` and ``/acts/{act}/diff?from=&to=`` (:mod:`pipelines.reads`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query

from lexpipe.api.deps import get_reads
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE, ActOut, DiffOut, TocOut, VersionOut
from pipelines.reads import ReadService

router = APIRouter(tags=["acts"])

ACT = Path(description="act id, e.g. pl:kc", max_length=64)
AS_OF = Query(None, description="YYYY-MM-DD (default: today); read from the newest held version on or before it",
              max_length=40)


@router.get("/acts", response_model=list[ActOut])
def acts(reads: ReadService = Depends(get_reads)) -> list[ActOut]:
    """Every act of the registry with its held versions and the one served."""
    return [ActOut.model_validate(a) for a in reads.acts()]


@router.get("/acts/{act}", response_model=ActOut, responses=NOT_FOUND)
def act(act: str = ACT, reads: ReadService = Depends(get_reads)) -> ActOut:
    return ActOut.model_validate(reads.act(act))


@router.get("/acts/{act}/versions", response_model=list[VersionOut], responses=NOT_FOUND)
def versions(act: str = ACT, reads: ReadService = Depends(get_reads)) -> list[VersionOut]:
    """The held versions of an act, oldest first: source, counts, publication time, diff tables."""
    return [VersionOut.model_validate(v) for v in reads.versions(act)]


@router.get("/acts/{act}/versions/{version}", response_model=VersionOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def version(act: str = ACT, version: str = Path(max_length=40), reads: ReadService = Depends(get_reads)) -> VersionOut:
    return VersionOut.model_validate(reads.version(act, version))


@router.get("/acts/{act}/toc", response_model=TocOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def toc(act: str = ACT, as_of: str | None = AS_OF, reads: ReadService = Depends(get_reads)) -> TocOut:
    """The hierarchy (book … article) of the version in force on ``as_of``."""
    return TocOut.model_validate(reads.toc(act, as_of))


@router.get("/acts/{act}/diff", response_model=DiffOut, responses={**NOT_FOUND, **UNPROCESSABLE})
def diff(act: str = ACT, from_: str = Query(..., alias="from", max_length=40, description="older held version"),
         to: str = Query(..., max_length=40, description="newer held version"),
         reads: ReadService = Depends(get_reads)) -> DiffOut:
    """Per-article changes from one held version to a newer one, editorial reprints apart."""
    return DiffOut.model_validate(reads.diff(act, from_, to))
