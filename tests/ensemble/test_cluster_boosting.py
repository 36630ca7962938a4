"""Boosting on Dask collections partitioned by query (``ensemble/_cluster_boosting.py``) against
the fit in memory on the partitions' rows concatenated in partition order."""

import contextlib
import re
import time

import numpy as np
import pytest
from sklearn.base import clone

from forestrank import LambdaMART, PLRank, RFPointRanker, make_ranking
from forestrank.ensemble import _cluster_exchange
from forestrank.ensemble._cluster_exchange import LostPartitionsError
from forestrank.metrics import ndcg_score

pytestmark = pytest.mark.slow  # a LocalCluster of worker processes: run after the quick suite (.ci/run)

distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def data():
    """Queries in order of id (the in-memory fit's order), 10% of the values missing, a weight
    per query (PLRank weighs a query's likelihood)."""
    X, y, qid = make_ranking(n_queries=120, docs_per_query=(5, 30), n_features=10, random_state=0)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    weights = np.random.default_rng(1).uniform(0.5, 2.0, qid.max() + 1)[qid]
    return X, y, qid, weights


def query_bounds(qid, *after_queries):
    """Row boundaries of partitions that end after the given numbers of queries."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return [0, *(int(starts[n]) for n in after_queries), len(qid)]


def as_dask(bounds, *arrays):
    chunks = tuple(np.diff(bounds))
    return [
        da.from_array(array, chunks=(chunks, array.shape[1]) if array.ndim == 2 else (chunks,)) for array in arrays
    ]


def assert_same_model(remote, local, gains_rtol=0.0):
    """The same trees bit for bit; the features' gains to ``gains_rtol`` (0: bitwise)."""
    assert len(remote.trees_) == len(local.trees_)
    for tree, expected in zip(remote.trees_, local.trees_):
        for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples"):
            np.testing.assert_array_equal(getattr(tree, name), getattr(expected, name), err_msg=name)
        np.testing.assert_allclose(tree.feature_gains, expected.feature_gains, rtol=gains_rtol, atol=0.0)
    np.testing.assert_array_equal(remote.baseline_, local.baseline_)


ONE_PARTITION_MODELS = {
    "lambdarank": lambda: LambdaMART(n_estimators=4, random_state=0),
    "mart with costs": lambda: LambdaMART(
        n_estimators=4, objective="mart", feature_costs=np.arange(1.0, 11.0), cost_penalty=0.1, random_state=0
    ),
    "mcrank": lambda: LambdaMART(n_estimators=3, objective="mcrank", random_state=0),
    "cumulative": lambda: LambdaMART(n_estimators=3, objective="cumulative", random_state=0),
    "xendcg": lambda: LambdaMART(n_estimators=3, objective="xendcg", random_state=0),
    "sampled pairs, separate missing": lambda: LambdaMART(
        n_estimators=3, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=2, missing_direction="separate",
        random_state=0,
    ),  # fmt: skip
    "missing right": lambda: LambdaMART(n_estimators=3, missing_direction="right", random_state=0),
    "plrank, subsample": lambda: PLRank(n_estimators=3, subsample=0.7, random_state=0),
    "monotone, feature fraction": lambda: LambdaMART(
        n_estimators=3, monotonic_cst={0: 1, 3: -1}, feature_fraction=0.6, random_state=0
    ),
}


@pytest.mark.parametrize("make", ONE_PARTITION_MODELS.values(), ids=ONE_PARTITION_MODELS.keys())
def test_one_partition_is_the_in_memory_fit_bitwise(make, data, dask_client):
    X, y, qid, weights = data
    local = make().fit(X, y, qid=qid, sample_weight=weights)
    dX, dy, dq, dw = as_dask([0, len(y)], X, y, qid, weights)
    remote = make().fit(dX, dy, qid=dq, sample_weight=dw)
    assert_same_model(remote, local)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
    assert remote.n_features_in_ == local.n_features_in_ and remote.n_iter_ == local.n_iter_


