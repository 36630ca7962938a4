"""Forests fitted on Dask collections partitioned by query, each tree on one partition.

The regime of Ibrahim & Carman's large-data experiments (§5.2.1, RF-point-S5 on
MSLR-WEB10K and Yahoo): every tree sees a small sample of the queries, so a tree can
draw its sample from the rows one worker holds. ``fit(X, y, qid=qid)`` with Dask
arrays, DataFrames or Series (``docs/cluster.md``):

1. every partition is validated and grouped by query on its worker; the query ids of
   all partitions are compared, and a query found in two partitions is an error that
   names it (a split query would be two queries to every tree);
2. the bin thresholds are fitted on the client from a sample of at most
   ``_tree._binning.QUANTILE_SUBSAMPLE`` rows drawn from the partitions in proportion to
   their rows (the sample a local fit uses for its quantiles), and every partition is
   binned on its worker;
3. tree ``i`` draws its partition with probability proportional to the partition's
   queries (from ``random_state`` and ``i`` only), then ``round(query_subsample x
   n_queries)`` of that partition's queries (or documents, ``sample_level="document"``),
   ``n_queries`` counting every partition, so a tree's sample has the size it has in a
   local fit;
4. batches of trees run on the workers that hold their partition; the trees come back
   and the forest is an ordinary in-memory model.

``predict`` of a Dask collection maps the fitted model over its partitions
(``parallel._cluster.map_predict``), for every estimator.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._tree._binning import QUANTILE_SUBSAMPLE, BinMapper
from .._tree._grow import binned_with
from ..parallel._cluster import batches, is_dask_collection, n_batches, run_batches, scheduler_errors
from ._costs import tree_costs
from ._sampling import BIN_SAMPLE, PARTITION, seed_entropy, stream
from ._tree_batches import grow_batch


@dataclass
class _Partition:
    """One partition's validated rows, grouped by query, on the worker that holds it."""

    grower: object
    X: np.ndarray
    y: np.ndarray
    base_weight: np.ndarray
    query_of_row: np.ndarray
    query_ids: np.ndarray
    data: object  # RankingData


def fit_partitioned(forest: object, X: object, y: object, qid: object, sample_weight: object) -> object:
    """Fit ``forest`` on Dask collections partitioned by query (the module docstring's steps).

    Parameters
    ----------
    forest : BaseForestRanker (``ensemble._forest``), passed by its own ``fit``
        Its parameters validated.
    X : dask Array of shape (n_samples, n_features), or dask DataFrame
        Partitioned along the rows (a Dask array is rechunked to one block of columns).
    y, qid : dask Array or Series of shape (n_samples,)
        Partitioned as X.
    sample_weight : dask Array or Series of shape (n_samples,), or None

    Returns
    -------
    forest, fitted
    """
    client = _client()
    if forest.oob_score:
        raise ValueError("oob_score=True is not available for Dask inputs: out-of-bag rows live on the workers.")
    inputs = partitions_of(X, y=y, qid=qid, sample_weight=sample_weight)
    previous = forest._warm_start_trees(partitioned=True)
    if not previous:
        forest._entropy = seed_entropy(forest.random_state)
    with scheduler_errors(client):
        parts, summaries, n_features = _validated_partitions(client, forest, inputs)
        binner = _shared_bins(client, forest, parts, [summary["n_rows"] for summary in summaries])
        classes = np.unique(np.concatenate([summary["classes"] for summary in summaries]))
        units = np.array([summary["n_units"] for summary in summaries])
        n_draws = _draws_per_tree(forest, units)
        trained = [
            client.submit(_bin_partition, part, binner, classes, n_draws / max(1, count), pure=False)
            for part, count in zip(parts, units)
        ]
        del parts
    forest._record_collection_inputs(X, n_features, warm=bool(previous))
    if forest._requires_grades:
        forest.classes_ = classes
    elif not previous:  # an earlier fit's grades, which no tree of this one models
        forest.__dict__.pop("classes_", None)
    _grow_in_waves(client, forest, trained, units, previous, n_features)
    return forest


def _validated_partitions(client: object, forest: object, inputs: dict) -> tuple[list, list, int]:
    """Each partition validated and grouped by query on its worker (``_prepare``), its
    summary (``_summary``), and the checks across partitions (``validated_partitions``)
    and some rows to fit. Returns the partitions' futures, their summaries and the
    number of features."""
    parts, summaries, n_features = validated_partitions(client, _prepare, _summary, forest._tree_grower(), inputs)
    if not sum(summary["n_units"] for summary in summaries):
        if any(summary["n_rows"] for summary in summaries) and not any(summary["weighs"] for summary in summaries):
            raise ValueError("sample_weight is zero everywhere; at least one row needs a positive weight.")
        if forest.skip_queries_without_relevance:
            raise ValueError(
                "skip_queries_without_relevance=True skips every query: no query has a document with a positive label y "
                "and a positive sample_weight."
            )
        raise ValueError("the Dask collections hold no rows to fit.")
    return parts, summaries, n_features


