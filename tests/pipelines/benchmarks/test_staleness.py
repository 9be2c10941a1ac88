"""Benchmark staleness per corpus version (pipelines/benchmarks/staleness.py): synthetic versions
for every reason, then the real 2024-12-19 → 2025-11-13 Civil Code change."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.benchmarks.benchmark_table import questions_to_table
from pipelines.benchmarks.legal_basis import parse_legal_basis
from pipelines.benchmarks.records import BenchmarkQuestion, Option
from pipelines.benchmarks.staleness import (
    check_staleness,
    flags_markdown,
    in_corpus_refs,
    stale_question_ids,
    staleness_summary,
    unit_level,
    unit_text_in,
)
from schemas.arrow import ARTICLES, BENCHMARK_STALENESS, NODES, from_rows

OLD, NEW = "2024-12-19", "2025-11-13"


def question(n: int, basis: str, source: str = "pl/exams/2030/notarialny.jsonl") -> BenchmarkQuestion:
    return BenchmarkQuestion(benchmark="pl_exams", source=source, source_format="jsonl", question_id=str(n),
                             language="pl", question=f"Pytanie {n} o {basis}?", legal_basis=basis,
                             gold_refs=parse_legal_basis(basis), options=[Option("A", "tak"), Option("B", f"nie {n}")],
                             gold_option="A", year=2030, exam="notarialny")


def qid(n: int, source: str = "pl/exams/2030/notarialny.jsonl") -> str:
    return f"pl_exams:{source}#{n}"


# --------------------------------------------------------------------------- synthetic versions


def version_tables(version: str, arts: dict[str, dict]) -> tuple[pa.Table, pa.Table]:
    """ARTICLES and NODES of a tiny act: ``arts`` maps number → {"pars": {num: text}} or
    {"text": ...}, plus optional status / pending / points."""
    d = dt.date.fromisoformat(version)
    a_rows, n_rows = [], []
    for i, (num, spec) in enumerate(arts.items()):
        aid = f"pl:kc:art:{num}"
        pars = spec.get("pars", {})
        points = spec.get("points", {})
        text = spec.get("text") or "\n".join(pars.values()) or "\n".join(points.values())
        status = spec.get("status", "in_force")
        a_rows.append({"id": aid, "act_id": "pl:kc", "version": d, "ordinal": i, "number": num, "text": text,
                       "text_pending": spec.get("pending"), "pending_effective_date": spec.get("pending_date"),
                       "paragraphs": [{"id": f"{aid}:par:{p}", "number": p, "text": t, "status": "in_force"}
                                      for p, t in pars.items()],
                       "status": status, "status_note": "(uchylony)" if status == "repealed" else None,
                       "content_hash": str(hash((text, spec.get("pending"), status)))})
        n_rows.append({"id": aid, "act_id": "pl:kc", "version": d, "level": "article", "number": num, "text": text,
                       "ordinal": len(n_rows), "status": status})
        for p, t in pars.items():
            n_rows.append({"id": f"{aid}:par:{p}", "act_id": "pl:kc", "version": d, "level": "paragraph", "number": p,
                           "text": t, "parent_id": aid, "ordinal": len(n_rows),
                           "status": "repealed" if t.endswith("(uchylony)") else "in_force"})
        for p, t in points.items():
            n_rows.append({"id": f"{aid}:pt:{p}", "act_id": "pl:kc", "version": d, "level": "point", "number": p,
                           "text": t, "parent_id": aid, "ordinal": len(n_rows), "status": "in_force"})
    return from_rows(a_rows, ARTICLES), from_rows(n_rows, NODES)


OLD_ACT = {
    "1": {"text": "Kodeks reguluje stosunki cywilnoprawne."},
    "2": {"text": "Zdolność prawną ma każdy człowiek."},
    "3": {"text": "Osobą fizyczną jest człowiek."},
    "4": {"pars": {"1": "§ 1. Pierwszy.", "2": "§ 2. Drugi.", "3": "§ 3. Trzeci."}},
    "5": {"pars": {"1": "§ 1. Umowa powinna być zawarta na piśmie.", "2": "§ 2. Forma pisemna wystarcza."}},
    "6": {"text": "Stosuje się ustawę o spółdzielniach (Dz. U. z 2024 r. poz. 372)."},
    "7": {"pars": {"1": "§ 1. Inwestor odpowiada solidarnie.", "2": "§ 2. Zgłoszenie wymaga formy pisemnej."}},
    "8": {"points": {"1": "1) nabycie przedsiębiorstwa;", "2": "2) zbycie nieruchomości."}},
}
NEW_ACT = {
    "1": OLD_ACT["1"],
    "2": {"text": "(uchylony)", "status": "repealed"},
    # 3 removed without trace
    "4": {"pars": {"1": "§ 1. Pierwszy.", "2": "§ 2. Drugi."}},
    "5": {"pars": {"1": "§ 1. Umowa wymaga zachowania formy dokumentowej.", "2": "§ 2. Forma pisemna wystarcza."}},
    "6": {"text": "Stosuje się ustawę o spółdzielniach (Dz. U. z 2025 r. poz. 443)."},
    "7": {"pars": OLD_ACT["7"]["pars"],
          "pending": "§ 1. Inwestor odpowiada solidarnie, chyba że złożył sprzeciw.\n§ 1^1. Sprzeciw składa się w "
                     "terminie.\n§ 2. Zgłoszenie wymaga formy pisemnej.",
          "pending_date": dt.date(2025, 12, 4)},
    "8": {"points": {"1": "1) nabycie przedsiębiorstwa;", "2": "2) zbycie lub obciążenie nieruchomości."}},
    "9": {"text": "Nowy przepis."},
}
BASES = {1: "art. 1 k.c.", 2: "art. 2 k.c.", 3: "art. 3 k.c.", 4: "art. 4 § 3 k.c.", 5: "art. 5 § 1 k.c.",
         6: "art. 5 § 2 k.c.", 7: "art. 6 k.c.", 8: "art. 7 § 1 k.c.", 9: "art. 7 § 2 k.c.", 10: "art. 8 pkt 2 k.c.",
         11: "art. 8 pkt 1 k.c.", 12: "art. 9 k.c.", 13: "art. 1 k.p.c.", 14: "art. 4 § 1 i art. 2 k.c."}


@pytest.fixture(scope="module")
def synthetic_questions() -> pa.Table:
    return questions_to_table([question(n, b) for n, b in BASES.items()])


def run(questions: pa.Table, with_previous: bool = True) -> pa.Table:
    new_a, new_n = version_tables(NEW, NEW_ACT)
    if not with_previous:
        return check_staleness(questions, act_id="pl:kc", version=NEW, articles=new_a, nodes=new_n)
    old_a, old_n = version_tables(OLD, OLD_ACT)
    return check_staleness(questions, act_id="pl:kc", version=NEW, articles=new_a, nodes=new_n,
                           previous_version=OLD, previous_articles=old_a, previous_nodes=old_n)


def test_every_reason_on_synthetic_versions(synthetic_questions: pa.Table):
    flags = run(synthetic_questions)
    assert flags.schema.equals(BENCHMARK_STALENESS, check_metadata=True)
    got = {(r["question_id"], r["unit_id"]): (r["reason"], r["stale"]) for r in flags.to_pylist()}
    assert got == {
        (qid(2), "pl:kc:art:2"): ("repealed", True),
        (qid(3), "pl:kc:art:3"): ("missing", True),
        (qid(4), "pl:kc:art:4:par:3"): ("missing", True),
        (qid(5), "pl:kc:art:5:par:1"): ("changed", True),
        (qid(7), "pl:kc:art:6"): ("editorial", False),
        (qid(8), "pl:kc:art:7:par:1"): ("pending_change", True),
        (qid(10), "pl:kc:art:8:pt:2"): ("changed", True),
        (qid(12), "pl:kc:art:9"): ("added", True),
        (qid(14), "pl:kc:art:2"): ("repealed", True),
    }
    # unit level: § 2 of art. 5, § 2 of art. 7 (same in force and announced), point 1 of art. 8,
    # the unchanged art. 1 and § 1 of art. 4 are not flagged; k.p.c. is not in the corpus
    rows = {r["unit_id"]: r for r in flags.to_pylist()}
    assert rows["pl:kc:art:5:par:1"]["word_diff"] == ("§ 1. Umowa [-powinna być zawarta na piśmie.-] "
                                                      "{+wymaga zachowania formy dokumentowej.+}")
    assert rows["pl:kc:art:5:par:1"]["old_text"] == "§ 1. Umowa powinna być zawarta na piśmie."
    pending = rows["pl:kc:art:7:par:1"]
    assert pending["effective_date"] == dt.date(2025, 12, 4)
    assert pending["new_text"] == "§ 1. Inwestor odpowiada solidarnie, chyba że złożył sprzeciw."
    assert "from 2025-12-04" in pending["detail"]
    assert rows["pl:kc:art:8:pt:2"]["word_diff"] == "2) zbycie {+lub obciążenie+} nieruchomości."
    assert rows["pl:kc:art:4:par:3"]["detail"] == "pl:kc:art:4:par:3 is not in 2025-11-13 (its article is)"
    assert all(r["previous_version"] == dt.date.fromisoformat(OLD) for r in flags.to_pylist())
    assert stale_question_ids(flags) == {qid(n) for n in (2, 3, 4, 5, 8, 10, 12, 14)}


def test_first_version_flags_only_missing_and_repealed(synthetic_questions: pa.Table):
    flags = run(synthetic_questions, with_previous=False)
    assert {(r["question_id"], r["reason"]) for r in flags.to_pylist()} == {
        (qid(2), "repealed"), (qid(3), "missing"), (qid(4), "missing"), (qid(14), "repealed")}
    assert flags["previous_version"].null_count == flags.num_rows


def test_summary_counts(synthetic_questions: pa.Table):
    flags = run(synthetic_questions)
    s = staleness_summary(synthetic_questions, flags, "pl:kc")
    assert s["questions_checked"] == 13 and s["refs_checked"] == 14  # q13 cites k.p.c. only; q14 two units
    assert s["flagged_refs"] == 9 and s["stale_refs"] == 8 and s["stale_questions"] == 8
    assert (s["refs_repealed"], s["questions_repealed"]) == (2, 2)
    assert s["refs_editorial"] == 1 and s["refs_added"] == 1 and s["refs_pending_change"] == 1
    assert "| pl_exams:pl/exams/2030/notarialny.jsonl#5 | pl:kc:art:5:par:1 | changed | yes |" in flags_markdown(flags)


def test_no_flags_is_an_empty_table():
    t = questions_to_table([question(1, "art. 1 k.c.")])
    flags = run(t)
    assert flags.num_rows == 0 and flags.schema.equals(BENCHMARK_STALENESS)
    assert flags_markdown(flags) == "No gold reference flagged."


def test_previous_tables_come_in_pairs(synthetic_questions: pa.Table):
    a, n = version_tables(NEW, NEW_ACT)
    with pytest.raises(ValueError, match="both previous_articles and previous_nodes"):
        check_staleness(synthetic_questions, act_id="pl:kc", version=NEW, articles=a, nodes=n,
                        previous_version=OLD, previous_articles=a)


@pytest.mark.parametrize("unit, expected", [
    ("pl:kc:art:7:par:1^1", "§ 1^1. Sprzeciw składa się w terminie."),
    ("pl:kc:art:7:par:2", "§ 2. Zgłoszenie:\n1) pisemne;\n2) dokumentowe:\na) list,\nb) e-mail."),
    ("pl:kc:art:7:par:2:pt:2", "2) dokumentowe:\na) list,\nb) e-mail."),
    ("pl:kc:art:7:par:2:pt:2:lit:b", "b) e-mail."),
    ("pl:kc:art:7:par:3", None),
    ("pl:kc:art:7:par:2:pt:3", None),
])
def test_unit_text_in_announced_reading(unit: str, expected: str | None):
    text = ("§ 1. Inwestor odpowiada.\n§ 1^1. Sprzeciw składa się w terminie.\n"
            "§ 2. Zgłoszenie:\n1) pisemne;\n2) dokumentowe:\na) list,\nb) e-mail.")
    assert unit_text_in(text, "pl:kc:art:7", unit) == expected


def test_unit_level_from_id():
    assert [unit_level(u) for u in ("pl:kc:art:5", "pl:kc:art:5:par:1^1", "pl:kc:art:5:pt:2",
                                    "pl:kc:art:5:par:1:pt:2:lit:a")] == ["article", "paragraph", "point", "letter"]


# --------------------------------------------------------------------------- the real Civil Code change


def _version(home: Path, v: str) -> tuple[pa.Table, pa.Table]:
    d = home / "corpus" / "pl" / "kc" / v
    return pq.read_table(d / "articles.parquet"), pq.read_table(d / "nodes.parquet")


def real_check(questions: pa.Table, home: Path, version: str) -> pa.Table:
    a, n = _version(home, version)
    if version == OLD:
        return check_staleness(questions, act_id="pl:kc", version=OLD, articles=a, nodes=n)
    oa, on = _version(home, OLD)
    diff = pq.read_table(home / "corpus" / "pl" / "kc" / NEW / f"diff_from_{OLD}.parquet")
    return check_staleness(questions, act_id="pl:kc", version=NEW, articles=a, nodes=n, previous_version=OLD,
                           previous_articles=oa, previous_nodes=on, diff=diff)


@pytest.fixture(scope="module")
def benchmark(benchmark_table: pa.Table) -> pa.Table:
    """build_benchmark_table(sample_dir), built once per session (conftest.py)."""
    return benchmark_table


REPEALED = {("pl_exams:pl/exams/2013/notarialny.jsonl#9", "pl:kc:art:188"),
            ("pl_exams:pl/exams/2014/komorniczy.jsonl#9", "pl:kc:art:186"),
            ("pl_exams:pl/exams/2016/notarialny.jsonl#5", "pl:kc:art:159")}


@pytest.mark.parametrize("version", [OLD, NEW])
def test_real_benchmark_flags(benchmark: pa.Table, corpus_home: Path, version: str):
    """The real benchmark against both real versions: three questions cite articles repealed long
    before either version; none of the 766 Civil Code questions cites a unit the 2025 amendment
    changed — the one that cites an amended article (166, editorial, in § 3) cites § 1, which
    reads the same, so nothing else is flagged."""
    flags = real_check(benchmark, corpus_home, version)
    assert {(r["question_id"], r["unit_id"], r["reason"], r["stale"]) for r in flags.to_pylist()} == \
        {(q, u, "repealed", True) for q, u in REPEALED}
    s = staleness_summary(benchmark, flags, "pl:kc")
    assert (s["questions_checked"], s["refs_checked"], s["stale_questions"]) == (766, 766, 3)
    cites_166 = [r for r in in_corpus_refs(benchmark, "pl:kc") if r.article_id == "pl:kc:art:166"]
    assert [(r.question_id, r.unit_id) for r in cites_166] == [("pl_exams:pl/exams/2014/notarialny.jsonl#6",
                                                                 "pl:kc:art:166:par:1")]


REAL_CHANGE_CITES = {
    1: ("art. 709^2 k.c.", "changed"),
    2: ("art. 709^11 k.c.", "changed"),
    3: ("art. 709^13 § 2 k.c.", "changed"),
    4: ("art. 709^13 § 1 k.c.", None),
    5: ("art. 385^5 k.c.", "pending_change"),
    6: ("art. 385^5 § 1 k.c.", None),  # the announced reading adds § 1^1; § 1 itself reads the same
    7: ("art. 556^4 k.c.", "pending_change"),
    8: ("art. 556^5 k.c.", "pending_change"),
    9: ("art. 647^1 § 1 k.c.", "pending_change"),
    10: ("art. 647^1 § 4 k.c.", None),
    11: ("art. 647^1 k.c.", "pending_change"),
    12: ("art. 166 § 3 k.c.", "editorial"),
    13: ("art. 166 § 1 k.c.", None),
    14: ("art. 613 § 4 k.c.", "editorial"),
    15: ("art. 859^4 k.c.", "editorial"),
}


def test_real_change_flags_questions_citing_the_changed_units(corpus_home: Path):
    """Questions citing each of the 7 changed (and 3 editorial) articles of the 2024-12-19 →
    2025-11-13 change, against the real parsed versions: exact reasons, unit by unit."""
    src = "synthetic/real_change.jsonl"
    qs = questions_to_table([question(n, b, source=src) for n, (b, _) in REAL_CHANGE_CITES.items()])
    flags = real_check(qs, corpus_home, NEW)
    got = {int(r["question_id"].rsplit("#", 1)[1]): r for r in flags.to_pylist()}
    assert {n: r["reason"] for n, r in got.items()} == {n: why for n, (_, why) in REAL_CHANGE_CITES.items() if why}
    assert {n for n, r in got.items() if r["stale"]} == {1, 2, 3, 5, 7, 8, 9, 11}
    # the article-level word diff is the version diff's
    diff = {r["article_id"]: r for r in pq.read_table(
        corpus_home / "corpus" / "pl" / "kc" / NEW / f"diff_from_{OLD}.parquet").to_pylist()}
    assert got[1]["word_diff"] == diff["pl:kc:art:709^2"]["unified_diff"] == (
        "Umowa leasingu [-powinna być zawarta na piśmie pod rygorem nieważności.-] "
        "{+wymaga zachowania formy dokumentowej.+}")
    assert got[1]["article_change"] == "changed" and got[12]["article_change"] == "editorial"
    assert "[-na piśmie korzystającemu-] {+korzystającemu, w formie dokumentowej,+}" in got[3]["word_diff"]
    assert got[3]["word_diff"].startswith("§ 2.")  # the paragraph's own diff, not the article's
    assert {got[n]["effective_date"] for n in (5, 7, 8)} == {dt.date(2025, 11, 27)}
    assert {got[n]["effective_date"] for n in (9, 11)} == {dt.date(2025, 12, 4)}
    assert "chyba że [-w ciągu trzydziestu dni od dnia doręczenia inwestorowi zgłoszenia-] inwestor złożył" \
        in got[9]["word_diff"]
    assert "[-423)-] {+423 oraz z 2025 r. poz. 620)+}" in got[12]["word_diff"]
