"""Boosting fitted on Dask collections partitioned by query: the rows never leave their workers.

``LambdaMART.fit`` and ``PLRank.fit`` of Dask arrays, DataFrames or Series partitioned
by query (``docs/cluster.md``, "Boosting on a cluster"):

1. every partition is validated and grouped by query on its worker, and a query found
   in two partitions is an error that names it, as for the forests
   (``_partitioned.validated_partitions``); a Dask ``eval_set`` is validated alike, and
   without one ``validation_fraction`` of the queries, drawn as a fit in memory draws
   them, stays on its worker as the early-stopping set;
2. the bin thresholds are fitted on the client from a sample of the partitions' rows
   (``_partitioned._shared_bins``);
3. each partition is binned on its worker, which releases its features unless the fit
   reads them again (``_reads_features_again``); the binned partitions are moved between
   workers where that evens out the rows each worker holds (``parallel/_cluster.rebalance``:
   every round waits for the slowest worker); one ``BoostingWorker`` actor per worker
   stacks that worker's bins into one block of rows for the trees
   (``_tree/_partition_rows.PartitionRows``) and keeps, per
   partition, its prepared objective, scores and gradients; evaluation partitions keep
   their scores beside them;
4. every iteration the driver asks the actors for their gradients' largest magnitudes
   (the quantization scales) and, with ``position_bias``, for the sums the bias's update
   reads, carried from partition to partition, takes the update's step and sends the
   result with the next iteration's request; then it grows each output's tree with the engine's builder
   through the exchange (``_tree/_remote.PartitionsExchange``, rounds of
   ``_cluster_exchange.ActorRounds``): histograms, counts and statistics travel, rows
   do not; the leaves' sums of ``w g``, ``w h`` and ``w`` come back, the driver sets the
   Newton values, and the actors add the tree to their scores and return each query's
   NDCG of the evaluation sets, which the driver averages for early stopping.

What makes the model the one a fit in memory grows on the partitions' rows
concatenated in partition order (each grouped by query): every per-query computation
(the objectives' gradients, NDCG) is the same on a partition; the quantization scales
are maxima, exact in any order; each partition draws its own rows' share of the
rounding stream (``_quantization.rounding_draws``) and of the draws of an objective
that draws at random (PLRank's rankings, sampled LambdaRank pairs, XE-NDCG's noise:
``objectives/_draws.py``); with quantized gradients the histograms are integer sums,
exact in any order, and the leaves' float sums (and PLRank's leaf curvature) are added
partition after partition in partition order (``_boosting_state.leaf_sums`` carrying
the earlier partitions' sums), so the model is the in-memory one bitwise. With float
histograms the sums are added per worker and then across workers, so splits whose
gains tie to the last bits may differ.
"""

import copy
import time
from collections.abc import Iterator

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import _check_feature_names, check_is_fitted

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._input.features import check_features, check_interaction_cst
from .._input.labels import check_grades_for_gain, check_relevance, check_sample_weight, holds_two_gains, weight_unit
from .._input.queries import boundaries_of_grouped, group_queries, mean_per_query
from .._tree import _criteria
from .._tree._grow import TrainingSet, TreeMemory, binned_with, grow_tree, histogram_pool, max_nodes
from .._tree._remote import PartitionsExchange, sum_in_order
from ..parallel._local import numba_threads
from .._tree._tree import Tree
from ..metrics._ranking import mean_over_queries
from ..objectives._base import distinct_grades, mean_of_sums, weighted_target_sums
from ..objectives._draws import DrawShare
from ..parallel._cluster import (
    check_two_dimensional,
    holders,
    is_dask_collection,
    rebalance,
    scatter_to_all,
    scheduler_errors,
)
from ._base import BaseRanker
from ._boosting_state import BoostingState, EvalSet, add_tree_scores, check_eval_item, exact_targets, fitted_init, leaf_sums
from ._cluster_exchange import ActorRounds, WorkerPartitions
from ._forest import relevance_factor, relevance_weights_from_factors
from ._position_bias import check_positions, check_top_position_shown
from ._partitioned import _client, _shared_bins, partitions_of, validated_partitions
from ._quantization import (
    QUANTIZED_DTYPE,
    check_quantized_sums,
    quantization_scales,
    quantized_params,
    round_stochastically,
    rounding_draws,
)
from ._sampling import seed_entropy


class _Part:
    """One partition's validated rows on its worker, grouped by query.

    ``X`` (n_rows, n_features; None once binned when the fit does not read the features
    again, ``_binned``), ``y`` and ``base_weight`` (float64, (n_rows,): the
    ``sample_weight`` as given, which the fit divides by the unit of weight of every
    training partition's weights, as ``_input.labels.normalize_sample_weight`` does in memory),
    ``query_of_row`` (int64, (n_rows,): each row's query, 0-based within the partition),
    ``query_ids`` (n_queries,), ``positions`` (int64, (n_rows,): the display positions
    ``position_bias`` learns from, or None), ``binned`` (the fit's bins of ``X``,
    uint8/16/32 (n_rows, n_features), once binned) and ``baseline`` (float64 (n_rows, 1):
    ``init``'s raw predictions of the rows, once binned, or None without ``init``).
    """

    def __init__(self, X, y, base_weight, query_of_row, query_ids, positions=None, binned=None, baseline=None):
        self.X, self.y, self.base_weight = X, y, base_weight
        self.query_of_row, self.query_ids, self.positions = query_of_row, query_ids, positions
        self.binned, self.baseline = binned, baseline

    @property
    def query_boundaries(self) -> np.ndarray:
        return boundaries_of_grouped(self.query_of_row)

    @property
    def qid(self) -> np.ndarray:
        """Each row's query id, (n_rows,)."""
        return self.query_ids[self.query_of_row]

    def rows_of(self, queries: np.ndarray) -> "_Part":
        """The partition's rows of the queries marked in ``queries`` (bool, (n_queries,))."""
        rows = queries[self.query_of_row]
        kept = np.cumsum(queries) - 1
        positions = None if self.positions is None else self.positions[rows]
        return _Part(
            self.X[rows], self.y[rows], self.base_weight[rows], kept[self.query_of_row[rows]], self.query_ids[queries], positions
        )  # fmt: skip


