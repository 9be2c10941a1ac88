"""GerLayQA → benchmark questions (pipelines/benchmarks/gerlayqa.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.benchmarks.gerlayqa import GerLayQAError, bgb_ref, load_gerlayqa
from pipelines.benchmarks.legal_basis import UnitRef


def test_bgb_ref():
    assert bgb_ref("§ 573b") == UnitRef("de:bgb", "de:bgb:par:573b", "de:bgb:par:573b", False, "§ 573b")
    assert bgb_ref("§ 816", corpus_acts={"de:bgb"}).in_corpus
    assert bgb_ref("Art. 3 EGBGB") == UnitRef(None, None, None, False, "Art. 3 EGBGB")


def test_dev_split(sample_dir: Path):
    qs = load_gerlayqa(sample_dir / "de" / "gerlayqa" / "bgb_dev.json", sample_dir=sample_dir)
    assert len(qs) == 2154
    q = qs[0]
    assert (q.benchmark, q.source, q.source_format, q.question_id, q.language) == (
        "gerlayqa", "de/gerlayqa/bgb_dev.json", "json", "0", "de")
    assert q.options is None and q.gold_option is None and q.year is None
    assert q.question.startswith("Ich bin geschieden.") and "  " not in q.question
    assert q.legal_basis == "§ 816"
    assert [r.unit_id for r in q.gold_refs] == ["de:bgb:par:816"]
    refs = [r for q in qs for r in q.gold_refs]
    assert all(r.act_id == "de:bgb" and not r.in_corpus for r in refs)
    assert sum(len(q.gold_refs) for q in qs) > len(qs)  # several sections per question
    assert any(r.unit_id.endswith("b") for r in refs)  # lettered sections (§ 573b)


@pytest.mark.parametrize("content, reason", [
    ("{", "not valid JSON"),
    ('{"Question_text": "x"}', "expected a JSON array"),
    ('[{"Question_text": "x"}]', "item 0 lacks"),
    ('[{"Question_text": " ", "Paragraphs": []}]', "item 0 lacks"),
])
def test_bad_file(tmp_path: Path, content: str, reason: str):
    f = tmp_path / "bgb_dev.json"
    f.write_text(content)
    with pytest.raises(GerLayQAError, match=reason):
        load_gerlayqa(f)


def test_duplicate_sections_collapse(tmp_path: Path):
    f = tmp_path / "bgb_dev.json"
    f.write_text(json.dumps([{"Question_text": "Frage?", "Paragraphs": ["§ 1", "§ 1", "§ 2"]}]))
    (q,) = load_gerlayqa(f)
    assert [r.unit_id for r in q.gold_refs] == ["de:bgb:par:1", "de:bgb:par:2"]
