"""Categorical features: which columns hold categories, and their codes as the engine takes them.

``categorical_features`` takes scikit-learn's ``HistGradientBoosting*`` meanings: None,
an array of feature indices, a boolean mask, feature names (when ``X`` has them), or
``"from_dtype"`` (the pandas ``category`` columns of a DataFrame, the polars
``Categorical`` and ``Enum`` ones). A categorical column reaches the engine as integer
codes in a float matrix: a frame's category column as the position of each value among
the categories the fit saw (``encode_frame``: a pandas column's categories, a polars
``Enum``'s, or the sorted values of a polars ``Categorical``), any other as the numbers
it holds, which must be integers from 0 to ``MAX_CATEGORY_CODE``. A NaN, and,
as in LightGBM and scikit-learn, a negative code, is a missing category
(``docs/categorical.md``).
"""

import sys

import numpy as np
import scipy.sparse

# Codes above this are refused in fit: a categorical split keeps one bit per code up
# to the largest it saw (``_tree/_tree.py``), so the bound caps a split at 8 KB.
MAX_CATEGORY_CODE = 65_535


def is_frame(X: object) -> bool:
    """Whether ``X`` is a pandas DataFrame, a subclass's included (without importing pandas:
    no object is a DataFrame before pandas is imported)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(X, pandas.DataFrame)


def is_polars_frame(X: object) -> bool:
    """Whether ``X`` is a polars DataFrame, a subclass's included (without importing polars)."""
    polars = sys.modules.get("polars")
    return polars is not None and isinstance(X, polars.DataFrame)


def _category_dtype(dtype: object) -> bool:
    """A pandas ``category`` dtype, or a polars ``Categorical`` or ``Enum`` one."""
    return getattr(dtype, "name", None) == "category" or type(dtype).__name__ in ("Categorical", "Enum")


def _dtypes(X: object) -> list:
    """The column dtypes of a pandas or polars DataFrame."""
    return list(X.dtypes)


SPLIT_ON_CATEGORIES = "pass categorical_features='from_dtype' or their names"


def conversion_hint(error: ValueError, X: object, split_on_categories: str | None = SPLIT_ON_CATEGORIES) -> str | None:
    """:func:`category_columns_hint` for scikit-learn's ``error`` converting ``X`` to
    numbers (a text value: its message names no column); None for another error, which
    names its own cause."""
    return category_columns_hint(X, split_on_categories) if "convert" in str(error) else None


def category_columns_hint(X: object, split_on_categories: str | None = SPLIT_ON_CATEGORIES) -> str | None:
    """For an error converting ``X`` to numbers: which of a DataFrame's columns hold
    categories (pandas ``category``; polars ``Categorical`` or ``Enum``) or text (pandas
    ``str``, ``string`` or ``object``; polars ``String``), and how to split on them as
    categories (``split_on_categories``, the estimator's advice: which parameter to set),
    or, for an estimator that takes numbers only (None), to encode them; None when ``X``
    is no DataFrame or has no such column."""
    if not (is_frame(X) or is_polars_frame(X)):
        return None
    dtypes = list(zip(map(str, X.columns), _dtypes(X)))
    categories = [name for name, dtype in dtypes if _category_dtype(dtype)]
    text = [
        name for name, dtype in dtypes
        if getattr(dtype, "name", None) in ("object", "str", "string") or type(dtype).__name__ == "String"
    ]  # fmt: skip
    if split_on_categories is None:
        named = categories + text
        return f"column(s) {', '.join(map(repr, named))} of X hold categories or text: encode them as numbers" if named else None
    hints = []
    if categories:
        hints.append(
            f"column(s) {', '.join(map(repr, categories))} of X hold categories: {split_on_categories} to split on "
            "them as categories"
        )
    if text:
        hints.append(
            f"column(s) {', '.join(map(repr, text))} of X hold text: convert them to a category dtype "
            "(pandas' astype('category')) and pass categorical_features, or encode them as numbers"
        )
    return "; ".join(hints) or None


def _temporal_dtype(dtype: object) -> bool:
    """A pandas or polars dtype of dates, times, durations, periods or intervals."""
    if type(dtype).__name__ in ("Datetime", "Date", "Duration", "Time"):  # polars
        return True
    name = str(getattr(dtype, "name", ""))
    return getattr(dtype, "kind", "") in ("m", "M") or name.startswith(("period", "interval"))


def check_frame_dtypes(X: object) -> None:
    """Refuse a pandas or polars DataFrame holding columns of dates, times, durations,
    periods or intervals, naming them: numpy's conversion of such a frame fails with an
    error naming no column (a ``DTypePromotionError``, or ``float()`` of a ``Timestamp``).

    Raises
    ------
    ValueError
        Naming the columns, their dtypes and what to give instead.
    """
    if not (is_frame(X) or is_polars_frame(X)):
        return
    temporal = [f"{str(name)!r} ({dtype})" for name, dtype in zip(X.columns, _dtypes(X)) if _temporal_dtype(dtype)]
    if temporal:
        raise ValueError(
            f"column(s) {', '.join(temporal)} of X hold dates, times, durations, periods or intervals, which the trees "
            "cannot split: convert them to numbers (such as days since a date, the hour of the day, or an interval's "
            "endpoints) before fitting and predicting."
        )


