"""``pipelines.statutes.batch_checks`` on real German acts of the 2012 import: a batch passes or fails
exactly where the acts checked one by one do, whatever acts share the batch."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from pipelines.statutes.batch_checks import check_batch
from pipelines.statutes.de.build import build_german_chunks
from pipelines.statutes.de.markdown import parse_markdown
from pipelines.statutes.de.tables import articles_table, nodes_table

IMPORT = "60ede3b9"  # "Initialer Import aller Gesetze (Stand 2.7.2012)"
# AFG prints its order back once (a new segment of 10^14 in its sort keys); AFIG follows it in a
# batch; the 2012 load quarantined AFIG-like acts for the key of their first row before the fix
ACTS = ("a/afg", "a/afig", "b/bgb")


@pytest.fixture(scope="module")
def tables(act_file):
    out = {}
    for act in ACTS:
        st = parse_markdown(act_file(act, IMPORT), version=dt.date(2012, 8, 2))
        articles = articles_table(st)
        out[st.act.act_id] = (articles, nodes_table(st), build_german_chunks(articles, max_tokens=256))
    return out


def _check(tables: dict) -> dict[str, list[str]]:
    report = check_batch({a: t[0] for a, t in tables.items()}, {a: t[1] for a, t in tables.items()},
                         {a: t[2] for a, t in tables.items()}, max_tokens=256)
    return report.failures


def test_an_act_after_one_with_a_new_order_segment_passes(tables):
    assert max(tables["de:afg"][0]["sort_key"].to_pylist()) >= 10 ** 14  # the segment is there
    alone = {a: _check({a: t}) for a, t in tables.items()}
    assert alone == {a: {} for a in tables}  # each act passes on its own …
    assert _check(tables) == {}  # … and so in one batch, in any company


def test_a_key_out_of_order_fails_its_own_act_only(tables):
    articles, nodes, chunks = tables["de:afig"]
    keys = articles["sort_key"].to_pylist()
    keys[1], keys[2] = keys[2], keys[1]  # two rows' keys swapped: a misread number
    broken = articles.set_column(articles.schema.get_field_index("sort_key"), "sort_key", pa.array(keys, pa.int64()))
    failures = _check({**tables, "de:afig": (broken, nodes, chunks)})
    assert set(failures) == {"de:afig"}
    assert any("expect_column_values_to_be_increasing(sort_key)" in f for f in failures["de:afig"])
