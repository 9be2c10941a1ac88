"""connectors/gesetze/source.py: the source over a clone of the slice, its replay cursor and the home's catalogue."""

from __future__ import annotations

import pytest

from connectors.gesetze.source import GesetzeSource, ReplayError
from core.layout import Layout
from schemas.acts import registry
from schemas.catalogue import load_catalogue


def _open(home, url, **kw) -> GesetzeSource:
    src = GesetzeSource(repo=None, state=Layout(home).source_state("gesetze"), url=str(url), **kw)  # type: ignore[arg-type]
    from connectors.gesetze.git import GitRepo

    src.repo = GitRepo(src.state / "repo")
    src.sync()
    return src


def test_replay_moves_one_commit_at_a_time(tmp_path, gesetze_slice):
    src = _open(tmp_path, gesetze_slice, replay=True)
    history = src.history()
    assert [c.kind for c in history[:4]] == ["other", "import", "fixes", "fixes"]
    offered = src.changesets()
    assert offered[-1].kind == "import"  # the replay starts with the initial import
    step = src.advance()
    assert [c.key for c in step] == [history[2].key]
    assert src.changesets()[-1].key == history[2].key
    # a fresh source over the same home resumes at the cursor
    again = _open(tmp_path, gesetze_slice, replay=True)
    assert again.changesets()[-1].key == history[2].key
    for _ in range(len(history)):
        again.advance()
    assert again.changesets() == history and again.advance() == []


def test_not_replaying_offers_the_head(tmp_path, gesetze_slice):
    src = _open(tmp_path, gesetze_slice)
    assert src.changesets() == src.history()
    with pytest.raises(ReplayError, match="LEXPIPE_GESETZE_REPLAY"):
        src.advance()
    frozen = _open(tmp_path / "b", gesetze_slice, until=1)
    assert [c.kind for c in frozen.changesets()] == ["other", "import"]


def test_catalogue_moves_with_the_changesets(tmp_path, gesetze_slice, monkeypatch):
    monkeypatch.setenv("LEXPIPE_HOME", str(tmp_path))
    src = _open(tmp_path, gesetze_slice)
    layout = Layout(tmp_path)
    history = src.history()
    cat = src.update_catalogue(layout, history[1])
    assert len(cat.acts) == len(history[1].members) == 48  # three of the 51 are added by later BGBl issues
    reg = registry()
    assert reg.get("de:bgb").curated and reg.get("de:bgb").path == "b/bgb/index.md"
    assert not reg.get("de:tier-lmhv").curated and reg.get("de:tier-lmhv").key == "de_tier_lmhv"
    bgbl = next(c for c in history if c.kind == "bgbl")
    cat = src.update_catalogue(layout, bgbl)
    touched = {m.act_id for m in bgbl.members}
    assert {a.id for a in cat.acts if a.last_changed == bgbl.key} == touched
    assert load_catalogue(layout.catalogue("gesetze")).position == bgbl.position
