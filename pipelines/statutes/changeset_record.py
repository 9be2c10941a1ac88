"""What applying a changeset did, per act: the record every statute refresh writes and resumes from.

Why a record per changeset (``corpus/<jur>/.changesets/<key>.json``): a changeset can hold 6,183
acts (the initial import) and a run can die in the middle. The record says which acts are
published (at which version, from which source blob), which are quarantined and why, and whether
the changeset is *applied* (every member published, unchanged, deleted or quarantined). A resumed
run skips the acts already published from the same source bytes; a changeset is never marked
applied before all its acts are settled; the sensor asks the records which changesets are still
to do. The record is rewritten atomically after every batch, so a kill loses at most one batch
of work and never publishes half an act (each act version is promoted by one rename).

Outcomes:

* ``published`` — a new version was validated and promoted;
* ``unchanged`` — the version was already published from the same source bytes (a re-run);
* ``quarantined`` — the act failed to parse or failed a blocking check: the last good version
  keeps serving; ``reason`` is one of :data:`REASONS`, ``message`` names the file and the cause;
* ``deleted`` — the source dropped the act: its published versions stay readable.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from connectors.changesets import Changeset
from core.atomic import atomic_write_json
from core.layout import Layout

OUTCOMES = ("published", "unchanged", "quarantined", "deleted")
# why an act was quarantined: the step that refused it
REASONS = ("source_missing", "parse_error", "crash", "articles_check", "nodes_check", "chunks_check",
           "count_check", "diff_error", "publish_error")


@dataclass
class ActOutcome:
    act_id: str
    version: str
    outcome: str  # published | unchanged | quarantined | deleted
    reason: str = ""  # quarantined: one of REASONS
    message: str = ""
    source_sha: str = ""  # the source blob / file hash the version was built from
    units: int = 0  # article-level units (§§, Art., Nummern …)
    chunks: int = 0
    diff: dict[str, int] = field(default_factory=dict)  # change kind → units (added, changed, editorial …)
    seconds: float = 0.0
    # published: what the build's checks passed — {"suites": fingerprint, "files": {name: sha256}}
    # (pipelines.statutes.batch_checks); the asset check trusts it while the files and suites are the same
    validated: dict = field(default_factory=dict)


@dataclass
class ChangesetRecord:
    changeset: Changeset
    outcomes: dict[str, ActOutcome] = field(default_factory=dict)
    state: str = "in_progress"  # in_progress | applied
    started_at: str = ""
    finished_at: str = ""
    seconds: float = 0.0
    batches: int = 0
    timings: dict[str, float] = field(default_factory=dict)  # step → seconds (read, parse, checks, publish, …)

    @property
    def applied(self) -> bool:
        return self.state == "applied"

    def counts(self) -> dict[str, int]:
        c = Counter(o.outcome for o in self.outcomes.values())
        return {k: c.get(k, 0) for k in OUTCOMES}

    def reasons(self) -> dict[str, int]:
        return dict(Counter(o.reason for o in self.outcomes.values() if o.outcome == "quarantined"))

    def diff_totals(self) -> dict[str, int]:
        total: Counter = Counter()
        for o in self.outcomes.values():
            total.update(o.diff)
        return dict(total)

    def pending(self) -> list[str]:
        """Members without an outcome yet (a resumed run builds only these)."""
        return [m.act_id for m in self.changeset.members if m.act_id not in self.outcomes]

    def to_json(self) -> dict:
        return {"changeset": self.changeset.to_json(), "state": self.state, "started_at": self.started_at,
                "finished_at": self.finished_at, "seconds": round(self.seconds, 3), "batches": self.batches,
                "timings": {k: round(v, 3) for k, v in self.timings.items()},
                "counts": self.counts(), "reasons": self.reasons(), "diff": self.diff_totals(),
                "outcomes": [asdict(o) for o in self.outcomes.values()]}

    @classmethod
    def from_json(cls, d: dict) -> "ChangesetRecord":
        return cls(Changeset.from_json(d["changeset"]), {o["act_id"]: ActOutcome(**o) for o in d.get("outcomes", [])},
                   d.get("state", "in_progress"), d.get("started_at", ""), d.get("finished_at", ""),
                   float(d.get("seconds", 0.0)), int(d.get("batches", 0)), dict(d.get("timings", {})))


def record_path(layout: Layout, changeset: Changeset) -> Path:
    return layout.changesets(changeset.jurisdiction) / f"{changeset.key}.json"


def load_record(layout: Layout, changeset: Changeset) -> ChangesetRecord:
    """The changeset's record (a fresh one when none was written), for the same changeset only:
    a record of another commit under the same key (a rewritten history) is an error."""
    path = record_path(layout, changeset)
    if not path.exists():
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        return ChangesetRecord(changeset, started_at=now)
    rec = ChangesetRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    if rec.changeset.position != changeset.position:
        raise ValueError(f"{path}: recorded for {rec.changeset.position}, not {changeset.position}: "
                         "the source's history was rewritten; move the record away to rebuild")
    return rec


def save_record(layout: Layout, record: ChangesetRecord) -> Path:
    path = record_path(layout, record.changeset)
    atomic_write_json(path, record.to_json())
    return path


def applied_keys(layout: Layout, jurisdiction: str) -> set[str]:
    """Keys of the changesets whose record says applied."""
    root = layout.changesets(jurisdiction)
    out = set()
    for p in root.glob("*.json") if root.is_dir() else []:
        try:
            if json.loads(p.read_text(encoding="utf-8")).get("state") == "applied":
                out.add(p.stem)
        except ValueError:
            continue
    return out


def published_versions(layout: Layout, jurisdiction: str, key: str) -> list[tuple[str, str]]:
    """(act, version) of every version the changeset ``key`` published, in act order."""
    path = layout.changesets(jurisdiction) / f"{key}.json"
    if not path.exists():
        return []
    outcomes = json.loads(path.read_text(encoding="utf-8")).get("outcomes", [])
    return sorted((o["act_id"], o["version"]) for o in outcomes if o["outcome"] == "published")