def test_trees_that_cannot_split_step_zero_over_partitions_for_a_shift_invariant_objective(data, dask_client):
    """The workers' objective says it is shift-invariant: a tree that cannot split (no
    split meets min_child_weight) steps 0, as in memory (BaseBoostingRanker._store_values)."""
    X, y, qid, weights = data
    middle = int(np.searchsorted(qid, qid[len(qid) // 2]))  # a query's first row
    dX, dy, dq, dw = as_dask([0, middle, len(y)], X, y, qid, weights)
    model = PLRank(n_estimators=2, min_child_weight=1e12, l2_regularization=1.0, random_state=0)  # see test_compiled_boosting
    remote = model.fit(dX, dy, qid=dq, sample_weight=dw)
    assert all(tree.node_count == 1 and tree.values[0] == 0.0 for tree in remote.trees_)


QUANTIZED_MODELS = {
    "lambdarank": lambda: LambdaMART(n_estimators=5, quantized_gradients=16, random_state=0),
    "mart, separate missing": lambda: LambdaMART(  # a cost penalty is refused with quantized gradients
        n_estimators=4, objective="mart", quantized_gradients=8, missing_direction="separate", random_state=0,
    ),  # fmt: skip
    "mcrank": lambda: LambdaMART(n_estimators=3, objective="mcrank", quantized_gradients=16, random_state=0),
    # the objectives starting from the weighted mean target, its sums carried partition after partition
    "cumulative": lambda: LambdaMART(n_estimators=3, objective="cumulative", quantized_gradients=16, random_state=0),
    "c-mart": lambda: LambdaMART(n_estimators=3, objective="c-mart", quantized_gradients=16, random_state=0),
    "subsample of queries": lambda: LambdaMART(n_estimators=4, subsample=0.6, quantized_gradients=16, random_state=0),
    "subsample of documents": lambda: LambdaMART(
        n_estimators=3, subsample=0.7, subsample_level="document", quantized_gradients=16, random_state=0
    ),  # fmt: skip
    "err pairs": lambda: LambdaMART(n_estimators=3, lambdarank_metric="err", quantized_gradients=16, random_state=0),
    "bayesian bagging of queries": lambda: LambdaMART(n_estimators=3, bagging_temperature=1.0, quantized_gradients=16, random_state=0),
    "bayesian bagging and subsample of documents": lambda: LambdaMART(
        n_estimators=3, subsample=0.8, subsample_level="document", bagging_temperature=0.5, quantized_gradients=16,
        random_state=0,
    ),  # fmt: skip
    # The objectives that draw at random: each partition draws its rows' share of the fit's draws.
    "plrank": lambda: PLRank(n_estimators=3, top_k=5, n_permutations=4, quantized_gradients=16, random_state=0),
    "xendcg": lambda: LambdaMART(n_estimators=3, objective="xendcg", quantized_gradients=16, random_state=0),
    "sampled pairs": lambda: LambdaMART(
        n_estimators=3, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=2, quantized_gradients=16,
        random_state=0,
    ),  # fmt: skip
}


@pytest.mark.parametrize("make", QUANTIZED_MODELS.values(), ids=QUANTIZED_MODELS.keys())
def test_quantized_partitions_are_the_in_memory_fit_bitwise(make, data, dask_client):
    """Four partitions, one of a single query: integer histograms, each partition's share of
    the rounding draws and leaf sums carried from partition to partition give the model of
    the fit in memory on the same rows. With feature costs, the root's rows' costs (which
    scale the penalty, ``_builder.root_penalty_sums``) are summed per partition, then over
    the partitions, not row after row: the features' gains agree to rounding."""
    X, y, qid, weights = data
    local = make().fit(X, y, qid=qid, sample_weight=weights)
    bounds = query_bounds(qid, 30, 70, 71)
    remote = make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, weights)[0])
    assert_same_model(remote, local, gains_rtol=0.0 if local.feature_costs is None else 1e-12)


@pytest.mark.parametrize("options", [{"subsample": 0.6}, {"n_iter_no_change": 2, "n_estimators": 30}], ids=["subsample", "hold-out"])
def test_partitions_whose_ids_do_not_increase_are_the_fit_of_their_queries_in_partition_order(options, data, dask_client):
    """The fit in memory takes its queries in the order of their ids, the cluster in
    partition order (docs/cluster.md): with the later ids in the first partition (as a
    hash of the id, ``shuffle(on=qid)``, leaves them) the draws fall on other queries,
    and the model is the in-memory fit's with the queries numbered in partition order."""
    X, y, qid, weights = data
    later = qid >= 60
    order = np.r_[np.flatnonzero(later), np.flatnonzero(~later)]
    X, y, qid, weights = X[order], y[order], qid[order], weights[order]
    make = lambda: LambdaMART(quantized_gradients=16, learning_rate=0.5, random_state=0, **{"n_estimators": 4, **options})  # noqa: E731
    bounds = query_bounds(qid, 20, 60)
    remote = make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, weights)[0])
    in_partition_order = np.unique(qid, return_index=True)[1].argsort().argsort()[np.unique(qid, return_inverse=True)[1]]
    assert_same_model(remote, make().fit(X, y, qid=in_partition_order, sample_weight=weights))
    assert remote.n_iter_ < 30 or "subsample" in options  # the hold-out's case stopped early: its draw was used
    by_id = make().fit(X, y, qid=qid, sample_weight=weights)
    assert not np.array_equal(by_id.predict(X), remote.predict(X))


def test_float_partitions_grow_the_same_trees_up_to_summation_order(data, dask_client):
    """With float histograms the sums are added per worker, then across workers: the same
    splits, values within rounding, the same NDCG@10."""
    X, y, qid, _ = data
    make = lambda: LambdaMART(n_estimators=10, random_state=0)  # noqa: E731
    local = make().fit(X, y, qid=qid)
    bounds = query_bounds(qid, 30, 70, 71)
    dX, dy, dq = as_dask(bounds, X, y, qid)
    remote = make().fit(dX, dy, qid=dq)
    for tree, expected in zip(remote.trees_, local.trees_):
        np.testing.assert_array_equal(tree.nodes["feature"], expected.nodes["feature"])
        np.testing.assert_array_equal(tree.nodes["left"], expected.nodes["left"])
        np.testing.assert_allclose(tree.values, expected.values, rtol=1e-9, atol=1e-12)
    local_ndcg = ndcg_score(y, local.predict(X), qid, k=10)
    assert abs(ndcg_score(y, remote.predict(X), qid, k=10) - local_ndcg) < 1e-4
    # The rounds docs/cluster.md states: two to start the scores, one per iteration for the
    # gradients, and per tree of L leaves at most L + 3 (its start, one per split, leaf
    # sums, adding it, numbering the last splits made ahead), fewer as splits made ahead
    # spare rounds: here about a third of them.
    leaves = sum(int((tree.nodes["feature"] < 0).sum()) for tree in remote.trees_)
    at_most = 2 + remote.n_iter_ + leaves + 3 * len(remote.trees_)
    assert remote.cluster_rounds_ < 0.8 * at_most
    assert remote.cluster_bytes_ > 0


