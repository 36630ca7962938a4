"""BROOF: boosting whose weak learners are random forests (Generalized BROOF-L2R).

de Sá, "Optimizing Ensembles of Boosted Additive Bagged Trees for Learning-to-Rank"
(UFMG, 2016), Algorithm 1 and Table 4.1; Salles et al., "BROOF: Exploiting
Out-of-Bag Errors, Boosting and Random Forests for Effective Automated
Classification" (SIGIR 2015); AdaBoost.R2 (Drucker, "Improving Regressors using
Boosting Techniques", ICML 1997).

One boosting round (t = 1, 2, ...)::

    z      = UpdateExamples(y, F_val)          "identity": y;  "residue": y - F_val
    forest = RandomForest(X, z, weights w)     the weights scale the split criterion
    p      = ValidationSet(forest)             out-of-bag or training predictions
    e_i    = error of p_i against z_i in [0, 1] (absolute / median-region / height)
    eps    = sum_i w_i e_i / sum_i w_i         stop (and drop the forest) if eps >= 0.5
    beta   = ComputeLearnerWeights             eta * eps / (1 - eps), or eta ("constant")
    w_i   <- UpdateExampleWeights              w_i * beta ** (1 - e_i) on the chosen rows

The thesis pseudocode leaves four details open; each is resolved here as
AdaBoost.R2 and the thesis text imply, and tested in ``tests/ensemble/test_broof.py``:

1. *Errors in [0, 1].* ``"absolute"`` is Drucker's linear loss, divided by the
   largest error on the validation rows. ``"median"`` counts a document as correct
   while its error is within the median error and scales the excess by the largest
   one. ``"height"`` is a ranking error: the fraction of the document's partners in
   its query (documents with a different target) that the learner orders wrongly
   with respect to it. ``learner_weight="constant"`` still needs an error for the
   early stop: it uses the absolute one. Errors always compare the round's learner
   with the target it was fitted to, on its leaves' scale (the labels, through the
   forest's ``relevance_weights`` where its leaves score ``F(y)``, or the residues).
2. *How weights enter the forest.* They multiply every tree's sampling counts, so
   they scale the split criterion and the leaf values, and the forest keeps its
   query-level sub-sampling. (AdaBoost.R2 resamples by weight instead; a weighted
   draw of documents would break queries apart, while out-of-bag rows must be whole
   queries for the height error, and BROOF's out-of-bag error needs the forest's own
   sampling.)
3. *Which predictions validate.* ``validation="oob"``: each row's prediction is the
   mean of the forest's trees that did not see it (``BaseForestRanker._oob_prediction``);
   rows that every tree saw are left out of the error and of the weight update, and
   the residue of such a row uses the forest's ordinary prediction.
   ``update_weights="oob"`` re-weights only rows with an out-of-bag prediction (BROOF's
   selective update); ``"train"`` every validation row. Weights are then rescaled to
   their previous total.
4. *How rounds combine.* With residues the model is additive: ``F = sum_t eta h_t``
   (Friedman's shrinkage; the learner weight only drives the example weights). With
   the labels themselves every forest predicts relevance and the model is their mean
   weighted by AdaBoost.R2's ``log(1/beta_t)`` (a weighted mean rather than Drucker's
   weighted median: rankings need scores without plateaus), or the plain mean for
   constant learner weights. A round with zero error (``beta = 0``) ends boosting and, as
   the limit ``log(1/beta) -> inf`` says, predicts alone. A first round with
   ``eps >= 0.5`` is kept (the model would otherwise be empty) and ends boosting, as
   scikit-learn's ``AdaBoostRegressor`` does.
"""

import time
from collections.abc import Iterator
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..parallel._cluster import is_dask_collection, map_predict
from ..parallel._local import N_JOBS_CONSTRAINT
from ._costs import check_feature_costs, features_used, tree_costs
from .._input.queries import boundaries_of_grouped
from .._tree._grow import binned_features
from ._base import BaseRanker, fit_atomically, ranker_gain
from ._broof_errors import absolute_errors, height_errors, median_region_errors
from ._forest import BaseForestRanker, RFPointRanker
from ._sampling import INITIAL_WEIGHTS, seed_entropy, stream