def validated_partitions(
    client: object, prepare: Callable, summarise: Callable, estimator: object, inputs: dict, name: str = "X"
) -> tuple[list, list, int]:
    """Every partition validated and grouped by query on its worker, and the checks across
    partitions: every query in one partition, one number of features.

    Parameters
    ----------
    client : distributed.Client
    prepare : callable
        ``prepare(estimator, X=..., y=..., qid=..., ...)`` on a worker, one keyword per
        input: the partition validated, or None when it is empty.
    summarise : callable
        ``summarise(partition)``: a dict with at least ``n_features`` (None when empty) and
        ``query_ids``.
    estimator : object
        Passed to ``prepare`` (each task has its own copy).
    inputs : dict of str to list of Delayed
        The partitions of X, y, qid and the optional aligned collections
        (``partitions_of``), by ``prepare``'s argument names.
    name : str
        What the collections are called in the errors (``"X"``, or an ``eval_set`` item).

    Returns
    -------
    partitions : list of distributed.Future
    summaries : list of dict
    n_features : int
    """
    computed = {argument: client.compute(column) for argument, column in inputs.items()}
    parts = [
        client.submit(
            _prepare_partition, prepare, p, name, estimator, **{argument: column[p] for argument, column in computed.items()},
            pure=False,
        )  # fmt: skip
        for p in range(len(computed["X"]))
    ]
    del computed  # each input partition is released once its validated copy exists
    summaries = client.gather([client.submit(summarise, part, pure=False) for part in parts])
    _check_queries_in_one_partition([summary["query_ids"] for summary in summaries], name)
    n_features = {summary["n_features"] for summary in summaries if summary["n_features"] is not None}
    if len(n_features) != 1:
        raise ValueError(f"the partitions of {name} have different numbers of features (or none has rows): {sorted(n_features)}.")
    return parts, summaries, n_features.pop()


def _shared_bins(client: object, forest: object, parts: list, n_rows: list, positive_only: bool = True) -> BinMapper:
    """The bin thresholds every partition uses: fitted on at most ``QUANTILE_SUBSAMPLE``
    rows drawn from the partitions in proportion to their rows (of positive weight only,
    as the forests bin; boosting bins every row)."""
    binner = BinMapper(forest.max_bins, random_state=forest._entropy % (2**32), n_jobs=forest.n_jobs)
    binner.fit(np.concatenate(client.gather([
        client.submit(
            _sample_rows, part, math.ceil(QUANTILE_SUBSAMPLE * rows / sum(n_rows)), forest._entropy, p, positive_only,
            pure=False,
        )  # fmt: skip
        for p, (part, rows) in enumerate(zip(parts, n_rows)) if rows
    ])))  # fmt: skip
    return binner


def _grow_in_waves(client: object, forest: object, trained: list, units: np.ndarray, previous: list, n_features: int) -> None:
    """Grow the new trees where their partitions live, in the cost waves of the forest,
    and set the fitted attributes (``tree_partitions_``: -1 for trees of in-memory data)."""
    new_indices = range(len(previous), forest.n_estimators)
    chosen = np.array([_partition_of_tree(forest._entropy, index, units) for index in new_indices], dtype=int)
    costs, completing = forest._feature_costs(n_features, previous)
    trees = list(previous)
    report = forest._progress(len(previous))
    for wave in forest._waves(new_indices, costs):
        in_wave = chosen[wave.start - len(previous) : wave.stop - len(previous)]
        per_batch = math.ceil(len(wave) / n_batches(client, len(wave)))
        tasks = []
        for p in np.unique(in_wave):
            indices = [index for index, part in zip(wave, in_wave) if part == p]
            for batch in batches(indices, math.ceil(len(indices) / per_batch)):
                tasks.append((grow_batch, ({}, trained[p], costs.penalty()), batch))
        grown = run_batches(client, tasks, lambda n: report(len(trees) + n))
        costs.pay_for(completing + grown)
        completing = []
        trees += grown
    forest.trees_ = trees
    forest.tree_costs_ = tree_costs(trees, costs.costs)
    earlier = getattr(forest, "tree_partitions_", np.zeros(0, dtype=int))[: len(previous)]
    earlier = np.concatenate([earlier, np.full(len(previous) - len(earlier), -1)])
    forest.tree_partitions_ = np.concatenate([earlier, chosen]).astype(int)
    forest.n_trees_ = len(forest.trees_)
    forest._pool = None
    forest._index_trees()
    for fitted in ("oob_score_", "oob_prediction_"):
        if hasattr(forest, fitted):
            delattr(forest, fitted)


