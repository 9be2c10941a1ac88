"""The outbox: every event is written (committed) before any delivery attempt, and marked
delivered only after a 2xx answer.

States: ``pending`` (to be attempted at ``next_attempt_at``) → ``delivered`` | ``dead`` (the
dead-letter list: too many failed attempts, or a 4xx that is not retried) | ``cancelled`` (the
subscription was deleted). ``redeliver`` puts a dead event back to ``pending`` with a fresh
attempt budget, and makes a pending one due now (a retry waiting for its backoff, or one a crashed
process left leased, once the lease expired).

Crash safety: a process claims an event by writing a lease (``lease_until``) in a transaction,
then posts it. If it dies between the claim and recording the answer, the event is still
``pending``; once the lease expires the next run (the ``webhook_outbox`` sensor's job, ``lexpipe notify``,
a redelivery) claims it and sends the same body again with the same event id — delivered at least once, never lost (receivers de-duplicate by the id). The
attempt is logged ``in_flight`` before the POST and completed after it, so an interrupted attempt
shows in the log as ``interrupted``.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass

from core.layout import Layout
from pipelines.subscriptions import db

STATUSES = ("pending", "delivered", "dead", "cancelled")


@dataclass(frozen=True)
class OutboxEvent:
    id: str
    subscription_id: str
    type: str
    act_id: str
    from_version: str | None
    to_version: str
    url: str
    body: str
    status: str
    attempts: int
    next_attempt_at: float
    lease_until: float | None
    created_at: str
    delivered_at: str | None
    dead_at: str | None
    last_status: int | None
    last_error: str | None

    def to_dict(self, *, body: bool = False) -> dict:
        """For listings (the dead-letter list, the API): no body unless asked, never the secret."""
        out = {k: getattr(self, k) for k in ("id", "subscription_id", "type", "act_id", "from_version", "to_version",
                                             "status", "attempts", "created_at", "delivered_at", "dead_at",
                                             "last_status", "last_error")}
        out["next_attempt_at"] = _iso(self.next_attempt_at) if self.status == "pending" else None
        if body:
            out["body"] = self.body
        return out


@dataclass(frozen=True)
class Attempt:
    event_id: str
    attempt: int
    started_at: str
    duration_ms: float | None
    status_code: int | None
    error: str | None
    outcome: str  # in_flight | interrupted | delivered | retry | dead

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _event(r: sqlite3.Row) -> OutboxEvent:
    return OutboxEvent(**{k: r[k] for k in r.keys()})


class Outbox:
    def __init__(self, layout: Layout):
        self.layout = layout
        self._conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = db.connect(self.layout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- writing events ---------------------------------------------------------------------------
    def add(self, events, *, now: float) -> list[str]:
        """Write the events (``events.Event``) in one transaction; an id already in the outbox is
        kept as it is (the same publication notified twice). Returns the ids newly written."""
        new = []
        with db.transaction(self.conn) as c:
            for e in events:
                cur = c.execute(
                    "INSERT OR IGNORE INTO events (id, subscription_id, type, act_id, from_version, to_version, url, "
                    "body, status, attempts, next_attempt_at, created_at) VALUES (?,?,?,?,?,?,?,?,'pending',0,?,?)",
                    (e.id, e.subscription_id, e.type, e.act_id, e.from_version, e.to_version, e.url, e.body, now,
                     e.created_at))
                if cur.rowcount:
                    new.append(e.id)
        return new

    def known(self, ids) -> set[str]:
        ids = list(ids)
        if not ids or not db.exists(self.layout):
            return set()
        marks = ",".join("?" * len(ids))
        return {r[0] for r in self.conn.execute(f"SELECT id FROM events WHERE id IN ({marks})", ids)}

    # -- claiming and recording attempts --------------------------------------------------------
    def claim(self, *, now: float, lease_s: float, ids: list[str] | None = None) -> OutboxEvent | None:
        """The next due pending event nobody holds, leased to the caller until ``now + lease_s``.

        One subscription at a time: an event whose subscription has another event under a live lease
        (being sent by this or another process) waits, so a slow receiver ties up one sender, never
        the others, and one subscriber's events are not sent to it in parallel."""
        scope, args = "", []
        if ids is not None:
            if not ids:
                return None
            scope, args = f" AND e.id IN ({','.join('?' * len(ids))})", list(ids)
        with db.transaction(self.conn) as c:
            row = c.execute("SELECT e.* FROM events e WHERE e.status = 'pending' AND e.next_attempt_at <= ? "
                            "AND (e.lease_until IS NULL OR e.lease_until <= ?)" + scope +
                            " AND NOT EXISTS (SELECT 1 FROM events b WHERE b.subscription_id = e.subscription_id "
                            "AND b.status = 'pending' AND b.lease_until > ?)"
                            " ORDER BY e.next_attempt_at, e.created_at, e.id LIMIT 1", [now, now, *args, now]).fetchone()
            if row is None:
                return None
            c.execute("UPDATE events SET lease_until = ? WHERE id = ?", (now + lease_s, row["id"]))
            # an attempt still in flight from a process that died is an interrupted one
            c.execute("UPDATE attempts SET outcome = 'interrupted' WHERE event_id = ? AND outcome = 'in_flight'",
                      (row["id"],))
        return _event(row)

    def next_due(self, *, ids: list[str] | None = None) -> float | None:
        """When the earliest pending event (of ``ids``) may be attempted: its own time, its lease and
        the leases of its subscription's other events count."""
        scope, args = "", []
        if ids is not None:
            if not ids:
                return None
            scope, args = f" AND e.id IN ({','.join('?' * len(ids))})", list(ids)
        row = self.conn.execute(
            "SELECT MIN(MAX(e.next_attempt_at, COALESCE(e.lease_until, 0), COALESCE(b.busy, 0))) FROM events e "
            "LEFT JOIN (SELECT subscription_id, MAX(lease_until) AS busy FROM events WHERE status = 'pending' "
            "AND lease_until IS NOT NULL GROUP BY subscription_id) b ON b.subscription_id = e.subscription_id "
            "WHERE e.status = 'pending'" + scope, args).fetchone()
        return row[0]

    def start_attempt(self, event_id: str, *, started_at: float) -> int:
        """Log an attempt as in flight (before the POST); its number (1-based, over every attempt
        the event ever had)."""
        with db.transaction(self.conn) as c:
            n = c.execute("SELECT COUNT(*) FROM attempts WHERE event_id = ?", (event_id,)).fetchone()[0] + 1
            c.execute("INSERT INTO attempts (event_id, attempt, started_at, outcome) VALUES (?,?,?,'in_flight')",
                      (event_id, n, _iso(started_at)))
        return n

    def finish_attempt(self, event_id: str, attempt: int, *, outcome: str, duration_ms: float,
                       status_code: int | None, error: str | None, now: float,
                       next_attempt_at: float | None = None) -> None:
        """Record the answer and move the event: delivered, pending again (``next_attempt_at``) or dead."""
        stamp = _iso(now)
        with db.transaction(self.conn) as c:
            c.execute("UPDATE attempts SET duration_ms = ?, status_code = ?, error = ?, outcome = ? "
                      "WHERE event_id = ? AND attempt = ?", (duration_ms, status_code, error, outcome, event_id, attempt))
            common = "attempts = attempts + 1, lease_until = NULL, last_status = ?, last_error = ?"
            if outcome == "delivered":
                c.execute(f"UPDATE events SET status = 'delivered', delivered_at = ?, {common} "
                          "WHERE id = ? AND status = 'pending'", (stamp, status_code, error, event_id))
            elif outcome == "retry":
                c.execute(f"UPDATE events SET next_attempt_at = ?, {common} WHERE id = ? AND status = 'pending'",
                          (next_attempt_at, status_code, error, event_id))
            elif outcome == "dead":
                c.execute(f"UPDATE events SET status = 'dead', dead_at = ?, {common} "
                          "WHERE id = ? AND status = 'pending'", (stamp, status_code, error, event_id))
            else:
                raise ValueError(f"unknown outcome {outcome!r}")

    # -- reading --------------------------------------------------------------------------------
    def get(self, event_id: str) -> OutboxEvent | None:
        if not db.exists(self.layout):
            return None
        row = self.conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
        return _event(row) if row else None

    def events(self, *, status: str | None = None, subscription_id: str | None = None,
               ids: list[str] | None = None) -> list[OutboxEvent]:
        if not db.exists(self.layout):
            return []
        sql, args = "SELECT * FROM events WHERE 1=1", []
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        if subscription_id is not None:
            sql, args = sql + " AND subscription_id = ?", [*args, subscription_id]
        if ids is not None:
            if not ids:
                return []
            sql, args = sql + f" AND id IN ({','.join('?' * len(ids))})", [*args, *ids]
        return [_event(r) for r in self.conn.execute(sql + " ORDER BY created_at, id", args)]

    def attempts(self, event_id: str) -> list[Attempt]:
        if not db.exists(self.layout):
            return []
        return [Attempt(**{k: r[k] for k in r.keys() if k != "id"}) for r in self.conn.execute(
            "SELECT * FROM attempts WHERE event_id = ? ORDER BY attempt", (event_id,))]

    # -- redelivery -----------------------------------------------------------------------------
    def requeue(self, event_id: str, *, now: float) -> tuple[str, float | None]:
        """An event back in line, due now: a dead one with a fresh attempt budget (its log is kept),
        a pending one (waiting for a retry, or left behind by a crash once its lease expired) as it is.
        Returns ``("requeued", None)``, ``("in_flight", lease_until)`` when a live lease holds it
        (a sender is on it), or ``(status, None)`` for a delivered or cancelled one."""
        with db.transaction(self.conn) as c:
            row = c.execute("SELECT status, lease_until FROM events WHERE id = ?", (event_id,)).fetchone()
            if row is None:
                return "missing", None
            if row["status"] == "dead":
                c.execute("UPDATE events SET status = 'pending', attempts = 0, next_attempt_at = ?, "
                          "lease_until = NULL, dead_at = NULL WHERE id = ?", (now, event_id))
                return "requeued", None
            if row["status"] != "pending":
                return row["status"], None
            if row["lease_until"] is not None and row["lease_until"] > now:
                return "in_flight", row["lease_until"]
            c.execute("UPDATE events SET next_attempt_at = ?, lease_until = NULL WHERE id = ?", (now, event_id))
        return "requeued", None
