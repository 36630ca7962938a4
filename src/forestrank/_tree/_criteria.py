"""The split criteria of the tree engine: the only code that knows what a criterion is.

A criterion is an integer id (``NAMES``). Every question the scans, the splitter and
the builder ask of it is a function here that dispatches on that id; they never
compare ids themselves (``docs/design.md``, "Adding a criterion"). Two families:

* **class criteria** summarise a node by one weight per class (grade). A sweep keeps
  ``A_L = sum_c f(l_c)`` and ``A_R = sum_c f(p_c - l_c)`` (``class_term``), so moving
  weight of one class costs O(1) (``class_move``); a candidate is screened on
  ``class_cost(W_L, A_L) + class_cost(W_R, A_R)`` and compared on its exact gain,
  recomputed from the left counts (``exact_class_gain``);
* **moment criteria** summarise a node by two weighted sums of per-row moments
  (``row_moments``), which histograms can hold and subtract (the pool of
  ``_histograms``).

===========  ===================================  =========================================
criterion    statistics (weighted sums)           cost
===========  ===================================  =========================================
entropy      w per class c                        W ln W - sum_c w_c ln w_c  (= W * H)
gini         w per class c                        W - sum_c w_c^2 / W        (= W * Gini)
variance     w*y, w*y^2                           sum w y^2 - (sum w y)^2 / W  (SSE)
newton       w*g, w*h                             -G^2 / (H + lambda)
random       w per class c (for importances)      as entropy
hellinger    w per class c                        as entropy, unused: the gain is a distance
===========  ===================================  =========================================

The gain of a split is ``cost(parent) - cost(left) - cost(right)``. Entropy and gini
are the impurity criteria of CART/C4.5 used by RF-point (Ibrahim & Carman,
Algorithm 3); variance is the least-squares regression tree (Breiman et al. 1984)
of Mohan's regression forest; newton is the second-order gain of gradient boosting,
``G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)`` (Chen & Guestrin, XGBoost, Eq. 7; the
OLE gain of "Analysis of Regression Tree Fitting Algorithms in Learning to Rank",
Eq. 13); random is RF-rand (a drawn split, ``draws_split``).

Hellinger is the split criterion of Hellinger distance decision trees (Cieslak &
Chawla, "Learning Decision Trees for Unbalanced Data", ECML PKDD 2008, Eq. 5): the
gain of a cut is the Hellinger distance between the distributions that the
positive and the negative class put on its two children,
``d_H = sqrt(sum_{j in L, R} (sqrt(P_j / P) - sqrt(N_j / N))^2)``, which does not
depend on the ratio of the two classes (the reason to use it on skewed data: most
documents of a LETOR query are irrelevant). Graded relevance is ordinal, so the gain
sums ``d_H`` over the ordinal splits of the grades, positive = "grade >= t" for every
grade threshold t (Frank & Hall, "A Simple Approach to Ordinal Classification", ECML
2001); with two grades it is Cieslak & Chawla's criterion. It has no cost to
subtract: the sweeps keep their entropy sums for it (a node's cost only decides its
purity, one grade), ``candidate_gain`` screens nothing and every valid cut is
evaluated by ``exact_class_gain``. The per-row helpers get no branch for it: they
are inlined in every scan of every criterion.

Reported gains are scaled (``gain_scale``) to match the libraries users compare with:
impurity decrease per unit of the tree's total weight (scikit-learn's
``min_impurity_decrease``), the Newton gain ``G_L^2/(H_L + l2) + G_R^2/(H_R + l2) -
G^2/(H + l2)`` as LightGBM and XGBoost compare it with ``min_gain_to_split`` and
``gamma`` and report it as gain importance (Chen & Guestrin, "XGBoost", KDD 2016,
Eq. 7, without its factor 1/2), and the Hellinger distance as it is.

The functions called per row or per candidate take and return scalars. The small
ones that nest (``x_log_x`` in ``class_term`` in ``class_move``) are plain jitted
functions, which LLVM inlines, rather than numba-inlined ones, whose IR numba copies
at every call site (``docs/design.md``, "Numba rules").
"""

