"""Feature matrices as the estimators take them: dense float64 or float32, or scipy.sparse.

A dense matrix reaches the kernels in its own float dtype (float32 stays float32: the
kernels compare its values with float64 thresholds, which is exact), C-contiguous. A
sparse one (CSR, CSC, or the sparse arrays) is kept sparse, as CSR: binning reads it
column by column and prediction in blocks of rows (``dense_blocks``: at most
``SPARSE_ROW_BLOCK`` rows and ``SPARSE_BLOCK_VALUES`` values), each block made dense on
its own, so no dense copy of the whole matrix is ever made. An absent
entry is the value 0, as in scikit-learn; NaN (stored, or in a dense matrix) is a
missing value; a cell stored more than once is the sum of its entries, as scipy reads it.
"""

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from numbers import Real

import numpy as np
import scipy.sparse
from sklearn.utils.validation import _check_n_features, check_array, validate_data

from .._numba.dtypes import FLOAT_DTYPE, as_kernel_array

FEATURE_DTYPES = (np.float64, np.float32)
# Rows made dense at a time from a sparse matrix: 4096 rows of 700 float32 features
# are 11 MB, a few blocks per thread. A wider matrix comes in fewer rows a block, so
# that no block holds more than SPARSE_BLOCK_VALUES values whatever the width (a
# sparse matrix of 30,000 columns would otherwise make 4096-row blocks of 1 GB).
SPARSE_ROW_BLOCK = 4096
SPARSE_BLOCK_VALUES = SPARSE_ROW_BLOCK * 700
# True while an outer estimator hands rows whose feature names it has checked to inner
# forestrank models (names_matched). A context variable rather than a warnings filter:
# the filters are the whole process's, and before Python 3.14 threads restoring them
# around their own blocks leave each other's filters in place for good.
_NAMES_MATCHED = contextvars.ContextVar("forestrank_names_matched", default=False)


@contextlib.contextmanager
def names_matched() -> Iterator[None]:
    """Inside the block, forestrank estimators predicting skip scikit-learn's check of
    ``X``'s feature names (and its warnings): an outer estimator has checked them, and
    the inner ones would repeat its warning, or warn about a validated array of the
    columns they were fitted on. The width is still checked."""
    token = _NAMES_MATCHED.set(True)
    try:
        yield
    finally:
        _NAMES_MATCHED.reset(token)


def validate_rows(estimator: object, X: object, *, reset: bool, **check_params: object) -> object:
    """scikit-learn's ``validate_data(estimator, X, reset=reset, **check_params)``, less its
    feature-name check when predicting inside :func:`names_matched`."""
    if reset or not _NAMES_MATCHED.get():
        return validate_data(estimator, X, reset=reset, **check_params)
    if not check_params.pop("skip_check_array", False):
        X = check_array(X, input_name="X", estimator=estimator, **check_params)
    _check_n_features(estimator, X, reset=False)
    return X


def check_features(estimator: object, X: object, *, reset: bool) -> np.ndarray | scipy.sparse.csr_matrix:
    """Validate ``X`` for ``estimator`` (scikit-learn's ``validate_data``) and return it as the kernels take it.

    NaN is allowed (missing values); inf, also a stored one of a sparse matrix, is an
    error that names X. Other dtypes become float64.

    When predicting (``reset=False``), an array that is already what the kernels take (C-contiguous,
    writeable, float32 or float64, of the width the estimator was fitted on without
    feature names) and holds no inf is returned as it is: the checks ``validate_data``
    would make, at a small part of its cost, which a query of a few rows scored at a
    time would otherwise pay many times over (``benchmarks/RESULTS.md``, "Scoring speed").
    """
    if not reset and _kernel_ready(estimator, X):
        return X
    with np.errstate(over="ignore", invalid="ignore"):  # scikit-learn's finiteness check sums X first
        X = validate_rows(
            estimator, X, reset=reset, accept_sparse=("csr", "csc"), dtype=FEATURE_DTYPES, ensure_all_finite="allow-nan"
        )
    return as_feature_array(X)


def _kernel_ready(estimator: object, X: object) -> bool:
    """Whether ``X`` passes ``check_features(estimator, X, reset=False)`` unchanged, by cheap tests only."""
    if not (
        type(X) is np.ndarray and X.ndim == 2 and X.dtype in FEATURE_DTYPES and X.flags.c_contiguous
        and X.flags.writeable and X.shape[0] > 0 and X.shape[1] == getattr(estimator, "n_features_in_", -1)
        and not hasattr(estimator, "feature_names_in_")
    ):  # fmt: skip
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        total = X.sum()
    return bool(np.isfinite(total)) or not np.isinf(X).any()