@pytest.mark.parametrize("source", ["eval_set", "validation_fraction"])
def test_early_stopping_stops_at_the_in_memory_iteration(source, data, dask_client, capsys):
    X, y, qid, _ = data
    train, valid = qid < 90, qid >= 90
    make = lambda: LambdaMART(n_estimators=60, n_iter_no_change=3, learning_rate=0.3, verbose=1, random_state=0)  # noqa: E731
    bounds = query_bounds(qid[train], 40)
    dX, dy, dq = as_dask(bounds, X[train], y[train], qid[train])
    if source == "eval_set":
        local = make().fit(X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid], qid[valid])])
        printed = capsys.readouterr().out
        eval_bounds = query_bounds(qid[valid], 12)
        remote = make().fit(dX, dy, qid=dq, eval_set=[tuple(as_dask(eval_bounds, X[valid], y[valid], qid[valid]))])
        name = "valid_0"
    else:
        local = make().fit(X[train], y[train], qid=qid[train])
        printed = capsys.readouterr().out
        remote = make().fit(dX, dy, qid=dq)
        name = "validation"
    untimed = lambda out: re.sub(r"  [0-9.]+ s$", "", out, flags=re.MULTILINE)  # noqa: E731
    assert untimed(capsys.readouterr().out) == untimed(printed)  # the lines, and the stop's, printed alike
    assert printed.splitlines()[-1].startswith(f"early stopping: {name} ndcg@10")
    assert local.n_iter_ < 60  # it stopped early
    assert remote.best_iteration_ == local.best_iteration_ and remote.n_iter_ == local.n_iter_
    np.testing.assert_allclose(remote.evals_result_[name]["ndcg@10"], local.evals_result_[name]["ndcg@10"], rtol=0, atol=1e-12)
    staged = list(remote.staged_predict(X[valid]))
    assert len(staged) == remote.n_iter_
    # a deciding set whose queries hold one grade each is refused, as in memory
    flat = np.zeros(int(valid.sum()))
    with pytest.raises(ValueError, match=rf"NDCG on the {'last eval_set' if source == 'eval_set' else 'validation_fraction'}"):
        if source == "eval_set":
            make().fit(dX, dy, qid=dq, eval_set=[tuple(as_dask(eval_bounds, X[valid], flat, qid[valid]))])
        else:
            make().fit(dX, as_dask(bounds, X[train], np.zeros(int(train.sum())), qid[train])[1], qid=dq)
    if source == "eval_set":  # and one whose grades label_gain gives one gain (0 to grades 0 and 1)
        gain = [0.0, 0.0] + [1.0] * int(y.max() - 1)
        one_gain = tuple(as_dask(eval_bounds, X[valid], np.minimum(y[valid], 1), qid[valid]))
        with pytest.raises(ValueError, match=r"none of whose \d+ queries holds two grades of different gain"):
            make().set_params(label_gain=gain).fit(dX, dy, qid=dq, eval_set=[one_gain])
    np.testing.assert_allclose(staged[-1], local.predict(X[valid]), rtol=1e-12, atol=1e-12)


