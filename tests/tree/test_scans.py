"""The pooled sweeps of ``_scans``: the dense sweep against the walk over occupied bins."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank._tree import _criteria, _histograms, _scans
from forestrank._tree._grow import TreeParams


@numba.njit
def _both_sweeps(histogram, n_bins, node, params, prefix, best_gain):
    marks = np.zeros((n_bins + 63) // 64, dtype=np.uint64)
    walked = _scans._pooled_sweep(
        histogram, marks, np.bool_(False), n_bins, np.int64(-1), np.bool_(False), np.bool_(True), node, params, None, best_gain
    )  # fmt: skip
    dense = _scans.dense_sweep(histogram, n_bins, node, params, prefix, best_gain)
    return walked, dense


@st.composite
def histograms(draw, criterion):
    """A feature's pooled histogram of a node: bins without rows (some holding what a
    subtraction's rounding leaves), rows without curvature (LambdaRank's documents
    without pairs), integer sums (a quantized pool) or not."""
    n_bins = draw(st.integers(2, 150))
    n_columns = _criteria.n_hist_columns(criterion)
    integer = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    occupied_share = draw(st.sampled_from([0.05, 0.3, 0.9, 1.0]))
    counts = np.where(rng.random(n_bins) < occupied_share, rng.integers(1, 12, n_bins), 0)
    if counts.sum() == 0:
        counts[rng.integers(n_bins)] = 1
    firsts = rng.normal(size=n_bins) * counts
    seconds = rng.uniform(0.0, 0.25, n_bins) * counts * (rng.random(n_bins) < 0.8)
    weights = rng.uniform(0.5, 2.0, n_bins) * counts
    if integer:
        firsts, seconds, weights = np.round(8 * firsts), np.round(8 * seconds), np.round(weights)
    else:
        # Larger than a rounding remainder, so that a sum that took one in would show it.
        residue = (counts == 0) & (rng.random(n_bins) < 0.5)
        for column in (firsts, seconds, weights):
            column[residue] = rng.normal(size=residue.sum()) * 0.1
    histogram = np.column_stack([firsts, seconds, counts, weights][:n_columns])
    return histogram.astype(np.int32 if integer else np.float64)


@pytest.mark.parametrize("criterion", [_criteria.NEWTON, _criteria.VARIANCE], ids=["newton", "variance"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_dense_sweep_returns_the_walks_cut_bit_for_bit(criterion, data):
    """Bins without rows, their rounding remainders, child minima of rows and of weight
    (of curvature for newton), regularisation and a gain to beat: the same count of
    occupied bins, the same gain to the bit and the same two bins."""
    histogram = data.draw(histograms(criterion))
    n_bins = len(histogram)
    min_samples_leaf = data.draw(st.sampled_from([0, 1, 3, 20]))
    n_node = int(histogram[:, _histograms.HIST_COUNT].sum())
    if n_node < max(min_samples_leaf, 1):
        min_samples_leaf = 0
    occupied = histogram[:, _histograms.HIST_COUNT] != 0
    statistics = histogram[occupied, :2].astype(np.float64).sum(axis=0)
    weight = float(histogram[occupied, _histograms.HIST_WEIGHT].sum()) if criterion == _criteria.VARIANCE else float(n_node)
    l2 = data.draw(st.sampled_from([0.0, 1.0]))
    params = TreeParams(
        criterion, 2, 1, min_samples_leaf=min_samples_leaf, l2_regularization=l2,
        min_child_weight=data.draw(st.sampled_from([0.0, 0.5, 3.0])),
    ).growth_params()  # fmt: skip
    cost = _criteria.node_cost(criterion, statistics, weight, l2, False)[0]
    node = _scans.Node(0, n_node, weight, cost, statistics, -np.inf, np.inf, 0)
    best_gain = data.draw(st.sampled_from([-np.inf, 0.0, 0.5]))
    prefix = np.full((_histograms.N_PREFIX_ROWS, n_bins + 3), np.nan)
    walked, dense = _both_sweeps(histogram, n_bins, node, params, prefix, best_gain)
    assert walked[0] == dense[0]
    assert np.float64(walked[1]).tobytes() == np.float64(dense[1]).tobytes()
    assert walked[2:] == dense[2:]


def test_the_dense_sweep_sees_the_cut_of_a_hand_made_histogram():
    """Four rows in bins 0, 2, 2 and 5 (bins 1, 3 and 4 empty) with gradients -1, 1, 1, 1
    and unit hessians: the best newton cut puts the first row alone on the left, a gain
    of 1/1 + 9/3 - 4/4 = 3, found after bin 0 with bin 2 the first to its right."""
    histogram = np.zeros((6, 3))
    histogram[[0, 2, 5]] = [[-1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]]
    params = TreeParams(_criteria.NEWTON, 2, 1).growth_params()
    node = _scans.Node(0, 4, 4.0, -4.0 / 4.0, np.array([2.0, 4.0]), -np.inf, np.inf, 0)
    _, (n_occupied, gain, b, after) = _both_sweeps(histogram, 6, node, params, np.empty((4, 6)), -np.inf)
    assert (n_occupied, b, after) == (3, 0, 2)
    assert gain == pytest.approx(3.0)


@pytest.mark.parametrize("min_samples_leaf", [0, 1, 2])
def test_the_dense_sweep_keeps_the_first_of_equal_gains_after_leading_empty_bins(min_samples_leaf):
    """Rows of one target in bins 2, 3 and 6 of eight: every cut gains exactly 0, so the
    first cut that leaves rows on both sides wins, after bin 2 (after bin 3 with two
    rows a side), never one with an empty left side; then an occupied bin, 3."""
    histogram = np.zeros((8, 3))
    histogram[[2, 3, 6]] = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    params = TreeParams(_criteria.NEWTON, 2, 1, min_samples_leaf=min_samples_leaf).growth_params()
    node = _scans.Node(0, 4, 4.0, -16.0 / 4.0, np.array([4.0, 4.0]), -np.inf, np.inf, 0)
    walked, dense = _both_sweeps(histogram, 8, node, params, np.empty((4, 8)), -np.inf)
    assert dense == walked
    assert dense[1:] == ((0.0, 2, 3) if min_samples_leaf < 2 else (0.0, 3, 6))