def as_feature_array(X: np.ndarray | scipy.sparse.spmatrix) -> np.ndarray | scipy.sparse.csr_matrix:
    """``X`` in the layout of the kernels: CSR if sparse, else C-contiguous; float32 or
    float64 (other dtypes become float64).

    A sparse matrix whose cells hold several stored entries (scipy reads such a cell as
    their sum) becomes a copy with one entry per cell, so that every reader (binning, the
    checks of categorical codes, prediction) sees the cell's value; ``X`` itself is never
    changed. A canonical CSR matrix of a kernel dtype stays as it is (no copy).

    Raises
    ------
    ValueError
        When finite stored entries of one cell sum to inf (``validate_data`` checks each
        entry, not their sums).
    """
    dtype = X.dtype if X.dtype in FEATURE_DTYPES else FLOAT_DTYPE
    if scipy.sparse.issparse(X):
        X = scipy.sparse.csr_matrix(X, dtype=dtype)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
            if np.isinf(X.data).any():
                raise ValueError(
                    "X holds inf where duplicate stored entries of one cell sum past the float range: the sparse "
                    "matrix's cell is the sum of its stored entries, which must be finite (NaN is a missing value)."
                )
        return X
    return as_kernel_array(X, dtype)


def dense_blocks(
    X: np.ndarray | scipy.sparse.csr_matrix, first: int = 0, last: int | None = None
) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, rows)``: the rows ``start:stop`` of ``X`` as a dense C-contiguous array,
    over the rows ``first:last`` (all by default).

    A dense ``X`` is one block (a view); a sparse one comes in blocks of
    ``SPARSE_ROW_BLOCK`` rows, fewer where that many rows would hold more than
    ``SPARSE_BLOCK_VALUES`` values (at least one row a block).
    """
    last = X.shape[0] if last is None else last
    if not scipy.sparse.issparse(X):
        yield first, last, X[first:last]
        return
    n_rows = max(1, min(SPARSE_ROW_BLOCK, SPARSE_BLOCK_VALUES // max(1, X.shape[1])))
    for start in range(first, last, n_rows):
        stop = min(start + n_rows, last)
        yield start, stop, X[start:stop].toarray()


def dense_column(X: np.ndarray | scipy.sparse.spmatrix, feature: int) -> np.ndarray:
    """Column ``feature`` of ``X`` as a dense 1-D array (of X's dtype)."""
    if scipy.sparse.issparse(X):
        return X[:, [feature]].toarray().ravel()
    return X[:, feature]


def missing_columns(X: np.ndarray | scipy.sparse.spmatrix) -> np.ndarray:
    """Whether each column of ``X`` holds a NaN, bool array of shape (n_features,)."""
    if scipy.sparse.issparse(X):
        csr = scipy.sparse.csr_matrix(X)
        flags = np.zeros(X.shape[1], dtype=bool)
        flags[csr.indices[np.isnan(csr.data)]] = True
        return flags
    return np.isnan(X).any(axis=0)


def check_monotonic_cst(monotonic_cst: object, n_features: int, feature_names: np.ndarray | None) -> np.ndarray | None:
    """``monotonic_cst`` as int8 of shape (n_features,) (-1, 0, +1), or None when absent or all 0.

    As scikit-learn's histogram gradient boosting takes it: an array with one entry per
    feature, or a dict from feature index (or name, when ``X`` had feature names) to
    its constraint, unnamed features free.
    """
    if monotonic_cst is None:
        return None
    constraints = np.zeros(n_features, dtype=np.int8)
    if isinstance(monotonic_cst, dict):
        names = [] if feature_names is None else list(feature_names)
        given = {}  # feature index -> the key that set it: a name and an index may name one feature
        for key, value in monotonic_cst.items():
            if isinstance(key, str):
                if key not in names:
                    raise ValueError(
                        f"monotonic_cst names {key!r}, which is not a feature name of X"
                        + ("" if names else " (X had no feature names: use feature indices)")
                        + "."
                    )
                index = names.index(key)
            elif isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n_features:
                index = int(key)
            else:
                raise ValueError(f"monotonic_cst's keys are feature names or indices in [0, {n_features}); got {key!r}.")
            if index in given:
                raise ValueError(
                    f"monotonic_cst gives feature {index} twice, as {given[index]!r} and as {key!r}: give each feature "
                    "one key."
                )
            given[index] = key
            constraints[index] = _constraint_value(value, key)
    else:
        try:  # as objects: a bool among ints would become an int (True as 1)
            values = np.asarray(monotonic_cst, dtype=object)
        except (TypeError, ValueError):
            values = np.asarray([None])
        if values.shape != (n_features,):
            raise ValueError(
                f"monotonic_cst must have one entry per feature of X, shape ({n_features},), or be a dict; "
                f"got shape {values.shape}."
            )
        for index, value in enumerate(values.tolist()):
            constraints[index] = _constraint_value(value, index)
    return constraints if constraints.any() else None


def _constraint_value(value: object, key: object) -> int:
    # a bool (numpy's too) is no direction, and a complex 1 would pass the membership test
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real) or value not in (-1, 0, 1):
        raise ValueError(f"monotonic_cst must hold -1, 0 or 1 per feature; feature {key!r} has {value!r}.")
    return int(value)


