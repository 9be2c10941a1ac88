"""The §-prior is learned out of fold: a fold's prior (and the fusion weights ranking it) never see
that fold's labels."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.benchmarks.section_prior import (
    Candidates, assign_folds, count_labels, cross_validated_fusion, fit_listwise, fold_priors, prior_rankings,
)


def test_folds_balanced_reproducible_and_order_free():
    ids = [str(i) for i in range(103)]
    folds = assign_folds(ids, 5)
    assert sorted(folds.count(f) for f in range(5)) == [20, 20, 21, 21, 21]
    assert assign_folds(ids, 5) == folds
    shuffled = ids[::-1]
    assert dict(zip(shuffled, assign_folds(shuffled, 5))) == dict(zip(ids, folds))
    assert assign_folds(ids, 5, seed=1) != folds
    with pytest.raises(ValueError):
        assign_folds(ids, 1)


def test_prior_of_a_fold_never_counts_its_labels():
    # every question cites a § no other question cites, plus a shared one: if a fold's prior counted
    # its own questions, their unique §§ would get counts > 0 there
    ids = [str(i) for i in range(50)]
    golds = [[f"de:bgb:par:{1000 + i}", "de:bgb:par:823"] for i in range(50)]
    folds = assign_folds(ids, 5)
    priors = fold_priors(golds, folds, vocabulary=2000)
    floor = {f: p.log_prior("de:bgb:par:does-not-exist") for f, p in priors.items()}
    for g, f in zip(golds, folds):
        assert priors[f].counts.get(g[0], 0) == 0
        assert priors[f].log_prior(g[0]) == floor[f]
        for other in set(folds) - {f}:  # ... while every other fold's prior does count it
            assert priors[other].counts[g[0]] == 1
    assert all(p.counts["de:bgb:par:823"] == 40 for p in priors.values())
    # the question-blind baseline therefore never ranks a question's unique § in its own fold
    for ranked, g in zip(prior_rankings(golds, folds, vocabulary=2000, depth=100), golds):
        assert ranked[0] == "de:bgb:par:823" and g[0] not in ranked


def test_count_labels_counts_a_section_once_per_question():
    c, n = count_labels([["a", "a", "b"], ["a"]], [0, 1], exclude=set())
    assert c == {"a": 2, "b": 1} and n == 3


def test_cross_validated_fusion_cannot_learn_from_the_test_fold():
    """Questions whose gold § is unique to them, retrieved by no leg: only a leak of the test fold's
    labels into the prior could rank them, so recall must be exactly zero."""
    ids = [str(i) for i in range(60)]
    folds = assign_folds(ids, 3)
    golds, cands = [], []
    for i in range(60):
        if i % 2:  # half the questions: a common §, found by bm25 at rank 3
            golds.append(["de:bgb:par:823"])
            cands.append(Candidates({"bm25": [("de:bgb:par:1", 9.0), ("de:bgb:par:2", 8.0), ("de:bgb:par:823", 7.0)]}))
        else:
            golds.append([f"de:bgb:par:{2000 + i}"])
            cands.append(Candidates({"bm25": [("de:bgb:par:1", 9.0), ("de:bgb:par:2", 8.0)]}))
    ranked, models = cross_validated_fusion(cands, golds, folds, legs=["bm25"], vocabulary=3000, prior_depth=10)
    assert set(models) == {0, 1, 2}
    for r, g, i in zip(ranked, golds, range(60)):
        if i % 2:
            assert r[0] == "de:bgb:par:823"  # the prior (from other folds) lifts the common § to rank 1
        else:
            assert g[0] not in r  # never seen outside its own fold: unreachable


def test_listwise_fit_prefers_the_informative_feature():
    rng = np.random.default_rng(0)
    groups = []
    for _ in range(40):
        x = rng.normal(size=(10, 2))
        y = np.zeros(10, bool)
        y[np.argmax(x[:, 0])] = True  # feature 0 decides, feature 1 is noise
        groups.append((x, y))
    weights, _mean, _std = fit_listwise(groups)
    assert weights[0] > 3 * abs(weights[1])
    with pytest.raises(ValueError, match="gold"):
        fit_listwise([(np.zeros((3, 2)), np.zeros(3, bool))])
