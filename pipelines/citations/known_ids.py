"""The unit ids of the German statutes in the corpus: what citation links are checked against.

Why from the parser, not from a list: a link is only useful if the id exists in the corpus that
search and answers serve, so the ids come from the same parse (:mod:`pipelines.statutes.de.markdown`)
that builds the statute tables: every § / Art. id and every Absatz / Nummer / Buchstabe id.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pyarrow as pa


def ids_of_statutes(statutes) -> frozenset[str]:
    """All section and unit ids of parsed statutes (``GermanStatute`` objects)."""
    out: set[str] = set()
    for st in statutes:
        for s in st.sections:
            out.add(s.id)
            out.update(u.id for u in s.units)
    return frozenset(out)


def corpus_unit_ids(gesetze_dir: Path) -> frozenset[str]:
    """Ids of every unit of the bundestag/gesetze Markdown files in ``gesetze_dir`` (bgb.md, …) of
    the German acts in the registry (read now; the parse is cached per folder and set of acts)."""
    from pipelines.statutes.de.model import german_acts

    gesetze_dir = Path(gesetze_dir)
    if not gesetze_dir.is_dir():
        raise FileNotFoundError(f"statute directory not found: {gesetze_dir}")
    return _unit_ids(gesetze_dir, tuple(german_acts()))


@lru_cache(maxsize=4)
def _unit_ids(gesetze_dir: Path, slugs: tuple[str, ...]) -> frozenset[str]:
    from pipelines.statutes.de.markdown import parse_markdown_dir

    return ids_of_statutes(parse_markdown_dir(gesetze_dir, slugs).values())


def ids_from_tables(*tables: pa.Table) -> frozenset[str]:
    """Ids from published ARTICLES / NODES tables (column ``id``), e.g. a served corpus version."""
    out: set[str] = set()
    for t in tables:
        out.update(v for v in t.column("id").to_pylist() if v)
    return frozenset(out)
