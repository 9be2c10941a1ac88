"""German ARTICLES / NODES tables of the real bundestag/gesetze laws (de/gesetze/*.md)."""

from __future__ import annotations

import pytest

from pipelines.statutes.de.markdown import parse_markdown_dir
from pipelines.statutes.de.structure import LEVELS_NOT_IN_SCHEMA
from pipelines.statutes.de.tables import articles_table, nodes_table
from schemas.arrow import ARTICLES, LEVELS, NODES


@pytest.fixture(scope="module")
def laws(sample_dir):
    return parse_markdown_dir(sample_dir / "de" / "gesetze")


@pytest.fixture(scope="module")
def bgb(laws):
    return laws["de:bgb"]


def test_arrow_tables(laws, bgb):
    arts = articles_table(bgb)
    assert arts.schema == ARTICLES and arts.num_rows == len(bgb.sections)
    row = [r for r in arts.to_pylist() if r["id"] == "de:bgb:par:573b"][0]
    assert row["path_text"].startswith("Buch 2 Recht der Schuldverhältnisse › Abschnitt 8 Einzelne Schuldverhältnisse")
    assert row["path_text"].endswith("› Unterkapitel 2 Mietverhältnisse auf unbestimmte Zeit › "
                                     "§ 573b Teilkündigung des Vermieters")  # the § title, ARTICLES has no title field
    assert row["number_display"] == "§ 573b" and row["sort_key"] == 573002
    assert [p["id"] for p in row["paragraphs"]][:1] == ["de:bgb:par:573b:abs:1"]
    for st in laws.values():
        nodes = nodes_table(st)
        assert nodes.schema == NODES
        rows = nodes.to_pylist()
        ids = [r["id"] for r in rows]
        assert len(ids) == len(set(ids)), st.act.act_id
        known = set(ids)
        assert all(r["parent_id"] is None or r["parent_id"] in known for r in rows)
        assert {r["level"] for r in rows} <= set(LEVELS) | set(LEVELS_NOT_IN_SCHEMA)
        # every parent precedes its children (structure before its first §)
        pos = {r["id"]: r["ordinal"] for r in rows}
        assert all(r["parent_id"] is None or pos[r["parent_id"]] < r["ordinal"] for r in rows)
    art = [r for r in nodes_table(bgb).to_pylist() if r["id"] == "de:bgb:par:823"][0]
    assert art["level"] == "article" and art["heading"] == "Schadensersatzpflicht"


def test_nodes_order(laws):
    # NODES invariant (as for the PDF): each structure node is followed by the first § under it
    for act_id, st in laws.items():
        rows = nodes_table(st).to_pylist()
        paths = {s.id: {n.id for n in s.path} for s in st.sections}
        for i, r in enumerate(rows):
            if r["level"] in ("article", "paragraph", "point", "letter"):
                continue
            nxt = next((x["id"] for x in rows[i + 1:] if x["level"] == "article"), None)
            first_under = next((s.id for s in st.sections if r["id"] in paths[s.id]), None)
            assert nxt is None or first_under is None or nxt == first_under, (act_id, r["id"], nxt, first_under)