def fit_boosting_partitioned(
    model: object, X: object, y: object, qid: object, sample_weight: object, eval_set: list | None, position: object
) -> object:  # fmt: skip
    """Fit ``model`` (a ``BaseBoostingRanker``, parameters validated) on Dask collections
    partitioned by query: the module docstring's steps.

    Parameters
    ----------
    X : dask Array of shape (n_samples, n_features), or dask DataFrame
    y, qid : dask Array or Series of shape (n_samples,), partitioned as X
    sample_weight : dask Array or Series of shape (n_samples,), or None
    eval_set : list of (X, y, qid) or (X, y, qid, sample_weight) tuples of Dask collections, or None
    position : dask Array or Series of shape (n_samples,), or None
        The display positions ``position_bias`` learns from, partitioned as X.

    Returns
    -------
    model, fitted: its trees are an ordinary in-memory model.
    """
    from distributed import wait

    client = _client()
    model._entropy = seed_entropy(model.random_state)
    objective = model._make_objective()
    model._check_positions(objective, position)  # given with position_bias and only then, before any work
    inputs = partitions_of(X, y=y, qid=qid, sample_weight=sample_weight, position=position)
    with scheduler_errors(client):
        parts, summaries, n_features = validated_partitions(client, _prepare, _summary, model, inputs)
        model._record_collection_inputs(X, n_features)  # the names an eval_set's columns are checked against
        evals = _eval_partitions(client, model, eval_set, n_features)
        where = ""
        if model.n_iter_no_change is not None and not evals:
            parts, summaries, held = _hold_out(client, model, parts, summaries)
            evals.append(("validation", held))
            where = " on the queries the validation_fraction hold-out leaves to train on"
        lightest = min(summary["lightest"] for summary in summaries)  # over the training rows, as in memory
        if not np.isfinite(lightest):
            raise ValueError(f"sample_weight is zero everywhere{where}; at least one row needs a positive weight.")
        unit = weight_unit(lightest, max(summary["heaviest"] for summary in summaries))
        if model.n_iter_no_change is not None and model.eval_metric is None:  # as _check_stopping_set in memory
            name, deciding = evals[-1]
            counts = client.gather([client.submit(_graded_queries, part, model._gain(), pure=False) for part in deciding])
            if not any(graded for graded, _, _ in counts):
                model._refuse_stopping_set(
                    name, sum(n_queries for _, n_queries, _ in counts), any(weightless for _, _, weightless in counts)
                )
        n_rows = [summary["n_rows"] for summary in summaries]
        if model.quantized_gradients is not None:
            check_quantized_sums(model.quantized_gradients, sum(n_rows))
        binner = _shared_bins(client, model, parts, n_rows, positive_only=False)  # boosting bins every row
        grades = np.concatenate([summary["grades"] for summary in summaries])
        if hasattr(objective, "grades"):  # every partition models every grade
            objective.grades = distinct_grades(grades, model.objective)
        if hasattr(objective, "max_grade"):  # ERR's largest grade is the fit's
            objective.max_grade = float(grades.max())
        lowest = [summary["lowest_position"] for summary in summaries if summary["lowest_position"] is not None]
        if lowest:  # positions reach a fit only with position_bias (_check_positions)
            check_top_position_shown(model.position_bias, min(lowest))
        model._check_init_objective(hasattr(objective, "grades"))  # before an unfitted init is fitted
        model.init_ = _fitted_init(model, client, parts, summaries, sample_weight is not None)
        n_positions = max(summary["positions"] for summary in summaries)  # of the training rows, as in memory
        keep = _reads_features_again(model, summaries)
        # Rebinding the list releases each partition's features as soon as its bins exist,
        # unless the caller holds them (a persisted collection).
        shared = scatter_to_all(client, model)  # sent once, with a fitted init
        parts = [
            client.submit(
                _binned, part, binner, shared, keep, pure=False, workers=None if worker is None else [worker],
                allow_other_workers=True,  # should that worker be gone
            )  # fmt: skip
            for part, worker in zip(parts, holders(client, parts))
        ]
        wait(parts)  # placing the work reads where the bins are
        del shared  # the actors get their own copy
        parts = rebalance(client, parts, n_rows)  # moves the bins, not the features, where those are released
        rounds = _start_workers(client, model, objective, binner, parts, summaries, unit, evals, n_positions)
        del parts  # the actors hold the bins they need
        try:
            driver = TrainingSet(
                **binned_with(binner, np.empty((0, n_features))), targets=np.empty((0, 2)), leaf_targets=np.zeros(0)
            )
            bias = model._position_bias(None, None, n_positions)
            # The driver's share of a round (the split search on summed histograms) is short and
            # alternates with the workers' share: more threads would wait actively (OpenMP
            # spins after a parallel region) on cores the workers may be computing on.
            with numba_threads(1):
                _boost(model, rounds, driver, sum(n_rows), [name for name, _ in evals], bias)
        finally:
            rounds.close()
    model.cluster_rounds_, model.cluster_bytes_ = rounds.rounds, rounds.bytes_received
    return model


