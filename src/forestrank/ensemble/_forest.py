"""Random-forest rankers on the shared tree engine.

RF-point (Ibrahim & Carman, "Comparing Pointwise and Listwise Objective Functions for
Random Forest based Learning-to-Rank", §4.2 and Algorithm 3): each tree is grown on
a sub-sample of *queries* drawn without replacement, splits minimise the entropy of
the relevance grades, a leaf scores its documents with their expected relevance
``sum_c P(c | leaf) F(c)`` (Eq. 9), and the forest averages its trees (Eq. 10).

Trees are built in parallel with joblib (threads, or the backend the caller configured;
``docs/design.md``, "Parallelism"): the binned matrix is shared read-only and every tree runs one
``nogil`` kernel with its own random state, derived from ``random_state`` and the
tree's index only, so the model is identical for any ``n_jobs`` or joblib backend (with
feature costs, once ``cost_wave_size`` is set: by default the waves are the threads) and
a ``warm_start`` continuation equals a single fit.
"""

import dataclasses
import hashlib
import time
import warnings
from collections.abc import Callable, Iterator
from numbers import Integral, Real

import numpy as np
from joblib import delayed
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..parallel._cluster import dask_client, grow_on_cluster, is_dask_collection, map_predict, scatter_to_all
from .._numba.dtypes import FLOAT_DTYPE, as_kernel_array
from .._input.features import check_interaction_cst, check_monotonic_cst
from .._input.queries import stacklevel_outside_package
from ._early_exit import EarlyExit
from ._costs import FeatureCosts, check_feature_costs, tree_costs
from ..parallel._local import N_JOBS_CONSTRAINT, ordered_parallel, thread_count
from .._tree import _criteria, _frontier, _rng, _scans
from .._tree._grow import TrainingSet, TreeMemoryPool, TreeParams, binned_features, grow_tree
from .._tree._tree import Tree, subtree_sums
from ..metrics._ranking import evaluate
from ._base import BaseRanker, RankingData, TreeEnsembleMixin, fit_atomically
from ._partitioned import fit_partitioned
from ._sampling import ROWS, TREE, draw_counts, resolve_count, resolve_max_features, seed_entropy, seed_sequence, stream
from ._tree_batches import grow_batch


RELEVANCE_WEIGHTS = {"linear": lambda c: c, "square": lambda c: c**2, "exp": lambda c: 2.0**c}


def _rows_digest(data: RankingData, query_of_row: np.ndarray) -> str:
    """A digest of the grouped training rows (features, labels, weights and query layout,
    ``query_of_row``: ``data.groups.grouped_query_index()``),
    which a tree's sample is drawn over: a warm start whose out-of-bag rows redraw the
    fitted trees' samples needs the rows they were drawn from (``_warm_start_trees``).
    Fitted relevance weights redraw them too, and take a warm start on other rows, whose
    rows the fitted trees never saw unless the two fits share some (not detected)."""
    digest = hashlib.blake2b(digest_size=16)
    X = data.X
    parts = [X.data, X.indices, X.indptr] if hasattr(X, "indptr") else [X]
    parts += [np.asarray(X.shape), data.y, query_of_row]
    parts += [] if data.sample_weight is None else [data.sample_weight]
    for part in parts:
        digest.update(np.ascontiguousarray(part).view(np.uint8))
    return digest.hexdigest()


