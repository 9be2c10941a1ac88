"""Which changesets a statute refresh applies, and in which order: the rule every orchestrator shares.

Versions are published in the source's order: an act's new version is diffed against, and checked
against the article count of, its newest published version, so applying a changeset before an
earlier one that touched the same act would judge it against the wrong predecessor (and make the
earlier one's version older than the serving one). Hence two rules, asked here by the Dagster
assets (``assets/de_statutes.py``), the runner (``lexpipe load``, ``lexpipe run --acts``) and the
Prefect flow (``lexpipe/prefect_de_statutes.py``) alike:

* :func:`ordered_changeset` — a changeset refuses to run while an earlier one with acts is not
  applied; a run restricted to some acts needs only those acts settled in the earlier changesets
  that touched them (the others stay to do, in their own order);
* :func:`changesets_to_apply` — what a catch-up applies: every offered changeset with acts whose
  record is not applied (restricted: whose record does not hold those acts yet), oldest first,
  up to ``until``.

Both read only the changeset records (:mod:`pipelines.statutes.changeset_record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from connectors.changesets import Changeset
from core.layout import Layout
from pipelines.statutes.changeset_record import applied_keys, load_record


class ChangesetOrderError(RuntimeError):
    """The changeset is unknown, or an earlier one is not applied yet: nothing was written."""


def unapplied_before(layout: Layout, history: Sequence[Changeset], changeset: Changeset,
                     only: Sequence[str] | None = None) -> list[str]:
    """Keys of the earlier changesets (with acts) that must be applied before ``changeset``;
    with ``only``, the earlier changesets that touched one of those acts without settling it."""
    done = applied_keys(layout, changeset.jurisdiction)
    missing = [c for c in history[:changeset.seq] if c.members and c.key not in done]
    if only:
        scope = set(only)

        def settled(c: Changeset) -> bool:
            touched = scope & {m.act_id for m in c.members}
            return not touched or touched <= set(load_record(layout, c).outcomes)

        missing = [c for c in missing if not settled(c)]
    return [c.key for c in missing]


def ordered_changeset(layout: Layout, history: Sequence[Changeset], key: str, *, only: Sequence[str] | None = None,
                      source: str = "") -> Changeset:
    """The changeset ``key`` of ``history``, once every earlier one it depends on is applied;
    :class:`ChangesetOrderError` otherwise (``source`` names the repository in the message)."""
    cs = next((c for c in history if c.key == key), None)
    if cs is None:
        name = history[0].source if history else "source"
        raise ChangesetOrderError(f"changeset {key} is not in the {name} history" + (f" ({source})" if source else ""))
    missing = unapplied_before(layout, history, cs, only)
    if missing:
        raise ChangesetOrderError(f"{key}: {len(missing)} earlier changeset(s) are not applied yet (first "
                                  f"{missing[0]}); versions are published in the source's order: run them first")
    return cs


@dataclass(frozen=True)
class PlannedChangeset:
    changeset: Changeset
    acts: tuple[str, ...] | None  # the members to build; None: all of them (an unrestricted run)


def _is_until(cs: Changeset, until: str | None) -> bool:
    return until is not None and (cs.key == until or (until == "import" and cs.kind == "import"))


def changesets_to_apply(layout: Layout, offered: Sequence[Changeset], *, acts: Sequence[str] | None = None,
                        until: str | None = None) -> list[PlannedChangeset]:
    """The changesets a catch-up run applies, oldest first: those with acts not applied yet
    (``acts``: only those touching these acts and not holding them yet, built for them only),
    stopping after ``until`` (a changeset key, or ``"import"`` for the initial import). An
    ``until`` that names no offered changeset is an error, not "everything"."""
    if until is not None and not any(_is_until(c, until) for c in offered):
        span = f"{offered[0].key} … {offered[-1].key}" if offered else "none"
        raise ChangesetOrderError(f"until={until!r}: no such changeset among the {len(offered)} the source offers "
                                  f"({span}); give a changeset key or 'import'")
    plan = []
    for cs in offered:
        if cs.members:
            wanted = [m.act_id for m in cs.members if acts is None or m.act_id in acts]
            if wanted:
                rec = load_record(layout, cs)
                if not (rec.applied or all(a in rec.outcomes for a in wanted)):
                    plan.append(PlannedChangeset(cs, tuple(wanted) if acts is not None else None))
        if _is_until(cs, until):
            break
    return plan