import numpy as np

from .._numba.jit import jit, nowrap

ENTROPY = 0
GINI = 1
VARIANCE = 2
NEWTON = 3
RANDOM = 4
HELLINGER = 5

NAMES = {"entropy": ENTROPY, "gini": GINI, "variance": VARIANCE, "newton": NEWTON, "random": RANDOM, "hellinger": HELLINGER}
# The criteria whose statistics are per-class weights; the others are moment criteria.
CLASS_CRITERIA = (ENTROPY, GINI, RANDOM, HELLINGER)
_USES_CLASSES = np.array([criterion in CLASS_CRITERIA for criterion in range(len(NAMES))])

# n ln n for integer n below the table size: with unit weights or bootstrap counts every
# class count is an integer, and a lookup replaces the logarithms that dominate entropy
# sweeps. A module constant, so the compiled code embeds it (no array argument).
_X_LOG_X_SIZE = 1 << 15
_X_LOG_X = np.concatenate(([0.0], np.arange(1, _X_LOG_X_SIZE) * np.log(np.arange(1, _X_LOG_X_SIZE))))


def pools_histograms(criterion: int) -> bool:
    """Whether a node's per-bin sums can be pooled and subtracted (moment criteria)."""
    return criterion not in CLASS_CRITERIA


# --- statistics -----------------------------------------------------------------------


@jit(inline="always")
def uses_classes(criterion):
    """Whether the statistics are one weight per class (else the two moments)."""
    return _USES_CLASSES[criterion]


def n_statistics(criterion: int, n_classes: int) -> int:
    """Length of the statistics vector: one weight per class, or two moments."""
    return n_classes if criterion in CLASS_CRITERIA else 2


@jit(inline="always")
def row_moments(criterion, weight, target, last_target):
    """A row's two moments for a moment criterion: ``(w y, w y^2)`` (variance) or ``(w g, w h)`` (newton).

    ``target`` and ``last_target`` are the row's first and last target columns (the
    same column for variance, whose targets are ``y`` alone).
    """
    if criterion == VARIANCE:
        return weight * target, weight * (target * target)
    return weight * target, weight * last_target


@jit(inline="always")
def accumulate(criterion, statistics, weight, target, last_target):
    """Add a row to ``statistics`` (float64, (n_statistics,)): its weight to its class, or its moments."""
    if uses_classes(criterion):
        statistics[int(target)] += weight
    else:
        first, second = row_moments(criterion, weight, target, last_target)
        statistics[0] += first
        statistics[1] += second


def n_hist_columns(criterion: int) -> int:
    """Columns of a pooled histogram bin (``_histograms``): the two moments, the count, and
    the weight when the child minimum applies to it (newton's applies to the hessian, so
    its bins skip the weight: 24 instead of 32 bytes)."""
    return 3 if criterion == NEWTON else 4


@jit(inline="always")
def category_key(criterion, row, weight, smooth):
    """The key that orders a node's categories for a categorical split (``_categories``):
    the mean grade ``sum_c c w_c / W`` (class criteria: Breiman's order for two classes),
    the mean target ``first / W`` (variance), or ``G / (H + smooth)`` (newton: LightGBM's
    order, ``cat_smooth``). ``row`` is the category's statistics (a histogram row: class
    weights, or the two moments first), ``weight`` its weight (> 0); a newton category without curvature keys 0."""
    if uses_classes(criterion):
        total = 0.0
        for c in range(len(row)):
            total += c * row[c]
        return total / weight
    if criterion == VARIANCE:
        return row[0] / weight
    curvature = row[1] + smooth
    return row[0] / curvature if curvature > 0.0 else 0.0


# --- the cost of a node -----------------------------------------------------------------


@jit(refcounted=False)
def x_log_x(value, integer_weights):
    """``x ln x`` (0 for x <= 0), looked up for integer ``x`` when weights are integers."""
    if value <= 0.0:
        return 0.0
    if integer_weights and value < _X_LOG_X_SIZE:
        return _X_LOG_X[int(value)]
    return value * np.log(value)


