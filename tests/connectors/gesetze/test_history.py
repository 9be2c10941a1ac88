"""connectors/gesetze/history.py: commit kinds, gazettes and version ids from the real history."""

from __future__ import annotations

import pytest

from connectors.gesetze.git import GitRepo
from connectors.gesetze.history import changesets, classify, commit_records


@pytest.mark.parametrize("subject,acts,first,expected", [
    ("Merge branch 'bgbl/2012/1-63'", 4, False, ("bgbl", "BGBl. I 2012 Nr. 63")),
    ("Merge branch 'bgbl/2012/2-36'", 3, False, ("bgbl", "BGBl. II 2012 Nr. 36")),
    ("Merge branch 'bgbl-1-2012-32'", 3, False, ("bgbl", "BGBl. I 2012 Nr. 32")),
    ("Merge branch 'bgbl-2-1959-48'", 1, False, ("bgbl", "BGBl. II 1959 Nr. 48")),
    ("Merge branch 'banz/2012/07-20'", 1, False, ("banz", "BAnz 2012-07-20")),
    ("Merge branch 'fixes'", 1132, False, ("fixes", "")),
    ("Merge branch 'upstream-fixes'", 40, False, ("fixes", "")),
    ("Merge pull request #58 from nagy/master", 4211, False, ("refresh", "")),
    ("Merge pull request #63 from rugk/patch-1", 0, False, ("other", "")),
    ("Initialer Import aller Gesetze (Stand 2.7.2012)", 6183, True, ("import", "")),
])
def test_classify(subject, acts, first, expected):
    assert classify(subject, acts, first) == expected


def test_the_whole_history(gesetze_full, tmp_path):
    """The bundle's 169 first-parent commits: one import of 6,183 acts, 131 BGBl issues, the fixes
    commits (one touching 1,132 acts), the 2022 refreshes; versions numbered per day."""
    repo = GitRepo(gesetze_full)
    records = commit_records(repo, "HEAD", cache=tmp_path / "history.json")
    cs = changesets(records)
    assert len(cs) == 169
    kinds = {k: sum(c.kind == k for c in cs) for k in ("import", "bgbl", "banz", "fixes", "refresh")}
    assert kinds == {"import": 1, "bgbl": 131, "banz": 11, "fixes": 17, "refresh": 2}
    imp = next(c for c in cs if c.kind == "import")
    assert len(imp.members) == 6183 and all(m.change == "added" for m in imp.members)
    assert max(len(c.members) for c in cs if c.kind == "fixes") == 6183
    assert sorted(len(c.members) for c in cs if c.kind == "refresh") == [1482, 4211]
    last = cs[-1]
    assert last.key == f"0168-{last.position[:8]}"
    # the two fixes commits of 2012-08-03 both change the BGB: the second is a version of its own
    bgb = [(c.key, m.version) for c in cs for m in c.members if m.act_id == "de:bgb"]
    assert bgb[:3] == [(cs[1].key, "2012-08-02"), (cs[2].key, "2012-08-03"), (cs[3].key, "2012-08-03.02")]
    versions = [v for _, v in bgb if v]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    # a cached history gives the same changesets
    assert changesets(commit_records(repo, "HEAD", cache=tmp_path / "history.json")) == cs
    gazette = {c.gazette for c in cs if c.kind == "bgbl"}
    assert "BGBl. I 2012 Nr. 63" in gazette and all(g.startswith("BGBl. I") for g in gazette)
