"""The read layer over a German statute: the Grundgesetz in its three sample versions (2012-08-03,
2012-08-06, 2020-09-29), built by the German pipeline (``pipelines.statutes.de.build``) — German id
forms (``:abs:``, ``:nr:``), a real diff across a version in between, the German diff function."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.reads import ReadService

V1, V2, V3 = "2012-08-03", "2012-08-06", "2020-09-29"


@pytest.fixture(scope="module")
def gg(tmp_path_factory, sample_dir: Path) -> ReadService:
    from core.layout import Layout
    from pipelines.statutes.de.build import build_all

    home = tmp_path_factory.mktemp("gg_home")
    build_all(Layout(home), sample_dir, acts=("de:gg",))
    return ReadService.at(home)


def test_versions_and_served(gg: ReadService):
    assert [v.version for v in gg.versions("de:gg")] == [V1, V2, V3]
    assert gg.act("de:gg").served_version == V3
    assert [v.diff_from for v in gg.versions("de:gg")] == [[], [V1], [V2]]


def test_an_absatz_and_a_nummer_at_dates(gg: ReadService):
    abs1 = gg.unit("de:gg:art:1:abs:1", "2013-01-01")
    assert (abs1.level, abs1.version, abs1.next_version, abs1.article_id) == ("paragraph", V2, V3, "de:gg:art:1")
    assert abs1.text == ("(1) Die Würde des Menschen ist unantastbar. Sie zu achten und zu schützen ist Verpflichtung "
                         "aller staatlichen Gewalt.")
    assert [p.id for p in abs1.path] == ["de:gg:division:I", "de:gg:art:1"]
    assert gg.unit("de:gg:art:72:abs:3:nr:6", V2).text.endswith("Hochschulabschlüsse.")
    assert gg.unit("de:gg:art:72:abs:3:nr:6", "2021-01-01").text == "6. die Hochschulzulassung und die Hochschulabschlüsse;"
    nr7 = gg.unit("de:gg:art:72:abs:3:nr:7", "2021-01-01")
    assert (nr7.level, nr7.text) == ("point", "7. die Grundsteuer.")


def test_art_21_gained_two_absaetze(gg: ReadService):
    assert gg.unit("de:gg:art:21", V2).children == [f"de:gg:art:21:abs:{n}" for n in (1, 2, 3)]
    assert gg.unit("de:gg:art:21", V3).children == [f"de:gg:art:21:abs:{n}" for n in (1, 2, 3, 4, 5)]
    [art] = gg.history("de:gg:art:21").changes
    assert (art.from_version, art.to_version, art.change, art.source) == (V2, V3, "changed", "stored")
    [abs3] = gg.history("de:gg:art:21:abs:3").changes
    assert (abs3.change, abs3.source) == ("changed", "computed")
    assert abs3.word_diff.startswith("(3) [-Das Nähere regeln Bundesgesetze.-] {+Parteien, die nach ihren Zielen")
    [added] = gg.history("de:gg:art:72:abs:3:nr:7").changes
    assert (added.change, added.word_diff) == ("added", "{+7. die Grundsteuer.+}")


def test_a_diff_across_a_version_in_between_is_computed_the_german_way(gg: ReadService):
    from pipelines.statutes.de.build import diff_german

    home = gg.home / "corpus" / "de" / "gg"
    near = gg.diff("de:gg", V2, V3)
    assert (near.consecutive, near.source) == (True, "stored")
    stored = pq.read_table(home / V3 / f"diff_from_{V2}.parquet").to_pylist()
    assert [(e.unit_id, e.change) for e in near.changes + near.editorial] == sorted(
        [(r["article_id"], r["change"]) for r in stored], key=lambda t: t[1] == "editorial")
    far = gg.diff("de:gg", V1, V3)
    assert (far.consecutive, far.source) == (False, "computed")
    expected = diff_german(pq.read_table(home / V1 / "articles.parquet"), pq.read_table(home / V3 / "articles.parquet"))
    assert [(e.unit_id, e.change, e.word_diff) for e in far.changes + far.editorial] == sorted(
        [(r["article_id"], r["change"], r["unified_diff"]) for r in expected.to_pylist()],
        key=lambda t: t[1] == "editorial")
    # V1 → V2 changed art. 93 only; V1 → V3 is V2 → V3 plus that change
    assert {e.unit_id for e in far.changes} == {e.unit_id for e in near.changes} | {"de:gg:art:93"}
    assert far.counts["added"] == near.counts["added"] == 5


def test_toc_of_the_grundgesetz(gg: ReadService):
    toc = gg.toc("de:gg", "2021-01-01")
    assert toc.version == V3
    assert [(e.level, e.number, e.heading) for e in toc.entries[:4]] == [
        ("article", "Eingangsformel", None), ("article", "Präambel", None), ("division", "I", "Die Grundrechte"),
        ("division", "II", "Der Bund und die Länder")]
