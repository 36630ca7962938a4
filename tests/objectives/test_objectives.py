"""Boosting objectives: gradients, hessians and leaf curvature against their formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize, minimize_scalar

from forestrank.objectives import (
    CumulativeSquaredError,
    LambdaRank,
    ListwiseSurrogate,
    PlackettLuce,
    QueryRMSE,
    Softmax,
    SquaredError,
    XENDCG,
    YetiRank,
    YetiRankPairwise,
    cumulative_probabilities,
    distinct_contexts,
)
from forestrank._ranking import normalized_gains
from forestrank.objectives._plackett_luce import top_rows_of

import reference


def boundaries_of(qid):
    return np.concatenate(([0], np.cumsum(np.unique(qid, return_counts=True)[1]))).astype(np.int64)


def exponential_gain(label):
    return 2.0**label - 1.0


def reference_lambdas(scores, labels, sigma, truncation, normalize, gain=exponential_gain):
    """Burges' lambdas for one query, written from the formulas (objectives docstring), with
    the gain ``gain(l)`` of a grade."""
    n = len(scores)
    order = sorted(range(n), key=lambda i: -scores[i])  # stable: ties keep input order
    rank = {doc: r for r, doc in enumerate(order)}
    ideal = sorted(labels, reverse=True)[:truncation]
    max_dcg = sum(gain(label) / np.log2(r + 2) for r, label in enumerate(ideal))
    g, h, total = np.zeros(n), np.zeros(n), 0.0
    spread = max(scores) != min(scores)
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j] or min(rank[i], rank[j]) >= truncation:
                continue
            delta = (gain(labels[i]) - gain(labels[j])) * abs(1 / np.log2(rank[i] + 2) - 1 / np.log2(rank[j] + 2)) / max_dcg
            if normalize and spread:
                delta /= 0.01 + abs(scores[i] - scores[j])
            with np.errstate(over="ignore"):  # rho is 0 where the exponential overflows
                rho = 1 / (1 + np.exp(sigma * (scores[i] - scores[j])))
            g[i] -= sigma * delta * rho
            g[j] += sigma * delta * rho
            h[i] += sigma**2 * delta * rho * (1 - rho)
            h[j] += sigma**2 * delta * rho * (1 - rho)
            total += 2 * sigma * delta * rho
    if normalize and total > 0:
        factor = np.log2(1 + total) / total
        g, h = g * factor, h * factor
    return g, h


GAINS = {
    "exp": exponential_gain,
    "linear": float,
    "table": lambda label: [0.0, 0.5, 0.5, 4.0, 10.0][label],  # LightGBM-style label_gain, grades 1 and 2 tied
}


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("truncation", [2, 30])
@pytest.mark.parametrize("gain", list(GAINS))
@pytest.mark.parametrize("score_scale", [1.0, 150.0])
def test_lambdarank_gradients_match_the_pair_formula(normalize, truncation, gain, score_scale):
    """Queries of 2 to 70 documents (the kernel's vectorised pair loop with and without a
    remainder; more queries than one thread takes with one set of scratch rows, a small
    one after a large one), their scores spanning a few units (each pair's logistic from
    the ranks' exponentials) or hundreds (one exponential per pair)."""
    rng = np.random.default_rng(0)
    sizes = [5, 70, 5, 23, 5, 16, *rng.integers(2, 12, size=14)]
    labels = np.concatenate([[0, 2, 1, 0, 3], rng.integers(0, 5, size=sum(sizes) - 5)]).astype(float)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    scores = rng.normal(size=len(qid)) * score_scale
    scores[2] = scores[3]  # a tie, ranked in input order
    label_gain = np.array([0.0, 0.5, 0.5, 4.0, 10.0]) if gain == "table" else gain
    objective = LambdaRank(sigma=1.5, truncation_level=truncation, normalize=normalize, label_gain=label_gain)
    objective.prepare(labels, boundaries_of(qid))
    g, h = np.empty(len(qid)), np.empty(len(qid))
    objective.gradients(scores, g, h)
    for q in range(len(sizes)):
        rows = qid == q
        expected_g, expected_h = reference_lambdas(
            scores[rows], labels[rows].astype(int), 1.5, truncation, normalize, GAINS[gain]
        )
        np.testing.assert_allclose(g[rows], expected_g, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h[rows], expected_h, rtol=1e-12, atol=1e-15)


def test_lambdarank_ranks_each_query_as_the_stable_sort_of_the_negated_scores_whatever_it_ranked_before():
    """The kernel re-sorts each query's last ranking for the new scores (an insertion sort,
    or the merge sort when too many rows would move): the ranking is numpy's stable
    argsort of -scores (ties in row order, NaN last), and the gradients are those of a
    fresh objective, bit for bit, after scores of every kind in any order."""
    rng = np.random.default_rng(0)
    sizes = [1, 2, 7, 120, 2_000]  # 2,000 rows in random order exceed the insertion sort's budget
    qid = np.repeat(np.arange(len(sizes)), sizes)
    labels = rng.integers(0, 5, size=len(qid)).astype(float)
    boundaries = boundaries_of(qid)
    labels[boundaries[:-1]] = 1.0  # every query has a relevant document (the kernel skips one without)
    base = rng.normal(size=len(qid))
    with_specials = np.round(base, 1)  # ties
    with_specials[rng.random(len(qid)) < 0.05] = np.nan
    with_specials[rng.random(len(qid)) < 0.05] = -0.0
    with_specials[rng.random(len(qid)) < 0.05] = 0.0
    with_specials[rng.random(len(qid)) < 0.02] = np.inf
    with_specials[rng.random(len(qid)) < 0.02] = -np.inf
    # Neighbours in the ranking swapped a few times per query: every query's insertion sort then
    # meets NaN and +-0 within its budget. Neighbouring rows swapped: NaN moves to other rows
    # (within the budget of the 120-row query).
    ranked_rows = np.concatenate([start + np.argsort(-with_specials[start:end], kind="stable") for start, end in zip(boundaries[:-1], boundaries[1:])])
    nudged, rows_swapped = with_specials.copy(), with_specials.copy()
    for k in rng.integers(0, len(qid) - 1, size=40):
        a, b = ranked_rows[k], ranked_rows[k + 1]
        nudged[[a, b]] = nudged[[b, a]]
        rows_swapped[[k, k + 1]] = rows_swapped[[k + 1, k]]
    steps = [
        base, base + 0.01 * rng.normal(size=len(qid)), with_specials, nudged, with_specials, rows_swapped,
        np.zeros(len(qid)), -base, base[::-1].copy(),
    ]  # fmt: skip
    kept = LambdaRank(truncation_level=30)
    kept.prepare(labels, boundaries)
    for scores in steps:
        g, h = np.empty(len(qid)), np.empty(len(qid))
        kept.gradients(scores, g, h)
        expected = np.concatenate([start + np.argsort(-scores[start:end], kind="stable") for start, end in zip(boundaries[:-1], boundaries[1:])])
        ranked = np.repeat(np.array(sizes) > 1, sizes)  # a single document is not ranked
        assert np.array_equal(kept._rankings[ranked], expected[ranked])
        fresh = LambdaRank(truncation_level=30)
        fresh.prepare(labels, boundaries)
        g_fresh, h_fresh = np.empty(len(qid)), np.empty(len(qid))
        fresh.gradients(scores, g_fresh, h_fresh)
        assert np.array_equal(g, g_fresh, equal_nan=True) and np.array_equal(h, h_fresh, equal_nan=True)


def test_lambdarank_hand_computed_pair():
    """Two documents, labels 1 and 0, scores 0 and 0 (tied, input order): the relevant one is
    ranked first, so |dNDCG| = (1 - 0)(1 - 1/log2 3) / 1 and rho = 1/2."""
    objective = LambdaRank(sigma=1.0, normalize=False)
    objective.prepare(np.array([1.0, 0.0]), np.array([0, 2]))
    g, h = np.empty(2), np.empty(2)
    objective.gradients(np.zeros(2), g, h)
    delta = 1 - 1 / np.log2(3)
    np.testing.assert_allclose(g, [-0.5 * delta, 0.5 * delta])
    np.testing.assert_allclose(h, [0.25 * delta, 0.25 * delta])


def test_lambdarank_gradients_are_the_derivatives_of_the_weighted_ranknet_cost():
    """With |dNDCG| frozen at the current ranking, the lambdas are dC/ds of
    C = sum_pairs |dNDCG_ij| log(1 + exp(-sigma (s_i - s_j))) (Burges 2010, Eq. 3 and §4),
    and the hessians its diagonal second derivatives: checked by finite differences."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 12).astype(float)
    scores = rng.normal(size=12)
    sigma = 0.7
    objective = LambdaRank(sigma=sigma, truncation_level=100, normalize=False)
    objective.prepare(labels, np.array([0, 12]))
    g, h = np.empty(12), np.empty(12)
    objective.gradients(scores, g, h)
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(12, int)
    rank[order] = np.arange(12)
    ideal = np.sort(labels)[::-1]
    max_dcg = ((2**ideal - 1) / np.log2(np.arange(12) + 2)).sum()

    def cost(s):
        total = 0.0
        for i in range(12):
            for j in range(12):
                if labels[i] > labels[j]:
                    weight = (2 ** labels[i] - 2 ** labels[j]) * abs(1 / np.log2(rank[i] + 2) - 1 / np.log2(rank[j] + 2)) / max_dcg
                    total += weight * np.log1p(np.exp(-sigma * (s[i] - s[j])))
        return total

    def difference(i, step):
        up, down = scores.copy(), scores.copy()
        up[i] += step
        down[i] -= step
        return cost(up), cost(down)

    for i in range(12):
        up, down = difference(i, 1e-5)
        assert g[i] == pytest.approx((up - down) / 2e-5, rel=1e-6, abs=1e-9)
        up, down = difference(i, 1e-3)  # a wider step: the second difference loses digits
        assert h[i] == pytest.approx((up - 2 * cost(scores) + down) / 1e-6, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("target", ["grade", "exp_gain"])
def test_squared_error_gradients_match_finite_differences(target):
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 5, 20).astype(float)
    objective = SquaredError(target)
    objective.prepare(labels, np.array([0, 20]))
    scores = rng.normal(size=20)
    g, h = np.empty(20), np.empty(20)
    objective.gradients(scores, g, h)
    step = 1e-4
    for i in range(20):
        up, down = scores.copy(), scores.copy()
        up[i] += step
        down[i] -= step
        assert g[i] == pytest.approx((objective.loss(up) - objective.loss(down)) / (2 * step), rel=1e-6)
        assert h[i] == pytest.approx((objective.loss(up) - 2 * objective.loss(scores) + objective.loss(down)) / step**2, rel=1e-4)
    expected_target = labels if target == "grade" else 2**labels - 1
    assert objective.initial_score() == pytest.approx(expected_target.mean())


@pytest.mark.parametrize("target", ["grade", "exp_gain"])
def test_query_rmse_is_least_squares_with_each_querys_offset_at_its_minimum(target):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 5, 23).astype(float)
    boundaries = np.array([0, 1, 9, 23])  # a one-document query fits exactly
    objective = QueryRMSE(target)
    objective.prepare(labels, boundaries)
    scores = rng.normal(size=23)
    targets = labels if target == "grade" else 2**labels - 1

    def loss_at_best_offsets(s):  # each query's offset found by a one-dimensional minimiser
        total = 0.0
        for start, end in zip(boundaries[:-1], boundaries[1:]):
            fit = minimize_scalar(lambda b: 0.5 * np.sum((s[start:end] + b - targets[start:end]) ** 2))
            total += fit.fun
        return total

    assert objective.loss(scores) == pytest.approx(loss_at_best_offsets(scores), rel=1e-9, abs=1e-12)
    g, h = np.empty(23), np.empty(23)
    objective.gradients(scores, g, h)
    step = 1e-5
    for i in range(23):
        up, down = scores.copy(), scores.copy()
        up[i] += step
        down[i] -= step
        assert g[i] == pytest.approx((loss_at_best_offsets(up) - loss_at_best_offsets(down)) / (2 * step), rel=1e-5, abs=1e-8)
    assert g[0] == 0.0  # the lone document's offset absorbs it
    np.testing.assert_array_equal(h, 1.0)
    shifted = scores + np.repeat([5.0, -2.0, 0.5], np.diff(boundaries))  # a constant per query changes nothing
    np.testing.assert_allclose(_gradients(objective, shifted)[0], g, rtol=0, atol=1e-12)
    assert objective.initial_score() == 0.0


def plackett_luce_problem(n_permutations, top_k=4, skip_tied_tail=False):
    labels = np.array([2, 0, 1, 1, 0, 0, 3, 1, 1, 0, 2, 0, 0, 1, 1, 1], float)
    qid = np.array([0] * 7 + [1] * 6 + [2] * 3)
    objective = PlackettLuce(top_k=top_k, n_permutations=n_permutations, skip_tied_tail=skip_tied_tail, random_state=0)
    objective.prepare(labels, boundaries_of(qid))
    scores = np.random.default_rng(4).normal(size=16)
    return objective, scores


def reference_plackett_luce_loss(scores, labels, permutation, boundaries, top_k, skip_tied_tail):
    """-sum_{i<k} log P(pi(i) chosen among pi(i:)), written directly with logsumexp."""
    from scipy.special import logsumexp

    total = 0.0
    for start, end in zip(boundaries[:-1], boundaries[1:]):
        order = permutation[start:end]
        depth = min(top_k, end - start)
        if skip_tied_tail:  # stop where only the query's lowest grade is left
            depth = min(depth, int((labels[start:end] > labels[start:end].min()).sum()))
        for i in range(depth):
            total -= scores[order[i]] - logsumexp(scores[order[i:]])
    return total


@pytest.mark.parametrize("skip_tied_tail", [False, True])
@pytest.mark.parametrize("n_permutations", [1, 3])
def test_plackett_luce_gradients_match_finite_differences(n_permutations, skip_tied_tail):
    objective, scores = plackett_luce_problem(n_permutations, skip_tied_tail=skip_tied_tail)
    expected = np.mean([
        reference_plackett_luce_loss(scores, objective.labels_, permutation, objective.query_boundaries_, 4, skip_tied_tail)
        for permutation in objective.permutations_
    ])  # fmt: skip
    assert objective.depths_.tolist() == ([4, 3, 0] if skip_tied_tail else [4, 4, 3])
    assert objective.loss(scores) == pytest.approx(expected, rel=1e-12)
    for permutation in objective.permutations_:  # grades descending, every query in its own rows
        for start, end in zip(objective.query_boundaries_[:-1], objective.query_boundaries_[1:]):
            assert sorted(permutation[start:end]) == list(range(start, end))
            assert np.all(np.diff(objective.labels_[permutation[start:end]]) <= 0)
    g, h = np.empty(16), np.empty(16)
    objective.gradients(scores, g, h)
    if skip_tied_tail:  # the single-grade query contributes nothing
        assert not g[13:].any() and not h[13:].any()
    for i in range(16):
        up, down = scores.copy(), scores.copy()
        up[i] += 1e-5
        down[i] -= 1e-5
        assert g[i] == pytest.approx((objective.loss(up) - objective.loss(down)) / 2e-5, rel=1e-6, abs=1e-9)
        up[i] += 1e-3 - 1e-5
        down[i] -= 1e-3 - 1e-5
        second = (objective.loss(up) - 2 * objective.loss(scores) + objective.loss(down)) / 1e-6
        assert h[i] == pytest.approx(second, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("scale", [1.0, 400.0])
@pytest.mark.parametrize("n_permutations", [1, 5])
def test_plackett_luce_gradients_equal_the_sum_over_contexts(n_permutations, scale):
    """The kernel carries its context sums along each permutation; summing every
    context's choice probabilities one by one in log space must give the same numbers,
    also when the scores spread so far that exp(s) overflows."""
    from scipy.special import logsumexp

    objective, scores = plackett_luce_problem(n_permutations, top_k=5)
    scores = scale * scores
    g, h = np.empty(16), np.empty(16)
    objective.gradients(scores, g, h)
    expected_g, expected_h = -objective.top_share_.copy(), np.zeros(16)
    boundaries = objective.query_boundaries_
    for permutation in objective.permutations_:
        for q, (start, end) in enumerate(zip(boundaries[:-1], boundaries[1:])):
            order = permutation[start:end]
            for i in range(objective.depths_[q]):
                probabilities = np.exp(scores[order[i:]] - logsumexp(scores[order[i:]]))
                expected_g[order[i:]] += probabilities / n_permutations
                expected_h[order[i:]] += probabilities * (1 - probabilities) / n_permutations
    assert np.isfinite(g).all() and np.isfinite(h).all()
    np.testing.assert_allclose(g, expected_g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, expected_h, rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    grades=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=40), min_size=1, max_size=20),
    n_permutations=st.integers(1, 5), top_k=st.integers(1, 8), skip_tied_tail=st.booleans(),
    scale=st.sampled_from([1.0, 400.0]), seed=st.integers(0, 2**32 - 1),
)
def test_plackett_luce_loss_gradients_and_curvature_are_the_sums_over_every_context(
    grades, n_permutations, top_k, skip_tied_tail, scale, seed
):  # fmt: skip
    """The kernels take each query's tail (every position past the modelled ones) as one
    sum shared by the permutations; enumerating every context of every permutation in log
    space, with queries longer than their depth, ties cut by the depth (so the
    permutations' tops differ) and rows outside the tree, must give the same loss,
    gradients, hessians and leaf curvature, also where exp(s) would overflow; with up to
    20 queries of different sizes, more than one chunk of the kernels' shared scratch."""
    from scipy.special import logsumexp

    labels = np.concatenate([np.array(g, float) for g in grades])
    boundaries = np.concatenate(([0], np.cumsum([len(g) for g in grades])))
    objective = PlackettLuce(top_k=top_k, n_permutations=n_permutations, skip_tied_tail=skip_tied_tail, random_state=seed)
    objective.prepare(labels, boundaries)
    rng = np.random.default_rng(seed)
    n = len(labels)
    scores = scale * rng.normal(size=n)
    row_leaf = rng.choice([-1, 1, 2, 4], size=n)
    weights = np.repeat(rng.uniform(0.5, 2.0, len(grades)), np.diff(boundaries))
    g, h = np.empty(n), np.empty(n)
    objective.gradients(scores, g, h)
    curvature = objective.leaf_curvature(scores, row_leaf, weights, 5)
    expected_g, expected_h, expected_curvature = -objective.top_share_.copy(), np.zeros(n), np.zeros(5)
    expected_loss = -(objective.top_share_ * scores).sum()
    for permutation in objective.permutations_:
        for q, (start, end) in enumerate(zip(boundaries[:-1], boundaries[1:])):
            order = permutation[start:end]
            for i in range(objective.depths_[q]):
                log_sum = logsumexp(scores[order[i:]])
                probabilities = np.exp(scores[order[i:]] - log_sum)
                expected_loss += log_sum / n_permutations
                expected_g[order[i:]] += probabilities / n_permutations
                expected_h[order[i:]] += probabilities * (1 - probabilities) / n_permutations
                for leaf in (1, 2, 4):
                    chosen = probabilities[row_leaf[order[i:]] == leaf].sum()
                    expected_curvature[leaf] += weights[start] * chosen * (1 - chosen) / n_permutations
    assert np.isfinite(g).all() and np.isfinite(h).all()
    np.testing.assert_allclose(g, expected_g, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, expected_h, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(curvature, expected_curvature, rtol=1e-8, atol=1e-12)
    assert objective.loss(scores) == pytest.approx(expected_loss, rel=1e-10, abs=1e-9 * scale)


def test_plackett_luce_with_several_permutations_is_their_average():
    objective, scores = plackett_luce_problem(n_permutations=4)
    g, h = np.empty(16), np.empty(16)
    objective.gradients(scores, g, h)
    singles = []
    for permutation in objective.permutations_:
        single = PlackettLuce(top_k=4, n_permutations=1, skip_tied_tail=False)
        single.prepare(objective.labels_, objective.query_boundaries_)
        single.permutations_ = permutation[None, :].copy()
        single.contexts_, single.context_boundaries_, single.top_share_ = distinct_contexts(
            single.permutations_, single.query_boundaries_, single.depths_
        )
        single.top_rows_, single.top_boundaries_, single.top_slot_ = top_rows_of(single.top_share_, single.query_boundaries_)
        gs, hs = np.empty(16), np.empty(16)
        single.gradients(scores, gs, hs)
        singles.append((single.loss(scores), gs, hs))
    assert objective.loss(scores) == pytest.approx(np.mean([loss for loss, _, _ in singles]), rel=1e-12)
    np.testing.assert_allclose(g, np.mean([gs for _, gs, _ in singles], axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, np.mean([hs for _, _, hs in singles], axis=0), rtol=1e-12, atol=1e-15)
    assert len({tuple(p) for p in objective.permutations_}) > 1  # ties were ordered differently


@given(
    grades=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=9), min_size=1, max_size=4),
    n_permutations=st.integers(1, 6), top_k=st.integers(1, 6), skip_tied_tail=st.booleans(), seed=st.integers(0, 2**32 - 1),
)
def test_distinct_contexts_are_the_distinct_prefix_sets_with_their_multiplicities(grades, n_permutations, top_k, skip_tied_tail, seed):
    """Table 3's compact storage against a brute-force count of the contexts as sets."""
    labels = np.concatenate([np.array(g, float) for g in grades])
    boundaries = np.concatenate(([0], np.cumsum([len(g) for g in grades])))
    objective = PlackettLuce(top_k=top_k, n_permutations=n_permutations, skip_tied_tail=skip_tied_tail, random_state=seed)
    objective.prepare(labels, boundaries)
    expected_share = np.zeros(len(labels))
    for q, (start, end) in enumerate(zip(boundaries[:-1], boundaries[1:])):
        counts = {}
        for permutation in objective.permutations_:
            for position in range(objective.depths_[q]):
                key = (position, frozenset(permutation[start + position : end].tolist()))
                counts[key] = counts.get(key, 0) + 1
                expected_share[permutation[start + position]] += 1 / n_permutations
        stored = objective.contexts_[objective.context_boundaries_[q] : objective.context_boundaries_[q + 1]]
        found = {}
        for p, position, multiplicity in stored:
            key = (position, frozenset(objective.permutations_[p, start + position : end].tolist()))
            assert key not in found  # each set stored once
            found[key] = multiplicity
        assert found == counts
    np.testing.assert_allclose(objective.top_share_, expected_share, atol=1e-12)


def test_distinct_contexts_share_the_grade_boundaries():
    """Permutations differ only inside tie groups: in queries graded (2, 1, 1, 0, 0, 0)
    and (1, 0, 0) with top_k=3, positions 0 and 1 hold the same set in every
    permutation and position 2 one of two sets, so 8 permutations need 4 distinct
    contexts per query instead of 24."""
    labels = np.array([2, 1, 1, 0, 0, 0, 1, 0, 0], float)
    objective = PlackettLuce(top_k=3, n_permutations=8, skip_tied_tail=False, random_state=0)
    objective.prepare(labels, np.array([0, 6, 9]))
    assert np.diff(objective.context_boundaries_).tolist() == [4, 4]
    assert objective.contexts_[:, 1].tolist() == [0, 1, 2, 2] * 2  # by permutation, then position
    multiplicities = objective.contexts_[:, 2].reshape(2, 4)
    assert (multiplicities[:, :2] == 8).all() and (multiplicities[:, 2:].sum(axis=1) == 8).all()
    assert objective.contexts_[:, 2].sum() == 2 * 3 * 8


def test_plackett_luce_leaf_curvature_is_the_second_derivative_along_the_leaf():
    """Eq. 9: moving every document of a leaf by the same step couples them inside each
    context, so L'' along the leaf is sum_C p'(1 - p'), not the sum of their hessians."""
    objective, scores = plackett_luce_problem(n_permutations=2)
    row_leaf = np.array([1, 2, 1, -1, 2, 1, 2, 2, 1, 1, -1, 2, 1, 2, 1, 1])
    curvature = objective.leaf_curvature(scores, row_leaf, np.ones(16), 3)
    g, h = np.empty(16), np.empty(16)
    objective.gradients(scores, g, h)
    for leaf in (1, 2):
        direction = (row_leaf == leaf).astype(float)
        step = 1e-3
        second = (objective.loss(scores + step * direction) - 2 * objective.loss(scores)
                  + objective.loss(scores - step * direction)) / step**2  # fmt: skip
        assert curvature[leaf] == pytest.approx(second, rel=1e-5)
        assert curvature[leaf] < h[row_leaf == leaf].sum()  # the coupling only removes curvature
    assert curvature[0] == 0.0


def test_plackett_luce_survives_huge_scores():
    objective, scores = plackett_luce_problem(n_permutations=1)
    g, h = np.empty(16), np.empty(16)
    objective.gradients(scores * 1e4, g, h)
    assert np.isfinite(g).all() and np.isfinite(h).all() and np.isfinite(objective.loss(scores * 1e4))


def per_output_finite_differences(objective, raw):
    """Central first and second differences of ``objective.loss`` in every entry of ``raw``
    (n_rows, n_outputs), one entry moved at a time."""
    first, second = np.empty_like(raw), np.empty_like(raw)
    for index in np.ndindex(raw.shape):
        up, down = raw.copy(), raw.copy()
        up[index] += 1e-5
        down[index] -= 1e-5
        first[index] = (objective.loss(up) - objective.loss(down)) / 2e-5
        up[index] += 1e-3 - 1e-5
        down[index] -= 1e-3 - 1e-5
        second[index] = (objective.loss(up) - 2 * objective.loss(raw) + objective.loss(down)) / 1e-6
    return first, second


def test_softmax_gradients_match_finite_differences():
    """McRank: g = p - onehot exactly; h is Friedman's K/(K-1) times the diagonal second derivative."""
    rng = np.random.default_rng(6)
    labels = np.array([0, 2, 1, 0, 4, 2, 0, 1], float)
    objective = Softmax()
    objective.prepare(labels, np.array([0, 8]))
    assert objective.n_outputs == 4 and objective.classes_.tolist() == [0, 1, 2, 4]
    raw = rng.normal(size=(8, 4))
    g, h = np.empty((8, 4)), np.empty((8, 4))
    objective.gradients(raw, g, h)
    first, second = per_output_finite_differences(objective, raw)
    np.testing.assert_allclose(g, first, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(h, 4 / 3 * second, rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match="two distinct grades"):
        Softmax().prepare(np.zeros(5), np.array([0, 5]))


def test_cumulative_gradients_match_finite_differences_and_targets_are_the_cumulative_indicators():
    """Mohan's classification boosting: output c regresses on [y <= c]; g and h are the
    squared loss's derivatives."""
    rng = np.random.default_rng(7)
    labels = np.array([0, 2, 1, 0, 4, 2, 0, 1], float)
    objective = CumulativeSquaredError()
    objective.prepare(labels, np.array([0, 8]))
    assert objective.n_outputs == 3 and objective.classes_.tolist() == [0, 1, 2, 4]
    np.testing.assert_array_equal(objective.targets_[:, 1], labels <= 1)
    np.testing.assert_array_equal(objective.initial_score(), [3 / 8, 5 / 8, 7 / 8])
    raw = rng.normal(size=(8, 3))
    g, h = np.empty((8, 3)), np.empty((8, 3))
    objective.gradients(raw, g, h)
    first, second = per_output_finite_differences(objective, raw)
    np.testing.assert_allclose(g, first, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(h, second, rtol=1e-5)
    with pytest.raises(ValueError, match="objective='cumulative' needs at least two distinct grades"):
        CumulativeSquaredError().prepare(np.ones(5), np.array([0, 5]))


@given(
    raw=hnp.arrays(
        np.float64, st.tuples(st.integers(1, 20), st.integers(1, 5)),
        elements=st.floats(-3, 3, allow_nan=False),
    ),
)  # fmt: skip
def test_cumulative_probabilities_are_non_negative_sum_to_one_and_follow_the_correction(raw):
    probabilities = cumulative_probabilities(raw)
    assert probabilities.shape == (raw.shape[0], raw.shape[1] + 1)
    assert probabilities.min() >= 0.0
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(probabilities, reference.cumulative_probabilities(raw), rtol=0, atol=1e-12)


# --- the consistent list-wise surrogates (PLRank paper §3.4; Ravikumar, Tewari & Yang 2011) ---

SURROGATES = {
    "c-mart": lambda: SquaredError("normalized_gain"),
    "cosine": lambda: ListwiseSurrogate("cosine", consistent=False),
    "c-cosine": lambda: ListwiseSurrogate("cosine", consistent=True),
    "kl": lambda: ListwiseSurrogate("kl", consistent=False),
    "c-kl": lambda: ListwiseSurrogate("kl", consistent=True),
}


def _prepared(make, labels, qid):
    objective = make()
    objective.prepare(np.asarray(labels, dtype=float), boundaries_of(np.asarray(qid)))
    return objective


def _gradients(objective, scores):
    g, h = np.empty(len(scores)), np.empty(len(scores))
    objective.gradients(np.ascontiguousarray(scores, dtype=float), g, h)
    return g, h


def _finite_differences(function, scores, step=1e-6):
    out = np.empty(len(scores))
    for i in range(len(scores)):
        up, down = scores.copy(), scores.copy()
        up[i] += step
        down[i] -= step
        out[i] = (function(up) - function(down)) / (2 * step)
    return out


@pytest.mark.parametrize("name", [*SURROGATES, "lambdarank"])
def test_gradients_are_the_derivatives_of_the_loss(name):
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 5, 40).astype(float)
    labels[30:35] = 0.0  # one query without gain
    qid = np.repeat(np.arange(8), 5)
    make = SURROGATES.get(name, lambda: LambdaRank(sigma=1.0, truncation_level=30, normalize=False))
    objective = _prepared(make, labels, qid)
    scores = rng.normal(size=40) + 1.0
    gradients, hessians = _gradients(objective, scores)
    np.testing.assert_allclose(gradients, _finite_differences(objective.loss, scores), rtol=1e-5, atol=1e-8)
    assert np.all(hessians >= 0)
    if name in ("kl", "c-kl", "c-mart"):  # their hessians are the exact diagonal
        diagonal = [_finite_differences(lambda s, i=i: _gradients(objective, s)[0][i], scores)[i] for i in range(40)]
        np.testing.assert_allclose(hessians, diagonal, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize(
    ("label_gain", "gains"),
    [("exp", [3.0, 0.0, 1.0, 0.0, 0.0]), ("linear", [2.0, 0.0, 1.0, 0.0, 0.0]), (np.array([0.0, 5.0, 6.0]), [6.0, 0, 5.0, 0, 0])],
)
def test_normalized_gains_divide_by_the_ideal_dcg_of_the_whole_list(label_gain, gains):
    labels = np.array([2.0, 0.0, 1.0, 0.0, 0.0])
    gains = np.array(gains)
    ideal = gains[0] / np.log2(2) + gains[2] / np.log2(3)
    np.testing.assert_allclose(
        normalized_gains(labels, np.array([0, 3, 5]), "dcg", label_gain), np.r_[gains[:3] / ideal, 0, 0]
    )
    np.testing.assert_allclose(
        normalized_gains(labels, np.array([0, 5]), "l2", label_gain), gains / np.sqrt((gains**2).sum())
    )
    np.testing.assert_allclose(normalized_gains(labels, np.array([0, 5]), "sum", label_gain), gains / gains.sum())


@pytest.mark.parametrize("name", SURROGATES)
def test_the_surrogates_take_their_targets_from_label_gain(name):
    """A gain table equal to ``2**l - 1`` gives the exponential targets; a linear gain the
    targets of the grades."""
    labels = np.array([2.0, 0.0, 1.0, 3.0, 0.0, 1.0])
    boundaries = np.array([0, 3, 6])
    kind, consistent = name.removeprefix("c-"), name.startswith("c-")
    made = {
        gain: (
            SquaredError("normalized_gain", gain) if name == "c-mart" else ListwiseSurrogate(kind, consistent, gain)
        )
        for gain in ("exp", "linear")
    }
    made["table"] = (
        SquaredError("normalized_gain", np.array([0.0, 1, 3, 7]))
        if name == "c-mart"
        else ListwiseSurrogate(kind, consistent, np.array([0.0, 1, 3, 7]))
    )
    for objective in made.values():
        objective.prepare(labels, boundaries)
    np.testing.assert_allclose(made["table"].targets_, made["exp"].targets_, rtol=1e-15)
    norm = "dcg" if consistent or name == "c-mart" else ("l2" if kind == "cosine" else "sum")
    np.testing.assert_allclose(made["linear"].targets_, normalized_gains(labels, boundaries, norm, "linear"))
    assert not np.allclose(made["linear"].targets_, made["exp"].targets_)


def test_mart_regresses_on_label_gain():
    labels = np.array([2.0, 0.0, 1.0, 3.0])
    for label_gain, expected in (("exp", 2.0**labels - 1), ("linear", labels), (np.array([0.0, 2, 2, 9]), [2, 0, 2, 9])):
        objective = SquaredError("exp_gain", label_gain)
        objective.prepare(labels, np.array([0, 4]))
        np.testing.assert_array_equal(objective.targets_, expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=12).filter(lambda g: len(set(g)) > 1))
def test_each_consistent_loss_is_minimised_by_scores_that_order_documents_by_grade(grades):
    labels = np.array(grades, dtype=float)
    for name in ("c-mart", "c-cosine", "c-kl"):
        objective = _prepared(SURROGATES[name], labels, np.zeros(len(labels)))
        start = np.full(len(labels), objective.initial_score())
        result = minimize(objective.loss, start, jac=lambda s: _gradients(objective, s)[0], method="L-BFGS-B")
        scores = result.x
        higher, lower = np.nonzero(labels[:, None] > labels[None, :])
        assert np.all(scores[higher] > scores[lower]), (name, scores)


def test_every_objective_has_a_loss_and_the_estimator_fits_each_new_one():
    from forestrank import LambdaMART, make_ranking, ndcg_score

    X, y, qid = make_ranking(n_queries=60, docs_per_query=15, n_features=6, random_state=0)
    for objective in ("c-mart", "cosine", "c-cosine", "kl", "c-kl", "xendcg", "yetirank", "queryrmse"):
        model = LambdaMART(n_estimators=20, objective=objective, min_samples_leaf=5, random_state=0).fit(X, y, qid=qid)
        assert ndcg_score(y, model.predict(X), qid, k=10) > 0.8, objective  # every loss learns the training data
    for make in (*SURROGATES.values(), LambdaRank, Softmax, CumulativeSquaredError, SquaredError, QueryRMSE, XENDCG, YetiRank, lambda: PlackettLuce(top_k=5)):
        objective = _prepared(make, y, qid)
        raw = np.tile(np.atleast_1d(objective.initial_score()), (len(y), 1))
        assert np.isfinite(objective.loss(raw if objective.n_outputs > 1 else raw[:, 0]))


# --- XE-NDCG (Bruch, Wang, Bendersky & Najork 2020) ---------------------------------------


def _reference_xendcg(scores, phi):
    """One query's loss, gradient ``rho - p`` and the corrected gradient ``D (x0 + x1 + x2)``,
    ``x`` the Neumann series of ``H^{-1} g`` around ``D = diag(H)``, with matrices."""
    rho = np.exp(scores - scores.max())
    rho /= rho.sum()
    p = phi / phi.sum()
    loss = -(p * np.log(rho)).sum()
    g = rho - p
    H = np.diag(rho) - np.outer(rho, rho)
    D = np.diag(np.diag(H))
    M = np.linalg.inv(D) @ (H - D)
    corrected = D @ (np.eye(len(g)) - M + M @ M) @ np.linalg.inv(D) @ g
    return loss, g, corrected, np.diag(H)


@pytest.mark.parametrize(
    "label_gain",
    # the last: subnormal gains, whose per-query factor 2**1026 would overflow
    ["exp", "linear", np.array([0.0, 1.0, 1.0, 5.0, 9.0]), np.array([0.0, 1.0, 3.0, 7.0, 15.0]) * 2.0**-1030],
)
def test_xendcg_gradients_are_the_series_of_the_inverse_hessian_on_the_cross_entropys_gradient(label_gain):
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 5, 21).astype(float)
    boundaries = np.array([0, 6, 7, 21])  # a one-document query has no gradient
    scores = rng.normal(size=21)
    objective = XENDCG(label_gain, random_state=0)
    objective.prepare(labels, boundaries)
    g, h = _gradients(objective, scores)
    gammas = objective.gammas_  # this call's noise
    if isinstance(label_gain, str):
        gain = {"exp": lambda l: 2.0**l - 1, "linear": lambda l: l}[label_gain]
    else:
        gain = lambda l: label_gain[l.astype(int)]  # noqa: E731
    total = 0.0
    for start, end in zip(boundaries[:-1], boundaries[1:]):
        rows = slice(start, end)
        if end - start < 2:
            assert g[rows].tolist() == [0.0] and h[rows].tolist() == [0.0]
            continue
        phi = gain(labels[rows]) + 1.0 - gammas[rows]  # the paper's 2^l - gamma for the exponential gain
        loss, first, corrected, diagonal = _reference_xendcg(scores[rows], phi)
        total += loss
        np.testing.assert_allclose(g[rows], corrected, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(h[rows], diagonal, rtol=1e-12)
    assert objective.loss(scores) == pytest.approx(total, rel=1e-12)
    # The cross entropy's gradient, rho - p, is the derivative of the loss.
    first = np.concatenate(
        [_reference_xendcg(scores[a:b], gain(labels[a:b]) + 1.0 - gammas[a:b])[1] if b - a > 1 else [0.0]
         for a, b in zip(boundaries[:-1], boundaries[1:])]
    )  # fmt: skip
    np.testing.assert_allclose(_finite_differences(objective.loss, scores), first, rtol=1e-6, atol=1e-9)


def test_xendcg_draws_new_noise_every_iteration_from_its_seed():
    labels = np.array([0.0, 1.0, 2.0, 0.0, 3.0])
    boundaries = np.array([0, 5])
    first, second = XENDCG(random_state=7), XENDCG(random_state=7)
    for objective in (first, second):
        objective.prepare(labels, boundaries)
    scores = np.zeros(5)
    g1, _ = _gradients(first, scores)
    g2, _ = _gradients(first, scores)
    assert not np.array_equal(g1, g2)  # fresh gamma
    np.testing.assert_array_equal(_gradients(second, scores)[0], g1)  # same seed, same stream
    assert np.all((first.gammas_ >= 0) & (first.gammas_ < 1))


def test_xendcg_is_finite_when_one_document_takes_all_the_mass():
    objective = XENDCG()
    objective.prepare(np.array([3.0, 0.0, 1.0]), np.array([0, 3]))
    g, h = _gradients(objective, np.array([900.0, 0.0, -5.0]))
    assert np.isfinite(g).all() and np.isfinite(h).all()


# --- LambdaRank's sampled pairs (XGBoost's lambdarank_pair_method="mean") ------------------


def _lambdarank_gradients_of(objective, labels, boundaries, scores):
    objective.prepare(labels, boundaries)
    return _gradients(objective, scores)


def test_two_documents_draw_each_other_every_time():
    """With one document per grade each draw is forced: ``k`` draws per document make the
    pair count ``2k`` times, against once among the top-k pairs."""
    labels, boundaries, scores = np.array([0.0, 2.0]), np.array([0, 2]), np.array([0.3, -0.4])
    topk = _lambdarank_gradients_of(LambdaRank(normalize=False), labels, boundaries, scores)
    for k in (1, 3):
        mean = _lambdarank_gradients_of(
            LambdaRank(normalize=False, pair_method="mean", pairs_per_document=k, random_state=0), labels, boundaries,
            scores,
        )  # fmt: skip
        np.testing.assert_allclose(mean[0], 2 * k * topk[0], rtol=1e-13)
        np.testing.assert_allclose(mean[1], 2 * k * topk[1], rtol=1e-13)
        normalized = _lambdarank_gradients_of(
            LambdaRank(pair_method="mean", pairs_per_document=k, random_state=0), labels, boundaries, scores
        )
        # XGBoost's normalisation of sampled pairs: |dNDCG| over 0.01 + |gap|, the query over k.
        np.testing.assert_allclose(normalized[0], 2 * topk[0] / (0.01 + 0.7), rtol=1e-13)


def test_sampled_pairs_average_to_every_document_against_every_other_grade():
    """Each document's ``k`` partners are uniform over the query's other grades: with many
    draws the gradients approach their expectation, every such pair weighed by
    ``k / (documents of other grades)`` from each of its two ends, with the ideal DCG of
    the whole list (Burges' pair formula written out)."""
    labels = np.array([0.0, 2.0, 1.0, 0.0, 2.0, 3.0, 0.0])
    scores = np.array([0.5, -0.2, 0.1, 0.9, 0.0, -1.0, 0.4])
    k = 4000
    g, h = _lambdarank_gradients_of(
        LambdaRank(normalize=False, pair_method="mean", pairs_per_document=k, random_state=1), labels,
        np.array([0, 7]), scores,
    )  # fmt: skip
    rank = np.empty(7, int)
    rank[np.argsort(-scores, kind="stable")] = np.arange(7)
    max_dcg = ((2 ** np.sort(labels)[::-1] - 1) / np.log2(np.arange(7) + 2)).sum()
    others = np.array([(labels != label).sum() for label in labels])
    expected_g, expected_h = np.zeros(7), np.zeros(7)
    for i in range(7):
        for j in range(7):
            if labels[i] > labels[j]:
                delta = (2 ** labels[i] - 2 ** labels[j]) * abs(1 / np.log2(rank[i] + 2) - 1 / np.log2(rank[j] + 2))
                delta /= max_dcg
                rho = 1 / (1 + np.exp(scores[i] - scores[j]))
                weight = k / others[i] + k / others[j]
                expected_g[i] -= weight * delta * rho
                expected_g[j] += weight * delta * rho
                expected_h[[i, j]] += weight * delta * rho * (1 - rho)
    np.testing.assert_allclose(g, expected_g, rtol=0.05, atol=0.02 * np.abs(expected_g).max())
    np.testing.assert_allclose(h, expected_h, rtol=0.05, atol=0.02 * np.abs(expected_h).max())


def test_sampled_pairs_are_redrawn_every_iteration_and_reproducible():
    labels = np.array([0.0, 2.0, 1.0, 0.0, 2.0, 3.0, 0.0, 1.0])
    boundaries, scores = np.array([0, 4, 8]), np.linspace(-1, 1, 8)
    first, second = (LambdaRank(pair_method="mean", pairs_per_document=2, random_state=5) for _ in range(2))
    a1 = _lambdarank_gradients_of(first, labels, boundaries, scores)[0]
    a2 = _gradients(first, scores)[0]
    assert not np.array_equal(a1, a2)
    np.testing.assert_array_equal(_lambdarank_gradients_of(second, labels, boundaries, scores)[0], a1)
    # loss() counts the pairs of the last gradients call: its derivative is their direction.
    unnormalized = LambdaRank(normalize=False, pair_method="mean", pairs_per_document=2, random_state=5)
    g, _ = _lambdarank_gradients_of(unnormalized, labels, boundaries, scores)
    np.testing.assert_allclose(g, _finite_differences(unnormalized.loss, scores), rtol=1e-5, atol=1e-8)


# --- LambdaRank with MAP and ERR deltas (Burges 2010, §6; XGBoost's rank:map) ---------------


def _swapped_metric(metric, labels, order, a, b, gain, max_grade):
    """AP or ERR (``forestrank.metrics``, input-order ties) of the ranking ``order`` with the
    documents at ranks ``a`` and ``b`` swapped."""
    from forestrank.metrics import average_precision, err_score

    swapped = order.copy()
    swapped[[a, b]] = swapped[[b, a]]
    scores = np.empty(len(labels))
    scores[swapped] = -np.arange(len(labels), dtype=float)
    qid = np.zeros(len(labels))
    if metric == "map":
        return average_precision(labels, scores, qid, ties="input_order")[0]
    return err_score(labels, scores, qid, max_grade=max_grade, gain=gain, ties="input_order", per_query=True)[0]


@pytest.mark.parametrize(("metric", "label_gain"), [("map", "exp"), ("err", "exp"), ("err", "linear"), ("err", np.array([0.0, 1, 1, 6, 9]))])
@pytest.mark.parametrize("truncation", [3, 30])
def test_map_and_err_lambdas_weigh_each_pair_by_the_metrics_change_on_a_swap(metric, label_gain, truncation):
    """The pair weights against AP and ERR recomputed by ``forestrank.metrics`` on the
    swapped ranking, each over the query's ideal (AP: its relevant count is in AP; ERR:
    the ERR of the ideal order)."""
    from forestrank.metrics import err_score

    rng = np.random.default_rng(8)
    labels = np.array([0, 2, 1, 0, 4, 1, 0, 3, 0, 0, 4, 1, 2, 0, 0, 0, 0, 0], float)
    boundaries = np.array([0, 9, 15, 18])  # the last query has no relevant document
    scores = rng.normal(size=18)
    objective = LambdaRank(sigma=1.3, truncation_level=truncation, normalize=False, label_gain=label_gain, metric=metric)
    objective.prepare(labels, boundaries)
    g, h = _gradients(objective, scores)
    max_grade = labels.max()
    for start, end in zip(boundaries[:-1], boundaries[1:]):
        rows = slice(start, end)
        y, s = labels[rows], scores[rows]
        n = end - start
        expected_g, expected_h = np.zeros(n), np.zeros(n)
        if y.max() > 0:
            order = np.argsort(-s, kind="stable")
            before = _swapped_metric(metric, y, order, 0, 0, label_gain, max_grade)
            scale = 1.0
            if metric == "err":
                scale = err_score(y, y, np.zeros(n), max_grade=max_grade, gain=label_gain, per_query=True)[0]
            for i in range(min(n - 1, truncation)):
                for j in range(i + 1, n):
                    high, low = order[i], order[j]
                    if y[high] == y[low]:
                        continue
                    if y[high] < y[low]:
                        high, low = low, high
                    change = abs(_swapped_metric(metric, y, order, i, j, label_gain, max_grade) - before) / scale
                    rho = 1 / (1 + np.exp(1.3 * (s[high] - s[low])))
                    expected_g[high] -= 1.3 * change * rho
                    expected_g[low] += 1.3 * change * rho
                    expected_h[[high, low]] += 1.3**2 * change * rho * (1 - rho)
        np.testing.assert_allclose(g[rows], expected_g, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(h[rows], expected_h, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(g, _finite_differences(objective.loss, scores), rtol=1e-5, atol=1e-8)


def test_err_lambdas_survive_zero_gains_and_grades_whose_stop_probability_rounds_to_one():
    boundaries = np.array([0, 4, 8])
    scores = np.array([0.3, -0.1, 0.2, 0.0, 0.5, 0.1, -0.3, 0.2])
    # A table that gives grade 1 nothing: the first query's ideal ERR is 0, so it has no lambdas.
    labels = np.array([1.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0])
    objective = LambdaRank(label_gain=np.array([0.0, 0.0, 1.0]), metric="err")
    g, h = _lambdarank_gradients_of(objective, labels, boundaries, scores)
    assert np.all(g[:4] == 0.0) and np.isfinite(g).all() and np.abs(g[4:]).sum() > 0
    # Grade 60 beside grade 0: R rounds to 1 in float64 with the exponential gain.
    labels = np.array([60.0, 0.0, 3.0, 0.0, 60.0, 59.0, 0.0, 1.0])
    g, h = _lambdarank_gradients_of(LambdaRank(metric="err"), labels, boundaries, scores)
    assert np.isfinite(g).all() and np.isfinite(h).all() and np.abs(g).sum() > 0


def test_err_lambdas_stay_exact_behind_a_document_that_almost_surely_stops_the_user():
    """Grades 88, 86, 60, 42: behind the first document the reach probabilities are below
    2**-52, so the swaps' middle terms, a difference of prefix sums near 1, were rounding
    noise scaled by 1 / (1 - R): two documents' lambdas were 20% off. Each pair's weight
    against ERR recomputed on the swapped ranking (``forestrank.metrics``)."""
    from forestrank.metrics import err_score

    labels, scores = np.array([88.0, 86.0, 60.0, 42.0]), np.array([3.0, 2.0, 1.0, 0.0])
    objective = LambdaRank(metric="err", normalize=False)
    g, _ = _lambdarank_gradients_of(objective, labels, np.array([0, 4]), scores)
    order, expected = np.arange(4), np.zeros(4)
    before = _swapped_metric("err", labels, order, 0, 0, "exp", labels.max())
    ideal = err_score(labels, labels, np.zeros(4), per_query=True)[0]
    for i in range(4):
        for j in range(i + 1, 4):
            change = abs(_swapped_metric("err", labels, order, i, j, "exp", labels.max()) - before) / ideal
            expected[i] -= change / (1 + np.exp(scores[i] - scores[j]))
            expected[j] += change / (1 + np.exp(scores[i] - scores[j]))
    np.testing.assert_allclose(g, expected, rtol=1e-9)


def test_lambdaranks_calls_from_python_share_one_compiled_signature():
    """Gradients and losses of top-k and sampled pairs, NDCG, MAP and ERR, with and without
    click positions: Python passes what it does not ask for as empty arrays, so the
    kernel compiles once for all of them (seven signatures took about 50 s cold), and
    each asks for what it gets (the positions' loss sums and the losses are filled)."""
    from forestrank.objectives import _lambdarank

    labels = np.array([2.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    boundaries, scores = np.array([0, 4, 7]), np.linspace(1, -1, 7)
    for parameters in ({}, {"metric": "map"}, {"metric": "err"}, {"pair_method": "mean", "random_state": 0}):
        objective = LambdaRank(**parameters)
        _lambdarank_gradients_of(objective, labels, boundaries, scores)
        assert objective.loss(scores) > 0
    clicked = LambdaRank()
    clicked.prepare(labels, boundaries)
    clicked.show_positions(np.array([1, 2, 3, 4, 1, 2, 3]), np.full((2, 4), 0.5))
    _gradients(clicked, scores)
    assert clicked.position_loss_sums(np.ones(2)).sum() > 0
    assert len(_lambdarank._lambdarank_gradients_from_python.signatures) == 1


def test_the_objectives_check_their_gain():
    labels, boundaries = np.array([2.0, 0.0, 1.0]), np.array([0, 3])
    listed = LambdaRank(label_gain=[0, 10, 20])
    listed.prepare(labels, boundaries)
    np.testing.assert_array_equal(listed.gains_, np.array([20.0, 0.0, 10.0]) / 32)  # the query's scale: 2**-5
    for bad, match in (("Linear", "label_gain must be 'exp', 'linear'"), ([0, 1], "label_gain gives gains to the grades 0 to 1")):
        with pytest.raises(ValueError, match=match):
            LambdaRank(label_gain=bad).prepare(labels, boundaries)


def test_errs_largest_grade_is_at_least_the_labels_largest():
    """``max_grade`` (a partitioned fit's largest grade) below the labels' would give stop
    probabilities above 1."""
    labels, boundaries = np.array([0.0, 3.0, 1.0, 2.0]), np.array([0, 2, 4])
    with pytest.raises(ValueError, match=r"max_grade must be a finite number >= the largest label \(3\)"):
        LambdaRank(metric="err", max_grade=2.0).prepare(labels, boundaries)
    with pytest.raises(ValueError, match="label_gain gives gains to the grades 0 to 3"):
        LambdaRank(metric="err", label_gain=np.array([0.0, 1.0, 3.0, 7.0]), max_grade=4.0).prepare(labels, boundaries)
    low, high = LambdaRank(metric="err"), LambdaRank(metric="err", max_grade=4.0)
    low.prepare(labels, boundaries)
    high.prepare(labels, boundaries)
    # Chapelle et al.'s R(l) = (2^l - 1) / 2^g_max
    np.testing.assert_array_equal(low.stop_probabilities_, (2.0**labels - 1.0) / 2.0**3)
    np.testing.assert_array_equal(high.stop_probabilities_, (2.0**labels - 1.0) / 2.0**4)


# --- YetiRank (Gulin, Kuralenok & Pavlov 2011; CatBoost's constants) -----------------------


def _reference_yetirank(scores, labels, boundaries, uniforms, decay):
    """The pairs of every noisy ranking and their loss, gradient and hessian, pair by pair."""
    n_permutations = len(uniforms)
    g, h, loss = np.zeros(len(scores)), np.zeros(len(scores)), 0.0
    for start, end in zip(boundaries[:-1], boundaries[1:]):
        for u in uniforms:
            noisy = scores[start:end] + np.log(u[start:end] / (1.0 - u[start:end]))
            ranking = start + sorted(range(end - start), key=lambda i: -noisy[i])  # stable: ties keep their order
            for k in range(1, end - start):
                a, b = ranking[k - 1], ranking[k]
                if labels[a] == labels[b]:
                    continue
                i, j = (a, b) if labels[a] > labels[b] else (b, a)
                w = 0.15 * decay ** (k - 1) * abs(labels[a] - labels[b]) / n_permutations
                p = 1.0 / (1.0 + np.exp(scores[i] - scores[j]))
                loss += w * np.log1p(np.exp(scores[j] - scores[i]))
                g[i] -= w * p
                g[j] += w * p
                h[i] += w * p * (1 - p)
                h[j] += w * p * (1 - p)
    return loss, g, h


@pytest.mark.parametrize("decay", [0.85, 0.5])
def test_yetirank_gradients_are_the_pair_formula_over_the_neighbours_of_each_noisy_ranking(decay):
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 30).astype(float)
    boundaries = np.array([0, 12, 13, 30])  # a one-document query has no pair
    scores = rng.normal(size=30)
    objective = YetiRank(n_permutations=4, decay=decay, random_state=0)
    objective.prepare(labels, boundaries)
    g, h = _gradients(objective, scores)
    loss, expected_g, expected_h = _reference_yetirank(scores, labels, boundaries, objective.uniforms_, decay)
    np.testing.assert_allclose(g, expected_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, expected_h, rtol=1e-12, atol=1e-15)
    assert objective.loss(scores) == pytest.approx(loss, rel=1e-12)
    # At the drawn rankings, the gradients are the derivatives of the loss.
    np.testing.assert_allclose(_finite_differences(objective.loss, scores), g, rtol=1e-5, atol=1e-9)
    assert g[12] == 0.0 and h[12] == 0.0
    assert g.sum() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow  # compiles the pair kernels: with the slow tests
def test_yetirank_pairwise_keeps_each_distinct_neighbour_pair_once_with_its_summed_weight():
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 3, 30).astype(float)
    boundaries = np.array([0, 12, 13, 30])
    scores = rng.normal(size=30)
    objective = YetiRankPairwise(n_permutations=6, random_state=1)
    objective.prepare(labels, boundaries)
    g, h = _gradients(objective, scores)
    winners, losers, weights, pair_boundaries = objective.pairs_
    expected = {}  # (winner, loser) -> weight, from the same rankings pair by pair
    for start, end in zip(boundaries[:-1], boundaries[1:]):
        for u in objective.uniforms_:
            noisy = scores[start:end] + np.log(u[start:end] / (1.0 - u[start:end]))
            ranking = start + sorted(range(end - start), key=lambda i: -noisy[i])
            for k in range(1, end - start):
                a, b = ranking[k - 1], ranking[k]
                if labels[a] != labels[b]:
                    key = (a, b) if labels[a] > labels[b] else (b, a)
                    expected[key] = expected.get(key, 0.0) + 0.15 * 0.85 ** (k - 1) * abs(labels[a] - labels[b]) / 6
    assert sorted(zip(winners.tolist(), losers.tolist())) == sorted(expected)
    assert len(set(zip(winners.tolist(), losers.tolist()))) == len(winners)
    np.testing.assert_allclose(weights, [expected[key] for key in zip(winners.tolist(), losers.tolist())], rtol=1e-12)
    query_of_pair = np.searchsorted(boundaries, winners, side="right") - 1
    np.testing.assert_array_equal(np.searchsorted(pair_boundaries, np.arange(len(winners)), side="right") - 1, query_of_pair)
    # The merged pairs give YetiRank's gradients of the same rankings.
    _, expected_g, expected_h = _reference_yetirank(scores, labels, boundaries, objective.uniforms_, 0.85)
    np.testing.assert_allclose(g, expected_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, expected_h, rtol=1e-12, atol=1e-15)
    (leaf_winners, _, _, _), leaf_g = objective.leaf_pairs(scores)  # a new draw
    assert not np.array_equal(leaf_g, g) and len(leaf_winners) > 0


def test_yetirank_draws_new_rankings_every_iteration_from_its_seed():
    labels = np.array([0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0])
    boundaries = np.array([0, 7])
    first, second = YetiRank(random_state=3), YetiRank(random_state=3)
    for objective in (first, second):
        objective.prepare(labels, boundaries)
    scores = np.zeros(7)
    g1, _ = _gradients(first, scores)
    g2, _ = _gradients(first, scores)
    assert not np.array_equal(g1, g2)
    np.testing.assert_array_equal(_gradients(second, scores)[0], g1)
    assert first.uniforms_.shape == (10, 7)


@pytest.mark.parametrize("rows_at_once", [7, 65536])
def test_weighted_target_sums_add_row_after_row_wherever_the_rows_are_cut(monkeypatch, rows_at_once):
    """The sums are those of one addition per row in row order (the scalar loop below),
    bit for bit, however many rows are held at once and wherever a fit over partitions
    cuts them, each part carrying the sums before it."""
    from forestrank.objectives import _base

    monkeypatch.setattr(_base, "_SUMMED_ROWS_AT_ONCE", rows_at_once)
    rng = np.random.default_rng(0)
    targets, weights = rng.normal(size=(50, 2)) * 1e3, rng.uniform(0.1, 3.0, 50)
    expected = np.zeros(3)
    for row in range(50):
        expected[:2] += targets[row] * weights[row]
        expected[2] += weights[row]
    np.testing.assert_array_equal(_base.weighted_target_sums(targets, weights), expected)
    carried = None
    for start, stop in [(0, 13), (13, 13), (13, 31), (31, 50)]:
        carried = _base.weighted_target_sums(targets[start:stop], weights[start:stop], carried)
    np.testing.assert_array_equal(carried, expected)
    sums = _base.weighted_target_sums(targets[:, 0], weights)
    np.testing.assert_array_equal(sums, expected[[0, 2]])


# --- shift invariance: what a tree that cannot split may step -------------------------------

ONE_OUTPUT_OBJECTIVES = {
    **SURROGATES,
    "lambdarank": LambdaRank,
    "lambdarank-mean": lambda: LambdaRank(pair_method="mean", random_state=0),
    "mart": SquaredError,
    "queryrmse": QueryRMSE,
    "xendcg": lambda: XENDCG(random_state=0),
    "yetirank": lambda: YetiRank(random_state=0),
    "yetirank-pairwise": lambda: YetiRankPairwise(random_state=0),
    "plackett-luce": lambda: PlackettLuce(top_k=5, random_state=0),
}


@pytest.mark.parametrize(
    "name",
    [  # YetiRankPairwise's pair kernels: no other quick test compiles them
        pytest.param(name, marks=pytest.mark.slow) if name == "yetirank-pairwise" else name
        for name in ONE_OUTPUT_OBJECTIVES
    ],
)
def test_shift_invariant_says_whether_a_constant_per_query_changes_loss_or_gradients(name):
    """The boosting loop gives a tree that cannot split a step of 0 where ``shift_invariant``
    holds (``BaseBoostingRanker._store_values``): sound only if adding one constant to a
    query's scores changes neither its loss nor its gradients, and for the others a
    one-leaf tree's step is part of the fit."""
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(6), 7)
    labels = rng.integers(0, 4, len(qid)).astype(float)
    scores = rng.normal(size=len(qid))
    shifted = scores + np.repeat(rng.uniform(-3.0, 3.0, 6), 7)
    make = ONE_OUTPUT_OBJECTIVES[name]
    at_scores, at_shifted = _prepared(make, labels, qid), _prepared(make, labels, qid)  # the same draws
    gradients, shifted_gradients = _gradients(at_scores, scores), _gradients(at_shifted, shifted)
    unchanged = all(np.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in zip(gradients, shifted_gradients))
    unchanged &= np.isclose(at_scores.loss(scores), at_shifted.loss(shifted), rtol=1e-9)
    assert at_scores.shift_invariant == unchanged
