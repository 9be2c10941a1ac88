"""Change notifications: the change feed and webhook subscriptions (docs/subscriptions.md).

Consumers learn that a provision they rely on changed in two ways:

* the **change feed** (:mod:`.feed`): one entry per publication of an (act, version), read from
  what ``published`` wrote — the version folders, their manifests' ``published_at`` and the
  ``diff_from_<prev>.parquet`` tables — in publication order, paged by an opaque cursor, as JSON
  (:func:`.feed.changes`) or Atom (:func:`.feed.atom`);
* **webhooks**: a consumer registers a URL for an act, a unit (and its descendants) or a saved
  query (:mod:`.store`); when a version is published, :func:`.events.notify` matches every
  subscription against the publication (:mod:`.matching`), writes one event per match into the
  outbox (:mod:`.outbox`) and delivers it (:mod:`.delivery`): a signed POST (:mod:`.signing`),
  retried with backoff, logged attempt by attempt, parked in a dead-letter list after
  ``LEXPIPE_WEBHOOK_MAX_ATTEMPTS``.

Orchestrator-free: the Dagster assets (``assets/subscriptions.py``) and the Prefect step
(``lexpipe/prefect_notify.py``) only call :func:`.events.notify` / :func:`.events.notify_act` and
:func:`.delivery.deliver_due`. Everything lives under ``$LEXPIPE_HOME/subscriptions/``.
"""
