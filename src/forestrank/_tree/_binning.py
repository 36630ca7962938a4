"""Feature binning: real values to small integer bins, once per fit (``docs/design.md``, "The engine's layers").

Each feature gets at most ``max_bins`` bins. A feature with at most ``max_bins``
distinct values gets one bin per value, cut at the midpoints between consecutive
values, so splitting on bins is exactly splitting on values. Otherwise a value held by
at least ``1 / max_bins`` of the samples gets a bin of its own (as LightGBM's bin
finder does) and the other bins follow the quantiles of the remaining values
(``_frequency_cuts``); every cut lies midway between two consecutive distinct values.
``max_bins=None`` is the exact mode: one bin per distinct value however many there
are, on the same code path (wider bin dtype). Above ``QUANTILE_SUBSAMPLE`` rows (binned,
not exact) the values are those of a sample of that many rows, as LightGBM's bin finder
samples: a value held by a few rows the sample missed shares its neighbour's bin, so a
binned split is then not always the exact split on the values.

A categorical feature (``categorical``; ``docs/categorical.md``) holds integer category
codes, and its bins are categories, not ranges: one bin per code in increasing code
order when it has at most ``max_bins`` codes; otherwise the ``max_bins - 1`` codes held
by the most rows (ties to the smaller code) get a bin each, in code order, and the rest
share one more, its "other" bin (``other_codes_``), as LightGBM keeps the frequent
categories of a column and lumps the rare ones. Its thresholds and bin values are the
bin indices, which no split reads (a categorical split is a set of bins,
``_tree/_scans.py``); ``category_codes_`` maps the bins back to codes.

A sample with value ``x`` falls in bin ``b = #{thresholds < x}``: ``x <= thresholds[b]``
and ``x > thresholds[b - 1]``. A split "bin <= b" is therefore the split
"x <= thresholds[b]" on raw values, which is how trees predict without binning.

NaN means "missing" (``docs/missing_values.md``). The cuts are learned from the
present values only, and a feature that has missing values where ``fit`` saw them
gets one more bin, its last (``missing_bins_``), which every missing value falls in.
The missing bin sorts after every value bin, so a scan in bin order that reaches it
last evaluates "missing go right"; the scans evaluate "missing go left" by moving it
first (``_tree/_scans.py``).
"""

import numpy as np
import scipy.sparse
from joblib import delayed
from sklearn.utils import check_random_state

from .._numba.dtypes import FLOAT_DTYPE
from .._input.features import as_feature_array, dense_blocks, dense_column, missing_columns
from .._numba.bits import sign_mask
from .._numba.jit import jit
from ..parallel._local import row_ranges, run_in_threads

# Rows used to place quantile cuts; as scikit-learn's HistGradientBoosting, a random
# subsample keeps binning linear for very large inputs.
QUANTILE_SUBSAMPLE = 200_000
_ROW_BLOCK = 256
# Rows from which the columns' sorts are shared among threads: with fewer, one thread
# sorts every column before joblib's round trip (it polls for results) would return
# (``benchmarks/RESULTS.md``, "Engine design measurements").
_PARALLEL_SORT_ROWS = 12_000


