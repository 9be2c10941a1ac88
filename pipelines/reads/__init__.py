"""Point-in-time reads of the published corpus: acts and versions, a unit's wording at a date, an
act's table of contents at a date, a unit's history, the diff between two versions, bulk export.

Orchestrator-free and HTTP-free (the API in ``lexpipe/api`` is a thin layer over
:class:`ReadService`); reads only published versions through :class:`~pipelines.statutes.store.CorpusStore`,
caching what it reads per file and modification time.

    versions.py  acts (registry rows + served version) and held versions (manifest, source, counts)
    units.py     a unit at a date (any level), its state in a version and how a change is classified
    toc.py       the hierarchy of the version in force at a date
    history.py   the versions in which a unit changed, with word diffs
    diffs.py     an act's changes between two held versions (stored or computed), editorial apart
    citing.py    the court decisions citing a unit (case-law citation tables)
    export.py    one table of a version as Parquet or JSONL, ETag, byte ranges
    corpus.py    CorpusReader: held versions, manifests, per-version unit indices (cached)
    cache.py     per-file caches keyed by (mtime, size, inode)
    dates.py     strict YYYY-MM-DD parsing
    errors.py    NotFound (404) and InvalidRead (422) refusals
"""

from pipelines.reads.corpus import CorpusReader
from pipelines.reads.errors import BadRange, InvalidRead, NotFound, ReadError
from pipelines.reads.service import ReadService

__all__ = ["BadRange", "CorpusReader", "InvalidRead", "NotFound", "ReadError", "ReadService"]
