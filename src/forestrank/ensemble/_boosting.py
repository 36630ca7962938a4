"""Gradient-boosted rankers on the shared tree engine.

Every iteration computes per-document gradients ``g`` and hessians ``h`` of the
objective at the current scores (``forestrank.objectives``; numba ``prange`` over
queries), grows one tree leaf-wise (best-first up to ``max_leaf_nodes``) on them with
the engine's builder, sets each leaf to the Newton step ``-sum g / (sum h + lambda)``
times ``learning_rate`` and adds the tree to the scores (Friedman, "Greedy Function
Approximation: A Gradient Boosting Machine", 2001, Algorithm 6; Burges,
MSR-TR-2010-82, Algorithm "LambdaMART").

Split gains (``split_gain``), from "Analysis of Regression Tree Fitting Algorithms in
Learning to Rank" (Tian Xia et al.):

* ``"newton"``: the second-order (OLE) gain ``G_L^2/H_L + G_R^2/H_R - G^2/H``
  (Eq. 13), with ``lambda`` added to every ``H`` (Chen & Guestrin, Eq. 7);
* ``"squared"``: a least-squares regression tree fitted to the pseudo-response
  ``-g`` (Eq. 3, the classical MART/LambdaMART fit); leaves still take the Newton
  step. For the squared loss (``h = 1``) both choose the same splits (Theorem 2).

The builder reports each training row's leaf, so the training scores are updated
without traversing the tree. The tree is sequential work: ``n_jobs`` sets numba's
thread count for the objective kernels, and joblib threads over rows at prediction.
"""

import inspect
import math
import time
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..parallel._cluster import is_dask_collection, map_predict, running_client
from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._numba.user_functions import user_function_name
from ._early_exit import EarlyExit
from ._costs import FeatureCosts, check_feature_costs, nested_models, tree_costs
from .._input.categories import check_categorical_features
from .._input.features import by_position, check_inner_columns, check_interaction_cst, check_monotonic_cst
from ..parallel._local import N_JOBS_CONSTRAINT, numba_threads
from .._input.queries import boundaries_of_grouped, group_queries, stacklevel_outside_package
from .._tree import _criteria, _frontier, _rng, _scans
from .._tree._pairwise import BAYESIAN_MATRIX_REG, MAX_DEPTH as MAX_PAIRWISE_DEPTH, grow_pairwise_tree, pairwise_leaf_values
from .._tree._symmetric import MAX_DEPTH as MAX_SYMMETRIC_DEPTH, SymmetricTreeMemory, grow_symmetric_tree
from .._tree._grow import TrainingSet, TreeMemory, TreeParams, binned_features, grow_tree, histogram_pool, max_nodes
from .._tree._tree import Tree, subtree_sums
from .._input.labels import check_grades_for_gain, check_relevance, holds_two_gains, normalize_sample_weight
from .._input.target_statistics import check_tables, ordered_target_statistics, target_statistics_columns
from ..metrics._custom import CustomMetric
from ..metrics._ranking import MAX_CUTOFF
from ..objectives import (
    CumulativeSquaredError,
    CustomObjective,
    LambdaRank,
    ListwiseSurrogate,
    PlackettLuce,
    QueryRMSE,
    RankingObjective,
    Softmax,
    SquaredError,
    XENDCG,
    YetiRank,
    YetiRankPairwise,
    cumulative_probabilities,
    expected_grade,
    expected_relevance,
    softmax_probabilities,
)
from ._cluster_boosting import fit_boosting_partitioned, staged_predict_partitioned
from ._compiled_boosting import CompiledBoosting, Iteration
from ._boosting_state import (
    BoostingState,
    EarlyStopping,
    EvalSet,
    add_tree_scores,
    check_eval_item,
    check_eval_weight,
    exact_targets,
    fitted_init,
    leaf_sums,
    newton_steps,
)
from ._base import BaseRanker, RankingData, TreeEnsembleMixin, fit_atomically, sum_of_trees_terms
from ._forest import RELEVANCE_WEIGHTS, fitted_relevance_weights
from ._position_bias import PositionBias, check_positions, check_top_position_shown
from ._quantization import QUANTIZED_DTYPE, check_quantization, check_quantized_sums, quantize_gradients, quantized_params
from ._sampling import (
    BAYESIAN_WEIGHTS,
    GAIN_NOISE,
    HOLD_OUT,
    MAX_BAGGING_TEMPERATURE,
    PAIR_SAMPLES,
    PERMUTATIONS,
    ROUNDING,
    ROWS,
    TARGET_STATISTICS,
    TREE,
    TREE_FEATURES,
    bayesian_weights,
    resolve_count,
    resolve_max_features,
    seed_entropy,
    seed_sequence,
    stream,
    unit_counts,
)


# The objectives with one raw score per grade, ranked by sum_c F(c) P(c) (``relevance_weights``).
GRADE_OBJECTIVES = ("mcrank", "cumulative")
# The most partners a document may draw under lambdarank_pair_method="mean": a fit draws
# this many pairs per row and iteration, and far more than a query's documents only
# repeats pairs (10**9 ran for hours).
MAX_PAIRS_PER_SAMPLE = 10_000
# 2**c is finite in float64 up to this grade.
_LARGEST_EXP_WEIGHT_GRADE = 1023

# What "auto" means for CatBoost's regularisers, which come with its symmetric trees: the
# value on grow_policy="symmetric" trees, chosen on data (benchmarks/RESULTS.md, "Small
# collections", the ablation), and for the pairwise objective CatBoost's own defaults for
# YetiRankPairwise (its Bayesian prior regularises the leaves instead); off on other trees.
_AUTO = {
    "l2_regularization": {"symmetric": 3.0, "pairwise": 0.0},
    "random_strength": {"symmetric": 1.0, "pairwise": 0.0},
}


# A compiled fit returns to Python about this often (seconds) when no one observes its
# iterations: Ctrl-C, which Python sees only between calls, then stops it within that.
_CHUNK_SECONDS = 0.25


def _next_chunk(count: int, elapsed: float) -> int:
    """The iterations of the next compiled call, from the last call's ``count`` and its
    ``elapsed`` seconds: as many as take about ``_CHUNK_SECONDS``, at most eight times more
    than the last call's (its time was measured on fewer)."""
    per_iteration = max(elapsed, 1e-9) / count
    return max(1, min(8 * count, int(_CHUNK_SECONDS / per_iteration)))


def _pair_row_weights(weights: np.ndarray, winners: np.ndarray, losers: np.ndarray) -> np.ndarray:
    """Each pair's factor from its rows' weights (float64, (n_pairs,)): their mean, 0 when
    either row weighs 0 (a row out of the tree takes no pair)."""
    first, second = weights[winners], weights[losers]
    return np.where((first > 0) & (second > 0), 0.5 * (first + second), 0.0)


def refuse_weights_varying_within_queries(data: RankingData, who: str, why: str) -> None:
    """Refuse ``sample_weight`` that differs between rows of one query, for an estimator
    that weighs whole queries: ``who`` opens the error ("PLRank needs"), ``why`` closes it.

    Parameters
    ----------
    data : RankingData
        Validated, its rows grouped by query.
    who, why : str
        The error's opening (the estimator or option that needs it) and its reason.
    """
    if data.sample_weight is None:
        return
    boundaries = data.groups.query_boundaries
    first = data.sample_weight[boundaries[:-1]]
    if not np.array_equal(np.repeat(first, np.diff(boundaries)), data.sample_weight):
        raise ValueError(f"{who} sample_weight constant within each query {why}.")


@dataclass
class _TreeGrower:
    """What every tree of one fit is grown with: its parameters, one histogram pool and one
    tree's memory, reused."""

    params: TreeParams
    pool: object
    memory: TreeMemory


