"""The blocking checks of many act versions at once: the same Great Expectations suites, one
validation per batch, every failure traced back to the act whose rows broke it.

Why batches: a Great Expectations validation costs ~0.2–0.5 s of overhead whatever the table size
(context, batch, metric graph); three suites per act over 6,183 acts would spend over an hour in
overhead alone, so the initial load of a jurisdiction validates batches of a few hundred acts as
one frame each. The suites are the ones a single act is held to (``schemas/expectations.py``:
articles, nodes, chunks) — nothing is weakened for speed:

* every row-level expectation reads the same columns; GX returns all offending rows
  (``result_format="COMPLETE"``) and each is mapped to its act;
* the articles' ``sort_key`` must increase strictly in each act's document order: the batch frame
  orders rows by (act, ordinal) and lifts each act's keys above the previous act's largest one,
  so "strictly increasing over the batch" means exactly "within every act";
* the article count of a version within ±tolerance of the act's previous published version (a
  table-level expectation for one act) becomes a row per act of a summary frame,
  ``count`` between ``lo`` and ``hi`` (``ExpectColumnPairValuesAToBeGreaterThanB`` twice).

An act with any failure is quarantined by the caller; the other acts of the batch are unaffected.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.validation import ROW_COLUMN, _exception_message, run_suite


@dataclass
class BatchReport:
    acts: int
    rows: dict[str, int]  # suite → rows validated
    failures: dict[str, list[str]] = field(default_factory=dict)  # act → "suite: expectation(column): N rows, e.g. …"
    reasons: dict[str, str] = field(default_factory=dict)  # act → the first failing suite ("articles_check", …)
    expectations: dict[str, int] = field(default_factory=dict)  # suite → expectations evaluated
    seconds: float = 0.0

    @property
    def failed_acts(self) -> set[str]:
        return set(self.failures)


def _articles_frame(tables: Mapping[str, pa.Table], order: list[str]) -> pd.DataFrame:
    parts = []
    base = 0  # the next act's keys start here
    for act in order:
        t = tables[act]
        if "path" in t.column_names:
            depth = pc.fill_null(pc.list_value_length(t["path"]), 0).cast(pa.int32())
        else:
            depth = pa.array([0] * t.num_rows, pa.int32())
        t = t.append_column("path_depth", depth)
        if "ordinal" in t.column_names:
            t = t.sort_by("ordinal")
        nested = [f.name for f in t.schema if pa.types.is_nested(f.type)]
        frame = t.drop_columns(nested).to_pandas()
        if "sort_key" in frame.columns:
            # lift each act above the previous one's largest key: strictly increasing over the batch ==
            # within every act (a fixed stride is not enough: a German act whose printed order goes
            # back starts a new segment of 10^14, and the next act's first row fell below it — 36
            # innocent acts of the 2012 import failed so, each at its first row)
            keys = frame["sort_key"].astype("Int64")
            if keys.notna().any():
                lo, hi = int(keys.min()), int(keys.max())
                keys = keys - lo + base
                base += hi - lo + 1
            frame["sort_key"] = keys
        parts.append(frame)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    frame[ROW_COLUMN] = range(len(frame))
    return frame


def _flat_frame(tables: Mapping[str, pa.Table], order: list[str], sort: list[str] | None = None) -> pd.DataFrame:
    parts = []
    for act in order:
        t = tables[act]
        if sort:
            keys = [k for k in sort if k in t.column_names]
            if keys:
                t = t.sort_by([(k, "ascending") for k in keys])
        nested = [f.name for f in t.schema if pa.types.is_nested(f.type)]
        parts.append(t.drop_columns(nested).to_pandas())
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    frame[ROW_COLUMN] = range(len(frame))
    return frame


def _validate(frame: pd.DataFrame, suite, *, act_column: str, id_column: str) -> tuple[dict[str, list[str]], int]:
    """(act → failure lines, expectations evaluated) of one suite over one batch frame."""
    if frame.empty:
        return {}, 0
    result_format = {"result_format": "COMPLETE", "unexpected_index_column_names": [id_column, ROW_COLUMN]}
    result = run_suite(frame, suite, result_format)  # the row detail only when something failed
    acts = frame[act_column].to_numpy()
    out: dict[str, list[str]] = {}
    for r in result.results:
        if r.success:
            continue
        config = r.expectation_config
        column = config.kwargs.get("column") or ",".join(
            str(config.kwargs[k]) for k in ("column_A", "column_B") if k in config.kwargs)
        label = f"{suite.name}: {config.type}({column})"
        error = _exception_message(r)
        res = r.result or {}
        rows = res.get("unexpected_index_list") or []
        if error or not rows:  # a table-level failure or an error: every act of the batch is suspect
            why = error or f"observed {res.get('observed_value')}"
            for act in dict.fromkeys(acts.tolist()):
                out.setdefault(act, []).append(f"{label}: {why}")
            continue
        per_act: dict[str, list[str]] = {}
        for item in rows:
            row = int(item.get(ROW_COLUMN, -1)) if isinstance(item, dict) else int(item)
            if 0 <= row < len(frame):
                per_act.setdefault(acts[row], []).append(str(frame[id_column].iat[row]))
        for act, ids in per_act.items():
            shown = ", ".join(dict.fromkeys(ids[:5]))
            reason = (config.meta or {}).get("reason", "")
            out.setdefault(act, []).append(f"{label}: {len(ids)} rows, e.g. {shown} ({reason})")
    return out, len(result.results)


CHECKED_FILES = ("articles", "nodes", "chunks")


@functools.lru_cache(maxsize=8)  # the suites are code: built once per process, not per batch and check
def suites_fingerprint(*, max_tokens: int, allow_pending: bool = True) -> str:
    """What :func:`check_batch` holds a version to, as a hash: the GX version and every expectation
    of the articles, nodes and chunks suites with its arguments. A changeset's record keeps it
    beside the hashes of the files it validated (:func:`validated_files`), so the asset check can
    tell a version already validated under the same suites from one it must validate again."""
    import great_expectations as gx

    from schemas.expectations import articles_suite, chunks_suite, nodes_suite

    suites = [articles_suite(None, 0.0, allow_pending=allow_pending), nodes_suite(), chunks_suite(1, max_tokens)]
    spec = [gx.__version__] + [[s.name, [[e.expectation_type, e.configuration.kwargs] for e in s.expectations]]
                               for s in suites]
    return hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:16]


def validated_files(directory: Path) -> dict[str, str]:
    """name → sha256 of the Parquet files :func:`check_batch` reads for a version in ``directory``."""
    return {n: hashlib.sha256((directory / f"{n}.parquet").read_bytes()).hexdigest() for n in CHECKED_FILES}


def check_batch(articles: Mapping[str, pa.Table], nodes: Mapping[str, pa.Table], chunks: Mapping[str, pa.Table],
                *, previous_counts: Mapping[str, tuple[int, float]] | None = None, max_tokens: int,
                allow_pending: bool = True) -> BatchReport:
    """Validate a batch of act versions (the same suites as one act's checks). ``previous_counts``:
    act → (article count of its previous published version, tolerance) for acts that have one."""
    import time

    from schemas.expectations import articles_suite, chunks_suite, count_bounds, nodes_suite

    t0 = time.perf_counter()
    order = sorted(articles)
    report = BatchReport(len(order), {})
    suites = [
        ("articles_check", _articles_frame(articles, order), articles_suite(None, 0.0, allow_pending=allow_pending),
         "id"),
        ("nodes_check", _flat_frame(nodes, [a for a in order if a in nodes]), nodes_suite(), "id"),
        ("chunks_check", _flat_frame(chunks, [a for a in order if a in chunks], ["article_id", "chunk_index"]),
         chunks_suite(1, max_tokens), "chunk_id"),
    ]
    for reason, frame, suite, id_col in suites:
        report.rows[suite.name] = len(frame)
        failures, evaluated = _validate(frame, suite, act_column="act_id", id_column=id_col)
        report.expectations[suite.name] = evaluated
        for act, lines in failures.items():
            report.failures.setdefault(act, []).extend(lines)
            report.reasons.setdefault(act, reason)
    counts = [(a, articles[a].num_rows, *count_bounds(*previous_counts[a]))
              for a in order if previous_counts and a in previous_counts]
    if counts:
        import great_expectations.expectations as gxe

        from schemas.expectations import _suite

        summary = pd.DataFrame(counts, columns=["act_id", "count", "lo", "hi"])
        summary[ROW_COLUMN] = range(len(summary))
        suite = _suite("article_counts", [
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="count", column_B="lo", or_equal=True,
                meta={"reason": "the article count must not fall below the previous version's by more than the "
                                "tolerance: a larger drop means articles were lost"}),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="hi", column_B="count", or_equal=True,
                meta={"reason": "the article count must not grow past the previous version's by more than the "
                                "tolerance: a larger jump means articles were split"}),
        ])
        report.rows["article_counts"] = len(summary)
        failures, evaluated = _validate(summary, suite, act_column="act_id", id_column="act_id")
        report.expectations["article_counts"] = evaluated
        for act, lines in failures.items():
            report.failures.setdefault(act, []).extend(lines)
            report.reasons.setdefault(act, "count_check")
    report.seconds = time.perf_counter() - t0
    return report