def test_dataframes_fit_and_predict_over_partitions(data, dask_client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, qid, _ = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(y=y, qid=qid)
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    ddf = ddf.set_index("qid", drop=False, sorted=True)  # every query inside one partition
    features = ddf[[f"f{i}" for i in range(X.shape[1])]]
    model = LambdaMART(n_estimators=3, random_state=0).fit(features, ddf["y"], qid=ddf["qid"])
    assert list(model.feature_names_in_) == [f"f{i}" for i in range(X.shape[1])]
    np.testing.assert_array_equal(model.predict(features).compute(), model.predict(frame[list(model.feature_names_in_)]))


STAGED_MODELS = {
    "lambdarank": lambda: LambdaMART(n_estimators=4, random_state=0),
    "mcrank": lambda: LambdaMART(n_estimators=3, objective="mcrank", random_state=0),
    "fitted init": lambda: LambdaMART(
        n_estimators=3, objective="mart", init=RFPointRanker(n_estimators=2, random_state=0), random_state=0
    ),  # fmt: skip
}


@pytest.mark.parametrize("make", STAGED_MODELS.values(), ids=STAGED_MODELS.keys())
def test_staged_predict_over_partitions_is_the_in_memory_stages_without_gathering_x(make, data, dask_client, monkeypatch):
    """Each stage's scores come back from the workers; X itself is never computed here. A
    model fitted with feature names checks them on the workers."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y, qid, _ = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    for fitted_on, collection in [
        (X, da.from_array(X, chunks=((400, 0, len(X) - 400), X.shape[1]))),  # an empty block scores nothing
        (frame, dd.from_pandas(frame, npartitions=3, sort=False)),
    ]:
        model = make().fit(fitted_on, y, qid=qid)
        expected = list(model.staged_predict(fitted_on))
        monkeypatch.setattr(type(collection), "__array__", lambda *_, **__: pytest.fail("X was gathered"), raising=False)
        stages = list(model.staged_predict(collection))
        assert len(stages) == len(expected) == model.n_iter_
        for stage, in_memory in zip(stages, expected):
            np.testing.assert_array_equal(stage, in_memory)
    with pytest.raises(ValueError, match="feature names"):
        next(model.staged_predict(collection[list(reversed(frame.columns))]))


def test_a_query_split_across_partitions_is_refused_by_name(data, dask_client):
    X, y, qid, _ = data
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    middle = int(starts[40]) + 2  # two rows of query 40 in the first partition, the rest in the second
    dX, dy, dq = as_dask([0, middle, len(y)], X, y, qid)
    with pytest.raises(ValueError, match=rf"query {qid[middle]} has rows in partitions 0 and 1 of X"):
        LambdaMART(n_estimators=2).fit(dX, dy, qid=dq)
    good = query_bounds(qid, 60)
    eval_X, eval_y, eval_q = as_dask([0, middle, len(y)], X, y, qid)
    with pytest.raises(ValueError, match=r"has rows in partitions 0 and 1 of eval_set \(valid_0\) X"):
        LambdaMART(n_estimators=2).fit(*as_dask(good, X, y), qid=as_dask(good, qid)[0], eval_set=[(eval_X, eval_y, eval_q)])


def test_an_eval_sets_columns_are_checked_by_name_against_the_training_columns(data, dask_client):
    """An eval_set DataFrame with the training columns in another order was read by
    position on a cluster (its metric from permuted features), where in memory it is
    refused."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y, qid, _ = data
    names = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    series = [dd.from_pandas(pd.Series(values), npartitions=1) for values in (y, qid)]
    reversed_columns = dd.from_pandas(frame[names[::-1]], npartitions=1)
    message = r"eval_set \(valid_0\): The feature names should match those that were passed during fit"
    with pytest.raises(ValueError, match=message):
        LambdaMART(n_estimators=2).fit(frame, y, qid=qid, eval_set=[(frame[names[::-1]], y, qid)])
    with pytest.raises(ValueError, match=message):
        LambdaMART(n_estimators=2).fit(dd.from_pandas(frame, npartitions=1), *series[:1], qid=series[1],
                                       eval_set=[(reversed_columns, *series)])  # fmt: skip

def test_an_init_refusing_the_partitions_is_named(data, dask_client):
    """An unfitted forest init that the partitions could not serve raised its own error,
    about a query_subsample the boosting model does not have."""
    X, y, qid, _ = data
    dX, dy, dq = as_dask(query_bounds(qid, 60), X, y, qid)
    with pytest.raises(ValueError, match=r"^init \(RFPointRanker\), fitted over the partitions: query_subsample=0.63"):
        LambdaMART(n_estimators=2, init=RFPointRanker(n_estimators=3)).fit(dX, dy, qid=dq)

@pytest.mark.parametrize("make", [LambdaMART, RFPointRanker])
def test_a_partitions_category_column_is_advised_to_be_encoded(make, data, dask_client):
    """A category column of a Dask DataFrame was advised categorical_features='from_dtype',
    which fits on Dask collections then refused."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y, qid, _ = data
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"]).assign(c=lambda f: pd.Categorical(np.where(f.c > 0, "x", "z")))
    y, qid = (dd.from_pandas(pd.Series(values), npartitions=1) for values in (y, qid))
    with pytest.raises(ValueError, match="column\\(s\\) 'c' of X hold categories or text: encode them as numbers"):
        make(n_estimators=2).fit(dd.from_pandas(frame, npartitions=1), y, qid=qid)

def test_bad_inputs_over_partitions_are_refused_by_name(data, dask_client):
    X, y, qid, _ = data
    dX, dy, dq = as_dask(query_bounds(qid, 60), X, y, qid)
    with pytest.raises(ValueError, match=r"position is needed with position_bias and only then"):
        LambdaMART(position_bias="unbiased").fit(dX, dy, qid=dq)
    with pytest.raises(ValueError, match=r"position is for LambdaMART's position_bias; PLRank takes none"):
        PLRank().fit(dX, dy, qid=dq, position=dq)
    with pytest.raises(ValueError, match=r"position has 3 partitions and X has 2"):
        LambdaMART(position_bias="factor").fit(dX, dy, qid=dq, position=as_dask(query_bounds(qid, 30, 60), qid)[0])
    with pytest.raises(ValueError, match=r"position must be >= 1"):
        LambdaMART(position_bias="factor").fit(dX, dy, qid=dq, position=dq)  # query ids start at 0
    with pytest.raises(TypeError, match=r"eval_set \(valid_0\): X, y, qid \(and sample_weight\) must be Dask collections"):
        LambdaMART(n_estimators=2).fit(dX, dy, qid=dq, eval_set=[(X, y, qid)])
    with pytest.raises(ValueError, match=r"eval_set \(valid_0\): each item must be \(X, y, qid\) or \(X, y, qid, sample_weight\).* got a tuple of 2 item"):
        LambdaMART(n_estimators=2).fit(dX, dy, qid=dq, eval_set=[(dX, dy)])


@pytest.mark.parametrize("objective", ["mcrank", "cumulative"])
def test_fitted_relevance_weights_over_partitions_are_the_in_memory_least_squares(objective, data, dask_client):
    """Each partition's QR factor, stacked on the driver, solves the least squares of all the
    rows (TSQR): the weights of the fit in memory up to rounding, refitted before every
    evaluation (which early stopping reads) and at the kept iteration's scores, or at the
    last iteration's without early stopping."""
    X, y, qid, weights = data
    train, valid = qid < 90, qid >= 90
    make = lambda: LambdaMART(  # noqa: E731
        n_estimators=40, objective=objective, relevance_weights="fitted", n_iter_no_change=2, learning_rate=0.5,
        quantized_gradients=16, random_state=0,
    )  # fmt: skip
    eval_set = [(X[valid], y[valid], qid[valid])]
    local = make().fit(X[train], y[train], qid=qid[train], sample_weight=weights[train], eval_set=eval_set)
    bounds = query_bounds(qid[train], 30, 60)
    dX, dy, dq, dw = as_dask(bounds, X[train], y[train], qid[train], weights[train])
    remote = make().fit(dX, dy, qid=dq, sample_weight=dw, eval_set=[tuple(as_dask(query_bounds(qid[valid], 12), *eval_set[0]))])
    assert local.n_iter_ < 40 and remote.n_iter_ == local.n_iter_
    np.testing.assert_allclose(remote.evals_result_["valid_0"]["ndcg@10"], local.evals_result_["valid_0"]["ndcg@10"], atol=1e-12)
    np.testing.assert_allclose(remote.relevance_weights_, local.relevance_weights_, rtol=1e-9, atol=1e-12)
    assert not np.allclose(remote.relevance_weights_, np.arange(len(remote.classes_)))  # fitted, not the grades
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-9, atol=1e-12)
    local = make().set_params(n_iter_no_change=None, n_estimators=3).fit(X[train], y[train], qid=qid[train])
    remote = make().set_params(n_iter_no_change=None, n_estimators=3).fit(dX, dy, qid=dq)
    np.testing.assert_allclose(remote.relevance_weights_, local.relevance_weights_, rtol=1e-9, atol=1e-12)


