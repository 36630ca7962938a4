"""Shared helpers of the tree-engine tests: training sets, seeds, brute-force references."""

import numpy as np
from hypothesis import strategies as st

from forestrank._tree._binning import BinMapper
from forestrank._tree import _criteria, _histograms, _rng, _rows, _scans, _splitter
from forestrank._tree._grow import TrainingSet, TreeParams

CLASS_CRITERIA = [_criteria.ENTROPY, _criteria.GINI]


def training_set(X, targets, leaf_targets=None, max_bins=255):
    binner = BinMapper(max_bins).fit(X)
    thresholds, values = binner.padded_tables()
    targets = np.asarray(targets, dtype=float).reshape(len(X), -1)
    # Contiguous, as the estimators pass them: a strided column would compile the builder
    # once more, for arrays of any layout.
    leaf = np.ascontiguousarray(targets[:, 0] if leaf_targets is None else np.asarray(leaf_targets, dtype=float))  # empty: no values
    training = TrainingSet(
        binner.transform(X), binner.n_bins_, thresholds, values, targets, leaf, missing_bins=binner.missing_bins_
    )
    return training, binner


def seed(value=0):
    return _rng.new_state(np.random.SeedSequence(value))


# --- brute force ---------------------------------------------------------------------


def brute_cost(criterion, targets, weights, l2=0.0, n_classes=3):
    """Node cost straight from the definitions in _criteria's table."""
    total = weights.sum()
    if criterion in CLASS_CRITERIA:
        counts = np.bincount(targets[:, 0].astype(int), weights=weights, minlength=n_classes)
        if criterion == _criteria.ENTROPY:
            nonzero = counts[counts > 0]
            return total * np.log(total) - (nonzero * np.log(nonzero)).sum() if total > 0 else 0.0
        return total - (counts**2).sum() / total if total > 0 else 0.0
    if criterion == _criteria.VARIANCE:
        y = targets[:, 0]
        return (weights * y**2).sum() - (weights * y).sum() ** 2 / total
    g, h = (weights * targets[:, 0]).sum(), (weights * targets[:, 1]).sum()
    return -(g**2) / (h + l2)


def split_children(training, feature, b, missing):
    """The rows of each child of a found split: bin <= b, then the rest, the missing rows
    with the left one (``MISSING_LEFT``), the right one, or a first child of their own
    (``MISSING_APART``)."""
    bins = training.X_binned[:, feature]
    absent = bins == training.missing_bins[feature] if training.missing_bins is not None else np.zeros(len(bins), bool)
    low = (bins <= b) & ~absent
    if missing == _scans.MISSING_APART:
        return [absent, low, ~absent & ~low]
    left = low | (absent & (missing == _scans.MISSING_LEFT))
    return [left, ~left]


def brute_best_split(
    criterion, X_binned, targets, weights, min_samples_leaf=1, l2=0.0, n_classes=3, missing_bins=None,
    missing_direction=_scans.LEARN,
):  # fmt: skip
    """Best (gain, feature, children's rows) over every feature and every cut between occupied bins,
    the rows in a feature's missing bin (``missing_bins``, -1: none) on the side(s)
    ``missing_direction`` allows: the cuts of the values with the missing rows imputed
    +inf (right), -inf (left), both (learn), or, for ``SEPARATE``, in a child of their
    own beside the two of each cut of the present rows (Mohan's Eq. 2.1), or alone
    against all present rows."""
    parent = brute_cost(criterion, targets, weights, l2, n_classes)
    best = (-np.inf, -1, [])
    for feature in range(X_binned.shape[1]):
        bins = X_binned[:, feature]
        missing = bins == (missing_bins[feature] if missing_bins is not None else -1)
        present_bins = np.unique(bins[~missing])
        partitions = []
        if missing.any() and missing_direction == _scans.SEPARATE:
            partitions += [[missing, ~missing]] + [[missing, ~missing & (bins <= b), ~missing & (bins > b)] for b in present_bins[:-1]]
        else:
            lefts = []
            if missing_direction != _scans.LEFT or not missing.any():
                lefts += [bins <= b for b in np.unique(bins)[:-1]]
            if missing_direction in (_scans.LEARN, _scans.LEFT) and missing.any():
                lefts += [missing] + [(bins <= b) | missing for b in present_bins[:-1]]
            partitions += [[left, ~left] for left in lefts]
        for children in partitions:
            if any(child.sum() < max(min_samples_leaf, 1) for child in children):
                continue
            gain = parent - sum(brute_cost(criterion, targets[child], weights[child], l2, n_classes) for child in children)
            if gain > best[0] + 1e-9:
                best = (gain, feature, children)
    return best


# call_best_split's paths: histogram scan of the node's rows; scan of all-feature
# histograms filled beforehand (moment criteria); sorted sweep.
HISTOGRAM, POOLED, SORTED_SWEEP = 0, 1, 2


def statistics_second_moments(criterion, targets, weights):
    """Each row's second moment: ``w y^2`` (variance) or ``w h`` (newton)."""
    return weights * (targets[:, 0] ** 2 if criterion == _criteria.VARIANCE else targets[:, 1])