@jit(refcounted=False)
def class_term(criterion, weight, integer_weights):
    """``f(w_c)``: ``w ln w`` (entropy, random, and hellinger, whose gain ignores it) or ``w^2`` (gini)."""
    if criterion == GINI:
        return weight * weight
    return x_log_x(weight, integer_weights)


@jit(refcounted=False)
def class_cost(criterion, weight, term_sum, integer_weights):
    """Class-criterion cost from the total weight and ``sum_c f(w_c)``."""
    if criterion == GINI:
        if weight <= 0.0:
            return 0.0
        return weight - term_sum / weight
    return x_log_x(weight, integer_weights) - term_sum


@jit(refcounted=False)
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
def moment_value(criterion, first, second, weight, l2_regularization):
    """The value a node's moments call for: the mean target ``first / W`` (variance) or the
    Newton step ``-G / (H + l)`` (newton); 0 without weight or curvature."""
    if criterion == VARIANCE:
        return first / weight if weight > 0.0 else 0.0
    curvature = second + l2_regularization
    return -first / curvature if curvature > 0.0 else 0.0


@jit(inline="always")
def bounded_moment_value(criterion, first, second, weight, l2_regularization, lower, upper):
    """``moment_value`` clipped to ``[lower, upper]``, the bounds of monotone splits above a node."""
    return min(max(moment_value(criterion, first, second, weight, l2_regularization), lower), upper)


@jit(inline="always")
def moment_cost_at(criterion, first, second, weight, l2_regularization, value):
    """``moment_cost`` of a node whose value is held at ``value`` rather than its own
    (``moment_value``): the SSE about ``value``, ``second - 2 value first + value^2 W``
    (variance), or twice the second-order loss ``2 G v + (H + l) v^2`` (newton); each
    equals ``moment_cost`` at the node's own value."""
    if criterion == VARIANCE:
        return second - 2.0 * value * first + value * value * weight
    return 2.0 * first * value + (second + l2_regularization) * value * value


@jit(refcounted=False, callable_from_python=False)
def _clipped_gain(criterion, left_first, left_second, left_weight, node_first, node_second, node_weight, l2, lower, upper, constraint):
    """The cost decrease of a split whose node and children are held at their values
    clipped to ``[lower, upper]`` (a node under a monotone split), or -inf when the
    children's clipped values break ``constraint`` (+1: the left value above the right
    one; -1: below). The bounds and the check are those of scikit-learn's histogram
    gradient boosting (``monotonic_cst``), which scores the node at its clipped value
    too. Called, not inlined: only trees with constraints compile the call, once for
    every scan."""
    right_first = node_first - left_first
    right_second = node_second - left_second
    right_weight = node_weight - left_weight
    node_value = bounded_moment_value(criterion, node_first, node_second, node_weight, l2, lower, upper)
    left_value = bounded_moment_value(criterion, left_first, left_second, left_weight, l2, lower, upper)
    right_value = bounded_moment_value(criterion, right_first, right_second, right_weight, l2, lower, upper)
    if constraint * (right_value - left_value) < 0.0:
        return -np.inf
    return moment_cost_at(criterion, node_first, node_second, node_weight, l2, node_value) - (
        moment_cost_at(criterion, left_first, left_second, left_weight, l2, left_value)
        + moment_cost_at(criterion, right_first, right_second, right_weight, l2, right_value)
    )


@jit(refcounted=False)
def row_cost(criterion, weight, target, last_target, l2_regularization):
    """The cost of a node that holds one row: 0 for every criterion but newton's
    ``-(w g)^2 / (w h + l)``, the least cost any partition can reach."""
    if criterion != NEWTON:
        return 0.0
    first, second = row_moments(criterion, weight, target, last_target)
    return moment_cost(criterion, first, second, weight, l2_regularization)