def test_init_starts_the_fit_over_partitions(data, dask_client):
    """A fitted init: its predictions, made on the workers, start the scores, and the model is
    the in-memory one bitwise (quantized); an unfitted forest is fitted on the partitions
    first; what cannot be is refused by name."""
    from sklearn.tree import DecisionTreeRegressor

    X, y, qid, _ = data
    forest = RFPointRanker(n_estimators=8, max_leaf_nodes=8, random_state=0).fit(X, y, qid=qid)
    make = lambda init: LambdaMART(n_estimators=4, init=init, quantized_gradients=16, random_state=0)  # noqa: E731
    local = make(forest).fit(X, y, qid=qid)
    bounds = query_bounds(qid, 30, 70, 71)
    dX, dy, dq = as_dask(bounds, X, y, qid)
    remote = make(forest).fit(dX, dy, qid=dq)
    assert remote.init_ is forest
    assert_same_model(remote, local)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
    unfitted = RFPointRanker(n_estimators=4, query_subsample=0.1, max_leaf_nodes=8, random_state=0)
    dX, dy, dq = as_dask(query_bounds(qid, 60), X, y, qid)  # partitions that hold a forest tree's sample
    fitted_there = make(unfitted).fit(dX, dy, qid=dq)
    assert len(fitted_there.init_.trees_) == 4 and not hasattr(unfitted, "trees_")
    assert_same_model(fitted_there, make(fitted_there.init_).fit(dX, dy, qid=dq))  # boosted from its predictions
    with pytest.raises(ValueError, match=r"init must be fitted already, or a forestrank ranker"):
        make(DecisionTreeRegressor()).fit(dX, dy, qid=dq)
    # With the validation_fraction hold-out, an unfitted init is fitted on the training
    # queries only, as in memory: on one partition (where the forest's fit is the in-memory
    # one) the whole model is the in-memory one.
    held = lambda: make(RFPointRanker(n_estimators=4, max_leaf_nodes=8, random_state=0)).set_params(  # noqa: E731
        n_estimators=30, n_iter_no_change=2
    )
    local = held().fit(X, y, qid=qid)
    dX, dy, dq = as_dask([0, len(y)], X, y, qid)
    remote = held().fit(dX, dy, qid=dq)
    assert remote.n_iter_ == local.n_iter_ < 30
    np.testing.assert_array_equal(remote.init_.predict(X), local.init_.predict(X))
    assert_same_model(remote, local)
    with pytest.raises(ValueError, match=r"init is not supported with objective='mcrank'"):
        LambdaMART(n_estimators=2, objective="mcrank", init=forest).fit(dX, dy, qid=dq)


def test_an_unfitted_init_is_fitted_with_the_sample_weight_over_partitions(data, dask_client):
    """The forest an unfitted ``init`` becomes is fitted with the rows' weights, as in memory
    (on one partition, where the forest's fit is the in-memory one, the whole model is
    the in-memory one); without them it would be another forest."""
    X, y, qid, _ = data
    weights = np.random.default_rng(0).uniform(0.5, 3.0, len(y))  # a unit of weight that is no power of two
    make = lambda: LambdaMART(  # noqa: E731
        n_estimators=3, init=RFPointRanker(n_estimators=4, max_leaf_nodes=8, random_state=0), random_state=0
    )
    local = make().fit(X, y, qid=qid, sample_weight=weights)
    dX, dy, dq, dw = as_dask([0, len(y)], X, y, qid, weights)
    remote = make().fit(dX, dy, qid=dq, sample_weight=dw)
    np.testing.assert_array_equal(remote.init_.predict(X), local.init_.predict(X))
    assert_same_model(remote, local)
    unweighted = make().fit(dX, dy, qid=dq)
    assert not np.array_equal(unweighted.init_.predict(X), remote.init_.predict(X))


