"""Representation sources: training material only — never an exam question of 2021–2023, never the
SAOS evaluation pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.retrieval.representations import sources as S

HELD = ("pl:kc", "pl:kpc", "pl:kp", "pl:kk")


def _exam(root: Path, year: int, rows: list[dict]) -> None:
    d = root / str(year)
    d.mkdir(parents=True, exist_ok=True)
    (d / "adwokacki_radcowy.jsonl").write_text("\n".join(json.dumps({**r, "year": year}, ensure_ascii=False)
                                                         for r in rows) + "\n", encoding="utf-8")


def test_exam_years_2021_to_2023_are_refused(tmp_path: Path):
    assert S.EXCLUDED_EXAM_YEARS == {2021, 2022, 2023}
    assert not set(S.TRAINING_EXAM_YEARS) & S.EXCLUDED_EXAM_YEARS
    for year in (2021, 2022, 2023):
        with pytest.raises(ValueError, match="held-out test years"):
            S.exam_representations(tmp_path, HELD, years=[2019, year])


def test_exam_rows_from_training_years_only(tmp_path: Path):
    q = {"id": 1, "question": "Zgodnie z Kodeksem cywilnym, konsumentem jest:", "legal_basis": "art. 22^1 k.c."}
    _exam(tmp_path, 2015, [q, {"id": 2, "question": "Zgodnie z Kodeksem spółek handlowych, spółka z o.o.:",
                               "legal_basis": "art. 151 § 1 k.s.h."}])
    _exam(tmp_path, 2022, [{"id": 9, "question": "Pytanie z roku testowego:", "legal_basis": "art. 5 k.c."}])
    rows = S.exam_representations(tmp_path, HELD)
    assert {r.year for r in rows} == {2015}  # the 2022 file is never read
    inside = [r for r in rows if r.article_id]
    assert [(r.article_id, r.text) for r in inside] == [("pl:kc:art:22^1", "konsumentem jest:")]
    outside = [r for r in rows if r.article_id is None]
    assert [r.act_id for r in outside] == ["pl:ksh"]


def test_a_mislabelled_test_year_record_is_refused(tmp_path: Path):
    d = tmp_path / "2019"
    d.mkdir()
    (d / "x.jsonl").write_text(json.dumps({"id": 1, "question": "q:", "legal_basis": "art. 5 k.c.", "year": 2021}) + "\n")
    with pytest.raises(S.SourceError, match="held-out year"):
        S.exam_representations(tmp_path, HELD)


def test_lqad_test_years_are_refused(tmp_path: Path):
    doc = {"title": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny.", "paragraphs": [
        {"context": " § 1. Konsumentem jest osoba fizyczna.", "qas": [{"id": "2022_adw_1", "question": "Kim jest:"}]}]}
    (tmp_path / "lqad-pl-train.json").write_text(json.dumps({"data": [doc]}), encoding="utf-8")
    with pytest.raises(S.SourceError, match="held-out exam year"):
        S.lqad_representations(tmp_path, {"pl:kc": {"pl:kc:art:22^1": "Za konsumenta uważa się osobę fizyczną."}})


def test_lqad_paragraph_matched_to_its_article(tmp_path: Path):
    doc = {"title": "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny.", "paragraphs": [
        {"context": " § 1. Użytkowanie wygasa wskutek niewykonywania przez lat dziesięć.",
         "qas": [{"id": "2012_adw_3", "question": "Zgodnie z Kodeksem cywilnym, użytkowanie wygasa wskutek:"}]}]}
    (tmp_path / "lqad-pl-dev.json").write_text(json.dumps({"data": [doc]}), encoding="utf-8")
    arts = {"pl:kc": {"pl:kc:art:255": "Użytkowanie wygasa wskutek niewykonywania przez lat dziesięć.",
                      "pl:kc:art:256": "Przedawnienie roszczeń właściciela przeciwko użytkownikowi."}}
    rows, counts = S.lqad_representations(tmp_path, arts)
    assert [(r.article_id, r.year, r.text) for r in rows] == [("pl:kc:art:255", 2012, "użytkowanie wygasa wskutek:")]
    assert counts["matched"] == 1


def test_citation_context_blanks_the_citations():
    text = ("Sąd zważył, co następuje. Zgodnie z art. 415 k.c. kto z winy swej wyrządził drugiemu szkodę, "
            "obowiązany jest do jej naprawienia. Apelacja podlegała oddaleniu.")
    (start, arts, sentence), = S.citation_contexts(text, HELD)
    assert arts == ["pl:kc:art:415"]
    assert "415" not in sentence and sentence.startswith("Zgodnie z kto z winy swej wyrządził")


def test_saos_evaluation_pages_are_never_read(tmp_path: Path):
    judgment = {"id": 7, "judgmentDate": "2013-05-05",
                "textContent": "<p>Powód domagał się zadośćuczynienia za krzywdę doznaną w wypadku na podstawie "
                               "art. 445 k.c. od ubezpieczyciela sprawcy szkody.</p>"}
    for page in (347, 355, 924):
        (tmp_path / f"judgments-page-{page}.json").write_text(json.dumps({"items": [{**judgment, "id": page}]}))
    rows, counts = S.saos_representations(tmp_path, HELD)
    assert counts["pages"] == [924]
    assert {r.rep_id.split(":")[1] for r in rows} == {"924"}
    assert rows[0].article_id == "pl:kc:art:445" and "445" not in rows[0].text


def test_real_material_holds_no_test_year(sample_dir: Path):
    rows = S.exam_representations(sample_dir / "pl" / "exams", HELD)
    assert rows and {r.year for r in rows} <= set(S.TRAINING_EXAM_YEARS)
    assert all(r.rep_id.split(":")[1][:4] not in {"2021", "2022", "2023"} for r in rows)
