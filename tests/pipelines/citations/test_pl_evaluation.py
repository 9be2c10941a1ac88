"""Scoring extracted (act, article) pairs against SAOS's referencedRegulations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.citations import pl_acts as PA
from pipelines.citations.pl_evaluation import Judgment, SaosFormatError, evaluate, load_page, score
from registry_rows import KK


def test_score_held_and_all() -> None:
    held = frozenset({"pl:kc"})
    pred = {("pl:kc", "415"), ("pl:kc", "6"), ("pl:pzp", "89")}
    gold = {("pl:kc", "415"), ("pl:kc", "5"), ("pl:pzp", "89"), ("pl:pzp", "7")}
    h, a = score(pred, gold, held)
    assert (h.tp, h.fp, h.fn) == (1, 1, 1)
    assert (a.tp, a.fp, a.fn) == (2, 1, 2)
    assert a.precision == pytest.approx(2 / 3) and a.recall == pytest.approx(0.5)


def test_evaluate_micro_over_judgments_and_lists_disagreements() -> None:
    docs = [
        Judgment(1, "2011-04-28", "COMMON", "na podstawie art. 415 k.c. oraz art. 6 k.c.", {("pl:kc", "415"), ("pl:kc", "5")}),
        Judgment(2, "2011-04-28", "SUPREME", "art. 89 ust. 1 pkt 2 Pzp", {("pl:pzp", "89")}),
        Judgment(3, "2011-04-28", "SUPREME", "", set()),
        Judgment(4, "2011-04-28", "SUPREME", "z art. 189 ust. 2\nustawy", {("pl:pzp", "189")}),
    ]
    rep = evaluate(docs)
    assert rep.judgments == 4
    assert (rep.held.tp, rep.held.fp, rep.held.fn) == (1, 1, 1)
    assert (rep.all.tp, rep.all.fp, rep.all.fn) == (2, 1, 2)
    assert rep.unresolved == 1  # the art. 189 without an act: no pair
    sides = {(d.judgment_id, d.act_id, d.article, d.side) for d in rep.disagreements}
    assert sides == {(1, "pl:kc", "5", "extractor_missed"), (1, "pl:kc", "6", "extractor_extra"),
                     (4, "pl:pzp", "189", "extractor_missed")}
    assert rep.seconds >= 0 and rep.citations == 4


def test_held_scope_follows_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [Judgment(1, None, "COMMON", "art. 415 k.c. i art. 148 k.k.", {("pl:kc", "415"), ("pl:kk", "148")})]
    assert evaluate(docs).held.tp == 2
    path = tmp_path / "acts.toml"
    path.write_text(KK, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))
    assert PA.held_ids() == {"pl:kk"}
    rep = evaluate(docs)
    assert (rep.held.tp, rep.all.tp) == (1, 2)


def test_load_page_and_bad_files(tmp_path: Path) -> None:
    page = {"links": [], "items": [
        {"id": 7, "judgmentDate": "2011-04-28", "courtType": "COMMON",
         "textContent": "<p>oskarżonego z <a href=\"x\">art. 284 § 2 k.k.</a></p>",
         "referencedRegulations": [{"journalTitle": "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny", "journalNo": 88,
                                    "journalYear": 1997, "journalEntry": 553,
                                    "text": "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny (Dz. U. z 1997 r. Nr 88, "
                                            "poz. 553 - art. 284; art. 284 § 2)"}]},
        {"id": 8, "judgmentDate": "2011-04-28", "courtType": "SUPREME", "textContent": "<div></div>",
         "referencedRegulations": []},
        {"id": 9, "textContent": None}]}
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page), encoding="utf-8")
    docs = load_page(path)
    assert [d.judgment_id for d in docs] == [7, 8, 9]
    assert docs[0].text == "oskarżonego z art. 284 § 2 k.k." and docs[0].saos == {("pl:kk", "284")}
    assert docs[2].text == "" and docs[2].saos == set()
    rep = evaluate(docs)
    assert (rep.held.tp, rep.held.fp, rep.held.fn) == (1, 0, 0)
    for content in ("not json", json.dumps([1, 2]), json.dumps({"items": [{"no": "id"}]})):
        path.write_text(content, encoding="utf-8")
        with pytest.raises(SaosFormatError):
            load_page(path)


def test_dev_page_reaches_the_goal(sample_dir: Path) -> None:
    """The dev page (SAOS dump page 347): held-acts F1 ≥ 0.90 (0.945 when written)."""
    path = sample_dir / "pl" / "saos" / "judgments-page-347.json"
    if not path.exists():
        pytest.skip(f"{path} missing")
    rep = evaluate(load_page(path))
    assert rep.judgments == 100
    assert rep.held.f1 >= 0.90, rep.held
    assert rep.all.f1 >= 0.80, rep.all
