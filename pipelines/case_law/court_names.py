"""Which court decided a case, by name: from the record, else from the synced court list.

Why: a hit on a decision is cited by court ("BGH, VIII ZR 127/17"), so the chunk heading and
metadata need the court's name, but many records embed only the court's id (the offline
samples' BGH fixtures send ``"court": 5624``). The name is taken, in this order, from

1. ``record``: the court object embedded in the case record (``CASES.court_name``);
2. ``court_id``: the synced court list (``CaseStore.courts()``, ``/api/courts/``) by the id;
3. ``slug``: the court list by the court slug the case slug starts with. Open Legal Data builds
   a case's slug as ``court.slug + "-" + date + "-" + slugify(file_number[:20])``
   (``oldp/apps/cases/models.py`` ``Case.set_slug``), so with the case's own decision date the
   court part of ``bgh-2018-04-09-vi-zr-19417`` is exactly ``bgh``. Used only when the id is not
   in the list (a record pointing at a court the list does not have, as the samples' 5624), and
   only when exactly one court has that slug;

else the case has no court name (``none``) and its heading simply leaves the court out. The
``court_id`` column is never changed: it stays what the provider sent.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import pyarrow as pa

SOURCES = ("record", "court_id", "slug", "none")


class CourtIndex:
    """The synced court list, looked up by id and by slug (slugs held by two courts are dropped)."""

    def __init__(self, courts: pa.Table) -> None:
        rows = courts.select(["court_id", "name", "slug"]).to_pylist() if courts.num_rows else []
        self.by_id: dict[int, str] = {r["court_id"]: r["name"] for r in rows if r["name"]}
        slugs = Counter(r["slug"] for r in rows if r["slug"])
        self.by_slug: dict[str, str] = {r["slug"]: r["name"] for r in rows
                                        if r["slug"] and r["name"] and slugs[r["slug"]] == 1}

    @staticmethod
    def slug_court(case_slug: str | None, decided: Any) -> str | None:
        """The court slug a case slug starts with (``<court>-<YYYY-MM-DD>-<file number>``)."""
        if not case_slug or not isinstance(decided, dt.date):
            return None
        cut = case_slug.find(f"-{decided.isoformat()}-")
        return case_slug[:cut] if cut > 0 else None

    def name(self, row: dict[str, Any]) -> tuple[str | None, str]:
        """(court name, where it came from: one of :data:`SOURCES`) for one CASES row."""
        if row.get("court_name"):
            return row["court_name"], "record"
        if row.get("court_id") in self.by_id:
            return self.by_id[row["court_id"]], "court_id"
        slug = self.slug_court(row.get("slug"), row.get("date"))
        if slug is not None and slug in self.by_slug:
            return self.by_slug[slug], "slug"
        return None, "none"


def with_court_names(cases: pa.Table, courts: pa.Table) -> tuple[pa.Table, dict[str, int]]:
    """``cases`` with ``court_name`` filled as described in the module docstring, and how many
    cases got their name from each source (every key of :data:`SOURCES`, zeros included)."""
    index = CourtIndex(courts)
    rows = cases.select([c for c in ("court_name", "court_id", "slug", "date") if c in cases.column_names])
    names, counts = [], Counter({s: 0 for s in SOURCES})
    for row in rows.to_pylist():
        name, source = index.name(row)
        names.append(name)
        counts[source] += 1
    column = pa.array(names, pa.string())
    if "court_name" in cases.column_names:
        cases = cases.set_column(cases.schema.get_field_index("court_name"),
                                 cases.schema.field("court_name"), column)
    else:
        cases = cases.append_column("court_name", column)
    return cases, dict(counts)
