"""A changeset: one publication event of a source and the acts it changed — the unit of work of
every statute refresh, in both jurisdictions.

Why the changeset and not the act is the unit: a legal gazette publishes an issue that amends a
handful of acts (a Bundesgesetzblatt issue changes a median of 2 acts, at most 40, in the
bundestag/gesetze history), and a jurisdiction holds thousands of acts. One Dagster run per act
would cost ~133 h of run overhead for 12,000 acts (docs/deployment.md); one run per changeset
refreshes exactly the acts the event changed, and the initial load of a whole jurisdiction is one
changeset of its own (the import), built in batches inside its run.

Keys sort in source order and name the event: ``0124-100ac536`` (the 124th commit of the
gesetze first-parent history), ``2025-11-13-kc`` (an ELI text state). They are the partition keys
of the ``<jur>_changesets`` dynamic partitions (assets/).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

CHANGES = ("added", "modified", "deleted")
KINDS = ("import", "bgbl", "banz", "fixes", "refresh", "eli", "other")


@dataclass(frozen=True)
class ActChange:
    """One act a changeset touches."""
    act_id: str  # de:aeg
    address: str  # the source's key: gesetze slug, ELI address
    change: str  # added | modified | deleted
    version: str  # the version this change publishes ("2012-08-06", "2012-08-06.02"); "" for deleted
    path: str = ""  # where the source keeps the text at this position ("a/aeg/index.md", a PDF file)


@dataclass(frozen=True)
class Changeset:
    key: str  # partition key: "0124-100ac536"
    jurisdiction: str  # de | pl
    source: str  # gesetze | eli
    position: str  # the source position after the event: a commit id, an ELI version
    date: str  # YYYY-MM-DD: the day the source published it (the versions' date)
    kind: str  # import | bgbl | banz | fixes | refresh | eli | other
    gazette: str = ""  # "BGBl. I 2012 Nr. 63", "BAnz 2012-07-20", "Dz.U. 2025 poz. 1071"; "" when unknown
    title: str = ""  # the source's own words (the merge subject)
    seq: int = 0  # position in the source's history (0-based)
    members: tuple[ActChange, ...] = field(default_factory=tuple)

    @property
    def editorial_only(self) -> bool:
        """A converter/format fix, not law: its changes must come out editorial."""
        return self.kind == "fixes"

    def to_json(self) -> dict:
        d = asdict(self)
        d["members"] = [asdict(m) for m in self.members]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Changeset":
        return cls(**{**d, "members": tuple(ActChange(**m) for m in d.get("members", ()))})
