"""Configuration of the Open Legal Data connector: the ``LEXPIPE_OLDP_*`` settings, the query
and date-window parameters derived from them, the source's names, and where its state lives.

Why a module of its own: the client, both syncs, the asset binding and the case-law pipeline
read these values (``OldpPaths`` above all); none of them should have to import the sync for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from connectors.openlegaldata.sample import PAGINATE_UNTIL
from connectors.state_paths import SyncStatePaths

SOURCE = "openlegaldata"
DEFAULT_BASE_URL = "https://de.openlegaldata.io/api"
MAX_PAGE_SIZE = 1000  # SmallResultsSetPagination.max_page_size
CASES_ACT_ID = "de:openlegaldata:cases"    # landing-zone provenance labels
COURTS_ACT_ID = "de:openlegaldata:courts"


class OpenLegalDataSettings(BaseSettings):
    """``LEXPIPE_OLDP_*``: where the API is, the token, and how the cursor is expressed."""

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_OLDP_", extra="ignore")

    base_url: str = DEFAULT_BASE_URL
    api_token: SecretStr | None = None
    page_size: int = 100
    ordering: str = "updated_date,id"
    since_param: str = "updated_date__gte"
    sync_mode: Literal["auto", "keyset", "date_windows"] = Field("auto", description=(
        "keyset needs ordering/filtering by updated_date (the live API has neither); date_windows "
        "walks decision-date windows; auto tries keyset and falls back for good on a contract failure."))
    max_pages: int = Field(PAGINATE_UNTIL, description=(
        "Deepest page the server serves (oldp PAGINATE_UNTIL): a date window holds at most "
        "max_pages × page_size records."))
    window_days: int = Field(31, description="Initial span of a date window (adapts to the density).")
    overlap_days: int = Field(60, description=(
        "An incremental date-window pass re-reads this many days before the newest decision date seen."))
    full_rescan_days: int = Field(30, description=(
        "Start a date-window pass from the beginning when the last full one is older (0 = never again)."))


@dataclass(frozen=True)
class ApiParams:
    """Query parameters carrying the keyset cursor (the server must honour them; we verify)."""

    ordering: str = "updated_date,id"
    since_param: str = "updated_date__gte"
    page_size: int = 100
    max_pages: int = PAGINATE_UNTIL  # the server's page cap (date-window mode sizes windows by it)

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be in 1..{MAX_PAGE_SIZE}, got {self.page_size}")
        if self.max_pages < 1:
            raise ValueError(f"max_pages must be at least 1, got {self.max_pages}")

    @property
    def window_capacity(self) -> int:
        """How many records of one filter the server lets us page through."""
        return self.max_pages * self.page_size


@dataclass(frozen=True)
class WindowConfig:
    """Shape of the date-window walk (``LEXPIPE_OLDP_*``; see the ``sync`` module docstring)."""

    window_days: int = 31
    overlap_days: int = 60
    full_rescan_days: int = 30
    max_rereads: int = 2
    max_span_days: int = 3660

    def __post_init__(self) -> None:
        if self.window_days < 1 or self.overlap_days < 0 or self.full_rescan_days < 0:
            raise ValueError(f"invalid date-window settings: {self}")


@dataclass(frozen=True)
class OldpPaths(SyncStatePaths):
    """Where this connector keeps its state and data under ``$LEXPIPE_HOME``.

        state/openlegaldata/cases_cursor.json   the persisted cursor (atomic JSON)
        state/openlegaldata/cases.lock          one sync at a time (flock; freed by the kernel on death)
        caselaw/de/openlegaldata/                CaseStore: cases/, quarantine/, courts.parquet
        raw/                                     RawLandingZone: every page body, content-addressed

    ``state_dir``, ``cursor_path``, ``lock_path`` and ``raw`` follow the layout every syncing
    connector shares (``connectors.state_paths``).
    """

    source: ClassVar[str] = SOURCE
    stream: ClassVar[str] = "cases"

    @property
    def store_root(self) -> Path:
        return self.home / "caselaw" / "de" / SOURCE


def api_params(oldp: OpenLegalDataSettings) -> ApiParams:
    return ApiParams(oldp.ordering, oldp.since_param, oldp.page_size, oldp.max_pages)


def window_config(oldp: OpenLegalDataSettings) -> WindowConfig:
    return WindowConfig(window_days=oldp.window_days, overlap_days=oldp.overlap_days,
                        full_rescan_days=oldp.full_rescan_days)
