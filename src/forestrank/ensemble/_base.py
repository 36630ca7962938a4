"""The ranking contract every forestrank estimator follows (``docs/design.md``, "Public contract").

``fit(X, y, qid=None, sample_weight=None)`` takes rows in any order with one query id
per row; :meth:`BaseRanker._validate_training_data` validates everything once and
hands the estimator the rows grouped by query (stable sort) together with the
:class:`~forestrank._input.queries.QueryGroups` needed to map results back to the caller's
order. ``predict`` scores rows independently; ``score`` is mean NDCG@10 under the
package's default convention.

The class attributes ``__metadata_request__fit/score = {"qid": True}`` make
scikit-learn's metadata routing pass ``qid`` to ``fit`` and ``score`` inside
Pipelines, ``cross_validate`` and ``GridSearchCV`` without ``set_*_request`` calls.
"""

import functools
import inspect
import warnings
from collections.abc import Callable
from numbers import Number
from typing import NamedTuple

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, InvalidParameterError, make_constraint
from sklearn.utils.validation import check_is_fitted

from joblib import delayed

from ..parallel._cluster import is_dask_collection
from .._numba.dtypes import NODE_DTYPE
from ._early_exit import EarlyExit
from .._input.categories import (
    SPLIT_ON_CATEGORIES,
    conversion_hint,
    check_categorical_features,
    check_category_codes,
    check_frame_dtypes,
    encode_frame,
    frame_categories,
    is_frame,
    is_polars_frame,
)
from .._input.features import check_features, dense_blocks, validate_rows
from ..parallel._local import row_ranges, run_in_threads
from .._input.queries import QueryGroups, check_qid, group_queries, stacklevel_outside_package
from .._tree import _predictor, _quickscorer
from .._input.labels import check_gain, check_grades_for_gain, check_relevance, check_sample_weight, normalize_sample_weight
from ..metrics._ranking import evaluate


# Rows per joblib task when predicting with several threads.
_PREDICT_CHUNK = 16_384


def _numbering(categories: dict, feature: int) -> str:
    """How ``frame_categories``' ``categories`` number ``feature``, for an error."""
    return f"the categories {categories[feature]}" if feature in categories else "its own integer codes"


class InconsistentVersionWarning(UserWarning):
    """A model saved by another forestrank version was loaded."""


def check_version(saved: str | None, estimator: str) -> None:
    """Warn when ``saved`` (the version that saved ``estimator``) is not this forestrank's."""
    from .._version import __version__

    if saved != __version__:
        warnings.warn(
            f"{estimator} was saved by forestrank {saved or 'of an unknown version'} and is loaded by "
            f"forestrank {__version__}: its predictions are only guaranteed under the version that saved it.",
            InconsistentVersionWarning,
            stacklevel=stacklevel_outside_package(through=("skops", "joblib", "pickle", "copyreg")),
        )


def refuse_bool_numbers(estimator: object) -> None:
    """Refuse a ``bool`` given for a parameter whose constraints take it only as a number.

    ``True`` is an ``Integral`` to Python and so passes scikit-learn's interval and
    ``Integral`` and ``Real`` constraints (``n_jobs``, ``relevant_grade``), where it meant 1
    to some parameters and reached numpy as a bool in others (a crash); a number given as
    a bool is more likely a slip than a count.

    Parameters
    ----------
    estimator : estimator with ``_parameter_constraints``
        Its parameters are read with ``getattr``.

    Raises
    ------
    InvalidParameterError
        Naming the parameter and its accepted values.
    """
    for name, constraints in estimator._parameter_constraints.items():
        value = getattr(estimator, name, None)
        if not isinstance(value, (bool, np.bool_)) or constraints == "no_validation":
            continue
        # A bool some constraint other than a number's accepts (a flag, ``verbose``) is meant as one.
        numeric = [isinstance(c, Interval) or (isinstance(c, type) and issubclass(c, Number)) for c in constraints]
        if any(not is_number and make_constraint(constraint).is_satisfied_by(value)
               for constraint, is_number in zip(constraints, numeric)):
            continue
        raise InvalidParameterError(
            f"The {name!r} parameter of {type(estimator).__name__} must be a number, not a bool; got {value!r}. "
            f"Accepted: {', '.join(str(make_constraint(constraint)) for constraint in constraints)}."
        )


