"""``lexpipe deploy init``: prepare a production instance once, before its processes start.

Why: with ``concurrency.pools.default_limit`` Dagster creates a pool's limit lazily, on the run
queue's first pass over a run that uses the pool — and that pass reads the configured pools before
creating the new one, so it lets every queued run through. Measured here (tests/deploy): on a fresh
PostgreSQL instance the sensor's first tick queued the kc and kp refreshes together and both ran at
once although both hold an ``index`` op and the limit is 1. Setting the limits of the pools the
assets use before the first run closes that gap; ``lexpipe deploy check`` reports a pool without
a limit.

``init_instance`` loads the instance (dagster-postgres creates or migrates its tables) and sets
every asset pool without a limit to ``concurrency.pools.default_limit`` (1 if unset). Limits an
operator set already (``dagster instance concurrency set llm 2``) are kept. Env vars as for the
processes (DAGSTER_PG_*).
"""

from __future__ import annotations

from pathlib import Path

import yaml


def init_instance(config: Path) -> dict[str, int]:
    """The limit of every asset pool after initialising the instance configured by ``config``."""
    import dagster as dg

    from lexpipe.deploy.check import asset_pools

    cfg = yaml.safe_load(config.read_text()) or {}
    default = ((cfg.get("concurrency") or {}).get("pools") or {}).get("default_limit") or 1
    with dg.DagsterInstance.from_config(str(config.resolve().parent), config_filename=config.name) as instance:
        storage = instance.event_log_storage
        held = {p.name: p.limit for p in storage.get_pool_limits()}
        for pool in sorted(asset_pools()):
            if pool not in held or held[pool] is None:
                storage.set_concurrency_slots(pool, default)
        return {p.name: p.limit for p in storage.get_pool_limits() if p.name in asset_pools()}
