"""Open Legal Data (https://de.openlegaldata.io/api/) case-law connector, one module per concern.

    settings   ``LEXPIPE_OLDP_*``, query and date-window parameters, where state lives (``OldpPaths``)
    errors     the exceptions every layer raises
    pages      a DRF list page read record by record (one bad record costs only itself)
    records    record validation (CASES / COURTS rows) and quarantine rows
    cursor     the persisted sync cursor and the keyset ordering key
    client     ``OpenLegalDataApi``: list URLs, the token header, the change probe
    courts     the court list, read whole by limit/offset
    sync       ``CaseSync`` (keyset and date-window modes) and ``case_sync_from_settings``
    sample     the offline source: the sample files answered like the live API, in-process

Why the sync is built the way it is (keyset cursor vs date windows, crash safety, what the live
API supports and what each mode guarantees): the docstring of ``connectors.openlegaldata.sync``.
This package re-exports the names callers import; the rest lives in the modules above.
"""

from connectors.openlegaldata.client import OpenLegalDataApi
from connectors.openlegaldata.cursor import case_key
from connectors.openlegaldata.errors import (CursorContractError, OpenLegalDataError,
                                             PageFormatError, SyncLockedError)
from connectors.openlegaldata.pages import parse_page
from connectors.openlegaldata.records import validate_case
from connectors.openlegaldata.sample import (CASES_PATH, COURT_API_FIELDS, COURTS_DEFAULT_LIMIT,
                                             COURTS_PATH, PAGINATE_UNTIL, SAMPLE_BASE_URL,
                                             Behaviour, Row, SampleOpenLegalData)
from connectors.openlegaldata.settings import (ApiParams, OldpPaths, OpenLegalDataSettings,
                                               WindowConfig)
from connectors.openlegaldata.sync import CaseSync, PageReport, SyncReport, case_sync_from_settings

__all__ = [
    # the connector
    "ApiParams", "CaseSync", "CursorContractError", "OldpPaths", "OpenLegalDataApi",
    "OpenLegalDataError", "OpenLegalDataSettings", "PageFormatError", "PageReport",
    "SyncLockedError", "SyncReport", "WindowConfig", "case_key", "case_sync_from_settings",
    "parse_page", "validate_case",
    # the offline source (connectors.openlegaldata.sample)
    "Behaviour", "CASES_PATH", "COURT_API_FIELDS", "COURTS_DEFAULT_LIMIT", "COURTS_PATH",
    "PAGINATE_UNTIL", "Row", "SAMPLE_BASE_URL", "SampleOpenLegalData",
]
