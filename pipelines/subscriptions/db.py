"""The subscriptions database: one SQLite file, ``$LEXPIPE_HOME/subscriptions/subscriptions.sqlite3``.

Why SQLite and not atomic JSON files: subscriptions are written by the API process while a Dagster
or Prefect run reads them and works the outbox, and the outbox changes state row by row (claimed,
attempted, delivered, parked) from several processes. A transaction per state change — committed
(durably, WAL + ``synchronous=FULL``) before the next step — gives crash safety and no lost
updates without a lock file around every read-modify-write of a JSON document; an event is
claimed by one process at a time (``BEGIN IMMEDIATE``), and the attempt log is an append-only table
that can be queried per event.

The secrets are stored as given (a signature needs the secret itself, a hash would not do); the
folder is created ``0700`` and the file ``0600``, and no function of this package returns a secret
except :meth:`store.SubscriptionStore.secret_of`, used to sign.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.layout import Layout

DB_NAME = "subscriptions.sqlite3"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('act', 'unit', 'query')),
    act_id TEXT NOT NULL,
    unit_id TEXT,
    query TEXT,
    k INTEGER,
    retriever TEXT,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    owner TEXT,
    description TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS subscriptions_act ON subscriptions (act_id);
CREATE INDEX IF NOT EXISTS subscriptions_owner ON subscriptions (owner);

CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL,
    type TEXT NOT NULL,
    act_id TEXT NOT NULL,
    from_version TEXT,
    to_version TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'cancelled')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    lease_until REAL,
    created_at TEXT NOT NULL,
    delivered_at TEXT,
    dead_at TEXT,
    last_status INTEGER,
    last_error TEXT
);
CREATE INDEX IF NOT EXISTS events_due ON events (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS events_subscription ON events (subscription_id);

CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms REAL,
    status_code INTEGER,
    error TEXT,
    outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_event ON attempts (event_id);
"""


def subscriptions_dir(layout: Layout) -> Path:
    return layout.home / "subscriptions"


def db_path(layout: Layout) -> Path:
    return subscriptions_dir(layout) / DB_NAME


def exists(layout: Layout) -> bool:
    """Whether any subscription was ever created (a home without the file has none, and reading
    it never creates the file)."""
    return db_path(layout).exists()


def connect(layout: Layout) -> sqlite3.Connection:
    """A connection with the schema in place (created on first use, folder 0700, file 0600).
    Autocommit mode: callers open transactions with :func:`transaction`."""
    folder = subscriptions_dir(layout)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    path = db_path(layout)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        with transaction(conn):
            _create(conn)
    return conn


def _create(conn: sqlite3.Connection) -> None:
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error): one writer at a time across processes."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
