"""The §-prior is learned out of fold: a fold's prior (and the fusion weights ranking it) never see
that fold's labels."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.benchmarks.section_prior import (
    Candidates, assign_folds, count_labels, cross_validated_fusion, cross_validated_knn_fusion, fit_listwise, fold_priors,
    nested_hybrid_rankings, prior_rankings, row_folds,
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


# ---------------------------------------------------------------------------------------------
# the German kNN study: a fold's own questions never reach its kNN rows


def _knn_fixture(n: int = 40, k: int = 4):
    """Questions 2j and 2j+1 are twins (a shared word, a shared §, the hybrid finds that § at rank
    3); each question also has a word and a § of its own that only its store row carries. If a
    fold's own rows reached its kNN leg, a question's own § would be its first neighbour vote."""
    from pipelines.retrieval.representations.store import RepresentationIndex

    ids = [str(i) for i in range(n)]
    folds = assign_folds(ids, k)
    golds = [[f"de:bgb:par:{1000 + i}", f"de:bgb:par:{3000 + i // 2}"] for i in range(n)]
    tokens = [[f"own{i}", f"pair{i // 2}", "mieter"] for i in range(n)]
    rep_ids, arts, toks = [], [], []
    for i in range(n):
        for a in golds[i]:
            rep_ids.append(f"gerlayqa:{i}")
            arts.append(a)
            toks.append(" ".join(tokens[i]))
    rep_ids.append("gerlayqa:999")  # a question outside the study (no gold § in force): never masked
    arts.append("de:bgb:par:823")
    toks.append("mieter")
    m = len(rep_ids)
    index = RepresentationIndex(rep_ids, np.array(["gerlayqa"] * m, dtype=object), np.array(arts, dtype=object),
                                np.array(["de:bgb"] * m, dtype=object), np.full(m, -1), toks, toks, None)
    cands = [Candidates({"bm25": [("de:bgb:par:1", 9.0), ("de:bgb:par:2", 8.0), (f"de:bgb:par:{3000 + i // 2}", 7.0)]})
             for i in range(n)]
    return ids, folds, golds, tokens, index, cands


def test_row_folds_map_store_rows_to_their_questions_fold():
    ids, folds, _golds, _tokens, index, _cands = _knn_fixture()
    rf = row_folds(index.rep_ids, ids, folds)
    assert rf[-1] == -1  # the outside question
    for r, f in zip(index.rep_ids[:-1], rf[:-1]):
        assert f == folds[int(r.split(":")[1])]


def test_knn_study_never_reads_a_folds_own_rows():
    from pipelines.retrieval.representations.search import bm25_knn

    ids, folds, golds, tokens, index, cands = _knn_fixture()
    rf = row_folds(index.rep_ids, ids, folds)
    calls = []

    def knn(i, out):
        calls.append((i, out))
        return bm25_knn(index, tokens[i], exclude=np.isin(rf, list(out)))

    hybrid = nested_hybrid_rankings(cands, golds, folds, legs=["bm25"], vocabulary=3000, prior_depth=10)
    study = cross_validated_knn_fusion(hybrid, knn, golds, folds)
    # every kNN ranking was read without the question's own fold
    assert calls and all(folds[i] in out for i, out in calls)
    for i in range(len(ids)):
        own, twin = golds[i]
        partner = i ^ 1
        knn_ids = [a for a, _ in study.knn[i]]
        assert own not in knn_ids and own not in study.fused[i]  # its own row is unreachable
        assert (twin in knn_ids) == (folds[partner] != folds[i])  # the twin's row counts only from another fold
        assert "de:bgb:par:823" in knn_ids  # rows outside the study are always there
    # the hybrid that ranks a fold, and the training rows of the fusion that ranks it, never saw it
    for key, ranked in hybrid.items():
        assert all(folds[i] in key for i in ranked)
    assert set(study.weights) == set(folds)


def test_knn_fusion_study_leaks_when_the_mask_is_dropped():
    """The guard above can fail: a kNN leg that ignores the folds to leave out finds every
    question's own §."""
    from pipelines.retrieval.representations.search import bm25_knn

    _ids, folds, golds, tokens, index, cands = _knn_fixture()
    hybrid = nested_hybrid_rankings(cands, golds, folds, legs=["bm25"], vocabulary=3000, prior_depth=10)
    study = cross_validated_knn_fusion(hybrid, lambda i, out: bm25_knn(index, tokens[i]), golds, folds)
    assert all(g[0] in [a for a, _ in r] for r, g in zip(study.knn, golds))
