"""The corpus refresh, the nightly benchmark and the answer job as Prefect 3 flows.

Bindings only, like the Dagster assets: every task calls one ``pipelines/`` or ``connectors/``
function and the flows only decide order, retries and caching. What Prefect adds:

* **retries with exponential backoff** where a failure can be transient: listing versions and
  downloading (HTTP; only errors the HTTP client calls retryable) and index writes (a cluster that
  hiccups). Parsing, checks and publishing are deterministic: a retry would fail the same way.
* **caching by input hash** (``cache_policy=INPUTS`` plus a task key): the parse on the raw PDF's
  sha256 + parser version, chunking on those + chunker version and token bound, the benchmark
  question table on a digest of its source files and builder code. A re-run with the same inputs
  skips the work (task state ``Cached``); a changed input computes again. Results are persisted
  under ``$LEXPIPE_HOME/cache/prefect/`` — beside the data they describe, so they survive the
  process, and a cache hit is only trusted while the layout still holds that build
  (``statute_build.built_parse`` / ``built_chunks``, ``nightly.question_table_built``); otherwise
  the task is refreshed. The index step is not cached: the embedding cache already skips unchanged
  chunks, and an external index (Elasticsearch) can lose a version behind the cache's back.
* **gating**: a failed Great Expectations check raises, the flow fails and ``publish`` never runs
  for that version, so the last good version keeps serving (same suites as the Dagster checks,
  ``pipelines.statutes.checks``).
* **notifications**: after each publication (and its index) the ``notify`` task sends the webhook
  events of that version (``pipelines.subscriptions``); delivery retries live in the outbox, so a
  receiver that is down never fails the refresh (``webhook-outbox`` delivers what falls due later).

Flows read ``core.settings.Settings`` (``LEXPIPE_*``) inside the run; ``home`` overrides
``LEXPIPE_HOME``. Importing this module first sets Prefect's offline/quiet environment
(:func:`configure_prefect_environment`) — before ``prefect`` itself is imported, which is when
Prefect reads it.
"""

from __future__ import annotations

import os
from pathlib import Path