def _midpoints(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Cuts between values ``lower < upper`` (element-wise).

    The midpoint of two adjacent doubles can round up to the larger one, which would
    put it in the lower bin; the smaller value is used as the cut then.
    """
    middle = _middle(lower, upper)
    return np.where(middle < upper, middle, lower)


def _middle(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``(lower + upper) / 2`` element-wise, without overflow where the sum would pass
    float64's largest value (there as ``lower / 2 + upper / 2``, elsewhere bitwise the sum's half)."""
    with np.errstate(over="ignore"):
        middle = (lower + upper) / 2
    return np.where(np.isfinite(middle), middle, lower / 2 + upper / 2)


def _frequency_cuts(counts: np.ndarray, max_bins: int) -> np.ndarray:
    """Where to cut sorted distinct values into at most ``max_bins`` bins of about equal sample counts.

    A value held by at least ``1 / max_bins`` of the samples (a "heavy" value: the
    zeros of a sparse LETOR feature) gets a bin of its own, and the other bins are
    shared among the runs of light values between heavy ones in proportion to their
    samples (at least one each). Within a run of ``k`` bins the cuts follow the
    ``k``-quantiles of its samples (numpy's "lower" quantiles: the value holding order
    statistic ``floor(j (n - 1) / k)`` closes bin ``j``). Plain quantiles of all the
    samples spend most cuts on the heavy value, where they collapse: MQ2008 Fold1's
    features with 70-85% zeros and 700-1,800 distinct values got 32-77 bins that way,
    184-255 with this rule (LightGBM's bin finder isolates frequent values likewise).

    Parameters
    ----------
    counts : int64 array of shape (n_distinct,)
        Samples holding each of the sorted distinct values, ``n_distinct > max_bins``.
    max_bins : int

    Returns
    -------
    int64 array of increasing indices ``i``: cut between distinct values ``i`` and ``i + 1``
    """
    n_distinct = len(counts)
    heavy = np.flatnonzero(counts * max_bins >= counts.sum())
    # At most (max_bins - 1) // 2 heavy values, so that every light run between them
    # can still get a bin: heavy + runs <= 2 * heavy + 1 <= max_bins.
    most_heavy = (max_bins - 1) // 2
    if len(heavy) > most_heavy:
        heavy = np.sort(np.argsort(-counts, kind="stable")[:most_heavy])
    run_starts = np.append(0, heavy + 1)
    run_ends = np.append(heavy, n_distinct)
    nonempty = run_starts < run_ends
    run_starts, run_ends = run_starts[nonempty], run_ends[nonempty]
    cumulative = np.cumsum(counts)
    samples_before = np.where(run_starts > 0, cumulative[run_starts - 1], 0)
    run_samples = cumulative[run_ends - 1] - samples_before
    # One bin per run, the rest in proportion to the runs' samples (largest remainders).
    spare = max_bins - len(heavy) - len(run_starts)
    share = spare * run_samples / max(int(run_samples.sum()), 1)
    run_bins = 1 + np.floor(share).astype(np.int64)
    left_over = spare - int(run_bins.sum() - len(run_starts))
    run_bins[np.argsort(-(share - np.floor(share)), kind="stable")[:left_over]] += 1
    cuts = [heavy - 1, heavy]  # a heavy value is a bin of its own
    for before, n_run, k in zip(samples_before, run_samples, run_bins):
        statistics = np.floor(np.linspace(0, 1, k + 1)[1:-1] * (n_run - 1)).astype(np.int64)
        cuts.append(np.searchsorted(cumulative, before + statistics, side="right"))  # the values holding them
    cuts = np.unique(np.concatenate(cuts))
    return cuts[(cuts >= 0) & (cuts < n_distinct - 1)]


@jit
def _bin_rows(X, thresholds, n_value_bins, missing_bins, binned):
    """``binned[i, f]`` = number of cuts of feature ``f`` below ``X[i, f]`` (binary search);
    ``missing_bins[f]`` for a NaN.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    thresholds : float64 array of shape (n_features, max_bins)
        Cuts of each feature in its first ``n_value_bins[f] - 1`` entries, finite and
        none of them -0.0 (``sign_mask``'s conditions; +0.0 compares the same, and
        ``fit`` takes no infinity).
    n_value_bins : int32 array of shape (n_features,)
        Bins of present values per feature.
    missing_bins : int32 array of shape (n_features,)
        The missing bin of each feature, or -1. A NaN in a feature without one (a row
        that ``BinMapper.fit`` did not see) falls in bin 0: the callers grow trees on
        the rows they fitted the bins on only.
    binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
        Output, written row by row.
    """
    n_rows = X.shape[0]
    values = np.empty(_ROW_BLOCK)
    bases = np.empty(_ROW_BLOCK, dtype=np.int64)
    # Blocks of rows, features outermost inside a block: one feature's cuts (<= 2 KB)
    # stay in L1 while a block of output rows stays in cache, which measured faster than
    # looping over all features row by row. The block's values are searched together,
    # one step of the lower bound for all of them at a time: each value's steps form a
    # chain of dependent loads, and the block's independent chains overlap. A step adds
    # ``half`` when the cut is below the value, by the sign of their difference
    # (``_numba/bits.py``: a compare would become a branch that random values mispredict
    # at every other step). The trip count depends on the feature's cuts only; a NaN
    # searches harmlessly (the steps stay within the cuts) and takes the missing bin.
    for block_start in range(0, n_rows, _ROW_BLOCK):
        size = min(block_start + _ROW_BLOCK, n_rows) - block_start
        for feature in range(X.shape[1]):
            cuts = thresholds[feature]
            for k in range(size):
                values[k] = X[block_start + k, feature]
                bases[k] = 0
            length = n_value_bins[feature] - 1
            while length > 1:
                half = length // 2
                for k in range(size):
                    base = bases[k]
                    bases[k] = base + (half & sign_mask(cuts[base + half - 1] - values[k]))
                length -= half
            missing_bin = max(missing_bins[feature], 0)
            for k in range(size):
                base = bases[k]
                if length == 1:
                    base += 1 & sign_mask(cuts[base] - values[k])
                binned[block_start + k, feature] = missing_bin if values[k] != values[k] else base


def _bins_of_codes(codes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """The bin of each code from 0 to the largest in ``codes`` (each value bin's code, -1 for
    the "other" bin, last) and ``others`` (the "other" bin's codes), -1 for a code in neither;
    code 0 at least, so that a column of missing codes alone looks its codes up as any other."""
    named = codes[codes >= 0]
    bins = np.full(int(max(named.max(initial=-1), others.max(initial=-1), 0)) + 1, -1, dtype=np.int64)
    bins[named] = np.arange(len(named))
    bins[others] = len(codes) - 1
    return bins


def _category_tables(n_value_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds and bin values of a categorical column of ``n_value_bins`` bins: the bin
    indices (``_bin_rows`` needs finite increasing cuts; the lookup by code overwrites its bins)."""
    indices = np.arange(n_value_bins, dtype=FLOAT_DTYPE)
    return indices[:-1] + 0.5, indices


def _bin_dtype(max_n_bins: int) -> type:
    for dtype in (np.uint8, np.uint16, np.uint32):
        if max_n_bins <= np.iinfo(dtype).max + 1:
            return dtype
    raise ValueError(f"{max_n_bins} bins per feature is beyond uint32")  # pragma: no cover


class BinMapper:
    """Learn per-feature bin thresholds and map values to bins.

    Parameters
    ----------
    max_bins : int or None, default=255
        Maximum bins per feature, 2..256; ``None`` = exact mode (one bin per distinct
        value).
    random_state : int, RandomState or None
        Used to subsample rows for quantile cuts when there are more than
        ``QUANTILE_SUBSAMPLE`` rows.
    n_jobs : int or None, default=None
        Threads (joblib) that sort columns in ``fit`` and bin row blocks in
        ``transform``; the result does not depend on it.
    categorical : bool ndarray of shape (n_features,) or None, default=None
        Which features hold category codes (integers from 0 to
        ``_input.categories.MAX_CATEGORY_CODE``, NaN = missing, as
        ``_input.categories.check_category_codes`` leaves them); None: none.

    Attributes
    ----------
    thresholds_ : list of ndarray of float64
        ``thresholds_[f]`` has ``n_value_bins_[f] - 1`` increasing cuts.
    n_bins_ : ndarray of shape (n_features,), int32
        Bins per feature, the missing bin included.
    n_value_bins_ : ndarray of shape (n_features,), int32
        Bins of present values per feature (at least 1).
    missing_bins_ : ndarray of shape (n_features,), int32
        The missing bin of each feature (``n_bins_[f] - 1``) when ``fit`` saw a NaN
        in it, else -1.
    bin_values_ : list of ndarray of float64
        A representative value per value bin (the value itself for one-value bins,
        else the middle of the bin's range of training values).
    category_codes_ : dict of int to ndarray of int64
        For each categorical feature, the code of each of its value bins (-1 for its
        "other" bin).
    other_codes_ : dict of int to ndarray of int64
        For each categorical feature, the codes its "other" bin holds (none when every
        code has a bin).
    category_bins_ : dict of int to ndarray of int64
        For each categorical feature, the bin of each code from 0 to the largest ``fit``
        saw, -1 for a code it did not see.
    """

    def __init__(
        self, max_bins: int | None = 255, random_state: object = None, n_jobs: int | None = None,
        categorical: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        self.max_bins = max_bins
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.categorical = categorical

    def fit(self, X: np.ndarray) -> "BinMapper":
        """Learn the cuts of each column of ``X`` (float64 or float32, dense or scipy.sparse;
        NaN = missing, no inf)."""
        rng = check_random_state(self.random_state)
        X = as_feature_array(X)
        # From every row, not the quantile sub-sample: a missing value the sub-sample
        # missed must still get the missing bin.
        has_missing = missing_columns(X)
        n_rows = X.shape[0]
        if self.max_bins is not None and n_rows > QUANTILE_SUBSAMPLE:
            sample = X[np.sort(rng.choice(n_rows, QUANTILE_SUBSAMPLE, replace=False))]
        else:
            sample = X
        if scipy.sparse.issparse(sample):
            sample = sample.tocsc()  # columns one at a time
        # np.sort releases the GIL: columns sort in parallel threads, when they are long
        # enough to repay a thread.
        n_jobs = self.n_jobs if sample.shape[0] >= _PARALLEL_SORT_ROWS else 1
        categorical = self._categorical_mask(X.shape[1])
        self.category_codes_, self.other_codes_, self.category_bins_ = {}, {}, {}
        for feature in map(int, np.flatnonzero(categorical)):  # every row: a code the sub-sample missed gets a bin
            codes, others = self._kept_codes(dense_column(X, feature))
            self.category_codes_[feature], self.other_codes_[feature] = codes, others
            self.category_bins_[feature] = _bins_of_codes(codes, others)
        tables = run_in_threads(
            (
                delayed(self._column_cuts)(dense_column(sample, feature)) if not categorical[feature]
                else delayed(_category_tables)(len(self.category_codes_[feature]))
                for feature in range(X.shape[1])
            ),
            n_jobs,
        )  # fmt: skip
        self.thresholds_ = [thresholds for thresholds, _ in tables]
        self.bin_values_ = [representatives for _, representatives in tables]
        self.n_value_bins_ = np.array([len(t) + 1 for t in self.thresholds_], dtype=np.int32)
        self.n_bins_ = (self.n_value_bins_ + has_missing).astype(np.int32)
        self.missing_bins_ = np.where(has_missing, self.n_bins_ - 1, -1).astype(np.int32)
        self.bin_dtype_ = _bin_dtype(int(self.n_bins_.max()))
        return self

    def _categorical_mask(self, n_features: int) -> np.ndarray:
        if self.categorical is None:
            return np.zeros(n_features, dtype=bool)
        return np.asarray(self.categorical, dtype=bool)

    def _kept_codes(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(code of each value bin, -1 for the "other" bin; the codes of the "other" bin) of one
        categorical column of codes (NaN = missing)."""
        codes, counts = np.unique(column[~np.isnan(column)].astype(np.int64), return_counts=True)
        if self.max_bins is None or len(codes) <= self.max_bins:
            return codes, codes[:0]
        kept = np.zeros(len(codes), dtype=bool)
        kept[np.argsort(-counts, kind="stable")[: self.max_bins - 1]] = True
        return np.append(codes[kept], -1), codes[~kept]

    def _column_cuts(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cuts and bin representatives of one column (float64 or float32), from its present values."""
        ordered = np.sort(column).astype(FLOAT_DTYPE, copy=False)  # NaN sort last
        ordered = ordered[: len(ordered) - np.count_nonzero(np.isnan(ordered))]
        if len(ordered) == 0:  # every value missing: one empty value bin
            return np.zeros(0, dtype=FLOAT_DTYPE), np.zeros(1, dtype=FLOAT_DTYPE)
        first_of_value = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        distinct = ordered[first_of_value]
        if self.max_bins is None or len(distinct) <= self.max_bins:
            thresholds = _midpoints(distinct[:-1], distinct[1:])
            representatives = distinct
        else:
            cuts = _frequency_cuts(np.diff(first_of_value, append=len(ordered)), self.max_bins)
            thresholds = _midpoints(distinct[cuts], distinct[cuts + 1])
            # A bin's representative: its value when it holds one, else the middle of its range.
            lowest = distinct[np.append(0, cuts + 1)]
            highest = distinct[np.append(cuts, len(distinct) - 1)]
            representatives = np.where(lowest == highest, lowest, _middle(lowest, highest))
        return np.ascontiguousarray(thresholds, dtype=FLOAT_DTYPE), np.ascontiguousarray(representatives, dtype=FLOAT_DTYPE)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bins of ``X`` (as in ``fit``): row-major (C order), dtype ``bin_dtype_`` (uint8 unless exact mode needs more).

        Row-major because deep nodes of fully grown trees re-read the same few rows
        for every candidate feature: one row (136 bytes for LETOR features) stays in
        cache across features, where columns cost one cache line per row and feature
        (the Fortran layout measured slower: ``docs/design.md``, "Numba rules").
        """
        thresholds, _ = self.padded_tables()
        thresholds += 0.0  # -0.0 cuts to +0.0, which every value compares to alike (_bin_rows)
        X = as_feature_array(X)
        binned = np.empty(X.shape, dtype=self.bin_dtype_)
        ranges = row_ranges(X.shape[0], self.n_jobs, min_rows=16 * _ROW_BLOCK, align=_ROW_BLOCK)
        run_in_threads((delayed(self._bin_range)(X, a, b, thresholds, binned) for a, b in ranges), len(ranges))
        return binned

    def _bin_range(self, X: np.ndarray, start: int, stop: int, thresholds: np.ndarray, binned: np.ndarray) -> None:
        """Bin the rows ``start:stop`` of ``X`` into ``binned``; a sparse ``X`` a dense block at a time.

        A categorical column's bins are looked up by code (``category_bins_``); a code
        ``fit`` did not see takes the missing bin (bin 0 without one), as a NaN in a
        feature without a missing bin does in ``_bin_rows``.
        """
        for first, last, rows in dense_blocks(X, start, stop):
            _bin_rows(rows, thresholds, self.n_value_bins_, self.missing_bins_, binned[first:last])
            for feature, bins_of_codes in self.category_bins_.items():
                column = rows[:, feature]
                seen = (column >= 0) & (column < len(bins_of_codes))  # False for NaN
                bins = bins_of_codes[np.where(seen, column, 0).astype(np.int64)]
                unseen = max(int(self.missing_bins_[feature]), 0)
                binned[first:last, feature] = np.where(seen & (bins >= 0), bins, unseen)

    def padded_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Thresholds and bin values as (n_features, max(n_bins)) float64 arrays for the kernels.

        Row ``f`` holds ``thresholds_[f]`` (then +inf) and ``bin_values_[f]`` (then
        +inf); kernels only read entries below ``n_bins_[f]``. The missing bin's
        value and the cut below it are therefore +inf: a split between the last value
        bin and the missing bin has the threshold +inf (every present value left).
        """
        width = int(self.n_bins_.max())
        thresholds = np.full((len(self.n_bins_), width), np.inf)
        values = np.full((len(self.n_bins_), width), np.inf)
        for feature, (cuts, representatives) in enumerate(zip(self.thresholds_, self.bin_values_)):
            thresholds[feature, : len(cuts)] = cuts
            values[feature, : len(representatives)] = representatives
        return thresholds, values