@jit(refcounted=False)
def penalty_unit(criterion, root_cost, rows_cost):
    """The unscaled gain that a feature penalty of 1 stands for: the root's reducible
    cost, ``cost(root) - sum_i cost(row i)``, the gain of splitting the root into one
    leaf per row. A split on ``f`` must then remove the fraction ``feature_penalty[f]``
    of the impurity the tree started from (``docs/costs.md``). The Hellinger gain is a
    distance, not a cost decrease: its unit is the distance 1.
    """
    if criterion == HELLINGER:
        return 1.0
    return max(root_cost - rows_cost, 0.0)


@jit(inline="always")
def node_cost(criterion, statistics, node_weight, l2_regularization, integer_weights):
    """The node's cost and whether it is pure (no split can lower the cost).

    A class node is pure when it holds one class; a variance node when its SSE is
    rounding noise; a newton node never is.
    """
    if uses_classes(criterion):
        term_sum = 0.0
        n_present = 0
        for c in range(len(statistics)):
            term_sum += class_term(criterion, statistics[c], integer_weights)
            n_present += statistics[c] > 0.0
        return class_cost(criterion, node_weight, term_sum, integer_weights), n_present <= 1
    cost = moment_cost(criterion, statistics[0], statistics[1], node_weight, l2_regularization)
    return cost, criterion == VARIANCE and cost <= 1e-12 * max(statistics[1], 1e-300)


# --- the gain of a candidate ------------------------------------------------------------


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
def sweep_start(criterion, left, node_statistics, integer_weights):
    """Empty the left child (``left``, float64 (n_statistics,)); returns ``A_R = sum_c f(p_c)``
    (0 for moment criteria). Once per scan, so taking arrays costs nothing measurable here."""
    right_terms = 0.0
    for s in range(len(left)):
        left[s] = 0.0
        if uses_classes(criterion):
            right_terms += class_term(criterion, node_statistics[s], integer_weights)
    return right_terms


@jit(inline="always")
def candidate_gain(
    criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left_first, left_second,
    node_first, node_second, node_cost, l2, integer_weights, min_samples_leaf, min_child_weight, lower, upper,
    constraint, monotonic_cst,
):  # fmt: skip
    """Cost decrease of the split at a sweep position, or -inf if a child is too small.

    Class criteria use the sweep sums ``left_terms``/``right_terms`` (``A_L``, ``A_R``);
    moment criteria use the left child's moments and the node's. A child must hold
    ``min_samples_leaf`` rows and ``min_child_weight`` of weight (of hessian for
    newton: LightGBM's ``min_sum_hessian_in_leaf``). Monotone constraints (moment
    criteria): a node with finite value bounds ``[lower, upper]``, or a split on a
    feature of ``constraint`` +1 or -1, scores itself and its children at their values
    clipped to the bounds and refuses children whose values break the constraint
    (``_clipped_gain``); with neither the cost is the unclipped one, bitwise.
    ``monotonic_cst`` is the tree's constraints, of which only the type is read: None
    for a tree without any, whose bounds are infinite, so that numba compiles no
    clipped gain into it (``docs/design.md``, "Numba rules").
    """
    if left_count < min_samples_leaf or n_node - left_count < min_samples_leaf:
        return -np.inf
    right_weight = node_weight - left_weight
    if uses_classes(criterion):
        if left_weight < min_child_weight or right_weight < min_child_weight:
            return -np.inf
        if criterion == HELLINGER:  # no incremental screen: every valid cut is evaluated exactly
            return np.inf
        children = class_cost(criterion, left_weight, left_terms, integer_weights) + class_cost(
            criterion, right_weight, right_terms, integer_weights
        )
    else:
        right_first = node_first - left_first
        right_second = node_second - left_second
        if _too_light(criterion, left_second, right_second, left_weight, right_weight, min_child_weight):
            return -np.inf
        if clips(monotonic_cst, constraint, lower, upper):
            return _clipped_gain(
                criterion, left_first, left_second, left_weight, node_first, node_second, node_weight, l2, lower, upper,
                constraint,
            )  # fmt: skip
        children = _children_cost(criterion, left_first, left_second, left_weight, right_first, right_second, right_weight, l2)
    return node_cost - children


