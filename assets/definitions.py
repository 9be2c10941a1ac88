"""The one ``Definitions`` object: every source/job module in ``assets/`` is loaded here."""

from __future__ import annotations

import dagster as dg

from assets import pl_statutes
from assets.resources import default_resources


def build_definitions(resources: dict | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=pl_statutes.ASSETS,
        asset_checks=pl_statutes.CHECKS,
        jobs=[pl_statutes.corpus_job, pl_statutes.main_job],
        resources=resources or default_resources(),
    )


defs = build_definitions()
