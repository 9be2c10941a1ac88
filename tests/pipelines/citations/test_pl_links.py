"""Citation links of real SAOS judgments against a small published corpus: exact / nearest /
out of corpus / unknown act, and the cited-by table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from core.layout import Layout
from pipelines.citations.pl_links import (CITATION_LINKS, CITED_BY, citation_links, citation_prior, cited_by,
                                          resolution_counts)
from saos_fixtures import saos_judgments


def _publish(home: Path, act: str, version: str, nodes: list[tuple[str, str, str]]) -> None:
    d = Layout(home).version_dir(act, version)
    d.mkdir(parents=True)
    pq.write_table(pa.table({"id": [n[0] for n in nodes], "status": [n[1] for n in nodes],
                             "text": [n[2] for n in nodes]}), d / "nodes.parquet")
    (d / "manifest.json").write_text(json.dumps({"version": version}))


@pytest.fixture(scope="module")
def links(tmp_path_factory, sample_dir: Path) -> pa.Table:
    home = tmp_path_factory.mktemp("links_home")
    # k.p.c. held in a version older than the judgments and a newer one (art. 98 § 1 amended)
    _publish(home, "pl:kpc", "2010-01-01", [("pl:kpc:art:98", "in_force", "§ 1. Strona przegrywająca …"),
                                            ("pl:kpc:art:98:par:1", "in_force", "Strona przegrywająca …"),
                                            ("pl:kpc:art:98:par:3", "in_force", "Do niezbędnych kosztów …")])
    _publish(home, "pl:kpc", "2024-02-16", [("pl:kpc:art:98", "in_force", "§ 1. Strona przegrywająca obowiązana …"),
                                            ("pl:kpc:art:98:par:1", "in_force", "Strona przegrywająca obowiązana …"),
                                            ("pl:kpc:art:98:par:3", "in_force", "Do niezbędnych kosztów …")])
    # k.c. held only in a version newer than every 2011 judgment
    _publish(home, "pl:kc", "2024-12-19", [("pl:kc:art:415", "in_force", "Kto z winy swej …")])
    judgments = saos_judgments(sample_dir)
    wanted = pa.array([94827, 10937, 95242, 283463], pa.int64())  # three cite art. 98 k.p.c.; one k.k.
    return citation_links(judgments.filter(pc.is_in(judgments["judgment_id"], wanted)), Layout(home))


def test_links_resolve_to_the_version_in_force_on_the_judgment_date(links: pa.Table) -> None:
    assert links.schema.equals(CITATION_LINKS)
    rows = [r for r in links.to_pylist() if r["unit_id"] == "pl:kpc:art:98:par:1"]
    assert {r["judgment_id"] for r in rows} >= {94827, 10937, 95242}
    for r in rows:
        assert (r["resolution"], r["resolved_to_version"], r["exact_version"]) == ("exact", "2010-01-01", True)
        assert r["status"] == "in_force" and r["changed_since"] is True and r["serving_version"] == "2024-02-16"
    # "art. 98 § 1 i § 3 k.p.c." links both paragraphs, the span covering the printed citation
    both = {r["unit_id"] for r in links.to_pylist() if r["judgment_id"] == 94827 and r["article_id"] == "pl:kpc:art:98"}
    assert both == {"pl:kpc:art:98:par:1", "pl:kpc:art:98:par:3"}


def test_other_resolutions(links: pa.Table) -> None:
    counts = resolution_counts(links)
    assert set(counts) == {"exact", "nearest", "out_of_corpus", "unknown_act"}
    kk = [r for r in links.to_pylist() if r["judgment_id"] == 283463 and r["act_id"] == "pl:kk"]
    assert kk and all(r["resolution"] == "out_of_corpus" and r["status"] == "act_not_held" for r in kk)
    kc = [r for r in links.to_pylist() if r["act_id"] == "pl:kc"]
    for r in kc:
        assert r["resolution"] == "nearest" and r["resolved_to_version"] == "2024-12-19" and not r["exact_version"]
    assert all(r["unit_id"] is None for r in links.to_pylist() if r["resolution"] == "unknown_act")


def test_cited_by_counts_judgments_once_and_citations_every_time(links: pa.Table) -> None:
    table = cited_by(links)
    assert table.schema.equals(CITED_BY)
    row = next(r for r in table.to_pylist() if r["unit_id"] == "pl:kpc:art:98")
    assert row["cases"] == len(row["judgment_ids"]) >= 3 and row["citations"] >= row["cases"]
    assert row["verified"] is True and row["in_corpus"] is True
    assert "I ACa 351/11" in row["case_numbers"]
    prior = citation_prior(table)
    assert prior["pl:kpc:art:98"] > 0


def test_empty_table_gives_empty_links(tmp_path: Path) -> None:
    from schemas.cases import SAOS_JUDGMENTS

    links = citation_links(SAOS_JUDGMENTS.empty_table(), Layout(tmp_path))
    assert links.num_rows == 0 and cited_by(links).num_rows == 0
