"""How single trees of a forest gain ranking quality split by split (RF-LTR paper §6.3, Fig. 7)."""

from typing import NamedTuple

import numpy as np

from ._input.features import dense_blocks
from .ensemble._forest import BaseForestRanker
from ._input.labels import check_relevance
from ._input.queries import check_qid
from .metrics import ndcg_score


class StrengthCurve(NamedTuple):
    """Mean expected NDCG of single trees cut after each number of splits.

    Attributes
    ----------
    n_splits : ndarray of shape (n_points,), int64
    ndcg : ndarray of shape (n_points,), float64
        Mean over the forest's trees of the NDCG of one tree keeping only its first
        ``n_splits`` splits.
    """

    n_splits: np.ndarray
    ndcg: np.ndarray


def _node_paths(tree, X: np.ndarray) -> np.ndarray:
    """Node ids from the root to each row's leaf, shape (n_rows, depth + 1), int64, padded with int64 max.

    ``X`` is dense (a block of ``_input.features.dense_blocks``)."""
    nodes = tree.nodes
    paths = np.full((X.shape[0], tree.max_depth + 1), np.iinfo(np.int64).max, dtype=np.int64)
    current = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    for level in range(paths.shape[1]):
        paths[rows, level] = current
        feature = nodes["feature"][current]
        inner = feature >= 0
        if not inner.any():
            break
        rows, current, feature = rows[inner], current[inner], feature[inner]
        right = ~tree.goes_left(current, X[rows, feature])
        current = nodes["left"][current] + right
    return paths


def tree_strength_curve(
    estimator: object,
    X: object,
    y: object,
    qid: object,
    n_splits: object = None,
    k: int | None = None,
) -> StrengthCurve:
    """Expected NDCG of the forest's single trees after each split, averaged over trees.

    The engine numbers nodes in the order the tree was split (split ``i`` creates
    nodes ``2i + 1`` and ``2i + 2``), so a tree "after ``s`` splits" keeps the nodes
    with ids ``<= 2s`` and scores each row by the deepest of them on its path. For the
    paper's curves grow breadth-first (RFListRanker's default; RFPointRanker needs
    ``expansion="breadth"``; RFHybridRanker grows its pointwise nodes depth-first once
    its last listwise split is made unless ``max_leaf_nodes`` is set, so give it one
    that cannot bind, such as the number of training rows). Call once with training
    data and once with test data.

    Parameters
    ----------
    estimator : fitted RFPointRanker, RFListRanker or RFHybridRanker
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Relevance grades.
    qid : array-like of shape (n_samples,)
    n_splits : array-like of int or None, default=None
        Split counts to evaluate; None: 0, then about 40 geometrically spaced counts
        up to the largest tree's.
    k : int or None, default=None
        NDCG cutoff (gain: the estimator's ``label_gain`` where it has one); None =
        whole lists (the RF-list objective). Ties in score are
        averaged (``ties="expected"``, Eq. 11-13).

    Returns
    -------
    StrengthCurve
    """
    if not isinstance(estimator, BaseForestRanker):
        raise TypeError(
            "estimator must be a fitted RFPointRanker, RFListRanker or RFHybridRanker: the curve averages the single "
            f"trees of a forest, and a {type(estimator).__name__}'s trees are not rankers on their own."
        )
    trees = getattr(estimator, "trees_", None)
    if trees is None:
        raise ValueError("estimator must be a fitted forest ranker (it has no trees_).")
    X = estimator._validate_prediction_data(X)
    n_rows = X.shape[0]
    y = check_relevance(y, name="y", n_samples=n_rows)
    qid = check_qid(qid, n_rows)
    largest = max((tree.node_count - 1) // 2 for tree in trees)
    if n_splits is None:
        n_splits = np.unique(np.concatenate(([0], np.geomspace(1, max(largest, 1), 40).astype(np.int64))))
    counts = np.asarray(n_splits)
    if counts.size == 0:  # an empty list is float64 to numpy: no count to evaluate, an empty curve
        counts = counts.astype(np.int64)
    if counts.ndim != 1 or counts.dtype == bool or not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ValueError(f"n_splits must be a 1-D array of non-negative integer split counts; got {n_splits!r}.")
    if counts.size and counts.max() > np.iinfo(np.int64).max:
        raise ValueError(f"n_splits must be split counts of at most 2**63 - 1; got {n_splits!r}.")
    n_splits = counts.astype(np.int64)
    kept = np.minimum(n_splits, largest)  # more splits than a tree has keep all of it (and 2 * s cannot overflow)
    ndcg = np.zeros(len(n_splits))
    scores = np.empty((len(n_splits), n_rows))  # each split count's prediction of every row
    for tree in trees:
        for start, stop, block in dense_blocks(X):  # a sparse X a block of rows at a time
            paths = _node_paths(tree, block)
            for i, splits in enumerate(kept):
                deepest = (paths <= 2 * splits).sum(axis=1) - 1  # ids grow along a path
                scores[i, start:stop] = tree.values[paths[np.arange(stop - start), deepest]]
        for i in range(len(n_splits)):
            ndcg[i] += ndcg_score(y, scores[i], qid, k, gain=estimator._gain(), ties="expected")
    return StrengthCurve(n_splits, ndcg / len(trees))