def test_an_unfitted_init_is_fitted_on_the_partitions_training_rows(data, dask_client):
    """Three partitions, the middle one a single query that the hold-out takes: the init is
    the forest fitted over the two others' training rows, in partition order."""
    from forestrank.ensemble._sampling import HOLD_OUT, seed_entropy, stream

    X, y, qid, _ = data
    n_queries = len(np.unique(qid))
    seed = next(  # the first seed whose hold-out (the in-memory draw over the queries in order) takes query 60
        seed for seed in range(1000)
        if 60 in stream(seed_entropy(seed), HOLD_OUT).choice(n_queries, round(0.1 * n_queries), replace=False)
    )  # fmt: skip
    held = np.zeros(n_queries, dtype=bool)
    held[stream(seed_entropy(seed), HOLD_OUT).choice(n_queries, round(0.1 * n_queries), replace=False)] = True
    forest = RFPointRanker(n_estimators=4, query_subsample=0.1, max_leaf_nodes=8, random_state=0)
    model = LambdaMART(n_estimators=3, init=forest, n_iter_no_change=2, random_state=seed)
    model.fit(*as_dask(query_bounds(qid, 60, 61), X, y)[:2], qid=as_dask(query_bounds(qid, 60, 61), qid)[0])
    kept = ~held[qid]
    bounds = [0, int(kept[: query_bounds(qid, 60)[1]].sum()), int(kept.sum())]
    training = as_dask(bounds, X[kept], y[kept], qid[kept])
    expected = clone(forest).fit(*training[:2], qid=training[2])
    np.testing.assert_array_equal(model.init_.predict(X), expected.predict(X))


@pytest.fixture(scope="module")
def click_log():
    """Clicks on a production ranking (one feature) at display positions 1-15."""
    from forestrank.datasets import simulate_clicks

    X, y, qid = make_ranking(n_queries=150, docs_per_query=15, n_features=6, random_state=0)
    log = simulate_clicks(y, qid, X[:, 0], eta=1.0, noise=0.1, random_state=0)
    return X, log.clicks, qid, log.position


POSITION_BIAS_MODELS = {
    "unbiased": lambda **kw: LambdaMART(n_estimators=6, position_bias="unbiased", position_bias_norm=0.5, random_state=0, **kw),
    "factor": lambda **kw: LambdaMART(
        n_estimators=6, position_bias="factor", position_bias_regularization=0.3, random_state=0, **kw
    ),  # fmt: skip
}


@pytest.mark.parametrize("make", POSITION_BIAS_MODELS.values(), ids=POSITION_BIAS_MODELS.keys())
def test_position_bias_over_partitions_is_the_in_memory_fit(make, click_log, dask_client):
    """The bias's sums are carried from partition to partition in partition order: one
    partition, or several with quantized gradients, give the in-memory model and bias
    bitwise; several with float histograms give the same trees and a bias within rounding."""
    X, clicks, qid, position = click_log
    bounds = query_bounds(qid, 40, 90, 91)
    for kw, several in [({}, False), ({"quantized_gradients": 16}, True), ({}, True)]:
        local = make(**kw).fit(X, clicks, qid=qid, position=position)
        cuts = bounds if several else [0, len(qid)]
        dX, dc, dq, dp = as_dask(cuts, X, clicks, qid, position)
        remote = make(**kw).fit(dX, dc, qid=dq, position=dp)
        if several and not kw:
            np.testing.assert_allclose(remote.position_bias_, local.position_bias_, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=1e-9, atol=1e-9)
            continue
        assert_same_model(remote, local)
        np.testing.assert_array_equal(remote.position_bias_, local.position_bias_)
    assert not np.array_equal(local.position_bias_, make().set_params(n_estimators=1).fit(X, clicks, qid=qid, position=position).position_bias_)
    if make is POSITION_BIAS_MODELS["unbiased"]:  # positions without the top one, refused as in memory
        with pytest.raises(ValueError, match="no row has position 1"):
            make().fit(dX, dc, qid=dq, position=as_dask(bounds, position + 1)[0])


@pytest.mark.parametrize("mode", ["factor", "unbiased"])
def test_position_bias_is_the_kept_iterations_when_early_stopping_on_partitions(mode, click_log, dask_client):
    """The held-out queries take their positions with them, the subsample draw is taken over
    the queries left; the bias is the best iteration's."""
    X, clicks, qid, position = click_log
    make = lambda: LambdaMART(  # noqa: E731
        n_estimators=40, position_bias=mode, n_iter_no_change=2, learning_rate=0.5, quantized_gradients=16,
        subsample=0.8, random_state=0,
    )  # fmt: skip
    local = make().fit(X, clicks, qid=qid, position=position)
    bounds = query_bounds(qid, 70)
    remote = make().fit(*as_dask(bounds, X, clicks, qid), position=as_dask(bounds, position)[0])
    assert local.n_iter_ < 40 and remote.n_iter_ == local.n_iter_
    assert_same_model(remote, local)
    np.testing.assert_array_equal(remote.position_bias_, local.position_bias_)


def test_a_worker_lost_mid_fit_stops_it_with_an_error_naming_its_partitions(data, monkeypatch):
    """The nanny restarts the killed worker empty: the fit raises, naming the lost
    partitions, and a model fitted before stays as it was."""
    X, y, qid, _ = data
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        model = LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid=qid)
        before = model.predict(X)
        calls = {"gradients": 0}
        original = _cluster_exchange.ActorRounds.__call__

        def kill_at_the_third_iteration(self, method, arguments, only=None):
            if method == "compute_gradients":
                calls["gradients"] += 1
                if calls["gradients"] == 3:
                    lost = self.actors[-1]._address
                    client.run(lambda: __import__("os")._exit(1), workers=[lost], on_error="ignore")
                    deadline = time.monotonic() + 30
                    while lost in client.scheduler_info()["workers"] and time.monotonic() < deadline:
                        time.sleep(0.1)
            return original(self, method, arguments, only)

        monkeypatch.setattr(_cluster_exchange.ActorRounds, "__call__", kill_at_the_third_iteration)
        bounds = query_bounds(qid, 30, 60, 90)
        dX, dy, dq = as_dask(bounds, X, y, qid)
        model.set_params(n_estimators=10)
        with client.as_current(), pytest.raises(LostPartitionsError, match=r"partition\(s\) \d"):
            model.fit(dX, dy, qid=dq)
        assert calls["gradients"] == 3
        np.testing.assert_array_equal(model.predict(X), before)
        assert len(model.trees_) == 2


