"""The gesetze repository's history as a list of changesets: one per first-parent commit.

The bundestag/gesetze repository (and ``../shared/data/de/gesetze-history``) records every
publication as a merge on its first-parent line: ``Merge branch 'bgbl/2012/1-63'`` is the
Bundesgesetzblatt I 2012 Nr. 63 (older merges: ``bgbl-1-2012-32``), ``banz/2012/07-20`` a
Bundesanzeiger issue, ``fixes`` / ``upstream-fixes`` repairs of the Markdown converter (formatting,
not law), pull-request merges the 2022 refreshes; the first commit with acts is the initial import.
What a commit changed is ``git diff --name-only <first parent> <commit>``; the acts are the
``<letter>/<slug>/index.md`` files among them.

Versions: an act's version is the date of the commit that changed it (the author date, as the
source's history dates it); a second commit of the same day that changes the same act gives
``<date>.02`` (then ``.03`` …), so every commit is a version of its own, the ids sort in history
order as strings, and a read "as of" a day sees the day's last commit
(``pipelines.statutes.store.version_in_force``). The numbering depends only on the history, so it is
the same on every machine and every re-run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from connectors.changesets import ActChange, Changeset
from connectors.gesetze.git import GitRepo

ACT_FILE = re.compile(r"^(?P<letter>[^/]+)/(?P<slug>[^/]+)/index\.md$")
_BRANCH = re.compile(r"^Merge branch '(?P<branch>[^']+)'")
_BGBL = re.compile(r"^bgbl(?:/(?P<y1>\d{4})/(?P<p1>\d)-(?P<n1>\d+)|-(?P<p2>\d)-(?P<y2>\d{4})-(?P<n2>\d+))$")
_BANZ = re.compile(r"^banz/(?P<y>\d{4})/(?P<m>\d{2})-(?P<d>\d{2})$")
_ORIGIN = re.compile(r"\(bundestag/gesetze (?P<sha>[0-9a-f]{7,40})\)")
ROMAN = {"1": "I", "2": "II", "3": "III"}
CACHE_VERSION = 1


def slug_of(path: str) -> str | None:
    """``a/aeg/index.md`` → ``aeg`` (None for any other file)."""
    m = ACT_FILE.match(path)
    return m["slug"] if m else None


def act_id_of(slug: str) -> str:
    """The act id of a discovered German act: ``de:<slug>``, the slug as the folder spells it."""
    return f"de:{slug}"


def classify(subject: str, acts_touched: int, first_with_acts: bool) -> tuple[str, str]:
    """(kind, gazette) of a commit from its subject: ``Merge branch 'bgbl/2012/1-63'`` →
    ``("bgbl", "BGBl. I 2012 Nr. 63")``; ``banz/2012/07-20`` → ``("banz", "BAnz 2012-07-20")``;
    ``fixes`` / ``upstream-fixes`` → ``("fixes", "")``; the first commit with acts → import; other
    merges that change acts (the 2022 pull requests) → refresh; the rest → other."""
    if first_with_acts:
        return "import", ""
    m = _BRANCH.match(subject)
    branch = m["branch"] if m else ""
    b = _BGBL.match(branch)
    if b:
        part, year, no = (b["p1"], b["y1"], b["n1"]) if b["y1"] else (b["p2"], b["y2"], b["n2"])
        return "bgbl", f"BGBl. {ROMAN.get(part, part)} {year} Nr. {int(no)}"
    z = _BANZ.match(branch)
    if z:
        return "banz", f"BAnz {z['y']}-{z['m']}-{z['d']}"
    if branch in ("fixes", "upstream-fixes"):
        return "fixes", ""
    return ("refresh", "") if acts_touched else ("other", "")


@dataclass(frozen=True)
class CommitRecord:
    """What one first-parent commit changed (cached: commits are immutable)."""
    sha: str
    parent: str | None
    date: str  # author date, strict ISO with offset
    subject: str
    origin: str  # the original bundestag/gesetze commit id the message names ("" if none)
    changed: tuple[tuple[str, str], ...]  # (status A/M/D, act file path)


def _load_cache(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data["commits"] if data.get("version") == CACHE_VERSION else {}
    except (FileNotFoundError, ValueError, KeyError):
        return {}


def commit_records(repo: GitRepo, head: str, cache: Path | None = None) -> list[CommitRecord]:
    """Every first-parent commit up to ``head``, oldest first, with the act files it changed.
    ``cache`` (a JSON file) keeps what was read: the 169 commits of the bundle take ~20 s to diff
    the first time and ~0.1 s after."""
    shas = repo.first_parent(head)
    known = _load_cache(cache) if cache else {}
    missing = [s for s in shas if s not in known]
    if missing:
        info = repo.commit_info(missing)
        parents = {s: (shas[i - 1] if i else None) for i, s in enumerate(shas)}
        for sha in missing:
            changed = [(st, p) for st, p in repo.changed(parents[sha], sha) if ACT_FILE.match(p)]
            body = info[sha]["body"]
            o = _ORIGIN.search(body)
            known[sha] = {"parent": parents[sha], "date": info[sha]["date"], "subject": info[sha]["subject"],
                          "origin": o["sha"] if o else "", "changed": changed}
        if cache:
            from core.atomic import atomic_write_json

            atomic_write_json(cache, {"version": CACHE_VERSION, "commits": known})
    return [CommitRecord(s, known[s]["parent"], known[s]["date"], known[s]["subject"], known[s]["origin"],
                         tuple((c[0], c[1]) for c in known[s]["changed"])) for s in shas]


_CHANGE = {"A": "added", "M": "modified", "D": "deleted"}


def changesets(records: list[CommitRecord]) -> list[Changeset]:
    """One changeset per commit record, oldest first, with each touched act's version id (the
    commit's date, ``.02``… for further commits of the same day that change the same act)."""
    out: list[Changeset] = []
    last_date: dict[str, tuple[str, int]] = {}  # slug → (date of its newest version, same-day count)
    seen_acts = False
    for seq, rec in enumerate(records):
        date = rec.date[:10]
        kind, gazette = classify(rec.subject, len(rec.changed), first_with_acts=bool(rec.changed) and not seen_acts)
        seen_acts = seen_acts or bool(rec.changed)
        members = []
        for status, path in rec.changed:
            slug = slug_of(path)
            if slug is None:
                continue
            change = _CHANGE.get(status, "modified")
            version = ""
            if change != "deleted":
                prev = last_date.get(slug)
                n = prev[1] + 1 if prev and prev[0] == date else 1
                last_date[slug] = (date, n)
                version = date if n == 1 else f"{date}.{n:02d}"
            members.append(ActChange(act_id_of(slug), slug, change, version, path))
        out.append(Changeset(key=f"{seq:04d}-{rec.sha[:8]}", jurisdiction="de", source="gesetze", position=rec.sha,
                             date=date, kind=kind, gazette=gazette, title=rec.subject, seq=seq,
                             members=tuple(members)))
    return out