def staged_predict_partitioned(model: object, client: object, X: object) -> Iterator[np.ndarray]:
    """``model.staged_predict`` of a Dask array or DataFrame on ``client``'s workers, without
    gathering ``X``.

    Each partition is computed on a worker, which keeps its validated rows and raw scores
    and adds one iteration's trees to the scores per stage; only each stage's scores come
    back. Every row's arithmetic is the in-memory one, so the stages are bitwise.

    Parameters
    ----------
    model : BaseBoostingRanker
        Fitted.
    client : distributed.Client
    X : dask Array of shape (n_samples, n_features), or dask DataFrame

    Yields
    ------
    ndarray of shape (n_samples,), float64
        The scores after each iteration, the partitions' in partition order.
    """
    check_two_dimensional(X)
    blocks = X.rechunk({1: -1}).to_delayed().ravel().tolist() if hasattr(X, "chunks") else X.to_delayed()
    parts = client.compute(blocks)
    fitted = scatter_to_all(client, model)
    states = [client.submit(_first_stage, fitted, part, pure=False) for part in parts]
    del parts  # the states hold the validated rows; the raw blocks can go
    for iteration in range(model.n_iter_):
        states = [client.submit(_next_stage, fitted, state, iteration, pure=False) for state in states]
        yield np.concatenate(client.gather([client.submit(_stage_scores, fitted, state, pure=False) for state in states]))


def _first_stage(model: object, X: object) -> tuple | None:
    """A partition's validated rows, their starting raw scores and their trees' sum so far,
    summed apart from the start as ``staged_predict`` sums it (None: no rows)."""
    if X.shape[0] == 0:
        return None
    X = model._validate_prediction_data(X)
    baseline = model._baseline(X)
    return X, baseline, np.zeros_like(baseline)


def _next_stage(model: object, state: tuple | None, iteration: int) -> tuple | None:
    """The trees' sum after ``iteration``'s trees (a new array: a task's result stays as it was)."""
    if state is None:
        return None
    X, baseline, trees = state
    trees = trees.copy()
    model._add_iteration(trees, X, iteration)
    return X, baseline, trees


def _stage_scores(model: object, state: tuple | None) -> np.ndarray:
    """A partition's ranking scores at its stage, float64 (n_rows,)."""
    return np.zeros(0) if state is None else model._ranking_scores(state[1] + state[2])


def _boost(model: object, rounds: ActorRounds, driver: TrainingSet, n_rows: int, eval_names: list, bias: object) -> None:
    """The boosting loop of ``BaseBoostingRanker.fit``, its rows on the workers; ``bias``: the
    position bias's steps (``PositionBias`` without rows), or None."""
    initial = [answer for per_actor in rounds("initial_scores", ()) for answer in per_actor]
    counts, scores, n_outputs, grades, from_mean_target, shift_invariant = zip(*initial)
    model.n_outputs_, model.classes_, model._shift_invariant = n_outputs[0], grades[0], shift_invariant[0]
    if model.init_ is None and from_mean_target[0]:
        model.baseline_ = mean_of_sums(_in_partition_order(rounds, "target_sums", ()))  # ``mean_target`` of every row
    elif model.init_ is None:
        model.baseline_ = _pooled_initial_score(scores, counts)
    else:  # the scores start from init's predictions, made on the workers when binning (_binned)
        model.baseline_ = np.zeros(1)
    fitted_weights = model.classes_ is not None and getattr(model, "relevance_weights", None) == "fitted"
    if not fitted_weights:
        model._update_relevance_weights(None, None, None)  # from the grades alone
    model._monotonic = model._monotone_constraints(driver.bin_thresholds.shape[0])
    model._interactions = check_interaction_cst(model.interaction_cst, driver.bin_thresholds.shape[0])
    fitted = {name: getattr(model, name, None) for name in ("n_outputs_", "classes_", "relevance_weights_")}
    rounds("start_scores", (fitted, model.baseline_))  # fitted weights: set before each evaluation (_add_tree)
    model.trees_ = []
    key = model._eval_key()
    stopping = model._start_evals(eval_names)
    params = model._tree_params(n_rows, driver.bin_thresholds.shape[0])
    dtype = FLOAT_DTYPE if model.quantized_gradients is None else QUANTIZED_DTYPE
    pool = histogram_pool(driver, params, n_rows, dtype, sampled_features=True)
    memory = TreeMemory(driver, params)
    costs = model._feature_costs(driver.bin_thresholds.shape[0])
    start = time.perf_counter()
    for iteration in range(model.n_estimators):
        penalty = costs.penalty()
        learned = None if bias is None else bias.values
        largest = np.maximum.reduce(rounds("compute_gradients", (model.quantized_gradients is not None, learned, iteration)))
        if bias is not None:
            bias.step(_in_partition_order(rounds, "bias_statistics", ()))
        features = model._tree_features(iteration, driver.bin_thresholds.shape[0])
        for output in range(model.n_outputs_):
            tree = _grow_output(model, rounds, driver, params, pool, memory, iteration, output, penalty, features, largest[:, output], n_rows)
            model.trees_.append(tree)
            finite, evaluated = _add_tree(model, rounds, tree, output, output == model.n_outputs_ - 1, fitted_weights, n_rows)
        model._check_scores(finite, iteration)
        costs.pay_for(model.trees_[-model.n_outputs_ :])
        for name, (values, weights) in evaluated.items():
            model.evals_result_[name][key].append(mean_over_queries(values, weights))
        if model.verbose:
            model._report(iteration, eval_names, time.perf_counter() - start)
        if stopping is not None and stopping.should_stop(
            model.evals_result_[eval_names[-1]][key][-1], iteration, None if bias is None else bias.learned
        ):  # fmt: skip
            model._report_stop(stopping, iteration, eval_names, time.perf_counter() - start)
            break
    grown = len(model.trees_)
    model._end_boosting(stopping, costs, bias)
    if fitted_weights:  # at the kept model's training scores, as in memory
        _fit_relevance_weights(model, rounds, model.trees_ if len(model.trees_) < grown else None, n_rows)


def _fit_relevance_weights(model: object, rounds: ActorRounds, kept: list | None, n_rows: int) -> None:
    """``relevance_weights_`` fitted on every partition's rows (``relevance_weights="fitted"``):
    the least squares of the labels on the grade probabilities at the training scores, or
    at the ``kept`` trees' scores, from each partition's QR factor (``_forest.relevance_factor``);
    ``n_rows``: the training rows over every partition."""
    model.relevance_weights_ = relevance_weights_from_factors([
        factor for per_actor in rounds("relevance_factors", (kept,)) for factor in per_actor
    ], n_rows)  # fmt: skip