def check_categorical_features(
    categorical_features: object, X: object, n_features: int, feature_names: object = None
) -> np.ndarray | None:
    """``categorical_features`` as a boolean mask of shape (n_features,), or None when no
    feature is categorical.

    Parameters
    ----------
    categorical_features : None, "from_dtype", array-like of int, bool or str
    X : the ``X`` given to fit (a DataFrame's names and dtypes are read), or None
    n_features : int
    feature_names : array-like of str or None, default=None
        The names that ``categorical_features`` may give when ``X`` is no DataFrame (a
        fitted estimator's ``feature_names_in_``, its rows already validated).

    Raises
    ------
    ValueError
        Naming ``categorical_features`` and what it accepts.
    """
    if categorical_features is None:
        return None
    frame = is_frame(X) or is_polars_frame(X)
    columns = X.columns if frame else feature_names
    names = None if columns is None else [str(name) for name in columns]
    if isinstance(categorical_features, str):
        if categorical_features != "from_dtype":
            raise ValueError(
                "categorical_features must be None, 'from_dtype', feature indices, a boolean mask or feature names; "
                f"got {categorical_features!r}."
            )
        mask = np.array([_category_dtype(dtype) for dtype in _dtypes(X)]) if frame else np.zeros(n_features, bool)
        return mask if mask.any() else None
    values = np.asarray(categorical_features)
    if values.ndim != 1:
        raise ValueError(f"categorical_features must be one-dimensional; got an array of shape {values.shape}.")
    mask = np.zeros(n_features, dtype=bool)
    if values.dtype == bool:
        if len(values) != n_features:
            raise ValueError(
                f"categorical_features as a boolean mask needs one entry per feature ({n_features}); got {len(values)}."
            )
        mask[:] = values
    elif values.dtype.kind in "iu":
        if ((values < 0) | (values >= n_features)).any():
            raise ValueError(f"categorical_features' indices must be in [0, {n_features}); got {values.tolist()}.")
        mask[values] = True
    elif values.dtype.kind in "UO" and all(isinstance(value, str) for value in values.tolist()):
        if names is None:
            raise ValueError("categorical_features names features, but X has no feature names: give feature indices.")
        unknown = [value for value in values.tolist() if value not in names]
        if unknown:
            raise ValueError(f"categorical_features names {unknown}, which are not feature names of X.")
        mask[[names.index(value) for value in values.tolist()]] = True
    elif len(values) == 0:
        return None
    else:
        raise ValueError(
            "categorical_features must be None, 'from_dtype', feature indices, a boolean mask or feature names; "
            f"got an array of dtype {values.dtype}."
        )
    return mask if mask.any() else None


def frame_categories(X: object, mask: np.ndarray | None) -> dict:
    """The categories of each category column of ``X`` (a pandas or polars DataFrame) that
    ``mask`` marks: {feature index: list of the categories, in the order that numbers their
    codes}; empty when ``X`` is no DataFrame. A pandas column's categories and a polars
    ``Enum``'s are taken as they are; a polars ``Categorical`` has no fixed categories, so
    its values present in ``X`` are taken, sorted."""
    if mask is None or not (is_frame(X) or is_polars_frame(X)):
        return {}
    dtypes = _dtypes(X)
    categories = {}
    for feature in np.flatnonzero(mask):
        dtype = dtypes[feature]
        if not _category_dtype(dtype):
            continue
        if is_frame(X) or type(dtype).__name__ == "Enum":
            categories[int(feature)] = list(dtype.categories)
            column = X.iloc[:, feature].cat.codes if is_frame(X) else X[:, int(feature)].to_physical()
            largest = column.max()
        else:
            categories[int(feature)] = sorted(X[:, int(feature)].drop_nulls().unique().cast(str).to_list())
            largest = len(categories[int(feature)]) - 1
        if largest is not None and largest > MAX_CATEGORY_CODE:
            raise ValueError(
                f"column {str(X.columns[feature])!r} of X has {len(categories[int(feature)]):,} categories and its rows "
                f"use category number {int(largest):,} (counting from 0) of them: a categorical feature takes at most "
                f"{MAX_CATEGORY_CODE + 1:,}. Drop the categories no row uses (pandas' remove_unused_categories()) or "
                "group rare ones."
            )
    return categories


