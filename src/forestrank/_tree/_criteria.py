"""Split criteria of the tree engine, selected by integer id (ARCHITECTURE.md §3).

Decomposable criteria summarise a set of samples by a short vector of sums (the
*statistics*) plus its total weight; a node's *cost* is a function of those sums, and
the gain of a split is ``cost(parent) - cost(left) - cost(right)``:

===========  ===================================  =========================================
criterion    statistics (weighted sums)           cost
===========  ===================================  =========================================
entropy      w per class c                        W ln W - sum_c w_c ln w_c  (= W * H)
gini         w per class c                        W - sum_c w_c^2 / W        (= W * Gini)
variance     w*y, w*y^2                           sum w y^2 - (sum w y)^2 / W  (SSE)
newton       w*g, w*h                             -G^2 / (H + lambda)
random       w per class c (for importances)      as entropy
===========  ===================================  =========================================

Entropy and gini are the impurity criteria of CART/C4.5 used by RF-point (Ibrahim &
Carman, Algorithm 3); variance is the least-squares regression tree (Breiman et al.
1984) of Mohan's regression forest; newton is the second-order gain of gradient
boosting, ``G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)`` (Chen & Guestrin, XGBoost,
Eq. 7; the OLE gain of "Analysis of Regression Tree Fitting Algorithms in
Learning to Rank", Eq. 13). Reported gains are scaled (``gain_scale``) to match the
libraries users compare with: impurity decrease per unit of the tree's total weight
(scikit-learn's ``min_impurity_decrease``) and half the Newton gain (LightGBM's
``min_gain_to_split``).

The class criteria are evaluated incrementally: a sweep keeps
``A_L = sum_c f(l_c)`` and ``A_R = sum_c f(p_c - l_c)`` (``f(x) = x ln x`` for
entropy, ``x^2`` for gini), so moving weight of one class costs O(1) (``class_move``)
and a candidate's cost is ``class_cost(W_L, A_L) + class_cost(W_R, A_R)``.

Every function here takes and returns scalars only. Measured: an inlined helper that
takes arrays costs about 8x more in a per-sample loop than the same code written in
the loop (numba reference-counts array arguments), so the scans index their arrays
themselves and call these for the arithmetic (ARCHITECTURE.md §3).
"""

import numpy as np

from .._jit import jit

ENTROPY = 0
GINI = 1
VARIANCE = 2
NEWTON = 3
RANDOM = 4

NAMES = {"entropy": ENTROPY, "gini": GINI, "variance": VARIANCE, "newton": NEWTON, "random": RANDOM}
CLASS_CRITERIA = (ENTROPY, GINI, RANDOM)

# n ln n for integer n below the table size: with unit weights or bootstrap counts every
# class count is an integer, and a lookup replaces the logarithms that dominate entropy
# sweeps. A module constant, so the compiled code embeds it (no array argument).
_X_LOG_X_SIZE = 1 << 15
_X_LOG_X = np.concatenate(([0.0], np.arange(1, _X_LOG_X_SIZE) * np.log(np.arange(1, _X_LOG_X_SIZE))))


@jit(inline="always")
def uses_classes(criterion):
    return criterion == ENTROPY or criterion == GINI or criterion == RANDOM


@jit(inline="always")
def n_statistics(criterion, n_classes):
    """Length of the statistics vector: one weight per class, or two moments."""
    if uses_classes(criterion):
        return n_classes
    return 2


@jit(inline="always")
def x_log_x(value, integer_weights):
    """``x ln x`` (0 for x <= 0), looked up for integer ``x`` when weights are integers."""
    if value <= 0.0:
        return 0.0
    if integer_weights and value < _X_LOG_X_SIZE:
        return _X_LOG_X[int(value)]
    return value * np.log(value)


@jit(inline="always")
def class_term(criterion, weight, integer_weights):
    """``f(w_c)``: ``w ln w`` (entropy, random) or ``w^2`` (gini)."""
    if criterion == GINI:
        return weight * weight
    return x_log_x(weight, integer_weights)


@jit(inline="always")
def class_cost(criterion, weight, term_sum, integer_weights):
    """Class-criterion cost from the total weight and ``sum_c f(w_c)``."""
    if criterion == GINI:
        if weight <= 0.0:
            return 0.0
        return weight - term_sum / weight
    return x_log_x(weight, integer_weights) - term_sum


@jit(inline="always")
def class_move(criterion, left_before, moved, parent, integer_weights):
    """Changes of ``A_L`` and ``A_R`` when ``moved`` weight of a class goes left.

    ``left_before`` is the class's left weight before the move, ``parent`` its node
    weight. Returns ``(delta A_L, delta A_R)``.
    """
    left_after = left_before + moved
    delta_left = class_term(criterion, left_after, integer_weights) - class_term(criterion, left_before, integer_weights)
    delta_right = class_term(criterion, parent - left_after, integer_weights) - class_term(
        criterion, parent - left_before, integer_weights
    )
    return delta_left, delta_right


@jit(inline="always")
def moment_cost(criterion, first, second, weight, l2_regularization):
    """Cost from the two moments: SSE ``second - first^2 / W`` (variance) or ``-G^2/(H+l)`` (newton)."""
    if criterion == VARIANCE:
        if weight <= 0.0:
            return 0.0
        return second - first * first / weight
    curvature = second + l2_regularization
    if curvature <= 0.0:  # no curvature (e.g. documents without pairs): no step, no cost
        return 0.0
    return -first * first / curvature


@jit(inline="always")
def boundary_points_suffice(criterion, min_samples_leaf, min_child_weight):
    """Whether only cuts between bins of different classes need evaluating.

    For strictly concave impurities (entropy: Fayyad & Irani, "On the handling of
    continuous-valued attributes in decision tree generation", 1992; gini and other
    convex evaluation functions: Elomaa & Rousu, 1999) the best cut lies between
    two value groups that are not both of one and the same class. Leaf-size limits
    can make a non-boundary cut the best feasible one, so the shortcut is off then.
    """
    return (criterion == ENTROPY or criterion == GINI) and min_samples_leaf <= 1 and min_child_weight <= 0.0


@jit(inline="always")
def gain_scale(criterion, total_weight):
    """Factor from ``cost(parent) - cost(children)`` to the reported gain."""
    if criterion == NEWTON:
        return 0.5
    return 1.0 / total_weight