# Table 4.1: (init_weights, update_examples, validation, learner_weight, update_weights).
VARIANTS = {
    "absolute": ("uniform", "identity", "oob", "absolute", "oob"),
    "median": ("uniform", "identity", "oob", "median", "oob"),
    "height": ("uniform", "identity", "oob", "height", "oob"),
    "gradient": ("uniform", "residue", "oob", "constant", "constant"),
}
STRATEGIES = ("init_weights", "update_examples", "validation", "learner_weight", "update_weights")


def default_forest() -> RFPointRanker:
    """The weak learner used when ``forest=None``: a regression forest on the targets.

    Leaves of at least 2% of the training rows: 200 rows was chosen on the MQ2008
    validation folds (NDCG@10 of 50, 100, 200, 400, 800; ``benchmarks/RESULTS.md``,
    "BROOF"), about 2% of their 8,500-9,600 rows. As a fraction it holds on data of
    any size, where 200 rows made every tree a single leaf below about 600 rows.
    """
    return RFPointRanker(criterion="variance", min_samples_leaf=0.02)


class BROOF(BaseRanker):
    """Boosting with random-forest weak learners and out-of-bag errors (Generalized BROOF-L2R).

    Every round fits a whole random forest to the labels (re-weighting boosting, as
    AdaBoost.R2) or to the residues of the rounds so far (gradient boosting), judges
    it on out-of-bag predictions and re-weights the documents it got wrong. The five
    extension points of the framework (de Sá 2016, Algorithm 1) are parameters; the
    presets of its Table 4.1 are ``variant``. The module docstring states how the
    details the pseudocode leaves open are resolved.

    Parameters
    ----------
    n_estimators : int, default=10
        Maximum number of boosting rounds (forests).
    variant : {"gradient", "absolute", "median", "height"}, default="gradient"
        Table 4.1 preset for the five strategies below (each of which, when given,
        overrides it):

        ============  ============  ===============  ==========  ==============  ==============
        variant       init_weights  update_examples  validation  learner_weight  update_weights
        ============  ============  ===============  ==========  ==============  ==============
        absolute      uniform       identity         oob         absolute        oob
        median        uniform       identity         oob         median          oob
        height        uniform       identity         oob         height          oob
        gradient      uniform       residue          oob         constant        constant
        ============  ============  ===============  ==========  ==============  ==============

    n_trees : int, default=100
        Trees per forest (sets the forest's ``n_estimators``).
    learning_rate : float in (0, 1] or None, default=None
        ``eta``: the shrinkage of every forest with residues, and the factor of
        ``beta_t = eta * eps / (1 - eps)`` (or ``beta_t = eta``). None means 0.1 with
        residues and 1.0 (AdaBoost.R2's ``beta``) with the labels: on the MQ2008
        validation folds a small ``eta`` made re-weighting unstable (``beta`` near 0)
        and a large one made the residue rounds overfit.
    forest : BaseForestRanker or None, default=None
        The weak learner, cloned every round; None means
        ``RFPointRanker(criterion="variance", min_samples_leaf=0.02)``. Its
        ``n_estimators``, ``n_jobs`` and ``random_state`` are set by this estimator,
        and its ``oob_score`` and ``warm_start`` must stay False;
        pass a forest to tune the rest as ``forest__<name>`` (e.g. in ``GridSearchCV``). Residues
        are real numbers: ``update_examples="residue"`` needs a forest that fits
        real targets (``criterion="variance"``, linear leaf values). A forest with
        ``skip_queries_without_relevance=True`` is refused: drop those queries from
        the data instead. A forest's ``categorical_features`` are BROOF's: every
        round splits on those categories (``docs/categorical.md``).
    init_weights : {"uniform", "random"} or None, default=None
        InitializeWeights: all 1, or independent uniform draws in (0, 1]
        (multiplied by ``sample_weight`` in the fit's unit of weight).
    update_examples : {"identity", "residue"} or None, default=None
        UpdateExamples: fit every forest to the labels, or to ``y - F`` where ``F``
        is the validation prediction of the rounds so far.
    validation : {"oob", "train"} or None, default=None
        ValidationSet: out-of-bag predictions (a row is predicted only by trees
        that did not see it), or the forest's predictions on the training rows.
    learner_weight : {"absolute", "median", "height", "constant"} or None, default=None
        ComputeLearnerWeights: ``beta_t = eta * eps_t / (1 - eps_t)`` with the
        absolute (linear) error, the median-region error or the height (ranking)
        error; or ``beta_t = eta``.
    update_weights : {"oob", "train", "constant"} or None, default=None
        UpdateExampleWeights ``w_i <- w_i * beta_t ** (1 - e_i)``: on the rows with
        an out-of-bag prediction, on every validation row, or never.
    n_jobs : int or None, default=None
        Threads over each forest's trees (and over rows at prediction); the model
        does not depend on it, but with a forest of feature costs whose
        ``cost_wave_size`` is None (its waves are then the threads' count: set it for
        the same model at any ``n_jobs``). ``None`` means every core unless
        ``joblib.parallel_config(n_jobs=...)`` or ``OMP_NUM_THREADS`` sets fewer.
    random_state : int, RandomState or None, default=None
        Seeds every round's forest (and ``init_weights="random"``).
    verbose : int, default=0
        Print one line per round (error, beta, time).

    Attributes
    ----------
    estimators_ : list of BaseForestRanker
        The fitted forest of every kept round.
    estimator_weights_ : ndarray of shape (n_rounds_kept,)
        Coefficient of each forest in the prediction ``sum_t a_t h_t(x)``.
    estimator_betas_ : ndarray of shape (n_rounds_kept,)
        ``beta_t`` of each kept round.
    estimator_errors_ : ndarray of shape (n_rounds,)
        Weighted error ``eps_t`` of every round run, including one that stopped
        boosting with ``eps >= 0.5``.
    n_estimators_ : int
        Rounds kept.
    example_weights_ : ndarray of shape (n_samples,)
        Document weights after the last kept round, in the caller's row order, in the
        fit's unit of weight (the lightest positive ``sample_weight``, or the heaviest
        over 2**100 when they span more; ``docs/design.md``), whose total each round's
        reweighting keeps: with uniform initial weights and
        ``update_weights="constant"`` they are ``sample_weight`` in that unit.
    strategy_ : dict
        The five strategies used (the preset with overrides applied).
    learning_rate_ : float
        The ``eta`` used.
    forest_ : BaseForestRanker
        The unfitted weak-learner template.
    tree_costs_ : ndarray of shape (total trees,), float64
        With the forest's ``feature_costs``: ``c(h_t)`` of every tree, round after
        round (Mohan's thesis, Eq. 6.2; a later round's trees get the features of the
        earlier rounds for free).
    feature_importances_ : ndarray of shape (n_features,)
    is_categorical_, frame_categories_ :
        As in :class:`RFPointRanker`, from the forest's ``categorical_features``.
    n_features_in_, feature_names_in_ :
        As in scikit-learn.

    Examples
    --------
    >>> from forestrank import BROOF, make_ranking
    >>> X, y, qid = make_ranking(n_queries=60, random_state=0)
    >>> model = BROOF(n_estimators=3, n_trees=20, random_state=0).fit(X, y, qid=qid)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "variant": [StrOptions(set(VARIANTS))],
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0.0, 1.0, closed="right"), None],
        "forest": [BaseForestRanker, None],
        "init_weights": [StrOptions({"uniform", "random"}), None],
        "update_examples": [StrOptions({"identity", "residue"}), None],
        "validation": [StrOptions({"oob", "train"}), None],
        "learner_weight": [StrOptions({"absolute", "median", "height", "constant"}), None],
        "update_weights": [StrOptions({"oob", "train", "constant"}), None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @property
    def _forest_template(self) -> BaseForestRanker:
        """``forest``, or the default forest where it is None (``default_forest``)."""
        return default_forest() if self.forest is None else self.forest

    def _inner_template(self) -> tuple[str, BaseForestRanker]:
        """Its forest (``BaseRanker._inner_template``)."""
        return "forest", self._forest_template

    def _gain(self) -> object:
        """Its forest's gain of the grades (``BaseRanker._gain``), which ``score`` uses."""
        return ranker_gain(self._forest_template)

    def __init__(
        self,
        n_estimators: int = 10,
        *,
        variant: str = "gradient",
        n_trees: int = 100,
        learning_rate: float | None = None,
        forest: BaseForestRanker | None = None,
        init_weights: str | None = None,
        update_examples: str | None = None,
        validation: str | None = None,
        learner_weight: str | None = None,
        update_weights: str | None = None,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.variant = variant
        self.n_trees = n_trees
        self.learning_rate = learning_rate
        self.forest = forest
        self.init_weights = init_weights
        self.update_examples = update_examples
        self.validation = validation
        self.learner_weight = learner_weight
        self.update_weights = update_weights
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _requires_grades(self) -> bool:
        return self._forest_template._requires_grades

    def _resolve(self) -> tuple[dict, BaseForestRanker]:
        """The strategies (preset plus overrides) and the forest template; checks they fit together."""
        strategy = {
            name: preset if getattr(self, name) is None else getattr(self, name)
            for name, preset in zip(STRATEGIES, VARIANTS[self.variant])
        }
        forest = clone(self._forest_template)
        refused = {"oob_score": "its rounds compute their own out-of-bag errors", "warm_start": "every round grows a new forest"}
        for name, why in refused.items():
            if getattr(forest, name):
                raise ValueError(f"forest.{name}=True is not supported by BROOF: {why}; leave it False.")
        forest.set_params(n_estimators=self.n_trees, n_jobs=self.n_jobs)
        try:  # the rounds grow trees without the forest's fit, which would check these
            forest._validate_params()
        except ValueError as error:  # InvalidParameterError, or a combination the forest refuses
            raise type(error)(f"forest={type(forest).__name__}(...): {error}") from None
        if getattr(forest, "monotonic_cst", None) is not None:
            raise ValueError(
                "forest.monotonic_cst is not supported by BROOF: its rounds fit residues or reweighted grades, whose "
                "trees' weighted sum is monotone only if every round's is, which BROOF does not check; constrain "
                "RFPointRanker or LambdaMART instead."
            )
        if getattr(forest, "relevance_weights", None) == "fitted":
            raise ValueError(
                "forest.relevance_weights='fitted' is not supported by BROOF: its rounds reweight the rows, so each "
                "round's forest would fit its own grade weights; use 'linear', 'square' or 'exp'."
            )
        if getattr(forest, "relevance_weights", "linear") != "linear":
            try:  # the forest's own check: only expected-relevance leaves weigh grades
                forest._check_relevance_weights()
            except ValueError as error:
                raise ValueError(f"forest={type(forest).__name__}(...): {error}") from None
        if getattr(forest, "interaction_cst", None) is not None:
            raise ValueError(
                "forest.interaction_cst is not supported by BROOF yet; constrain RFPointRanker or LambdaMART instead."
            )
        if forest.skip_queries_without_relevance:
            raise ValueError(
                "forest.skip_queries_without_relevance=True is not supported by BROOF: its rounds validate and "
                "reweight every training row, so the skipped queries would still weigh in; drop the queries "
                "without a positive label from X, y and qid instead."
            )
        needs_oob = strategy["validation"] == "oob" or strategy["update_weights"] == "oob"
        if needs_oob and not forest._leaves_rows_out:
            raise ValueError(
                "forest leaves no row out of its trees (query_subsample=1.0, bootstrap=False), so there are no "
                "out-of-bag predictions for validation='oob' / update_weights='oob'; lower forest.query_subsample."
            )
        if strategy["update_examples"] == "residue":
            linear_leaves = getattr(forest, "relevance_weights", "linear") == "linear"  # a mean leaf's are (checked above)
            if forest._requires_grades or not linear_leaves:
                raise ValueError(
                    "update_examples='residue' fits forests to real-valued residues: forest must be a regression "
                    f"forest (criterion='variance' with linear leaf values); got {forest!r}."
                )
        return strategy, forest

    @fit_atomically
    def fit(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> "BROOF":
        """Boost up to ``n_estimators`` forests.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance labels (integer grades when the forest's criterion counts grades).
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, any order; ``None`` means one query (warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, multiplied into the initial document weights.

        Returns
        -------
        self
        """
        self._validate_params()
        strategy, template = self._resolve()
        data = self._validate_training_data(X, y, qid, sample_weight)
        entropy = seed_entropy(self.random_state)
        query_of_row = data.groups.grouped_query_index()
        n_rows = len(data.y)
        weights = self._initial_weights(strategy["init_weights"], entropy, n_rows)
        if data.sample_weight is not None:
            weights *= data.sample_weight
        if not (weights > 0).any():
            raise ValueError("sample_weight is zero for every row.")

        if hasattr(template, "_check_random_criterion"):  # RFPointRanker's refusals (the listwise forests draw no cut)
            template._check_random_criterion(self.is_categorical_)
        binned = binned_features(
            data.X, template.max_bins, entropy % (2**32), self.n_jobs, weights > 0, categorical=self.is_categorical_
        )
        X_kernel = data.X

        residue = strategy["update_examples"] == "residue"
        eta = self.learning_rate_ = self.learning_rate if self.learning_rate is not None else (0.1 if residue else 1.0)
        validation_score = np.zeros(n_rows)  # F_val: the residues' running model
        forests, betas, errors = [], [], []
        start = time.perf_counter()
        for round_index in range(self.n_estimators):
            target = data.y - validation_score if residue else data.y
            paid = features_used([tree for kept in forests for tree in kept.trees_]) if forests else None
            forest = self._fit_forest(template, entropy, round_index, data, target, weights, query_of_row, binned, paid)
            prediction, out_of_bag = self._validation_predictions(forest, strategy, X_kernel, weights, query_of_row)
            # A row of weight 0 is left out of every tree, so it has an out-of-bag prediction;
            # it is an absent row: in no error, normaliser, median or partner count.
            validated = ~np.isnan(prediction) & (weights > 0)
            row_errors = np.zeros(n_rows)
            fitted_to = template._leaf_targets(target)  # F(y) of relevance_weights, the leaves' scale
            row_errors[validated] = self._errors(
                strategy["learner_weight"], fitted_to[validated], prediction[validated], query_of_row[validated]
            )
            error = float(np.sum(weights[validated] * row_errors[validated]) / np.sum(weights[validated]))
            errors.append(error)
            if error >= 0.5 and forests:
                if self.verbose:
                    print(
                        f"BROOF round {round_index + 1}/{self.n_estimators}: error {error:.4f} >= 0.5, not kept: "
                        f"boosting stops with {len(forests)} rounds, {time.perf_counter() - start:.1f} s"
                    )
                break
            if strategy["learner_weight"] == "constant":
                beta = eta
            else:  # a first round with error 1 is kept alone (np.inf never weighs anything)
                beta = eta * error / (1.0 - error) if error < 1.0 else np.inf
            forests.append(forest)
            betas.append(beta)
            if self.verbose:
                print(
                    f"BROOF round {round_index + 1}/{self.n_estimators}: error {error:.4f}, beta {beta:.4g}, "
                    f"{time.perf_counter() - start:.1f} s"
                )
            if residue:  # rows that every tree saw fall back on the forest's prediction
                validation_score[validated] += eta * prediction[validated]
                if not validated.all():
                    validation_score[~validated] += eta * forest._mean_of_trees(X_kernel[~validated])
            if error >= 0.5 or beta == 0.0:
                break
            if strategy["update_weights"] != "constant":
                updated = validated if strategy["update_weights"] == "train" else validated & ~np.isnan(out_of_bag)
                weights = self._reweight(weights, updated, row_errors, beta)

        self.strategy_ = strategy
        self.forest_ = template
        self.estimators_ = forests
        self.estimator_betas_ = np.array(betas)
        self.estimator_errors_ = np.array(errors)
        self.estimator_weights_ = self._combination(np.array(betas))
        self.n_estimators_ = len(forests)
        costs = check_feature_costs(template.feature_costs, self.n_features_in_)
        self.tree_costs_ = tree_costs([tree for forest in forests for tree in forest.trees_], costs)
        self.example_weights_ = data.groups.ungroup(weights)
        return self

    def _check_members(self) -> None:
        """Refuse, at load, a model of no forests, or of another number of forests than of
        their weights (``BaseRanker._check_members``): a fit keeps its first round's."""
        forests = getattr(self, "estimators_", None)
        weights = getattr(self, "estimator_weights_", None)
        if (
            not isinstance(forests, list) or not forests or not isinstance(weights, np.ndarray) or weights.shape != (len(forests),)
            or getattr(self, "n_estimators_", None) != len(forests)
        ):
            raise ValueError(
                "a BROOF's estimators_ must be a non-empty list of forests, with one estimator_weights_ entry each and "
                "n_estimators_ their number: not a model forestrank saved."
            )

    def _nested_estimators(self) -> list[tuple[str, object]]:
        """Every round's forest, which ``predict`` sums (``BaseRanker._check_nested_widths``)."""
        return [(f"round {index}'s forest", forest) for index, forest in enumerate(getattr(self, "estimators_", []))]

    def _additive_terms(self) -> tuple[list, np.ndarray, None]:
        """How BROOF combines its trees, for serving (``serving/_terms.additive_terms``): each
        round's forest mean weighted by the round's ``a_t`` (``estimator_weights_``)."""
        terms = [
            (tree, alpha / len(forest.trees_), 0)
            for alpha, forest in zip(self.estimator_weights_, self.estimators_)
            for tree in forest.trees_
        ]
        return terms, np.zeros(1), None

    # --- fit helpers ------------------------------------------------------------------

    @staticmethod
    def _initial_weights(init_weights: str, entropy: int, n_rows: int) -> np.ndarray:
        """InitializeWeights: ones, or uniform draws in (0, 1] from the fit's own stream."""
        if init_weights == "uniform":
            return np.ones(n_rows)
        rng = stream(entropy, INITIAL_WEIGHTS)
        return 1.0 - rng.random(n_rows)

    @property
    def categorical_features(self) -> object:
        """The forest's ``categorical_features``: every round's forest splits on those
        categories, and ``fit`` and ``predict`` read them (a DataFrame's by value) as the
        forest would (``BaseRanker._check_X``)."""
        return getattr(self._forest_template, "categorical_features", None)

    def _split_on_categories(self) -> str:
        """BROOF takes its forest's ``categorical_features`` (``BaseRanker._split_on_categories``)."""
        return (
            "give its forest categorical_features='from_dtype' or their names (the default forest with them: "
            "forest=RFPointRanker(criterion='variance', min_samples_leaf=0.02, categorical_features='from_dtype'))"
        )

    def _fit_forest(self, template, entropy, round_index, data, target, weights, query_of_row, binned, paid):
        """Grow round ``round_index``'s forest on the shared binned matrix, the features
        ``paid`` (bool per feature, or None) free of cost."""
        seed = int(np.random.SeedSequence(entropy, spawn_key=(round_index,)).generate_state(1)[0])  # round t: (t,)
        forest = clone(template).set_params(random_state=seed)
        forest.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            forest.feature_names_in_ = self.feature_names_in_
        forest._entropy = seed_entropy(seed)
        forest._monotonic = forest._interactions = None  # refused with the template (_resolve)
        forest.is_categorical_, forest.frame_categories_ = self.is_categorical_, self.frame_categories_
        base_weight = forest._base_weight(data._replace(sample_weight=weights), query_of_row)  # no draw of 0 weight
        forest._grow_trees(data._replace(y=target, sample_weight=weights), query_of_row, base_weight, binned, [], paid)
        return forest

    @staticmethod
    def _validation_predictions(forest, strategy, X, weights, query_of_row) -> tuple[np.ndarray, np.ndarray | None]:
        """The validation predictions of the training rows (out-of-bag, NaN for rows every
        tree saw, or the forest's own), and the out-of-bag ones when a strategy needs
        them (else None)."""
        out_of_bag = None
        if strategy["validation"] == "oob" or strategy["update_weights"] == "oob":
            out_of_bag = forest._oob_prediction(X, weights, query_of_row)
            if not (weights[~np.isnan(out_of_bag)] > 0).any():
                weighted = int((weights > 0).sum())
                rows = f"row (n_samples={X.shape[0]})" if weighted == X.shape[0] else f"row of positive weight ({weighted})"
                raise ValueError(
                    f"every {rows} is in every tree of the forest, so no row has an out-of-bag "
                    "prediction; lower forest.query_subsample or raise n_trees (with a single query, sample "
                    "documents: forest=RFPointRanker(criterion='variance', sample_level='document'))."
                )
        if strategy["validation"] == "oob":
            return out_of_bag, out_of_bag
        return forest._mean_of_trees(X), out_of_bag

    @staticmethod
    def _errors(kind: str, target: np.ndarray, prediction: np.ndarray, query_of_row: np.ndarray) -> np.ndarray:
        """Per-row errors in [0, 1] of the validation rows (grouped by query)."""
        if kind == "median":
            return median_region_errors(target, prediction)
        if kind == "height":
            return height_errors(target, prediction, boundaries_of_grouped(query_of_row))
        return absolute_errors(target, prediction)

    @staticmethod
    def _reweight(weights: np.ndarray, rows: np.ndarray, row_errors: np.ndarray, beta: float) -> np.ndarray:
        """``w_i * beta ** (1 - e_i)`` on ``rows`` (boolean mask), rescaled to the previous total."""
        updated = weights.copy()
        updated[rows] *= beta ** (1.0 - row_errors[rows])
        # Totals over the weighted rows alone: rows of weight 0 among them would change the
        # order of the float sums, and a fit with them would not be the fit without them.
        weighted = weights > 0
        return updated * (weights[weighted].sum() / updated[weighted].sum())

    def _round_factors(self, betas: np.ndarray) -> np.ndarray:
        """Each round's factor in the coefficients (``_combination``), float64 of shape
        (n_rounds,): the learning rate, 1, or ``log(1 / beta)`` (inf for a perfect round)."""
        if self.strategy_["update_examples"] == "residue":
            return np.full(len(betas), self.learning_rate_)
        if self.strategy_["learner_weight"] == "constant":
            return np.ones(len(betas))
        with np.errstate(divide="ignore"):
            return np.log(1.0 / betas)

    def _combination(self, betas: np.ndarray) -> np.ndarray:
        """Coefficients ``a_t`` of the forests in the prediction (module docstring, point 4):
        the rounds' factors, divided by their sum but under the residue rule."""
        factors = self._round_factors(betas)
        if self.strategy_["update_examples"] == "residue":
            return factors
        if len(betas) == 1:
            return np.ones(1)
        if np.isinf(factors[-1]):  # a perfect round outweighs the rest
            return np.eye(len(betas))[-1]
        return factors / factors.sum()

    # --- prediction --------------------------------------------------------------------

    def predict(self, X: object) -> np.ndarray:
        """``sum_t a_t h_t(x)`` over the kept forests (``estimator_weights_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        if is_dask_collection(X):
            return map_predict(self, X)
        X = self._validate_prediction_data(X)
        return sum(a * forest._mean_of_trees(X) for a, forest in zip(self.estimator_weights_, self.estimators_))

    def staged_predict(self, X: object) -> Iterator[np.ndarray]:
        """Predictions of the model after each round (the first ``t`` forests, combined as in ``predict``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,), float64
        """
        X = self._validate_prediction_data(X)
        # Every rule of _combination weighs round i by a factor of its own (the learning rate,
        # 1, or log(1 / beta_i)), the last two divided by the factors' sum: each stage is a
        # running sum, so the rounds' predictions are neither all kept nor summed again.
        residue = self.strategy_["update_examples"] == "residue"
        unscaled, total = 0.0, 0.0
        for forest, factor in zip(self.estimators_, self._round_factors(self.estimator_betas_)):
            prediction = forest._mean_of_trees(X)
            if np.isinf(factor):  # a perfect round outweighs the rest
                yield prediction
                return
            unscaled, total = unscaled + factor * prediction, total + factor
            yield unscaled if residue else (unscaled / total if total else prediction)

    def average_cost(self) -> float:
        """``c_H``, the cost of scoring a document with every kept round (Mohan's thesis,
        Eq. 6.4): ``sum(tree_costs_)``. (BROOF offers no early exits.)"""
        check_is_fitted(self)
        return float(self.tree_costs_.sum())

    @property
    def feature_importances_(self) -> np.ndarray:
        """Forests' impurity-based importances averaged with weights ``|a_t|``, normalised to 1."""
        check_is_fitted(self)
        importances = sum(abs(a) * forest.feature_importances_ for a, forest in zip(self.estimator_weights_, self.estimators_))
        total = importances.sum()
        return importances / total if total > 0 else importances
