"""Ordered target statistics of categorical features: each category's mean grade as a
numeric column beside its codes (Prokhorenkova et al. 2018, "CatBoost: unbiased boosting
with categorical features", Section 3.2, Eq. 5).

A training row's statistic uses only the rows before it in a random order of the
training rows, so its own grade never enters it:

    s_k = (sum_{j before k, c_j = c_k} w_j y_j + a p) / (sum_{j before k, c_j = c_k} w_j + a),

with ``p`` the weighted mean grade (the prior) and ``a`` its weight. Each feature draws
an order of its own: with one shared order the first rows' statistics would all sit near
the prior together, an artefact the trees can split on. A row scored after
the fit gets its category's statistic over every training row (``target_statistics_columns``):
a category the fit did not see gets ``p``; a missing value (NaN, or a negative code)
stays NaN, for the trees' missing-value rule.
"""

import numpy as np


def ordered_target_statistics(
    X: np.ndarray, mask: np.ndarray, y: np.ndarray, weight: np.ndarray, prior_weight: float, rng: np.random.Generator
) -> tuple[np.ndarray, list[tuple]]:
    """The training rows' ordered statistics and the tables for later rows.

    Parameters
    ----------
    X : float64 array of shape (n_rows, n_features)
        Categorical columns hold integer codes or NaN (``categories.check_category_codes``).
    mask : bool array of shape (n_features,)
        The categorical features.
    y, weight : float64 arrays of shape (n_rows,)
        Grades and row weights.
    prior_weight : float
        ``a`` (> 0).
    rng : numpy.random.Generator
        Draws each categorical feature's order of the rows, in feature order.

    Returns
    -------
    columns : float64 array of shape (n_rows, n_categorical)
        One column per categorical feature, in feature order.
    tables : list of (codes, values, prior), one per categorical feature
        A feature's statistics over every training row: the codes the fit saw
        (float64, increasing), each one's smoothed mean grade ``(sum w y + a p) /
        (sum w + a)`` (float64, same length), and ``p``, the statistic of a code the
        fit did not see. Plain tuples of arrays: a saved model holds them as they are.
    """
    prior = float(np.average(y, weights=weight))
    columns = np.full((len(y), int(mask.sum())), np.nan)
    tables = []
    for column, feature in enumerate(np.flatnonzero(mask)):
        position = rng.permutation(len(y))  # each row's place in this feature's order
        codes = X[:, feature]
        rows = np.flatnonzero(~np.isnan(codes))
        rows = rows[np.lexsort((position[rows], codes[rows]))]  # by category, then in the random order
        if not len(rows):  # no code seen: every row's statistic is missing, every later code unseen
            tables.append((np.empty(0), np.empty(0), prior))
            continue
        sorted_codes = codes[rows]
        first = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]
        group = np.cumsum(first) - 1
        starts = np.flatnonzero(first)
        weighted_y = np.cumsum(weight[rows] * y[rows])
        weights = np.cumsum(weight[rows])
        before_y = weighted_y - weight[rows] * y[rows]  # the sums over the rows before, same category
        before_w = weights - weight[rows]
        before_y -= (before_y[starts])[group]
        before_w -= (before_w[starts])[group]
        columns[rows, column] = (before_y + prior_weight * prior) / (before_w + prior_weight)
        ends = np.r_[starts[1:], len(rows)] - 1
        group_y = weighted_y[ends] - np.r_[0.0, weighted_y[ends[:-1]]]
        group_w = weights[ends] - np.r_[0.0, weights[ends[:-1]]]
        tables.append((sorted_codes[starts], (group_y + prior_weight * prior) / (group_w + prior_weight), prior))
    return columns, tables


def target_statistics_columns(X: np.ndarray, mask: np.ndarray, tables: list[tuple]) -> np.ndarray:
    """The statistics of rows scored after the fit: float64 array of shape (n_rows,
    n_categorical), each code's value from ``tables`` (``ordered_target_statistics``'),
    the prior for a code the fit did not see, NaN for a missing value or a negative code."""
    columns = np.empty((X.shape[0], len(tables)))
    for column, (feature, (seen_codes, values, prior)) in enumerate(zip(np.flatnonzero(mask), tables)):
        codes = X[:, feature]
        if len(seen_codes):
            found = np.minimum(np.searchsorted(seen_codes, codes), len(seen_codes) - 1)
            columns[:, column] = np.where(seen_codes[found] == codes, values[found], prior)
        else:
            columns[:, column] = prior
        columns[np.isnan(codes) | (codes < 0), column] = np.nan
    return columns


def check_tables(tables: object, n_categorical: int) -> None:
    """Refuse, at load, target statistics that are not what a fit writes: one (codes, values,
    prior) per categorical feature, codes increasing, as many values, all finite."""
    problem = None
    if not isinstance(tables, list) or len(tables) != n_categorical:
        problem = f"{n_categorical} tables expected"
    else:
        for table in tables:
            codes, values, prior = table if isinstance(table, tuple) and len(table) == 3 else (None, None, None)
            if not (isinstance(codes, np.ndarray) and isinstance(values, np.ndarray) and codes.shape == values.shape
                    and codes.ndim == 1 and np.all(np.diff(codes) > 0)
                    and np.isfinite(values).all() and np.isfinite(float(prior))):  # fmt: skip
                problem = "a table is not increasing codes with as many finite values"
    if problem is not None:
        raise ValueError(f"the model's target_statistics_ are not a fit's ({problem}): not a model forestrank saved.")