def test_a_scheduler_gone_mid_fit_raises_connection_error(data, monkeypatch):
    X, y, qid, _ = data
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster)
    original = _cluster_exchange.ActorRounds.__call__

    def close_the_scheduler_after_the_first_iteration(self, method, arguments, only=None):
        if method == "compute_gradients" and self.rounds > 0 and not hasattr(self, "_closed"):
            self._closed = True
            cluster.sync(cluster.scheduler.close)
            deadline = time.monotonic() + 30
            while client.status == "running" and time.monotonic() < deadline:
                time.sleep(0.05)
        return original(self, method, arguments, only)

    monkeypatch.setattr(_cluster_exchange.ActorRounds, "__call__", close_the_scheduler_after_the_first_iteration)
    dX, dy, dq = as_dask(query_bounds(qid, 60), X, y, qid)
    model = LambdaMART(n_estimators=5, random_state=0)
    try:
        with client.as_current(), pytest.raises(ConnectionError, match="dask scheduler"):
            model.fit(dX, dy, qid=dq)
        assert not hasattr(model, "trees_")
    finally:
        client.close(timeout=2)
        with contextlib.suppress(TimeoutError):
            cluster.close(timeout=2)


def test_weights_with_zeros_and_a_weightless_partition_are_the_in_memory_fit(data, dask_client, held_out_queries):
    """Rows of weight 0 are binned as in memory; a partition whose rows all weigh 0 is no error;
    the unit of weight is the lightest positive weight of the training rows, the hold-out's
    left out (its weights change no tree)."""
    X, y, qid, weights = data
    weights = weights.copy()
    weights[qid < 30] = 0.0  # the whole first partition
    make = lambda: LambdaMART(n_estimators=4, quantized_gradients=16, n_iter_no_change=50, verbose=100, random_state=0)  # noqa: E731
    make().fit(X, y, qid=qid, sample_weight=weights)
    held_queries = held_out_queries[0]
    weights[qid == held_queries[-1]] = 0.25  # the lightest weight, held out
    local = make().fit(X, y, qid=qid, sample_weight=weights)
    bounds = query_bounds(qid, 30, 70)
    remote = make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, weights)[0])
    assert_same_model(remote, local)
    for name in ("validation", "train"):  # queries weighted by their rows' weights, as in memory
        np.testing.assert_array_equal(remote.evals_result_[name]["ndcg@10"], local.evals_result_[name]["ndcg@10"])
    with pytest.raises(ValueError, match="sample_weight is zero everywhere"):
        make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, 0 * weights)[0])
    only_held = np.where(np.isin(qid, held_queries), weights, 0.0)
    with pytest.raises(ValueError, match="zero everywhere on the queries the validation_fraction hold-out leaves to train on"):
        make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, only_held)[0])
    none_held = np.where(np.isin(qid, held_queries), 0.0, weights)  # the hold-out's queries weigh nothing
    with pytest.raises(ValueError, match=r"validation_fraction hold-out, none of whose \d+ queries holds two grades of "
                       "different gain and a positive sample_weight"):
        make().fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, none_held)[0])


def test_an_eval_sets_weights_over_partitions_are_the_in_memory_ones(data, dask_client):
    """An eval_set item's sample_weight, partitioned as its X, weighs its queries as in
    memory, bit for bit; weights zero everywhere are refused as in memory."""
    X, y, qid, weights = data
    train, valid = qid < 90, qid >= 90
    eval_item = (X[valid], y[valid], qid[valid], weights[valid])
    make = lambda: LambdaMART(n_estimators=3, quantized_gradients=16, random_state=0)  # noqa: E731
    local = make().fit(X[train], y[train], qid=qid[train], eval_set=[eval_item])
    dX, dy, dq = as_dask(query_bounds(qid[train], 40), X[train], y[train], qid[train])
    remote = make().fit(dX, dy, qid=dq, eval_set=[tuple(as_dask(query_bounds(qid[valid], 12), *eval_item))])
    np.testing.assert_array_equal(remote.evals_result_["valid_0"]["ndcg@10"], local.evals_result_["valid_0"]["ndcg@10"])
    zero = tuple(as_dask(query_bounds(qid[valid], 12), *eval_item[:3], 0 * weights[valid]))
    with pytest.raises(ValueError, match=r"eval_set \(valid_0\): sample_weight is zero everywhere"):
        make().fit(dX, dy, qid=dq, eval_set=[zero])


def test_grade_objectives_need_two_grades_over_all_partitions(data, dask_client):
    X, y, qid, _ = data
    bounds = query_bounds(qid, 60)
    for objective in ("mcrank", "cumulative"):
        with pytest.raises(ValueError, match=rf"y has one class \(\[1.0\]\); objective='{objective}'"):
            LambdaMART(n_estimators=2, objective=objective).fit(*as_dask(bounds, X, np.ones_like(y)), qid=as_dask(bounds, qid)[0])


def _features_made_on_the_workers(X, bounds):
    """X as a Dask array whose partitions are made by tasks on the workers, as data read
    there would be (no client holds them); each worker keeps weak references to the
    arrays it made (``made_features``)."""
    from dask import delayed

    def make(block):
        import weakref

        made = block.copy()
        worker = distributed.get_worker()
        worker.made_features = [*getattr(worker, "made_features", []), weakref.ref(made)]
        return made

    return da.concatenate([
        da.from_delayed(delayed(make)(X[a:b]), shape=(b - a, X.shape[1]), dtype=X.dtype) for a, b in zip(bounds, bounds[1:])
    ])  # fmt: skip


