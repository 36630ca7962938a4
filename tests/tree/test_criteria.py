"""The criterion protocol: every hook of ``_tree/_criteria.py`` against its definition."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank._tree import _criteria
from forestrank._tree._grow import TreeParams, grow_tree
from forestrank.ensemble._boosting_state import leaf_sums, newton_steps

from .helpers import CLASS_CRITERIA, brute_cost, seed, statistics_second_moments, training_set

ALL = list(_criteria.NAMES.values())
SEARCHED = [_criteria.ENTROPY, _criteria.GINI, _criteria.VARIANCE, _criteria.NEWTON]
IDS = {value: name for name, value in _criteria.NAMES.items()}


@st.composite
def rows(draw, criterion, integer_weights=True):
    """Targets (class index, y, or g and h) and weights of a small node."""
    n = draw(st.integers(1, 30))
    if criterion in CLASS_CRITERIA:
        targets = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), float)[:, None]
    elif criterion == _criteria.VARIANCE:
        targets = np.array(draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n)))[:, None]
    else:
        targets = np.column_stack(
            [draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n)), draw(st.lists(st.floats(0.05, 1), min_size=n, max_size=n))]
        )
    choices = [1.0, 2.0, 3.0] if integer_weights else [0.5, 1.0, 2.5]
    weights = np.array(draw(st.lists(st.sampled_from(choices), min_size=n, max_size=n)))
    return targets, weights


def statistics_of(criterion, targets, weights, n_classes=3):
    statistics = np.zeros(_criteria.n_statistics(criterion, n_classes))
    for row in range(len(weights)):
        _criteria.accumulate(criterion, statistics, weights[row], targets[row, 0], targets[row, -1])
    return statistics


@pytest.mark.parametrize("criterion", ALL, ids=IDS.get)
def test_every_criterion_answers_every_question_consistently(criterion):
    classes = criterion in _criteria.CLASS_CRITERIA
    assert _criteria.uses_classes(criterion) == classes
    assert _criteria.pools_histograms(criterion) == (not classes)
    assert _criteria.n_statistics(criterion, 5) == (5 if classes else 2)
    assert _criteria.n_hist_columns(criterion) == (3 if criterion == _criteria.NEWTON else 4)
    assert _criteria.boundary_points_suffice(criterion, 1, 0.0) == (criterion in (_criteria.ENTROPY, _criteria.GINI))
    assert not _criteria.boundary_points_suffice(criterion, 2, 0.0)  # a leaf-size limit turns the shortcut off
    assert _criteria.draws_split(criterion) == (criterion == _criteria.RANDOM)
    expected_scale = {_criteria.NEWTON: 1.0, _criteria.HELLINGER: 1.0}.get(criterion, 0.25)
    assert _criteria.gain_scale(criterion, 4.0) == expected_scale


@pytest.mark.parametrize("criterion", SEARCHED, ids=IDS.get)
@given(data=st.data(), integer_weights=st.booleans())
def test_accumulated_statistics_and_node_cost_follow_the_definitions(criterion, data, integer_weights):
    targets, weights = data.draw(rows(criterion, integer_weights))
    statistics = statistics_of(criterion, targets, weights)
    if criterion in CLASS_CRITERIA:
        np.testing.assert_allclose(statistics, np.bincount(targets[:, 0].astype(int), weights, minlength=3))
    else:
        np.testing.assert_allclose(
            statistics, [(weights * targets[:, 0]).sum(), statistics_second_moments(criterion, targets, weights).sum()]
        )
    l2 = 0.5 if criterion == _criteria.NEWTON else 0.0
    cost, pure = _criteria.node_cost(criterion, statistics, weights.sum(), l2, integer_weights)
    assert cost == pytest.approx(brute_cost(criterion, targets, weights, l2), rel=1e-9, abs=1e-9)
    if criterion in CLASS_CRITERIA:
        assert pure == (len(np.unique(targets[:, 0])) == 1)
    elif criterion == _criteria.VARIANCE:  # pure when the SSE is rounding noise
        if np.ptp(targets[:, 0]) == 0.0:
            assert pure
        elif np.ptp(targets[:, 0]) > 1e-3:
            assert not pure
    else:
        assert not pure  # a Newton node is never pure: its gradients may still separate


@pytest.mark.parametrize("criterion", [_criteria.ENTROPY, _criteria.GINI], ids=IDS.get)
@given(data=st.data(), integer_weights=st.booleans())
def test_incremental_class_sums_equal_their_recomputation(criterion, data, integer_weights):
    """Moving rows left one at a time with ``class_move`` keeps A_L and A_R equal to
    ``sum_c f(w_c)`` recomputed, and the screened gain equals the exact gain."""
    targets, weights = data.draw(rows(criterion, integer_weights))
    node = statistics_of(criterion, targets, weights)
    left = np.zeros(3)
    right_terms = _criteria.sweep_start(criterion, left, node, integer_weights)
    left_terms = 0.0
    node_weight = weights.sum()
    cost, _ = _criteria.node_cost(criterion, node, node_weight, 0.0, integer_weights)
    for row in range(len(weights)):
        c = int(targets[row, 0])
        delta_left, delta_right = _criteria.class_move(criterion, left[c], weights[row], node[c], integer_weights)
        left[c] += weights[row]
        left_terms += delta_left
        right_terms += delta_right
        expected_left = sum(_criteria.class_term(criterion, w, integer_weights) for w in left)
        expected_right = sum(_criteria.class_term(criterion, w, integer_weights) for w in node - left)
        assert left_terms == pytest.approx(expected_left, rel=1e-9, abs=1e-9)
        assert right_terms == pytest.approx(expected_right, rel=1e-9, abs=1e-9)
        left_weight = left.sum()
        screened = _criteria.candidate_gain(
            criterion, row + 1, len(weights), left_weight, node_weight, left_terms, right_terms, 0.0, 0.0, 0.0, 0.0,
            cost, 0.0, integer_weights, 1, 0.0, -np.inf, np.inf, 0, None,
        )  # fmt: skip
        exact = _criteria.exact_class_gain(criterion, left, node, left_weight, node_weight, cost, integer_weights)
        on_left = np.arange(len(weights)) <= row
        brute = cost - brute_cost(criterion, targets[on_left], weights[on_left]) - (
            brute_cost(criterion, targets[~on_left], weights[~on_left]) if (~on_left).any() else 0.0
        )
        assert exact == pytest.approx(brute, rel=1e-9, abs=1e-9)
        if row + 1 < len(weights):
            assert abs(screened - exact) <= _criteria.screening_tolerance(node_weight)


@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=IDS.get)
@given(data=st.data())
def test_moment_candidate_gain_is_the_cost_decrease_and_enforces_the_child_minimum(criterion, data):
    targets, weights = data.draw(rows(criterion))
    if len(weights) < 2:
        return
    cut = data.draw(st.integers(1, len(weights) - 1))
    l2 = 0.5 if criterion == _criteria.NEWTON else 0.0
    node = statistics_of(criterion, targets, weights)
    left = statistics_of(criterion, targets[:cut], weights[:cut])
    cost, _ = _criteria.node_cost(criterion, node, weights.sum(), l2, True)

    def gain(min_samples_leaf=1, min_child_weight=0.0):
        return _criteria.candidate_gain(
            criterion, cut, len(weights), weights[:cut].sum(), weights.sum(), 0.0, 0.0, left[0], left[1], node[0],
            node[1], cost, l2, True, min_samples_leaf, min_child_weight, -np.inf, np.inf, 0, None,
        )  # fmt: skip

    expected = cost - brute_cost(criterion, targets[:cut], weights[:cut], l2) - brute_cost(
        criterion, targets[cut:], weights[cut:], l2
    )
    assert gain() == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert gain(min_samples_leaf=len(weights)) == -np.inf
    # The child minimum is on the weight for variance and on the hessian for newton.
    smaller_child = min(left[1], node[1] - left[1]) if criterion == _criteria.NEWTON else min(
        weights[:cut].sum(), weights[cut:].sum()
    )
    assert gain(min_child_weight=smaller_child * 1.001 + 1e-12) == -np.inf
    assert gain(min_child_weight=smaller_child * 0.999) > -np.inf


@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=IDS.get)
@given(data=st.data())
def test_monotone_candidate_gain_scores_the_children_at_their_clipped_values(criterion, data):
    """Under value bounds or a constraint the node and each child are held at their own
    values (mean target or Newton step) clipped to the bounds, their costs taken there
    from the rows; children whose clipped values break the constraint give -inf."""
    targets, weights = data.draw(rows(criterion))
    if len(weights) < 2:
        return
    cut = data.draw(st.integers(1, len(weights) - 1))
    lower, upper = data.draw(st.sampled_from([(-np.inf, np.inf), (-1.0, np.inf), (-np.inf, 0.2), (-0.2, 0.1), (0.1, 2.0)]))
    constraint = data.draw(st.sampled_from([-1, 0, 1]))
    l2 = 0.5 if criterion == _criteria.NEWTON else 0.0
    node = statistics_of(criterion, targets, weights)
    left = statistics_of(criterion, targets[:cut], weights[:cut])
    cost, _ = _criteria.node_cost(criterion, node, weights.sum(), l2, True)
    gain = _criteria.candidate_gain(
        criterion, cut, len(weights), weights[:cut].sum(), weights.sum(), 0.0, 0.0, left[0], left[1], node[0], node[1],
        cost, l2, True, 1, 0.0, lower, upper, constraint, np.zeros(1, dtype=np.int8),
    )  # fmt: skip

    def held(part):
        t, w = targets[part], weights[part]
        if criterion == _criteria.VARIANCE:
            value = (w * t[:, 0]).sum() / w.sum()
            return np.clip(value, lower, upper), lambda v: (w * (t[:, 0] - v) ** 2).sum()
        value = -(w * t[:, 0]).sum() / ((w * t[:, 1]).sum() + l2)
        return np.clip(value, lower, upper), lambda v: 2 * (w * t[:, 0]).sum() * v + ((w * t[:, 1]).sum() + l2) * v * v

    (left_value, left_cost), (right_value, right_cost) = held(slice(0, cut)), held(slice(cut, None))
    node_value, node_cost = held(slice(None))
    order = constraint * (right_value - left_value)
    constrained = constraint != 0 or lower > -np.inf or upper < np.inf
    expected = (node_cost(node_value) if constrained else cost) - left_cost(left_value) - right_cost(right_value)
    if order < -1e-12:
        assert gain == -np.inf
    elif order > 1e-12:
        assert gain == pytest.approx(expected, rel=1e-9, abs=1e-9)
    else:  # equal values up to rounding: either side of the check is right
        assert gain == -np.inf or gain == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_newton_gain_is_the_second_order_gain_and_boosting_owns_the_leaf_values():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3))
    gradients = np.where(X[:, 0] > 0.2, -1.0, 1.0) + 0.1 * rng.normal(size=500)
    hessians = rng.uniform(0.5, 1.0, size=500)
    l2 = 2.0
    training, _ = training_set(X, np.column_stack([gradients, hessians]), leaf_targets=np.zeros(0))
    params = TreeParams(_criteria.NEWTON, 0, max_features=3, l2_regularization=l2, max_depth=1)
    row_leaf = np.full(500, -1, dtype=np.int64)
    tree = grow_tree(training, np.ones(500), params, seed(), row_leaf=row_leaf)
    assert tree.nodes["feature"][0] == 0
    np.testing.assert_array_equal(tree.values, 0.0)  # no leaf targets: boosting computes the values
    sums = leaf_sums(row_leaf, gradients, hessians, np.ones(500), tree.node_count)
    values = newton_steps(tree.nodes, sums[:, 0], sums[:, 1], l2)
    leaves = tree.apply(X)
    np.testing.assert_array_equal(leaves, row_leaf)
    for node in range(tree.node_count):
        rows = leaves == node if tree.nodes["feature"][node] < 0 else np.ones(500, dtype=bool)
        assert values[node] == pytest.approx(-gradients[rows].sum() / (hessians[rows].sum() + l2))
    G, H = gradients.sum(), hessians.sum()
    left = leaves == tree.nodes["left"][0]
    GL, HL = gradients[left].sum(), hessians[left].sum()
    expected = GL**2 / (HL + l2) + (G - GL) ** 2 / (H - HL + l2) - G**2 / (H + l2)
    assert tree.feature_gains[0] == pytest.approx(expected)
    heavy = grow_tree(training, np.ones(500), TreeParams(_criteria.NEWTON, 0, max_features=3, min_child_weight=1e6), seed())
    assert heavy.node_count == 1  # no child can reach the hessian minimum


def hellinger_reference(left, node):
    """Cieslak & Chawla's d_H summed over the grade thresholds, written from the definition."""
    total = 0.0
    for t in range(1, len(node)):
        positive, negative = node[t:].sum(), node[:t].sum()
        if positive == 0 or negative == 0:
            continue
        children = [(left[t:].sum(), left[:t].sum()), (positive - left[t:].sum(), negative - left[:t].sum())]
        total += np.sqrt(sum((np.sqrt(p / positive) - np.sqrt(n / negative)) ** 2 for p, n in children))
    return total


