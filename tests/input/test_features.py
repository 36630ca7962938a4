"""Dense, sparse and float32 feature matrices: the same models, and no float64 copy of float32 input."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone

from forestrank import BROOF, DummyRanker, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, make_ranking
from forestrank._input.features import SPARSE_BLOCK_VALUES, SPARSE_ROW_BLOCK, dense_blocks

ESTIMATORS = [
    RFPointRanker(n_estimators=4, random_state=0, oob_score=True),
    RFPointRanker(criterion="variance", n_estimators=3, max_bins=None, random_state=0),
    RFListRanker(n_estimators=2, random_state=0),
    RFHybridRanker(n_estimators=2, listwise_depth=2, random_state=0),
    LambdaMART(n_estimators=5, random_state=0),
    LambdaMART(n_estimators=5, missing_direction="separate", random_state=0),
    PLRank(n_estimators=3, random_state=0),
    BROOF(n_estimators=2, random_state=0),
    DummyRanker(),
]


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=50, docs_per_query=(5, 30), n_features=10, random_state=0)
    X = X.copy()
    X[np.abs(X) < 0.8] = 0.0  # about 40% zeros: absent entries of the sparse matrix
    X[::7, 3] = np.nan  # stored missing values
    return X, y, qid


def _fitted_state(model):
    trees = getattr(model, "trees_", [])
    return [(tree.nodes.tobytes(), tree.missing_left.tobytes(), tree.values.tobytes()) for tree in trees]


@pytest.mark.slow  # every estimator's kernels on sparse blocks: run after the quick suite
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize("sparse_format", [scipy.sparse.csr_matrix, scipy.sparse.csc_matrix, scipy.sparse.csr_array])
def test_sparse_input_gives_the_dense_model_bitwise(estimator, sparse_format, data):
    X, y, qid = data
    dense = clone(estimator).fit(X, y, qid=qid)
    sparse = clone(estimator).fit(sparse_format(X), y, qid=qid)
    assert _fitted_state(sparse) == _fitted_state(dense)
    np.testing.assert_array_equal(sparse.predict(sparse_format(X)), dense.predict(X))
    np.testing.assert_array_equal(dense.predict(sparse_format(X)), dense.predict(X))


def _after_the_quick_suite(estimator):
    """Exact (uint16) bins and boosting with missing_direction="separate" compile a builder
    of their own in the float32 test, and nowhere else in the quick suite: run it with the
    slow tests."""
    params = estimator.get_params()
    if params.get("max_bins", 255) is None or params.get("missing_direction") == "separate":
        return pytest.param(estimator, marks=pytest.mark.slow)
    return estimator


@pytest.mark.parametrize("estimator", [_after_the_quick_suite(estimator) for estimator in ESTIMATORS], ids=repr)
def test_float32_input_gives_the_model_of_its_values_in_float64(estimator, data):
    X, y, qid = data
    X32 = X.astype(np.float32)
    single = clone(estimator).fit(X32, y, qid=qid)
    double = clone(estimator).fit(X32.astype(np.float64), y, qid=qid)
    assert _fitted_state(single) == _fitted_state(double)
    np.testing.assert_array_equal(single.predict(X32), double.predict(X32.astype(np.float64)))


def test_sparse_prediction_spans_several_row_blocks():
    X, y, qid = make_ranking(n_queries=2 * SPARSE_ROW_BLOCK // 20 + 3, docs_per_query=20, n_features=5, random_state=1)
    X[X < 0.5] = 0.0
    model = LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    assert X.shape[0] > 2 * SPARSE_ROW_BLOCK
    np.testing.assert_array_equal(model.predict(scipy.sparse.csr_matrix(X)), model.predict(X))


@pytest.mark.parametrize(("n_features", "last"), [(5, 4900), (700, 4900), (30_000, 4900), (2 * SPARSE_BLOCK_VALUES, 6)])
def test_a_sparse_matrix_is_made_dense_in_blocks_of_bounded_size(n_features, last):
    """Blocks were 4096 rows whatever the width: predicting 4096 rows of a sparse
    matrix of 30,000 columns made a dense float64 copy of 1 GB of it at once."""
    rng = np.random.default_rng(0)
    entries = 20 * 5000
    X = scipy.sparse.csr_matrix(
        (rng.random(entries), (rng.integers(0, 5000, entries), rng.integers(0, n_features, entries))), shape=(5000, n_features)
    )
    blocks = list(dense_blocks(X, 3, last))
    assert len(blocks) >= 2 and blocks[0][0] == 3 and blocks[-1][1] == last
    assert all(stop == start for (_, stop, _), (start, _, _) in zip(blocks, blocks[1:]))
    assert all(rows.shape == (stop - start, n_features) for start, stop, rows in blocks)
    assert all(0 < stop - start <= SPARSE_ROW_BLOCK for start, stop, _ in blocks)
    assert all(rows.size <= max(SPARSE_BLOCK_VALUES, n_features) for _, _, rows in blocks)
    np.testing.assert_array_equal(np.vstack([rows for _, _, rows in blocks[:2]]), X[3 : blocks[1][1]].toarray())


@pytest.mark.parametrize("estimator", [RFPointRanker(n_estimators=2, random_state=0), LambdaMART(n_estimators=2)], ids=repr)
def test_float32_input_is_never_copied_to_float64(estimator):
    """The traced peak of fit and predict stays below one float64 copy of X (X wide
    enough for that copy to outweigh the buffers a tree grows in, which scale with the
    rows)."""
    X, y, qid = make_ranking(n_queries=2000, docs_per_query=50, n_features=80, random_state=0)
    X = X.astype(np.float32)
    clone(estimator).fit(X[:500], y[:500], qid=qid[:500])  # compile and load kernels outside the trace
    tracemalloc.start()
    model = estimator.fit(X, y, qid=qid)
    _, fit_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    model.predict(X)
    _, predict_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert fit_peak < 2 * X.nbytes and predict_peak < X.nbytes


@pytest.mark.parametrize(
    "X, message",
    [
        (np.full((6, 2), np.inf), "Input X contains infinity"),
        (np.zeros((6, 2, 1)), "Found array with dim 3"),
        (scipy.sparse.csr_matrix(np.array([[0.0, np.inf]] * 6)), "Input X contains infinity"),
    ],
    ids=["inf", "3-D", "sparse inf"],
)
def test_bad_feature_matrices_get_an_error_naming_X(X, message):
    y, qid = [0, 1, 2, 0, 1, 0], [0, 0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match=message):
        RFPointRanker(n_estimators=2).fit(X, y, qid=qid)


def _with_each_entry_stored_twice(X, split):
    """A CSR matrix of ``X`` whose every stored entry ``v`` of column ``j`` is stored as
    the two entries ``split(v, j)`` of the same cell (which scipy reads as their sum)."""
    canonical = scipy.sparse.csr_matrix(X)
    first, second = split(canonical.data, canonical.indices)
    data = np.column_stack([first, second]).ravel()
    return scipy.sparse.csr_matrix(
        (data, np.repeat(canonical.indices, 2), 2 * canonical.indptr), shape=X.shape
    )  # fmt: skip


def test_duplicate_stored_entries_are_read_as_their_sum_by_every_reader(data):
    """A categorical column's code stored as ``(c + 1) + (-1)`` was read entry by entry: the
    check of codes saw the two entries (``-1`` made a missing category, ``c / 2`` a
    fractional code), while binning and prediction read the sum."""
    X, y, qid = data
    X = X.copy()
    X[:, 0] = np.random.default_rng(0).integers(0, 6, X.shape[0])  # codes; 0 absent from the sparse matrix
    # codes as (c + 1) + (-1), other values as halves (sums exact in floating point)
    shifted = _with_each_entry_stored_twice(X, lambda v, j: (np.where(j == 0, v + 1, v / 2), np.where(j == 0, -1, v / 2)))
    halved = _with_each_entry_stored_twice(X, lambda v, j: (v / 2, v / 2))
    before = (shifted.data.copy(), shifted.indices.copy())
    make = lambda: LambdaMART(n_estimators=5, categorical_features=[0], random_state=0)  # noqa: E731
    dense = make().fit(X, y, qid=qid)
    for duplicated in (shifted, halved):
        model = make().fit(duplicated, y, qid=qid)
        assert _fitted_state(model) == _fitted_state(dense)
        np.testing.assert_array_equal(model.predict(duplicated), dense.predict(X))
        np.testing.assert_array_equal(model.trees_[0].apply(duplicated), dense.trees_[0].apply(X))
    assert np.array_equal(shifted.data, before[0], equal_nan=True) and np.array_equal(shifted.indices, before[1])


def test_duplicate_stored_entries_summing_past_the_float_range_are_refused():
    """Each stored entry was finite, so the finiteness check passed, and the cell read as inf."""
    X = _with_each_entry_stored_twice(np.full((6, 2), 1e308), lambda v, j: (v, v))
    with pytest.raises(ValueError, match="X holds inf where duplicate stored entries of one cell sum past the float range"):
        RFPointRanker(n_estimators=2).fit(X, [0, 1, 2, 0, 1, 0], qid=[0, 0, 0, 1, 1, 1])


def test_a_tree_applies_to_sparse_rows_of_any_float_dtype(data):
    """A longdouble (or integer) sparse matrix reached the numba kernels unconverted and
    failed in numba's typing; dense rows of those dtypes were converted already."""
    X, y, qid = data
    tree = RFPointRanker(n_estimators=1, random_state=0).fit(X, y, qid=qid).trees_[0]
    expected = tree.apply(X)
    np.testing.assert_array_equal(tree.apply(scipy.sparse.csr_matrix(X.astype(np.longdouble))), expected)
    rounded = np.nan_to_num(np.round(X))
    np.testing.assert_array_equal(tree.apply(scipy.sparse.csr_matrix(rounded.astype(np.int64))), tree.apply(rounded))


