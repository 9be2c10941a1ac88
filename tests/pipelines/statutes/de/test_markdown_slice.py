"""Every file of the 51-act slice of the bundestag/gesetze history (tests/gesetze_fixtures.py: the
import, the converter fixes and BGBl merges of the first 20 commits) parses at every commit that
changed it, with ids of its folder, unique ids and strictly increasing order keys — the acts the
2012 parser refused among them (no front matter, a § number twice, no § headings)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from gesetze_fixtures import first_parent_commits, git
from pipelines.statutes.de.markdown import parse_markdown


def test_every_act_parses_at_every_commit_of_the_slice(gesetze_slice: Path, tmp_path: Path):
    parsed: dict[str, list] = {}
    files = 0
    for sha in first_parent_commits(gesetze_slice):
        day = dt.date.fromisoformat(git(gesetze_slice, "show", "-s", "--format=%cs", sha).strip())
        changed = git(gesetze_slice, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "--diff-filter=AM",
                      sha).split()
        for name in (n for n in changed if n.endswith("/index.md")):
            out = tmp_path / sha / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(git(gesetze_slice, "show", f"{sha}:{name}"), encoding="utf-8")
            st = parse_markdown(out, version=day)
            slug = name.split("/")[1]
            assert st.act.act_id == f"de:{slug}" and st.version == day
            ids = [s.id for s in st.sections]
            assert len(ids) == len(set(ids)), (sha, name)
            assert all(i.startswith(f"de:{slug}:") for i in ids)
            keys = [s.order_key for s in st.sections]
            assert all(b > a for a, b in zip(keys, keys[1:])), (sha, name)
            assert all(s.text or s.status != "in_force" for s in st.sections), (sha, name)
            parsed.setdefault(slug, []).append(st)
            files += 1
    assert len(parsed) == 51 and files > 51 + 44  # every act, and the versions the fixes and merges made
    first = {slug: sts[0] for slug, sts in parsed.items()}
    assert [s.id for s in first["agrarausbv"].sections][:2] == ["de:agrarausbv:eingangsformel", "de:agrarausbv:par:1"]
    assert "de:begaendg_3:art:IIIa" in {s.id for s in first["begaendg_3"].sections}
    assert first["tier-lmhv"].act.act_id == "de:tier-lmhv"
    # a converter fix changes formatting, not units: the same ids before and after
    for slug, sts in parsed.items():
        if len(sts) > 1 and slug in ("bgb", "gg", "stgb"):
            assert {s.id for s in sts[0].sections} <= {s.id for s in sts[-1].sections} | {
                s.id for s in sts[0].sections if s.status != "in_force"}, slug