def _fitted_init(model: object, client: object, parts: list, summaries: list, weighted: bool) -> object:
    """``init`` as given when fitted, or a clone fitted on the training partitions ``parts``
    (``_collections_of``: validated, without the early-stopping queries when they were held
    out), as a fit in memory fits one on its validated training rows (a forestrank ranker:
    the forests, LambdaMART and PLRank fit them on the cluster, the others refuse them by
    name), with the rows' weights as given when the fit was given weights (``weighted``);
    None without ``init``."""
    if model.init is None:
        return None
    try:
        check_is_fitted(model.init)
    except NotFittedError:
        pass
    else:
        model._check_init_categories(model.init)  # a cluster fit has no categorical columns
        return model.init
    if not isinstance(model.init, BaseRanker):
        raise ValueError(
            "init must be fitted already, or a forestrank ranker that fits Dask collections (a forest, LambdaMART or "
            f"PLRank), when X is a Dask collection; got an unfitted {type(model.init).__name__}."
        )
    X, y, qid, weights = _collections_of(client, parts, summaries)
    try:
        return fitted_init(model.init, X, y, qid, weights if weighted else None)
    except ValueError as error:  # the init's own parameters, which the boosting model does not have
        if str(error).startswith("init"):  # fitted_init's refusals name it already
            raise
        raise ValueError(f"init ({type(model.init).__name__}), fitted over the partitions: {error}") from error


def _collections_of(client: object, parts: list, summaries: list) -> tuple:
    """Dask arrays of the partitions ``parts``, whose rows stay on their workers.

    Parameters
    ----------
    client : distributed.Client
    parts : list of Future of _Part or None
        In partition order.
    summaries : list of dict
        Their ``_summary``; the partitions without rows are left out.

    Returns
    -------
    X : dask Array of shape (n_rows, n_features), the partitions' type and dtype
    y : dask Array of shape (n_rows,), float64
    qid : dask Array of shape (n_rows,)
    base_weight : dask Array of shape (n_rows,), float64
        One chunk per partition with rows, in partition order.
    """
    import dask.array as da
    from dask import delayed

    kept = [(part, summary) for part, summary in zip(parts, summaries) if summary["n_rows"]]
    meta = client.submit(_no_rows, kept[0][0], pure=False).result()  # X's type, dtype and width
    columns = []
    for name, row_shape, like in [
        ("X", meta.shape[1:], meta), ("y", (), np.zeros(0)), ("qid", (), kept[0][1]["query_ids"][:0]),
        ("base_weight", (), np.zeros(0)),
    ]:  # fmt: skip
        columns.append(da.concatenate([
            da.from_delayed(
                delayed(getattr)(part, name), (summary["n_rows"], *row_shape), dtype=like.dtype, meta=like,
            )
            for part, summary in kept
        ]))  # fmt: skip
    return tuple(columns)


def _no_rows(part: _Part) -> object:
    return part.X[:0]


def _pooled_initial_score(scores: tuple, counts: tuple) -> np.ndarray:
    """The fit's starting score from each partition's ``initial_score`` on its rows, for an
    objective whose constant is not a mean target: a constant is itself, another the
    partitions' scores weighted by their rows."""
    scores = [np.atleast_1d(np.asarray(score, dtype=FLOAT_DTYPE)) for score in scores]
    if all(np.array_equal(score, scores[0]) for score in scores):
        return scores[0]
    return sum(score * count for score, count in zip(scores, counts)) / sum(counts)


def _grow_output(
    model, rounds, driver, params, pool, memory, iteration, output, penalty, features, largest, n_rows
) -> Tree:  # fmt: skip
    """One output's tree grown over the partitions, its leaves set to their Newton steps."""
    scales, tree_params = None, params
    if model.quantized_gradients is not None:
        scales = quantization_scales(float(largest[0]), float(largest[1]), model.quantized_gradients)
        tree_params = quantized_params(params, *scales)
    capacity = max_nodes(tree_params, n_rows)
    opening = rounds("start_output_tree", (iteration, output, scales, capacity))
    bounds = None if model._monotonic is None else np.empty((capacity, 2))
    tree = grow_tree(
        driver, None, tree_params, model._tree_rng_state(iteration, output), histograms=pool,
        memory=memory, feature_penalty=penalty, features=features, monotonic_cst=model._monotonic, value_bounds=bounds,
        interaction_groups=model._interactions, exchange=PartitionsExchange(rounds, opening),
    )  # fmt: skip
    sums, curvature = _leaf_sums(rounds, tree, output, exact=scales is not None)
    model._set_leaf_values(tree, sums, curvature, bounds, scales)
    return tree


def _leaf_sums(rounds: ActorRounds, tree: Tree, output: int, exact: bool) -> tuple:
    """The leaves' sums (``leaf_sums``) and the objective's curvature (or None) over every
    partition. ``exact``: added partition after partition in partition order, one round
    per run of partitions on one worker, so that they are the in-memory fit's sums."""
    if not exact:
        sums, curvatures = zip(*rounds("leaf_sums", (tree.nodes, output, None, None)))
        return sum_in_order(sums), None if curvatures[0] is None else sum_in_order(curvatures)
    return _in_partition_order(rounds, "leaf_sums", (tree.nodes, output))


def _in_partition_order(rounds: ActorRounds, method: str, arguments: tuple) -> object:
    """Sums added row after row over the partitions in partition order: ``method(*arguments,
    carried, which)`` asked of each run of consecutive partitions on one worker (``which``:
    their local indices), one round per run, returns the sums carried on; returns the last
    run's."""
    owner = {number: (index, local) for index, numbers in enumerate(rounds.partitions) for local, number in enumerate(numbers)}
    runs: list = []  # consecutive partitions on one worker: (actor, its local indices)
    for number in sorted(owner):
        index, local = owner[number]
        if runs and runs[-1][0] == index:
            runs[-1][1].append(local)
        else:
            runs.append((index, [local]))
    carried = None
    for index, which in runs:
        carried = rounds(method, (*arguments, carried, which), only=index)[0]
    return carried


