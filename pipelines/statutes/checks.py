"""The blocking checks of a corpus build, without an orchestrator: articles and chunks of one version
against their Great Expectations suites.

Why here and not in the Dagster asset checks: Dagster (``assets/pl_statutes.py``) and Prefect
(``lexpipe/prefect_flows.py``) must gate publication on exactly the same expectations with the same
bounds — the article count compared with the newest *published* older version, the chunk token
bounds of the configured chunker — so both call these functions and only differ in how they stop.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.layout import Layout
from pipelines.statutes.store import CorpusStore
from pipelines.validation import ValidationReport, validate_table


class CorpusValidationError(RuntimeError):
    """A blocking check failed: the version must not be published (the last good one keeps serving)."""

    def __init__(self, act_id: str, version: str, report: ValidationReport, source: str | None = None) -> None:
        self.act_id, self.version, self.report, self.source = act_id, version, report, source
        origin = f" (source {source})" if source else ""
        super().__init__(f"{act_id} {version}{origin}: {report.name} failed validation, not published: "
                         f"{report.summary()}")


@dataclass
class ArticlesCheck:
    report: ValidationReport
    previous_version: str | None  # the published version the article count was compared with
    previous_count: int | None


def check_articles(layout: Layout, *, act_id: str, version: str, tolerance: float) -> ArticlesCheck:
    """``articles_suite`` on the version's freshest build (staging first), the article count bounded
    by ±``tolerance`` around the newest published older version (none for the first version)."""
    from schemas.expectations import articles_suite

    store = CorpusStore(layout)
    prev = store.previous_version(act_id, version)
    prev_count = store.read(act_id, prev, "articles", published_only=True).num_rows if prev else None
    report = validate_table(store.read(act_id, version, "articles"), articles_suite(prev_count, tolerance, allow_pending=True),
                            name="articles")
    return ArticlesCheck(report, prev, prev_count)


def check_chunks(layout: Layout, *, act_id: str, version: str, max_tokens: int) -> ValidationReport:
    """``chunks_suite`` on the version's chunks: token counts within the chunker's bounds, unique ids."""
    from schemas.expectations import chunks_suite

    table = CorpusStore(layout).read(act_id, version, "chunks")
    return validate_table(table, chunks_suite(1, max_tokens), name="chunks")
