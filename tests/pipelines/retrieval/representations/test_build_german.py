"""The German representation store (GerLayQA dev questions, BM25 only), as the ``de_representations``
asset builds it, and the service's German last stage opening it with the shipped kNN fusion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.layout import Layout
from pipelines.retrieval import lay_search
from pipelines.retrieval.representations import build as B
from pipelines.retrieval.representations.store import RepresentationIndex, read_manifest


@pytest.fixture()
def samples(tmp_path: Path) -> Path:
    d = tmp_path / "samples" / "de" / "gerlayqa"
    d.mkdir(parents=True)
    (d / "bgb_dev.json").write_text(json.dumps([
        {"Question_text": "Mein Vermieter hat wegen Eigenbedarf gekündigt. Ist das wirksam?",
         "Paragraphs": ["§ 573", "§ 574"]},
        {"Question_text": "Der Nachbar lässt seinen Baum auf mein Grundstück wachsen.", "Paragraphs": ["§ 1004"]},
        {"Question_text": "Gilt ein Paragraph, den es nicht gibt?", "Paragraphs": ["§ 9999"]},
    ]), encoding="utf-8")
    return tmp_path / "samples"


def test_the_german_store_holds_each_question_once_per_cited_section(tmp_path, samples, monkeypatch):
    held = {"de:bgb": {f"de:bgb:par:{n}": "…" for n in ("573", "574", "1004")}}
    monkeypatch.setattr(B, "held_articles", lambda layout, acts: {a: held[a] for a in acts if a in held})
    layout = Layout(tmp_path / "home")
    report = B.build_representations(layout, samples, lang="de")
    assert report.rows == 3 and report.per_kind == {"gerlayqa": 3} and report.embedded == 0
    assert "1 rows about §§ no published BGB version has were left out" in report.notes[0]
    index = RepresentationIndex.open(layout.home, "de")
    assert index.rep_ids == ["gerlayqa:0", "gerlayqa:0", "gerlayqa:1"]  # the benchmark's question ids
    assert list(index.article_ids) == ["de:bgb:par:573", "de:bgb:par:574", "de:bgb:par:1004"]
    assert index.vectors is None and read_manifest(layout.home, "de")["encoder"] is None
    words = index.tokens[0].split()
    assert "ist" not in words and "das" not in words and words  # the question without stop words
    # the service's German last stage opens it with the shipped model, whatever the search's encoder
    stage = lay_search.open_german(layout.home, "hashing-384")
    assert isinstance(stage, lay_search.GermanKnn) and len(stage.index) == 3


def test_no_store_without_the_bgb_or_the_questions(tmp_path, samples, monkeypatch):
    monkeypatch.setattr(B, "held_articles", lambda layout, acts: {})
    assert B.build_representations(Layout(tmp_path / "home"), samples, lang="de") is None
    monkeypatch.setattr(B, "held_articles", lambda layout, acts: {"de:bgb": {"de:bgb:par:573": "…"}})
    assert B.build_representations(Layout(tmp_path / "home"), tmp_path / "nothing", lang="de") is None
    assert lay_search.open_german(tmp_path / "home", None) is None