def fit_takes(estimator: object, name: str) -> bool:
    """Whether ``estimator.fit`` takes the keyword ``name``: by name, or through ``**kwargs``
    (a meta-estimator that passes it on)."""
    parameters = inspect.signature(estimator.fit).parameters
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def check_in_memory(estimator: object, X: object) -> None:
    """A TypeError naming ``estimator``, whose ``fit`` takes arrays in memory, when ``X`` is a
    Dask collection, saying what to do instead."""
    if is_dask_collection(X):
        raise TypeError(
            f"{type(estimator).__name__} fits arrays in memory and X is a Dask collection: call X.compute() (and the "
            "same for y and qid) to fit on this machine, or use RFPointRanker, RFListRanker, RFHybridRanker, "
            "LambdaMART or PLRank, which fit Dask collections partitioned by query on a cluster (docs/cluster.md)."
        )


def fit_atomically(fit: Callable) -> Callable:
    """Decorate a ``fit`` so that one that raises, or is interrupted, leaves the estimator as it was.

    A fit sets fitted attributes as it goes (``n_features_in_`` when it validates
    ``X``, the trees as it grows them); without this, a fit that failed half-way left
    a model whose width no longer matched its trees. The attributes are restored as
    they were, lists copied (a warm start appends to them); the arrays of fitted
    models are never written in place.
    """

    @functools.wraps(fit)
    def fit_or_restore(self, *args, **kwargs):
        saved = {name: list(value) if isinstance(value, list) else value for name, value in self.__dict__.items()}
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return fit_or_restore


def sum_of_trees_terms(part: object, role: str) -> tuple[list, np.ndarray]:
    """The terms and base of ``part`` (its ``_additive_terms``), an ensemble that another
    one adds up (``role``: "init", "member"): refused when it is no forestrank ensemble,
    scores an expected grade (McRank), which is no sum of trees, or reads target
    statistics (``cat_target_statistics``), columns that only its own ``predict`` computes."""
    if not hasattr(part, "_additive_terms"):
        raise TypeError(f"{role} {type(part).__name__} is not a forestrank ensemble: it cannot be exported.")
    if getattr(part, "target_statistics_", None):
        raise ValueError(
            f"{role} {type(part).__name__} was fitted with cat_target_statistics=True: its trees read each category's "
            "target statistic, which only its own predict computes, so the combined trees cannot be served, "
            "explained or drawn. Fit it with cat_target_statistics=False for that."
        )
    terms, base, grade_weights = part._additive_terms()
    if grade_weights is not None:
        raise TypeError(f"{role} is a McRank model (one score per grade): its expected grade is not a sum of trees.")
    return terms, base


def ranker_gain(estimator: object) -> str | np.ndarray | None:
    """The gain of the grades that ``estimator`` (a forestrank ranker, or a ``Pipeline``
    ending in one) scores its NDCG with (``BaseRanker._gain``); None for another model."""
    steps = getattr(estimator, "steps", None)
    final = steps[-1][1] if steps else estimator
    return final._gain() if hasattr(final, "_gain") else None


def check_warm_start_width(
    estimator: BaseEstimator, fitted_width: int, n_features: int, fitted_names: object = None, names: object = None
) -> None:
    """Refuse a warm start on data of another width than the trees it continues, or on a
    frame whose columns (``names``) are not the ones the trees were fitted on
    (``fitted_names``), in their order: the trees read the columns by position."""
    if n_features != fitted_width:
        raise ValueError(
            f"X has {n_features} features, but {type(estimator).__name__} continues (warm_start=True) trees fitted "
            f"on {fitted_width} features; a warm start adds trees on the same features (set warm_start=False to "
            "fit anew)."
        )
    if fitted_names is not None and names is not None and list(fitted_names) != list(names):
        raise ValueError(
            f"X has the columns {list(names)}, but {type(estimator).__name__} continues (warm_start=True) trees fitted "
            f"on {list(fitted_names)}, which read the columns by position: give X those columns in that order (or "
            "set warm_start=False to fit anew)."
        )


