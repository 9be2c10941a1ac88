"""What the Open Legal Data connector tests share: the expected sample outcome and a sync
against the loopback server (``tests/fake_openlegaldata.py``). The fixtures are in conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pytest_httpserver import HTTPServer

from connectors.http import PoliteHttpClient
from connectors.openlegaldata import ApiParams, CaseSync, OpenLegalDataApi, WindowConfig

TOKEN = "oldp-SECRET-token-4711"
VALID_IDS = [65, 66, 67, 68, 69, 1888]
# 1889 (empty content) and the seven openJur records carry an id; the BVerfG record has
# "id": null and the unparseable openJur export has none.
QUARANTINED_IDS = ["1889", "30534", "30535", "30540", "30541", "30737", "30738", "30739"]
SERVED_RECORDS = 16


def make_sync(httpserver: HTTPServer, home: Path, *, page_size: int = 3,
              sleeps: list[float] | None = None, token: str = TOKEN, mode: str = "auto",
              max_pages: int = 10, windows: WindowConfig = WindowConfig(),
              now: Any = None, **client_kw: Any) -> CaseSync:
    opts: dict[str, Any] = dict(user_agent="lexpipe-tests/0 (+https://example.invalid)",
                                timeout_s=5.0, max_retries=3, backoff_base_s=0.5,
                                backoff_max_s=8.0, min_interval_s=0.0,
                                sleep=(sleeps.append if sleeps is not None else lambda s: None))
    opts.update(client_kw)
    api = OpenLegalDataApi(PoliteHttpClient(**opts), httpserver.url_for("/api"),
                           api_token=SecretStr(token),
                           params=ApiParams(page_size=page_size, max_pages=max_pages))
    return CaseSync(api, home, mode=mode, windows=windows, **({"now": now} if now else {}))
