"""A source-population model's predictions as features (``transfer/__init__.py``)."""

import copy

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._input.categories import check_frame_dtypes, is_frame, is_polars_frame
from .._input.features import by_position, check_inner_columns, take_input_attributes

KINDS = {
    "Q": "its ranking score (predict)",
    "P": "its grade probabilities (predict_grade_proba)",
    "C": "its cumulative grade probabilities P(y <= c), every grade below the largest",
}


class ModelFeatures(TransformerMixin, BaseEstimator):
    """Append a fitted model's predictions to the features (Mohan's thesis, §5.3, Table 5.2).

    The model is trained beforehand on the large source set and is not refitted (nor
    cloned unfitted: a clone shares it, so ``GridSearchCV`` can tune ``kind`` and
    ``model``, a list of fitted models, but not the model's own parameters):
    ``fit`` only checks it and records the input width, ``transform`` returns ``X``
    with the model's outputs as extra columns, so that a ranker fitted after it in a
    Pipeline learns from the target's own features and from what the source model
    says about each document.

    The thesis names three kinds, Q, P and C; forestrank reads them as the three
    outputs a pointwise source model has:

    - ``"Q"``: its ranking score (one column; any fitted model with ``predict``);
    - ``"P"``: its grade probabilities (one column per grade; a model with
      ``predict_grade_proba``, e.g. ``LambdaMART(objective="mcrank")`` or
      ``"cumulative"``);
    - ``"C"``: its cumulative probabilities ``P(y <= c)`` for every grade below the
      largest (the same models).

    Parameters
    ----------
    model : fitted estimator
        Trained on the source set, with the same features as ``X``.
    kind : {"Q", "P", "C"}, default="Q"

    Attributes
    ----------
    n_features_in_ : int
    n_added_ : int
        The columns ``transform`` appends.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from forestrank import LambdaMART, make_ranking
    >>> from forestrank.transfer import ModelFeatures
    >>> X, y, qid = make_ranking(n_queries=60, random_state=0)
    >>> source = LambdaMART(objective="mcrank", n_estimators=5).fit(X[qid < 40], y[qid < 40], qid=qid[qid < 40])
    >>> ranker = make_pipeline(ModelFeatures(source, kind="P"), LambdaMART(n_estimators=5))
    """

    _parameter_constraints = {
        "model": [HasMethods("predict")],
        "kind": [StrOptions(set(KINDS))],
    }

    def __init__(self, model: object, kind: str = "Q") -> None:
        self.model = model
        self.kind = kind

    def __sklearn_clone__(self) -> "ModelFeatures":
        """A copy sharing the fitted ``model``: it was trained on the source set and is never
        refitted here, so Pipelines and ``GridSearchCV`` must not clone it unfitted (as
        scikit-learn's ``FrozenEstimator`` is cloned). The ``set_output`` choice, which
        ``clone`` carries beside the parameters, is carried too."""
        twin = type(self)(model=self.model, kind=self.kind)
        if hasattr(self, "_sklearn_output_config"):
            twin._sklearn_output_config = copy.deepcopy(self._sklearn_output_config)
        return twin

    def get_params(self, deep: bool = True) -> dict:
        """``model`` and ``kind``, not the model's own parameters (as scikit-learn's
        ``FrozenEstimator`` lists none of its estimator's): the model is used as fitted, so
        they are not this transformer's to tune."""
        return {"model": self.model, "kind": self.kind}

    def set_params(self, **params: object) -> "ModelFeatures":
        """Set ``model`` or ``kind``; the model's own parameters (``model__<name>``) are
        refused, since fitting ModelFeatures does not refit the model: a search over them
        would score one model under every value, and leave the caller's model describing
        trees it was not fitted with."""
        nested = sorted(key for key in params if "__" in key)
        if nested:
            raise ValueError(
                f"ModelFeatures uses its model as fitted, so the model's parameters cannot be set through it "
                f"({', '.join(nested)}): fitting ModelFeatures does not refit the model. Fit the source models you want "
                "to compare yourself and search over model=[...] instead."
            )
        return super().set_params(**params)

    def fit(self, X: object, y: object = None, **fit_params: object) -> "ModelFeatures":
        """Check the model (fitted, with what ``kind`` needs) and the width of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        **fit_params : ignored (``qid`` and the like, routed to the ranker after it)

        Returns
        -------
        self
        """
        self._validate_params()
        check_is_fitted(self.model)
        if self.kind != "Q" and not hasattr(self.model, "predict_grade_proba"):
            raise ValueError(
                f"kind={self.kind!r} appends {KINDS[self.kind]}, which {type(self.model).__name__} does not give; use "
                "a model with predict_grade_proba (LambdaMART(objective='mcrank') or 'cumulative') or kind='Q'."
            )
        twin = clone(self)  # fitted in this one's place, so that a refused X leaves its fitted state as it was
        checked = twin._checked(X, reset=True)
        check_inner_columns(self.model, getattr(twin, "feature_names_in_", None), "model")
        n_added = twin._model_outputs(_safe_indexing(X, slice(0, 1)), checked[:1]).shape[1]
        take_input_attributes(self, twin)
        self.n_added_ = n_added
        return self

    def transform(self, X: object) -> np.ndarray:
        """``X`` with the model's outputs appended.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features + n_added_), float64
        """
        check_is_fitted(self)
        checked = self._checked(X, reset=False)
        return np.hstack([checked, self._model_outputs(X, checked)])

    def _checked(self, X: object, *, reset: bool) -> np.ndarray:
        """``X`` validated as the float64 array ``transform`` extends (n_samples, n_features)."""
        check_frame_dtypes(X)
        try:
            return validate_data(self, X, ensure_all_finite="allow-nan", reset=reset, dtype=np.float64)
        except ValueError as error:
            if "convert" not in str(error) or not (is_frame(X) or is_polars_frame(X)):
                raise
            raise ValueError(
                f"{error}: ModelFeatures returns X and the model's outputs as one float64 array, so every column of X "
                "must hold numbers; encode text and category columns as numbers before it, or leave them out of it "
                "(sklearn.compose.ColumnTransformer)."
            ) from error

    def _model_outputs(self, X: object, checked: np.ndarray) -> np.ndarray:
        """The model's outputs of ``kind``, float64 (n_rows, n_added), of the rows of ``X``
        as the caller gave them where both were fitted on frames (the model reads its
        columns by name, and its category columns by value), else of ``checked``, ``X``
        validated."""
        names = getattr(self, "feature_names_in_", None)
        if names is None or getattr(self.model, "feature_names_in_", None) is None:
            X = checked
        if self.kind == "Q":
            return np.asarray(by_position(self.model, self.model.predict, X, names), dtype=np.float64).reshape(-1, 1)
        probabilities = np.asarray(by_position(self.model, self.model.predict_grade_proba, X, names), dtype=np.float64)
        if self.kind == "P":
            return probabilities
        return np.cumsum(probabilities, axis=1)[:, :-1]

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """The input names followed by ``model_Q``, ``model_P<c>`` or ``model_C<c>``."""
        from sklearn.utils.validation import _check_feature_names_in

        names = list(_check_feature_names_in(self, input_features))
        if self.kind == "Q":
            return np.asarray(names + ["model_Q"], dtype=object)
        grades = getattr(self.model, "classes_", range(self.n_added_))
        added = [f"model_{self.kind}{grade:g}" for grade in list(grades)[: self.n_added_]]
        return np.asarray(names + added, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
