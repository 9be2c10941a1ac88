"""The court decisions that cite a statute unit, from the case-law citation tables.

Two tables, built by the case-law assets (paths: :meth:`core.layout.Layout.case_citations`):

* Polish (SAOS): ``cited_by.parquet`` (per article: citations, judgments, first/last date) and,
  beside it, ``links.parquet`` (one row per citation: judgment id, date, case number, court type).
  The judgments are listed from the links: ``cited_by`` keeps case numbers without the nulls, so
  its ``case_numbers`` do not line up with its ``judgment_ids``.
* German (Open Legal Data): ``citation_counts.parquet``, counts per § (no list of decisions).

Both are read once per file version (:class:`~pipelines.reads.cache.FileCache`): on the full corpus
the counts take ~1 ms and the 8,102 Polish links ~40 ms on first read (plus ~1 s for pyarrow's
Parquet reader the first time in a process), a cached read a dictionary look-up. A home without a
table answers ``held=False`` ("no case law held"), not an error: case law is optional.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.reads.corpus import CorpusReader, act_id_of_unit

MAX_LISTED = 100  # judgments listed per unit (most recent first); the counts cover all


@dataclass(frozen=True)
class CitingJudgment:
    judgment_id: str
    case_number: str | None
    court: str | None  # SAOS court type: SUPREME, COMMON, CONSTITUTIONAL_TRIBUNAL, …
    date: str | None  # YYYY-MM-DD


@dataclass(frozen=True)
class CitedBy:
    unit_id: str  # the article / § the counts are kept for
    held: bool  # the jurisdiction's citation table exists in this home
    citations: int = 0
    cases: int = 0
    first_date: str | None = None
    last_date: str | None = None
    judgments: list[CitingJudgment] = field(default_factory=list)  # most recent first, ≤ MAX_LISTED


_COUNT_COLUMNS = ("unit_id", "citations", "cases", "first_date", "last_date")


def _rows_by_unit(path: Path) -> dict[str, dict]:
    """unit id → its counts row (the judgment id lists stay on disk unless needed)."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    table = pq.read_table(path, columns=[c for c in _COUNT_COLUMNS if c in names])
    return {r["unit_id"]: r for r in table.to_pylist()}


def _judgment_ids(path: Path) -> dict[str, list]:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["unit_id", "judgment_ids"])
    return dict(zip(table.column("unit_id").to_pylist(), table.column("judgment_ids").to_pylist()))


def _links_by_article(path: Path) -> dict[str, list[CitingJudgment]]:
    import pyarrow.parquet as pq

    cols = ["judgment_id", "judgment_date", "case_number", "court_type", "article_id"]
    out: dict[str, dict[str, CitingJudgment]] = defaultdict(dict)
    for r in pq.read_table(path, columns=cols).to_pylist():
        if not r["article_id"]:
            continue
        jid = str(r["judgment_id"])
        date = r["judgment_date"].isoformat() if r["judgment_date"] else None
        out[r["article_id"]].setdefault(jid, CitingJudgment(jid, r["case_number"], r["court_type"], date))
    return {a: sorted(js.values(), key=lambda j: (j.date or "", j.judgment_id), reverse=True)
            for a, js in out.items()}


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def cited_by(reader: CorpusReader, unit_id: str) -> CitedBy:
    """Who cites ``unit_id`` (an article or § id; a paragraph or point is counted with its article by
    the tables, so pass the article's id)."""
    jurisdiction = act_id_of_unit(unit_id).split(":", 1)[0]
    try:
        path = reader.layout.case_citations(jurisdiction)
    except ValueError:
        return CitedBy(unit_id, held=False)
    if not path.is_file():
        return CitedBy(unit_id, held=False)
    row = reader.cache.get(path, "cited_by_rows", _rows_by_unit).get(unit_id)
    if row is None:
        return CitedBy(unit_id, held=True)
    judgments: list[CitingJudgment] = []
    links = path.parent / "links.parquet"
    if jurisdiction == "pl" and links.is_file():
        judgments = reader.cache.get(links, "citing_judgments", _links_by_article).get(unit_id, [])[:MAX_LISTED]
    elif jurisdiction == "pl":  # no links table: the ids alone
        ids = reader.cache.get(path, "citing_ids", _judgment_ids).get(unit_id) or []
        judgments = [CitingJudgment(str(j), None, None, None) for j in ids[:MAX_LISTED]]
    return CitedBy(unit_id, True, int(row["citations"]), int(row["cases"]), _iso(row.get("first_date")),
                   _iso(row.get("last_date")), judgments)
