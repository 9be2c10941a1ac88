"""Polish case law (SAOS) as a Prefect 3 flow: the steps of the Dagster group ``pl_cases``.

    saos-sync → chunk-judgments → validate-judgment-chunks → index-judgments
              → citation-links → cited-by

Bindings only, like ``assets/pl_cases.py``: each task calls one ``connectors/`` or ``pipelines/``
function. The sync retries with exponential backoff on transport errors (the HTTP client already
retries 429/5xx within a request; a task retry starts the pass again from the saved cursor, which
is what makes it safe); the GX check raises on a bad batch, so the index keeps the last good
collection; nothing is cached by Prefect, because every step is idempotent on its own (content-
named store batches, content-hashed chunks, the embedding cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lexpipe.prefect_flows import _settings, retry_delays  # noqa: F401  (sets Prefect's offline environment first)

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402

from core.layout import Layout  # noqa: E402


class JudgmentChunksInvalid(RuntimeError):
    """The case-chunks suite refused the staged judgment chunks: nothing was promoted or indexed."""


@dataclass
class PlCasesReport:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    quarantined: int = 0
    stored: int = 0
    chunks: int = 0
    indexed: int | None = None
    links: int = 0
    resolution: dict = field(default_factory=dict)
    cited_articles: int = 0


@task(name="saos-sync", cache_policy=NO_CACHE)
def saos_sync(home: str, max_pages: int | None) -> dict:
    from connectors.saos import judgment_sync_from_settings

    report = judgment_sync_from_settings(_settings(home)).sync(max_pages=max_pages)
    get_run_logger().info(f"SAOS: {report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
                          f"{report.quarantined} quarantined in {len(report.pages)} page(s)")
    return {"new": report.new, "updated": report.updated, "unchanged": report.unchanged,
            "quarantined": report.quarantined, "complete": report.complete}


def _judgments(home: str):
    from connectors.saos import JudgmentStore, SaosPaths

    return JudgmentStore(SaosPaths(Path(home)).store_root).judgments()


@task(name="chunk-judgments", cache_policy=NO_CACHE)
def chunk_judgments(home: str, max_tokens: int) -> tuple[int, int]:
    from pipelines.case_law.pl.build import chunk_pl_judgments_step

    out = chunk_pl_judgments_step(Layout(Path(home)), _judgments(home), max_tokens=max_tokens)
    get_run_logger().info(f"{out.cases} judgments → {out.chunks} chunks (staged)")
    return out.cases, out.chunks


@task(name="validate-judgment-chunks", cache_policy=NO_CACHE)
def validate_judgment_chunks(home: str, max_tokens: int) -> str:
    from pipelines.case_law.pl.build import validate_staged_pl_chunks

    report = validate_staged_pl_chunks(Layout(Path(home)), max_tokens=max_tokens)
    if not report.success:
        failed = "; ".join(f"{f.expectation}: {f.reason}" for f in report.failed)
        raise JudgmentChunksInvalid(f"staged Polish judgment chunks refused: {failed} — pl:cases keeps serving "
                                    f"its last good collection")
    return f"{report.evaluated} expectations met"


@task(name="index-judgments", cache_policy=NO_CACHE)
def index_judgments(home: str) -> int:
    from pipelines.case_law.pl.build import promote_pl_chunks, read_current_pl_chunks
    from pipelines.retrieval.case_index import PL_CASES_ACT, case_index_step
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import open_backend

    settings = _settings(home)
    layout = Layout(Path(home))
    promote_pl_chunks(layout)
    encoder = get_encoder(settings.encoder)
    report = case_index_step(layout, read_current_pl_chunks(layout), encoder=encoder, act_id=PL_CASES_ACT,
                             backend=open_backend(settings, encoder=encoder, act_id=PL_CASES_ACT))
    get_run_logger().info(f"{PL_CASES_ACT} {report.version}: {report.documents} chunks ({report.embedded} embedded, "
                          f"{report.cached} from the embedding cache)")
    return report.documents


@task(name="citation-links", cache_policy=NO_CACHE)
def citation_links_task(home: str) -> tuple[int, dict]:
    from pipelines.case_law.case_build import write_parquet
    from pipelines.citations.pl_links import citation_links, resolution_counts

    layout = Layout(Path(home))
    links = citation_links(_judgments(home), layout)
    write_parquet(layout.home / "caselaw" / "pl" / "citations" / "links.parquet", links)
    counts = resolution_counts(links)
    get_run_logger().info(f"{links.num_rows} cited units: {counts}")
    return links.num_rows, counts


@task(name="cited-by", cache_policy=NO_CACHE)
def cited_by_task(home: str) -> int:
    import pyarrow.parquet as pq

    from pipelines.case_law.case_build import write_parquet
    from pipelines.citations.pl_links import cited_by

    root = Path(home) / "caselaw" / "pl" / "citations"
    table = cited_by(pq.read_table(root / "links.parquet"))
    write_parquet(root / "cited_by.parquet", table)
    return table.num_rows


@flow(name="pl-cases", persist_result=False, validate_parameters=True)
def pl_cases(home: str | None = None, max_pages: int | None = None, index: bool = True) -> PlCasesReport:
    """One incremental SAOS pass through to ``pl:cases`` and the citation tables (offline by
    default: the shared sample pages). A refused chunk batch raises before anything is promoted;
    the citation tables are still rebuilt first, since they do not read the chunks."""
    settings = _settings(home)
    home_s = str(Path(settings.home).resolve())
    retrying = {"retries": settings.prefect_task_retries, "retry_delay_seconds": retry_delays(settings),
                "retry_jitter_factor": 0.2}
    synced = saos_sync.with_options(**retrying)(home_s, max_pages)
    report = PlCasesReport(**{k: synced[k] for k in ("new", "updated", "unchanged", "quarantined")})
    report.links, report.resolution = citation_links_task(home_s)
    report.cited_articles = cited_by_task(home_s)
    report.stored, report.chunks = chunk_judgments(home_s, settings.chunk_max_tokens)
    validate_judgment_chunks(home_s, settings.chunk_max_tokens)
    if index:
        report.indexed = index_judgments.with_options(**retrying)(home_s)
    get_run_logger().info(f"pl:cases: {report.stored} judgments, {report.chunks} chunks, {report.links} cited units")
    return report
