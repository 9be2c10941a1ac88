"""The one ``Definitions`` object: every source/job module in ``assets/`` is loaded here."""

from __future__ import annotations

import dagster as dg

from assets import answers, benchmarks, de_cases, de_statutes, pl_statutes, sensors
from assets.resources import default_resources


def build_definitions(resources: dict | None = None) -> dg.Definitions:
    # resources a caller leaves out (e.g. benchmark_config) come from the settings defaults
    resources = {**default_resources(), **resources} if resources else default_resources()
    return dg.Definitions(
        assets=[*pl_statutes.ASSETS, *benchmarks.ASSETS, *answers.ASSETS, *sensors.SOURCE_ASSETS,
                *de_cases.ASSETS, *de_statutes.ASSETS],
        asset_checks=[*pl_statutes.CHECKS, *benchmarks.CHECKS, *sensors.CHECKS, *de_cases.CHECKS,
                      *de_statutes.CHECKS],
        jobs=[pl_statutes.corpus_job, pl_statutes.main_job, benchmarks.benchmark_job, *answers.JOBS, *sensors.JOBS,
              *de_cases.JOBS, *de_statutes.JOBS],
        schedules=[*benchmarks.SCHEDULES, *answers.SCHEDULES, *sensors.SCHEDULES],
        sensors=[*sensors.SENSORS],
        resources=resources,
    )


defs = build_definitions()