@given(st.lists(st.integers(0, 6), min_size=3, max_size=5), st.data())
def test_hellinger_gain_is_the_ordinal_hellinger_distance(node_counts, data):
    node = np.array(node_counts, dtype=float)
    left = np.array([data.draw(st.integers(0, int(count))) for count in node], dtype=float)
    gain = _criteria.exact_class_gain(_criteria.HELLINGER, left, node, left.sum(), node.sum(), 0.0, True)
    assert gain == pytest.approx(hellinger_reference(left, node), rel=1e-12, abs=1e-12)
    assert 0.0 <= gain <= np.sqrt(2.0) * (len(node) - 1) + 1e-12
    # Screened as "evaluate exactly" whenever both children are large enough.
    screened = _criteria.candidate_gain(
        _criteria.HELLINGER, 1, 2, left.sum(), node.sum(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, True, 1, 0.0,
        -np.inf, np.inf, 0, None,
    )
    assert screened == np.inf


def test_hellinger_distance_does_not_depend_on_how_rare_the_relevant_documents_are():
    """Scaling the irrelevant documents' weight by k leaves d_H unchanged (the property
    that makes it the criterion for skewed classes); entropy's gain changes."""
    node, left = np.array([80.0, 20.0]), np.array([70.0, 5.0])
    for criterion, invariant in ((_criteria.HELLINGER, True), (_criteria.ENTROPY, False)):
        gains = []
        for scale in (1.0, 10.0):
            scaled_node, scaled_left = node * [scale, 1.0], left * [scale, 1.0]
            cost, _ = _criteria.node_cost(criterion, scaled_node, scaled_node.sum(), 0.0, True)
            gains.append(
                _criteria.exact_class_gain(criterion, scaled_left, scaled_node, scaled_left.sum(), scaled_node.sum(), cost, True)
                / (1.0 if criterion == _criteria.HELLINGER else scaled_node.sum())
            )
        assert (gains[0] == pytest.approx(gains[1], rel=1e-12)) == invariant