class RankingData(NamedTuple):
    """Validated training data with rows grouped by query.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
        Relevance labels (integer-valued when the estimator requires grades).
    sample_weight : ndarray of shape (n_samples,), float64, or None
        Rescaled so that the lightest row of positive weight weighs 1
        (``_input.labels.normalize_sample_weight``).
    groups : QueryGroups
        Query layout; ``groups.ungroup`` restores the caller's row order.
    given_weight : ndarray of shape (n_samples,), float64, or None
        The weights as given (validated, grouped, not rescaled): what a nested
        estimator the fit fits, such as boosting's ``init``, is given.
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray | None
    groups: QueryGroups
    given_weight: np.ndarray | None = None


class BaseRanker(BaseEstimator):
    """Base class of forestrank rankers: validation, query grouping and scoring.

    Subclasses implement ``fit`` (calling :meth:`_validate_training_data`) and
    ``predict`` (calling :meth:`_validate_prediction_data`). Set
    ``_requires_grades = True`` when the estimator counts integer grades.
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    _requires_grades = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.positive_only = True
        tags.input_tags.allow_nan = True  # NaN = missing (docs/missing_values.md)
        tags.input_tags.sparse = True  # scipy.sparse in fit and predict (_input/features.py)
        return tags

    def __getstate__(self) -> dict:
        from .._version import __version__

        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns the live __dict__
        state["_forestrank_version"] = __version__
        return state

    def __setstate__(self, state: dict) -> None:
        from .._version import __version__

        saved_by = state.get("_forestrank_version")
        fitted = any(name.endswith("_") and not name.startswith("_") for name in state)
        if fitted:  # an unfitted estimator is only its parameters: nothing version-dependent
            check_version(saved_by, type(self).__name__)
        state = {name: value for name, value in state.items() if name != "_forestrank_version"}
        super().__setstate__(state)
        if saved_by != __version__:  # a state of this version lacks nothing: persistence.load refuses one that does
            self._default_parameters_added_since()
        if fitted:
            self._check_members()
            self._check_nested_widths()

    def _default_parameters_added_since(self) -> None:
        """Give a parameter of the class that a state saved by another version lacks (one added
        since) its default, which keeps the earlier behaviour: without it ``get_params``, and
        with it ``repr``, ``clone`` and a refit, raised AttributeError."""
        for name, parameter in inspect.signature(type(self).__init__).parameters.items():
            if name not in vars(self) and parameter.default is not inspect.Parameter.empty:
                setattr(self, name, parameter.default)

    def _validate_params(self) -> None:
        """scikit-learn's parameter check, and no ``bool`` where a number is meant
        (:func:`refuse_bool_numbers`)."""
        super()._validate_params()
        refuse_bool_numbers(self)

    def _inner_template(self) -> tuple[str, object] | None:
        """The parameter naming the unfitted ranker this one fits inside it, and that ranker
        (its default where the parameter is None): BROOF's forest, an AveragedRanker's
        member; None for a ranker that grows its own trees."""
        return None

    def _nested_estimators(self) -> list[tuple[str, object]]:
        """The fitted estimators this one predicts through, with the role of each (for
        errors): none here; ensembles of ensembles (BROOF, ``AveragedRanker``, a boosting
        ``init_``) name theirs."""
        return []

    def _check_members(self) -> None:
        """Refuse, at load, fitted members that do not hold together (an ensemble's list of
        members empty, or of another length than its weights): none here."""

    def _check_nested_widths(self) -> None:
        """Refuse, at load, a nested estimator of another width than this one.

        A container validates ``X`` against its own ``n_features_in_`` and may hand the
        rows straight to a member's trees (BROOF sums its forests' trees without their
        ``predict``), while a member's trees are checked at load against the member's
        own width, which the file sets: a member wider than its container would read past
        each row. Every nested estimator that has a width must have the container's.
        """
        width = getattr(self, "n_features_in_", None)
        for role, nested in self._nested_estimators():
            if not hasattr(nested, "predict"):
                raise ValueError(
                    f"a {type(self).__name__} holds {role} of type {type(nested).__name__}, which is no estimator: "
                    "not a model forestrank saved."
                )
            nested_width = getattr(nested, "n_features_in_", None)
            if nested_width is None and not isinstance(nested, BaseRanker):
                continue  # an estimator that records no width checks X itself
            if nested_width != width:
                raise ValueError(
                    f"a {type(self).__name__} of {width} features holds {role} ({type(nested).__name__}) of "
                    f"{nested_width} features: not a model forestrank saved."
                )

    def _validate_training_data(
        self, X: object, y: object, qid: object, sample_weight: object, *, partition: bool = False
    ) -> RankingData:
        """Validate fit inputs, set ``n_features_in_`` (and ``feature_names_in_``), group rows by query.

        Inputs are never modified; grouped arrays are copies unless the rows were
        already grouped. ``partition``: the rows are one partition of a fit on Dask
        collections, whose weights may all be zero where other partitions' are not, and
        which takes no categorical features.
        """
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        check_in_memory(self, X)
        fitted_width = getattr(self, "n_features_in_", None)
        fitted_names = getattr(self, "feature_names_in_", None)
        X = self._check_X(X, reset=True, partition=partition)
        if getattr(self, "warm_start", False) and getattr(self, "trees_", None):
            check_warm_start_width(self, fitted_width, X.shape[1], fitted_names, getattr(self, "feature_names_in_", None))
        n_samples = X.shape[0]
        labels = check_relevance(y, name="y", n_samples=n_samples, grades=self._requires_grades, warn_column=True)
        given = weights = None
        if sample_weight is not None:
            given = check_sample_weight(sample_weight, n_samples=n_samples, all_zero=partition)
            weights = normalize_sample_weight(given) if given.any() else given
        groups = group_queries(qid, n_samples, caller=f"{type(self).__name__}.fit")
        if n_samples > 1 and groups.n_queries == n_samples:
            warnings.warn(
                f"{type(self).__name__}.fit: every one of the {n_samples} queries in qid holds a single document, so "
                "there is no order to learn within a query (pairwise and listwise objectives fit a constant model). "
                "qid must give each row's query, not a row id.",
                UserWarning,
                stacklevel=stacklevel_outside_package(),
            )
        return RankingData(
            X=groups.group(X),
            y=groups.group(labels),
            sample_weight=None if weights is None else groups.group(weights),
            groups=groups,
            given_weight=None if given is None else groups.group(given),
        )

    def _validate_prediction_data(self, X: object, qid: object = None) -> np.ndarray:
        """Check the estimator is fitted and ``X`` matches the training features; a ``qid``
        given is checked against ``X`` (``_input.queries.check_qid``) even where the
        prediction does not read it, as a wrong one is the caller's mistake."""
        if not hasattr(self, "n_features_in_"):  # with it, check_is_fitted passes: spare its scan of vars()
            check_is_fitted(self)
        X = self._check_X(X, reset=False)
        if qid is not None:
            check_qid(qid, X.shape[0])
        return X

    def _split_on_categories(self) -> str | None:
        """How this estimator is told to split on a frame's category columns, for the error
        converting them to numbers; None where it takes numbers only."""
        return SPLIT_ON_CATEGORIES if hasattr(self, "categorical_features") else None

    def _check_X(self, X: object, *, reset: bool, partition: bool = False) -> np.ndarray:
        """``check_features``, with categorical features where the estimator takes them
        (``_input/categories.py``): in fit (``reset``) ``categorical_features`` resolved to
        ``is_categorical_`` and a DataFrame's categories recorded; then a DataFrame's
        category columns encoded by them, and the codes checked. ``partition``: ``X`` is a
        partition of Dask collections, whose fits take no categorical features (a text
        column is to be encoded as numbers)."""
        check_frame_dtypes(X)
        if reset and hasattr(self, "categorical_features"):
            mask = None
            if self.categorical_features is not None:
                shape = getattr(X, "shape", None) or np.shape(X)
                if len(shape) != 2:
                    return check_features(self, X, reset=reset)  # its error names X's shape
                mask = check_categorical_features(self.categorical_features, X, int(shape[1]))
            fitted = getattr(self, "is_categorical_", None)
            categories = frame_categories(X, mask)
            if getattr(self, "warm_start", False) and getattr(self, "trees_", None):
                if (fitted is None) != (mask is None) or (mask is not None and not np.array_equal(mask, fitted)):
                    raise ValueError(
                        "warm_start=True adds trees to a model fitted with other categorical_features; fit a new model "
                        "(warm_start=False)."
                    )
                self._check_warm_categories(categories)
            self.is_categorical_ = mask
            self.frame_categories_ = categories
        mask = getattr(self, "is_categorical_", None)
        try:
            if mask is None:
                return check_features(self, X, reset=reset)
            if not reset and self.frame_categories_ and (is_frame(X) or is_polars_frame(X)):
                # encode_frame reads category columns by position: a frame's names and width first
                validate_rows(self, X, skip_check_array=True, reset=False)
            encoded = check_features(self, encode_frame(X, self.frame_categories_), reset=reset)
        except ValueError as error:
            hint = conversion_hint(error, X, None if partition else self._split_on_categories())
            if hint is None:
                raise
            raise ValueError(f"{error}: {hint}.") from error
        return check_category_codes(encoded, mask, fit=reset, names=getattr(self, "feature_names_in_", None))

    def _record_collection_inputs(self, X: object, n_features: int, *, warm: bool = False) -> None:
        """The input attributes of a fit on Dask collections (``X`` a Dask array or DataFrame
        of ``n_features`` columns): its width, a DataFrame's column names (none for an
        array) and no categorical features, which those fits do not take, so that nothing
        of an earlier in-memory fit stays. ``warm``: the fit adds trees to fitted ones, and
        the inputs must be theirs (``check_warm_start_width``)."""
        names = None
        if hasattr(X, "columns") and all(isinstance(name, str) for name in X.columns):
            names = np.asarray(X.columns, dtype=object)
        if warm:
            check_warm_start_width(self, self.n_features_in_, n_features, getattr(self, "feature_names_in_", None), names)
            if getattr(self, "is_categorical_", None) is not None:
                raise ValueError(
                    "warm_start=True adds trees to a model fitted with other categorical_features; fit a new model "
                    "(warm_start=False)."
                )
        self.n_features_in_ = n_features
        if names is None:
            vars(self).pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = names
        if hasattr(self, "categorical_features"):
            self.is_categorical_, self.frame_categories_ = None, {}

    def _check_warm_categories(self, categories: dict) -> None:
        """Refuse a warm start whose frame numbers a category column by other categories
        (``frame_categories``) than the fit that grew the trees: their splits hold the old
        codes, which would name other categories."""
        fitted = getattr(self, "frame_categories_", {})
        if categories == fitted:
            return
        changed = next(feature for feature in sorted({*categories, *fitted}) if categories.get(feature) != fitted.get(feature))
        raise ValueError(
            f"warm_start=True adds trees to a model whose categorical feature {changed} was numbered by "
            f"{_numbering(fitted, changed)} in the first fit and by {_numbering(categories, changed)} in X: the trees "
            "split on the first fit's codes. Give X's column the fitted categories (pandas' cat.set_categories), or fit "
            "a new model (warm_start=False)."
        )

    def _gain(self) -> str | np.ndarray:
        """The gain of the grades in this estimator's NDCG: its ``label_gain`` where it has
        one (``_input.labels.check_gain``), else ``"exp"``."""
        return check_gain(getattr(self, "label_gain", "exp"), name="label_gain")

    def score(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> float:
        """Mean NDCG@10 of ``predict(X)`` over the queries in ``qid``.

        Default convention: gain ``2**y - 1`` (the estimator's ``label_gain`` where it
        has one), discount ``1/log2(rank + 1)``, expectation over tied scores, 0 for
        queries without a relevant document (see ``docs/metrics.md``). Warns when
        ``qid`` is None.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights: each query's NDCG@10 is weighted by the mean weight of its
            rows (a weight per query, as LightGBM's and XGBoost's metrics take it; they
            leave a query without relevant documents unweighted, ``docs/metrics.md``).

        Returns
        -------
        float
        """
        scores = self.predict(X)
        labels = check_relevance(y, name="y", n_samples=len(scores))
        check_grades_for_gain(labels, self._gain(), name="y", gain_name="label_gain")  # evaluate's words name gain
        return evaluate(
            "ndcg", labels, scores, qid, 10, conventions={"gain": self._gain()}, caller=f"{type(self).__name__}.score",
            sample_weight=sample_weight, against="X",
        )  # fmt: skip


def _forest_categories(trees: list, sizes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The categorical splits of ``trees`` (nodes back to back, ``sizes`` nodes each) as the
    predictor takes them (``_predictor.add_tree_values``): every tree's bitmaps back to back,
    offsets over all nodes; (None, None) when no tree has one."""
    if not any(tree.has_categories for tree in trees):
        return None, None
    offsets = np.zeros(int(sizes.sum()) + 1, dtype=np.int64)
    bits, node, word = [], 0, 0
    for tree, size in zip(trees, sizes):
        if tree.has_categories:
            offsets[node + 1 : node + size + 1] = word + tree.category_offsets[1:]
            bits.append(tree.category_bits)
            word += len(tree.category_bits)
        else:
            offsets[node + 1 : node + size + 1] = word
        node += size
    return offsets, np.concatenate(bits)


class TreeEnsembleMixin:
    """Prediction plumbing of estimators holding ``trees_`` (a list of ``Tree``) and ``n_jobs``.

    All trees' nodes sit back to back in one array for the predictor; the index (and
    the bitvector layout of trees small enough for it, ``_quickscorer``) is built in
    ``fit`` (``_index_trees``) and after unpickling, never in ``predict`` (which must
    not change the estimator), and is not pickled.
    """

    # Bytes of X the predictor runs all trees over before the next rows
    # (``_predictor.add_tree_values``): large passes for forests of deep trees.
    _predict_pass_bytes = _predictor.PASS_BYTES
    # ``predict`` takes ``qid`` (its early exits group by query): requested, so that a
    # Pipeline routing ``qid`` to a QueryScaler's transform hands it on without an error.
    __metadata_request__predict = {"qid": True}

    def _index_trees(self) -> None:
        """Put all trees' nodes back to back; each tree keeps a view (no second copy).

        Tree by tree, each tree letting go of its own nodes once they are copied: a
        forest's trees keep theirs in blocks (``_tree._grow.NodeStore``) that are
        freed as they empty, so the nodes never exist twice.
        """
        sizes = np.array([tree.node_count for tree in self.trees_])
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        nodes = np.empty(sizes.sum(), dtype=NODE_DTYPE)
        missing_left = np.empty(sizes.sum(), dtype=np.uint8)
        for tree, start, size in zip(self.trees_, offsets, sizes):
            nodes[start : start + size] = tree.nodes
            missing_left[start : start + size] = tree.missing_left
            tree.nodes = nodes[start : start + size]
            tree.missing_left = missing_left[start : start + size]
        self._forest_nodes = nodes
        self._forest_missing_left = missing_left
        self._tree_offsets = offsets
        self._forest_categories = _forest_categories(self.trees_, sizes)
        # Symmetric trees are also kept level by level: a row's leaf is then the bits of its
        # comparisons (``_predictor.add_oblivious_values``).
        self._oblivious = _predictor.symmetric_levels(self.trees_)
        self._bitvectors = self._bitvector_models(nodes, missing_left, offsets, sizes)

    def _bitvector_models(self, nodes: np.ndarray, missing_left: np.ndarray, offsets: np.ndarray, sizes: np.ndarray) -> dict:
        """The trees of each output laid out for the bitvector scorer (``_quickscorer``), keyed by
        their ``slice(...).indices(n_trees)`` in ``trees_``; empty where a traversal scores the
        trees faster (``_quickscorer.prefers_bitvectors``), and for symmetric trees, whose
        kernel is faster still (``add_oblivious_values``)."""
        sizes = sizes.astype(np.int64)
        if (
            self._oblivious is not None or self._forest_categories[0] is not None
            or not _quickscorer.prefers_bitvectors(nodes, offsets, sizes)
        ):  # fmt: skip
            return {}
        n_outputs = getattr(self, "n_outputs_", 1)
        n_features = int(nodes["feature"].max()) + 1
        models = {}
        for output in range(n_outputs):
            trees = slice(output, None, n_outputs)
            models[trees.indices(len(sizes))] = _quickscorer.bitvector_model(
                nodes, missing_left, np.ascontiguousarray(offsets[trees]), np.ascontiguousarray(sizes[trees]), n_features
            )
        return models

    def average_cost(self, X: object = None, qid: object = None, early_exit: EarlyExit | None = None) -> float:
        """``c_H``, the mean cost of scoring a document (Mohan's thesis, Eqs. 6.2-6.4).

        Without ``early_exit`` every document passes every tree: ``sum(tree_costs_)``.
        With it, the mean of the per-document costs of ``predict(X, qid=qid,
        early_exit=early_exit)`` (each document pays for the trees it passed).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Needed with ``early_exit``.
        qid : array-like of shape (n_samples,), default=None
            Needed with ``early_exit``.
        early_exit : EarlyExit, default=None

        Returns
        -------
        float
        """
        check_is_fitted(self)
        if early_exit is None:
            return getattr(self, "init_cost_", 0.0) + float(self.tree_costs_.sum())
        if X is None:
            raise ValueError("average_cost with early_exit needs the documents X (and their qid) to exit from.")
        self.predict(X, qid=qid, early_exit=early_exit)
        return early_exit.average_cost_

    def _predict_with_exits(
        self, X: np.ndarray, qid: object, early_exit: object, baseline: Callable, finish: Callable
    ) -> np.ndarray:
        """``predict`` under early exits (``_early_exit.EarlyExit``): validated ``X``; the model's
        stages are its iterations of ``n_outputs_`` trees (one tree for a forest).

        ``baseline(X)`` gives the raw scores before the first tree (n, n_outputs) and
        ``finish(raw, stages)`` the ranking scores (n,) of documents that passed
        ``stages`` stages (``EarlyExit.run``). ``early_exit`` gets its per-document
        results in the caller's row order.
        """
        if not isinstance(early_exit, EarlyExit):
            raise TypeError(f"early_exit must be an EarlyExit(every=..., fraction=...); got {early_exit!r}.")
        if qid is None:
            raise ValueError(
                "early_exit needs qid: documents exit by their rank within their query (predict(X, qid=qid, "
                "early_exit=...))."
            )
        groups = group_queries(qid, X.shape[0], caller=f"{type(self).__name__}.predict")
        X_grouped = groups.group(X)
        n_outputs = getattr(self, "n_outputs_", 1)

        def add_stages(rows: np.ndarray, first: int, last: int, raw: np.ndarray) -> None:
            for output in range(n_outputs):
                raw[:, output] += self._sum_trees(
                    X_grouped[rows], slice(first * n_outputs + output, last * n_outputs, n_outputs)
                )

        scores = early_exit.run(
            len(self.trees_) // n_outputs, groups.query_boundaries, baseline(X_grouped), add_stages, finish,
            self.tree_costs_.reshape(-1, n_outputs).sum(axis=1), n_outputs, getattr(self, "init_cost_", 0.0),
        )  # fmt: skip
        early_exit.trees_passed_ = groups.ungroup(early_exit.trees_passed_)
        early_exit.document_costs_ = groups.ungroup(early_exit.document_costs_)
        return groups.ungroup(scores)

    def _sum_trees(self, X: np.ndarray, trees: slice = slice(None)) -> np.ndarray:
        """Sum over the trees ``trees_[trees]`` (all by default) of each row's leaf value.

        ``X`` is validated (``_input.features.check_features``): dense float64 or float32, C
        order, or CSR, whose blocks of rows are made dense one after another; rows are
        split over ``n_jobs`` threads.
        """
        if scipy.sparse.issparse(X):
            out = np.empty(X.shape[0])
            for start, stop, rows in dense_blocks(X):
                out[start:stop] = self._sum_trees(rows, trees)
            return out
        bitvectors = self._bitvectors.get(trees.indices(len(self.trees_)))
        if bitvectors is not None:
            kernel, arguments = _quickscorer.add_bitvector_values, (bitvectors,)
        elif self._oblivious is not None:
            tree_ids = np.arange(len(self.trees_), dtype=np.int64)[trees]
            kernel, arguments = _predictor.add_oblivious_values, (*self._oblivious, tree_ids)
        else:
            offsets = np.ascontiguousarray(self._tree_offsets[trees])
            kernel = _predictor.add_tree_values
            arguments = (
                self._forest_nodes, self._forest_missing_left, *self._forest_categories, offsets, self._predict_pass_bytes
            )
        out = np.zeros(len(X))
        ranges = row_ranges(len(X), self.n_jobs, min_rows=_PREDICT_CHUNK)
        if len(ranges) == 1:  # in this thread, without joblib's task objects: a third of a one-row call
            kernel(X, *arguments, out)
        else:
            run_in_threads((delayed(kernel)(X[a:b], *arguments, out[a:b]) for a, b in ranges), len(ranges))
        return out

    def __getstate__(self) -> dict:
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns the live __dict__
        state.pop("_forest_nodes", None)  # derived from trees_; rebuilt on unpickling
        state.pop("_forest_missing_left", None)
        state.pop("_tree_offsets", None)
        state.pop("_forest_categories", None)
        state.pop("_oblivious", None)
        state.pop("_bitvectors", None)
        return state

    def _tree_width(self) -> int | None:
        """The columns the trees split on: ``n_features_in_``, more where a fit appends
        columns of its own (boosting's target statistics)."""
        return getattr(self, "n_features_in_", None)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "trees_" in state:
            width = self._tree_width()
            if any(len(tree.feature_gains) != width for tree in self.trees_):
                raise ValueError(
                    f"a {type(self).__name__} of {width} features holds a tree of another width: not a model "
                    "forestrank saved."
                )
            self._index_trees()
