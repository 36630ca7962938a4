"""Sampling helpers of every ensemble: counts and fractions, the rows a tree draws, and
the named random streams of a fit.

Every random stream of a fit is ``numpy.random.SeedSequence(entropy, spawn_key=key)``
of the fit's seed entropy (``seed_entropy``), so that a model depends on
``random_state`` and on nothing else (not ``n_jobs``, not the backend: ``docs/design.md``,
"Reproducibility"). The keys below name every stream; a new stream takes a new key.
"""

import math
from numbers import Integral

import numpy as np

# Per tree (or boosting iteration) ``index``: ``(index, ROWS)`` draws its rows, ``(index,
# TREE[, output])`` its candidate features and RF-rand cuts, ``(index, PARTITION)`` the
# partition a tree of a query-partitioned fit grows on, ``(index, ROUNDING, output)`` the
# stochastic rounding of quantized gradients (boosting has no partitions), ``(index,
# TREE_FEATURES)`` the features a boosting iteration's trees may split on, ``(index,
# BAYESIAN_WEIGHTS)`` its Bayesian bagging weights.
ROWS, TREE, PARTITION, ROUNDING, TREE_FEATURES, BAYESIAN_WEIGHTS = 0, 1, 2, 2, 3, 4
# BROOF's round ``t`` seeds its forest from ``(t,)``.
# Per fit: boosting's validation hold-out and BROOF's random initial weights (two
# estimators, one key); PLRank's sampled rankings; XE-NDCG's noise on the gains and
# LambdaRank's sampled pairs, each drawn anew at every iteration from one stream (each
# partition of a fit over several draws its rows' share of them: ``objectives/_draws.py``);
# with a partition index, the rows a query-partitioned fit samples for its bin thresholds.
HOLD_OUT = INITIAL_WEIGHTS = (2**31,)
PERMUTATIONS = (2**31 + 1,)
GAIN_NOISE = (2**31 + 2,)
PAIR_SAMPLES = (2**31 + 3,)
# Per fit: the order of the training rows behind the ordered target statistics.
TARGET_STATISTICS = (2**31 + 4,)
BIN_SAMPLE = 2**31 + 1


def seed_sequence(entropy: int, key: tuple) -> np.random.SeedSequence:
    """The seed of the fit's stream ``key`` (module docstring), for the engine's tree
    generators (``_tree._rng.new_state``) and the seeds handed to other objects."""
    return np.random.SeedSequence(entropy, spawn_key=key)


def stream(entropy: int, key: tuple) -> np.random.Generator:
    """The generator of the fit's stream ``key`` (module docstring)."""
    return np.random.default_rng(seed_sequence(entropy, key))


def resolve_max_features(max_features: object, n_features: int) -> int:
    """Number of features examined per node.

    ``"log2+1"`` is the RF-LTR papers' ``floor(log2 M) + 1``; ``"sqrt"`` and ``"log2"``
    follow scikit-learn; a float is a fraction of the features; None means all.
    """
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        count = int(np.sqrt(n_features))
    elif max_features == "log2":
        count = int(np.log2(n_features))
    elif max_features == "log2+1":
        count = int(np.log2(n_features)) + 1
    elif isinstance(max_features, Integral):
        if max_features > n_features:
            raise ValueError(f"max_features={max_features} is more than the {n_features} features of X.")
        count = int(max_features)
    else:
        count = int(max_features * n_features)
    return min(max(1, count), n_features)


def resolve_count(value: int | float, n_rows: int) -> int:
    """scikit-learn's convention for min_samples_*: an int, or a fraction of the rows."""
    if isinstance(value, Integral):
        return int(value)
    return max(1, math.ceil(value * n_rows))


def draw_counts(
    rng: np.random.Generator,
    query_of_row: np.ndarray,
    fraction: float,
    by_query: bool,
    bootstrap: bool,
    pool: np.ndarray | None = None,
) -> np.ndarray:
    """How many times each row is drawn (float64, one per grouped row).

    ``round(fraction * n_units)`` units (whole queries when ``by_query``, else rows;
    at least one) are drawn with replacement (``bootstrap``) or without; every unit
    is drawn once, with no random draw, when the fraction covers them all without
    replacement. ``query_of_row`` (int64) is the query position of each row.
    ``pool`` (bool, one per unit) restricts the draw to its units: ``n_units`` is
    then their number and the others are never drawn, as if absent from the data.
    """
    n_all = int(query_of_row[-1]) + 1 if by_query else len(query_of_row)
    counts = unit_counts(rng, n_all, fraction, bootstrap, pool)
    return counts[query_of_row] if by_query else counts


# The largest bagging temperature: the heaviest of a million units' weights, about 20 ** T,
# is squared in the split gains (summed over rows), which must stay in float64's range.
MAX_BAGGING_TEMPERATURE = 100.0


def bayesian_weights(rng: np.random.Generator, n_units: int, temperature: float) -> np.ndarray:
    """Bayesian bagging weights ``(-log u) ** temperature`` of ``n_units`` units, float64 (n_units,).

    At ``temperature`` 1 they are exponential: the Bayesian bootstrap's Dirichlet weights
    up to their sum (Rubin, "The Bayesian bootstrap", Ann. Statist. 1981); CatBoost's
    ``bagging_temperature`` raises them to a power. ``u`` is drawn on (0, 1]: no weight
    is infinite before the power. At a temperature whose powers leave float64's range
    (some weight infinite, or every one 0) the weights are taken up to a common factor,
    the largest 1, as the power of each one's logarithm less the largest: such weights
    span hundreds of orders of magnitude, and which draws leave the range varies, so
    ``min_child_weight`` and ``l2_regularization`` then bind on a scale of the draw's.
    """
    exponential = -np.log1p(-rng.random(n_units))
    with np.errstate(over="ignore", under="ignore"):  # out of range: taken up to a factor below
        weights = exponential**temperature
    if np.isfinite(weights).all() and weights.max(initial=0.0) > 0.0:
        return weights
    with np.errstate(divide="ignore"):  # a weight of 0 before the power stays 0
        logs = temperature * np.log(exponential)
    return np.exp(logs - logs.max())


def unit_counts(rng: np.random.Generator, n_all: int, fraction: float, bootstrap: bool, pool: np.ndarray | None = None) -> np.ndarray:
    """How many times each of ``n_all`` units is drawn (float64, (n_all,)): ``draw_counts``
    per unit, so that the holders of a share of the units (a fit over partitions) can take
    their share of one draw."""
    units = np.arange(n_all) if pool is None else np.flatnonzero(pool)
    n_units = len(units)
    n_draws = max(1, round(fraction * n_units))
    counts = np.zeros(n_all)
    if bootstrap:
        counts[units] = np.bincount(rng.integers(0, n_units, n_draws), minlength=n_units)
    elif n_draws == n_units:
        counts[units] = 1.0
    else:
        counts[units[rng.choice(n_units, n_draws, replace=False)]] = 1.0
    return counts


def seed_entropy(random_state: object) -> int:
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    return int(random_state)
