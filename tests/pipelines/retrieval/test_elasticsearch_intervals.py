"""The row-interval planner of the Elasticsearch language index (pure, no cluster): whatever order
versions arrive in, and however often they are re-published, every held version shows exactly
the content last published for it, and only rows whose content differs are touched."""

from __future__ import annotations

import random

import pytest

from pipelines.retrieval.elasticsearch import intervals as iv


def carry_out(rows: list[iv.Row], plan: iv.Plan, keys) -> list[iv.Row]:
    """What the writer does with a plan (copies first: they read the rows as they were)."""
    out = list(rows)
    for row, vf, vt in plan.copies:
        out.append(iv.Row(row.key, vf, vt))
    for row, vf, vt in plan.reinterval:
        row.version_from, row.version_to = vf, vt
    out = [r for r in out if all(r is not x for x in plan.remove)]
    for i, vf, vt in plan.new:
        out.append(iv.Row(keys[i], vf, vt))
    return out


def shown(rows, version):
    return sorted(r.key for r in iv.visible_at(rows, version))


def test_appending_versions_keeps_unchanged_rows_and_closes_the_others():
    rows = carry_out([], *_plan([], [], "2024-01-01", ["a", "b", "c"]))
    plan, versions = iv.apply_version(rows, ["2024-01-01"], "2025-01-01", ["a", "c2", "c", "d"])
    assert plan.kept == 2 and [r.key for r, *_ in plan.reinterval] == ["b"]
    assert plan.new == [(1, "2025-01-01", iv.OPEN_VERSION), (3, "2025-01-01", iv.OPEN_VERSION)]
    assert not plan.copies and not plan.remove
    rows = carry_out(rows, plan, ["a", "c2", "c", "d"])
    assert shown(rows, "2024-01-01") == ["a", "b", "c"] and shown(rows, "2025-01-01") == ["a", "c", "c2", "d"]
    assert versions == ["2024-01-01", "2025-01-01"]


def _plan(rows, versions, v, keys):
    plan, _ = iv.apply_version(rows, versions, v, keys)
    return plan, keys


def test_an_inserted_version_splits_only_the_rows_it_does_not_show():
    rows: list[iv.Row] = []
    held: list[str] = []
    for v, keys in (("2012-08-06", ["a", "b"]), ("2012-09-01", ["a", "b", "c"])):
        plan, held = iv.apply_version(rows, held, v, keys)
        rows = carry_out(rows, plan, keys)
    plan, held = iv.apply_version(rows, held, "2012-08-06.02", ["b", "x"])  # late, and without "a"
    assert len(plan.copies) == 1 and plan.copies[0][1:] == ("2012-09-01", iv.OPEN_VERSION)  # "a" after the gap
    rows = carry_out(rows, plan, ["b", "x"])
    assert shown(rows, "2012-08-06") == ["a", "b"]
    assert shown(rows, "2012-08-06.02") == ["b", "x"]
    assert shown(rows, "2012-09-01") == ["a", "b", "c"]
    assert held == ["2012-08-06", "2012-08-06.02", "2012-09-01"]


def test_duplicate_keys_are_refused():
    with pytest.raises(ValueError, match="appears twice"):
        iv.apply_version([], [], "2024-01-01", ["a", "a"])


@pytest.mark.parametrize("seed", range(40))
def test_every_version_shows_what_was_last_published_for_it(seed):
    rnd = random.Random(seed)
    days = [f"2012-0{m}-0{d}" for m in range(1, 4) for d in range(1, 4)]
    days += [d + ".02" for d in days[::2]]
    universe = [f"k{i}" for i in range(8)]
    truth: dict[str, list[str]] = {}
    rows: list[iv.Row] = []
    held: list[str] = []
    for _ in range(25):
        v = rnd.choice(days)
        keys = rnd.sample(universe, rnd.randint(0, 6))
        before = {w: shown(rows, w) for w in held}
        plan, held = iv.apply_version(rows, held, v, keys)
        if v in before and sorted(keys) == before[v]:
            assert not plan.changed  # the same content again changes nothing
        rows = carry_out(rows, plan, keys)
        truth[v] = sorted(keys)
        assert held == sorted(truth)
        for w in held:
            assert shown(rows, w) == truth[w], (seed, w)
        for r in rows:  # intervals are never empty, and one key has at most one row per version
            assert r.version_from < r.version_to
    if len(held) > 2:
        plan, kept = iv.prune(rows, held, 2)
        rows = carry_out(rows, plan, [])
        assert kept == held[-2:]
        for w in kept:
            assert shown(rows, w) == truth[w]
        assert all(r.version_from >= kept[0] for r in rows)
