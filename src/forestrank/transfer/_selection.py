"""Source documents ranked by a cross-fitted domain classifier (``transfer/__init__.py``)."""

from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GroupKFold, KFold
from sklearn.utils import check_array

from .._input.queries import check_qid
from ..ensemble._base import fit_takes


def select_similar(
    X_source: object,
    X_target: object,
    *,
    classifier: object = None,
    n_splits: int = 5,
    qid_source: object = None,
    random_state: int | None = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank the source rows by the probability that a domain classifier gives them of
    coming from the target population (Mohan's thesis, §5.2, Table 5.1).

    The classifier learns to tell target rows (label 1) from source rows (label 0).
    Cross-fitted: the source rows are split into ``n_splits`` folds (whole queries with
    ``qid_source``); each fold's rows are scored by a classifier fitted on every target
    row and the other folds' source rows, so no source row is scored by a classifier
    that saw it (in-sample scores would rank the rows it memorised as least
    target-like). Source and target are weighted to count equally in each fit.

    Parameters
    ----------
    X_source : array-like of shape (n_source, n_features)
        The large set's rows, dense (NaN for a missing value).
    X_target : array-like of shape (n_target, n_features)
        The small set's rows, the same features (read by position: two DataFrames must
        have the same columns in the same order).
    classifier : scikit-learn classifier or None, default=None
        Any classifier with ``predict_proba`` and ``sample_weight`` in ``fit``; None:
        ``sklearn.ensemble.HistGradientBoostingClassifier(random_state=random_state)``
        (it takes missing values).
    n_splits : int >= 2, default=5
        Folds of the cross-fitting.
    qid_source : array-like of shape (n_source,) or None, default=None
        Query ids of the source rows: folds then keep each query whole, so that the
        classifier does not score a document by its query's other documents.
    random_state : int or None, default=0
        Seeds the folds (without ``qid_source``) and the default classifier.

    Returns
    -------
    rows : int64 ndarray of shape (n_source,)
        Source row indices, the most target-like first (ties in row order).
    probabilities : float64 ndarray of shape (n_source,)
        ``P(target | x)`` of those rows, in the same order (non-increasing).
    """
    if hasattr(X_source, "columns") and hasattr(X_target, "columns"):  # two frames, their columns named any way
        source_names, target_names = list(X_source.columns), list(X_target.columns)
        if source_names != target_names:
            raise ValueError(
                f"X_source has the columns {source_names} and X_target {target_names}: the classifier reads them by "
                "position, so give X_target X_source's columns in the same order."
            )
    source = check_array(X_source, dtype=np.float64, ensure_all_finite="allow-nan", input_name="X_source")
    target = check_array(X_target, dtype=np.float64, ensure_all_finite="allow-nan", input_name="X_target")
    if source.shape[1] != target.shape[1]:
        raise ValueError(
            f"X_source and X_target must have the same features; got {source.shape[1]} and {target.shape[1]} columns."
        )
    if isinstance(n_splits, bool) or not isinstance(n_splits, Integral) or n_splits < 2:
        raise ValueError(f"n_splits must be an integer >= 2; got {n_splits!r}.")
    if classifier is None:
        from sklearn.ensemble import HistGradientBoostingClassifier

        classifier = HistGradientBoostingClassifier(random_state=random_state)
    elif not (is_classifier(classifier) and hasattr(classifier, "predict_proba") and fit_takes(classifier, "sample_weight")):
        raise ValueError(
            "classifier must be a scikit-learn classifier with predict_proba whose fit takes sample_weight (the two "
            f"populations weigh the same in every fit); got {classifier!r}."
        )
    n_source, n_target = source.shape[0], target.shape[0]
    if qid_source is None:
        folds = KFold(n_splits, shuffle=True, random_state=random_state).split(source)
    else:
        groups = check_qid(qid_source, n_source, against="X_source", name="qid_source")
        if len(np.unique(groups)) < n_splits:
            raise ValueError(f"qid_source has {len(np.unique(groups))} queries; n_splits={n_splits} needs at least as many.")
        folds = GroupKFold(n_splits).split(source, groups=groups)
    probabilities = np.empty(n_source)
    for train, held in folds:
        X = np.vstack([source[train], target])
        y = np.r_[np.zeros(len(train)), np.ones(n_target)]
        # Each population weighs half of the fit, whatever their sizes.
        weight = np.r_[np.full(len(train), 0.5 / len(train)), np.full(n_target, 0.5 / n_target)] * len(y)
        try:
            model = clone(classifier).fit(X, y, sample_weight=weight)
        except (TypeError, ValueError) as error:  # a fit(**params) that refuses it (a Pipeline without routing)
            if "sample_weight" not in str(error):
                raise
            raise ValueError(
                f"classifier must take sample_weight in fit (the two populations weigh the same in every fit); "
                f"{type(classifier).__name__}.fit refused it: {error}"
            ) from error
        probabilities[held] = model.predict_proba(source[held])[:, list(model.classes_).index(1.0)]
    rows = np.argsort(-probabilities, kind="stable")
    return rows.astype(np.int64), probabilities[rows]
