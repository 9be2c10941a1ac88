"""The refex evaluation: metric code on a hand-made gold, loading the real gold, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.citations.evaluation import (PRF, RefexFormatError, Scores, Span, evaluate, gold_act_key,
                                            label_contradicts_span, load_refex, match_overlap, score_spans,
                                            score_targets, split_dev_test)
from pipelines.citations.german import make_nlp

# text:  "§ 1 BGB und §§ 2, 3 ZPO sowie Art. 3 GG"
#         0123456789012345678901234567890123456789
GOLD = [Span(0, 7, "§ 1 BGB", "bgb", "1"), Span(12, 16, "§§ 2", "zpo", "2"), Span(18, 23, "3 ZPO", "zpo", "3"),
        Span(30, 39, "Art. 3 GG", "gg", "3")]


def test_exact_overlap_and_target_on_a_hand_made_gold() -> None:
    pred = [Span(0, 7, act="bgb", number="1"),        # exact, right target
            Span(12, 23, act="zpo", number="2"),      # overlaps both §§ 2 and 3 ZPO: pairs with the larger overlap
            Span(30, 36, act="gg", number="4"),       # overlaps Art. 3 GG, wrong number
            Span(45, 50, act="bgb", number="9")]      # matches nothing
    assert score_spans(GOLD, pred, "exact") == PRF(1, 3, 3)
    assert match_overlap(GOLD, pred) == [(0, 0), (1, 1), (3, 2)] or match_overlap(GOLD, pred) == [(0, 0), (2, 1), (3, 2)]
    ov = score_spans(GOLD, pred, "overlap")
    assert ov == PRF(3, 1, 1)
    assert (round(ov.precision, 3), round(ov.recall, 3), round(ov.f1, 3)) == (0.75, 0.75, 0.75)
    tgt = score_targets(GOLD, pred)
    # pairs: (§ 1 BGB ✓), (§§ 2 or 3 ZPO: 12..23 overlaps "§§ 2" by 4 chars and "3 ZPO" by 5 → "3 ZPO",
    # pred number 2 ≠ 3 ✗), (Art. 3 GG vs 4 ✗); the unmatched prediction is a false positive
    assert match_overlap(GOLD, pred)[1] == (2, 1)
    assert tgt == PRF(1, 3, 3)


def test_overlap_is_one_to_one_and_targetless_gold_is_left_out() -> None:
    gold = [Span(0, 10, "x"), Span(5, 15, "y", "bgb", "1")]
    pred = [Span(4, 12, act="bgb", number="1")]
    assert score_spans(gold, pred, "overlap") == PRF(1, 0, 1)
    # the prediction pairs with the larger overlap (gold 0: 6 chars, gold 1: 7 chars)
    assert match_overlap(gold, pred) == [(1, 0)]
    assert score_targets(gold, pred) == PRF(1, 0, 0)
    assert score_targets([Span(0, 10, "EU act")], [Span(0, 10, act="bgb", number="1")]) == PRF(0, 0, 0)
    sc = evaluate([], {})
    assert isinstance(sc, Scores) and sc.docs == 0 and sc.overlap.f1 == 0.0


def test_gold_book_normalisation_and_label_conflicts() -> None:
    assert gold_act_key("5") == "sgb-v" and gold_act_key("sgb iv") == "sgb-iv"
    assert gold_act_key("sozialgerichtsgesetzes") == "sgg" and gold_act_key("eggvg") == "eggvg"
    assert gold_act_key("fünftes buch sozialgesetzbuch") == "sgb-v" and gold_act_key(None) is None
    assert label_contradicts_span(Span(0, 20, "§ 13 Abs 3a S 1 SGB V", "sgg", "13"))
    assert not label_contradicts_span(Span(0, 9, "§ 184 SGG", "sgg", "184"))
    assert not label_contradicts_span(Span(0, 6, "§§ 184", "sgg", "184"))  # no act printed: no conflict


@pytest.fixture(scope="module")
def refex(sample_dir: Path):
    folder = sample_dir / "de" / "refex"
    if not folder.is_dir():
        pytest.skip(f"refex gold not found at {folder}")
    return load_refex(folder)


def test_load_real_gold(refex) -> None:
    assert len(refex) == 25
    annotated = [d for d in refex if d.gold is not None]
    assert len(annotated) == 15 and sum(len(d.gold) for d in annotated) == 355
    for d in annotated:
        for g in d.gold:
            assert d.text[g.start:g.end] == g.text
    dev, test = split_dev_test(refex)
    assert (len(dev), len(test)) == (8, 7) and not {d.doc_id for d in dev} & {d.doc_id for d in test}


def test_extractor_quality_on_the_real_gold_does_not_regress(refex) -> None:
    nlp = make_nlp()
    sc = Scores()
    for d in refex:
        if d.gold is None:
            continue
        pred = [Span(c.start, c.end, c.text, c.act_key, c.number) for c in nlp(d.text)._.citations]
        sc.add(d.gold, pred)
    # measured 0.923 / 0.986 (bench/citations.py); a rule change that loses either fails here
    assert sc.overlap.recall >= 0.97 and sc.overlap.precision >= 0.90
    assert sc.target.recall >= 0.88


def _write(folder: Path, docs: list[dict], anns: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "documents.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (folder / "annotations.jsonl").write_text("\n".join(anns) + "\n")
    return folder


def test_bad_gold_files_name_file_line_and_reason(tmp_path: Path) -> None:
    doc = {"doc_id": "d1", "format": "plain", "text": "nach § 1 BGB", "language": "de", "source": "x"}
    ok = {"doc_id": "d1", "citations": [{"id": "c1", "type": "law", "kind": "full",
                                          "span": {"start": 5, "end": 12, "text": "§ 1 BGB"},
                                          "book": "bgb", "number": "1"}], "relations": []}
    docs = load_refex(_write(tmp_path / "ok", [doc], [json.dumps(ok)]))
    assert docs[0].gold == [Span(5, 12, "§ 1 BGB", "bgb", "1")]
    bad_span = dict(ok, citations=[dict(ok["citations"][0], span={"start": 4, "end": 12, "text": "§ 1 BGB"})])
    with pytest.raises(RefexFormatError, match=r"annotations.jsonl:1: citation 'c1': span text"):
        load_refex(_write(tmp_path / "span", [doc], [json.dumps(bad_span)]))
    with pytest.raises(RefexFormatError, match=r"annotations.jsonl:2: not valid JSON"):
        load_refex(_write(tmp_path / "json", [doc], [json.dumps(ok), "{broken"]))
    with pytest.raises(RefexFormatError, match=r"doc_id 'zz' is in no document file"):
        load_refex(_write(tmp_path / "orphan", [doc], [json.dumps(dict(ok, doc_id="zz"))]))
    with pytest.raises(RefexFormatError, match=r"documents.jsonl:1: field 'text' missing"):
        load_refex(_write(tmp_path / "doc", [dict(doc, text=None)], [json.dumps(ok)]))
