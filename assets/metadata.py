"""What the asset modules show an operator, written once: Markdown tables, quarantine-reason
counts, a Great Expectations report as an asset check result, and the run settings a sync asset
derives from its per-run config. A helper module (no ``defs``): ``assets.definitions`` skips it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg

from core.settings import Settings, get_settings


def md_table(rows: list[tuple[Any, ...]], header: tuple[str, ...]) -> dg.MarkdownMetadataValue:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def reason_summary(reasons: list[list[str]]) -> list[tuple[str, int]]:
    """How often each kind of problem occurs: the text before ':' of every reason (the field,
    or 'not valid JSON' / 'record is not a JSON object'), most frequent first."""
    counts: Counter[str] = Counter()
    for rec in reasons:
        counts.update({r.split(":", 1)[0].strip() for r in rec})
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def gx_check_result(report) -> dg.AssetCheckResult:
    """A ``pipelines.validation`` report (a GX suite's run) as the check's result and metadata."""
    failed = [(f.expectation, f.column or "", f"{f.reason} ({f.unexpected_count} rows; e.g. "
               f"{', '.join(f.examples[:3])})") for f in report.failed]
    return dg.AssetCheckResult(
        passed=report.success,
        description="all expectations met" if report.success else f"{len(failed)} expectation(s) failed",
        metadata={"evaluated_expectations": report.evaluated, "failed_expectations": len(failed),
                  "rows": report.row_count, "seconds": round(report.duration_s, 2),
                  "failures": md_table(failed, ("expectation", "column", "details"))})


def run_settings(home: str, offline: bool | None, sample_dir: str | None) -> Settings:
    """The settings of one sync run: ``LEXPIPE_*`` with the storage's home and the run config's
    ``offline`` / ``sample_dir`` when given."""
    updates: dict[str, Any] = {"home": Path(home)}
    if offline is not None:
        updates["offline"] = offline
    if sample_dir:
        updates["sample_dir"] = Path(sample_dir)
    return get_settings().model_copy(update=updates)
