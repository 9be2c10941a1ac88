"""SAOS (https://www.saos.org.pl) Polish judgments connector, one module per concern.

    settings    ``LEXPIPE_SAOS_*`` (``SaosSettings``), the dump query (``DumpQuery``), where state
                lives (``SaosPaths``)
    errors      the exceptions every layer raises
    pages       a dump page (``links`` / ``items``) read record by record (one bad record costs
                only itself)
    records     record validation: a dump record → a ``SAOS_JUDGMENTS`` row, or every reason not
    quarantine  quarantine rows (``QUARANTINE``, kinds ``judgment`` and ``page``) with the evidence
    store       ``JudgmentStore``: append-only idempotent Parquet, newest fetch per judgment wins
    cursor      the persisted cursor: the pass's query, next page, pass start, next ``since``
    client      ``SaosApi``: dump URLs, polite GETs, the ``self``/``next`` link checks
    sync        ``JudgmentSync`` and ``judgment_sync_from_settings``
    sample      the offline source: the sample pages answered like the live API, in-process

Why the sync is built the way it is (passes over a stable order, ``sinceModificationDate`` from
the previous pass's start, crash safety, what the live API does and what a pass guarantees): the
docstring of ``connectors.saos.sync``. This package re-exports the names callers import; the rest
lives in the modules above.
"""

from connectors.saos.client import SaosApi
from connectors.saos.cursor import CursorStore, SaosCursor
from connectors.saos.errors import ContractError, PageFormatError, SaosError, SyncLockedError
from connectors.saos.pages import DumpPage, RawRecord, parse_dump_page
from connectors.saos.records import validate_judgment
from connectors.saos.sample import (DUMP_PATH, MAX_PAGE_SIZE, MIN_PAGE_SIZE, SAMPLE_BASE_URL,
                                    SAMPLE_MODIFIED_AT, SampleSaos, format_since, parse_since)
from connectors.saos.settings import DumpQuery, SaosPaths, SaosSettings, dump_query
from connectors.saos.store import JudgmentStore, LatestVersions
from connectors.saos.sync import JudgmentSync, PageReport, Probe, SyncReport, judgment_sync_from_settings

__all__ = [
    # the connector
    "ContractError", "CursorStore", "DumpPage", "DumpQuery", "JudgmentStore", "JudgmentSync",
    "LatestVersions", "PageFormatError", "PageReport", "Probe", "RawRecord", "SaosApi", "SaosCursor",
    "SaosError", "SaosPaths", "SaosSettings", "SyncLockedError", "SyncReport", "dump_query",
    "format_since", "judgment_sync_from_settings", "parse_dump_page", "parse_since",
    "validate_judgment",
    # the offline source (connectors.saos.sample)
    "DUMP_PATH", "MAX_PAGE_SIZE", "MIN_PAGE_SIZE", "SAMPLE_BASE_URL", "SAMPLE_MODIFIED_AT",
    "SampleSaos",
]