@jit(inline="always")
def _too_light(criterion, left_second, right_second, left_weight, right_weight, min_child_weight):
    """Whether a child of a moment criterion's cut falls short of ``min_child_weight``: of
    hessian for newton (LightGBM's ``min_sum_hessian_in_leaf``), of weight otherwise."""
    if criterion == NEWTON:
        return left_second < min_child_weight or right_second < min_child_weight
    return left_weight < min_child_weight or right_weight < min_child_weight


@jit(inline="always")
def _children_cost(criterion, left_first, left_second, left_weight, right_first, right_second, right_weight, l2):
    """The two children's ``moment_cost``, left plus right."""
    return moment_cost(criterion, left_first, left_second, left_weight, l2) + moment_cost(
        criterion, right_first, right_second, right_weight, l2
    )


@jit(inline="always")
def clips(monotonic_cst, constraint, lower, upper):
    """Whether ``candidate_gain`` clips a node's values (``_clipped_gain``): a tree with
    constraints (``monotonic_cst`` not None), scanning a constrained feature or a node
    with a finite bound. Early returns: a pruned ``is None`` test inside an ``and``
    would type the result as an integer (``docs/design.md``, "Numba rules")."""
    if monotonic_cst is None:
        return False
    return constraint != 0 or lower > -np.inf or upper < np.inf


@jit(inline="always")
def _cut_gains(criterion, firsts, seconds, weights, gains, lo, hi, node_first, node_second, node_weight, node_cost, l2, min_child_weight):
    """``moment_gains`` for one moment criterion, a constant in each of its two inlined
    copies, which LLVM folds into the loop (``np.int64``: a literal would compile
    ``moment_cost`` again for it, ``docs/design.md``, "Numba rules")."""
    for j in range(lo, hi):
        left_first = firsts[nowrap(j)]
        left_second = seconds[nowrap(j)]
        left_weight = weights[nowrap(j)]
        right_first = node_first - left_first
        right_second = node_second - left_second
        right_weight = node_weight - left_weight
        too_light = _too_light(criterion, left_second, right_second, left_weight, right_weight, min_child_weight)
        children = _children_cost(criterion, left_first, left_second, left_weight, right_first, right_second, right_weight, l2)
        gains[nowrap(j)] = -np.inf if too_light else node_cost - children


@jit(inline="always")
def moment_gains(criterion, firsts, seconds, weights, gains, lo, hi, node_first, node_second, node_weight, node_cost, l2, min_child_weight):
    """``candidate_gain`` of a moment criterion (``NEWTON`` or ``VARIANCE``, the only two) at
    every cut ``lo <= j < hi`` of a sweep at once, unclipped (``clips`` false) and each cut
    leaving enough rows on both sides, into ``gains[j]``. The left child's moments and
    weight at cut ``j`` are ``firsts[j]``, ``seconds[j]`` and ``weights[j]`` (float64 arrays
    of shape (>= hi,); the weights are read by the variance criterion only, newton's
    minimum being on the second moment). ``candidate_gain``'s operations in its order
    (``_too_light``, ``_children_cost``), so its bits; as one loop without branches over
    contiguous arrays, which LLVM vectorises, divisions included, unlike a sweep that
    computes each gain as it walks the bins (``_scans.dense_sweep``)."""
    if criterion == NEWTON:
        _cut_gains(
            np.int64(NEWTON), firsts, seconds, weights, gains, lo, hi, node_first, node_second, node_weight, node_cost, l2,
            min_child_weight,
        )  # fmt: skip
    else:
        _cut_gains(
            np.int64(VARIANCE), firsts, seconds, weights, gains, lo, hi, node_first, node_second, node_weight, node_cost, l2,
            min_child_weight,
        )  # fmt: skip