class BaseBoostingRanker(TreeEnsembleMixin, BaseRanker, metaclass=ABCMeta):
    """Boosting loop shared by the gradient-boosted rankers.

    Subclasses define ``_make_objective()`` (a :class:`RankingObjective`).
    """

    # Small trees: a few rows at a time through all of them, so the rows stay in L1
    # and every tree's nodes in L2 (measured faster than the forests' large passes).
    _predict_pass_bytes = 1 << 16

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "grow_policy": [StrOptions({"lossguide", "depthwise", "symmetric"})],
        "random_strength": [Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "bagging_temperature": [Interval(Real, 0.0, MAX_BAGGING_TEMPERATURE, closed="both")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0.0, 1.0, closed="neither")],
        "min_child_weight": [Interval(Real, 0.0, None, closed="left")],
        "l2_regularization": [Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "min_gain_to_split": [Interval(Real, 0.0, None, closed="left")],
        "split_gain": [StrOptions({"newton", "squared"})],
        "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "subsample_level": [StrOptions({"query", "document"})],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2", "log2+1"}),
            None,
        ],
        "feature_fraction": [Interval(Real, 0.0, 1.0, closed="right")],
        "max_bins": [Interval(Integral, 2, 255, closed="both"), None],
        "missing_direction": [StrOptions(set(_scans.MISSING_DIRECTIONS))],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        "cat_smooth": [Interval(Real, 0.0, None, closed="left")],
        "max_cat_to_onehot": [Interval(Integral, 1, None, closed="left")],
        "max_cat_threshold": [Interval(Integral, 1, None, closed="left")],
        "min_data_per_group": [Interval(Integral, 1, None, closed="left")],
        "cat_l2": [Interval(Real, 0.0, None, closed="left")],
        "cat_target_statistics": ["boolean"],
        "quantized_gradients": [Interval(Integral, 2, 254, closed="both"), None],
        "feature_costs": ["array-like", None],
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [StrOptions({"pairwise", "no_interactions"}), list, tuple, None],
        "cost_penalty": [Interval(Real, 0.0, None, closed="left")],
        "init": [HasMethods(["fit", "predict"]), None],
        "validation_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "eval_at": [Interval(Integral, 1, MAX_CUTOFF, closed="both")],
        "eval_metric": [callable, None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Target statistics are computed on dense rows (_with_target_statistics).
        tags.input_tags.sparse = not getattr(self, "cat_target_statistics", False)
        return tags

    @abstractmethod
    def _make_objective(self) -> RankingObjective:
        """The objective of one fit, built from the estimator's parameters."""

    @fit_atomically
    def fit(
        self,
        X: object,
        y: object,
        qid: object = None,
        sample_weight: object = None,
        eval_set: list[tuple] | None = None,
        position: object = None,
    ) -> "BaseBoostingRanker":
        """Boost ``n_estimators`` trees (fewer when early stopping stops).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a Dask array or DataFrame
            A Dask collection must be partitioned by query (every query inside one
            partition), with y, qid, sample_weight and the eval_set items Dask
            collections partitioned alike; the rows stay on the cluster's workers
            (``docs/cluster.md``, "Boosting on a cluster").
        y : array-like of shape (n_samples,)
            Relevance grades (non-negative).
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, any order; ``None`` means one query (warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, multiplied into the gradients and hessians.
        eval_set : list of (X, y, qid) or (X, y, qid, sample_weight) tuples, default=None
            Sets scored (NDCG@``eval_at``) after every iteration into
            ``evals_result_["valid_<i>"]``; with ``n_iter_no_change`` the last one
            decides early stopping. A set's ``sample_weight`` weighs each of its queries
            by its rows' mean weight, as ``score`` does (LightGBM's ``eval_sample_weight``,
            but for a query without relevant documents: ``docs/metrics.md``).
        position : array-like of shape (n_samples,), default=None
            The rank (1 = top) at which each document was shown when ``y`` holds
            clicks, at most 2**20; needed by, and only by, ``position_bias``
            (LambdaMART). Routed as metadata like ``qid``.

        Returns
        -------
        self
        """
        self._validate_params()
        self._check_grow_policy(is_dask_collection(X))
        if self.quantized_gradients is not None:
            check_quantization(self.split_gain, self.cost_penalty)
        for stale in ("best_iteration_", "position_bias_", "cluster_rounds_", "cluster_bytes_"):  # set only by some fits
            self.__dict__.pop(stale, None)
        if is_dask_collection(X):
            if callable(getattr(self, "objective", None)):
                raise ValueError(
                    "a callable objective is called with the whole fit's queries, which a fit on Dask collections spreads "
                    "over its workers: fit on arrays in memory, or use a built-in objective."
                )
            if self.eval_metric is not None:
                raise ValueError(
                    "eval_metric is called with a whole evaluation set, which a fit on Dask collections spreads over its "
                    "workers: fit on arrays in memory, or leave eval_metric=None (NDCG@eval_at)."
                )
            if self.categorical_features is not None:
                raise ValueError(
                    "categorical_features is not supported on Dask collections yet: fit on arrays in memory, or encode "
                    "the categories as numbers."
                )
            return fit_boosting_partitioned(self, X, y, qid, sample_weight, eval_set, position)
        data = self._validate_training_data(X, y, qid, sample_weight)
        check_grades_for_gain(data.y, self._gain(), name="y", gain_name="label_gain")
        self._entropy = seed_entropy(self.random_state)
        held = self._held_out_rows(data) if self.n_iter_no_change is not None and not eval_set else None
        data = self._with_target_statistics(data, held)
        objective = self._make_objective()  # PLRank's permutations and XE-NDCG's noise seed from the entropy
        self._shift_invariant = objective.shift_invariant
        positions = None if position is None else data.groups.group(check_positions(position, len(data.y)))
        self._check_positions(objective, positions)
        evals = [self._eval_set(f"valid_{i}", item) for i, item in enumerate(eval_set or [])]
        state = self._start_boosting(data, objective, positions, evals, held)
        self._update_relevance_weights(state.raw, state.y, state.base_weight)
        self._monotonic = self._monotone_constraints(data.X.shape[1])
        self._check_categorical()
        self._interactions = check_interaction_cst(self.interaction_cst, data.X.shape[1])
        self.trees_ = []
        key = self._eval_key()
        stopping = self._start_evals([item.name for item in evals])
        if stopping is not None and self.eval_metric is None:
            self._check_stopping_set(evals[-1])
        start = time.perf_counter()
        if self.quantized_gradients is not None:
            check_quantized_sums(self.quantized_gradients, len(state.y))
        with numba_threads(self.n_jobs):
            grower = self._tree_grower(state)
            costs = self._feature_costs(state.X.shape[1])
            compiled = self._compiled_boosting(state, grower, costs)
            observed = compiled is None or bool(evals) or bool(self.verbose)
            count = 1
            done = 0
            while done < self.n_estimators:
                count = min(count, self.n_estimators - done)
                started = time.perf_counter()
                if compiled is None:
                    self._boost_iteration(state, grower, costs, done)
                else:
                    self._boost_compiled(state, compiled, costs, done, count)
                done += count
                if not observed:  # one iteration a call, unless the compiled loop runs unobserved
                    count = _next_chunk(count, time.perf_counter() - started)
                self._score_evals(state, done - 1, time.perf_counter() - start)
                learned = None if state.bias is None else state.bias.learned
                if stopping is not None and stopping.should_stop(self.evals_result_[evals[-1].name][key][-1], done - 1, learned):
                    self._report_stop(stopping, done - 1, [item.name for item in evals], time.perf_counter() - start)
                    break
        self._warn_if_no_curvature(state)
        self._end_boosting(stopping, costs, state.bias)
        cut = stopping is not None and stopping.best_iteration < done  # the kept model's training scores
        self._update_relevance_weights(self._raw_scores(state.X) if cut else state.raw, state.y, state.base_weight)
        return self

    # --- the steps of a boosting fit ----------------------------------------------------

    def _warn_if_no_curvature(self, state: BoostingState) -> None:
        """Warn when a custom objective's hessians (at the last iteration) are 0 for every
        row, its gradients are not, and no tree of the fit split: the model scores every
        document alike. Zero curvature stops a Newton split: the hessian sums fall short
        of ``min_child_weight``, and without it the gain ``-2 G_L G_R / l2`` is positive only
        for children whose gradient sums differ in sign."""
        objective = getattr(self, "objective", None)
        if not callable(objective) or state.hessians.any() or not state.gradients.any():
            return
        if any(tree.node_count > 1 for tree in self.trees_):
            return
        warnings.warn(
            f"the objective {user_function_name(objective)} returned hessians of 0 for every row, and no tree of the "
            "fit split: the model scores every document alike. A loss without curvature learns with constant "
            "hessians such as 1 (gradient steps), or with split_gain='squared' and l2_regularization > 0.",
            UserWarning,
            stacklevel=stacklevel_outside_package(),
        )

    def _regulariser(self, name: str) -> float:
        """``l2_regularization`` or ``random_strength``, ``"auto"`` resolved (``_AUTO``)."""
        value = getattr(self, name)
        if not isinstance(value, str):
            return float(value)
        if self.grow_policy != "symmetric":
            return 0.0
        return _AUTO[name]["pairwise" if getattr(self, "objective", None) == "yetirank_pairwise" else "symmetric"]

    def _check_grow_policy(self, on_dask: bool) -> None:
        """Refuse what symmetric trees do not combine with, and their noise without them."""
        if self.grow_policy != "symmetric":
            if self._regulariser("random_strength") > 0.0:
                raise ValueError(
                    f"random_strength perturbs the split scores of grow_policy='symmetric' trees; got grow_policy="
                    f"{self.grow_policy!r} with random_strength={self.random_strength}."
                )
            return
        refused = {
            "interaction_cst": self.interaction_cst is not None,
            "feature_costs": self.feature_costs is not None or self.cost_penalty > 0.0,
            "quantized_gradients": self.quantized_gradients is not None,
            "missing_direction='separate'": self.missing_direction == "separate",
            "a fit on Dask collections": on_dask,
        }
        advice = "use grow_policy='lossguide'"
        if getattr(self, "objective", None) == "yetirank_pairwise":  # scores the levels of symmetric trees only
            advice = (
                "objective='yetirank_pairwise' grows symmetric trees only: use objective='yetirank' with "
                "grow_policy='lossguide' (YetiRank's pairs on best-first trees)"
            )
        for name, applies in refused.items():
            if applies:
                raise ValueError(f"grow_policy='symmetric' cannot be combined with {name}; {advice}.")
        depth = self._max_depth()
        if depth > MAX_SYMMETRIC_DEPTH:
            raise ValueError(
                f"max_depth={depth} is deeper than grow_policy='symmetric' grows (at most {MAX_SYMMETRIC_DEPTH}: "
                f"2**{MAX_SYMMETRIC_DEPTH} leaves)."
            )

    def _start_evals(self, eval_names: list) -> EarlyStopping | None:
        """Empty ``evals_result_`` for the named evaluation sets (and the training set when
        verbose); the early stopping the last set decides, or None."""
        key = self._eval_key()
        self.evals_result_ = {name: {key: []} for name in eval_names}
        if self.verbose:
            self.evals_result_["train"] = {key: []}
        if self.n_iter_no_change is None or not eval_names:
            return None
        metric = "NDCG" if self.eval_metric is None else f"eval_metric {key}"
        return EarlyStopping(self.n_iter_no_change, self.tol, f"{metric} on the set {eval_names[-1]!r}")

    def _check_stopping_set(self, item: EvalSet) -> None:
        """Refuse an early-stopping set on which NDCG cannot tell models apart.

        A query whose documents share one gain (one grade, or grades ``label_gain`` gives
        one gain) has the same NDCG under every ranking, and a query whose rows weigh 0
        counts for nothing in the set's mean;
        when every query of the deciding set is such a query no iteration improves on
        the first, and early stopping would keep one tree without a word.
        """
        starts = item.query_boundaries[:-1]
        if not holds_two_gains(item.y, starts, self._gain(), item.query_weights):
            weightless = item.query_weights is not None and not item.query_weights.all()
            self._refuse_stopping_set(item.name, len(starts), weightless)

    def _refuse_stopping_set(self, name: str, n_queries: int, weightless: bool) -> None:
        """The error of ``_check_stopping_set`` for the set ``name`` of ``n_queries`` queries,
        some of which weigh 0 where ``weightless``."""
        given = name != "validation"
        raise ValueError(
            f"early stopping (n_iter_no_change={self.n_iter_no_change}) is decided by NDCG on "
            f"{'the last eval_set' if given else 'the validation_fraction hold-out'}, none of whose {n_queries} "
            "queries holds two grades of different gain"
            + (" and a positive sample_weight" if weightless else "")
            + ": NDCG is the same for every model there, and early stopping would keep the first tree. "
            + ("Pass an eval_set whose queries have relevant and non-relevant documents" if given else
               "Pass a larger validation_fraction or an eval_set with graded queries")
            + (" of positive weight" if weightless else "")
            + ", or set n_iter_no_change=None."
        )

    def _custom_metric(self) -> CustomMetric | None:
        """``eval_metric`` wrapped for the evaluation sets, or None for NDCG@``eval_at``."""
        if self.eval_metric is None or isinstance(self.eval_metric, CustomMetric):  # one given wrapped keeps its name
            return self.eval_metric
        return CustomMetric(self.eval_metric)

    def _eval_key(self) -> str:
        """The name of the per-iteration metric in ``evals_result_``: ``ndcg@<eval_at>`` or the
        ``eval_metric``'s own."""
        metric = self._custom_metric()
        return f"ndcg@{self.eval_at}" if metric is None else metric.name

    def _tree_key(self, iteration: int, output: int) -> tuple:
        """The stream key of ``output``'s tree at ``iteration`` (``_sampling``)."""
        return (iteration, TREE) if self.n_outputs_ == 1 else (iteration, TREE, output)

    def _tree_rng_state(self, iteration: int, output: int) -> np.ndarray:
        """The engine's generator state of ``output``'s tree at ``iteration`` (``_tree._rng``)."""
        return _rng.new_state(seed_sequence(self._entropy, self._tree_key(iteration, output)))

    def _score_noise(self, iteration: int, weights: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> float:
        """The deviation of the split-score noise of a symmetric tree at ``iteration``
        (``random_strength``): the gradients' scale in the units of the cosine score,
        faded by CatBoost's model-length multiplier ``N e^-L / (1 + N e^-L)``."""
        random_strength = self._regulariser("random_strength")
        if random_strength == 0.0:
            return 0.0
        curvature = float(np.dot(weights, hessians))
        if curvature <= 0.0:
            return 0.0
        scale = math.sqrt(float(np.dot(weights * gradients, weights * gradients)) / curvature)
        n_rows = len(weights)
        decay = n_rows * math.exp(-iteration * self.learning_rate)
        return random_strength * scale * decay / (1.0 + decay)

    def _end_boosting(self, stopping: EarlyStopping | None, costs: FeatureCosts, bias: PositionBias | None) -> None:
        """After the last iteration: keep the trees up to early stopping's best iteration and set
        the fitted attributes that count and cost them, and the position bias learned by then."""
        if bias is not None:
            self.position_bias_ = stopping.best_state if stopping is not None else bias.learned()
        if stopping is not None:
            self.best_iteration_ = stopping.best_iteration
            del self.trees_[stopping.best_iteration * self.n_outputs_ :]
        self.n_iter_ = len(self.trees_) // self.n_outputs_
        self.tree_costs_ = tree_costs(self.trees_, costs.costs, paid=costs.paid_by_init)
        self._index_trees()

    def _start_boosting(
        self, data: RankingData, objective: RankingObjective, positions: np.ndarray | None, evals: list,
        held: np.ndarray | None,
    ) -> BoostingState:  # fmt: skip
        """The training rows (less the early-stopping hold-out ``held``, a row mask, which
        joins ``evals``), the prepared objective, the starting scores of every set and the
        binned features."""
        query_of_row = data.groups.grouped_query_index()
        train = np.ones(len(data.y), dtype=bool)
        if held is not None:
            evals.append(self._hold_out_set(data, query_of_row, held))
            train = ~held
        X_train, y_train = (data.X, data.y) if train.all() else (data.X[train], data.y[train])
        base_weight = self._training_weight(data, train)
        given_weight = None if data.given_weight is None else data.given_weight[train]
        train_queries = query_of_row[train]
        boundaries = boundaries_of_grouped(train_queries)  # queries emptied by the hold-out vanish
        train_ids = data.groups.query_ids[train_queries[boundaries[:-1]]]  # each training query's first row
        if objective.takes_query_ids:
            objective.prepare(y_train, boundaries, query_ids=train_ids)
        else:
            objective.prepare(y_train, boundaries)
        bias = self._position_bias(None if positions is None else positions[train], objective)
        self.n_outputs_ = objective.n_outputs
        self.classes_ = getattr(objective, "classes_", None)
        query_of_train_row = np.repeat(np.arange(len(boundaries) - 1), np.diff(boundaries))
        raw = self._start(X_train, y_train, train_ids[query_of_train_row], objective, base_weight, given_weight)
        for item in evals:
            item.raw = self._baseline(item.X)
        n_rows = len(y_train)
        targets = np.empty((n_rows, 2))
        binned = binned_features(
            X_train, self.max_bins, self._entropy % (2**32), self.n_jobs, categorical=self._split_categorical()
        )
        return BoostingState(
            X=X_train, y=y_train, query_of_row=query_of_train_row, base_weight=base_weight, objective=objective,
            bias=bias, raw=raw, gradients=np.empty((n_rows, self.n_outputs_)),
            hessians=np.empty((n_rows, self.n_outputs_)), targets=targets,
            training=TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0)),  # values: _set_leaf_values
            row_leaf=np.empty(n_rows, dtype=INDEX_DTYPE), evals=evals,
            train_eval=EvalSet("train", X_train, y_train, boundaries, raw, train_ids, base_weight),
        )  # fmt: skip

    def _tree_grower(self, state: BoostingState) -> "_TreeGrower":
        """The tree parameters and the memory every tree of the fit reuses (under the fit's
        numba thread count, which the parameters record)."""
        levels = self.quantized_gradients
        params = self._tree_params(len(state.y), state.X.shape[1])
        if self.grow_policy == "symmetric":
            memory = SymmetricTreeMemory(
                state.X.shape[1], state.training.bin_thresholds.shape[1], params.max_depth,
                histograms=not state.objective.pairwise,
            )  # fmt: skip
            return _TreeGrower(params, None, memory)
        dtype = FLOAT_DTYPE if levels is None else QUANTIZED_DTYPE
        pool = histogram_pool(state.training, params, len(state.y), dtype, sampled_features=True)
        return _TreeGrower(params, pool, TreeMemory(state.training, params))

    def _monotone_constraints(self, n_features: int) -> np.ndarray | None:
        """``monotonic_cst`` checked (int8 per feature), or None without constraints (after
        the objective is prepared: it reads ``classes_``)."""
        constraints = check_monotonic_cst(self.monotonic_cst, n_features, getattr(self, "feature_names_in_", None))
        if constraints is None:
            return None
        refused = {
            "an objective with one score per grade (objective='mcrank' or 'cumulative')": (
                self.classes_ is not None
            ),
            "quantized_gradients (the split search's values are in quantized units)": self.quantized_gradients is not None,
            "missing_direction='separate' (a child of missing rows has no place in the order)": (
                self.missing_direction == "separate"
            ),
            "split_gain='squared' (its bounds would be means of -g, its leaves Newton steps)": (
                self.split_gain == "squared"
            ),
            "init (the model the boosting starts from is not constrained)": self.init is not None,
            "grow_policy='symmetric' (a level's one split cannot keep every node's children in order)": (
                self.grow_policy == "symmetric"
            ),
        }
        for reason, applies in refused.items():
            if applies:
                raise ValueError(f"monotonic_cst cannot be combined with {reason}.")
        return constraints

    def _with_target_statistics(self, data: RankingData, held: np.ndarray | None) -> RankingData:
        """``data`` with the ordered target statistics of its categorical features appended
        (``cat_target_statistics``; their tables kept in ``target_statistics_`` for the rows
        scored later), or as it is. The statistics are learned from the training rows alone:
        the rows ``held`` out for early stopping (a mask, or None) get the tables' columns,
        as an ``eval_set`` does."""
        self.target_statistics_ = None
        if not self.cat_target_statistics or self.is_categorical_ is None:
            return data
        refused = {
            "init (its model reads the features without the statistics)": self.init is not None,
            "feature_costs or cost_penalty (a statistic's cost is its feature's)": (
                self.feature_costs is not None or self.cost_penalty > 0.0
            ),
            "monotonic_cst": self.monotonic_cst is not None,
            "interaction_cst": self.interaction_cst is not None,
        }  # fmt: skip
        for name, applies in refused.items():
            if applies:
                raise ValueError(f"cat_target_statistics=True cannot be combined with {name}.")
        if not isinstance(data.X, np.ndarray):
            raise ValueError("cat_target_statistics=True needs a dense X; give a dense array or DataFrame.")
        train = np.ones(len(data.y), dtype=bool) if held is None else ~held
        X_train = data.X if held is None else data.X[train]
        trained, self.target_statistics_ = ordered_target_statistics(
            X_train, self.is_categorical_, data.y[train], self._training_weight(data, train), 1.0,
            stream(self._entropy, TARGET_STATISTICS),
        )  # fmt: skip
        if held is None:
            return data._replace(X=np.hstack([data.X, trained]))
        columns = np.empty((len(data.y), trained.shape[1]))
        columns[train] = trained
        columns[held] = target_statistics_columns(data.X[held], self.is_categorical_, self.target_statistics_)
        return data._replace(X=np.hstack([data.X, columns]))

    def _check_X(self, X: object, *, reset: bool, partition: bool = False) -> np.ndarray:
        """``BaseRanker._check_X``, then the target statistics appended to rows scored after a
        fit with ``cat_target_statistics`` (the fit appends its own, ordered ones)."""
        X = super()._check_X(X, reset=reset, partition=partition)
        tables = None if reset else getattr(self, "target_statistics_", None)
        if tables is None:
            return X
        if not isinstance(X, np.ndarray):
            raise ValueError("a model fitted with cat_target_statistics=True scores a dense X; give a dense array.")
        return np.hstack([X, target_statistics_columns(X, self.is_categorical_, tables)])

    def _tree_width(self) -> int | None:
        """``n_features_in_`` and the target statistics' columns, checked at load."""
        tables = getattr(self, "target_statistics_", None)
        if tables is None:
            return super()._tree_width()
        mask = getattr(self, "is_categorical_", None)
        check_tables(tables, 0 if mask is None else int(np.sum(mask)))
        return self.n_features_in_ + len(tables)

    def _split_categorical(self) -> np.ndarray | None:
        """``is_categorical_`` over the columns the trees split on: the target statistics
        appended by ``_with_target_statistics`` are numeric."""
        if self.is_categorical_ is None or not getattr(self, "target_statistics_", None):
            return self.is_categorical_
        return np.r_[self.is_categorical_, np.zeros(len(self.target_statistics_), dtype=bool)]

    def _check_categorical(self) -> None:
        """Refuse the settings a categorical split does not serve (after ``_monotone_constraints``)."""
        if self.is_categorical_ is None:
            return
        refused = {
            "grow_policy='symmetric' (a level's one split is a threshold)": self.grow_policy == "symmetric",
            "quantized_gradients (the categories' order would be in quantized units)": self.quantized_gradients is not None,
            "a monotone constraint on a categorical feature (categories have no order)": (
                self._monotonic is not None and bool(self._monotonic[self.is_categorical_].any())
            ),
        }
        for reason, applies in refused.items():
            if applies:
                raise ValueError(f"categorical_features cannot be combined with {reason}.")

    def _feature_costs(self, n_features: int) -> FeatureCosts:
        """The feature costs of the fit, with the features of an IGBRT initial forest paid for."""
        costs = FeatureCosts(check_feature_costs(self.feature_costs, n_features), self.cost_penalty, n_features)
        costs.pay_for_init(self.init_)
        self.init_cost_ = 0.0 if costs.costs is None else float(costs.costs[costs.used].sum())
        return costs

    def _boost_iteration(self, state: BoostingState, grower: "_TreeGrower", costs: FeatureCosts, iteration: int) -> None:
        """One iteration from Python: the gradients, each output's tree on its rows and
        features, the features it pays for."""
        penalty = costs.penalty()  # the features of earlier iterations are paid for (Mohan §6.1)
        self._compute_gradients(state)
        if state.bias is not None:
            state.bias.update(state.gradients.reshape(-1), state.hessians.reshape(-1), state.base_weight)
        weights = state.base_weight  # a pairwise objective's trees draw their pairs instead (_pairwise_tree)
        if not state.objective.pairwise:
            weights = weights * self._subsample_mask(iteration, state.query_of_row)
        features = self._tree_features(iteration, state.X.shape[1])
        for output in range(self.n_outputs_):
            self.trees_.append(self._boost_output(state, grower, iteration, output, weights, penalty, features))
        self._check_finite(state.raw, iteration)
        costs.pay_for(self.trees_[-self.n_outputs_ :])

    def _compiled_boosting(self, state: BoostingState, grower: "_TreeGrower", costs: FeatureCosts) -> CompiledBoosting | None:
        """The fit's iterations compiled whole (``_compiled_boosting``), or None where its
        configuration needs Python at every iteration: an objective without a compiled
        path or with several outputs, symmetric or pairwise trees, no histogram pool, or
        a per-iteration draw or update (rows, features, costs, quantized gradients,
        monotone bounds, position bias); rows of zero weight too, which a tree leaves out;
        and under ``NUMBA_DISABLE_JIT=1``, where the loop's dispatch by type does not exist."""
        objective_state = state.objective.compiled_state()
        n_features = state.X.shape[1]
        needs_python = (
            objective_state is None or self.n_outputs_ != 1 or self.grow_policy == "symmetric" or grower.pool is None
            or self.quantized_gradients is not None or self._monotonic is not None or state.bias is not None
            or self._samples_units() or resolve_max_features(self.feature_fraction, n_features) < n_features
            or costs.penalty() is not None or not (state.base_weight > 0).all() or numba.config.DISABLE_JIT
        )  # fmt: skip
        if needs_python:
            return None
        settings = Iteration(
            float(self.learning_rate), self._regulariser("l2_regularization"), self.split_gain == "squared",
            self._shift_invariant,
        )  # fmt: skip
        return CompiledBoosting(
            state.training, grower.params, grower.pool, grower.memory, objective_state, state.raw, state.gradients,
            state.hessians, state.base_weight, state.row_leaf, settings, self._interactions,
        )  # fmt: skip

    def _boost_compiled(self, state: BoostingState, compiled: CompiledBoosting, costs: FeatureCosts, first: int, count: int) -> None:
        """Iterations ``first:first + count`` in the compiled loop, then their trees added to
        the evaluation sets' scores and to the model, and the features they pay for."""
        rng_states = np.stack([self._tree_rng_state(iteration, 0) for iteration in range(first, first + count)])
        trees, finite = compiled.grow(rng_states)
        for tree in trees:
            for item in state.evals:
                item.raw[:, 0] += tree.predict(item.X)
        self.trees_.extend(trees)
        self._check_scores(finite, first + len(trees) - 1)
        costs.pay_for(trees)

    def _compute_gradients(self, state: BoostingState) -> None:
        """The objective's gradients and hessians at the current scores (as the position bias
        shows them to it; its update follows, from every row's gradients)."""
        raw, gradients, hessians = state.raw, state.gradients, state.hessians
        if state.bias is not None or raw.shape[1] == 1:  # 1-D C-contiguous views: the single-output kernels' signature
            state.objective.gradients(self._objective_scores(state), gradients.reshape(-1), hessians.reshape(-1))
        else:
            state.objective.gradients(raw, gradients, hessians)

    @staticmethod
    def _objective_scores(state: BoostingState) -> np.ndarray:
        """The scores (float64, (n_rows,)) at which a single-output objective takes its
        gradients: the raw scores, or as the position bias shows them."""
        raw = state.raw.reshape(-1)
        return raw if state.bias is None else state.bias.shown_scores(raw)

    def _boost_output(
        self, state: BoostingState, grower: "_TreeGrower", iteration: int, output: int, weights: np.ndarray,
        penalty: np.ndarray | None, features: np.ndarray | None,
    ) -> Tree:  # fmt: skip
        """Grow one output's tree on its gradients, set its leaves to their Newton steps and add
        it to the scores of every set."""
        row_leaf = state.row_leaf
        if state.objective.pairwise:  # its tree reads the objective's pairs, not the targets
            row_leaf.fill(-1)
            tree = self._pairwise_tree(state, grower, iteration, weights, features)
            self._add_to_scores(state, output, tree)
            return tree
        levels = self.quantized_gradients
        gradients, hessians, targets = state.gradients, state.hessians, state.targets
        tree_weights, tree_params = weights, grower.params
        if levels is None:
            exact_targets(gradients[:, output], hessians[:, output], targets, self.split_gain == "squared")
        else:  # the weights are in the quantized targets
            tree_weights = (weights > 0).astype(FLOAT_DTYPE)
            g_scale, h_scale = quantize_gradients(
                weights * gradients[:, output], weights * hessians[:, output], levels,
                self._rounding_rng(iteration, output), targets,
            )  # fmt: skip
            tree_params = quantized_params(grower.params, g_scale, h_scale)
        row_leaf.fill(-1)
        bounds = None if self._monotonic is None else np.empty((max_nodes(tree_params, len(state.y)), 2))
        if self.grow_policy == "symmetric":
            tree = grow_symmetric_tree(
                state.training, tree_weights, tree_params, stream(self._entropy, self._tree_key(iteration, output)),
                row_leaf, grower.memory, features, self._score_noise(iteration, weights, gradients[:, output], hessians[:, output]),
            )  # fmt: skip
        else:
            tree = grow_tree(
                state.training, tree_weights, tree_params, self._tree_rng_state(iteration, output), row_leaf=row_leaf,
                histograms=grower.pool, memory=grower.memory, feature_penalty=penalty, features=features,
                monotonic_cst=self._monotonic, value_bounds=bounds, interaction_groups=self._interactions,
            )  # fmt: skip
        sums = leaf_sums(row_leaf, weights * gradients[:, output], weights * hessians[:, output], weights, tree.node_count)
        curvature = state.objective.leaf_curvature(state.raw.reshape(-1), row_leaf, weights, tree.node_count)
        self._set_leaf_values(tree, sums, curvature, bounds, None if levels is None else (g_scale, h_scale))
        self._add_to_scores(state, output, tree)
        return tree

    def _add_to_scores(self, state: BoostingState, output: int, tree: Tree) -> None:
        """Add a tree with its values to ``output``'s scores of the training rows (by their
        leaves) and of every evaluation set."""
        add_tree_scores(state.raw, output, state.row_leaf, tree, state.X)
        for item in state.evals:
            item.raw[:, output] += tree.predict(item.X)

    def _store_values(self, tree: Tree, values: np.ndarray) -> None:
        """Shrink a tree's node values (float64, (n_nodes,)) by ``learning_rate`` into
        ``tree.values``, and its leaves' into their ``threshold`` slots, where the
        predictor reads them; a tree that could not split keeps 0 where the objective is
        ``shift_invariant``.

        Such a tree's step moves every score of a query alike, which changes no ranking
        and no later gradient of such an objective; its ``-G / H`` is over a curvature no
        split bounds, and where every row's weight is its query's and every row is drawn,
        ``G`` is rounding noise (a query's gradients sum to 0). Where the curvature has
        vanished (XE-NDCG's softmax saturated at a large learning rate; the Plackett-Luce
        curvature of a shift is 0) that noise would move every score by up to 1e34, and
        the later steps would be lost against it."""
        if tree.node_count == 1 and self._shift_invariant:
            values = np.zeros_like(values)
        tree.values = self.learning_rate * values
        leaves = tree.nodes["feature"] < 0
        tree.nodes["threshold"][leaves] = tree.values[leaves]

    def _pairwise_tree(
        self, state: BoostingState, grower: "_TreeGrower", iteration: int, weights: np.ndarray, features: np.ndarray | None
    ) -> Tree:  # fmt: skip
        """Grow a symmetric tree on the objective's pairs (``_tree/_pairwise.py``), each kept and
        weighed by ``subsample`` and ``bagging_temperature``, and set its leaves by a solve over a
        new draw of pairs."""
        objective, gradients, row_leaf = state.objective, state.gradients[:, 0], state.row_leaf
        winners, losers, pair_weights, _ = objective.pairs_
        pair_weights = pair_weights * _pair_row_weights(weights, winners, losers)
        scores = self._objective_scores(state)
        linear = self._pairs_linear_term(weights, gradients, objective, scores, objective.pairs_, pair_weights)
        if self._samples_units() and len(pair_weights):
            # The splits see the drawn pairs, the derivatives all of them: CatBoost's pair bootstrap.
            pair_weights = pair_weights * self._subsample_counts(iteration, len(pair_weights))
        l2 = self._regulariser("l2_regularization")
        tree = grow_pairwise_tree(
            state.training, weights, grower.params, stream(self._entropy, self._tree_key(iteration, 0)), row_leaf,
            grower.memory, linear, (winners, losers, pair_weights), BAYESIAN_MATRIX_REG, features,
            self._score_noise(iteration, weights, gradients, state.hessians[:, 0]),
        )  # fmt: skip
        pairs, leaf_gradients = objective.leaf_pairs(state.raw.reshape(-1))
        winners, losers, pair_weights, _ = pairs
        pair_weights = pair_weights * _pair_row_weights(weights, winners, losers)
        linear = self._pairs_linear_term(weights, leaf_gradients, objective, state.raw.reshape(-1), pairs, pair_weights)
        rows = np.flatnonzero(weights > 0)
        values = pairwise_leaf_values(tree, row_leaf, rows, linear, (winners, losers, pair_weights), l2, BAYESIAN_MATRIX_REG)
        self._store_values(tree, values)
        return tree

    @staticmethod
    def _pairs_linear_term(
        weights: np.ndarray, gradients: np.ndarray, objective: RankingObjective, scores: np.ndarray, pairs: tuple,
        pair_weights: np.ndarray,
    ) -> np.ndarray:  # fmt: skip
        """``-dL/ds`` (float64, (n_rows,)) of the pair loss whose quadratic terms weigh each pair
        by ``pair_weights`` (its rows' mean weight times its own, ``_pair_row_weights``): the
        gradients of those weighted pairs, so that linear and quadratic terms are of one loss.
        With every row of weight 1 they are the objective's ``gradients``."""
        if (weights == 1.0).all():
            return -gradients
        return -objective.weighted_gradients(scores, pairs, pair_weights)

    def _set_leaf_values(
        self, tree: Tree, sums: np.ndarray, curvature: np.ndarray | None, bounds: np.ndarray | None,
        scales: tuple[float, float] | None,
    ) -> None:  # fmt: skip
        """Set a grown tree's node values (``tree.values``, float64 (n_nodes,)) to their shrunk
        Newton steps from its leaves' ``sums`` (``leaf_sums``) or the objective's
        ``curvature``, within the monotone ``bounds``; with quantized gradients (``scales``),
        its gains and weights back in the exact units."""
        if scales is not None:
            g_scale, h_scale = scales
            tree.feature_gains *= g_scale**2 / h_scale
            tree.weighted_n_node_samples = subtree_sums(tree.nodes, sums[:, 2])
        values = newton_steps(tree.nodes, sums[:, 0], sums[:, 1] if curvature is None else curvature, self._regulariser("l2_regularization"))
        if bounds is not None:  # the Newton steps kept within the bounds of the monotone splits above them
            values = np.clip(values, bounds[: tree.node_count, 0], bounds[: tree.node_count, 1])
        self._store_values(tree, values)

    def _check_finite(self, raw: np.ndarray, iteration: int) -> None:
        self._check_scores(bool(np.isfinite(raw).all()), iteration)

    def _check_scores(self, finite: bool, iteration: int) -> None:
        """Refuse scores that diverged at ``iteration`` (0-based), with what to change."""
        if finite:
            return
        objective = getattr(self, "objective", "plackett-luce")
        if callable(objective):  # its Newton steps -G / H may be huge whatever the learning rate
            raise ValueError(
                f"the scores diverged to inf or NaN at iteration {iteration + 1}: the Newton steps -G / H of the "
                f"objective {user_function_name(objective)}'s gradients and hessians are "
                f"too large (hessians near 0?); give it larger hessians, set l2_regularization, or lower learning_rate="
                f"{self.learning_rate}."
            )
        raise ValueError(
            f"the scores diverged to inf or NaN at iteration {iteration + 1}: learning_rate={self.learning_rate} is "
            f"too large for objective={objective!r} on this data; lower it."
        )

    def _score_evals(self, state: BoostingState, iteration: int, elapsed: float) -> None:
        """NDCG@``eval_at`` (or ``eval_metric``) of every evaluation set into ``evals_result_``
        (and of the training set, reported, when verbose)."""
        key = self._eval_key()
        if state.evals or self.verbose:
            self._update_relevance_weights(state.raw, state.y, state.base_weight)
        metric = self._custom_metric()
        for item in state.evals:
            self.evals_result_[item.name][key].append(item.score(metric, self.eval_at, self._ranking_scores, self._gain()))
        if self.verbose:
            self.evals_result_["train"][key].append(
                state.train_eval.score(metric, self.eval_at, self._ranking_scores, self._gain())
            )
            self._report(iteration, [item.name for item in state.evals], elapsed)

    # --- positions (LambdaMART learns from them) -----------------------------------------

    def _check_positions(self, objective: RankingObjective, positions: np.ndarray | None) -> None:
        """Refuse ``position`` unless the estimator learns from them (``_position_bias``)."""
        if positions is not None:
            raise ValueError(f"position is for LambdaMART's position_bias; {type(self).__name__} takes none.")

    def _position_bias(
        self, positions: np.ndarray | None, objective: RankingObjective | None, n_positions: int | None = None
    ) -> PositionBias | None:  # fmt: skip
        """The fit's position bias model from the training rows' positions (``PositionBias``'s
        arguments; a fit over partitions makes one per partition and one, with neither
        positions nor objective, that takes the steps): none here, where positions are
        refused (``_check_positions``); LambdaMART's learns one."""
        return None

    def _nested_estimators(self) -> list[tuple[str, object]]:
        """The fitted ``init_`` model, if any (``BaseRanker._check_nested_widths``)."""
        init = getattr(self, "init_", None)
        return [] if init is None else [("its init_ model", init)]

    def _additive_terms(self) -> tuple[list, np.ndarray, np.ndarray | None]:
        """How the boosted model combines its trees, for serving (``serving/_terms.additive_terms``):
        the baseline plus every tree per output, after a forestrank ``init``'s own terms;
        McRank's relevance weights (its grades unless ``relevance_weights`` says otherwise)
        as the values its softmax averages."""
        n_outputs = self.n_outputs_
        if self._cumulative_outputs:
            raise TypeError(
                "objective='cumulative' scores grade probabilities made by clipping its per-grade sums of trees to "
                "[0, 1] and differencing them, which no sum of trees or softmax expresses: it cannot be exported or "
                "explained by TreeSHAP."
            )
        terms = [(tree, 1.0, index % n_outputs) for index, tree in enumerate(self.trees_)]
        base = np.asarray(self.baseline_, dtype=np.float64).copy()
        if self.init_ is not None:
            init_terms, init_base = sum_of_trees_terms(self.init_, "init")
            terms = init_terms + terms
            base = base + init_base
        return terms, base, None if self.classes_ is None else getattr(self, "relevance_weights_", self.classes_)

    # --- fit helpers ------------------------------------------------------------------

    def _eval_set(self, name: str, item: tuple) -> EvalSet:
        X_val, y_val, qid_val, weight_val = check_eval_item(item, name)
        try:
            X_val = self._check_X(X_val, reset=False)
        except ValueError as error:
            raise ValueError(f"eval_set ({name}): {error}") from error
        y_val = check_relevance(y_val, name=f"eval_set ({name}) y", n_samples=X_val.shape[0], warn_column=True)
        check_grades_for_gain(y_val, self._gain(), name=f"eval_set ({name}) y", gain_name="label_gain")
        try:
            groups = group_queries(qid_val, X_val.shape[0], caller=f"{type(self).__name__}.fit eval_set")
        except (ValueError, TypeError) as error:  # its own words name qid and X: say which set's
            raise type(error)(f"eval_set ({name}): {error}") from error
        weight = None if weight_val is None else groups.group(check_eval_weight(weight_val, X_val.shape[0], name))
        raw = np.zeros((X_val.shape[0], 1))
        return EvalSet(
            name, groups.group(X_val), groups.group(y_val), groups.query_boundaries, raw, groups.query_ids, weight
        )  # fmt: skip

    def _held_out_rows(self, data: RankingData) -> np.ndarray:
        """The rows of the ``validation_fraction`` of the queries that early stopping holds
        out (a mask over ``data``'s grouped rows). Drawn before anything is learned from the
        rows: the training rows alone set the unit of weight (``_training_weight``) and the
        target statistics (``_with_target_statistics``)."""
        return self._held_out_queries(data.groups.n_queries)[data.groups.grouped_query_index()]

    def _held_out_queries(self, n_queries: int) -> np.ndarray:
        """Which of ``n_queries`` queries (in the fit's order; a fit on partitions counts them
        in partition order) the ``validation_fraction`` hold-out draws: a bool mask."""
        n_held = int(round(self.validation_fraction * n_queries))
        if n_held < 1 or n_held >= n_queries:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves no query to validate or to train on "
                f"({n_queries} queries); pass eval_set instead."
            )
        held = np.zeros(n_queries, dtype=bool)
        held[stream(self._entropy, HOLD_OUT).choice(n_queries, n_held, replace=False)] = True
        return held

    def _hold_out_set(self, data: RankingData, query_of_row: np.ndarray, held: np.ndarray) -> EvalSet:
        """The early-stopping set of the ``held`` rows (``_held_out_rows``), their queries
        weighted by the rows' ``sample_weight``."""
        boundaries = boundaries_of_grouped(query_of_row[held])
        held_ids = data.groups.query_ids[query_of_row[held][boundaries[:-1]]]
        weight = None if data.given_weight is None else data.given_weight[held]
        if weight is not None and not weight.any():
            raise ValueError(
                "sample_weight is zero everywhere on the queries the validation_fraction hold-out draws, so they "
                "cannot decide early stopping: pass an eval_set, or a validation_fraction or random_state that draws "
                "queries of positive weight."
            )
        raw = np.zeros((int(held.sum()), 1))
        return EvalSet("validation", data.X[held], data.y[held], boundaries, raw, held_ids, weight)

    @staticmethod
    def _training_weight(data: RankingData, train: np.ndarray) -> np.ndarray:
        """The training rows' weights (float64, (n_train,)) in the unit of their own lightest
        (``_input.labels.normalize_sample_weight``): the weights of the rows held out for early
        stopping change no tree."""
        if data.sample_weight is None:
            return np.ones(int(train.sum()))
        if train.all():
            return data.sample_weight
        weights = data.given_weight[train]
        if not weights.any():
            raise ValueError(
                "sample_weight is zero everywhere on the queries the validation_fraction hold-out leaves to train on; "
                "at least one row needs a positive weight."
            )
        return normalize_sample_weight(weights)

    def _start(
        self, X: np.ndarray, y: np.ndarray, qid: np.ndarray, objective: RankingObjective,
        sample_weight: np.ndarray, init_weight: np.ndarray | None,
    ) -> np.ndarray:  # fmt: skip
        """Initial raw training scores (n_rows, n_outputs): ``init``'s predictions, or the
        objective's constant for the rows' ``sample_weight`` (float64, (n_rows,)); an unfitted
        ``init`` is fitted on the rows with their query ids ``qid`` (the caller's, grouped)
        and ``init_weight``, the weights given to the fit (None when there were none)."""
        if self.init is None:
            self.init_ = None
            self.baseline_ = np.atleast_1d(np.asarray(objective.initial_score(sample_weight), dtype=FLOAT_DTYPE))
            return np.tile(self.baseline_, (len(y), 1))
        self._check_init_objective(self.classes_ is not None)
        self.baseline_ = np.zeros(1)
        try:
            check_is_fitted(self.init)
            self.init_ = self.init
        except NotFittedError:
            self.init_ = fitted_init(self._init_reading_codes(), X, y, qid, init_weight)
        reading = [part for part in nested_models(self.init_) if getattr(part, "target_statistics_", None)]
        if reading:
            raise ValueError(
                f"init: this {type(reading[0]).__name__} was fitted with cat_target_statistics=True, and its trees read "
                "target-statistic columns beside the features, which the boosted model's feature costs, importances "
                "and exports count among its own features; give an init fitted with cat_target_statistics=False."
            )
        if self.init_ is self.init:  # fitted before this fit: its categories must be this fit's
            self._check_init_categories(self.init_)
        check_inner_columns(self.init_, getattr(self, "feature_names_in_", None), "init")
        return self._init_predictions(X)

    def _init_reading_codes(self) -> object:
        """The unfitted ``init`` to fit on this fit's validated rows, whose category columns
        hold codes: with categorical columns, a forestrank ranker's clone that takes them as
        its own (a frame's dtypes are gone from the rows, so ``"from_dtype"`` would find
        none), given to the ranker it fits inside it where it has one (BROOF's forest, an
        AveragedRanker's member, at any depth); a setting of its own, where it names
        columns, must name this fit's. A model that takes no categorical columns (a
        DummyRanker, scikit-learn's) reads the codes as numbers."""
        mask = getattr(self, "is_categorical_", None)
        return self.init if mask is None else self._taking_categories(self.init, mask)

    def _taking_categories(self, model: object, mask: np.ndarray) -> object:
        """``model`` (unfitted), or its clone that takes the categorical columns ``mask``
        (bool per feature), itself or through its inner template (``_init_reading_codes``)."""
        if not isinstance(model, BaseRanker):
            return model
        own = model.get_params(deep=False)
        if "categorical_features" in own:
            self._check_init_categorical_features(own["categorical_features"], mask)
            return clone(model).set_params(categorical_features=np.flatnonzero(mask).tolist())
        inner = model._inner_template()
        if inner is None:
            return model
        name, template = inner
        return clone(model).set_params(**{name: self._taking_categories(template, mask)})

    def _check_init_categorical_features(self, own: object, mask: np.ndarray) -> None:
        """Refuse an unfitted init's ``categorical_features`` that names other columns than
        this fit's categorical ones (``mask``); None and ``"from_dtype"`` take them."""
        if own is None or (isinstance(own, str) and own == "from_dtype"):
            return
        names = getattr(self, "feature_names_in_", None)
        try:
            same = np.array_equal(check_categorical_features(own, None, len(mask), names), mask)
        except (TypeError, ValueError):
            same = False
        if not same:
            raise ValueError(
                "init: an unfitted init is fitted on this fit's rows, their categories encoded, and takes this "
                "fit's categorical columns; leave its categorical_features at None or 'from_dtype', or name this "
                f"fit's. Got {own!r}."
            )

    def _check_init_categories(self, init: object) -> None:
        """Refuse a fitted forestrank ``init`` (an ``AveragedRanker`` of them included) whose
        categorical columns, or a frame column's categories, are not this fit's: it is handed
        this fit's category codes by position. Refuse any other fitted ``init`` (scikit-learn's,
        a pipeline) when this fit encodes a frame's category columns: it would be handed their
        codes, and nothing tells whether it was fitted on codes or on the frame's values."""
        names = getattr(self, "feature_names_in_", None)
        column = lambda f: repr(names[f]) if names is not None and f < len(names) else str(f)  # noqa: E731
        listed = lambda mask: "none" if mask is None else ", ".join(map(column, np.flatnonzero(mask)))  # noqa: E731
        encoded = getattr(self, "frame_categories_", {})
        if encoded and not hasattr(init, "frame_categories_"):
            raise ValueError(
                f"init: a fitted {type(init).__name__} would be handed the category column(s) "
                f"{', '.join(map(column, sorted(encoded)))} of X as codes (positions among the frame's categories), "
                "not the frame's values; give init unfitted (it is then fitted here, on the codes), or fit on an array "
                "of the codes with categorical_features as their indices."
            )
        if hasattr(init, "is_categorical_"):
            ours, theirs = getattr(self, "is_categorical_", None), init.is_categorical_
            if (ours is None) != (theirs is None) or (ours is not None and not np.array_equal(ours, theirs)):
                raise ValueError(
                    f"init was fitted with the categorical columns {listed(theirs)} and this fit has {listed(ours)}: "
                    "init is handed this fit's category codes by position; fit it with the same categorical_features."
                )
        frame = getattr(self, "frame_categories_", {})
        for feature, categories in (getattr(init, "frame_categories_", None) or {}).items():
            if feature in frame and list(frame[feature]) != list(categories):
                raise ValueError(
                    f"init was fitted with the categories {list(categories)} of column {column(feature)} and X has "
                    f"{list(frame[feature])}: init is handed this fit's category codes by position; fit it on frames "
                    "of the same categories."
                )

    def _init_predictions(self, X: np.ndarray) -> np.ndarray:
        """``init_``'s raw scores of the validated rows ``X`` (float64, (n_rows, 1)), by position:
        one finite score per row, or a ValueError naming ``init``."""
        scores = by_position(self.init_, self.init_.predict, X, getattr(self, "feature_names_in_", None))
        scores = np.asarray(scores, dtype=FLOAT_DTYPE)
        n_rows = X.shape[0]
        if scores.shape not in ((n_rows,), (n_rows, 1)):
            raise ValueError(
                f"init: {type(self.init_).__name__}.predict returned scores of shape {scores.shape} for {n_rows} rows; "
                f"boosting starts from one score per row, shape ({n_rows},)."
            )
        if not np.isfinite(scores).all():
            raise ValueError(
                f"init: {type(self.init_).__name__}.predict returned NaN or inf for {int((~np.isfinite(scores)).sum())} "
                f"of {n_rows} rows; boosting starts from finite scores."
            )
        return scores.reshape(-1, 1).copy()

    def _check_init_objective(self, per_grade: bool) -> None:
        """Refuse ``init`` with an objective of one raw score per grade (``per_grade``)."""
        if self.init is not None and per_grade:
            raise ValueError(f"init is not supported with objective={self.objective!r} (one raw score per grade).")

    def _baseline(self, X: np.ndarray) -> np.ndarray:
        """Raw starting scores of ``X``, shape (n_rows, n_outputs)."""
        if self.init_ is None:
            return np.tile(self.baseline_, (X.shape[0], 1))
        return self._init_predictions(X)

    def _ranking_scores(self, raw: np.ndarray) -> np.ndarray:
        """Ranking scores from raw scores (n_rows, n_outputs): the score itself, or, with
        grades (``classes_``; one output only for cumulative boosting of two grades),
        ``sum_c F(c) P(c)`` (``_scores_from_grades``)."""
        if self.classes_ is None:
            return raw[:, 0].copy()
        return self._scores_from_grades(raw)

    @property
    def _cumulative_outputs(self) -> bool:
        """Whether the raw scores are cumulative boosting's, one per grade below the largest,
        rather than McRank's, one per grade: read from the fitted shapes, so that
        ``set_params`` after the fit cannot change how a model reads its trees. False for an
        objective without grades (a property that raised there would break ``dir()``)."""
        return self.classes_ is not None and self.n_outputs_ == len(self.classes_) - 1

    def _grade_probabilities(self, raw: np.ndarray) -> np.ndarray:
        """The grade probabilities (n_rows, n_grades) of the raw scores (n_rows, n_outputs)
        of an objective with grades (``classes_``)."""
        return cumulative_probabilities(raw) if self._cumulative_outputs else softmax_probabilities(raw)

    def _scores_from_grades(self, raw: np.ndarray) -> np.ndarray:
        """``sum_c F(c) P(c)`` of the raw scores of an objective with grades, ``F`` being
        ``relevance_weights_`` (the grades for McRank models saved before the weights)."""
        weights = getattr(self, "relevance_weights_", self.classes_)
        if self._cumulative_outputs:
            return expected_grade(cumulative_probabilities(raw), weights)
        return expected_relevance(raw, weights)

    def _update_relevance_weights(self, raw: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """Set what ``_scores_from_grades`` weighs the grades by from the training rows' raw
        scores (n_rows, n_outputs), labels and weights; nothing to set with one score per
        document."""

    def _raw_scores(self, X: np.ndarray) -> np.ndarray:
        """The baseline plus every tree, float64 (n_rows, n_outputs)."""
        raw = self._baseline(X)
        for output in range(self.n_outputs_):
            raw[:, output] += self._sum_trees(X, slice(output, None, self.n_outputs_))
        return raw

    def _samples_units(self) -> bool:
        """Whether a tree's rows weigh other than 1 (``subsample`` or ``bagging_temperature``)."""
        return self.subsample < 1.0 or self.bagging_temperature > 0.0

    def _subsample_mask(self, iteration: int, query_of_row: np.ndarray) -> np.ndarray:
        """Each row's factor in this tree: 0 for the rows (whole queries with
        ``subsample_level="query"``) not drawn, else its unit's Bayesian bagging weight (1
        without)."""
        if not self._samples_units():  # every row, with no draw: spare building the streams every iteration
            return np.ones(len(query_of_row))
        by_query = self.subsample_level == "query"
        counts = self._subsample_counts(iteration, int(query_of_row[-1]) + 1 if by_query else len(query_of_row))
        return counts[query_of_row] if by_query else counts

    def _subsample_counts(self, iteration: int, n_units: int) -> np.ndarray:
        """``_subsample_mask`` per unit (query or row, ``subsample_level``), float64 (n_units,):
        the draw of ``subsample`` times the Bayesian bagging weights. A fit over partitions
        takes each partition's share of it."""
        counts = np.ones(n_units)
        if self.subsample < 1.0:
            counts = unit_counts(stream(self._entropy, (iteration, ROWS)), n_units, self.subsample, bootstrap=False)
        if self.bagging_temperature > 0.0:
            rng = stream(self._entropy, (iteration, BAYESIAN_WEIGHTS))
            counts = counts * bayesian_weights(rng, n_units, self.bagging_temperature)
        return counts

    def _tree_features(self, iteration: int, n_features: int) -> np.ndarray | None:
        """The features this iteration's trees may split on: ``feature_fraction`` of them,
        counted as a fractional ``max_features`` is (``resolve_max_features``), drawn
        without replacement; None for all."""
        n_drawn = resolve_max_features(self.feature_fraction, n_features)
        if n_drawn == n_features:
            return None
        drawn = stream(self._entropy, (iteration, TREE_FEATURES)).choice(n_features, n_drawn, replace=False)
        return np.sort(drawn).astype(np.int32)

    def _rounding_rng(self, iteration: int, output: int) -> np.random.Generator:
        """The stochastic rounding draws of one tree's quantized gradients."""
        return np.random.default_rng(self._rounding_seed(iteration, output))

    def _rounding_seed(self, iteration: int, output: int) -> np.random.SeedSequence:
        """The seed of ``_rounding_rng``, whose draws the partitions of a partitioned fit share out."""
        return seed_sequence(self._entropy, (iteration, ROUNDING, output))

    def _tree_params(self, n_rows: int, n_features: int) -> TreeParams:
        squared = self.split_gain == "squared"
        return TreeParams(
            criterion=_criteria.VARIANCE if squared else _criteria.NEWTON,
            n_classes=0,
            max_features=resolve_max_features(self.max_features, n_features),
            expansion=_frontier.BREADTH if self.grow_policy == "depthwise" else _frontier.BEST,
            missing_direction=_scans.MISSING_DIRECTIONS[self.missing_direction],
            l2_regularization=0.0 if squared else self._regulariser("l2_regularization"),
            max_depth=self._max_depth(),
            min_samples_split=2,
            min_samples_leaf=resolve_count(self.min_samples_leaf, n_rows),
            min_child_weight=self.min_child_weight,
            min_gain_to_split=self.min_gain_to_split,
            max_leaf_nodes=-1 if self.max_leaf_nodes is None else self.max_leaf_nodes,
            n_threads=numba.get_num_threads(),
            cat_smooth=self.cat_smooth,
            max_cat_to_onehot=self.max_cat_to_onehot,
            max_cat_threshold=self.max_cat_threshold,
            min_data_per_group=self.min_data_per_group,
            cat_l2=self.cat_l2,
        )

    def _max_depth(self) -> int:
        """The trees' depth limit as ``TreeParams`` takes it: -1 for none, 6 for symmetric trees by default."""
        if self.max_depth is None:
            return 6 if self.grow_policy == "symmetric" else -1
        return self.max_depth

    def _report(self, iteration: int, eval_names: list, elapsed: float) -> None:
        """Print the line of ``iteration`` (0-based) every ``verbose`` iterations (10 for
        ``True`` or 1) and at the last."""
        if self._reports(iteration):
            self._print_iteration(iteration, eval_names, elapsed)

    def _reports(self, iteration: int) -> bool:
        period = max(1, int(self.verbose) if self.verbose > 1 else 10)
        return (iteration + 1) % period == 0 or iteration + 1 == self.n_estimators

    def _print_iteration(self, iteration: int, eval_names: list, elapsed: float) -> None:
        key = self._eval_key()
        parts = [f"train {key} {self.evals_result_['train'][key][-1]:.4f}"]
        parts += [f"{name} {key} {self.evals_result_[name][key][-1]:.4f}" for name in eval_names]
        print(f"[{iteration + 1:>5}] " + "  ".join(parts) + f"  {elapsed:.1f} s")

    def _report_stop(self, stopping: EarlyStopping, iteration: int, eval_names: list, elapsed: float) -> None:
        """With ``verbose``, once early stopping ended the fit at ``iteration``: its line, unless
        its period printed it, and the iteration kept (as LightGBM's early stopping says)."""
        if not self.verbose:
            return
        if not self._reports(iteration):
            self._print_iteration(iteration, eval_names, elapsed)
        key = self._eval_key()
        print(
            f"early stopping: {eval_names[-1]} {key} did not beat its best by more than tol={self.tol:g} in "
            f"{self.n_iter_no_change} iterations; the model keeps the iterations up to its best, "
            f"[{stopping.best_iteration}] ({eval_names[-1]} {key} {stopping.best_score:.4f})"
        )

    # --- prediction --------------------------------------------------------------------

    def predict(self, X: object, qid: object = None, early_exit: EarlyExit | None = None) -> np.ndarray:
        """Ranking score of each row: the baseline (``init``'s prediction or the objective's
        constant) plus every tree's leaf value; with one score per grade (McRank, cumulative
        boosting) ``sum_c F(c) P(c)``, ``F`` being ``relevance_weights_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        qid : array-like of shape (n_samples,), default=None
            Query id of each row; needed with ``early_exit`` only.
        early_exit : EarlyExit, default=None
            Freeze the bottom of each query every ``early_exit.every`` iterations
            (Mohan's thesis, §6.1; ``docs/costs.md``); the per-document costs are
            recorded on it.

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        if is_dask_collection(X):
            return map_predict(self, X, qid, early_exit)
        X = self._validate_prediction_data(X, qid)
        if early_exit is not None:
            return self._predict_with_exits(X, qid, early_exit, self._baseline, lambda raw, _: self._ranking_scores(raw))
        return self._ranking_scores(self._raw_scores(X))

    def staged_predict(self, X: object) -> Iterator[np.ndarray]:
        """Predictions after each iteration: ``n_iter_`` arrays of shape (n_samples,).

        The last one equals ``predict(X)``. A Dask array or DataFrame is scored on the
        workers of the running ``distributed.Client`` that hold its partitions, each
        stage's scores coming back (``_cluster_boosting.staged_predict_partitioned``);
        without one, it is computed here.

        Parameters
        ----------
        X : array-like, sparse matrix or Dask collection of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,), float64
        """
        client = running_client() if is_dask_collection(X) else None
        if client is not None:
            check_is_fitted(self)
            yield from staged_predict_partitioned(self, client, X)
            return
        X = self._validate_prediction_data(X)
        baseline = self._baseline(X)
        trees = np.zeros_like(baseline)  # summed apart from the baseline, in predict's order
        for iteration in range(self.n_iter_):
            self._add_iteration(trees, X, iteration)
            yield self._ranking_scores(baseline + trees)

    def _add_iteration(self, raw: np.ndarray, X: np.ndarray, iteration: int) -> None:
        """Add the trees of ``iteration`` to ``raw`` (float64, (n_rows, n_outputs)) in place."""
        for output in range(self.n_outputs_):
            raw[:, output] += self.trees_[iteration * self.n_outputs_ + output].predict(X)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain of each feature over all trees, normalised to sum to 1; with
        feature costs, each split's gain less the penalty it paid (``docs/costs.md``)."""
        check_is_fitted(self)
        total = np.sum([tree.feature_gains for tree in self.trees_], axis=0)
        if getattr(self, "target_statistics_", None):  # a statistic's gain is its categorical feature's
            n_features = self.n_features_in_
            np.add.at(total, np.flatnonzero(self.is_categorical_), total[n_features:])
            total = total[:n_features]
        return total / total.sum() if total.sum() > 0 else total


