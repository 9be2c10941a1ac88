import json

import numpy as np
import pytest

from pipelines.retrieval.interface import Hit
from pipelines.retrieval.reranker import (FEATURES, LexicalStats, LinearReranker, candidate_features,
                                          train_listwise)


def _hit(cid: str, score: float, rank: int) -> Hit:
    return Hit(cid, cid.split("#")[0], "pl:kc", "2025-11-13", score, rank)


STATS = LexicalStats.from_tokens({
    "a#0": "testament nie można sporządzić ani odwołać przez przedstawiciel".split(),
    "b#0": "testament należeć tak tłumaczyć aby zapewnić wola spadkodawca".split(),
    "c#0": "służebność osobisty wygasać".split(),
})


def test_features_cover_the_union_of_legs_with_missing_leg_defaults():
    legs = {"bm25": [_hit("b#0", 9.0, 1), _hit("a#0", 7.0, 2)], "dense": [_hit("a#0", 0.9, 1)], "gaius": []}
    hits, x = candidate_features(legs, "testament nie można sporządzić przez przedstawiciel".split(), STATS)
    assert [h.chunk_id for h in hits] == ["b#0", "a#0"] and x.shape == (2, len(FEATURES))
    row = dict(zip(FEATURES, x[1]))
    assert row["bm25_rr"] == pytest.approx(1 / 7) and row["dense_rr"] == pytest.approx(1 / 6)
    assert row["gaius_z"] == -2.0 and row["gaius_rr"] == 0.0
    assert row["coverage"] == pytest.approx(1.0)  # every query word is in a#0
    assert dict(zip(FEATURES, x[0]))["dense_z"] == -2.0
    assert row["bigram_overlap"] > dict(zip(FEATURES, x[0]))["bigram_overlap"]
    assert hits[1].sources == {"bm25": 2, "dense": 1}


def test_training_learns_which_feature_marks_the_relevant_candidate():
    rng = np.random.default_rng(0)
    groups = []
    for _ in range(200):
        x = rng.normal(size=(20, len(FEATURES)))
        y = np.zeros(20)
        best = int(np.argmax(x[:, FEATURES.index("coverage")] + 0.1 * rng.normal(size=20)))
        y[best] = 1
        groups.append((x, y))
    model = train_listwise(groups[:150], iters=500)
    assert int(np.argmax(np.abs(model.weights))) == FEATURES.index("coverage")
    top1 = np.mean([y[int(np.argmax(model.score(x)))] for x, y in groups[150:]])
    assert top1 > 0.7  # label noise caps it below 1; chance is 0.05


def test_training_without_any_relevant_candidate_is_an_error():
    with pytest.raises(ValueError, match="no training query"):
        train_listwise([(np.zeros((3, len(FEATURES))), np.zeros(3))])


def test_model_round_trip_and_feature_mismatch(tmp_path):
    model = LinearReranker([0.0] * len(FEATURES), [0.0] * len(FEATURES), [1.0] * len(FEATURES),
                           provenance={"encoder": "hashing-384"})
    path = tmp_path / "m.json"
    model.save(path)
    assert LinearReranker.load(path).provenance == {"encoder": "hashing-384"}
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="retrain"):
        LinearReranker.load(path)


def test_rank_orders_by_score_and_renumbers():
    hits = [_hit("a#0", 0, 0), _hit("b#0", 0, 0)]
    for h in hits:
        h.sources = {"bm25": 1}
    w = [0.0] * len(FEATURES)
    w[FEATURES.index("coverage")] = 1.0
    model = LinearReranker(w, [0.0] * len(FEATURES), [1.0] * len(FEATURES))
    x = np.zeros((2, len(FEATURES)))
    x[1, FEATURES.index("coverage")] = 1.0
    ranked = model.rank(hits, x, 10)
    assert [h.chunk_id for h in ranked] == ["b#0", "a#0"] and [h.rank for h in ranked] == [1, 2]
