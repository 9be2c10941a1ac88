"""`lexpipe load de` killed in the middle of the initial load, with real processes: what was
published stays published and whole, nothing half-written is served, and a new process resumes
without building the published acts again (issue 24, point 5).

The load runs over a slice of the real gesetze history (tests/gesetze_fixtures.py: 44 acts at the
initial import) in batches of 6 acts, so the kill lands after some batches and before others.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gesetze_fixtures import build_slice_or_skip

REPO = Path(__file__).resolve().parents[2]
LEXPIPE = Path(sys.executable).with_name("lexpipe")


@pytest.fixture(scope="module")
def gesetze_slice(tmp_path_factory, sample_dir: Path) -> Path:
    return build_slice_or_skip(sample_dir, tmp_path_factory, commits=4)


def _env(tmp_path: Path, repo: Path) -> dict:
    return {**os.environ, "LEXPIPE_HOME": str(tmp_path / "home"), "DAGSTER_HOME": str(tmp_path / "dagster"),
            "LEXPIPE_GESETZE_URL": str(repo), "LEXPIPE_CHANGESET_BATCH_SIZE": "6", "LEXPIPE_ENCODER": "hashing",
            "LEXPIPE_GESETZE_REPLAY": "false"}


def _record(home: Path) -> dict | None:
    found = sorted((home / "corpus" / "de" / ".changesets").glob("*.json"))
    return json.loads(found[0].read_text()) if found else None


def _published_dirs(home: Path) -> dict[str, dict]:
    """act/version → its manifest, for every version folder (dot-folders: staging, trash)."""
    out = {}
    for act in (home / "corpus" / "de").iterdir():
        if act.name.startswith(".") or not act.is_dir():
            continue
        for v in act.iterdir():
            if v.is_dir() and not v.name.startswith("."):
                manifest = v / "manifest.json"
                assert manifest.exists(), f"{v}: a version folder without its manifest is served half-written"
                for name in ("articles.parquet", "nodes.parquet", "chunks.parquet", "acts.parquet"):
                    assert (v / name).exists(), f"{v}: {name} missing from a published version"
                out[f"{act.name}/{v.name}"] = json.loads(manifest.read_text())
    return out


def test_a_killed_initial_load_resumes_without_redoing_published_acts(tmp_path: Path, gesetze_slice: Path):
    env = _env(tmp_path, gesetze_slice)
    home = tmp_path / "home"
    cmd = [str(LEXPIPE), "load", "de", "--no-index"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            rec = _record(home)
            if rec is not None and rec["batches"] >= 2:
                break
            assert proc.poll() is None, "the load ended before it could be killed"
            time.sleep(0.2)
        else:
            pytest.fail("no two batches were recorded within 15 minutes")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the load and its worker processes, mid-changeset
        proc.wait()
    killed = _record(home)
    assert killed["state"] == "in_progress"
    members = {m["act_id"] for m in killed["changeset"]["members"]}
    settled = {o["act_id"]: o for o in killed["outcomes"]}
    assert 12 <= len(settled) < len(members), "the kill must land between batches of the import"
    before = _published_dirs(home)  # every served folder whole, whatever the kill interrupted
    published_before = {f"{a.split(':', 1)[1]}/{o['version']}": o for a, o in settled.items()
                        if o["outcome"] == "published"}
    assert set(published_before) <= set(before)

    resumed = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    final = _record(home)
    assert final["state"] == "applied"
    assert {o["act_id"] for o in final["outcomes"]} == members
    after = _published_dirs(home)
    for key in published_before:  # published before the kill: not built or published again
        assert after[key]["published_at"] == before[key]["published_at"], key
        assert after[key]["source_sha256"] == before[key]["source_sha256"]
    outcomes = {o["act_id"]: o for o in final["outcomes"]}
    for act, o in settled.items():
        assert outcomes[act] == o, f"{act}: its outcome changed on resume"
    assert sum(o["outcome"] == "published" for o in final["outcomes"]) >= 40