class LambdaMART(BaseBoostingRanker):
    """Gradient-boosted regression trees for ranking: LambdaMART, MART.

    Defaults mirror LightGBM's ``LGBMRanker`` (100 trees, learning rate 0.1, 31
    leaves grown best-first, 20 rows and 1e-3 hessian per leaf, 255 bins, LambdaRank
    with sigma 1, truncation level 30 and normalisation).

    Parameters
    ----------
    n_estimators : int, default=100
        Boosting iterations.
    objective : {"lambdarank", "xendcg", "yetirank", "yetirank_pairwise", "mart", "queryrmse", "mcrank", "cumulative", \
            "c-mart", "cosine", "c-cosine", "kl", "c-kl"} or callable, default="lambdarank"
        ``"lambdarank"``: LambdaRank-NDCG pair gradients (Burges 2010).
        ``"xendcg"``: XE-NDCG, the cross entropy of the scores' softmax against the
        gains with uniform noise drawn at every iteration (Bruch, Wang, Bendersky &
        Najork 2020; LightGBM's ``rank_xendcg``; :class:`forestrank.objectives.XENDCG`):
        linear in a query's documents where LambdaRank's pairs are quadratic.
        ``"yetirank"``: YetiRank, the logistic pair loss over the neighbours in
        ``yetirank_permutations`` noisy rankings of each query drawn at every iteration,
        weighted down the ranking by ``yetirank_decay`` (Gulin, Kuralenok & Pavlov 2011;
        CatBoost's ``YetiRank``, whose constants it takes:
        :class:`forestrank.objectives.YetiRank`); CatBoost grows it on
        ``grow_policy="symmetric"`` trees.
        ``"yetirank_pairwise"``: the same pairs, but a symmetric tree's levels are
        scored and its leaves set by a joint solve over the pairs between leaves,
        which couples every leaf with those it shares pairs with (CatBoost's
        ``YetiRankPairwise``, its ``bayesian_matrix_reg`` 0.1; ``_tree/_pairwise.py``).
        Needs ``grow_policy="symmetric"``; ``subsample`` and ``bagging_temperature``
        then draw and weigh the pairs of each tree's splits (CatBoost's pair bootstrap;
        the derivatives keep every pair, as CatBoost's), and a pair weighs its
        documents' mean ``sample_weight`` (0 if either weighs 0). The leaves fit a
        quadratic model whose curvature is the pairs' weights (CatBoost's
        gradient-style pairwise leaves).
        ``"mart"``: least squares on ``target`` (Friedman 2001; MART-1 on
        ``"exp_gain"``, MART-2 on ``"grade"``).
        ``"queryrmse"``: least squares on ``target`` up to a free offset per query,
        which fits the targets' differences within each query (CatBoost's
        ``QueryRMSE``; :class:`forestrank.objectives.QueryRMSE`); ``sample_weight``
        must be constant within each query.
        ``"mcrank"``: multi-class logistic boosting over the grades, one tree per
        grade per iteration, ranking by expected relevance (Li, Burges & Wu 2007).
        ``"cumulative"``: Mohan's classification boosting (thesis, ch. 3, Algorithm
        5): least squares on ``[y <= c]`` for every grade ``c`` below the largest, one
        tree per such grade per iteration; the grade probabilities are the differences
        of the clipped, running-maximum cumulative predictions (Eqs. 3.2-3.3;
        :class:`forestrank.objectives.CumulativeSquaredError`).
        ``"c-mart"``: least squares on ``G / |G|_D`` (c-MART-1, NDCG-consistent;
        ``target`` does not apply). ``"cosine"`` / ``"c-cosine"``: the cosine
        surrogate (CosMART / c-CosMART), ``"kl"`` / ``"c-kl"``: ListNet's KL surrogate
        (KLMART / c-KLMART), the ``c-`` forms NDCG-consistent (Ravikumar, Tewari & Yang
        2011; :class:`forestrank.objectives.ListwiseSurrogate`, ``docs/boosting.md``).
        A callable is a loss of your own over queries
        (:class:`forestrank.objectives.CustomObjective`): ``f(y, scores,
        query_boundaries, query_ids) -> (gradients, hessians)`` over all rows grouped
        by query, or a ``numba.njit`` function ``f(y, scores, gradients, hessians)`` of
        one query's rows, run over the queries in parallel; the boosting starts from
        scores of 0 (``docs/boosting.md``, "Your own loss").
    learning_rate : float, default=0.1
        Shrinkage of every leaf value. XGBoost's LambdaRank hessians are twice ours
        (and LightGBM's), so its ``learning_rate=r`` takes the steps of ours at ``r / 2``
        (``docs/boosting.md``, "Which pairs").
    max_leaf_nodes : int or None, default=31
        Leaves of a ``"lossguide"`` or ``"depthwise"`` tree at most; ``None``: no limit.
    max_depth : int or None, default=None
        Levels of a tree at most; ``None``: no limit, but 6 for ``"symmetric"`` trees
        (CatBoost's ``depth``).
    grow_policy : {"lossguide", "depthwise", "symmetric"}, default="lossguide"
        How a tree grows. ``"lossguide"``: the leaf of largest gain splits next
        (best-first, LightGBM's leaf-wise trees; XGBoost's and CatBoost's
        ``"lossguide"``). ``"depthwise"``: level by level, each node by its own best
        split, until ``max_depth`` or ``max_leaf_nodes`` (XGBoost's ``"depthwise"``,
        CatBoost's ``"Depthwise"``). ``"symmetric"``: every node of a level splits on the
        one (feature, cut) of largest gain summed over the level, a tree of
        ``2 ** max_depth`` leaves unless no cut of a level gains more than
        ``min_gain_to_split``, where the tree stops a level sooner (CatBoost's default
        ``"SymmetricTree"``; a node whose
        child would be smaller than ``min_samples_leaf`` or ``min_child_weight`` adds
        nothing to a candidate's gain but follows the level; ``max_leaf_nodes`` does
        not apply). Symmetric trees are not combined with ``monotonic_cst``,
        ``interaction_cst``, ``feature_costs``, ``quantized_gradients``,
        ``missing_direction="separate"`` or a fit on Dask collections
        (``docs/boosting.md``, "Small collections").
    min_samples_leaf : int or float, default=20
        Minimum rows of a leaf; a float is a fraction of the training rows (rounded
        up). Pairwise trees (``"yetirank_pairwise"``) have no row minimum, and take the
        default only.
    min_child_weight : float, default=1e-3
        Minimum hessian sum of a leaf (LightGBM's ``min_sum_hessian_in_leaf`` with weights
        whose lightest is 1; the minimum row weight with ``split_gain="squared"``).
        Pairwise trees (``"yetirank_pairwise"``) have none, and take the default only.
    l2_regularization : float or "auto", default="auto"
        ``lambda`` of the Newton gain and leaf values (CatBoost's ``l2_leaf_reg`` and
        LightGBM's ``lambda_l2`` with weights whose lightest is 1, half XGBoost's
        ``reg_lambda``, whose hessians are twice ours: ``docs/from_xgboost.md``). ``"auto"``:
        3.0 on ``"symmetric"`` trees (chosen on data, ``docs/boosting.md``, "Small
        collections"), 0 on the others and with ``"yetirank_pairwise"`` (whose leaves
        have CatBoost's Bayesian prior).
    random_strength : float or "auto", default="auto"
        Noise on the split scores of ``"symmetric"`` trees, CatBoost's
        ``random_strength``: every candidate of a level is scored by ``sqrt(sum
        G^2 / (H + lambda))`` over the level's would-be children (CatBoost's cosine
        score when the hessians are the weights) plus a normal draw of deviation
        ``random_strength * sqrt(sum (w g)^2 / sum w h) * m``, where ``m = N e^-L /
        (1 + N e^-L)`` (``N`` training rows, ``L`` the iteration times
        ``learning_rate``) fades the noise as the model grows. 0: no noise. ``"auto"``:
        1.0 (CatBoost's default) on ``"symmetric"`` trees, 0 with
        ``"yetirank_pairwise"`` (CatBoost's default for ``YetiRankPairwise``); other
        trees take none.
    min_gain_to_split : float, default=0.0
        Minimum Newton gain ``G_L^2/(H_L + l2) + G_R^2/(H_R + l2) - G^2/(H + l2)`` of a
        split, on the scale of LightGBM's ``min_split_gain`` (``min_gain_to_split``) with
        weights whose lightest is 1.
    split_gain : {"newton", "squared"}, default="newton"
        Newton (OLE) gain on g and h, or a least-squares fit of ``-g``. Not with
        ``"yetirank_pairwise"``, whose splits are scored over its pairs.
    subsample : float in (0, 1], default=1.0
        Fraction of the queries (rows with ``subsample_level="document"``) drawn
        without replacement for each tree (stochastic gradient boosting, SGBRT).
    subsample_level : {"query", "document"}, default="query"
        The unit of ``subsample`` and ``bagging_temperature``; ``"yetirank_pairwise"``
        draws and weighs pairs, and takes the default only.
    bagging_temperature : float, default=0.0
        Bayesian bagging (CatBoost's ``bootstrap_type="Bayesian"``): every unit of
        ``subsample_level`` weighs ``(-log u) ** bagging_temperature`` (``u`` uniform,
        drawn anew for each iteration) in that iteration's tree, on top of
        ``subsample`` and ``sample_weight``. 0: every weight 1 (no bagging); 1:
        exponential weights, the Bayesian bootstrap (Rubin 1981). At most 100: above,
        the heaviest unit's weight, squared in the split gains, leaves float64's range
        (and already at 100 it outweighs the others by orders of magnitude).
    max_features : int, float, {"sqrt", "log2", "log2+1"} or None, default=None
        Features examined per split (kSGBRT; scikit-learn's ``max_features`` of its
        histogram boosting, LightGBM's ``feature_fraction_bynode``), drawn at every node
        among the tree's features; ``None`` examines all of them. Either way the
        histograms of every feature are kept per node and the larger child's come from
        the sibling subtraction.
    feature_fraction : float in (0, 1], default=1.0
        Fraction of the features each iteration's trees may split on (rounded down, at
        least one, as a fractional ``max_features``), drawn anew every iteration:
        LightGBM's ``feature_fraction``, XGBoost's ``colsample_bytree``. Combined
        with ``max_features``, a node draws among the tree's features.
    max_bins : int in [2, 255] or None, default=255
    missing_direction : {"learn", "left", "right", "separate"}, default="learn"
        Where a split sends the missing values (NaN) of its feature: ``"learn"``
        tries both sides and keeps the better one, a node that saw none sending them
        to its heavier child; ``"left"`` and ``"right"`` always send them that way at a
        numeric feature, as imputing -inf or +inf would (a categorical split learns their
        side, or without missing rows sends them to the heavier child:
        ``docs/categorical.md``); ``"separate"`` gives a node's missing rows a
        child of their own, the split chosen by the gain of the three-way partition
        (Mohan's thesis, Eq. 2.1) and stored as a "missing?" test above the value
        split (``docs/missing_values.md``). A drawn split (``criterion="random"``) learns
        nothing and sends them right unless ``"left"``.
    categorical_features : array-like of int, bool or str, "from_dtype" or None, default=None
        The categorical features, as scikit-learn's ``HistGradientBoostingRegressor``
        takes them: feature indices, a boolean mask, feature names, or
        ``"from_dtype"`` (the pandas ``category`` columns of a DataFrame, the polars
        ``Categorical`` and ``Enum`` ones). A categorical feature holds integer codes
        from 0 to 65,535 (a frame's column: its categories, ``frame_categories_``);
        NaN and negative codes are missing. A split sends a set of
        categories left: a node's categories ordered by ``G / (H + cat_smooth)``
        and cut where the gain is best (LightGBM's and scikit-learn's rule); a
        category the fit did not see goes where missing values go, the missing ones
        a category of their own. Up to ``max_bins`` categories per feature get a
        place of their own, the rarer ones one together (``docs/categorical.md``).
        Not with ``grow_policy="symmetric"``, ``quantized_gradients``, a monotone
        constraint on a categorical feature, or Dask collections.
    cat_smooth : float >= 0, default=10.0
        Added to each category's hessian sum in the order of a node's categories
        (LightGBM's ``cat_smooth``): rare categories move towards the middle; a
        category of fewer rows in the node stays out of the order and goes right
        with the rest, as in LightGBM (but at a node of at most
        ``max_cat_to_onehot`` categories, where each is tried alone).
    max_cat_to_onehot : int >= 1, default=4
        A node with at most this many categories of a feature splits one of them
        from the rest instead (LightGBM's ``max_cat_to_onehot``).
    max_cat_threshold : int >= 1, default=32
        The most categories a split's left set takes, grown from either end of
        the order (LightGBM's ``max_cat_threshold``).
    min_data_per_group : int >= 1, default=100
        The fewest rows added to the left set between two cuts evaluated, and
        the fewest in the right child (LightGBM's ``min_data_per_group``).
    cat_l2 : float >= 0, default=10.0
        Added to ``l2_regularization`` in the gain of a cut of the order
        (LightGBM's ``cat_l2``; one-vs-rest splits and leaf values keep
        ``l2_regularization``).
    cat_target_statistics : bool, default=False
        Give the trees, beside each categorical feature, its ordered target
        statistic (CatBoost's, Prokhorenkova et al. 2018, Eq. 5): a numeric column
        holding, for a training row, the smoothed mean grade of the rows of its
        category before it in a random order, and for a row scored later, of every
        training row of its category (``_input/target_statistics.py``). Rare
        categories get a value of their own, where the categorical split lumps them.
        The model then needs the statistics at serving time: the exports refuse it;
        not with ``init``, feature costs, ``monotonic_cst`` or ``interaction_cst``, and
        only on dense rows (a scipy sparse ``X`` is refused in fit and predict).
    quantized_gradients : int in [2, 254] or None, default=None
        ``None`` searches splits on the exact gradients. An int ``B`` rounds each
        tree's weighted gradients to the integers in ``[-b, b]``, ``b = B // 2``,
        and its hessians to ``[0, B]`` by unbiased stochastic rounding, and sums them
        in int32 histograms (Shi et al., "Quantized Training of Gradient Boosting
        Decision Trees", NeurIPS 2022; LightGBM's ``use_quantized_grad`` with
        ``num_grad_quant_bins=B``, whose default is 4). Leaf values are Newton
        steps of the exact gradients (their leaf refitting), and ``l2_regularization``,
        ``min_child_weight`` and ``min_gain_to_split`` keep their meaning on the
        rounded sums (unbiased, not exact: ``docs/boosting.md``). With
        ``split_gain="newton"`` only, and not with ``cost_penalty > 0``. Measured
        speed and quality: ``benchmarks/RESULTS.md``, "Quantized gradients".
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotone constraints, as scikit-learn's ``HistGradientBoostingRegressor``
        takes them (LightGBM's and XGBoost's ``monotone_constraints``): per feature
        +1 (the score may only rise with the feature), -1 (only fall) or 0 (free);
        a dict maps feature names or indices to their constraint. A split on a
        constrained feature keeps its children's values in order and bounds every
        value below them by their midpoint (``docs/boosting.md``, "Monotone
        constraints"). Not with ``objective="mcrank"`` or ``"cumulative"`` (one score
        per grade), ``grow_policy="symmetric"``, ``quantized_gradients``,
        ``split_gain="squared"``, ``init`` or ``missing_direction="separate"``.
    interaction_cst : {"pairwise", "no_interactions"}, list of lists of int or None, default=None
        Interaction constraints, as scikit-learn's histogram gradient boosting takes
        them (LightGBM's and XGBoost's ``interaction_constraints``): groups of feature
        indices that may interact; a branch of a tree splits only on features of one
        group, the features in no group forming one more group. ``"pairwise"``: every
        two features; ``"no_interactions"``: each feature alone (an additive model).
    feature_costs : array-like of shape (n_features,), default=None
        What each feature costs to compute when the model serves (finite, >= 0);
        None: every feature is free.
    cost_penalty : float >= 0, default=0.0
        lambda of Mohan's cost-aware splits (thesis, Eq. 6.1): a split on feature ``f``
        is scored by its gain less ``lambda * c(f) / sum(c)`` times the tree root's
        reducible loss, the gain of one leaf per row (``docs/costs.md``).
        Features used by earlier iterations, or higher in the same tree, are free.
        0 (the default) gives the cost-oblivious model, bitwise. Not with
        ``quantized_gradients``.
    sigma : float, default=1.0
        Steepness of LambdaRank's pairwise logistic.
    lambdarank_truncation_level : int, default=30
        With ``lambdarank_pair_method="topk"``: a pair counts only if one of its
        documents ranks in the top this-many, and the ideal DCG is taken at this
        cutoff (LightGBM's ``lambdarank_truncation_level``; XGBoost's
        ``lambdarank_num_pair_per_sample`` under its ``"topk"``).
    lambdarank_norm : bool, default=True
        ``|dNDCG|`` over ``0.01 + |s_i - s_j|`` and each query's lambdas scaled by
        ``log2(1 + S) / S`` (LightGBM's ``lambdarank_norm``); with
        ``lambdarank_pair_method="mean"`` the query's lambdas over the pairs each
        document draws instead (XGBoost's ``lambdarank_normalization``).
    lambdarank_pair_method : {"topk", "mean"}, default="topk"
        The pairs of LambdaRank (XGBoost's ``lambdarank_pair_method``): ``"topk"``,
        every pair with a document in the top ``lambdarank_truncation_level`` of the
        current ranking (LightGBM's pairs); ``"mean"``, at every iteration each
        document draws ``lambdarank_num_pair_per_sample`` partners uniformly among
        its query's documents of other grades, from the fit's seed, and the ideal
        DCG is the whole list's.
    lambdarank_metric : {"ndcg", "map", "err"}, default="ndcg"
        The metric whose change, were two documents swapped, weighs their pair
        (Burges 2010, §6): NDCG; MAP (XGBoost's ``rank:map``; relevant means grade >
        0); or ERR (CatBoost's YetiRank ``mode``; ``R = G(l) / (G(g_max) + 1)`` with
        ``label_gain``'s ``G``, ``g_max`` the data's largest grade), each change
        normalised by the query's ideal value. The early-stopping metric stays
        NDCG@``eval_at``.
    yetirank_permutations : int, default=10
        Noisy rankings of each query per iteration with ``objective="yetirank"``
        (CatBoost's ``permutations``).
    yetirank_decay : float in (0, 1], default=0.85
        Weight factor from one adjacent pair to the next down a noisy ranking, with
        ``objective="yetirank"`` (CatBoost's ``decay``).
    relevance_weights : {"linear", "square", "exp", "fitted"}, default="linear"
        With ``objective="mcrank"`` or ``"cumulative"``, documents rank by
        ``sum_c F(c) P(c)`` (Mohan's Eq. 3.1): ``F(c) = c`` (the expected relevance,
        Eq. 3.4), ``c**2`` or ``2**c``; ``"fitted"``: ``F`` fitted by ordinary least
        squares of the training labels on the training rows' grade probabilities
        (Eqs. 3.5-3.8, which fit the cumulative predictions and an intercept: the same
        fitted values, since the probabilities sum to 1; weighted by ``sample_weight``),
        refitted before every evaluation during the fit (``eval_set``, the
        ``validation_fraction`` hold-out, ``verbose``) and once more on the kept
        iterations; ``staged_predict`` weighs every stage with the final weights.
    lambdarank_num_pair_per_sample : int in [1, 10000] or None, default=None
        The partners each document draws under ``"mean"`` (None: 1, XGBoost's
        default). Under ``"topk"`` the count is ``lambdarank_truncation_level``, and
        this parameter is refused. Draws are with replacement, so a count above a
        query's size repeats pairs; above 10,000 (``MAX_PAIRS_PER_SAMPLE``) it is
        refused: every pair of each document's top-ranked partners is
        ``lambdarank_pair_method="topk"`` with a large ``lambdarank_truncation_level``.
    label_gain : {"exp", "linear"} or array-like of shape (n_grades,), default="exp"
        The gain ``G(l)`` of a grade wherever one appears: LambdaRank's ``|dNDCG|``,
        the targets of ``"c-mart"``, the surrogates and ``target="exp_gain"``, the
        early-stopping NDCG and ``score``. ``"exp"``: ``2^l - 1`` (for any grade:
        each query's gains are scaled by a power of two, which NDCG cancels);
        ``"linear"``: ``l``; an array: ``label_gain[l]`` for the integer grades 0 to
        ``len - 1``, finite, >= 0 and not decreasing (LightGBM's ``label_gain``,
        XGBoost's ``ndcg_exp_gain=False`` is ``"linear"``).
    target : {"grade", "exp_gain"}, default="grade"
        Regression target of ``objective="mart"`` and ``"queryrmse"``: the grade
        (MART-2) or ``G(l)``, ``2^l - 1`` unless ``label_gain`` says otherwise (MART-1).
    position_bias : {None, "unbiased", "factor"}, default=None
        Learning from clicks (``y`` = 1 for a click) shown at known positions
        (``fit(..., position=...)``), with ``objective="lambdarank"``: ``"unbiased"``
        is Unbiased LambdaMART's joint estimation of click and non-click position
        propensities (Hu et al., WWW 2019; XGBoost's ``lambdarank_unbiased``),
        ``"factor"`` an additive per-position bias learned with the trees (LightGBM's
        position bias). ``predict`` never needs positions (``docs/boosting.md``,
        "Learning from clicks"). Both updates weigh the rows by ``sample_weight``:
        ``"unbiased"`` each query's pair losses by its weight (which must then be
        constant within each query), ``"factor"`` each row's gradient and hessian.
        ``"unbiased"`` estimates propensities relative to position 1, which some row
        must have.
    position_bias_norm : float >= 0, default=1.0
        Unbiased LambdaMART's regularisation exponent ``p``: the estimates ``t+``, ``t-``
        are the ``1 / (p + 1)`` power of the loss ratios, the click propensities
        themselves at ``p=0`` and their square roots at 1, a milder correction
        (XGBoost's ``lambdarank_bias_norm``, whose default is 1 as well).
    position_bias_regularization : float >= 0, default=0.0
        L2 regularisation of the ``"factor"`` biases' Newton steps (LightGBM's
        ``lambdarank_position_bias_regularization``).
    init : estimator or None, default=None
        A ranker (or any regressor) whose predictions start the boosting; fitted on
        the training rows first unless already fitted, with ``fit``'s ``sample_weight``
        when given (an ``init`` whose ``fit`` takes none is then refused), as
        scikit-learn's gradient boosting fits its ``init``; a regressor without ``qid``
        in its ``fit`` learns from the rows alone. ``init=RFPointRanker()`` is Mohan's
        IGBRT; an unfitted ``init`` keeps its own ``random_state`` (seed it for a
        reproducible model). On Dask collections an unfitted ``init`` must be a forestrank ranker,
        fitted on the same collections' training rows first. An init fitted on a
        DataFrame needs the fit's frame to have its columns in its order (it reads the
        rows by position); one fitted with ``cat_target_statistics=True`` is refused.
        With categorical features an unfitted forestrank ``init`` takes the fit's
        categorical columns (BROOF through its forest, AveragedRanker its members), and a fitted one must have them and, fitted on frames,
        their categories; a fitted ``init`` of another library is refused when the fit
        encodes a frame's category columns, which it would read as codes
        (``docs/categorical.md``).
    validation_fraction : float in (0, 1), default=0.1
        Queries held out for early stopping when ``n_iter_no_change`` is set and no
        ``eval_set`` is passed to ``fit``. They are held out before anything is
        learned: the unit of ``sample_weight`` and the target statistics
        (``cat_target_statistics``) are the training rows' alone, and the held-out
        rows are scored as an ``eval_set``'s, each query weighted by its rows' mean
        ``sample_weight`` (as ``score`` weighs them).
    n_iter_no_change : int or None, default=None
        Stop when the validation NDCG@``eval_at`` has not improved by more than
        ``tol`` for this many iterations; the trees after the best one are dropped.
        A deciding set none of whose queries holds two grades of different gain (on which
        NDCG cannot tell models apart) is refused.
    tol : float, default=1e-7
    eval_at : int, default=10
        Cutoff of the NDCG (package default convention) recorded per iteration.
    eval_metric : callable or None, default=None
        A metric of your own recorded per iteration (under its ``__name__`` in
        ``evals_result_``) and deciding early stopping instead of NDCG@``eval_at``
        (:class:`forestrank.metrics.CustomMetric`): ``f(y, scores, query_boundaries,
        query_ids) -> float`` over a whole set, its rows grouped by query, or an
        ``@numba.njit`` ``f(y, scores) -> float`` of one query, averaged over the queries
        (those giving NaN left out), weighted by their rows' mean ``sample_weight`` where
        the set has weights (which a whole-set function does not see). Larger is better;
        return a loss's negative. Not with Dask collections.
    n_jobs : int or None, default=None
        Threads (numba's) of the gradient and histogram kernels, of binning and of
        prediction; the model does not depend on it. ``None`` means every core, as
        scikit-learn's ``HistGradientBoosting*``, ``LGBMRanker`` and ``XGBRanker`` by
        default, unless ``joblib.parallel_config(n_jobs=...)`` or ``OMP_NUM_THREADS``
        (which joblib sets in its process workers) sets fewer; -1 every core.
    random_state : int, RandomState or None, default=None
    verbose : int, default=0
        Print train/validation NDCG and elapsed time every 10 iterations
        (every ``verbose`` iterations when larger than 1).

    Attributes
    ----------
    trees_ : list of Tree
        Leaf values include the learning rate; iteration ``i`` holds trees
        ``i * n_outputs_ ... (i + 1) * n_outputs_ - 1``.
    n_iter_ : int
    position_bias_ : ndarray of shape (n_positions,)
        With ``position_bias``: the estimated click propensity ``t+_k`` of every position
        relative to position 1 (``"unbiased"``): the ratio of the pair costs raised to
        ``1 / (position_bias_norm + 1)``, so the propensity itself only with
        ``position_bias_norm=0`` (its square root at the default 1: ``docs/boosting.md``);
        or its additive bias (``"factor"``).
    tree_costs_ : ndarray of shape (n_trees,), float64
        ``c(h_t)`` (Mohan's thesis, Eq. 6.2): the cost of the features each tree uses
        that no earlier tree (nor ``init``'s forest) uses.
    init_cost_ : float
        The cost of the features of ``init``'s trees (IGBRT's forest, a
        ``CalibratedRanker``'s ranker's), paid by every document before the first
        iteration; ``average_cost`` adds it. A ``Pipeline``'s steps are not looked into:
        they may transform the columns its trees read.
    best_iteration_ : int
        With early stopping: the iteration with the best validation NDCG.
    cluster_rounds_, cluster_bytes_ : int
        After a fit on Dask collections: the rounds the driver made with the workers and
        the bytes they sent back (``docs/cluster.md``, "Boosting on a cluster").
    evals_result_ : dict
        ``{set name: {"ndcg@k": [value per iteration]}}`` for the eval sets (and
        the training set when ``verbose``). The queries weigh by their rows' mean
        ``sample_weight`` (the fit's for the training set and the
        ``validation_fraction`` hold-out, an ``eval_set`` item's own), as in ``score``.
    init_ : estimator or None
    baseline_ : ndarray of shape (n_outputs,)
        Constant start: 0 for LambdaRank and McRank; the mean target weighted by
        ``sample_weight`` for MART, and for ``objective="cumulative"`` each grade's
        weighted share of rows at or below it (on Dask collections the same, bit for
        bit, its sums added partition after partition).
    n_outputs_ : int
        Raw scores per document (trees per iteration): 1, the number of grades for
        McRank, one less for ``objective="cumulative"``.
    classes_ : ndarray or None
        The grades of McRank and of ``objective="cumulative"``, ascending.
    relevance_weights_ : ndarray of shape (n_grades,)
        With McRank or ``objective="cumulative"``: ``F(c)`` of every grade of
        ``classes_``, as given by ``relevance_weights`` or fitted.
    feature_importances_ : ndarray of shape (n_features,)
    is_categorical_, frame_categories_ :
        The categorical features and a frame's categories, as in :class:`RFPointRanker`.
    target_statistics_ : list of (codes, values, prior) or None
        With ``cat_target_statistics``: per categorical feature, its codes, their target
        statistics over every training row and the statistic of an unseen code
        (``_input/target_statistics.py``); None otherwise.
    n_features_in_, feature_names_in_ :
        As in scikit-learn.

    Notes
    -----
    LambdaRank ranks tied scores in input order, as LightGBM does; at the first
    iteration every score is tied, so the order of each query's documents in ``X``
    shapes the first trees' ``|dNDCG|`` weights and, through them, the model. On MQ2008
    that order alone moves the 5-fold MAP of either implementation by about ±0.002
    (``benchmarks/RESULTS.md``, "LambdaMART and PLRank"); compare rankers over several orders.

    Examples
    --------
    >>> from forestrank import LambdaMART, make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = LambdaMART(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        **BaseBoostingRanker._parameter_constraints,
        "objective": [
            StrOptions(
                {
                    "lambdarank", "xendcg", "yetirank", "yetirank_pairwise", "mart", "queryrmse", "mcrank", "cumulative",
                    "c-mart", "cosine", "c-cosine", "kl", "c-kl",
                }
            ),
            callable,
        ],
        "yetirank_permutations": [Interval(Integral, 1, None, closed="left")],
        "yetirank_decay": [Interval(Real, 0.0, 1.0, closed="right")],
        "sigma": [Interval(Real, 0.0, None, closed="neither")],
        "lambdarank_truncation_level": [Interval(Integral, 1, None, closed="left")],
        "lambdarank_norm": ["boolean"],
        "lambdarank_pair_method": [StrOptions({"topk", "mean"})],
        "lambdarank_metric": [StrOptions({"ndcg", "map", "err"})],
        "relevance_weights": [StrOptions({"linear", "square", "exp", "fitted"})],
        "lambdarank_num_pair_per_sample": [Interval(Integral, 1, MAX_PAIRS_PER_SAMPLE, closed="both"), None],
        "label_gain": [StrOptions({"exp", "linear"}), "array-like"],
        "target": [StrOptions({"grade", "exp_gain"})],
        "position_bias": [StrOptions({"unbiased", "factor"}), None],
        "position_bias_norm": [Interval(Real, 0.0, None, closed="left")],
        "position_bias_regularization": [Interval(Real, 0.0, None, closed="left")],
    }
    __metadata_request__fit = {"qid": True, "position": True}

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        objective: str = "lambdarank",
        learning_rate: float = 0.1,
        max_leaf_nodes: int | None = 31,
        max_depth: int | None = None,
        grow_policy: str = "lossguide",
        min_samples_leaf: int | float = 20,
        min_child_weight: float = 1e-3,
        l2_regularization: float | str = "auto",
        random_strength: float | str = "auto",
        min_gain_to_split: float = 0.0,
        split_gain: str = "newton",
        subsample: float = 1.0,
        subsample_level: str = "query",
        bagging_temperature: float = 0.0,
        max_features: int | float | str | None = None,
        feature_fraction: float = 1.0,
        max_bins: int | None = 255,
        missing_direction: str = "learn",
        categorical_features: object = None,
        cat_smooth: float = 10.0,
        max_cat_to_onehot: int = 4,
        max_cat_threshold: int = 32,
        min_data_per_group: int = 100,
        cat_l2: float = 10.0,
        cat_target_statistics: bool = False,
        quantized_gradients: int | None = None,
        monotonic_cst: object = None,
        interaction_cst: object = None,
        feature_costs: object = None,
        cost_penalty: float = 0.0,
        sigma: float = 1.0,
        lambdarank_truncation_level: int = 30,
        lambdarank_norm: bool = True,
        lambdarank_pair_method: str = "topk",
        lambdarank_num_pair_per_sample: int | None = None,
        lambdarank_metric: str = "ndcg",
        yetirank_permutations: int = 10,
        yetirank_decay: float = 0.85,
        relevance_weights: str = "linear",
        label_gain: object = "exp",
        target: str = "grade",
        position_bias: str | None = None,
        position_bias_norm: float = 1.0,
        position_bias_regularization: float = 0.0,
        init: object = None,
        validation_fraction: float = 0.1,
        n_iter_no_change: int | None = None,
        tol: float = 1e-7,
        eval_at: int = 10,
        eval_metric: object = None,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.objective = objective
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.grow_policy = grow_policy
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.l2_regularization = l2_regularization
        self.random_strength = random_strength
        self.min_gain_to_split = min_gain_to_split
        self.split_gain = split_gain
        self.subsample = subsample
        self.bagging_temperature = bagging_temperature
        self.subsample_level = subsample_level
        self.max_features = max_features
        self.feature_fraction = feature_fraction
        self.max_bins = max_bins
        self.missing_direction = missing_direction
        self.categorical_features = categorical_features
        self.cat_smooth = cat_smooth
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.min_data_per_group = min_data_per_group
        self.cat_l2 = cat_l2
        self.cat_target_statistics = cat_target_statistics
        self.quantized_gradients = quantized_gradients
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.feature_costs = feature_costs
        self.cost_penalty = cost_penalty
        self.sigma = sigma
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_norm = lambdarank_norm
        self.lambdarank_pair_method = lambdarank_pair_method
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.lambdarank_metric = lambdarank_metric
        self.yetirank_permutations = yetirank_permutations
        self.yetirank_decay = yetirank_decay
        self.relevance_weights = relevance_weights
        self.label_gain = label_gain
        self.target = target
        self.position_bias = position_bias
        self.position_bias_norm = position_bias_norm
        self.position_bias_regularization = position_bias_regularization
        self.init = init
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.eval_at = eval_at
        self.eval_metric = eval_metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _requires_grades(self) -> bool:
        return self.objective in GRADE_OBJECTIVES

    def _validate_training_data(
        self, X: object, y: object, qid: object, sample_weight: object, *, partition: bool = False
    ) -> RankingData:
        data = super()._validate_training_data(X, y, qid, sample_weight, partition=partition)
        if self.position_bias == "unbiased":
            refuse_weights_varying_within_queries(
                data, "position_bias='unbiased' needs", "(a query's weight scales its pairs' losses in the propensities)"
            )  # fmt: skip
        if self.objective == "queryrmse":
            refuse_weights_varying_within_queries(
                data, "objective='queryrmse' needs",
                "(each query's offset is its mean residual, CatBoost's weighted mean only then)",
            )  # fmt: skip
        return data

    def _check_positions(self, objective: RankingObjective, positions: np.ndarray | None) -> None:
        if self.position_bias != "unbiased":
            self._refuse_set(
                ("position_bias_norm",), "is Unbiased LambdaMART's exponent", f"position_bias={self.position_bias!r} has none"
            )  # fmt: skip
        if self.position_bias != "factor":
            self._refuse_set(
                ("position_bias_regularization",), "regularises the 'factor' biases",
                f"position_bias={self.position_bias!r} has none",
            )  # fmt: skip
        if (positions is None) != (self.position_bias is None):
            raise ValueError(
                f"position is needed with position_bias and only then; got position_bias={self.position_bias!r} and "
                f"{'no' if positions is None else 'a'} position."
            )
        if positions is not None and not objective.learns_from_positions:
            raise ValueError(f"position_bias needs objective='lambdarank'; got objective={self.objective!r}.")
        if isinstance(positions, np.ndarray) and len(positions):  # a Dask fit checks its partitions' summaries
            check_top_position_shown(self.position_bias, int(positions.min()))

    def _position_bias(
        self, positions: np.ndarray | None, objective: RankingObjective | None, n_positions: int | None = None
    ) -> PositionBias | None:  # fmt: skip
        if self.position_bias is None:
            return None
        return PositionBias(
            self.position_bias, positions, objective, self.position_bias_norm, self.position_bias_regularization,
            self.learning_rate, n_positions,
        )  # fmt: skip

    def _update_relevance_weights(self, raw: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> None:
        """``relevance_weights_``: ``F(c)`` of every grade (Mohan's Eq. 3.1), or the weighted
        least squares fit of the labels on the grade probabilities of the training rows."""
        if self.classes_ is None:
            self.__dict__.pop("relevance_weights_", None)  # a refit without grades keeps no stale weights
            return
        if self.relevance_weights == "fitted":
            self.relevance_weights_ = fitted_relevance_weights(self._grade_probabilities(raw), y, sample_weight)
            return
        if self.relevance_weights == "exp" and self.classes_[-1] > _LARGEST_EXP_WEIGHT_GRADE:
            raise ValueError(
                f"relevance_weights='exp' weighs grade c by 2**c, which overflows float64 above grade "
                f"{_LARGEST_EXP_WEIGHT_GRADE}; y holds {self.classes_[-1]:g}. Use 'linear', 'square' or 'fitted'."
            )
        self.relevance_weights_ = RELEVANCE_WEIGHTS[self.relevance_weights](self.classes_.astype(FLOAT_DTYPE))

    def _has_grade_probabilities(self) -> bool:
        """``predict_grade_proba``'s condition (``available_if``), saying which objectives have
        it: a fitted model's, read from its fitted ``classes_`` (``set_params`` after the fit
        does not change what its trees score), else the ``objective`` parameter's."""
        if "classes_" in vars(self):
            if self.classes_ is None:
                raise AttributeError(
                    "predict_grade_proba needs a model fitted with objective='mcrank' or 'cumulative', which score "
                    "each grade; this model's trees score documents only."
                )
            return True
        if self.objective not in GRADE_OBJECTIVES:
            raise AttributeError(
                f"predict_grade_proba needs objective='mcrank' or 'cumulative', which score each grade; "
                f"objective={self.objective!r} scores documents only."
            )
        return True

    @available_if(_has_grade_probabilities)
    def predict_grade_proba(self, X: object) -> np.ndarray:
        """The probability of each grade ``classes_`` for each row (not ``predict_proba``,
        which scikit-learn reserves for classifiers), with
        ``objective="mcrank"`` (softmax of the per-grade scores) or ``"cumulative"``
        (differences of the monotone-corrected cumulative regressions, Mohan's Eqs.
        3.2-3.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_grades), float64
            Non-negative; each row sums to 1.
        """
        check_is_fitted(self)
        return self._grade_probabilities(self._raw_scores(self._validate_prediction_data(X)))

    def _refuse_unless(self, objectives: tuple, names: tuple, role: str) -> None:
        """Refuse the parameters ``names``, which only ``objectives`` read (their ``role``), set
        away from their defaults (those of ``__init__``) for another objective."""
        if self.objective not in objectives:
            self._refuse_set(names, role, f"objective={self.objective!r} has none")

    def _refuse_set(self, names: tuple, role: str, reason: str) -> None:
        """Refuse any of the parameters ``names`` (their ``role``) set away from its default
        (that of ``__init__``), which the fit would not read, for ``reason``."""
        defaults = inspect.signature(type(self).__init__).parameters
        for name in names:
            if getattr(self, name) != defaults[name].default:
                raise ValueError(f"{name} {role}; {reason}. Got {name}={getattr(self, name)!r}.")

    def _make_objective(self) -> RankingObjective:
        gain = self._gain()
        if self.relevance_weights != "linear" and self.objective not in GRADE_OBJECTIVES:
            raise ValueError(
                "relevance_weights weighs the grade probabilities of objective='mcrank' or 'cumulative'; "
                f"objective={self.objective!r} has none. Got relevance_weights={self.relevance_weights!r}."
            )
        if self.objective not in ("mart", "queryrmse") and self.target != "grade":
            raise ValueError(
                f"target chooses what objective='mart' or 'queryrmse' regresses on; objective={self.objective!r} has its "
                f"own targets. Got target={self.target!r}."
            )
        self._refuse_unless(
            ("lambdarank",),
            ("lambdarank_pair_method", "lambdarank_metric", "lambdarank_num_pair_per_sample", "lambdarank_truncation_level"),
            "chooses LambdaRank's pairs and weights",
        )  # fmt: skip
        self._refuse_unless(("lambdarank",), ("sigma", "lambdarank_norm"), "shapes LambdaRank's pairwise logistic")
        self._refuse_unless(
            ("yetirank", "yetirank_pairwise"), ("yetirank_permutations", "yetirank_decay"), "sets YetiRank's noisy rankings"
        )
        if callable(self.objective):
            return CustomObjective(self.objective)
        if self.objective == "mart":
            return SquaredError(self.target, gain)
        if self.objective == "queryrmse":
            return QueryRMSE(self.target, gain)
        if self.objective == "c-mart":
            return SquaredError("normalized_gain", gain)
        if self.objective in ("cosine", "c-cosine", "kl", "c-kl"):
            kind = self.objective.removeprefix("c-")
            return ListwiseSurrogate(kind, consistent=self.objective.startswith("c-"), label_gain=gain)
        if self.objective == "mcrank":
            return Softmax()
        if self.objective == "cumulative":
            return CumulativeSquaredError()
        if self.objective == "xendcg":
            return XENDCG(gain, seed_sequence(self._entropy, GAIN_NOISE))
        if self.objective in ("yetirank", "yetirank_pairwise"):
            if self.objective == "yetirank_pairwise" and self.grow_policy != "symmetric":
                raise ValueError(
                    "objective='yetirank_pairwise' scores the splits of a symmetric tree's levels over its pairs; it needs "
                    f"grow_policy='symmetric', got grow_policy={self.grow_policy!r}."
                )
            if self.objective == "yetirank_pairwise":
                self._refuse_set(
                    ("split_gain", "min_samples_leaf", "min_child_weight", "subsample_level"),
                    "shapes the trees of per-row gradients and hessians",
                    "objective='yetirank_pairwise' scores its splits over pairs, with no row or hessian minimum of a leaf, "
                    "and subsample and bagging_temperature draw and weigh its pairs",
                )
            if self.objective == "yetirank_pairwise" and self._max_depth() > MAX_PAIRWISE_DEPTH:
                raise ValueError(
                    f"objective='yetirank_pairwise' solves for every child of a level at each cut: max_depth at most "
                    f"{MAX_PAIRWISE_DEPTH} (2**{MAX_PAIRWISE_DEPTH} leaves), got max_depth={self._max_depth()}."
                )
            kind = YetiRankPairwise if self.objective == "yetirank_pairwise" else YetiRank
            return kind(self.yetirank_permutations, self.yetirank_decay, seed_sequence(self._entropy, PERMUTATIONS))
        if self.lambdarank_pair_method == "mean":
            self._refuse_set(
                ("lambdarank_truncation_level",), "sets the pairs of lambdarank_pair_method='topk'",
                "'mean' draws lambdarank_num_pair_per_sample pairs a document instead",
            )  # fmt: skip
        if self.lambdarank_pair_method == "topk" and self.lambdarank_num_pair_per_sample is not None:
            raise ValueError(
                "lambdarank_num_pair_per_sample is the pairs each document draws with lambdarank_pair_method='mean'; "
                f"with 'topk' the pairs are set by lambdarank_truncation_level={self.lambdarank_truncation_level}. Got "
                f"lambdarank_num_pair_per_sample={self.lambdarank_num_pair_per_sample}."
            )
        return LambdaRank(
            self.sigma, self.lambdarank_truncation_level, self.lambdarank_norm, gain, self.lambdarank_pair_method,
            self.lambdarank_num_pair_per_sample or 1, seed_sequence(self._entropy, PAIR_SAMPLES), self.lambdarank_metric,
        )  # fmt: skip