def encode_frame(X: object, categories: dict) -> object:
    """``X`` with each category column of ``categories`` (``frame_categories``) replaced by
    the positions of its values among the fitted categories (float; NaN for a missing value,
    and for a category the fit did not see the code past the fitted ones, which the trees
    read as a missing one and the target statistics as unseen: the prior). Categories of
    text match a column as text (a column of numbers by its values' text, a whole-number
    float's as its integer's); others match by value, and a column of text is refused for
    them (no text is equal to a number).
    ``X`` itself is not modified; anything but a pandas or polars DataFrame is returned as
    it is.

    Raises
    ------
    ValueError
        A column of text where the fitted categories are numbers, naming the column.
    """
    if not categories:
        return X
    if is_polars_frame(X):
        import polars as pl

        def positions(feature: int, fitted: list) -> object:
            column = X[:, feature]
            if _all_text(fitted) and column.dtype.is_float():
                text = [None if value is None else _as_text(value) for value in column]
                column = pl.Series(column.name, text, dtype=pl.String)
            elif _all_text(fitted):
                column = column.cast(pl.String)
            elif type(column.dtype).__name__ in ("String", "Categorical", "Enum"):
                _refuse_text(X, feature, fitted)
            unseen = pl.when(column.is_null()).then(None).otherwise(len(fitted))
            return column.replace_strict(fitted, range(len(fitted)), default=unseen, return_dtype=pl.Float64)

        return X.with_columns(positions(feature, fitted).fill_null(np.nan) for feature, fitted in categories.items())
    if not is_frame(X):
        return X
    import pandas as pd

    encoded = X.copy(deep=False)
    for feature, fitted in categories.items():
        column = X.iloc[:, feature]
        missing = np.asarray(pd.isna(column))
        values = np.asarray(column, dtype=object)
        kind = pd.api.types.infer_dtype(values[~missing], skipna=True)
        if _all_text(fitted) and kind not in ("string", "empty"):
            values = values.copy()
            values[~missing] = [_as_text(value) for value in values[~missing]]
        elif not _all_text(fitted) and kind == "string":
            _refuse_text(X, feature, fitted)
        codes = pd.Index(fitted).get_indexer(values).astype(np.float64)
        codes[codes < 0] = len(fitted)
        codes[missing] = np.nan
        encoded[encoded.columns[feature]] = codes
    return encoded


def _as_text(value: object) -> str:
    """A category column's value as text, a whole-number float written as an integer (``10.0``
    as ``"10"``: a pandas column of integers with a missing value is float)."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _all_text(categories: list) -> bool:
    """Whether fitted ``categories`` are all strings (a frame's categories of text)."""
    return all(isinstance(value, str) for value in categories)


def _refuse_text(X: object, feature: int, fitted: list) -> None:
    """Raise the error of a category column of text whose fitted categories are numbers."""
    shown = ", ".join(map(repr, fitted[:5])) + (", ..." if len(fitted) > 5 else "")
    raise ValueError(
        f"column {str(X.columns[feature])!r} of X holds text, and the model's categories of it are numbers ({shown}): "
        "a category is matched by value, so no text would match. Give the column the fitted categories' numbers "
        "(polars: cast it to an integer type; pandas: astype(int) before astype('category'))."
    )


def check_category_codes(
    X: np.ndarray | scipy.sparse.csr_matrix, mask: np.ndarray | None, *, fit: bool, names: np.ndarray | None = None
) -> np.ndarray | scipy.sparse.csr_matrix:
    """``X`` with its categorical columns checked: integer codes or NaN; errors name a
    column by its name in ``names`` (a DataFrame's columns) where there is one.

    In fit (``fit=True``) a code above ``MAX_CATEGORY_CODE`` is an error, and negative codes
    become NaN (a missing category) in a copy, never in ``X``, for the binning. In predict
    the trees read a negative code, or one above every code they know, as they read a
    missing one (``_tree/_predictor.categorical_right``), so ``X`` is returned as it is.

    Raises
    ------
    ValueError
        A categorical column holding a non-integer value (or, in fit, a code above the
        bound), naming the column.
    """
    if mask is None:
        return X
    copied = False
    for feature in np.flatnonzero(mask):
        named = f"{feature}" if names is None else f"{names[feature]!r} (column {feature})"
        if scipy.sparse.issparse(X):
            column = X.data[X.indices == feature]
        else:
            column = X[:, feature]
        present = column[~np.isnan(column)]
        if (present != np.floor(present)).any():
            bad = float(present[present != np.floor(present)][0])
            raise ValueError(
                f"categorical feature {named} of X holds {bad!r}: categorical_features take integer category codes "
                "(or a pandas 'category' column); NaN is a missing category."
            )
        if fit and (present > MAX_CATEGORY_CODE).any():
            raise ValueError(
                f"categorical feature {named} of X holds the code {int(present.max())}: codes go up to "
                f"{MAX_CATEGORY_CODE}. Number the categories 0, 1, 2, ... (pandas 'category' columns are)."
            )
        if fit and (present < 0).any():
            if not copied:
                X = X.copy()
                copied = True
            if scipy.sparse.issparse(X):
                in_column = X.indices == feature
                X.data[in_column & (X.data < 0)] = np.nan
            else:
                X[X[:, feature] < 0, feature] = np.nan
    return X
