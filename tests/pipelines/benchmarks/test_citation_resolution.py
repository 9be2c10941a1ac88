"""The resolver-quality benchmark on small real slices: a refex decision citing the Grundgesetz
against the GG built from the sample sources (three versions), and SAOS judgments of the dev page
citing the Civil Code against ``corpus_home`` (k.c. 2024-12-19 and 2025-11-13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.benchmarks.citation_resolution import (GoldUnit, evaluate_refex, evaluate_saos, held_acts,
                                                      nearest_held_dates, number_confusion, refex_gold,
                                                      superscript_reading)
from pipelines.citations.evaluation import RefexDoc, load_refex

BVERFG = "bverfg_1987-07-01_5603d87f1423"  # dev: Art. 3, 14, 20, 80 GG, with and without Absatz


@pytest.fixture(scope="module")
def gg_resolver(tmp_path_factory, sample_dir: Path):
    from core.layout import Layout
    from pipelines.resolver import CitationResolver
    from pipelines.statutes.de.build import build_all

    home = tmp_path_factory.mktemp("gg_resolver_home")
    build_all(Layout(home), sample_dir, acts=("de:gg",))
    return CitationResolver.at(home)


@pytest.fixture(scope="module")
def kc_resolver(corpus_home):
    from pipelines.resolver import CitationResolver

    return CitationResolver.at(corpus_home)


def test_number_confusion_and_superscript_reading():
    assert number_confusion("823", "1823") and number_confusion("1823", "823") and number_confusion("80", "8")
    assert not number_confusion("823", "823") and not number_confusion("74", "74a")
    assert not number_confusion("2", "385^2")  # base 385: another article, not a misread 2
    assert superscript_reading("101^6", "1016") and superscript_reading("114^81", "1148^1")
    assert not superscript_reading("101^6", "101^6") and not superscript_reading("75", "75d")
    assert not number_confusion("101^6", "1016")  # the same digits: a superscript reading, not a confusion


def test_refex_decision_citing_the_grundgesetz(gg_resolver, sample_dir):
    reads = gg_resolver.reads
    assert held_acts(reads) == {"de:gg"}
    directory = sample_dir / "de" / "refex"
    doc = next(d for d in load_refex(directory) if d.doc_id == BVERFG)
    gold = refex_gold(directory, [doc], held_acts(reads))[BVERFG]
    assert gold and {g.act_id for g in gold} == {"de:gg"}
    assert "de:gg:art:80:abs:1" in {g.absatz_id for g in gold}  # "Art. 80 Abs. 1 Satz 2 GG"
    # 1987 is before the oldest held GG (2012-08-03): the GG is read on that version
    assert nearest_held_dates(reads, "1987-07-01", ["de:gg"]) == {"de:gg": "2012-08-03"}
    art, ab = evaluate_refex(gg_resolver, reads, [doc], {BVERFG: gold}, "dev")
    assert {"de:gg:art:3", "de:gg:art:14", "de:gg:art:20", "de:gg:art:80"} <= {g.article_id for g in gold}
    missed = {m["gold"] for m in art.missed}
    assert "de:gg:art:80" not in missed and "de:gg:art:3" not in missed  # resolved exact
    assert art.prf.tp >= 4 and art.prf.recall >= 0.8 and ab.prf.tp >= 3
    assert art.confusions == [] and art.neighbour_exact == 0
    assert art.gold == len({g.article_id for g in gold}) and ab.gold == len({g.absatz_id for g in gold if g.absatz_id})


def test_a_gold_unit_the_corpus_lacks_is_never_a_match_and_a_misnumbered_one_is_a_confusion(gg_resolver):
    reads = gg_resolver.reads
    text = "Nach Art. 9999 GG und Art. 1 Abs. 1 GG ist das Eigentum (Art. 14 GG) gewährleistet."
    doc = RefexDoc("synthetic_2020-12-01_x", text, "txt", "test")
    s9999, s1, s14 = text.index("Art. 9999 GG"), text.index("Art. 1 Abs. 1 GG"), text.index("Art. 14 GG")
    gold = [GoldUnit(doc.doc_id, s9999, s9999 + 12, "Art. 9999 GG", "de:gg", "de:gg:art:9999", None, "9999"),
            GoldUnit(doc.doc_id, s1, s1 + 16, "Art. 1 Abs. 1 GG", "de:gg", "de:gg:art:1", "de:gg:art:1:abs:1", "1"),
            # a gold saying "Art. 1" where the text says "Art. 14": the resolver's exact Art. 14 on that
            # span is a 1 / 14 confusion against this gold
            GoldUnit(doc.doc_id, s14, s14 + 10, "Art. 14 GG", "de:gg", "de:gg:art:1", None, "1")]
    art, ab = evaluate_refex(gg_resolver, reads, [doc], {doc.doc_id: gold}, "x")
    assert art.not_in_corpus == 1 and art.neighbour_exact == 0
    assert {"doc_id": doc.doc_id, "gold": "de:gg:art:9999"} in art.missed
    assert "de:gg:art:9999" not in {e.get("resolved") for e in art.extra}
    assert (art.prf.tp, art.prf.fp, art.prf.fn) == (1, 1, 1)  # art:1 found; art:14 extra; art:9999 missed
    assert [c["resolved"] for c in art.confusions] == ["de:gg:art:14"]
    assert (ab.prf.tp, ab.gold) == (1, 1)


def test_saos_judgments_citing_the_civil_code(kc_resolver, corpus_home, sample_dir):
    from pipelines.citations.pl_evaluation import load_page

    reads = kc_resolver.reads
    page = load_page(sample_dir / "pl" / "saos" / "judgments-page-347.json")  # dev
    picked = [j for j in page if j.judgment_id in (35119, 94827, 94852, 94854)]
    assert len(picked) == 4 and all(j.date.startswith("2011") for j in picked)

    at_date = evaluate_saos(kc_resolver, reads, picked, "dev", mode="judgment_date")
    assert at_date.gold > 20 and at_date.predicted == 0  # 2011 is before the oldest held k.c.: nothing exact

    row = evaluate_saos(kc_resolver, reads, picked, "dev", mode="held_text")
    assert row.gold == at_date.gold and row.prf.tp >= 20 and row.prf.precision >= 0.5
    absent = {f"pl:kc:art:{n}" for j in picked for a, n in j.saos if a == "pl:kc"
              and not any(reads.reader.index("pl:kc", v).has(f"pl:kc:art:{n}") for v in reads.reader.versions("pl:kc"))}
    assert {"pl:kc:art:736^2", "pl:kc:art:101^6"} <= absent and row.not_in_corpus == len(absent)
    assert not absent & {e["resolved"] for e in row.extra}  # never matched
    assert {m["gold"] for m in row.missed} == absent  # every SAOS article the k.c. has is resolved exact
    assert row.neighbour_exact == 0 and row.confusions == []
    # 94827 prints "art. 1016 k.c." (inheritance); SAOS restored it as 101^6: a superscript reading
    assert {"judgment_id": 94827, "gold": "pl:kc:art:101^6", "resolved": "pl:kc:art:1016"} in row.superscript_readings
    with pytest.raises(ValueError, match="mode"):
        evaluate_saos(kc_resolver, reads, picked, "dev", mode="today")