def _add_tree(
    model, rounds: ActorRounds, tree: Tree, output: int, evaluate: bool, fitted_weights: bool, n_rows: int
) -> tuple[bool, dict]:  # fmt: skip
    """Every partition adds ``tree`` to its scores; with ``evaluate``, each evaluation set's
    NDCG per query and the queries' weights, each concatenated in partition order.
    ``fitted_weights``: the relevance weights are fitted again at the new scores before the
    NDCG, as in memory (``BaseBoostingRanker._score_evals``), a round apart."""
    evaluate = evaluate and bool(model.evals_result_)
    answers = rounds("add_tree", (tree, output, evaluate and not fitted_weights))
    finite = all(answer[0] for answer in answers)
    per_actor = [per_set for _, per_set in answers]
    if evaluate and fitted_weights and finite:  # diverged scores: _check_scores says so, not the least squares
        _fit_relevance_weights(model, rounds, None, n_rows)
        per_actor = rounds("evaluate", ({"relevance_weights_": model.relevance_weights_},))
    evaluated: dict = {}
    for per_set in per_actor:
        for name, number, values, weights in per_set:
            evaluated.setdefault(name, []).append((number, values, weights))
    concatenated = {}
    for name, parts in evaluated.items():
        in_order = sorted(parts, key=lambda part: part[0])
        concatenated[name] = (np.concatenate([part[1] for part in in_order]), np.concatenate([part[2] for part in in_order]))
    return finite, concatenated


# --- set-up on the driver ------------------------------------------------------------


def _eval_partitions(client: object, model: object, eval_set: list | None, n_features: int) -> list:
    """Each ``eval_set`` item's partitions validated on their workers: (name, futures)."""
    evals = []
    for number, item in enumerate(eval_set or []):
        name = f"valid_{number}"
        item = check_eval_item(item, name)
        if not all(is_dask_collection(part) for part in item if part is not None):
            raise TypeError(
                f"eval_set ({name}): X, y, qid (and sample_weight) must be Dask collections partitioned by query, as X is."
            )
        _check_eval_names(model, item[0], name)
        columns = partitions_of(item[0], prefix=f"eval_set ({name}) ", y=item[1], qid=item[2], sample_weight=item[3])
        parts, summaries, width = validated_partitions(client, _prepare_eval, _summary, model, columns, f"eval_set ({name}) X")
        if width != n_features:
            raise ValueError(f"eval_set ({name}): X has {width} features, but the training X has {n_features}.")
        if not any(summary["heaviest"] > 0 for summary in summaries):  # as in memory (check_eval_weight)
            raise ValueError(f"eval_set ({name}): sample_weight is zero everywhere; at least one row needs a positive weight.")
        evals.append((name, parts))
    return evals


def _check_eval_names(model: object, X: object, name: str) -> None:
    """``X``'s column names against the training X's (``feature_names_in_``), in order, as
    scikit-learn checks an ``eval_set``'s in memory (``BaseBoostingRanker._eval_set``): a
    ValueError on other names or order, a warning where one of the two has none. A Dask
    DataFrame's names are read from an empty pandas frame of its columns, since scikit-learn
    reads none from a lazy frame."""
    if hasattr(X, "columns"):
        import pandas as pd  # a Dask DataFrame's dependency

        X = pd.DataFrame(columns=list(X.columns))
    try:
        _check_feature_names(model, X, reset=False)
    except ValueError as error:
        raise ValueError(f"eval_set ({name}): {error}") from error


def _hold_out(client: object, model: object, parts: list, summaries: list) -> tuple[list, list, list]:
    """``validation_fraction`` of the queries moved to an early-stopping set, drawn over the
    partitions' queries in partition order as a fit in memory draws them
    (``BaseBoostingRanker._held_out_queries``); returns the training partitions, their
    summaries and the held partitions."""
    per_part = [len(summary["query_ids"]) for summary in summaries]
    masks = np.split(model._held_out_queries(sum(per_part)), np.cumsum(per_part)[:-1])
    kept = [client.submit(_rows_of, part, ~mask, pure=False) for part, mask in zip(parts, masks)]
    validation = [client.submit(_rows_of, part, mask, pure=False) for part, mask in zip(parts, masks)]
    return kept, client.gather([client.submit(_summary, part, pure=False) for part in kept]), validation


def _reads_features_again(model: object, summaries: list) -> bool:
    """Whether the workers read the training partitions' features after binning them: to
    score the rows a tree leaves out (weight 0: ``subsample`` below 1, a zero
    ``sample_weight``) by its thresholds, and the kept trees' scores that fitted relevance
    weights are refitted at when early stopping cuts the model, as a fit in memory
    scores them (``BaseBoostingRanker._boost_output`` and ``fit``)."""
    if model.subsample < 1.0 or any(summary["zero_weights"] for summary in summaries):
        return True
    return getattr(model, "relevance_weights", None) == "fitted" and model.n_iter_no_change is not None


