"""Generations: one atomic switch, crash safety (an exception, a real SIGKILL), one writer at a
time, readers during commits, garbage collection, segment merges."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from language_index_helpers import SplitAnalyzer, chunks, random_act
from pipelines.retrieval.interface import Filters
from pipelines.retrieval.language_index import IndexLocked, LanguageIndex
from pipelines.retrieval.language_index.writer import IndexWriter

REPO = Path(__file__).resolve().parents[4]
TESTS = Path(__file__).resolve().parent


def add(idx, *acts, seed=0, max_segments=12):
    rnd = random.Random(seed)
    with idx.writer(SplitAnalyzer(), max_segments=max_segments) as w:
        for act in acts:
            w.add_version(act, "2012-07-02", random_act(rnd, act, 20))
    return w.report


def by_chunk(snap, terms, mask=None):
    hits = snap.bm25(terms, mask, k=snap.n_rows)
    return {r["chunk_id"]: s for r, (_, s) in zip(snap.rows([i for i, _ in hits]), hits)}


def test_an_exception_before_the_switch_leaves_the_old_generation_serving(tmp_path, monkeypatch):
    idx = LanguageIndex(tmp_path / "de", "de", grace_s=0)
    add(idx, "de:a")
    before = idx.snapshot()

    def boom(self, generation):
        raise RuntimeError("disk full")

    monkeypatch.setattr(IndexWriter, "_switch", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        add(idx, "de:b", seed=1)
    assert idx.snapshot() is before and LanguageIndex(tmp_path / "de", "de").snapshot().acts() == ["de:a"]
    # the staged generation's files are on disk, harmless, until the next writer removes them
    assert (tmp_path / "de" / "manifests" / "g00000002.json").exists()
    assert len(list((tmp_path / "de" / "segments").iterdir())) == 2
    monkeypatch.undo()
    r = add(idx, "de:b", seed=1)  # the lock was released; generation 2 is written again
    assert r.generation == 2 and idx.snapshot().acts() == ["de:a", "de:b"]
    assert len(list((tmp_path / "de" / "segments").iterdir())) == 2  # the staged one is gone


CHILD = textwrap.dedent("""
    import random, sys, time
    from pathlib import Path
    sys.path[:0] = [{repo!r}, {tests!r}]
    from language_index_helpers import SplitAnalyzer, random_act
    from pipelines.retrieval.language_index import LanguageIndex
    from pipelines.retrieval.language_index.writer import IndexWriter

    def stall(self, generation):
        Path({marker!r}).write_text(str(generation))
        time.sleep(120)

    IndexWriter._switch = stall
    idx = LanguageIndex(Path({root!r}), "de")
    rnd = random.Random(5)
    w = idx.writer(SplitAnalyzer())
    for i in range(30):
        w.add_version(f"de:k{{i}}", "2012-07-02", random_act(rnd, f"de:k{{i}}", 50))
    w.commit()
