"""The delivery worker (``lexpipe notify``): what keeps the outbox moving in any deployment.

The notify step (a Dagster asset or a Prefect task after each publication) writes events and sends
them once; retries and events a crash left behind need someone to come back. In Dagster that is the
``webhook_outbox`` sensor; a deployment without a Dagster daemon (``lexpipe serve`` alone, Prefect,
cron) runs this worker. Each tick:

1. **catch up** (at start, then every ``LEXPIPE_WEBHOOK_CATCH_UP_INTERVAL_S``): for every act with
   subscriptions, the events of its publications the outbox lacks — a notify step killed before its
   outbox write leaves none behind, and ids are stable, so nothing is written twice (``notify_act``,
   no delivery);
2. **deliver** what is due (``Deliverer.run``): retries whose backoff passed, events whose sender died
   (their lease expired: ``LEXPIPE_WEBHOOK_TIMEOUT_S`` + ``LEXPIPE_WEBHOOK_LEASE_MARGIN_S``), pings
   and redeliveries a killed API process left.

Several workers (or a worker and the sensor's runs) may run at once: events are claimed under a
lease, one process sends an event at a time (docs/subscriptions.md, crash safety).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from core.layout import Layout
from core.settings import Settings
from pipelines.subscriptions import db
from pipelines.subscriptions.addresses import Resolver
from pipelines.subscriptions.delivery import Deliverer, RunReport
from pipelines.subscriptions.events import NotifyReport, notify_act
from pipelines.subscriptions.feed import published_acts
from pipelines.subscriptions.matching import QueryRunner
from pipelines.subscriptions.store import list_subscriptions

log = logging.getLogger("lexpipe.webhooks")


@dataclass
class TickReport:
    """What one tick did."""

    caught_up: list[NotifyReport] = field(default_factory=list)  # empty when the catch-up was not due
    delivery: RunReport = field(default_factory=RunReport)

    @property
    def new_events(self) -> int:
        return sum(r.new for r in self.caught_up)

    def line(self) -> str:
        d = self.delivery
        catch = f"{self.new_events} new events from {len(self.caught_up)} acts; " if self.caught_up else ""
        return (f"{catch}{d.attempts} attempts: {d.delivered} delivered, {d.retried} to retry, "
                f"{d.dead_lettered} dead-lettered, {d.cancelled} cancelled")


def catch_up(layout: Layout, *, settings: Settings, runner: QueryRunner | None = None) -> list[NotifyReport]:
    """The events of every publication of every subscribed act that the outbox lacks (written, not
    sent). Each subscription hears only of publications made after it was created."""
    if not db.exists(layout):
        return []
    subscribed = {s.act_id for s in list_subscriptions(layout)}
    return [notify_act(layout, act, runner=runner, deliver=False, settings=settings)
            for act in published_acts(layout) if act in subscribed]


class Worker:
    """Catch-up and delivery ticks over one home. ``runner``: saved queries' search (None: those
    events are deferred until a runner is given); ``resolve``/``client``: the delivery's address
    resolver and HTTP client (tests inject them)."""

    def __init__(self, layout: Layout, *, settings: Settings, runner: QueryRunner | None = None,
                 resolve: Resolver | None = None, client=None, clock: Callable[[], float] = time.monotonic):
        self.layout = layout
        self.settings = settings
        self.runner = runner
        self.deliverer = Deliverer(layout, settings=settings, resolve=resolve, client=client)
        self.clock = clock
        self._caught_up_at: float | None = None

    def close(self) -> None:
        self.deliverer.close()

    def catch_up_due(self) -> bool:
        every = self.settings.webhook_catch_up_interval_s
        if self._caught_up_at is None:
            return True
        return every > 0 and self.clock() - self._caught_up_at >= every

    def tick(self, *, budget_s: float = 0.0) -> TickReport:
        """One catch-up (when due) and one delivery run over what is due (``budget_s``: how long it
        waits for retries falling due; a looping worker passes 0 and comes back next tick)."""
        report = TickReport()
        if self.catch_up_due():
            report.caught_up = catch_up(self.layout, settings=self.settings, runner=self.runner)
            self._caught_up_at = self.clock()
        report.delivery = self.deliverer.run(budget_s=budget_s)
        return report

    def run(self, stop: threading.Event, *, interval_s: float | None = None,
            on_tick: Callable[[TickReport], None] | None = None) -> None:
        """Tick every ``interval_s`` (default ``LEXPIPE_WEBHOOK_WORKER_INTERVAL_S``) until ``stop`` is
        set; a tick in progress finishes (its attempts are recorded) before the worker returns."""
        interval = self.settings.webhook_worker_interval_s if interval_s is None else interval_s
        while not stop.is_set():
            try:
                report = self.tick()
            except Exception:  # noqa: BLE001 — a tick that failed (disk, database locked) is retried next tick
                log.exception("webhook worker tick failed; retrying in %.0f s", interval)
            else:
                if on_tick is not None:
                    on_tick(report)
            stop.wait(interval)