def _start_workers(
    client: object, model: object, objective: object, binner: object, parts: list, summaries: list, unit: float,
    evals: list, n_positions: int,
) -> ActorRounds:  # fmt: skip
    """One ``BoostingWorker`` per worker holding training partitions, with the evaluation
    partitions of its worker (those of a worker without training rows go to the first)."""
    n_rows = [summary["n_rows"] for summary in summaries]
    worker_of = holders(client, list(parts) + [part for _, eval_parts in evals for part in eval_parts])
    by_worker: dict = {}
    for number, worker in enumerate(worker_of[: len(parts)]):
        if n_rows[number]:  # an empty partition (Dask makes them) has no part in the fit
            by_worker.setdefault(worker, []).append(number)
    workers = list(by_worker)
    eval_by_worker: dict = {worker: [] for worker in workers}
    position = len(parts)
    for name, eval_parts in evals:
        for number, part in enumerate(eval_parts):
            worker = worker_of[position]
            position += 1
            eval_by_worker[worker if worker is not None and worker in eval_by_worker else workers[0]].append((name, number, part))
    row_offsets = np.concatenate([[0], np.cumsum(n_rows)])
    query_offsets = np.concatenate([[0], np.cumsum([len(summary["query_ids"]) for summary in summaries])])
    futures = [
        client.submit(
            BoostingWorker, model, objective, binner, [parts[n] for n in numbers], numbers,
            [(int(row_offsets[n]), int(query_offsets[n])) for n in numbers], (int(row_offsets[-1]), int(query_offsets[-1])),
            unit, eval_by_worker[worker], n_positions,
            actor=True,
            **({} if worker is None else {"workers": [worker]}),
        )  # fmt: skip
        for worker, numbers in by_worker.items()
    ]
    return ActorRounds(client, [future.result() for future in futures], list(by_worker.values()))


# --- on the workers ------------------------------------------------------------------


def _prepare(model: object, X, y, qid, sample_weight=None, position=None) -> _Part | None:
    """One partition validated and grouped by query (``BaseRanker._validate_training_data``),
    its weights as given, its positions checked (``_position_bias.check_positions``);
    None for an empty partition."""
    if X.shape[0] == 0:  # len() of a sparse matrix is ambiguous
        return None
    weights = None if sample_weight is None else check_sample_weight(sample_weight, n_samples=X.shape[0], all_zero=True)
    # A partition whose rows all weigh 0 is no error while another weighs (the driver checks).
    validated = None if weights is None or not weights.any() else weights
    data = model._validate_training_data(X, y, qid, validated, partition=True)
    check_grades_for_gain(data.y, model._gain(), name="y", gain_name="label_gain")
    weights = np.ones(len(data.y)) if weights is None else data.groups.group(weights)
    positions = None if position is None else data.groups.group(check_positions(position, len(data.y)))
    return _Part(data.X, data.y, weights, data.groups.grouped_query_index(), data.groups.query_ids, positions)


def _prepare_eval(model: object, X, y, qid, sample_weight=None) -> _Part | None:
    """One partition of an ``eval_set`` item validated as ``BaseBoostingRanker._eval_set``
    validates one in memory, and grouped by query, its weights as given (ones without);
    None for an empty partition."""
    if X.shape[0] == 0:  # len() of a sparse matrix is ambiguous
        return None
    X = check_features(model, X, reset=True)  # the task's own copy; the width is compared on the driver
    y = check_relevance(y, name="eval_set y", n_samples=X.shape[0])
    check_grades_for_gain(y, model._gain(), name="eval_set y", gain_name="label_gain")
    groups = group_queries(qid, X.shape[0], caller=f"{type(model).__name__}.fit eval_set")
    weights = np.ones(X.shape[0]) if sample_weight is None else check_sample_weight(sample_weight, n_samples=X.shape[0], all_zero=True)
    return _Part(groups.group(X), groups.group(y), groups.group(weights), groups.grouped_query_index(), groups.query_ids)


def _summary(part: _Part | None) -> dict:
    if part is None:
        return {
            "n_rows": 0, "n_features": None, "query_ids": np.zeros(0), "grades": np.zeros(0), "lightest": np.inf,
            "heaviest": 0.0, "zero_weights": False, "positions": 0, "lowest_position": None,
        }  # fmt: skip
    positive = part.base_weight > 0
    return {
        "n_rows": len(part.y), "n_features": part.X.shape[1], "query_ids": part.query_ids, "grades": np.unique(part.y),
        "lightest": part.base_weight[positive].min(initial=np.inf),
        "heaviest": part.base_weight.max(initial=0.0), "zero_weights": not positive.all(),
        "positions": 0 if part.positions is None else int(part.positions.max()),
        "lowest_position": None if part.positions is None else int(part.positions.min()),
    }  # fmt: skip


def _graded_queries(part: _Part | None, gain: str | np.ndarray) -> tuple[bool, int, bool]:
    """Whether a query of the grouped partition of positive weight holds two grades of
    different ``gain`` (``_input.labels.holds_two_gains``), its number of queries, and
    whether one of them weighs 0."""
    if part is None:
        return False, 0, False
    boundaries = boundaries_of_grouped(part.query_of_row)
    weights = mean_per_query(part.base_weight, boundaries)
    return holds_two_gains(part.y, boundaries[:-1], gain, weights), len(weights), not weights.all()


def _rows_of(part: _Part | None, queries: np.ndarray) -> _Part | None:
    return None if part is None or not queries.any() else part.rows_of(queries)


def _binned(part: _Part | None, binner: object, model: object, keep_features: bool) -> _Part | None:
    """The partition with its rows' bins and ``init``'s raw predictions of them (``_Part``),
    its features kept only with ``keep_features`` (``_reads_features_again``): a worker then
    holds a partition's features no longer than its bins take to compute."""
    if part is None:
        return None
    result = copy.copy(part)  # the task's input stays as it was
    with numba_threads(get_worker().state.nthreads):  # init's predictions
        result.baseline = None if model.init_ is None else model._baseline(part.X)
    result.binned = binner.transform(part.X)
    if not keep_features:
        result.X = None
    return result


def get_worker() -> object:
    from distributed import get_worker as current

    return current()