class PLRank(BaseBoostingRanker):
    """Gradient-boosted trees with the top-k Plackett-Luce (ListMLE) likelihood (PLRank).

    Each iteration fits a tree to the gradients of the top-k Plackett-Luce negative
    log-likelihood of ground-truth permutations (grades descending, ties in random
    order, drawn once per fit) and sets each leaf to the Newton step of Eq. 9 of
    Xia, Zhai & Wang, "Plackett-Luce model for learning-to-rank task" (2019), whose
    curvature couples the leaf's documents within every context
    (``forestrank.objectives.PlackettLuce``).

    Parameters
    ----------
    n_estimators : int, default=100
    top_k : int, default=30
        Ground-truth positions whose choice the likelihood models. The paper's
        experiments model the top 10; 30 holds up on long web queries, where the top
        10 contexts leave most of a query's relevant documents unmodelled
        (``docs/boosting.md``, "Where PLRank stands").
    n_permutations : int, default=10
        Ground-truth permutations averaged (they differ in the order of tied
        grades). The paper recommends three (``obj=3``); on long queries whose
        relevant grades hold tens of tied documents three leave the tie order's noise
        in the likelihood, and ten hold up there as on the paper's kind of data
        (``docs/boosting.md``, "Where PLRank stands").
    skip_tied_tail : bool, default=True
        Model no choice once only documents of the query's lowest grade remain (their
        order is arbitrary, so those contexts would fit the random tie order). An
        extension of the paper, which models all ``top_k`` positions
        (``skip_tied_tail=False, top_k=10, n_permutations=1`` is its objective with
        one permutation).
    learning_rate, max_leaf_nodes, max_depth, grow_policy, min_samples_leaf, min_child_weight,
    l2_regularization, random_strength, min_gain_to_split, split_gain, subsample, bagging_temperature, max_features,
    feature_fraction, categorical_features, cat_smooth, max_cat_to_onehot, max_cat_threshold, min_data_per_group, cat_l2,
    cat_target_statistics,
    max_bins, missing_direction, quantized_gradients, monotonic_cst, interaction_cst, feature_costs, cost_penalty, init,
    validation_fraction,
    n_iter_no_change, tol, eval_at, eval_metric, n_jobs, random_state, verbose :
        As in :class:`LambdaMART`. Sub-sampling is by query (a context needs all of
        its query's documents), and ``sample_weight`` must be constant within each
        query: it weighs the query's likelihood.

    Attributes
    ----------
    trees_, n_iter_, best_iteration_, evals_result_, init_, baseline_, tree_costs_,
    cluster_rounds_, cluster_bytes_, feature_importances_, is_categorical_, frame_categories_, n_features_in_,
    feature_names_in_ :
        As in :class:`LambdaMART`.

    Examples
    --------
    >>> from forestrank import PLRank, make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = PLRank(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        **{name: value for name, value in BaseBoostingRanker._parameter_constraints.items() if name != "subsample_level"},
        "top_k": [Interval(Integral, 1, None, closed="left")],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "skip_tied_tail": ["boolean"],
    }
    subsample_level = "query"  # contexts need whole queries; not a parameter

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        top_k: int = 30,
        n_permutations: int = 10,
        skip_tied_tail: bool = True,
        learning_rate: float = 0.1,
        max_leaf_nodes: int | None = 31,
        max_depth: int | None = None,
        grow_policy: str = "lossguide",
        min_samples_leaf: int | float = 20,
        min_child_weight: float = 1e-3,
        l2_regularization: float | str = "auto",
        random_strength: float | str = "auto",
        min_gain_to_split: float = 0.0,
        split_gain: str = "newton",
        subsample: float = 1.0,
        bagging_temperature: float = 0.0,
        max_features: int | float | str | None = None,
        feature_fraction: float = 1.0,
        max_bins: int | None = 255,
        missing_direction: str = "learn",
        categorical_features: object = None,
        cat_smooth: float = 10.0,
        max_cat_to_onehot: int = 4,
        max_cat_threshold: int = 32,
        min_data_per_group: int = 100,
        cat_l2: float = 10.0,
        cat_target_statistics: bool = False,
        quantized_gradients: int | None = None,
        monotonic_cst: object = None,
        interaction_cst: object = None,
        feature_costs: object = None,
        cost_penalty: float = 0.0,
        init: object = None,
        validation_fraction: float = 0.1,
        n_iter_no_change: int | None = None,
        tol: float = 1e-7,
        eval_at: int = 10,
        eval_metric: object = None,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.top_k = top_k
        self.n_permutations = n_permutations
        self.skip_tied_tail = skip_tied_tail
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.grow_policy = grow_policy
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.l2_regularization = l2_regularization
        self.random_strength = random_strength
        self.min_gain_to_split = min_gain_to_split
        self.split_gain = split_gain
        self.subsample = subsample
        self.bagging_temperature = bagging_temperature
        self.max_features = max_features
        self.feature_fraction = feature_fraction
        self.max_bins = max_bins
        self.missing_direction = missing_direction
        self.categorical_features = categorical_features
        self.cat_smooth = cat_smooth
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.min_data_per_group = min_data_per_group
        self.cat_l2 = cat_l2
        self.cat_target_statistics = cat_target_statistics
        self.quantized_gradients = quantized_gradients
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.feature_costs = feature_costs
        self.cost_penalty = cost_penalty
        self.init = init
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.eval_at = eval_at
        self.eval_metric = eval_metric
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _validate_training_data(
        self, X: object, y: object, qid: object, sample_weight: object, *, partition: bool = False
    ) -> RankingData:
        data = super()._validate_training_data(X, y, qid, sample_weight, partition=partition)
        refuse_weights_varying_within_queries(data, "PLRank needs", "(it weighs the query's likelihood)")
        return data

    def _make_objective(self) -> RankingObjective:
        seed = seed_sequence(self._entropy, PERMUTATIONS).generate_state(1)[0]
        return PlackettLuce(self.top_k, self.n_permutations, self.skip_tied_tail, random_state=int(seed))
