"""The order rule every statute orchestrator shares (``pipelines.statutes.changeset_order``): which
changesets a catch-up applies, and a changeset refused while an earlier one it depends on is not
applied — judged from the changeset records alone. The changesets mirror the first commits of the
gesetze history (an empty first commit, the import, a fixes merge over every act, one-act BGBl
issues); the end-to-end runs are tests/assets/test_de_statutes.py and
tests/lexpipe/test_prefect_de_statutes.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.changesets import ActChange, Changeset
from core.layout import Layout
from pipelines.statutes.changeset_order import ChangesetOrderError, changesets_to_apply, ordered_changeset
from pipelines.statutes.changeset_record import ActOutcome, load_record, save_record

ACTS = ("de:bgb", "de:gg", "de:hgb")


def _cs(seq: int, kind: str, acts: tuple[str, ...], date: str = "2012-08-02") -> Changeset:
    members = tuple(ActChange(a, a.split(":")[1], "added" if kind == "import" else "modified", date,
                              f"{a[3]}/{a.split(':')[1]}/index.md") for a in acts)
    return Changeset(f"{seq:04d}-{seq:08x}", "de", "gesetze", f"{seq:040x}", date, kind, seq=seq, members=members)


HISTORY = [_cs(0, "other", ()), _cs(1, "import", ACTS), _cs(2, "fixes", ACTS, "2012-08-03"),
           _cs(3, "bgbl", ("de:gg",), "2012-08-10"), _cs(4, "bgbl", ("de:bgb",), "2012-08-20")]


def _settle(layout: Layout, cs: Changeset, acts: tuple[str, ...] | None = None) -> None:
    """A record as ``apply_changeset`` leaves it: outcomes of ``acts`` (all members: applied)."""
    rec = load_record(layout, cs)
    for m in cs.members:
        if acts is None or m.act_id in acts:
            rec.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "published")
    if not rec.pending():
        rec.state = "applied"
    save_record(layout, rec)


def test_a_fresh_home_applies_every_changeset_with_acts_oldest_first(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    plan = changesets_to_apply(layout, HISTORY)
    assert [(p.changeset.key, p.acts) for p in plan] == [(c.key, None) for c in HISTORY[1:]]
    assert [p.changeset.key for p in changesets_to_apply(layout, HISTORY, until="import")] == [HISTORY[1].key]
    assert [p.changeset.key for p in changesets_to_apply(layout, HISTORY, until=HISTORY[3].key)] == \
        [c.key for c in HISTORY[1:4]]


def test_an_until_the_source_does_not_offer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChangesetOrderError, match=r"until='0099-deadbeef': no such changeset among the 5"):
        changesets_to_apply(Layout(tmp_path), HISTORY, until="0099-deadbeef")
    with pytest.raises(ChangesetOrderError, match="until='import'"):  # a history without its import yet
        changesets_to_apply(Layout(tmp_path), HISTORY[:1], until="import")


def test_applied_changesets_are_skipped_and_restricted_runs_build_only_their_acts(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    _settle(layout, HISTORY[1])
    assert [p.changeset.key for p in changesets_to_apply(layout, HISTORY)] == [c.key for c in HISTORY[2:]]
    plan = changesets_to_apply(layout, HISTORY, acts=["de:gg"])
    assert [(p.changeset.key, p.acts) for p in plan] == [(HISTORY[2].key, ("de:gg",)), (HISTORY[3].key, ("de:gg",))]
    _settle(layout, HISTORY[2], ("de:gg",))  # the fixes merge applied for GG only: still in progress
    assert [p.changeset.key for p in changesets_to_apply(layout, HISTORY, acts=["de:gg"])] == [HISTORY[3].key]
    assert [p.changeset.key for p in changesets_to_apply(layout, HISTORY)][0] == HISTORY[2].key  # BGB, HGB to do


def test_a_changeset_waits_for_the_earlier_ones_it_depends_on(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    with pytest.raises(ChangesetOrderError, match=f"{HISTORY[3].key}: 2 earlier changeset\\(s\\) are not applied "
                                                  f"yet \\(first {HISTORY[1].key}\\)"):
        ordered_changeset(layout, HISTORY, HISTORY[3].key)
    _settle(layout, HISTORY[1])
    _settle(layout, HISTORY[2], ("de:gg",))
    assert ordered_changeset(layout, HISTORY, HISTORY[3].key, only=["de:gg"]) == HISTORY[3]  # GG is settled
    with pytest.raises(ChangesetOrderError, match=f"first {HISTORY[2].key}"):  # BGB is not, in the fixes merge
        ordered_changeset(layout, HISTORY, HISTORY[4].key, only=["de:bgb"])
    with pytest.raises(ChangesetOrderError, match=f"first {HISTORY[2].key}"):  # unrestricted: the whole merge
        ordered_changeset(layout, HISTORY, HISTORY[3].key)
    with pytest.raises(ChangesetOrderError, match="changeset 0042-x is not in the gesetze history \\(bundle\\)"):
        ordered_changeset(layout, HISTORY, "0042-x", source="bundle")
