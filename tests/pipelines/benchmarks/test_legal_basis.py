"""Legal-basis strings → unit references (pipelines/benchmarks/legal_basis.py).

The examples are the forms that occur in the exam JSONL files (2012–2025) and in the official
2025 answer key; the sweep tests run the parser over every real JSONL string.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.benchmarks.legal_basis import UnitRef, exam_corpus_acts, gold_articles, parse_legal_basis, slug
from pipelines.retrieval import evaluation


def units(text: str) -> list[str | None]:
    return [r.unit_id for r in parse_legal_basis(text)]


@pytest.mark.parametrize("text, expected", [
    ("art. 405 k.c.", ["pl:kc:art:405"]),
    ("art. 109^1 § 2 k.c.", ["pl:kc:art:109^1:par:2"]),
    ("art. 109¹ § 2 k.c.", ["pl:kc:art:109^1:par:2"]),  # a printed superscript digit
    ("art. 58 § 1 i 2 k.c.", ["pl:kc:art:58:par:1", "pl:kc:art:58:par:2"]),
    ("art. 32 i art. 39 pkt 1 k.k.", ["pl:kk:art:32", "pl:kk:art:39:pt:1"]),
    ("art. 97 § 2 w zw. z art. 205 § 1 k.s.h.", ["pl:ksh:art:97:par:2", "pl:ksh:art:205:par:1"]),
    ("art. 385^1 § 1 k.c. w zw. z art. 22^1 k.c.", ["pl:kc:art:385^1:par:1", "pl:kc:art:22^1"]),
    ("art. 5 k.c. w zw. z art. 10 k.p.c.", ["pl:kc:art:5", "pl:kpc:art:10"]),
    ("art. 142 § 1 zd. 2 k.s.h.", ["pl:ksh:art:142:par:1"]),  # a sentence is not a corpus unit
    ("art. 394^2 § 1^1 pkt 1 k.p.c.", ["pl:kpc:art:394^2:par:1^1:pt:1"]),
    ("art. 300^73 § 1 k.s.h.", ["pl:ksh:art:300^73:par:1"]),
    ("art. 60 § 6 pkt 4 k.k.", ["pl:kk:art:60:par:6:pt:4"]),
    ("art. 39 pkt 2c k.k.", ["pl:kk:art:39:pt:2c"]),
    ("art. 83 § 1a k. r. i o.", ["pl:kro:art:83:par:1a"]),
    ("art. 10 § 1 k.r. i o.", ["pl:kro:art:10:par:1"]),
    ("art. 10 § 1 k.r.io.", ["pl:kro:art:10:par:1"]),
    ("art. 1 k.s.h", ["pl:ksh:art:1"]),  # final dot missing
    ("art. 93 § 1 k.p.s.w.", ["pl:kpsw:art:93:par:1"]),
    ("art. 76a § 3 k.p.a.", ["pl:kpa:art:76a:par:3"]),
    ("art. 405–407 k.c.", ["pl:kc:art:405", "pl:kc:art:406", "pl:kc:art:407"]),
    ("art. 5 i 6 § 2 k.c.", ["pl:kc:art:5", "pl:kc:art:6:par:2"]),
    ("art. 5 Kodeksu cywilnego", ["pl:kc:art:5"]),
    ("art. 1 ust. 2 pkt 3 ustawy z dnia 23 kwietnia 1964 r. – Kodeks cywilny", ["pl:kc:art:1:ust:2:pt:3"]),
    ("art. 7 ust. 1 pkt 1 i ust. 3 ustawy z dnia 15 lipca 1987 r. o Rzeczniku Praw Obywatelskich",
     ["pl:ustawa:o-rzeczniku-praw-obywatelskich:art:7:ust:1:pt:1",
      "pl:ustawa:o-rzeczniku-praw-obywatelskich:art:7:ust:3"]),
    ("art. 4 pkt 1 ustawy z dnia 4 lutego 1994 r. o prawie autorskim i prawach pokrewnych",
     ["pl:ustawa:o-prawie-autorskim-i-prawach-pokrewnych:art:4:pt:1"]),
    ("art. 85 ustawy z dnia 28 kwietnia 1936 r. – Prawo wekslowe", ["pl:ustawa:prawo-wekslowe:art:85"]),
    ("art. 2 ustawy z dnia 30 sierpnia 2002 r. – Prawo o postępowaniu przed sądami administracyjnymi",
     ["pl:ppsa:art:2"]),
    ("art. 2 p.p.s.a.", ["pl:ppsa:art:2"]),
    ("art. 19g ust. 1 ustawy z dnia 21 czerwca 2001 r. o ochronie praw lokatorów, mieszkaniowym zasobie gminy "
     "i o zmianie Kodeksu cywilnego",  # the title mentions the Civil Code: still another act
     ["pl:ustawa:o-ochronie-praw-lokatorow-mieszkaniowym-zasobie-gminy-i-o-zmianie-kodeksu-cywilnego:art:19g:ust:1"]),
    ("art. 46 Konstytucji Rzeczypospolitej Polskiej", ["pl:konst:art:46"]),
    ("art. 5 ust. 1 Traktatu z dnia 7 lutego 1992 r. o Unii Europejskiej – tekst uwzględniający zmiany "
     "wprowadzone Traktatem z Lizbony", ["eu:teu:art:5:ust:1"]),
    ("art. 253 Traktatu z dnia 25 marca 1957 r. o funkcjonowaniu Unii Europejskiej - tekst uwzględniający "
     "zmiany wprowadzone Traktatem z Lizbony", ["eu:tfeu:art:253"]),
])
def test_forms(text: str, expected: list[str]):
    assert units(text) == expected


def test_ref_fields_and_corpus_flag():
    kc, kpc = parse_legal_basis("art. 385^1 § 1 k.c. w zw. z art. 10 k.p.c.")
    assert kc == UnitRef("pl:kc", "pl:kc:art:385^1:par:1", "pl:kc:art:385^1", True, "art. 385^1 § 1 k.c.")
    assert kpc == UnitRef("pl:kpc", "pl:kpc:art:10", "pl:kpc:art:10", True, "art. 10 k.p.c.")
    assert not parse_legal_basis("art. 10 k.p.c.", corpus_acts={"pl:kc"})[0].in_corpus
    assert not parse_legal_basis("art. 10 k.r.o.")[0].in_corpus  # not a registry act
    assert exam_corpus_acts() == {"pl:kc", "pl:kpc", "pl:kp", "pl:kk"}  # the registry's Polish acts


def test_each_ref_raw_is_its_own_citation():
    assert [r.raw for r in parse_legal_basis("art. 58 § 1 i 2 k.c.")] == ["art. 58 § 1 k.c.", "art. 58 § 2 k.c."]


def test_unresolved_act_is_kept_with_null_ids():
    (ref,) = parse_legal_basis("art. 5")
    assert ref == UnitRef(None, None, None, False, "art. 5")


def test_nothing_cited():
    assert parse_legal_basis("") == []
    assert parse_legal_basis("zasady współżycia społecznego") == []


def test_duplicates_are_dropped():
    assert units("art. 5 k.c. i art. 5 k.c.") == ["pl:kc:art:5"]


def test_abbreviation_prefixes_do_not_collide():
    # k.p. is a prefix of k.p.c. / k.p.k. / k.p.a.; k.k. of k.k.s. / k.k.w.
    assert [r.act_id for r in parse_legal_basis("art. 1 k.p.c.; art. 2 k.p.; art. 3 k.k.s.; art. 4 k.k.")] == [
        "pl:kpc", "pl:kp", "pl:kks", "pl:kk"]


def test_slug_folds_polish_letters():
    assert slug("o księgach wieczystych – Łódź") == "o-ksiegach-wieczystych-lodz"


def _jsonl_bases(sample_dir: Path) -> list[str]:
    return [json.loads(line)["legal_basis"] for f in sorted((sample_dir / "pl" / "exams").glob("*/*.jsonl"))
            for line in f.open(encoding="utf-8") if line.strip()]


def test_every_jsonl_basis_resolves(sample_dir: Path):
    """All 2,343 real strings give at least one reference with a known act."""
    bases = _jsonl_bases(sample_dir)
    assert len(bases) > 2000
    bad = [b for b in bases if not (refs := parse_legal_basis(b)) or any(r.act_id is None for r in refs)]
    assert bad == []


def test_agrees_with_evaluation_gold_articles(sample_dir: Path):
    """A drop-in for pipelines.retrieval.evaluation.gold_articles on every real string."""
    bases = _jsonl_bases(sample_dir)
    differ = [(b, evaluation.gold_articles(b), gold_articles(b)) for b in bases
              if evaluation.gold_articles(b) != gold_articles(b)]
    assert differ == []
    assert sum(bool(gold_articles(b)) for b in bases) > 700


def test_gold_articles_reads_mixed_strings():
    # the old suffix test would call both Civil Code articles; only the first is one
    assert gold_articles("art. 5 k.c. w zw. z art. 10 k.p.c.", acts={"pl:kc"}) == ("pl:kc:art:5",)
    assert gold_articles("art. 10 k.p.c. w zw. z art. 5 k.c.", acts={"pl:kc"}) == ("pl:kc:art:5",)
    assert gold_articles("art. 10 k.p.c. w zw. z art. 5 k.c.") == ("pl:kpc:art:10", "pl:kc:art:5")
    assert gold_articles("art. 10 k.p.c.", acts={"pl:kpc"}) == ("pl:kpc:art:10",)