def configure_prefect_environment(project_dir: Path | None = None) -> dict[str, str]:
    """Offline, quiet Prefect defaults (never overriding what the caller set): no analytics, a
    project-local ``PREFECT_HOME`` (``<project>/.prefect_home``, git-ignored), a local ephemeral
    server when no ``PREFECT_API_URL`` is given, started with a 60 s budget (2 busy cores)."""
    project_dir = Path(project_dir or Path.cwd()).resolve()
    defaults = {
        "PREFECT_HOME": str(project_dir / ".prefect_home"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_EPHEMERAL_ENABLED": "true",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "60",
        "PREFECT_UI_ENABLED": "false",
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    return {k: os.environ[k] for k in defaults}


configure_prefect_environment()

import json  # noqa: E402  (prefect must be imported after the environment above)
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.cache_policies import INPUTS, NO_CACHE, CacheKeyFnPolicy  # noqa: E402

from connectors.eli import download_act, eli_for_act, eli_source_from_settings  # noqa: E402
from connectors.http import HttpFetchError  # noqa: E402
from connectors.landing import RawLandingZone  # noqa: E402
from core.layout import Layout  # noqa: E402
from core.settings import Settings, get_settings  # noqa: E402
from pipelines.statutes.pl import build as statute_build  # noqa: E402
from pipelines.statutes.checks import CorpusValidationError, check_articles, check_chunks  # noqa: E402
from pipelines.statutes.store import CorpusError, CorpusStore  # noqa: E402


# ----------------------------------------------------------------------------------------------
# settings, storage, retry policy


def _settings(home: str | None) -> Settings:
    settings = get_settings()
    return settings.model_copy(update={"home": Path(home)}) if home else settings


def results_dir(layout: Layout) -> Path:
    """Persisted task results and cache records: beside the data they describe."""
    return layout.home.resolve() / "cache" / "prefect"


def retry_delays(settings: Settings) -> list[float]:
    """Exponential backoff: base, 2·base, 4·base … (``LEXPIPE_PREFECT_RETRY_DELAY_S``)."""
    return [settings.prefect_retry_delay_s * 2 ** i for i in range(settings.prefect_task_retries)]


def _exception(state) -> BaseException | None:
    exc = state.result(raise_on_failure=False)
    return exc if isinstance(exc, BaseException) else None


def _transient_download_error(task, task_run, state) -> bool:
    """Retry transport errors and statuses the HTTP client calls retryable (429/5xx); a version the
    source does not offer, a non-PDF body or bad configuration will not get better by waiting."""
    exc = _exception(state)
    if isinstance(exc, HttpFetchError):
        return exc.retryable
    return isinstance(exc, (ConnectionError, TimeoutError))


def _transient_index_error(task, task_run, state) -> bool:
    """Retry a failed index write unless its input is missing or invalid (no chunks published,
    a wrong backend name): those are not transient."""
    exc = _exception(state)
    return exc is not None and not isinstance(exc, (CorpusError, ValueError, KeyError, TypeError))


def _key_json(**parts: Any) -> str:
    return json.dumps(parts, sort_keys=True, default=str)


# ----------------------------------------------------------------------------------------------
# corpus refresh tasks


@dataclass(frozen=True)
class Landed:
    version: str
    sha256: str
    path: str
    source_url: str
    size: int
    created: bool


@dataclass(frozen=True)
class Parsed:
    """What the parse produced (no paths: a cached result must not point at a staging folder that
    publishing has since renamed)."""

    version: str
    source_sha256: str
    parser_version: str
    article_count: int
    pages: int
    parse_seconds: float
    reused: bool
    stats: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Chunked:
    version: str
    chunks: int
    max_chunk_tokens: int
    chunker: str


@dataclass(frozen=True)
class Diffed:
    version: str
    previous_version: str | None
    counts: dict


@dataclass
class VersionResult:
    """One version's way through the refresh (the CLI prints these)."""

    version: str
    status: str = "not started"  # published | failed: <step> | not started
    sha256: str | None = None
    articles: int | None = None
    parse_cached: bool = False
    parse_reused: bool = False
    chunks: int | None = None
    chunk_cached: bool = False
    diff: Diffed | None = None
    indexed: int | None = None
    notified: Notified | None = None  # webhook events of the publication (None: the step failed, logged)
    error: str | None = None


@dataclass
class RefreshReport:
    versions: list[VersionResult]
    serving: str | None
    published: list[str]

    @property
    def success(self) -> bool:
        return all(v.status == "published" for v in self.versions)


class RefreshFailed(RuntimeError):
    """The refresh stopped at a version; ``report`` says what was published before it."""

    def __init__(self, message: str, report: RefreshReport) -> None:
        super().__init__(message)
        self.report = report


def _eli_source(settings: Settings, layout: Layout):
    from pipelines.statutes.pl.front_page import read_front_page  # the offline listing reads page 1

    return eli_source_from_settings(settings, layout.raw, front_page=read_front_page)


@task(name="discover", cache_policy=NO_CACHE, retry_condition_fn=_transient_download_error)
def discover(home: str, act_id: str) -> list[str]:
    """The ELI listing into the home's catalogue when ``act_id`` is not in the home's registry yet
    (an act discovered from the listing, ``pl:du1997_553``); the ELI addresses new to it."""
    from connectors.eli_listing import update_catalogue
    from schemas.acts import registry

    settings = _settings(home)
    layout = Layout(settings.home)
    if act_id in registry(layout.home):
        return []
    source = _eli_source(settings, layout)
    years = sorted({*source.listing_years(), *(int(a.address.split("/")[1])
                                               for a in registry(layout.home).of_source("eli"))})
    return update_catalogue(layout.home, source, years).added


@task(name="list-versions", cache_policy=NO_CACHE, retry_condition_fn=_transient_download_error)
def list_versions(home: str, act_id: str) -> list[str]:
    """The text-state versions the ELI source offers (the live API: only its current one)."""
    settings = _settings(home)
    layout = Layout(settings.home)
    return _eli_source(settings, layout).available_versions(eli_for_act(act_id, layout.home))


@task(name="download", cache_policy=NO_CACHE, retry_condition_fn=_transient_download_error)
def download(home: str, act_id: str, version: str) -> Landed:
    """Fetch the act's PDF for ``version`` into the immutable raw zone (identical bytes are kept once)."""
    settings = _settings(home)
    layout = Layout(settings.home)
    landed = download_act(_eli_source(settings, layout), RawLandingZone.from_layout(layout),
                          eli_for_act(act_id, layout.home), act_id, version, home=layout.home)
    get_run_logger().info(f"{act_id} {version}: {'landed' if landed.created else 'already landed'} "
                          f"{landed.sha256[:12]} ({landed.size:,} bytes) from {landed.source_url}")
    return Landed(landed.version, landed.sha256, str(landed.path), landed.source_url, landed.size, landed.created)


def _parse_key(context, parameters: dict[str, Any]) -> str:
    # the parser version is read at call time: bumping it (a new parser) recomputes every parse
    return _key_json(act_id=parameters["act_id"], **statute_build.parse_key(parameters["source_sha256"]))


@task(name="parse", cache_policy=(INPUTS - "workers" - "pdf_path") + CacheKeyFnPolicy(cache_key_fn=_parse_key),
      persist_result=True)
def parse(home: str, act_id: str, version: str, source_sha256: str, pdf_path: str, source_url: str,
          workers: int) -> Parsed:
    """Parse the raw PDF into the version's staging folder (``statute_build.parse_step``)."""
    out = statute_build.parse_step(Layout(Path(home)), act_id=act_id, version=version, pdf_path=Path(pdf_path),
                                   source_sha256=source_sha256, source_url=source_url, workers=workers)
    get_run_logger().info(f"{act_id} {version}: {out.article_count} articles from {out.pages} pages in "
                          f"{out.seconds:.1f}s{' (reused the build on disk)' if out.reused else ''}")
    return Parsed(version, source_sha256, statute_build.PARSER_VERSION, out.article_count, out.pages,
                  round(out.seconds, 3), out.reused, dict(out.stats))


@task(name="validate-articles", cache_policy=NO_CACHE)
def validate_articles(home: str, act_id: str, version: str, tolerance: float, source: str) -> str:
    """The blocking articles suite; raises ``CorpusValidationError`` (flow fails, nothing published)."""
    checked = check_articles(Layout(Path(home)), act_id=act_id, version=version, tolerance=tolerance)
    get_run_logger().info(checked.report.summary())
    if not checked.report.success:
        raise CorpusValidationError(act_id, version, checked.report, source)
    return checked.report.summary()


def _chunk_key(context, parameters: dict[str, Any]) -> str:
    return _key_json(act_id=parameters["act_id"], **statute_build.parse_key(parameters["source_sha256"]),
                     **statute_build.chunk_key(parameters["max_tokens"]))


@task(name="chunk", cache_policy=INPUTS + CacheKeyFnPolicy(cache_key_fn=_chunk_key), persist_result=True)
def chunk(home: str, act_id: str, version: str, source_sha256: str, max_tokens: int) -> Chunked:
    """Retrieval chunks of the version (``statute_build.chunk_step``)."""
    table = statute_build.chunk_step(Layout(Path(home)), act_id=act_id, version=version, max_tokens=max_tokens)
    tokens = table["token_count"].to_pylist()
    get_run_logger().info(f"{act_id} {version}: {table.num_rows} chunks, max {max(tokens)} tokens")
    return Chunked(version, table.num_rows, max(tokens), statute_build.CHUNKER_VERSION)


@task(name="validate-chunks", cache_policy=NO_CACHE)
def validate_chunks(home: str, act_id: str, version: str, max_tokens: int, source: str) -> str:
    report = check_chunks(Layout(Path(home)), act_id=act_id, version=version, max_tokens=max_tokens)
    get_run_logger().info(report.summary())
    if not report.success:
        raise CorpusValidationError(act_id, version, report, source)
    return report.summary()


@task(name="diff", cache_policy=NO_CACHE)
def diff(home: str, act_id: str, version: str) -> Diffed:
    """Changes since the newest published older version (``statute_build.diff_step``)."""
    prev, table, _md = statute_build.diff_step(Layout(Path(home)), act_id=act_id, version=version)
    changes = table["change"].to_pylist() if table is not None else []
    counts = {k: changes.count(k) for k in ("added", "changed", "repealed", "removed", "editorial")}
    get_run_logger().info(f"{act_id} {prev or 'no previous version'} → {version}: "
                          + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return Diffed(version, prev, counts)


@task(name="publish", cache_policy=NO_CACHE)
def publish(home: str, act_id: str, version: str) -> str | None:
    """Promote staging by one rename and point ``current.json`` at the newest version."""
    layout = Layout(Path(home))
    statute_build.publish_step(layout, act_id=act_id, version=version)
    serving = CorpusStore(layout).current_version(act_id)
    get_run_logger().info(f"{act_id} {version} published; serving {serving}")
    return serving


@task(name="index", cache_policy=NO_CACHE, retry_condition_fn=_transient_index_error)
def index(home: str, act_id: str, version: str) -> int:
    """Embed (cache-aware) and load the published version into the configured search backend."""
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, open_backend

    settings = _settings(home)
    encoder = get_encoder(settings.encoder)
    report = index_step(Layout(settings.home), act_id=act_id, version=version,
                        backend=open_backend(settings, encoder=encoder, act_id=act_id), encoder=encoder)
    get_run_logger().info(f"{act_id} {version}: {report.documents} documents in {report.backend} {report.table} "
                          f"({report.embedded} embedded, {report.cached} from the embedding cache)")
    return report.documents


@dataclass(frozen=True)
class Notified:
    """What the notify step did for one publication (``pipelines.subscriptions.events.NotifyReport``)."""

    version: str
    subscriptions: int
    events: int
    new: int
    delivered: int
    failed: int  # to be retried from the outbox
    dead_lettered: int
    deferred: int  # saved queries that could not run yet


@task(name="notify", cache_policy=NO_CACHE)
def notify(home: str, act_id: str, version: str) -> Notified:
    """Webhook events of the publication for every matching subscription, written to the outbox and
    delivered (``pipelines.subscriptions.events.notify``; saved queries search the configured backend).
    Delivery retries and dead letters live in the outbox, not in Prefect's retries: a receiver that
    is down is no failure of the flow."""
    from pipelines.retrieval.index_build import open_backend
    from pipelines.subscriptions.events import notify as notify_step
    from pipelines.subscriptions.matching import backend_runner

    settings = _settings(home)
    report = notify_step(Layout(settings.home), act_id, version, settings=settings,
                         runner=backend_runner(lambda act: open_backend(settings, act_id=act)))
    get_run_logger().info(f"{act_id} {version}: {report.events} webhook events ({report.new} new) for "
                          f"{report.subscriptions} subscriptions; {report.delivered} delivered, {report.pending} to "
                          f"retry, {report.dead_lettered} dead-lettered, {len(report.deferred)} deferred")
    return Notified(version, report.subscriptions, report.events, report.new, report.delivered, report.pending,
                    report.dead_lettered, len(report.deferred))


@flow(name="notify-subscribers", persist_result=False, validate_parameters=True)
def notify_subscribers(act_id: str, version: str | None = None, home: str | None = None) -> Notified:
    """The notify step alone, for one published version (default: the serving one): re-sends
    nothing already delivered, builds what is missing (e.g. saved queries deferred until the index
    was built) and retries what is due."""
    settings = _settings(home)
    layout = Layout(settings.home.resolve())
    return notify(str(layout.home), act_id, _serving_or(layout, version, act_id))


@flow(name="webhook-outbox", persist_result=False, validate_parameters=True)
def webhook_outbox(home: str | None = None) -> dict:
    """Deliver what is due in the webhook outbox (retries, events a crashed run left behind); a
    Prefect deployment runs it every minute, as Dagster's ``webhook_outbox`` sensor does."""
    from pipelines.subscriptions.delivery import deliver_due

    settings = _settings(home)
    report = deliver_due(Layout(settings.home.resolve()), settings=settings)
    get_run_logger().info(f"webhook outbox: {report.attempts} attempts, {report.delivered} delivered, "
                          f"{report.retried} to retry, {report.dead_lettered} dead-lettered")
    return dict(report.__dict__)


# ----------------------------------------------------------------------------------------------
# corpus refresh flow

# the flow's step → the changeset record's quarantine reason (pipelines/statutes/changeset_record.py)
_REASONS = {"download": "source_missing", "parse": "parse_error", "validate articles": "articles_check",
            "chunk": "crash", "validate chunks": "chunks_check", "diff": "diff_error", "publish": "publish_error"}


def _changeset_record(layout: Layout, act_id: str, version: str):
    """The ``pl_changesets`` record of (act, version) — the one Dagster's ``pl/statutes`` assets write
    (``corpus/pl/.changesets/<version>_<slug>.json``), started afresh: both orchestrators leave the
    same account of what happened to a version."""
    from connectors.eli_listing import polish_changeset
    from pipelines.statutes.changeset_record import load_record
    from schemas.acts import registry

    act = registry(layout.home).get(act_id)
    change = "modified" if CorpusStore(layout).published_versions(act_id) else "added"
    record = load_record(layout, polish_changeset(act.id, act.address, version, change=change, title=act.title,
                                                  gazette=act.display_address))
    record.outcomes.pop(act_id, None)
    record.state = "in_progress"
    return record


def _settle(layout: Layout, record, act_id: str, version: str, outcome: str, reason: str = "",
            message: str = "") -> None:
    import datetime as dt

    from pipelines.statutes.changeset_record import ActOutcome, save_record

    record.outcomes[act_id] = ActOutcome(act_id, version, outcome, reason, message[:2000])
    if all(m.act_id in record.outcomes for m in record.changeset.members):
        record.state = "applied"
        record.finished_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    save_record(layout, record)


@flow(name="corpus-refresh", persist_result=False, validate_parameters=True)
def corpus_refresh(versions: list[str] | None = None, home: str | None = None, index_versions: bool = True, *,
                   act_id: str) -> RefreshReport:
    """One Polish act of the home's registry (``act_id``: a curated row, or an act the ELI listing
    discovered — the listing is read first when the registry does not hold it): download → parse →
    validate → chunk → validate → diff → publish → index → notify (webhook subscribers), oldest
    version first. Each version's outcome goes to its ``pl_changesets`` record, as in Dagster.

    Stops at the first version that fails (its diff and checks would otherwise be judged against
    the wrong predecessor) and raises ``RefreshFailed`` naming the version, the step and the source
    file; everything published before it stays published and served."""
    settings = _settings(home)
    layout = Layout(settings.home.resolve())
    home_s = str(layout.home)
    logger = get_run_logger()
    storage = results_dir(layout)
    retrying = {"retries": settings.prefect_task_retries, "retry_delay_seconds": retry_delays(settings),
                "retry_jitter_factor": 0.2}
    discover.with_options(**retrying)(home_s, act_id)
    wanted = sorted(versions) if versions else list_versions.with_options(**retrying)(home_s, act_id)
    results = [VersionResult(v) for v in wanted]
    store = CorpusStore(layout)
    for res in results:
        v = res.version
        step, source = "download", None
        record = _changeset_record(layout, act_id, v)
        try:
            landed = download.with_options(**retrying)(home_s, act_id, v)
            res.sha256, source, step = landed.sha256, landed.source_url, "parse"
            parse_run = parse.with_options(result_storage=storage, refresh_cache=statute_build.built_parse(
                layout, act_id=act_id, version=v, source_sha256=landed.sha256) is None)
            state = parse_run(home_s, act_id, v, landed.sha256, landed.path, landed.source_url,
                              settings.parse_workers, return_state=True)
            parsed: Parsed = state.result()
            res.articles, res.parse_cached, res.parse_reused = parsed.article_count, state.name == "Cached", parsed.reused
            step = "validate articles"
            validate_articles(home_s, act_id, v, settings.article_count_tolerance, source)
            step = "chunk"
            chunk_run = chunk.with_options(result_storage=storage, refresh_cache=not statute_build.built_chunks(
                layout, act_id=act_id, version=v, max_tokens=settings.chunk_max_tokens))
            state = chunk_run(home_s, act_id, v, landed.sha256, settings.chunk_max_tokens, return_state=True)
            chunked: Chunked = state.result()
            res.chunks, res.chunk_cached = chunked.chunks, state.name == "Cached"
            step = "validate chunks"
            validate_chunks(home_s, act_id, v, settings.chunk_max_tokens, source)
            step = "diff"
            res.diff = diff(home_s, act_id, v)
            step = "publish"
            publish(home_s, act_id, v)
            res.status = "published"
            _settle(layout, record, act_id, v, "published")
            if index_versions:
                step = "index"
                res.indexed = index.with_options(**retrying)(home_s, act_id, v)
            # after the index, so saved queries search the new version; a failure here never
            # un-publishes: what reached the outbox is resent by the next run
            notified = notify(home_s, act_id, v, return_state=True)
            res.notified = notified.result(raise_on_failure=False) if notified.is_completed() else None
            if res.notified is None:
                logger.warning(f"{act_id} {v}: notifying subscribers failed: {notified.message}")
        except Exception as exc:  # noqa: BLE001 — reported with the step and source, then re-raised
            res.status, res.error = f"failed: {step}", f"{type(exc).__name__}: {exc}"
            if record.outcomes.get(act_id) is None:  # not published: the version is kept out, with its reason
                _settle(layout, record, act_id, v, "quarantined", _REASONS.get(step, "crash"), f"{source or v}: {exc}")
            report = RefreshReport(results, store.current_version(act_id), store.published_versions(act_id))
            message = (f"{act_id} {v}: {step} failed"
                       + (f" for {source}" if source and source not in str(exc) else "") + f": {exc}"
                       f" — nothing of {v} was published; serving {report.serving or 'nothing'}")
            logger.error(message)
            raise RefreshFailed(message, report) from exc
    report = RefreshReport(results, store.current_version(act_id), store.published_versions(act_id))
    logger.info(f"{act_id}: published {', '.join(report.published) or 'nothing'}; serving {report.serving}")
    return report


# ----------------------------------------------------------------------------------------------
# benchmark flow


@dataclass(frozen=True)
class QuestionTable:
    rows: int
    previous_rows: int | None
    sources_digest: str
    refs_in_corpus: int


def _question_table_key(context, parameters: dict[str, Any]) -> str:
    from pipelines.benchmarks.nightly import question_sources_digest

    return question_sources_digest(Path(parameters["sample_dir"]))


@task(name="question-table", cache_policy=INPUTS + CacheKeyFnPolicy(cache_key_fn=_question_table_key),
      persist_result=True)
def question_table(home: str, sample_dir: str) -> QuestionTable:
    """Benchmark questions with gold references from every source under the sample folder."""
    from pipelines.benchmarks.nightly import question_table_step

    built = question_table_step(Layout(Path(home)), Path(sample_dir))
    get_run_logger().info(f"benchmark questions: {built.rows} rows ({built.stats['refs_in_corpus']} gold refs in "
                          f"the corpus) in {built.seconds:.1f}s")
    return QuestionTable(built.rows, built.previous_rows, built.sources_digest, int(built.stats["refs_in_corpus"]))


@task(name="validate-questions", cache_policy=NO_CACHE)
def validate_questions(home: str) -> str:
    """The blocking benchmark suite; raises so nothing downstream is judged on a broken table."""
    from pipelines.benchmarks.nightly import check_question_table

    checked = check_question_table(Layout(Path(home)))
    get_run_logger().info(checked.report.summary())
    if not checked.report.success:
        raise RuntimeError(f"benchmark question table failed validation: {checked.report.summary()}")
    return checked.report.summary()


@dataclass(frozen=True)
class Staleness:
    version: str
    previous_version: str | None
    path: str
    stale_questions: int
    flagged_refs: int
    by_reason: dict


@task(name="staleness", cache_policy=NO_CACHE)
def staleness(home: str, act_id: str, version: str) -> Staleness:
    """Gold references the version no longer supports as they were, written per version."""
    from pipelines.benchmarks.nightly import staleness_step

    out = staleness_step(Layout(Path(home)), act_id=act_id, version=version)
    reasons = {k.removeprefix("refs_"): v for k, v in out.summary.items()
               if k.startswith("refs_") and k != "refs_checked" and v}
    get_run_logger().info(f"{act_id} {version} (vs {out.previous_version or 'no previous version'}): "
                          f"{out.summary['flagged_refs']} refs flagged, {out.summary['stale_questions']} questions stale")
    return Staleness(version, out.previous_version, str(out.path), int(out.summary["stale_questions"]),
                     int(out.summary["flagged_refs"]), reasons)


@dataclass(frozen=True)
class Evaluation:
    version: str
    run_id: str
    path: str
    plot_path: str
    questions: int
    skipped_stale: int
    question_set: str
    encoder: str
    seconds: float
    rows: list  # RETRIEVAL_EVAL rows of this run (benchmark × retriever × style)


@task(name="retrieval-eval", cache_policy=NO_CACHE)
def retrieval_eval(home: str, act_id: str, version: str, run_id: str, max_questions: int) -> Evaluation:
    """Every retriever × query style on the non-stale questions; rows appended to the history."""
    from pipelines.benchmarks.nightly import RETRIEVERS, across_acts_backend, retrieval_eval_step
    from pipelines.benchmarks.retrieval_eval import QUERY_STYLES, QuestionSet
    from pipelines.retrieval.index_build import open_backend

    settings = _settings(home)
    logger = get_run_logger()
    out = retrieval_eval_step(
        Layout(settings.home), act_id=act_id, version=version, run_id=run_id, encoder_name=settings.encoder,
        open_backend=lambda encoder: open_backend(settings, encoder=encoder, act_id=act_id),
        open_across_backend=None if not settings.elasticsearch_url else lambda encoder: across_acts_backend(
            act_id, lambda act: open_backend(settings, encoder=encoder, act_id=act)),
        question_set=QuestionSet(max_questions=max_questions), retrievers=RETRIEVERS, styles=QUERY_STYLES,
        progress=logger.info)
    logger.info(f"{act_id} {version}: {out.questions} questions evaluated in {out.seconds:.0f}s"
                + (f"; best MRR {out.best['mrr']:.3f} ({out.best['retriever']}, {out.best['query_style']})"
                   if out.best else ""))
    return Evaluation(version, run_id, str(out.path), str(out.plot_path), out.questions, out.skipped_stale,
                      out.question_set, out.encoder, round(out.seconds, 1), out.rows.to_pylist())


@task(name="regression-check", cache_policy=NO_CACHE)
def regression_check(home: str, act_id: str, version: str, run_id: str, margin: float) -> tuple[bool, str]:
    """Not blocking (as in Dagster): a worse metric is reported, the flow still succeeds."""
    from pipelines.benchmarks.nightly import check_regressions

    checked = check_regressions(Layout(Path(home)), act_id=act_id, version=version, run_id=run_id, margin=margin)
    (get_run_logger().info if checked.passed else get_run_logger().warning)(checked.description)
    return checked.passed, checked.description


@dataclass
class BenchmarkReport:
    version: str
    questions: QuestionTable
    questions_cached: bool
    staleness: Staleness
    evaluation: Evaluation | None
    regression_passed: bool | None
    regression: str | None


def _serving_or(layout: Layout, version: str | None, act_id: str) -> str:
    from schemas.acts import registry

    registry().get(act_id)  # an unknown act id: KeyError naming it and the registry's ids
    store = CorpusStore(layout)
    chosen = version or store.current_version(act_id)
    if chosen is None:
        raise RuntimeError(f"no {act_id} version is served under {layout.home}: run `lexpipe prefect refresh` first")
    if chosen not in store.published_versions(act_id):
        raise RuntimeError(f"{act_id} {chosen} is not published under {layout.home}; published: "
                           f"{', '.join(store.published_versions(act_id)) or 'none'}")
    return chosen


@flow(name="benchmark", persist_result=False, validate_parameters=True)
def benchmark(version: str | None = None, home: str | None = None, max_questions: int | None = None,
              evaluate: bool = True, *, act_id: str) -> BenchmarkReport:
    """question table → check → staleness → retrieval evaluation (+ regression check) of one
    published version of ``act_id`` (default: the serving one). ``max_questions``: a stable sample for the
    evaluation (default ``LEXPIPE_BENCHMARK_MAX_QUESTIONS``; 0 = all)."""
    from prefect.runtime import flow_run

    settings = _settings(home)
    layout = Layout(settings.home.resolve())
    home_s = str(layout.home)
    version = _serving_or(layout, version, act_id)
    from pipelines.benchmarks.nightly import question_sources_digest, question_table_built

    digest = question_sources_digest(settings.sample_dir)
    state = question_table.with_options(result_storage=results_dir(layout),
                                        refresh_cache=not question_table_built(layout, digest)
                                        )(home_s, str(settings.sample_dir), return_state=True)
    table = state.result()
    validate_questions(home_s)
    stale = staleness(home_s, act_id, version)
    evaluation = passed = desc = None
    if evaluate:
        limit = settings.benchmark_max_questions if max_questions is None else max_questions
        run_id = str(flow_run.id)
        evaluation = retrieval_eval(home_s, act_id, version, run_id, limit)
        passed, desc = regression_check(home_s, act_id, version, run_id, settings.benchmark_regression_margin)
    return BenchmarkReport(version, table, state.name == "Cached", stale, evaluation, passed, desc)


# ----------------------------------------------------------------------------------------------
# answers flow


@dataclass(frozen=True)
class AnswerRun:
    version: str
    run_id: str
    answerer: str
    path: str
    questions: int
    stale_skipped: int
    scores: dict
    seconds: float


@task(name="answer-questions", cache_policy=NO_CACHE)
def answer_questions(home: str, act_id: str, version: str, run_tag: str, max_questions: int) -> AnswerRun:
    """Answer and score the version's non-stale questions citing ``act_id`` (offline answerer, or the
    gAIus agent when ``LEXPIPE_LLM_BASE_URL`` / ``LEXPIPE_LLM_MODEL`` are set)."""
    from pipelines.answers.answer_run import answers_step, llm_settings_from_env
    from pipelines.retrieval.index_build import open_backend

    settings = _settings(home)
    logger = get_run_logger()
    out = answers_step(Layout(settings.home), act_id=act_id, version=version,
                       backend=open_backend(settings, act_id=act_id), run_tag=run_tag, llm=llm_settings_from_env(),
                       max_questions=max_questions, progress=logger.info)
    logger.info(f"{act_id} {version}: {out.answerer} " + "; ".join(
        f"{g}: answer {v['answer']:.3f}, context {v['context']:.3f}, joint {v['joint']:.3f} (n={v['n']})"
        for g, v in out.scores.items()))
    return AnswerRun(version, out.run_id, out.answerer, str(out.path), out.questions, out.counts["stale_skipped"],
                     out.scores, round(out.seconds, 1))


@flow(name="answers", persist_result=False, validate_parameters=True)
def answers(version: str | None = None, home: str | None = None, max_questions: int = 0,
            *, act_id: str) -> AnswerRun:
    """The answer job on one published version (default: the serving one); needs the benchmark
    flow's question table and that version's staleness file."""
    from prefect.runtime import flow_run

    settings = _settings(home)
    layout = Layout(settings.home.resolve())
    version = _serving_or(layout, version, act_id)
    return answer_questions(str(layout.home), act_id, version, str(flow_run.id).replace("-", ""), max_questions)