def summed_histograms(X_binned, columns, n_bins, dtype=np.float64):
    """Each feature's per-bin sums of ``columns`` (arrays of shape (n_rows,), one per histogram
    column) over the rows of ``X_binned`` (n_rows, n_features), added in row order
    (``np.add.at`` adds repeated indices in turn), independently of the engine's fill;
    shape (n_features, n_bins, len(columns)), ``dtype``."""
    histograms = np.zeros((X_binned.shape[1], n_bins, len(columns)), dtype=dtype)
    for feature in range(X_binned.shape[1]):
        for column, values in enumerate(columns):
            np.add.at(histograms[feature, :, column], X_binned[:, feature], values.astype(dtype))
    return histograms


def call_best_split(
    data, criterion, weights, path, n_classes=3, min_samples_leaf=1, l2=0.0, missing_direction=_scans.LEARN,
    feature_penalty=None, penalty_unit=0.0, max_features=None, n_threads=1, rng_state=None,
):  # fmt: skip
    """Run the numba split search on the whole data set as one node, every feature examined
    unless ``max_features`` (``feature_penalty`` and ``penalty_unit`` as in ``best_split``;
    no penalty by default). ``rng_state`` (``seed()`` by default) is advanced by the draws."""
    n_rows, n_features = data.X_binned.shape
    samples = np.arange(n_rows, dtype=np.int64)
    n_stats = _criteria.n_statistics(criterion, n_classes)
    statistics = np.zeros(n_stats)
    targets = np.ascontiguousarray(data.targets)
    if criterion in _criteria.CLASS_CRITERIA:
        np.add.at(statistics, targets[:, 0].astype(int), weights)
    else:
        statistics[0] = (weights * targets[:, 0]).sum()
        statistics[1] = statistics_second_moments(criterion, targets, weights).sum()
    cost = 0.0 if criterion == _criteria.HELLINGER else brute_cost(criterion, targets, weights, l2, n_classes)  # no cost
    node = _scans.Node(0, n_rows, weights.sum(), cost, statistics, -np.inf, np.inf, 0)
    max_bins = data.bin_thresholds.shape[1]
    rows = _rows.sorted_rows(samples, targets, weights)
    pool = None
    slot = -1
    if path == POOLED:  # the node's pooled histograms, summed here independently of the engine's fill
        columns = [weights * targets[:, 0], statistics_second_moments(criterion, targets, weights), np.ones(n_rows), weights]
        histograms = summed_histograms(data.X_binned, columns[: _criteria.n_hist_columns(criterion)], max_bins)[None]
        # The node holds every row: a feature of one bin here is one no thread fills.
        owners = _histograms.feature_owners(
            n_features, n_threads or 1, histograms[0, :, :, _histograms.HIST_COUNT], data.binned().missing_bins
        )
        histograms[0, owners[0] < 0] = 0.0  # what an unfilled slot may hold: a scan reading it would not find it constant
        pool = _histograms.new_pool(histograms, 1, owners=owners)
        pool.scan_gains[:] = np.inf  # a planted winner: a drawn feature left unscanned would be chosen
        pool.scan_cuts[:] = 0
        slot = 0
    params = TreeParams(
        criterion, n_classes, max_features=n_features if max_features is None else max_features, l2_regularization=l2,
        min_samples_leaf=min_samples_leaf, missing_direction=missing_direction, n_threads=n_threads,
    )  # fmt: skip
    return _splitter.best_split(
        data.binned(), rows, node,
        params.growth_params(), _scans.new_scratch(max_bins, n_stats, missing_direction), np.arange(n_features, dtype=np.int32),
        seed() if rng_state is None else rng_state,
        np.empty((n_rows, 3), dtype=np.int64) if path == SORTED_SWEEP else None, pool, slot, None, None,
        np.zeros(n_features) if feature_penalty is None else np.asarray(feature_penalty, dtype=np.float64), float(penalty_unit),
        None, None, -1,
    )  # fmt: skip


@st.composite
def nodes(draw, criterion, missing=False, n_values=7, max_rows=40):
    """A node's X (integers below ``n_values``; some NaN when ``missing``), targets of
    ``criterion`` and weights."""
    n = draw(st.integers(2, max_rows))
    n_features = draw(st.integers(1, 4))
    value = st.one_of(st.integers(0, n_values - 1), st.just(np.nan)) if missing else st.integers(0, n_values - 1)
    X = np.array(draw(st.lists(st.lists(value, min_size=n_features, max_size=n_features), min_size=n, max_size=n)), float)
    if criterion in CLASS_CRITERIA:
        targets = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), float)[:, None]
    elif criterion == _criteria.VARIANCE:
        targets = np.array(draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n)))[:, None]
    else:
        gradients = draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n))
        hessians = draw(st.lists(st.floats(0.05, 1), min_size=n, max_size=n))
        targets = np.column_stack([gradients, hessians])
    weights = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 0.5]), min_size=n, max_size=n)))
    return X, targets, weights