def check_interaction_cst(interaction_cst: object, n_features: int) -> np.ndarray | None:
    """``interaction_cst`` as the bits of each group's features, or None when absent.

    As scikit-learn's histogram gradient boosting takes it: ``"pairwise"`` (every two
    features), ``"no_interactions"`` (each feature alone), or a list of groups of
    feature indices; the features in no group form one more group together. A branch
    of a tree uses features of one group only.

    Returns
    -------
    ndarray of shape (n_groups, ceil(n_features / 64)), uint64, or None
        Feature ``f`` of group ``g`` is bit ``f % 64`` of word ``f // 64`` of row ``g``.
    """
    if interaction_cst is None:
        return None
    if isinstance(interaction_cst, str):
        if interaction_cst == "pairwise":
            groups = [(a, b) for a in range(n_features) for b in range(a + 1, n_features)] or [tuple(range(n_features))]
        elif interaction_cst == "no_interactions":
            groups = [(f,) for f in range(n_features)]
        else:
            raise ValueError(
                f"interaction_cst must be 'pairwise', 'no_interactions' or a list of groups of feature indices; "
                f"got {interaction_cst!r}."
            )
    else:
        try:
            groups = [tuple(group) for group in interaction_cst]
        except TypeError:
            raise ValueError(
                f"interaction_cst must be 'pairwise', 'no_interactions' or a list of groups of feature indices; "
                f"got {interaction_cst!r}."
            ) from None
        for group in groups:
            for feature in group:
                if isinstance(feature, bool) or not isinstance(feature, (int, np.integer)) or not 0 <= feature < n_features:
                    raise ValueError(
                        f"interaction_cst's groups hold feature indices in [0, {n_features}); got {feature!r} in "
                        f"{group!r}."
                    )
        listed = {int(feature) for group in groups for feature in group}
        rest = tuple(f for f in range(n_features) if f not in listed)
        if rest:
            groups.append(rest)
    bits = np.zeros((len(groups), (n_features + 63) // 64), dtype=np.uint64)
    for g, group in enumerate(groups):
        for feature in group:
            bits[g, int(feature) // 64] |= np.uint64(1) << np.uint64(int(feature) % 64)
    return bits


def take_input_attributes(estimator: object, checked: object) -> None:
    """Give ``estimator`` the input attributes (``n_features_in_``, ``feature_names_in_``)
    that ``validate_data(..., reset=True)`` set on ``checked``, a clone that validated the
    rows in its place: scikit-learn sets them before it checks the values, so a refused
    ``X`` validated by the estimator itself would leave them of that ``X``."""
    vars(estimator).pop("feature_names_in_", None)
    vars(estimator).update({name: value for name, value in vars(checked).items() if name.endswith("_in_")})


def check_inner_columns(inner: object, names: object, role: str) -> None:
    """Refuse an ``inner`` model (an init, a transfer source) fitted on a DataFrame whose
    columns the outer fit's ``names`` (its ``feature_names_in_``, or None) do not repeat in
    order: the outer estimator hands it its validated rows as an array, by position."""
    inner_names = getattr(inner, "feature_names_in_", None)
    if inner_names is not None and names is not None and list(inner_names) != list(names):
        raise ValueError(
            f"{role} was fitted on the columns {list(inner_names)} and X has {list(names)}: {role} reads the rows by "
            f"position, so give X the {role}'s columns in the {role}'s order."
        )


def by_position(inner: object, method: Callable, X: object, names: object) -> np.ndarray:
    """``method(X)``, a method of ``inner``, on the outer estimator's rows ``X`` (its
    validated array, or the caller's frame of the same columns). Where both were fitted
    on frames of the same columns (:func:`check_inner_columns`), scikit-learn's warning
    that ``X`` has no feature names would be about columns already matched: ``inner``
    reads ``X`` inside :func:`names_matched` (:func:`rows_for`)."""
    if getattr(inner, "feature_names_in_", None) is None or names is None:
        return method(X)
    with names_matched():
        return method(rows_for(inner, X))


def rows_for(inner: object, X: object) -> object:
    """``X`` as the model ``inner`` of an outer estimator is handed it: inside
    :func:`names_matched`, a dense array as a frame of ``inner``'s column names for a
    model of another library fitted on named columns (whose own check would warn:
    forestrank's skip it there; a sparse matrix stays as it is, and the warning with it);
    otherwise as it is, the inner model checking the names itself."""
    names = getattr(inner, "feature_names_in_", None)
    ours = type(inner).__module__.partition(".")[0] == __name__.partition(".")[0]
    if names is None or ours or not _NAMES_MATCHED.get():
        return X
    return _named(X, names)


def _named(X: object, names: np.ndarray) -> object:
    """A dense array ``X`` as a pandas DataFrame of the columns ``names`` (a polars one
    without pandas); a frame, a sparse matrix (whose frame another library may read
    otherwise: XGBoost densifies it, turning absent entries from missing into zeros), or
    anything neither library is installed for, as it is."""
    if hasattr(X, "columns") or scipy.sparse.issparse(X):
        return X
    try:
        import pandas as pd
    except ImportError:
        try:
            import polars as pl
        except ImportError:
            return X
        return pl.DataFrame(np.asarray(X), schema=[str(name) for name in names], orient="row")
    return pd.DataFrame(X, columns=list(names), copy=False)