class BoostingWorker(WorkerPartitions):
    """The partitions one worker holds, for a boosting fit over partitions (module docstring).

    The partitions' rows, concatenated in partition order, are one block of rows for the
    trees (one ``_partition_rows.PartitionRows``): a round fills one histogram per worker,
    not one per partition to be added afterwards. Which rows a block holds changes only
    the order of float sums: integer (quantized) histograms, and the leaf sums carried
    partition after partition, are the same. The partitions keep their own objective,
    scores and gradients (a query's gradients need only its rows); their targets and
    tree weights are views of the block's.

    Parameters
    ----------
    model : BaseBoostingRanker
        The estimator (its parameters and seed entropy; a copy).
    objective : RankingObjective
        Unprepared; each partition prepares its own copy on its rows.
    binner : BinMapper
        The fit's bins.
    parts : list of _Part
        The worker's training partitions (none empty), in partition order.
    numbers : list of int
        Their partition numbers.
    offsets : list of (int, int)
        The fit's row number and query number of each one's first row and query.
    totals : (int, int)
        The fit's training rows and queries over every partition.
    unit : float
        The fit's unit of weight over every partition's weights (``_input.labels.weight_unit``).
    evals : list of (str, int, _Part or None)
        The evaluation partitions kept here: set name, partition number, rows.
    n_positions : int
        The largest display position over every partition (0 without positions).
    """

    def __init__(self, model, objective, binner, parts, numbers, offsets, totals, unit, evals, n_positions):
        self.model = model
        n_rows = totals[0]
        params = model._tree_params(n_rows, len(binner.n_bins_))
        dtype = QUANTIZED_DTYPE if model.quantized_gradients is not None else FLOAT_DTYPE
        thresholds, _ = binner.padded_tables()
        block = parts[0].binned if len(parts) == 1 else np.concatenate([part.binned for part in parts])
        super().__init__(
            [block], params.criterion, thresholds.shape[1], _criteria.n_hist_columns(params.criterion), np.dtype(dtype).name
        )  # fmt: skip
        self.numbers, self.offsets, self.totals = numbers, offsets, totals
        self.threads = get_worker().state.nthreads
        ends = np.cumsum([len(part.y) for part in parts])
        self.slices = [slice(int(end - len(part.y)), int(end)) for part, end in zip(parts, ends)]  # in the block
        self.targets, self.tree_weights = np.empty((ends[-1], 2)), np.empty(ends[-1])
        self.weights: list = []  # per partition, its rows' weights in this iteration's trees (compute_gradients)
        self._leaves = None  # the block's rows' leaves in the tree being grown, once leaf_sums has them
        self.states = [
            self._state(part, objective, DrawShare(offset[0], totals[0], offset[1], totals[1]), unit, n_positions, self.targets[rows])
            for part, offset, rows in zip(parts, offsets, self.slices)
        ]
        self.baselines = [part.baseline for part in parts]  # until start_scores
        self.evals = [
            (name, number, EvalSet(name, part.X, part.y, part.query_boundaries, None, row_weight=part.base_weight))
            for name, number, part in evals if part is not None
        ]  # fmt: skip

    def _state(
        self, part: _Part, objective: object, share: DrawShare, unit: float, n_positions: int, targets: np.ndarray
    ) -> BoostingState:  # fmt: skip
        objective = copy.deepcopy(objective)
        objective.share_draws(share)
        boundaries = part.query_boundaries
        objective.prepare(part.y, boundaries)
        n, k = len(part.y), objective.n_outputs
        raw = np.zeros((n, k))
        return BoostingState(
            X=part.X, y=part.y, query_of_row=part.query_of_row, base_weight=part.base_weight / unit, objective=objective,
            bias=self.model._position_bias(part.positions, objective, n_positions), raw=raw, gradients=np.empty((n, k)),
            hessians=np.empty((n, k)), targets=targets,
            training=None, row_leaf=np.full(n, -1, dtype=INDEX_DTYPE), evals=[],
            train_eval=EvalSet("train", part.X, part.y, boundaries, raw, row_weight=part.base_weight / unit),
        )  # fmt: skip

    def initial_scores(self) -> list:
        """Per partition: (rows, ``initial_score()``, outputs, grades or None, the objective's
        ``starts_from_mean_target`` and ``shift_invariant``); the score None where the first
        is true (``target_sums`` gives the start)."""
        return [
            (
                len(state.y), None if state.objective.starts_from_mean_target else state.objective.initial_score(),
                state.objective.n_outputs, getattr(state.objective, "classes_", None), state.objective.starts_from_mean_target,
                state.objective.shift_invariant,
            )
            for state in self.states
        ]  # fmt: skip

    def target_sums(self, carried: np.ndarray | None, which: list) -> np.ndarray:
        """The ``objectives._base.weighted_target_sums`` of the partitions ``which`` (local
        indices) on their rows' weights, added to ``carried`` one partition after another."""
        for index in which:
            state = self.states[index]
            carried = weighted_target_sums(state.objective.targets_, state.base_weight, carried)
        return carried

    def start_scores(self, fitted: dict, baseline: np.ndarray) -> None:
        """Every set's starting scores (``_baseline``: ``init``'s predictions, or the fit's
        ``baseline``); ``fitted``: the attributes the ranking scores read (``_ranking_scores``)."""
        self.set_fitted(fitted)
        self.model.baseline_ = baseline
        for state, predicted in zip(self.states, self.baselines):  # init's predictions were made with the bins
            state.raw[:] = baseline if predicted is None else predicted
        self.baselines = None
        with numba_threads(self.threads):
            for _, _, item in self.evals:
                item.raw = self.model._baseline(item.X)

    def set_fitted(self, fitted: dict) -> None:
        """Fitted attributes of the estimator (by name) that the workers' computations read."""
        for name, value in fitted.items():
            setattr(self.model, name, value)

    def relevance_factors(self, kept: list | None) -> list:
        """Each partition's ``_forest.relevance_factor`` of its grade probabilities at its
        scores, or, given the ``kept`` trees (early stopping's cut), at theirs."""
        model = self.model
        if kept is not None:
            model.trees_ = kept
            model._index_trees()
        with numba_threads(self.threads):
            return [
                relevance_factor(
                    model._grade_probabilities(state.raw if kept is None else model._raw_scores(state.X)), state.y,
                    state.base_weight,
                )  # fmt: skip
                for state in self.states
            ]

    def compute_gradients(self, quantized: bool, learned: np.ndarray | None, iteration: int) -> np.ndarray:
        """Every partition's gradients at its scores, as the position bias ``learned`` so far
        (``PositionBias.set_learned``; None without one) shows them, and its rows' weights
        in ``iteration``'s trees (its share of the ``subsample`` draw); returns the largest
        ``|w g|`` (row 0) and ``w h`` (row 1) of each output when ``quantized`` (zeros
        otherwise), float64 (2, n_outputs)."""
        largest = [np.zeros((2, self.states[0].gradients.shape[1]))]
        self.weights = self._iteration_weights(iteration)
        for state, weights in zip(self.states, self.weights):
            if learned is not None:
                state.bias.set_learned(learned)
            with numba_threads(self.threads):  # the worker's threads, not every core of the machine
                self.model._compute_gradients(state)
            if not quantized:
                continue
            weights = weights[:, None]
            largest.append(np.vstack([
                np.max(np.abs(weights * state.gradients), axis=0, initial=0.0), np.max(weights * state.hessians, axis=0, initial=0.0)
            ]))  # fmt: skip
        return np.maximum.reduce(largest)

    def _iteration_weights(self, iteration: int) -> list:
        """Each partition's ``base_weight`` times its rows' share of the fit's ``subsample``
        draw and Bayesian bagging weights (``BaseBoostingRanker._subsample_counts`` over every
        partition's queries or rows, in partition order), float64 (n_rows,) per partition."""
        model = self.model
        if not model._samples_units():
            return [state.base_weight for state in self.states]
        by_query = model.subsample_level == "query"
        counts = model._subsample_counts(iteration, self.totals[1] if by_query else self.totals[0])
        return [
            state.base_weight * (counts[query + state.query_of_row] if by_query else counts[row : row + len(state.y)])
            for state, (row, query) in zip(self.states, self.offsets)
        ]

    def bias_statistics(self, carried: np.ndarray | None, which: list) -> np.ndarray:
        """The position bias's ``statistics`` of the partitions ``which`` (local indices) at
        their last gradients, added to ``carried`` one partition after another."""
        for index in which:
            state = self.states[index]
            carried = state.bias.statistics(state.gradients.reshape(-1), state.hessians.reshape(-1), state.base_weight, carried)
        return carried

    def start_output_tree(self, iteration: int, output: int, scales: tuple | None, capacity: int) -> tuple:
        """Every partition's targets of ``output``'s tree (quantized with ``scales`` and its
        share of the rounding draws), and the block's rows started on the tree; returns the
        tree's ``opening`` answers, which spares the exchange two rounds."""
        squared = self.model.split_gain == "squared"
        for state, weights, (offset, _), rows in zip(self.states, self.weights, self.offsets, self.slices):
            gradients, hessians = state.gradients[:, output], state.hessians[:, output]
            tree_weights = self.tree_weights[rows]
            if scales is None:
                exact_targets(gradients, hessians, state.targets, squared)
                tree_weights[:] = weights
            else:
                draws = rounding_draws(self.model._rounding_seed(iteration, output), self.totals[0], offset, len(weights))
                round_stochastically(weights * gradients, weights * hessians, scales, draws, state.targets)
                tree_weights[:] = weights > 0
        self.partitions[0].start_tree(self.targets, self.tree_weights, capacity)
        self._leaves = None
        return self.opening()

    def leaf_sums(self, nodes: np.ndarray, output: int, carried: tuple | None, which: list | None) -> tuple:
        """Each row's leaf in the grown tree (``nodes``), and (the leaves' ``leaf_sums``, the
        objective's curvature or None) of the partitions ``which`` (local indices), added to
        ``carried`` (the two of the partitions before) one partition after another, the next
        run's ``carried`` (``_in_partition_order``); or, ``which`` None, of every
        partition, summed over the partitions."""
        sums, curvatures = [], []
        carried_sums, carried_curvature = (None, None) if carried is None else carried
        if self._leaves is None:  # once a tree, not once a run of partitions
            self._leaves = self.partitions[0].row_leaf(nodes)
        leaves = self._leaves
        for index in range(len(self.states)) if which is None else which:
            state = self.states[index]
            state.row_leaf[:] = leaves[self.slices[index]]
            weights = self.weights[index]
            answer = leaf_sums(
                state.row_leaf, weights * state.gradients[:, output], weights * state.hessians[:, output], weights,
                len(nodes), carried_sums,
            )  # fmt: skip
            with numba_threads(self.threads):
                curvature = state.objective.leaf_curvature(
                    state.raw.reshape(-1), state.row_leaf, weights, len(nodes), carried_curvature
                )  # fmt: skip
            if which is not None:  # the next partition adds to these
                carried_sums, carried_curvature = answer, curvature
            sums.append(answer)
            curvatures.append(curvature)
        if which is not None:
            return carried_sums, carried_curvature
        return sum_in_order(sums), None if curvatures[0] is None else sum_in_order(curvatures)

    def add_tree(self, tree: Tree, output: int, evaluate: bool) -> tuple[bool, list]:
        """``tree`` added to every set's scores; returns whether the training scores are all
        finite and, with ``evaluate``, what ``evaluate`` returns."""
        for state in self.states:
            add_tree_scores(state.raw, output, state.row_leaf, tree, state.X)
        for _, _, item in self.evals:
            item.raw[:, output] += tree.predict(item.X)
        finite = all(bool(np.isfinite(state.raw).all()) for state in self.states)
        return finite, self.evaluate({}) if evaluate else []

    def evaluate(self, fitted: dict) -> list:
        """(set name, partition number, NDCG per query, query weights) of every evaluation
        partition (and of the training partitions as "train" when verbose), after setting
        the ``fitted`` attributes (``set_fitted``)."""
        self.set_fitted(fitted)
        model = self.model
        scored = [(name, number, item) for name, number, item in self.evals]
        if model.verbose:
            scored += [("train", number, state.train_eval) for number, state in zip(self.numbers, self.states)]
        return [
            (name, number, item.query_ndcg(model.eval_at, model._ranking_scores, model._gain()), item.query_weights)
            for name, number, item in scored
        ]  # fmt: skip