@pytest.mark.parametrize("subsample, released", [(1.0, True), (0.7, False)])
def test_the_workers_release_the_training_features_once_binned(subsample, released, data, dask_client, monkeypatch):
    """Without rows outside the trees the workers hold the training partitions' bins, not
    their features, from the first iteration on; ``subsample`` scores the rows a tree
    leaves out by its thresholds, as in memory, so their features stay. Either way the
    model is the in-memory one, and each worker grows its share of the rows."""
    X, y, qid, _ = data
    bounds = query_bounds(qid, 30, 60, 90)
    seen, actors = [], []
    original = _cluster_exchange.ActorRounds.__call__

    def features_held(keys, dask_worker):
        import gc
        import time

        deadline = time.monotonic() + 10  # the scheduler's releases reach the workers on their own time
        while True:
            gc.collect()
            made = sum(reference() is not None for reference in getattr(dask_worker, "made_features", []))
            states = sum(
                state.X is not None
                for key, actor in dask_worker.state.actors.items()
                if key in keys  # the actors of earlier fits on these shared workers may not be released yet
                for state in getattr(actor, "states", ())
            )  # fmt: skip
            if not released or not (made or states) or time.monotonic() > deadline:
                return made, states
            time.sleep(0.05)

    def look_at_the_second_iteration(self, method, arguments, only=None):
        if method == "compute_gradients" and arguments[2] == 1:
            actors.append(len(self.actors))
            seen.extend(dask_client.run(features_held, {actor.key for actor in self.actors}).values())
        return original(self, method, arguments, only)

    monkeypatch.setattr(_cluster_exchange.ActorRounds, "__call__", look_at_the_second_iteration)
    dask_client.run(lambda dask_worker: setattr(dask_worker, "made_features", []))
    make = lambda: LambdaMART(n_estimators=3, subsample=subsample, quantized_gradients=16, random_state=0)  # noqa: E731
    with dask_client.as_current():
        remote = make().fit(_features_made_on_the_workers(X, bounds), *as_dask(bounds, y), qid=as_dask(bounds, qid)[0])
    assert_same_model(remote, make().fit(X, y, qid=qid))
    assert actors == [2]  # both workers grow their share of the rows
    made, states = np.sum(seen, axis=0)
    if released:  # no reference left anywhere on the workers to the arrays they made
        assert (made, states) == (0, 0)
    else:
        assert states == 4


def test_sparse_partitions_are_the_in_memory_fit(data, dask_client):
    """Dask arrays of scipy.sparse CSR blocks, as the forests take them."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    X, y, qid, _ = data
    dense = np.nan_to_num(X) * (np.random.default_rng(2).random(X.shape) < 0.3)
    X_sparse = scipy_sparse.csr_matrix(dense)
    make = lambda: LambdaMART(n_estimators=4, quantized_gradients=16, random_state=0)  # noqa: E731
    local = make().fit(X_sparse, y, qid=qid)
    bounds = query_bounds(qid, 30, 70)
    chunks = tuple(np.diff(bounds))
    dX = da.from_array(X_sparse, chunks=(chunks, X.shape[1]), asarray=False)
    remote = make().fit(dX, *as_dask(bounds, y), qid=as_dask(bounds, qid)[0])
    assert_same_model(remote, local)
    np.testing.assert_array_equal(remote.predict(dense), local.predict(dense))
    # predicting on the sparse Dask array maps over its CSR blocks (len() of one failed)
    np.testing.assert_array_equal(remote.predict(dX).compute(), local.predict(dense))
    # and weights beside sparse blocks (their count was len() of a block too)
    weights = data[3]
    local = make().fit(X_sparse, y, qid=qid, sample_weight=weights)
    remote = make().fit(dX, *as_dask(bounds, y), qid=as_dask(bounds, qid)[0], sample_weight=as_dask(bounds, weights)[0])
    assert_same_model(remote, local)


def test_scores_that_diverge_on_the_workers_are_an_error(data, dask_client):
    X, y, qid, _ = data
    bounds = query_bounds(qid, 60)
    model = LambdaMART(objective="mart", learning_rate=1e200, n_estimators=20)
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=r"diverged to inf or NaN at iteration \d+: learning_rate=1e\+200"):
            model.fit(*as_dask(bounds, np.nan_to_num(X), y), qid=as_dask(bounds, qid)[0])


def test_a_dask_refit_keeps_no_categories_of_an_in_memory_fit(data, dask_client):
    """A refit on Dask arrays kept the frame fit's categories: a fitted scikit-learn init
    was then refused as if the Dask fit encoded category columns."""
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LinearRegression

    X, y, qid, _ = data
    X = np.nan_to_num(X)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["f0"] = pd.Categorical(np.round(X[:, 0]).astype(int) % 3)
    model = LambdaMART(n_estimators=2, categorical_features="from_dtype", random_state=0).fit(frame, y, qid=qid)
    assert model.frame_categories_
    bounds = query_bounds(qid, 60)
    model.set_params(categorical_features=None, init=LinearRegression().fit(X, y))
    model.fit(*as_dask(bounds, X, y), qid=as_dask(bounds, qid)[0])
    assert model.is_categorical_ is None and model.frame_categories_ == {} and not hasattr(model, "feature_names_in_")
