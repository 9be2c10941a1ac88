"""Errors of the Elasticsearch backend (loads and searches)."""

from __future__ import annotations

from typing import Any, Mapping

from pipelines.retrieval.interface import EncoderMismatch, SearchError


class ElasticsearchBackendError(RuntimeError):
    pass


class ElasticsearchSearchError(ElasticsearchBackendError, SearchError):
    """A request the loaded versions cannot answer (unknown act or version, ``as_of`` before every
    version, unknown retriever). A ``SearchError`` like the embedded backend's, so the search
    service and API map it to 4xx the same way for both backends."""


class ElasticsearchEncoderMismatch(ElasticsearchSearchError, EncoderMismatch):
    """The alias's index was embedded with another encoder than this server's (503, as embedded)."""


class IndexGone(Exception):
    """The physical index resolved for a search was deleted (a rebuild moved the alias away)."""


class IndexLocked(ElasticsearchBackendError):
    """Another publication holds the language index's lease."""


class BulkLoadError(ElasticsearchBackendError):
    """Some bulk items were rejected (after 429 retries); ``failed_ids`` names them. The
    publication fails before its alias swap."""

    def __init__(self, index: str, failed: list[tuple[str, int, Any]]):
        self.index = index
        self.failed_ids = [f[0] for f in failed]
        self.errors = failed
        shown = ", ".join(f"{cid} (status {st}: {_reason(err)})" for cid, st, err in failed[:10])
        more = f" and {len(failed) - 10} more" if len(failed) > 10 else ""
        super().__init__(f"{len(failed)} document(s) failed to index into {index}: {shown}{more}")


class IndexLoadError(ElasticsearchBackendError):
    """A publication step failed; what it staged was discarded and the alias still serves the
    previous generation."""

    def __init__(self, message: str, *, index: str, step: str):
        self.index = index
        self.step = step
        super().__init__(message)


def _reason(err: Any) -> str:
    if isinstance(err, Mapping):
        return f"{err.get('type', '')}: {err.get('reason', '')}".strip(": ")
    return str(err)
