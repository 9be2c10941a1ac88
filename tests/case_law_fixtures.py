"""The CASES table as the Open Legal Data connector writes it from the real samples.

Why through the connector: case-law steps consume the connector's output, so their tests should
see exactly that — the real sample records synced over a loopback HTTP server
(``fake_openlegaldata``), malformed records already quarantined by the connector.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pydantic import SecretStr
from pytest_httpserver import HTTPServer

from connectors.http import PoliteHttpClient
from connectors.openlegaldata import ApiParams, CaseSync, OpenLegalDataApi
from fake_openlegaldata import FakeOpenLegalData

TOKEN = "case-law-tests-token"


def synced_cases(sample_dir: Path, home: Path, *, courts: bool = False) -> tuple[pa.Table, pa.Table]:
    """(cases, quarantine) after a full sync of ``<sample_dir>/de/openlegaldata`` into ``home``;
    ``courts=True`` also syncs the court list (``CaseStore.courts()`` under ``home``)."""
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    try:
        FakeOpenLegalData(sample_dir, token=TOKEN).install(server)
        client = PoliteHttpClient(user_agent="lexpipe-tests/0 (+https://example.invalid)", timeout_s=5.0,
                                  max_retries=1, backoff_base_s=0.1, backoff_max_s=0.1, min_interval_s=0.0,
                                  sleep=lambda s: None)
        api = OpenLegalDataApi(client, server.url_for("/api"), api_token=SecretStr(TOKEN),
                               params=ApiParams(page_size=5))
        sync = CaseSync(api, home)
        report = sync.sync_cases()
        assert report.complete, "sync of the samples did not complete"
        if courts:
            sync.sync_courts()
        return sync.store.cases(), sync.store.quarantine()
    finally:
        server.clear()
        if server.is_running():
            server.stop()