def fitted_relevance_weights(probabilities: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
    """Mohan's fitted relevance weights (thesis Eqs. 3.5-3.8): the weighted least squares fit
    of the labels on the grade probabilities.

    Parameters
    ----------
    probabilities : float64 array of shape (n_rows, n_grades)
        Each row's probability of each grade.
    y : float64 array of shape (n_rows,)
    sample_weight : float64 array of shape (n_rows,), >= 0

    Returns
    -------
    float64 array of shape (n_grades,): the weight of each grade
    """
    root = np.sqrt(sample_weight)
    return np.linalg.lstsq(probabilities * root[:, None], y * root, rcond=None)[0]


def relevance_factor(probabilities: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> np.ndarray:
    """The ``R`` of the QR decomposition of one block of rows' weighted least squares system
    ``[P sqrt(w) | y sqrt(w)]`` (``fitted_relevance_weights``' arguments): float64 of shape
    (min(n_rows, n_grades + 1), n_grades + 1). Stacked over blocks of rows, the factors
    have the normal equations of all the rows together (TSQR, Demmel et al., "Communication-
    optimal parallel and sequential QR and LU factorizations", SIAM J. Sci. Comput. 2012,
    Sec. 3), so ``relevance_weights_from_factors`` solves the same least squares, up to
    rounding (with the same cutoff of small singular values when it is rank-deficient)."""
    root = np.sqrt(sample_weight)
    return np.linalg.qr(np.column_stack([probabilities * root[:, None], y * root]), mode="r")


def relevance_weights_from_factors(factors: list, n_rows: int) -> np.ndarray:
    """``fitted_relevance_weights`` of ``n_rows`` rows given as the ``relevance_factor`` of each
    block of them: float64 of shape (n_grades,). Singular values below the cutoff the rows
    together would have (``numpy.linalg.lstsq``'s default, ``eps * max(n_rows, n_grades)``
    of the largest) count as zero: a system of identical probabilities (trees that never
    split) has the minimum-norm solution in both."""
    stacked = np.vstack(factors)
    cutoff = np.finfo(FLOAT_DTYPE).eps * max(n_rows, stacked.shape[1] - 1)
    return np.linalg.lstsq(stacked[:, :-1], stacked[:, -1], rcond=cutoff)[0]


class BaseForestRanker(TreeEnsembleMixin, BaseRanker):
    """Fit plumbing shared by the random-forest rankers: sampling, parallel trees, OOB, prediction.

    Subclasses define ``_tree_params(n_rows, n_features)`` and ``_targets(y)``.
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2", "log2+1"}),
            None,
        ],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left"), Interval(Real, 0.0, 1.0, closed="right")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0.0, 1.0, closed="neither")],
        "min_gain_to_split": [Interval(Real, 0.0, None, closed="left")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "expansion": [StrOptions(set(_frontier.EXPANSIONS))],
        "query_subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "bootstrap": ["boolean"],
        "sample_level": [StrOptions({"query", "document"})],
        "skip_queries_without_relevance": ["boolean"],
        "max_bins": [Interval(Integral, 2, 255, closed="both"), None],
        "missing_direction": [StrOptions(set(_scans.MISSING_DIRECTIONS))],
        "feature_costs": ["array-like", None],
        "cost_penalty": [Interval(Real, 0.0, None, closed="left")],
        "cost_wave_size": [Interval(Integral, 1, None, closed="left"), None],
        "oob_score": ["boolean"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
    }
    # The units the trees draw from (``draw_counts``' ``pool``); set by ``fit``.
    _pool: np.ndarray | None = None

    # --- fitting ----------------------------------------------------------------------

    @fit_atomically
    def fit(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> "BaseForestRanker":
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a Dask array or DataFrame
            A Dask collection must be partitioned by query (every query inside one
            partition); its trees then grow on the cluster, each from one partition
            (``docs/cluster.md``), and y, qid and sample_weight are Dask collections
            partitioned alike.
        y : array-like of shape (n_samples,)
            Relevance grades (non-negative integers for the class criteria).
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, any order; ``None`` means one query (warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, multiplied into each tree's sampling counts.

        Returns
        -------
        self
        """
        self._validate_params()
        if self.oob_score and not self._leaves_rows_out:
            raise ValueError("oob_score=True needs rows left out of trees: use query_subsample < 1 or bootstrap=True.")
        relevance_weights = getattr(self, "relevance_weights", "linear")  # not every forest's option
        if relevance_weights != "linear":
            self._check_relevance_weights()
        fitted_weights = relevance_weights == "fitted"
        self._monotonic = self._interactions = None
        if is_dask_collection(X):
            for name in ("monotonic_cst", "interaction_cst", "categorical_features"):
                if getattr(self, name, None) is not None:
                    raise ValueError(f"{name} is not supported on Dask collections yet; fit on data in memory.")
            if fitted_weights:
                raise ValueError(
                    "relevance_weights='fitted' is not supported on Dask collections: its out-of-bag grade "
                    "probabilities need the training rows; fit in memory or use 'linear', 'square' or 'exp'."
                )
            return fit_partitioned(self, X, y, qid, sample_weight)
        data = self._validate_training_data(X, y, qid, sample_weight)
        self._monotonic = self._monotone_constraints(data.X.shape[1])
        self._interactions = check_interaction_cst(getattr(self, "interaction_cst", None), data.X.shape[1])
        self.__dict__.pop("tree_partitions_", None)

        query_of_row = data.groups.grouped_query_index()
        previous = self._warm_start_trees(rows=_rows_digest(data, query_of_row))
        if not previous:
            self._entropy = seed_entropy(self.random_state)
            if not self._requires_grades:  # an earlier fit's grades, which no tree of this one models
                self.__dict__.pop("classes_", None)
        base_weight = self._base_weight(data, query_of_row)
        binned = binned_features(
            data.X, self.max_bins, self._entropy % (2**32), self.n_jobs, base_weight > 0,
            categorical=getattr(self, "is_categorical_", None),
        )  # fmt: skip
        self._grow_trees(data, query_of_row, base_weight, binned, previous)
        self._set_fitted_relevance_weights(data, base_weight, query_of_row)

        if self.oob_score:
            prediction = self._oob_prediction(data.X, base_weight, query_of_row)
            self.oob_prediction_ = data.groups.ungroup(prediction)
            # Rows of zero weight and skipped queries are out of every bag, yet absent
            # from the data the forest learns from: not scored.
            scored = ~np.isnan(prediction) & (base_weight > 0)
            if not scored.any():
                raise ValueError(
                    "oob_score=True but every row of positive weight is in every tree's sample; lower query_subsample "
                    "(with a single query, which every query draw takes, sample documents: sample_level='document')."
                )
            self.oob_score_ = evaluate(
                "ndcg", data.y[scored], prediction[scored], query_of_row[scored], 10, conventions={"gain": self._gain()}
            )
        elif hasattr(self, "oob_score_"):
            del self.oob_score_, self.oob_prediction_
        return self

    def _additive_terms(self) -> tuple[list, np.ndarray, None]:
        """How the forest combines its trees, for serving (``serving/_terms.additive_terms``):
        ``([(tree, weight, target), ...], base per target, classes)``, the mean of the trees."""
        return [(tree, 1.0 / len(self.trees_), 0) for tree in self.trees_], np.zeros(1), None

    def _warm_start_trees(self, partitioned: bool = False, rows: str | None = None) -> list:
        """The trees this fit continues: the fitted ones under ``warm_start``, else none;
        in memory and on Dask (``partitioned``: each tree drawn from one partition) alike.

        A warm start is refused when the new trees would score leaves on another scale
        (``leaf_score``, ``relevance_weights``) or grow under other constraints
        (``self._monotonic`` and ``self._interactions``, set before the call) than the
        fitted ones, and, when the out-of-bag rows or fitted relevance weights redraw
        every tree's sample, when the fitted trees drew theirs otherwise (``bootstrap``,
        ``query_subsample``, ``sample_level``, ``skip_queries_without_relevance``, or
        on a cluster), and, for the out-of-bag rows, when they drew them from other rows
        (``rows``: the training rows' digest, :func:`_rows_digest`; None on a cluster).
        As scikit-learn's forests, a warm start with no more trees to grow warns and
        returns the forest as it is.
        """
        previous = getattr(self, "trees_", []) if self.warm_start else []
        if previous and self.n_estimators < len(previous):
            raise ValueError(
                f"n_estimators={self.n_estimators} must be >= the {len(previous)} trees already fitted "
                "when warm_start=True."
            )
        scoring = [getattr(self, "leaf_score", None), getattr(self, "relevance_weights", None)]
        if previous and scoring != getattr(self, "_fitted_scoring", scoring):
            raise ValueError(
                f"warm_start=True adds trees to a forest whose leaves were scored with (leaf_score, relevance_weights) "
                f"= {tuple(self._fitted_scoring)}, not {tuple(scoring)}; the forest would average leaves on two scales. "
                "Fit a new forest (warm_start=False)."
            )
        constraints = [None if c is None else c.tolist() for c in (self._monotonic, self._interactions)]
        if previous and constraints != getattr(self, "_fitted_constraints", [None, None]):
            raise ValueError(
                "warm_start=True adds trees to a forest grown under other monotonic_cst or interaction_cst; the forest "
                "would mix constrained and unconstrained trees. Fit a new forest (warm_start=False)."
            )
        sampling = [
            self.bootstrap, self.query_subsample, self.sample_level, self.skip_queries_without_relevance, partitioned
        ]  # fmt: skip
        drawn = getattr(self, "_fitted_sampling", sampling) if previous else sampling  # None: drawn several ways
        drawn_from = getattr(self, "_fitted_rows", rows) if previous else rows  # None: from several row sets
        if drawn != sampling and (self.oob_score or scoring[1] == "fitted"):
            described = (
                "several ways" if drawn is None else "on a cluster, each from its partition" if drawn[-1]
                else f"with (bootstrap, query_subsample, sample_level, skip_queries_without_relevance) = "
                f"{tuple(drawn[:-1])}"
            )  # fmt: skip
            raise ValueError(
                "oob_score=True and relevance_weights='fitted' redraw every tree's sample with this fit's (bootstrap, "
                "query_subsample, sample_level, skip_queries_without_relevance), in memory; the fitted trees drew "
                f"theirs {described}, and would be judged on rows they were grown on. Keep the settings, or fit a new "
                "forest (warm_start=False)."
            )
        if drawn_from != rows and self.oob_score:
            raise ValueError(
                "oob_score=True redraws every tree's sample over this fit's rows; the fitted trees drew theirs from "
                "other rows (another X, y, qid or sample_weight), and rows they were grown on would be scored as out of "
                "their bags. Warm-start on the rows of the first fit, or fit a new forest (warm_start=False)."
            )
        self._fitted_scoring, self._fitted_constraints = scoring, constraints
        self._fitted_sampling = sampling if drawn == sampling else None
        self._fitted_rows = rows if drawn_from == rows else None
        if previous and self.n_estimators == len(previous):
            warnings.warn(
                f"warm_start=True with n_estimators={self.n_estimators}, the number of trees already fitted: no tree "
                "is grown. Raise n_estimators to add trees.",
                UserWarning,
                stacklevel=stacklevel_outside_package(),
            )
        return previous

    def _base_weight(self, data: RankingData, query_of_row: np.ndarray, allow_empty_pool: bool = False) -> np.ndarray:
        """Each grouped row's weight in every tree (float64): its sample weight, 0 outside
        the sampling pool; sets ``_pool`` (``_sampling_pool``). ``allow_empty_pool``: a
        pool without units is no error (one partition of a Dask fit)."""
        base_weight = np.ones(len(data.y)) if data.sample_weight is None else data.sample_weight
        self._pool = self._sampling_pool(data.y, base_weight, query_of_row, allow_empty_pool)
        if self._pool is not None:  # the skipped rows count nowhere: not in the bins, nor in min_samples_*
            base_weight = base_weight * (self._pool[query_of_row] if self.sample_level == "query" else self._pool)
        return base_weight

    def _sampling_pool(
        self, y: np.ndarray, weight: np.ndarray, query_of_row: np.ndarray, allow_empty: bool = False
    ) -> np.ndarray | None:
        """The units the trees draw from: None (all of them) unless some have no weight
        (a unit of zero weight is not drawn: a tree drawing only such units would have
        no rows) or ``skip_queries_without_relevance`` keeps the queries with a document of
        positive label and positive weight.

        Parameters
        ----------
        y : ndarray of shape (n_samples,), float64
            Labels grouped by query.
        weight : ndarray of shape (n_samples,), float64
            Sample weights grouped by query.
        query_of_row : ndarray of shape (n_samples,), int64

        Returns
        -------
        None or bool ndarray of shape (n_queries,), or (n_samples,) with ``sample_level="document"``
        """
        by_query = self.sample_level == "query"
        pool = None
        if not (weight > 0).all():
            pool = np.bincount(query_of_row, weights=weight > 0) > 0 if by_query else weight > 0
        if not self.skip_queries_without_relevance:
            return pool
        # a relevant document of no weight is not in any tree: it makes no query relevant
        relevant = np.bincount(query_of_row, weights=(y > 0) & (weight > 0)) > 0
        if not relevant.any() and not allow_empty:
            raise ValueError(
                "skip_queries_without_relevance=True skips every query: no query has a document with a "
                "positive label y and a positive sample_weight."
            )
        relevant = relevant if by_query else relevant[query_of_row]
        return relevant if pool is None else pool & relevant

    def _check_relevance_weights(self) -> None:
        """Refuse ``relevance_weights`` (other than ``"linear"``) the forest's options leave
        unused; a listwise forest weighs its documents' gains with every one it offers."""

    @property
    def _leaves_rows_out(self) -> bool:
        """Whether some rows miss some trees (needed for out-of-bag predictions)."""
        return self.bootstrap or self.query_subsample < 1.0

    def _progress(self, n_grown: int) -> Callable[[int], None]:
        """A function to call with the number of trees grown so far (``n_grown`` before the
        first call): with ``verbose``, it prints a line when the count passes a tenth of
        ``n_estimators`` (trees grown one by one: at each tenth; on a cluster they come
        back in batches) and at the last tree, with the seconds since this call."""
        start, step, last = time.perf_counter(), max(1, self.n_estimators // 10), n_grown

        def report(n_trees: int) -> None:
            nonlocal last
            if self.verbose and (n_trees // step > last // step or n_trees == self.n_estimators > last):
                print(f"{type(self).__name__}: {n_trees}/{self.n_estimators} trees, {time.perf_counter() - start:.1f} s")
            last = n_trees

        return report

    def _grow_trees(
        self, data: RankingData, query_of_row: np.ndarray, base_weight: np.ndarray, binned: dict, previous: list,
        paid: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        """Grow trees ``len(previous) .. n_estimators - 1`` after ``previous``; sets ``trees_``.

        Parameters
        ----------
        data : RankingData
            Validated rows grouped by query.
        query_of_row : ndarray of shape (n_samples,), int64
        base_weight : ndarray of shape (n_samples,), float64
            Row weights, multiplied into every tree's sampling counts.
        binned : dict
            ``binned_features`` of ``data.X`` (shared with BROOF's other rounds).
        previous : list of Tree
        paid : bool ndarray of shape (n_features,), default=None
            Features already paid for before this forest (BROOF's earlier rounds).
        """
        training = self._training_set(data, query_of_row, binned, base_weight)
        n_rows = int((base_weight > 0).sum())
        params = self._tree_params(n_rows, data.X.shape[1])
        new_indices = range(len(previous), self.n_estimators)
        report = self._progress(len(previous))
        trees = list(previous)
        costs, completing = self._feature_costs(data.X.shape[1], previous, paid)
        client = dask_client()
        if client is not None:
            waves = self._waves(new_indices, costs)
            if waves:  # the forest's own data goes to the workers once, for all its waves
                per_forest = scatter_to_all(
                    client,
                    (self._tree_grower(), dataclasses.replace(training, X_binned=None), base_weight, query_of_row, params),
                )  # fmt: skip
            shared = {"X_binned": training.X_binned}
            for wave in waves:
                grown = grow_on_cluster(
                    client, grow_batch, shared, per_forest, wave, lambda n: report(len(trees) + n), costs.penalty()
                )  # fmt: skip
                costs.pay_for(completing + grown)
                completing = []
                trees += grown
        else:
            memory_pool = TreeMemoryPool(training, params, n_rows, len(new_indices))
            for wave in self._waves(new_indices, costs):
                penalty = costs.penalty()
                jobs = (
                    delayed(self._grow)(index, training, base_weight, query_of_row, params, memory_pool, penalty)
                    for index in wave
                )
                grown = []
                for tree in ordered_parallel(self.n_jobs)(jobs):
                    grown.append(tree)
                    report(len(trees) + len(grown))
                costs.pay_for(completing + grown)
                completing = []
                trees += grown
        self.trees_ = trees
        self.tree_costs_ = tree_costs(trees, costs.costs)
        self.n_trees_ = len(trees)
        self._index_trees()

    def _class_targets(self, y: np.ndarray) -> np.ndarray:
        """Each row's class index (float64, shape (n_rows, 1)); sets ``classes_``, the
        grades of ``y`` or, in a fit over partitions, ``_all_classes`` (the grades of
        every partition, so that a class has one index everywhere)."""
        classes = getattr(self, "_all_classes", None)
        self.classes_ = np.unique(y) if classes is None else classes
        return np.searchsorted(self.classes_, y).astype(FLOAT_DTYPE)[:, None]

    def _training_set(
        self, data: RankingData, query_of_row: np.ndarray, binned: dict, base_weight: np.ndarray
    ) -> TrainingSet:  # fmt: skip
        """The data every tree of the fit reads: ``binned`` (``binned_features``) and the
        targets, leaf targets and listwise fields of the grouped rows, whose weights in
        every tree are ``base_weight`` (float64, (n_samples,)) times their draws."""
        with np.errstate(over="ignore"):
            leaf_targets = as_kernel_array(self._leaf_targets(data.y), FLOAT_DTYPE)
        if not np.isfinite(leaf_targets.sum()):  # a leaf's value is a weighted sum of them
            raise ValueError(
                f"relevance_weights={self.relevance_weights!r} turns y's largest grade, {data.y.max():g}, into a leaf "
                "target whose sums overflow float64; use relevance_weights='linear', or smaller grades."
            )
        return TrainingSet(
            **binned,
            targets=self._targets(data.y),
            leaf_targets=leaf_targets,
            **self._listwise_data(data, query_of_row, base_weight),
        )

    def _feature_costs(
        self, n_features: int, previous: list, paid: np.ndarray | None = None
    ) -> tuple[FeatureCosts, list]:  # fmt: skip
        """The fit's ``FeatureCosts``, with the features of ``paid`` and of the ``previous``
        trees (a warm start's) already paid for, but those of the previous trees in the wave
        the new trees complete (``_waves``), which the fit pays for once that wave is grown,
        as one fit of all the trees does.

        Returns
        -------
        costs : FeatureCosts
        completing : list of Tree
            The previous trees of the wave the new trees complete, still to be paid for.
        """
        costs = FeatureCosts(check_feature_costs(self.feature_costs, n_features), self.cost_penalty, n_features)
        completing = previous[len(previous) - len(previous) % self._wave_size() :] if costs.active else []
        costs.pay_for(previous[: len(previous) - len(completing)])
        if paid is not None:
            costs.used |= paid
        return costs, completing

    def _wave_size(self) -> int:
        """Trees per wave with feature costs: ``cost_wave_size``, default the threads of ``n_jobs``."""
        return self.cost_wave_size or thread_count(self.n_jobs)

    def _waves(self, indices: range, costs: FeatureCosts) -> list:
        """The tree indices in the waves they grow in: one wave without costs, else waves of
        ``_wave_size`` trees, each seeing the features the waves before it used (Mohan
        §6.1). The waves start at multiples of the size, counted from the forest's first
        tree: a warm start's first wave completes the wave its earlier fit ended in."""
        if not len(indices):
            return []
        if not costs.active:
            return [indices]
        size = self._wave_size()
        edges = [indices.start, *range((indices.start // size + 1) * size, indices.stop, size), indices.stop]
        return [range(start, stop) for start, stop in zip(edges[:-1], edges[1:])]

    def _tree_grower(self) -> "BaseForestRanker":
        """An unfitted copy that grows this fit's trees: the parameters and the state
        drawn by ``fit`` (seed entropy, sampling pool, listwise discount), without the
        trees already grown or their prediction index (what a cluster task receives)."""
        grower = clone(self)
        state = self.__getstate__()
        grower.__dict__.update({name: value for name, value in state.items() if name.startswith("_")})
        return grower

    def _listwise_data(self, data: RankingData, query_of_row: np.ndarray, base_weight: np.ndarray) -> dict:
        """Extra ``TrainingSet`` fields of the listwise criterion (none for pointwise forests)."""
        return {}

    def _monotone_constraints(self, n_features: int) -> np.ndarray | None:
        """The checked monotone constraints (int8 per feature), None without; forests that
        take none have no ``monotonic_cst``."""
        return None

    def _sample_counts(self, index: int, query_of_row: np.ndarray) -> np.ndarray:
        """How many times each row is drawn for tree ``index`` (float64, one per grouped row).

        ``query_of_row`` (int64, one per grouped row) is the query position of each row.
        """
        rng = stream(self._entropy, (index, ROWS))
        return draw_counts(
            rng, query_of_row, self.query_subsample, self.sample_level == "query", self.bootstrap, self._pool
        )

    def _grow(
        self, index: int, training: TrainingSet, base_weight: np.ndarray, query_of_row: np.ndarray, params: TreeParams,
        memory_pool: TreeMemoryPool, feature_penalty: np.ndarray | None = None,
    ):  # fmt: skip
        counts = self._sample_counts(index, query_of_row)
        rng_state = _rng.new_state(seed_sequence(self._entropy, (index, TREE)))
        extras = self._listwise_weights(training, counts, base_weight, params)
        with memory_pool.memory() as memory:
            return grow_tree(
                training, counts * base_weight, params, rng_state, memory=memory, node_store=memory_pool.node_store,
                feature_penalty=feature_penalty, monotonic_cst=self._monotonic, interaction_groups=self._interactions,
                **extras,
            )  # fmt: skip

    def _listwise_weights(
        self, training: TrainingSet, counts: np.ndarray, base_weight: np.ndarray, params: TreeParams
    ) -> dict:
        """Per-tree inputs of the listwise criterion for ``grow_tree`` (none for pointwise forests)."""
        return {}

    def _set_fitted_relevance_weights(self, data: RankingData, base_weight: np.ndarray, query_of_row: np.ndarray) -> None:
        """With ``relevance_weights="fitted"``: fit ``relevance_weights_`` and replace every
        tree by one whose node values use them (otherwise drop a stale ``relevance_weights_``).

        A tree's splits do not depend on the weights (its criterion counts grades), so
        each node's grade distribution ``P(c | node)`` is recounted from the tree's
        in-bag rows (the sample ``_sample_counts`` draws again). The grade probabilities
        of a training row are the mean of its out-of-bag trees' leaf distributions; the
        weights are the least squares fit of the labels on them (Mohan's Eqs.
        3.5-3.8, ``fitted_relevance_weights``), out of bag because a tree's own rows would
        fit its leaves' distributions back. Every node's value becomes ``sum_c P(c |
        node) w_c`` (Eq. 9 with the fitted ``F``). Two passes over the trees, so that
        only one tree's distributions (nodes x grades) exist at a time.
        """
        if getattr(self, "relevance_weights", None) != "fitted":
            self.__dict__.pop("relevance_weights_", None)
            return
        grades = np.searchsorted(self.classes_, data.y)
        n_grades = len(self.classes_)

        def distributions() -> Iterator[tuple[Tree, np.ndarray, np.ndarray, np.ndarray]]:
            """Each tree with its rows' leaves, in-bag mask and nodes' grade distributions."""
            for index, tree in enumerate(self.trees_):
                weights = self._sample_counts(index, query_of_row) * base_weight
                leaves = tree.apply(data.X)
                in_bag = weights > 0
                cells = leaves[in_bag] * n_grades + grades[in_bag]
                counts = np.bincount(cells, weights[in_bag], minlength=tree.node_count * n_grades)
                counts = subtree_sums(tree.nodes, counts.reshape(tree.node_count, n_grades))
                yield tree, leaves, in_bag, _node_distributions(tree, counts)

        totals = np.zeros((len(data.y), n_grades))
        seen_by = np.zeros(len(data.y))
        for _, leaves, in_bag, distribution in distributions():
            out_of_bag = ~in_bag & (base_weight > 0)
            totals[out_of_bag] += distribution[leaves[out_of_bag]]
            seen_by[out_of_bag] += 1
        scored = seen_by > 0
        if not scored.any():
            raise ValueError(
                "relevance_weights='fitted' fits the weights on out-of-bag grade probabilities, but every training row "
                "is in every tree's sample; lower query_subsample or use bootstrap=True (with a single query, which "
                "every query draw takes, sample documents: sample_level='document')."
            )
        probabilities = totals[scored] / seen_by[scored, None]
        self.relevance_weights_ = fitted_relevance_weights(probabilities, data.y[scored], base_weight[scored])
        trees = []
        for tree, _, _, distribution in distributions():
            values = distribution @ self.relevance_weights_
            nodes = tree.nodes.copy()  # new trees: a fit that fails later leaves the earlier ones as they were
            leaves = nodes["feature"] < 0
            nodes["threshold"][leaves] = values[leaves]
            trees.append(dataclasses.replace(tree, nodes=nodes, missing_left=tree.missing_left.copy(), values=values))
        self.trees_ = trees
        self._index_trees()

    def _oob_prediction(self, X: np.ndarray, base_weight: np.ndarray, query_of_row: np.ndarray) -> np.ndarray:
        """Out-of-bag prediction of every grouped training row: the mean of the trees
        whose sample left the row out (NaN where every tree drew it).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_samples, n_features) (``_input.features.check_features``)
            The training rows, grouped by query.
        base_weight : ndarray of shape (n_samples,), float64
            The row weights of the fit (a row of weight 0 is in no tree's sample).
        query_of_row : ndarray of shape (n_samples,), int64

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        totals = np.zeros(X.shape[0])
        seen_by = np.zeros(X.shape[0])
        for index, tree in enumerate(self.trees_):
            out_of_bag = np.flatnonzero(self._sample_counts(index, query_of_row) * base_weight == 0)
            if len(out_of_bag):
                totals[out_of_bag] += tree.predict(X[out_of_bag])
                seen_by[out_of_bag] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            prediction = totals / seen_by
        prediction[seen_by == 0] = np.nan
        return prediction

    # --- prediction --------------------------------------------------------------------

    def predict(self, X: object, qid: object = None, early_exit: EarlyExit | None = None) -> np.ndarray:
        """Mean of the trees' leaf values (Eq. 10).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a Dask array or DataFrame
        qid : array-like of shape (n_samples,), default=None
            Query id of each row; needed with ``early_exit`` only.
        early_exit : EarlyExit, default=None
            Freeze the bottom of each query every ``early_exit.every`` trees (Mohan's
            thesis, §6.1; ``docs/costs.md``); the per-document costs are recorded on it.

        Returns
        -------
        ndarray of shape (n_samples,), float64; for a Dask collection a lazy Dask array
        (or Series, with X's index) mapped over its partitions
        """
        if is_dask_collection(X):
            return map_predict(self, X, qid, early_exit)
        X = self._validate_prediction_data(X, qid)
        if early_exit is None:
            return self._mean_of_trees(X)
        # A frozen document's partial score is the mean of the trees it passed.
        return self._predict_with_exits(
            X, qid, early_exit, lambda rows: np.zeros((rows.shape[0], 1)), lambda raw, trees: raw[:, 0] / trees
        )

    def _mean_of_trees(self, X: np.ndarray) -> np.ndarray:
        """``predict`` on validated rows (``_input.features.check_features``), shape (n_samples, n_features)."""
        return self._sum_trees(X) / len(self.trees_)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity: per-tree gains normalised to 1, averaged, normalised.
        With feature costs, each split's gain less the penalty it paid (``docs/costs.md``)."""
        check_is_fitted(self)
        per_tree = [tree.feature_gains / tree.feature_gains.sum() for tree in self.trees_ if tree.feature_gains.sum() > 0]
        if not per_tree:
            return np.zeros(self.n_features_in_)
        mean = np.mean(per_tree, axis=0)
        return mean / mean.sum()


def _node_distributions(tree: Tree, counts: np.ndarray) -> np.ndarray:
    """Each node's grade distribution ``P(c | node)`` from its weighted grade counts (float64,
    (n_nodes, n_grades)); a node that no counted row reaches (a warm start's earlier tree
    on other rows) takes its parent's, the nearest distribution that rows give."""
    totals = counts.sum(axis=1)
    distributions = counts / np.where(totals > 0, totals, 1.0)[:, None]
    empty = np.flatnonzero(totals == 0)
    if len(empty):
        inner = np.flatnonzero(tree.nodes["feature"] >= 0)
        parent = np.zeros(tree.node_count, dtype=np.int64)
        parent[tree.nodes["left"][inner]] = inner
        parent[tree.nodes["left"][inner] + 1] = inner
        for node in empty:  # in node order: a parent comes before its children
            distributions[node] = distributions[parent[node]]
    return distributions


class RFPointRanker(BaseForestRanker):
    """Pointwise random-forest ranker (RF-point), with RF-rand and regression-forest modes.

    Each tree sees a sub-sample of the queries (without replacement by default),
    splits to minimise the entropy of the relevance grades and scores a leaf by the
    expected relevance of its training documents, ``sum_c P(c | leaf) F(c)``
    (Ibrahim & Carman, Eq. 9); the forest averages its trees (Eq. 10).

    Parameters
    ----------
    n_estimators : int, default=500
        Number of trees.
    criterion : {"entropy", "gini", "hellinger", "variance", "random"}, default="entropy"
        ``"entropy"``/``"gini"``: impurity of the grades (RF-point). ``"hellinger"``:
        the Hellinger distance between the children's distributions of each grade
        threshold's relevant and irrelevant documents (Cieslak & Chawla's criterion for
        skewed classes, summed over the ordinal grade thresholds), insensitive to how
        rare the relevant documents are. ``"variance"``:
        least-squares regression tree on the labels (Mohan's regression forest:
        ``criterion="variance", max_features=0.1, bootstrap=True,
        sample_level="document"``). ``"random"``: RF-rand, a random feature and a
        uniform random cut between the node's min and max (Ibrahim & Carman §6.1.1).
    max_features : int, float, {"sqrt", "log2", "log2+1"} or None, default="log2+1"
        Features examined per node; ``"log2+1"`` is the papers' ``floor(log2 M)+1``.
        Ignored by ``criterion="random"``.
    max_depth : int or None, default=None
        Fully grown trees by default.
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
        Fractions are of the fit's rows of positive weight (on Dask collections, of
        each partition's), not of a tree's sample (scikit-learn's convention), rounded up.
    min_gain_to_split : float, default=0.0
        Minimum impurity decrease per unit of the tree's total weight
        (scikit-learn's ``min_impurity_decrease``, with ``criterion="entropy"`` in nats:
        scikit-learn's entropy counts bits, so its value times ln 2 prunes alike); the
        minimum Hellinger distance with ``criterion="hellinger"``. A drawn split
        (``criterion="random"``) must beat it too, by the impurity decrease its
        importances count; at 0 it is kept whatever its gain, as RF-rand's are.
    max_leaf_nodes : int or None, default=None
        Leaf budget; the ``expansion`` order decides which nodes get split.
    expansion : {"depth", "breadth", "best", "random", "biggest", "relevant"}, default="depth"
        Node expansion order (Ibrahim & Carman §4.3.3).
    query_subsample : float in (0, 1], default=0.63
        Fraction of the queries (of the documents with ``sample_level="document"``)
        drawn for each tree.
    bootstrap : bool, default=False
        Draw with replacement (counts become weights). On MQ2008 (5 folds, 500
        trees, 10 seeds) ``bootstrap=True`` scored NDCG@10 0.2241 and MAP 0.4700
        (letor4) against 0.2229 and 0.4679 without replacement: a 63% draw with
        replacement holds ~47% distinct queries, so trees differ more
        (``benchmarks/RESULTS.md``).
    sample_level : {"query", "document"}, default="query"
        Sample whole queries or individual documents.
    skip_queries_without_relevance : bool, default=False
        Train on the queries that have a document with a positive label (and a positive
        ``sample_weight``) only, as if the others were not in the data (their documents
        are drawn by no tree and do not shape the bins). No ranking changes such a
        query's score under any metric convention of ``forestrank.metrics`` (0 by
        default, a set value, or left out), and LambdaRank gives it no gradient; without
        this option its documents (all grade 0) still lower the expected relevance of
        the leaves they fall in. On MQ2008 (5 folds, 500 trees, 10 seeds) ``True``
        scored NDCG@10 0.2270 and MAP 0.4733 (letor4) against 0.2229 and 0.4679
        (``benchmarks/RESULTS.md``).
    leaf_score : {"expected", "mean"}, default="expected"
        ``"expected"``: ``sum_c P(c | leaf) F(c)`` with ``F`` from
        ``relevance_weights``. ``"mean"``: the leaf's mean label.
    relevance_weights : {"linear", "square", "exp", "fitted"}, default="linear"
        ``F(c) = c, c**2, 2**c`` (Mohan, ch. 3, Eq. 3.1) for ``leaf_score="expected"``
        (with ``"mean"`` only ``"linear"``);
        ``"fitted"``: weights fitted by least squares of the labels on the out-of-bag
        grade probabilities (Eqs. 3.5-3.8; a class ``criterion`` and rows left out of
        the trees needed; not on Dask collections), in ``relevance_weights_``.
    max_bins : int in [2, 255] or None, default=255
        Bins per feature; ``None`` splits on exact values.
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
        nothing: it sends a node's missing rows right unless ``"left"``, and under
        ``"learn"`` a node without missing training rows sends them to its heavier child,
        as every ``"learn"`` split does; it refuses ``"separate"``.
    categorical_features : array-like of int, bool or str, "from_dtype" or None, default=None
        The categorical features, as scikit-learn's ``HistGradientBoostingRegressor``
        takes them: feature indices, a boolean mask, feature names, or
        ``"from_dtype"`` (the pandas ``category`` columns of a DataFrame, the polars
        ``Categorical`` and ``Enum`` ones). A categorical feature holds integer codes
        from 0 to 65,535 (a frame's column: its categories, ``frame_categories_``);
        NaN and negative codes are missing. A split sends a set of
        categories left: a node's categories ordered by their mean grade (mean label
        for ``"variance"``) and cut where the criterion's gain is best, which is the
        best of all subsets for ``"variance"`` and for two grades (Breiman et al.,
        1984); a category the fit did not see goes where missing values go, the
        missing ones a category of their own (``docs/categorical.md``). Not with
        ``criterion="random"``, a monotone constraint on a categorical feature, or
        Dask collections.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotone constraints (scikit-learn's ``monotonic_cst``): per feature +1 (the
        score may only rise with the feature), -1 (only fall) or 0 (free); a dict maps
        feature names or indices to their constraint. With ``criterion="variance"``
        and leaves that score the mean label (``leaf_score="mean"`` or
        ``relevance_weights="linear"``), the regression forest whose split values
        are its leaf values; each tree is monotone, so their mean is
        (``docs/forests.md``, "Monotone constraints"). Not on Dask collections.
    interaction_cst : {"pairwise", "no_interactions"}, list of lists of int or None, default=None
        Interaction constraints (scikit-learn's ``interaction_cst``): a branch of a
        tree splits only on features of one group, the features in no group forming
        one more group; ``"no_interactions"`` grows additive trees. Not on Dask
        collections.
    feature_costs : array-like of shape (n_features,), default=None
        What each feature costs to compute when the model serves (finite, >= 0);
        None: every feature is free. See ``cost_penalty``.
    cost_penalty : float >= 0, default=0.0
        lambda of Mohan's cost-aware splits (thesis, Eq. 6.1): a split on feature ``f``
        is scored by its gain less ``lambda * c(f) / sum(c)`` times the tree root's
        impurity, the gain of one leaf per row (``docs/costs.md``); a
        feature used by an earlier wave of trees, or higher in the same tree, is free.
        0 (the default) gives the cost-oblivious forest, bitwise.
    cost_wave_size : int or None, default=None
        With costs, trees grow in waves of this many trees, each wave seeing the
        features the waves before it used; None: the threads of ``n_jobs`` (with
        ``n_jobs=None`` the machine's cores), so set it for the same forest with any
        ``n_jobs`` on any machine.
    oob_score : bool, default=False
        Compute out-of-bag predictions and their NDCG@10.
    n_jobs : int or None, default=None
        Threads over trees (over columns and rows when binning, over rows at
        prediction). ``None`` means every core, as for the boosted rankers, unless
        ``joblib.parallel_config(n_jobs=...)`` or ``OMP_NUM_THREADS`` (which joblib
        sets in its process workers) sets fewer; -1 every core.
    random_state : int, RandomState or None, default=None
        The model is identical for any ``n_jobs`` given the same value (with feature
        costs, once ``cost_wave_size`` is set).
    verbose : int, default=0
        Print progress (trees built, elapsed time).
    warm_start : bool, default=False
        Keep the fitted trees and add ``n_estimators - len(trees_)`` new ones. They
        continue the first fit's random stream, so the forest equals one fit of
        ``n_estimators`` trees on the same rows; ``random_state`` is read at the first
        fit only. Refused when the new trees would score their leaves on another scale
        (``leaf_score``, ``relevance_weights``) or grow under other constraints; with
        ``oob_score=True`` or ``relevance_weights="fitted"``, which redraw every tree's
        sample, also when the fitted trees drew theirs otherwise (``bootstrap``,
        ``query_subsample``, ``sample_level``, ``skip_queries_without_relevance``, or on
        a cluster).

    Attributes
    ----------
    trees_ : list of Tree
    n_trees_ : int
    classes_ : ndarray of float64
        Distinct grades (class criteria).
    relevance_weights_ : ndarray of shape (n_grades,), float64
        With ``relevance_weights="fitted"`` only: the weight of each grade of
        ``classes_``.
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float
        NDCG@10 (default convention) of the out-of-bag predictions of the rows the
        forest learns from: rows of zero ``sample_weight`` and the queries
        ``skip_queries_without_relevance`` skips are left out, as from the fit.
    oob_prediction_ : ndarray of shape (n_samples,)
        Out-of-bag prediction of each training row (NaN if it was in every tree; the
        whole forest's for a row no tree could draw: zero weight or a skipped query).
    tree_costs_ : ndarray of shape (n_trees,), float64
        ``c(h_t)`` (thesis Eq. 6.2): the cost of the features each tree uses that no
        earlier tree uses (0 without ``feature_costs``); their sum is the cost of
        scoring a document (``average_cost``).
    tree_partitions_ : ndarray of shape (n_trees,), int
        After a fit on Dask collections only: the partition each tree drew its
        sample from (``docs/cluster.md``); -1 for trees of an earlier in-memory fit
        continued with ``warm_start``.
    is_categorical_ : ndarray of shape (n_features,), bool, or None
        The categorical features (``categorical_features`` resolved); None: none.
    frame_categories_ : dict of int to list
        For each categorical feature that was a category column of a pandas or polars
        DataFrame: its categories, in the order whose positions are the codes the
        trees (and the exported models, ``docs/serving.md``) test; empty when ``X``
        was no DataFrame.
    n_features_in_, feature_names_in_ :
        As in scikit-learn.

    Examples
    --------
    >>> from forestrank import RFPointRanker, make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = RFPointRanker(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        **BaseForestRanker._parameter_constraints,
        "criterion": [StrOptions({"entropy", "gini", "hellinger", "variance", "random"})],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        "leaf_score": [StrOptions({"expected", "mean"})],
        "relevance_weights": [StrOptions({*RELEVANCE_WEIGHTS, "fitted"})],
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [StrOptions({"pairwise", "no_interactions"}), list, tuple, None],
    }

    def __init__(
        self,
        n_estimators: int = 500,
        *,
        criterion: str = "entropy",
        max_features: int | float | str | None = "log2+1",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_gain_to_split: float = 0.0,
        max_leaf_nodes: int | None = None,
        expansion: str = "depth",
        query_subsample: float = 0.63,
        bootstrap: bool = False,
        sample_level: str = "query",
        skip_queries_without_relevance: bool = False,
        leaf_score: str = "expected",
        relevance_weights: str = "linear",
        max_bins: int | None = 255,
        missing_direction: str = "learn",
        categorical_features: object = None,
        monotonic_cst: object = None,
        interaction_cst: object = None,
        feature_costs: object = None,
        cost_penalty: float = 0.0,
        cost_wave_size: int | None = None,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.feature_costs = feature_costs
        self.cost_penalty = cost_penalty
        self.cost_wave_size = cost_wave_size
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_gain_to_split = min_gain_to_split
        self.max_leaf_nodes = max_leaf_nodes
        self.expansion = expansion
        self.query_subsample = query_subsample
        self.bootstrap = bootstrap
        self.sample_level = sample_level
        self.skip_queries_without_relevance = skip_queries_without_relevance
        self.leaf_score = leaf_score
        self.relevance_weights = relevance_weights
        self.max_bins = max_bins
        self.missing_direction = missing_direction
        self.categorical_features = categorical_features
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    @property
    def _requires_grades(self) -> bool:
        return _criteria.NAMES[self.criterion] in _criteria.CLASS_CRITERIA

    def _validate_params(self) -> None:
        """The forest's parameter checks, and the combinations ``criterion="random"`` refuses
        (before a fit on Dask collections too)."""
        super()._validate_params()
        self._check_random_criterion(None)

    def _check_random_criterion(self, categorical: np.ndarray | None) -> None:
        """Refuse what ``criterion="random"``'s drawn cuts cannot do: categorical features
        (``categorical``, a mask or None) and a child of its own for the missing rows."""
        if self.criterion != "random":
            return
        if categorical is not None:
            raise ValueError(
                "categorical_features cannot be combined with criterion='random': its drawn cut between a node's "
                "smallest and largest value needs ordered values."
            )
        if self.missing_direction == "separate":
            raise ValueError(
                "missing_direction='separate' cannot be combined with criterion='random': its cut is drawn, not "
                "chosen by a gain, and sends the missing rows right (or left with missing_direction='left')."
            )

    def _monotone_constraints(self, n_features: int) -> np.ndarray | None:
        categorical = self.is_categorical_
        self._check_random_criterion(categorical)
        constraints = check_monotonic_cst(self.monotonic_cst, n_features, getattr(self, "feature_names_in_", None))
        if constraints is None:
            return None
        if categorical is not None and constraints[categorical].any():
            raise ValueError("monotonic_cst cannot constrain a categorical feature: its categories have no order.")
        if self.criterion != "variance":
            reason = "whose splits see grade counts, not values"
            if self.criterion == "random":
                reason = "whose cuts are drawn, not chosen by a gain"
            raise ValueError(
                f"monotonic_cst needs criterion='variance' (a leaf's value is then the mean label its splits "
                f"bound); got criterion={self.criterion!r}, {reason}."
            )
        if self.leaf_score != "mean" and self.relevance_weights != "linear":
            raise ValueError(
                "monotonic_cst needs leaves that score the mean label (leaf_score='mean' or relevance_weights="
                f"'linear'); got relevance_weights={self.relevance_weights!r}."
            )
        if self.missing_direction == "separate":
            raise ValueError(
                "monotonic_cst cannot be combined with missing_direction='separate' (a child of missing rows has no "
                "place in the order)."
            )
        return constraints

    def _targets(self, y: np.ndarray) -> np.ndarray:
        if not self._requires_grades:
            return y[:, None].copy()
        return self._class_targets(y)

    def _leaf_targets(self, y: np.ndarray) -> np.ndarray:
        if self.leaf_score == "mean":
            return y
        if self.relevance_weights == "fitted":  # the values are rewritten once the weights are fitted
            return y
        return RELEVANCE_WEIGHTS[self.relevance_weights](y)

    def _check_relevance_weights(self) -> None:
        """``relevance_weights`` other than ``"linear"`` weigh the grades of expected-relevance
        leaves (a mean leaf averages the labels); ``"fitted"`` needs grade distributions in
        the leaves and rows left out of the trees too."""
        if self.leaf_score != "expected":
            raise ValueError(
                f"relevance_weights={self.relevance_weights!r} weighs the grades of leaf_score='expected' leaves; "
                f"leaf_score={self.leaf_score!r} averages the labels themselves: leave relevance_weights='linear'."
            )
        if self.relevance_weights != "fitted":
            return
        needs = {
            f"a class criterion ('entropy', 'gini', 'hellinger'), whose trees count grades; got criterion={self.criterion!r}": (
                not self._requires_grades
            ),
            "rows left out of the trees (query_subsample < 1 or bootstrap=True)": not self._leaves_rows_out,
        }
        for need, missing in needs.items():
            if missing:
                raise ValueError(f"relevance_weights='fitted' needs {need}.")

    def _tree_params(self, n_rows: int, n_features: int) -> TreeParams:
        criterion = _criteria.NAMES[self.criterion]
        return TreeParams(
            criterion=criterion,
            n_classes=len(self.classes_) if criterion in _criteria.CLASS_CRITERIA else 0,
            max_features=resolve_max_features(self.max_features, n_features),
            expansion=_frontier.EXPANSIONS[self.expansion],
            missing_direction=_scans.MISSING_DIRECTIONS[self.missing_direction],
            max_depth=-1 if self.max_depth is None else self.max_depth,
            min_samples_split=resolve_count(self.min_samples_split, n_rows),
            min_samples_leaf=resolve_count(self.min_samples_leaf, n_rows),
            min_gain_to_split=self.min_gain_to_split,
            max_leaf_nodes=-1 if self.max_leaf_nodes is None else self.max_leaf_nodes,
        )