def _client() -> object:
    try:
        from distributed import get_client
    except ImportError as error:
        raise ImportError(
            'fitting on Dask collections needs dask.distributed: pip install "forestrank[dask]"'
        ) from error
    try:
        return get_client()
    except ValueError as error:
        raise ValueError(
            "fitting on Dask collections needs a dask.distributed Client (distributed.Client(...)): the "
            "partitions are grouped, binned and grown on its workers."
        ) from error


def partitions_of(X: object, prefix: str = "", **aligned: object) -> dict:
    """The row partitions of ``X`` and of the collections partitioned like it (None: not
    given) as lists of Delayed objects, by argument name; ``prefix`` starts their names in
    the errors (an ``eval_set`` item's). ``qid``, when it is an argument, is required:
    without it each partition's rows would be one query of their own."""
    if "qid" in aligned and aligned["qid"] is None:
        raise ValueError(
            f"{prefix}qid is required when X is a Dask collection: give a Dask array or Series of query ids partitioned "
            "like X, each query inside one partition."
        )
    inputs = {"X": _partitions(f"{prefix}X", X)}
    for name, collection in aligned.items():
        if collection is not None:
            inputs[name] = _partitions(f"{prefix}{name}", collection, len(inputs["X"]))
            _check_rows_alike(f"{prefix}{name}", collection, f"{prefix}X", X)
    return inputs


def _check_rows_alike(name: str, collection: object, x_name: str, X: object) -> None:
    """Refuse, before any task, a collection whose partitions' row counts, where Dask
    knows them (arrays' chunks), differ from ``X``'s."""
    rows, x_rows = (getattr(array, "chunks", ((),))[0] for array in (collection, X))
    known = all(np.isfinite(rows)) and all(np.isfinite(x_rows)) and len(rows) == len(x_rows)
    if known and rows and tuple(rows) != tuple(x_rows):
        first = next(p for p, (a, b) in enumerate(zip(rows, x_rows)) if a != b)
        raise ValueError(
            f"partition {first} of {name} has {rows[first]} rows and that of {x_name} {x_rows[first]}: the collections "
            "must be partitioned alike, each of the same rows (rechunk them to X's chunks)."
        )


def _partitions(name: str, collection: object, expected: int | None = None) -> list:
    """The row partitions of a Dask collection as a list of Delayed objects."""
    import dask.array as da

    if isinstance(collection, da.Array):
        if collection.ndim == 2:
            collection = collection.rechunk({1: -1})
        parts = list(collection.to_delayed().ravel())
    elif is_dask_collection(collection) and hasattr(collection, "npartitions"):  # a DataFrame or Series
        parts = list(collection.to_delayed())
    else:
        raise TypeError(
            f"{name} must be a Dask array, DataFrame or Series partitioned like X when X is a Dask collection; "
            f"got {type(collection).__name__}."
        )
    if expected is not None and len(parts) != expected:
        raise ValueError(f"{name} has {len(parts)} partitions and X has {expected}: they must be partitioned alike.")
    return parts


def _prepare_partition(prepare: Callable, number: int, name: str, estimator: object, **columns: object) -> object:
    """``prepare(estimator, **columns)`` on a worker, its errors naming the partition (a
    partition's ``y`` of another length than its ``X`` is a collection partitioned
    otherwise, which the error of the partition's own arrays would not say). The error
    keeps its type, so that a caller catching a subclass of ``ValueError`` (scikit-learn's
    ``NotFittedError``, numpy's ``AxisError``) catches it as from an in-memory fit; a
    class that cannot be built from one message (``UnicodeDecodeError``, whose text comes
    from its five fields, not from ``args``) becomes a plain ``ValueError``."""
    try:
        return prepare(estimator, **columns)
    except ValueError as error:
        message = f"partition {number} of {name}: {error}"
        try:
            renamed = type(error)(message)
        except Exception:  # a constructor of other arguments fails in its own way
            renamed = ValueError(message)
        if str(renamed) != message:
            renamed = ValueError(message)
        # the worker's frames travel with the error; its cause does not survive pickling
        raise renamed.with_traceback(error.__traceback__) from error