@jit(inline="always")
def sweep_gain(
    criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left, node_statistics, node_cost,
    l2, integer_weights, min_samples_leaf, min_child_weight, best_gain, tolerance, lower, upper, constraint,
    monotonic_cst,
):  # fmt: skip
    """The gain a sweep compares at a cut: ``candidate_gain`` from the sweep's state
    (``left``: the left child's statistics, float64 (n_statistics,)), recomputed exactly
    (``exact_class_gain``) for a class criterion within ``tolerance`` of ``best_gain``."""
    classes = uses_classes(criterion)
    gain = candidate_gain(
        criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left[0],
        0.0 if classes else left[1], node_statistics[0], 0.0 if classes else node_statistics[1], node_cost, l2,
        integer_weights, min_samples_leaf, min_child_weight, lower, upper, constraint, monotonic_cst,
    )  # fmt: skip
    if classes and gain > best_gain - tolerance:
        gain = exact_class_gain(criterion, left, node_statistics, left_weight, node_weight, node_cost, integer_weights)
    return gain


@jit(inline="always")
def screening_tolerance(node_weight):
    """Slack of the incremental class sums: bound of their rounding drift over a scan.

    The sums ``A_L``, ``A_R`` are of size about ``W ln W`` and drift by a few ulps per
    move; 1e-9 relative covers any scan with margin.
    """
    return 1e-9 * node_weight * (1.0 + np.log(node_weight + 1.0))


@jit(refcounted=False, callable_from_python=False)
def _ordinal_hellinger_distance(left, node_statistics):
    """``sum_t d_H`` over the grade thresholds t (module docstring): each splits the classes
    into negative (index < t) and positive (index >= t); a threshold with an empty side
    in the node adds nothing."""
    total = 0.0
    n_classes = len(left)
    for t in range(1, n_classes):
        positive = negative = left_positive = left_negative = 0.0
        for c in range(n_classes):
            if c >= t:
                positive += node_statistics[c]
                left_positive += left[c]
            else:
                negative += node_statistics[c]
                left_negative += left[c]
        if positive <= 0.0 or negative <= 0.0:
            continue
        share_positive = left_positive / positive
        share_negative = left_negative / negative
        on_left = np.sqrt(share_positive) - np.sqrt(share_negative)
        on_right = np.sqrt(max(1.0 - share_positive, 0.0)) - np.sqrt(max(1.0 - share_negative, 0.0))
        total += np.sqrt(on_left * on_left + on_right * on_right)
    return total


@jit(refcounted=False)
def exact_class_gain(criterion, left, node_statistics, left_weight, node_weight, node_cost, integer_weights):
    """Gain of a class-criterion candidate recomputed from its left counts.

    Candidates are screened with the incremental sums, but compared on this value:
    with integer weights the counts are exact, so the histogram scan and the sorted
    sweep (whose incremental sums round differently) make identical choices, ties
    included. Called only for candidates within the screening tolerance of the best.

    Parameters
    ----------
    left, node_statistics : float64 arrays of shape (n_classes,)
        Per-class weights of the left child and of the node.
    """
    if criterion == HELLINGER:
        return _ordinal_hellinger_distance(left, node_statistics)
    left_terms = 0.0
    right_terms = 0.0
    for c in range(len(left)):
        left_terms += class_term(criterion, left[c], integer_weights)
        right_terms += class_term(criterion, node_statistics[c] - left[c], integer_weights)
    return node_cost - (
        class_cost(criterion, left_weight, left_terms, integer_weights)
        + class_cost(criterion, node_weight - left_weight, right_terms, integer_weights)
    )


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


def draws_split(criterion: int) -> bool:
    """Whether the split is drawn at random (RF-rand, ``_scans.random_split``) instead of searched."""
    return criterion == RANDOM


@jit(inline="always")
def gain_scale(criterion, total_weight):
    """Factor from ``cost(parent) - cost(children)`` (a distance for hellinger) to the reported gain.

    0 for a tree of no weight (a boosting subsample of zero-weight rows alone), whose
    splits then gain nothing: it stays one leaf, as it does under the Newton gain.
    """
    if criterion == NEWTON or criterion == HELLINGER:
        return 1.0
    return 1.0 / total_weight if total_weight > 0.0 else 0.0