""")


def test_a_writer_killed_mid_commit_leaves_the_old_generation_and_its_lock_is_taken_over(tmp_path):
    root = tmp_path / "de"
    idx = LanguageIndex(root, "de", grace_s=0)
    add(idx, "de:a")
    marker = tmp_path / "switching"
    script = CHILD.format(repo=str(REPO), tests=str(TESTS), marker=str(marker), root=str(root))
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 240
        while not marker.exists():
            assert child.poll() is None, child.stderr.read()
            assert time.time() < deadline, "the child never reached the switch"
            time.sleep(0.05)
        # the child holds the lock with generation 2 fully staged
        with pytest.raises(IndexLocked):
            idx.writer(SplitAnalyzer())
        assert (root / "manifests" / "g00000002.json").exists()
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    snap = LanguageIndex(root, "de").snapshot()
    assert snap.generation == 1 and snap.acts() == ["de:a"]
    assert len(snap.bm25(["kauf"], None, 100)) == len(idx.snapshot().bm25(["kauf"], None, 100))
    r = add(idx, "de:b", seed=1)  # the dead writer's lock is free; its staged files go
    assert r.generation == 2 and idx.snapshot().acts() == ["de:a", "de:b"]
    assert not any(a.startswith("de:k") for a in idx.snapshot().acts())
    assert len(list((root / "segments").iterdir())) == 2


def test_one_writer_at_a_time(tmp_path):
    idx = LanguageIndex(tmp_path / "de", "de")
    w = idx.writer(SplitAnalyzer())
    with pytest.raises(IndexLocked, match="another writer"):
        idx.writer(SplitAnalyzer())
    w.abort()
    idx.writer(SplitAnalyzer()).abort()
    with pytest.raises(RuntimeError, match="committed or aborted"):
        w.add_version("de:a", "2012-07-02", chunks("de:a", [("1", "x")]))


def test_readers_during_commits_see_whole_generations(tmp_path):
    """A reader thread opens the index afresh in a loop while commits switch and (grace 0) delete
    superseded generations: every snapshot it gets is one whole generation."""
    root = tmp_path / "de"
    idx = LanguageIndex(root, "de", grace_s=0)
    add(idx, "de:g1", seed=1)
    seen, errors, stop = [], [], threading.Event()

    def read():
        while not stop.is_set():
            try:
                snap = LanguageIndex(root, "de").snapshot()
                g = snap.generation
                # generation g holds acts de:g1..de:gG, 20 rows each, all visible
                assert snap.acts() == sorted(f"de:g{i}" for i in range(1, g + 1)), (g, snap.acts())
                assert int(snap.mask(Filters()).sum()) == 20 * g
                assert len(snap.bm25(["kauf", "miete", "der"], None, 1000)) <= 20 * g
                seen.append(g)
            except Exception as exc:  # noqa: BLE001 (reported below)
                errors.append(repr(exc))

    t = threading.Thread(target=read)
    t.start()
    try:
        for g in range(2, 8):
            add(idx, f"de:g{g}", seed=g, max_segments=3)
            time.sleep(0.05)
    finally:
        stop.set()
        t.join()
    assert not errors, errors[:3]
    assert len(set(seen)) >= 2 and seen == sorted(seen)


def test_superseded_generations_are_collected_after_the_grace_period(tmp_path):
    root = tmp_path / "de"
    idx = LanguageIndex(root, "de", grace_s=3600)
    for g in range(1, 4):
        add(idx, f"de:a{g}", seed=g)
    assert [p.name for p in sorted((root / "manifests").glob("g*.json"))] == [
        "g00000001.json", "g00000002.json", "g00000003.json"]  # within the grace period: kept
    idx0 = LanguageIndex(root, "de", grace_s=0)
    add(idx0, "de:a4", seed=4)
    assert [p.name for p in (root / "manifests").glob("g*.json")] == ["g00000004.json"]
    wanted = idx0.snapshot().manifest.files()
    on_disk = {str(p.relative_to(root)) for p in (root / "segments").rglob("*") if p.is_file()}
    assert on_disk == {f for f in wanted if f.startswith("segments/")}


def test_merges_keep_results_and_tombstones_go(tmp_path):
    acts = [f"de:m{i}" for i in range(9)]
    one = LanguageIndex(tmp_path / "one", "de")
    add(one, *acts)
    many = LanguageIndex(tmp_path / "many", "de", grace_s=0)
    rnd = random.Random(0)
    tables = {a: random_act(rnd, a, 20) for a in acts}
    for a in acts:  # one commit per act, at most 3 segments
        with many.writer(SplitAnalyzer(), max_segments=3) as w:
            w.add_version(a, "2012-07-02", tables[a])
    s1, s2 = one.snapshot(), many.snapshot()
    assert len(s1.segments) == 1 and len(s2.segments) == 3
    for q in (["kauf"], ["der", "miete", "miete"], ["schuld", "zins", "ist"]):
        assert by_chunk(s1, q) == by_chunk(s2, q)
    # acts dropped: their rows are tombstoned (out of N, avgdl and df), and compacted away where
    # more than half of a segment is dead
    with many.writer(SplitAnalyzer(), max_segments=3) as w:
        for a in acts[:8]:
            w.drop_act(a)
    s3 = many.snapshot()
    assert s3.n_live == 20 and s3.n_rows < 9 * 20 and s3.acts() == ["de:m8"]  # a half-dead segment stays
    alone = LanguageIndex(tmp_path / "alone", "de")
    with alone.writer(SplitAnalyzer()) as w:
        w.add_version("de:m8", "2012-07-02", tables["de:m8"])
    assert by_chunk(s3, ["kauf", "der"]) == by_chunk(alone.snapshot(), ["kauf", "der"])
    ids = lambda snap: [r["chunk_id"] for r in snap.rows(np.flatnonzero(snap.mask(Filters())))]  # noqa: E731
    assert ids(s3) == ids(alone.snapshot())