def _check_queries_in_one_partition(query_ids: list[np.ndarray], name: str = "X") -> None:
    """Raise ``ValueError`` naming a query whose rows lie in two partitions (of ``name``)."""
    # An empty partition's float64 ids would make every id float64, where int64 ids past
    # 2**53 collide.
    held = [p for p, part in enumerate(query_ids) if len(part)]
    if not held:
        return
    ids = np.concatenate([query_ids[p] for p in held])
    owner = np.repeat(held, [len(query_ids[p]) for p in held])
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if len(repeated):
        first, second = order[repeated[0]], order[repeated[0] + 1]
        query = ids[first].item() if isinstance(ids[first], np.generic) else ids[first]
        raise ValueError(
            f"query {query!r} has rows in partitions {owner[first]} and {owner[second]} of {name}: every query must lie "
            "wholly inside one partition (repartition by query id, for example with "
            "DataFrame.shuffle(on=qid_column) or set_index(qid_column))."
        )


def _draws_per_tree(forest: object, units: np.ndarray) -> int:
    """Units (queries, or documents) a tree draws: as in a local fit on all the partitions."""
    n_draws = max(1, round(forest.query_subsample * int(units.sum())))
    unit = "queries" if forest.sample_level == "query" else "documents"
    small = np.flatnonzero((units < n_draws) & (units > 0))  # a partition without units is never drawn
    if not forest.bootstrap and len(small):
        raise ValueError(
            f"query_subsample={forest.query_subsample} draws {n_draws} {unit} per tree, but partition {small[0]} "
            f"holds {units[small[0]]}: each tree draws from one partition without replacement, so a partition must "
            "hold a tree's sample (use fewer, larger partitions or a smaller query_subsample)."
        )
    return n_draws


def _partition_of_tree(entropy: int, index: int, units: np.ndarray) -> int:
    """The partition tree ``index`` draws from, with probability proportional to its units."""
    rng = stream(entropy, (index, PARTITION))
    return int(rng.choice(len(units), p=units / units.sum()))


# --- tasks run on the workers ------------------------------------------------------


def _prepare(grower: object, X, y, qid, sample_weight=None) -> _Partition | None:
    """Validate one partition and group its rows by query (``BaseRanker._validate_training_data``);
    None for an empty partition (Dask makes them, e.g. after a shuffle).

    ``grower`` is the task's own copy (every task unpickles its arguments). A partition
    may lack relevant documents, or rows of positive weight, although others have them:
    its sampling pool is then empty (0 units), and no tree draws from it.
    """
    if X.shape[0] == 0:  # len() of a sparse matrix is ambiguous
        return None
    data = grower._validate_training_data(X, y, qid, sample_weight, partition=True)
    query_of_row = data.groups.grouped_query_index()
    base_weight = grower._base_weight(data, query_of_row, allow_empty_pool=True)
    return _Partition(grower, data.X, data.y, base_weight, query_of_row, data.groups.query_ids, data)


def _summary(part: _Partition | None) -> dict:
    if part is None:
        return {
            "n_rows": 0, "n_features": None, "query_ids": np.zeros(0), "classes": np.zeros(0), "n_units": 0,
            "weighs": False,
        }  # fmt: skip
    pool = part.grower._pool
    by_query = part.grower.sample_level == "query"
    n_units = (len(part.query_ids) if by_query else len(part.y)) if pool is None else int(pool.sum())
    return {
        "n_rows": len(part.y), "n_features": part.X.shape[1], "query_ids": part.query_ids,
        "classes": np.unique(part.y), "n_units": n_units,
        "weighs": part.data.sample_weight is None or bool(part.data.sample_weight.any()),
    }  # fmt: skip


def _sample_rows(part: _Partition, n_rows: int, entropy: int, number: int, positive_only: bool = True) -> np.ndarray:
    """At most ``n_rows`` rows (of positive weight with ``positive_only``), drawn without
    replacement, for the bin thresholds."""
    rows = np.flatnonzero(part.base_weight > 0) if positive_only else np.arange(len(part.base_weight))
    if len(rows) > n_rows:
        rng = stream(entropy, (BIN_SAMPLE, number))
        rows = np.sort(rng.choice(rows, n_rows, replace=False))
    X = part.X[rows]
    return X.toarray() if hasattr(X, "toarray") else X


def _bin_partition(part: _Partition | None, binner: BinMapper, classes: np.ndarray, fraction: float) -> tuple | None:
    """The partition as ``_forest.grow_batch`` takes it, its trees drawing ``fraction`` of its units
    (None for an empty partition, which no tree draws)."""
    if part is None:
        return None
    grower = part.grower
    grower._all_classes = classes if grower._requires_grades else None
    training = grower._training_set(part.data, part.query_of_row, binned_with(binner, part.X), part.base_weight)
    params = grower._tree_params(int((part.base_weight > 0).sum()), part.X.shape[1])
    grower.query_subsample = fraction
    return grower, training, part.base_weight, part.query_of_row, params
