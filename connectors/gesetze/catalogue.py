"""Discover the acts of a gesetze-style repository at a commit: every ``<letter>/<slug>/index.md``
with the title and abbreviation its front matter (or, failing that, its ``#`` heading) gives.

Why a reader of its own, this lenient: the front matter changed across the repository's history —
the 2012 import writes ``Title: !!python/unicode 'Allgemeines Eisenbahngesetz'`` (not safe YAML),
some files open with a footnote line before the ``---``, some have an empty Title and name the act
only in their heading ``#  (AgrarAusbV)``; the 2022 files add ``jurabk``. Discovery must list every
act whatever its front matter, so it reads three fields with a regex and never refuses a file: the
parser (:mod:`pipelines.statutes.de.markdown`) decides later whether the text is usable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from connectors.gesetze.git import GitRepo
from connectors.gesetze.history import act_id_of, slug_of
from schemas.catalogue import CatalogueEntry

_FIELD = re.compile(r"^(?P<key>Title|jurabk|slug)\s*:\s*(?P<value>.*?)\s*$", re.M)
_HEADING = re.compile(r"^#\s+(?P<text>.+?)\s*$", re.M)
_ABBR = re.compile(r"\((?P<abbr>[^()]{1,40})\)\s*$")
HEAD_BYTES = 4096  # the front matter and the title heading are in the first lines


@dataclass(frozen=True)
class FrontMatter:
    title: str
    jurabk: str
    slug: str


def _value(raw: str) -> str:
    v = raw.strip()
    if v.startswith("!!python/unicode"):
        v = v[len("!!python/unicode"):].strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1].replace("''", "'") if v[0] == "'" else v[1:-1].replace('\\"', '"')
    return v.strip()


_FOOTREF = re.compile(r"\[\^[^\]]+\]")


def _fields(lines: list[str]) -> dict[str, str]:
    """``key: value`` pairs of a front matter; a value continued on indented lines (YAML folds
    them: ``Title: !!python/unicode 'Gesetz zur Begrenzung … gesetzlichen`` / ``  Krankenversicherung'``)."""
    out: dict[str, str] = {}
    key = None
    for ln in lines:
        m = _FIELD.match(ln)
        if m:
            key = m["key"]
            out.setdefault(key, m["value"])
        elif key and ln.startswith((" ", "\t")) and ln.strip():
            out[key] = f"{out[key]} {ln.strip()}"
        else:
            key = None
    return {k: _value(v) for k, v in out.items()}


def read_front_matter(text: str) -> FrontMatter:
    """Title, jurabk and slug of one act file (any era of the format); empty strings when absent.
    The title and abbreviation fall back to the first ``#`` heading, ``Title (ABBR)``; an empty
    title to the lines the 2012 converter printed above the front matter (the official title,
    with a footnote reference)."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines[:40]) if ln.strip() == "---"), None)
    fields: dict[str, str] = {}
    body_from = 0
    if start is not None:
        end = next((i for i in range(start + 1, min(len(lines), start + 40)) if lines[i].strip() == "---"), None)
        if end is not None:
            fields = _fields(lines[start + 1:end])
            body_from = end + 1
    title, jurabk = fields.get("Title", ""), fields.get("jurabk", "")
    if not title and start:
        above = " ".join(_FOOTREF.sub("", ln).strip() for ln in lines[:start])
        title = re.sub(r"\s+", " ", above).strip()
    h = _HEADING.search("\n".join(lines[body_from:body_from + 40]))
    if h:
        heading = h["text"].strip()
        a = _ABBR.search(heading)
        if not jurabk and a:
            jurabk = a["abbr"].strip()
        if not title:
            title = heading[:a.start()].strip() if a else heading
    return FrontMatter(title, jurabk, fields.get("slug", ""))


def entries(repo: GitRepo, commit: str, paths: Iterable[str], *, changeset: str = "",
            first_seen: dict[str, str] | None = None) -> list[CatalogueEntry]:
    """Catalogue entries of the act files ``paths`` at ``commit`` (read in one ``cat-file`` batch)."""
    out = []
    specs = [f"{commit}:{p}" for p in paths]
    for spec, data in repo.blobs(specs):
        path = spec.split(":", 1)[1]
        slug = slug_of(path)
        if slug is None or data is None:
            continue
        fm = read_front_matter(data[:HEAD_BYTES].decode("utf-8", errors="replace"))
        act_id = act_id_of(slug)
        out.append(CatalogueEntry(id=act_id, address=slug, title=fm.title, citation=fm.jurabk, path=path,
                                  first_seen=(first_seen or {}).get(act_id, changeset), last_changed=changeset))
    return out


def discover(repo: GitRepo, commit: str, *, changeset: str = "") -> list[CatalogueEntry]:
    """Every act of the repository at ``commit`` (6,183 at the 2012 import, 6,636 in 2022)."""
    paths = [p for p in repo.ls_files(commit) if slug_of(p) is not None]
    return entries(repo, commit, paths, changeset=changeset)
