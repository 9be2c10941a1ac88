"""Bulk download of a version: ``/acts/{act}/versions/{v}/download?format=parquet|jsonl&table=articles``.

Parquet is the published file byte for byte; JSONL one row per line. A strong ETag from the source and
content hashes (``If-None-Match`` → 304), byte ranges (``Range: bytes=…`` → 206; a bad or
unsatisfiable range → 416 with ``Content-Range: bytes */<size>``; ``If-Range`` honoured).
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse

from lexpipe.api import errors
from lexpipe.api.deps import get_reads
from lexpipe.api.models import NOT_FOUND, UNPROCESSABLE, ErrorOut
from lexpipe.api.params import ActPath, VersionPath
from pipelines.reads import BadRange, ReadService
from pipelines.reads.export import FORMATS, parse_range

router = APIRouter(tags=["export"])


def etag_matches(header: str, etag: str) -> bool:
    """``If-None-Match`` (weak comparison: a ``W/`` prefix is ignored; ``*`` matches anything)."""
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or etag in (t.removeprefix("W/") for t in tags)


@router.get("/acts/{act}/versions/{version}/download", response_class=Response,
            responses={200: {"content": {m: {} for m in FORMATS.values()},
                             "description": "the table (Accept-Ranges: bytes, ETag)"},
                       206: {"description": "the requested byte range"},
                       304: {"description": "If-None-Match matched the ETag"},
                       416: {"model": ErrorOut, "description": "a malformed, multiple or unsatisfiable range"},
                       **NOT_FOUND, **UNPROCESSABLE})
def download(request: Request, act: ActPath, version: VersionPath,
             format: Literal["parquet", "jsonl"] = Query("parquet", description="parquet | jsonl"),
             table: Literal["articles", "nodes", "chunks", "acts", "diff"] = Query(
                 "articles", description="diff: the version's diff table against the previous held version"),
             reads: ReadService = Depends(get_reads)) -> Response:
    ex = reads.export(act, version, table, format)
    headers = {"ETag": ex.etag, "Accept-Ranges": "bytes", "Cache-Control": "no-cache",
               "Content-Disposition": f'attachment; filename="{ex.filename}"'}
    inm = request.headers.get("if-none-match")
    if inm and etag_matches(inm, ex.etag):
        return Response(status_code=304, headers={k: headers[k] for k in ("ETag", "Cache-Control")})
    rng = request.headers.get("range")
    if_range = request.headers.get("if-range")
    if rng and if_range and if_range.strip() != ex.etag:
        rng = None  # the client's copy is of another version of the file: send it whole
    if rng:
        size = ex.size()
        try:
            span = parse_range(rng, size)
        except BadRange as exc:
            return errors.response(416, str(exc), "Range",
                                   {"Content-Range": f"bytes */{exc.size}", "ETag": ex.etag})
        if span is not None:
            first, last = span
            return StreamingResponse(ex.slice(first, last), status_code=206, media_type=ex.media_type,
                                     headers={**headers, "Content-Range": f"bytes {first}-{last}/{size}",
                                              "Content-Length": str(last - first + 1)})
    if format == "parquet":
        headers["Content-Length"] = str(ex.size())
    return StreamingResponse(ex.stream(), media_type=ex.media_type, headers=headers)