def test_the_single_feature_baseline_scores_float32_input_in_float64(data):
    X, y, qid = data
    model = DummyRanker().fit(X.astype(np.float32), y, qid=qid)
    assert model.predict(X.astype(np.float32)).dtype == np.float64


def test_a_monotonic_cst_dict_naming_a_feature_twice_is_refused():
    """``{"a": 1, 0: -1}`` named one feature twice, and the later key won silently."""
    from forestrank._input.features import check_monotonic_cst

    with pytest.raises(ValueError, match=r"monotonic_cst gives feature 0 twice, as 'a' and as 0"):
        check_monotonic_cst({"a": 1, 0: -1}, 2, np.array(["a", "b"], dtype=object))
    np.testing.assert_array_equal(check_monotonic_cst({"a": 1, 1: -1}, 2, np.array(["a", "b"], dtype=object)), [1, -1])


@pytest.mark.parametrize(
    "constraint",
    [{0: np.True_}, np.array([np.True_, 0, 0], dtype=object), [True, 0, 0], [np.True_, 0, 0], np.array([1 + 0j, 0, 0]),
     [1, 0.5, 0]],
    ids=["numpy bool in a dict", "numpy bool in an object array", "bool among ints", "numpy bool among ints", "complex",
         "fraction"],
)
def test_a_monotonic_cst_entry_that_is_no_direction_is_refused_by_name(constraint):
    """Python's True was refused but numpy's passed as +1 (np.True_ == 1); a complex 1 passed
    the test and failed in int() without naming the argument."""
    from forestrank._input.features import check_monotonic_cst

    with pytest.raises(ValueError, match="monotonic_cst must hold -1, 0 or 1 per feature"):
        check_monotonic_cst(constraint, 3, None)
    np.testing.assert_array_equal(check_monotonic_cst([1, -1.0, np.int8(0)], 3, None), [1, -1, 0])
    np.testing.assert_array_equal(check_monotonic_cst(np.array([0, -1, 1]), 3, None), [0, -1, 1])
