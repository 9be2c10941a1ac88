"""Configuration of the SAOS connector: the ``LEXPIPE_SAOS_*`` settings, the dump query derived
from them, and where the connector's state lives under ``$LEXPIPE_HOME``.

Why a module of its own: the client, the sync, the cursor and (later) the asset binding and the
Polish case-law pipeline read these values (``SaosPaths`` above all); none of them should have to
import the sync for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import ClassVar

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from connectors.saos.records import SOURCE
from connectors.saos.sample import MAX_PAGE_SIZE, MIN_PAGE_SIZE, parse_day, parse_since
from connectors.state_paths import SyncStatePaths

DEFAULT_BASE_URL = "https://www.saos.org.pl"
JUDGMENTS_ACT_ID = "pl:saos:judgments"  # landing-zone provenance label of dump pages


class SaosSettings(BaseSettings):
    """``LEXPIPE_SAOS_*``: where the API is, what to ask for, and how politely."""

    model_config = SettingsConfigDict(env_prefix="LEXPIPE_SAOS_", extra="ignore")

    base_url: str = Field(DEFAULT_BASE_URL, description="API root; the dump is <base_url>/api/dump/judgments.")
    page_size: int = Field(MAX_PAGE_SIZE, ge=MIN_PAGE_SIZE, le=MAX_PAGE_SIZE, description=(
        "pageSize of the dump (the API allows 10..100): records per request."))
    judgment_start_date: date | None = Field(None, description="judgmentStartDate (inclusive); unset: no lower bound.")
    judgment_end_date: date | None = Field(None, description="judgmentEndDate (inclusive); unset: no upper bound.")
    with_generated: bool | None = Field(None, description=(
        "withGenerated: add SAOS's generated data (the API's default is true); unset: not sent."))
    overlap_hours: float = Field(24.0, ge=0, description=(
        "An incremental pass asks for sinceModificationDate = the previous pass's start minus this "
        "overlap (clock skew between us and SAOS, imports committed after they were stamped)."))
    full_rescan_days: int = Field(0, ge=0, description=(
        "Start a pass without sinceModificationDate when the last full pass is older than this many "
        "days (0 = only the first pass is full). A full pass re-reads the whole dump."))
    min_interval_s: float = Field(1.0, ge=0, description="Rate limit: minimum seconds between two requests.")
    max_retries: int = Field(5, ge=0, description="Retries of a request after 429/5xx/timeouts/dropped connections.")
    backoff_base_s: float = Field(2.0, ge=0, description="First retry delay; doubles with every retry (with jitter).")
    backoff_max_s: float = Field(120.0, ge=0, description="Cap of one retry delay (also caps Retry-After).")
    timeout_s: float = Field(120.0, gt=0, description="HTTP timeout of one request (a full page is ~2.5 MB).")

    @model_validator(mode="after")
    def _window_in_order(self) -> "SaosSettings":
        if (self.judgment_start_date and self.judgment_end_date
                and self.judgment_start_date > self.judgment_end_date):
            raise ValueError(f"judgment_start_date {self.judgment_start_date} is after "
                             f"judgment_end_date {self.judgment_end_date}")
        return self


@dataclass(frozen=True)
class DumpQuery:
    """The query of one pass, in the wire formats: ``since`` is ``sinceModificationDate``
    (``yyyy-MM-dd'T'HH:mm:ss.SSS``, UTC; None = a full pass), ``start``/``end`` the ISO
    ``judgmentStartDate``/``judgmentEndDate`` (None = unbounded)."""

    since: str | None = None
    start: str | None = None
    end: str | None = None
    page_size: int = MAX_PAGE_SIZE
    with_generated: bool | None = None

    def __post_init__(self) -> None:
        if not MIN_PAGE_SIZE <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be in {MIN_PAGE_SIZE}..{MAX_PAGE_SIZE}, got {self.page_size}")
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None and parse_day(value) is None:
                raise ValueError(f"{name} must be an ISO date (yyyy-MM-dd), got {value!r}")
        if self.since is not None and parse_since(self.since) is None:
            raise ValueError(f"since must be yyyy-MM-dd'T'HH:mm:ss.SSS (UTC), got {self.since!r}")
        if self.start and self.end and self.start > self.end:
            raise ValueError(f"start {self.start} is after end {self.end}")

    def params(self, page: int) -> list[tuple[str, str]]:
        """The query string of page ``page``, parameters in the order the server's links use."""
        if page < 0:
            raise ValueError(f"page numbers start at 0, got {page}")
        query = [("pageSize", str(self.page_size)), ("pageNumber", str(page))]
        if self.start is not None:
            query.append(("judgmentStartDate", self.start))
        if self.end is not None:
            query.append(("judgmentEndDate", self.end))
        if self.since is not None:
            query.append(("sinceModificationDate", self.since))
        if self.with_generated is not None:
            query.append(("withGenerated", "true" if self.with_generated else "false"))
        return query

    def same_selection(self, other: "DumpQuery") -> bool:
        """Same records apart from ``since``: date window and generated data (page size aside)."""
        return (self.start, self.end, self.with_generated) == (other.start, other.end,
                                                               other.with_generated)


def dump_query(saos: SaosSettings) -> DumpQuery:
    """The configured query of a full pass (the sync adds ``since`` for incremental passes)."""
    return DumpQuery(None, saos.judgment_start_date.isoformat() if saos.judgment_start_date else None,
                     saos.judgment_end_date.isoformat() if saos.judgment_end_date else None,
                     saos.page_size, saos.with_generated)


def overlap(saos: SaosSettings) -> timedelta:
    return timedelta(hours=saos.overlap_hours)


@dataclass(frozen=True)
class SaosPaths(SyncStatePaths):
    """Where this connector keeps its state and data under ``$LEXPIPE_HOME``.

        state/saos/judgments_cursor.json   the persisted cursor (atomic JSON)
        state/saos/judgments.lock          one sync at a time (flock; freed by the kernel on death)
        caselaw/pl/saos/store/             JudgmentStore: judgments/, quarantine/
        raw/                               RawLandingZone: every page body, content-addressed

    ``state_dir``, ``cursor_path``, ``lock_path`` and ``raw`` follow the layout every syncing
    connector shares (``connectors.state_paths``).
    """

    source: ClassVar[str] = SOURCE
    stream: ClassVar[str] = "judgments"

    @property
    def store_root(self) -> Path:
        return self.home / "caselaw" / "pl" / SOURCE / "store"
