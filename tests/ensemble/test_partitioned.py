"""Forests fitted on Dask collections partitioned by query (``ensemble/_partitioned.py``),
on a ``LocalCluster`` of two single-threaded worker processes."""

import re
import traceback
import warnings

import joblib
import numpy as np
import pytest

from forestrank import BROOF, RFListRanker, RFPointRanker

pytestmark = pytest.mark.slow  # a LocalCluster of worker processes: run after the quick suite (.ci/run)

distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")

from cluster_helpers import assert_same_trees  # noqa: E402


def _as_dask(X, y, qid, rows_per_partition):
    da = pytest.importorskip("dask.array")
    return (
        da.from_array(X, chunks=(rows_per_partition, X.shape[1])),
        da.from_array(y, chunks=rows_per_partition),
        da.from_array(qid, chunks=rows_per_partition),
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: RFPointRanker(n_estimators=6, query_subsample=0.3, random_state=0),
        lambda: RFListRanker(n_estimators=3, query_subsample=0.3, max_depth=5, random_state=0),
    ],
    ids=["RF-point", "RF-list"],
)

def test_one_partition_is_the_in_memory_fit(make, cluster_data, dask_client):
    X, y, qid = cluster_data
    reference = make().fit(X, y, qid=qid)
    model = make().fit(*_as_dask(X, y, qid, len(y))[:2], qid=_as_dask(X, y, qid, len(y))[2])
    assert_same_trees(model, reference)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))


def test_verbose_reports_the_trees_grown_on_the_partitions_as_in_memory(cluster_data, dask_client, capsys):
    """A forest fitted on Dask collections printed no progress line with verbose=1. Its
    trees come back in batches: a line when the count passes a tenth, and at the last."""
    X, y, qid = cluster_data
    RFPointRanker(n_estimators=20, query_subsample=0.3, verbose=1, random_state=0).fit(X, y, qid=qid)
    in_memory = [line.split(",")[0] for line in capsys.readouterr().out.splitlines()]
    assert in_memory == [f"RFPointRanker: {n}/20 trees" for n in range(2, 21, 2)]
    dask_X, dask_y, dask_qid = _as_dask(X, y, qid, len(y))
    RFPointRanker(n_estimators=20, query_subsample=0.3, verbose=1, random_state=0).fit(dask_X, dask_y, qid=dask_qid)
    counts = [int(line.split(": ")[1].split("/")[0]) for line in capsys.readouterr().out.splitlines()]
    assert counts[-1] == 20 and counts == sorted(set(counts)) and len(counts) > 1

def test_each_tree_draws_its_queries_from_one_partition(cluster_data, dask_client):
    X, y, qid = cluster_data  # 200 queries of 30 rows, grouped: 4 partitions of 50 queries
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    make = lambda: RFPointRanker(n_estimators=24, query_subsample=0.1, min_samples_leaf=1, random_state=3)  # noqa: E731
    model = make().fit(dX, dy, qid=dq)
    again = make().fit(dX, dy, qid=dq)
    assert_same_trees(model, again)  # the same random_state, the same forest
    assert len(model.trees_) == 24 and sorted(set(model.tree_partitions_)) == [0, 1, 2, 3]
    for tree, partition in zip(model.trees_, model.tree_partitions_):
        assert tree.n_node_samples[0] == 20 * 30  # 10% of all 200 queries, each of 30 rows
        # A tree fitted on one partition predicts that partition's training rows
        # at least as well as the rows of the others (it saw only its own).
        rows = slice(1500 * partition, 1500 * (partition + 1))
        own = np.abs(tree.predict(X[rows]) - y[rows]).mean()
        assert own < np.abs(tree.predict(X) - y).mean()
    np.testing.assert_array_equal(model.predict(dX).compute(), model.predict(X))


def test_a_partition_of_zero_weights_grows_no_tree_and_zero_everywhere_is_refused(cluster_data, dask_client):
    """A partition whose weights were all zero was refused ("sample_weight is zero
    everywhere") although the other partitions weighed: it is a partition no tree draws
    from, as one without relevant documents is."""
    da = pytest.importorskip("dask.array")
    X, y, qid = cluster_data  # 4 partitions of 50 queries
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    weight = np.ones(len(y))
    weight[1500:3000] = 0.0
    make = lambda: RFPointRanker(n_estimators=12, query_subsample=0.1, random_state=0)  # noqa: E731
    model = make().fit(dX, dy, qid=dq, sample_weight=da.from_array(weight, chunks=1500))
    assert len(model.trees_) == 12 and 1 not in model.tree_partitions_
    with pytest.raises(ValueError, match="sample_weight is zero everywhere"):
        make().fit(dX, dy, qid=dq, sample_weight=da.from_array(np.zeros(len(y)), chunks=1500))


def test_a_query_split_across_partitions_is_refused_by_name(cluster_data, dask_client):
    X, y, qid = cluster_data
    with pytest.raises(ValueError, match=r"query 46 has rows in partitions 0 and 1"):
        RFPointRanker(n_estimators=2, query_subsample=0.1).fit(*_as_dask(X, y, qid, 1400)[:2], qid=_as_dask(X, y, qid, 1400)[2])


def test_a_partition_smaller_than_a_tree_sample_is_refused(cluster_data, dask_client):
    X, y, qid = cluster_data
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    with pytest.raises(ValueError, match=r"draws 126 queries per tree, but partition 0 holds 50"):
        RFPointRanker(n_estimators=2).fit(dX, dy, qid=dq)


def test_dataframes_partitioned_by_query_fit_and_predict(cluster_data, dask_client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, qid = cluster_data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["grade"], frame["query"] = y, qid
    parts = dd.from_pandas(frame, npartitions=1)
    features = parts[[f"f{j}" for j in range(X.shape[1])]]
    model = RFPointRanker(n_estimators=4, query_subsample=0.5, random_state=0).fit(features, parts["grade"], qid=parts["query"])
    reference = RFPointRanker(n_estimators=4, query_subsample=0.5, random_state=0).fit(frame.iloc[:, :-2], y, qid=qid)
    assert list(model.feature_names_in_) == list(frame.columns[:-2])
    assert_same_trees(model, reference)
    predicted = model.predict(features)
    np.testing.assert_array_equal(predicted.compute().to_numpy(), reference.predict(frame.iloc[:, :-2]))
    # a warm start on the columns in another order: the trees read them by position
    model.set_params(warm_start=True, n_estimators=5)
    with pytest.raises(ValueError, match="which read the columns by position"):
        model.fit(features[list(reversed(features.columns))], parts["grade"], qid=parts["query"])
    assert list(model.feature_names_in_) == list(frame.columns[:-2]) and len(model.trees_) == 4


def test_broof_refuses_dask_collections_in_fit_and_models_map_predict_over_partitions(cluster_data, dask_client):
    from forestrank import LambdaMART

    X, y, qid = cluster_data
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    with pytest.raises(TypeError, match=r"X is a Dask collection: call X.compute\(\)"):
        BROOF(n_estimators=2, n_trees=2, random_state=0).fit(dX, dy, qid=dq)
    for make in (lambda: LambdaMART(n_estimators=3, random_state=0), lambda: BROOF(n_estimators=2, n_trees=2, random_state=0)):
        model = make().fit(X, y, qid=qid)
        np.testing.assert_array_equal(model.predict(dX).compute(), model.predict(X))


def test_averaged_and_dummy_rankers_map_predict_over_partitions(cluster_data, dask_client):
    """AveragedRanker and DummyRanker gathered every row of a Dask collection on the client
    and returned a NumPy array; as every forestrank estimator's (docs/cluster.md), their
    predict is lazy, a Dask array for an array and a Series with X's index for a frame."""
    import dask.array
    import dask.dataframe

    from forestrank import AveragedRanker, DummyRanker, LambdaMART

    X, y, qid = cluster_data
    dX = _as_dask(X, y, qid, 1500)[0]
    frame = dask.dataframe.from_array(dX)
    averaged = AveragedRanker(LambdaMART(n_estimators=2, subsample=0.5), n_models=2, random_state=0)
    for model in (averaged.fit(X, y, qid=qid), DummyRanker(strategy="best_feature").fit(X, y, qid=qid)):
        scores = model.predict(dX)
        assert isinstance(scores, dask.array.Array)
        np.testing.assert_array_equal(scores.compute(), model.predict(X))
        by_frame = model.predict(frame)
        assert isinstance(by_frame, dask.dataframe.Series)
        np.testing.assert_array_equal(by_frame.compute().to_numpy(), model.predict(X))


def test_calibrated_relevance_maps_over_partitions(cluster_data, dask_client):
    """CalibratedRanker.predict_relevance of a Dask collection computed it on the client
    (its calibrate read the lazy scores as an array); it maps as predict does."""
    import dask.array

    from forestrank import CalibratedRanker, LambdaMART

    X, y, qid = cluster_data
    dX = _as_dask(X, y, qid, 1500)[0]
    model = CalibratedRanker(LambdaMART(n_estimators=2, random_state=0), cv=2).fit(X, y, qid=qid)
    relevance = model.predict_relevance(dX)
    assert isinstance(relevance, dask.array.Array)
    np.testing.assert_array_equal(relevance.compute(), model.predict_relevance(X))


def test_cost_aware_waves_on_the_cluster_are_the_local_forest(cluster_data, dask_client):
    X, y, qid = cluster_data
    costs = np.arange(1.0, X.shape[1] + 1)
    make = lambda: RFPointRanker(n_estimators=8, feature_costs=costs, cost_penalty=0.05, cost_wave_size=3, random_state=0)  # noqa: E731
    reference = make().fit(X, y, qid=qid)
    with joblib.parallel_config(backend="dask"):
        model = make().fit(X, y, qid=qid)
    assert_same_trees(model, reference)
    np.testing.assert_array_equal(model.tree_costs_, reference.tree_costs_)
    partitioned = make().set_params(query_subsample=0.1).fit(*_as_dask(X, y, qid, 1500)[:2], qid=_as_dask(X, y, qid, 1500)[2])
    assert len(partitioned.trees_) == 8 and partitioned.tree_costs_.sum() <= costs.sum()


def test_a_partitioned_warm_start_that_ends_inside_a_cost_wave_is_the_single_fit(cluster_data, dask_client):
    """The trees of the wave a warm start resumes are paid for with the continuation's
    first trees (as in memory, ``test_costs.py``): else its next trees saw their features
    free and grew other trees than one fit of all the trees."""
    X, y, qid = cluster_data
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    costs = np.arange(1.0, X.shape[1] + 1)
    kw = dict(feature_costs=costs, cost_penalty=0.3, cost_wave_size=3, query_subsample=0.1, max_depth=2, max_features=0.3, random_state=0)
    one = RFPointRanker(n_estimators=8, **kw).fit(dX, dy, qid=dq)
    for first in (4, 5):
        warm = RFPointRanker(n_estimators=first, warm_start=True, **kw).fit(dX, dy, qid=dq)
        warm.set_params(n_estimators=8).fit(dX, dy, qid=dq)
        assert_same_trees(warm, one)
        np.testing.assert_array_equal(warm.tree_costs_, one.tree_costs_)


def test_a_partitioned_warm_start_makes_the_in_memory_checks(cluster_data, dask_client):
    """A warm start on Dask collections skipped the checks an in-memory one makes: trees
    whose leaves were scored on another scale, or grown without the fitted forest's
    monotone constraints, were added to it silently."""
    X, y, qid = cluster_data
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    kw = dict(n_estimators=2, max_depth=2, query_subsample=0.1, random_state=0)
    scales = r"warm_start=True adds trees to a forest whose leaves were scored with .* 'exp'\), not .* 'linear'\)"
    model = RFPointRanker(relevance_weights="exp", **kw).fit(dX, dy, qid=dq)
    model.set_params(warm_start=True, n_estimators=4, relevance_weights="linear")
    with pytest.raises(ValueError, match=scales):
        model.fit(dX, dy, qid=dq)
    with pytest.raises(ValueError, match=scales):  # a Dask-fitted forest continued in memory
        model.fit(X, y, qid=qid)
    constrained = RFPointRanker(criterion="variance", leaf_score="mean", monotonic_cst=[1] + [0] * 19, **kw).fit(X, y, qid=qid)
    constrained.set_params(warm_start=True, n_estimators=4, monotonic_cst=None)
    with pytest.raises(ValueError, match="warm_start=True adds trees to a forest grown under other monotonic_cst"):
        constrained.fit(dX, dy, qid=dq)
    assert len(model.trees_) == len(constrained.trees_) == 2
    # Trees drawn on the cluster, each from its partition, have no in-memory out-of-bag rows.
    model.set_params(relevance_weights="exp", oob_score=True)
    with pytest.raises(ValueError, match="the fitted trees drew theirs on a cluster, each from its partition"):
        model.fit(X, y, qid=qid)
    assert len(model.set_params(oob_score=False).fit(X, y, qid=qid).trees_) == 4


def test_partitioned_fit_edge_cases(cluster_data, dask_client):
    X, y, qid = cluster_data
    dX, dy, dq = _as_dask(X, y, qid, 1500)
    model = RFPointRanker(n_estimators=4, query_subsample=0.1, warm_start=True, random_state=0).fit(dX, dy, qid=dq)
    with pytest.warns(UserWarning, match="no tree is grown"):
        again = model.fit(dX, dy, qid=dq)  # nothing new to grow: the same forest
    assert len(again.trees_) == 4
    # A partition without a relevant document, while others have some: it is never drawn.
    y_sparse = y.copy()
    y_sparse[:1500] = 0
    _, dy_sparse, _ = _as_dask(X, y_sparse, qid, 1500)
    sparse = RFPointRanker(n_estimators=6, query_subsample=0.1, skip_queries_without_relevance=True, random_state=0)
    assert 0 not in sparse.fit(dX, dy_sparse, qid=dq).tree_partitions_
    # Empty partitions (Dask makes them) are left out of the fit and give no scores.
    da = pytest.importorskip("dask.array")
    rows = (1500, 0, 1500, 1500, 1500)  # da.concatenate would drop an empty block
    with_empty = [da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=(rows,)), da.from_array(qid, chunks=(rows,))]
    assert 0 in with_empty[0].chunks[0]
    model = RFPointRanker(n_estimators=4, query_subsample=0.1, random_state=0).fit(*with_empty[:2], qid=with_empty[2])
    np.testing.assert_array_equal(model.predict(with_empty[0]).compute(), model.predict(X))
    # Query ids past 2**53 beside an empty partition: the check of whole queries took them as float64, where they collide.
    far = RFPointRanker(n_estimators=4, query_subsample=0.1, random_state=0).fit(*with_empty[:2], qid=with_empty[2] + 2**60)
    np.testing.assert_array_equal(far.predict(X), model.predict(X))
    from forestrank import EarlyExit

    with pytest.raises(ValueError, match="early_exit \\(and qid\\) apply to in-memory X"):
        model.predict(dX, qid=dq, early_exit=EarlyExit(2, 0.2))


def _refuses_to_compute(blocks):
    raise RuntimeError("a task ran")


@pytest.mark.parametrize(
    "make", [lambda: RFPointRanker(n_estimators=2), lambda: __import__("forestrank").LambdaMART(n_estimators=2)], ids=["forest", "boosting"]
)
def test_dask_collections_without_qid_are_refused_by_name_before_any_task(make, cluster_data, dask_client):
    """``qid=None`` with Dask collections ended in an internal TypeError from a worker. X
    here raises in any task that computes it: the refusal comes first."""
    X, y, qid = cluster_data
    dX, dy, _ = _as_dask(X, y, qid, 1500)
    with pytest.raises(ValueError, match="qid is required when X is a Dask collection"):
        make().fit(dX.map_blocks(_refuses_to_compute, dtype=dX.dtype), dy)


@pytest.mark.parametrize(
    "make", [lambda: RFPointRanker(n_estimators=2), lambda: __import__("forestrank").LambdaMART(n_estimators=2)], ids=["forest", "boosting"]
)
def test_collections_partitioned_otherwise_than_x_are_refused_naming_the_partition(make, cluster_data, dask_client):
    """y of X's length and partition count, its blocks of other sizes: the error was a
    worker's "y has 1505 entries but X has 1500 rows", naming neither the partition nor
    the cause. Dask arrays' known blocks are compared before any task; a frame's partition
    lengths are known only on the workers, whose errors now name the partition."""
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, qid = cluster_data
    dX, _, dq = _as_dask(X, y, qid, 1500)
    shifted = da.from_array(y, chunks=((1505, 1495, 1500, 1500),))
    with pytest.raises(ValueError, match="partition 0 of y has 1505 rows and that of X 1500: the collections must be partitioned alike"):
        make().fit(dX.map_blocks(_refuses_to_compute, dtype=dX.dtype), shifted, qid=dq)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=4, sort=False)
    labels = dd.from_pandas(pd.Series(y), npartitions=3, sort=False).repartition(npartitions=4)
    if [len(part) for part in frame.partitions] == [len(part) for part in labels.partitions]:
        pytest.skip("dask split the frames alike")
    with pytest.raises(ValueError, match=r"partition \d of X: y has \d+ entries but X has \d+ rows"):
        make().fit(frame, labels, qid=dd.from_pandas(pd.Series(qid), npartitions=4, sort=False))


def test_a_partitions_error_keeps_its_type_and_names_the_partition():
    """The error of one partition's preparation gains the partition's number and keeps its
    class: it was re-raised as a plain ``ValueError``, which a caller's ``except`` of
    scikit-learn's ``NotFittedError`` (a ``ValueError``) no longer caught."""
    from sklearn.exceptions import NotFittedError

    from forestrank.ensemble._partitioned import _prepare_partition

    def prepare(estimator, X):
        raise NotFittedError("the init model is not fitted")

    with pytest.raises(NotFittedError, match="^partition 3 of X: the init model is not fitted$"):
        _prepare_partition(prepare, 3, "X", None, X=np.zeros((2, 1)))


@pytest.mark.parametrize(
    "error, expected",
    [
        (np.exceptions.AxisError(2, 1), np.exceptions.AxisError),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), ValueError),
    ],
)
def test_a_partitions_error_built_from_fields_still_names_the_partition(error, expected):
    """Errors whose text comes from their fields, not from ``args``: rewriting ``args`` in
    place lost the partition's number (``AxisError``, ``UnicodeDecodeError``), and a
    ``UnicodeDecodeError`` rebuilt from its ``args`` on a Dask client would not build."""
    from forestrank.ensemble._partitioned import _prepare_partition

    def prepare(estimator, X):
        raise error

    with pytest.raises(expected, match=f"^partition 1 of X: {re.escape(str(error))}$") as raised:
        _prepare_partition(prepare, 1, "X", None, X=np.zeros((2, 1)))
    assert raised.value.__cause__ is error
    # the failing line's frame is in the rebuilt error's own traceback (a cause is not pickled)
    assert "raise error" in "".join(traceback.format_tb(raised.value.__traceback__))


def test_a_dask_refit_keeps_nothing_of_an_in_memory_fit_on_a_frame(cluster_data, dask_client):
    """A refit on Dask arrays kept the frame fit's feature names and categories: predict on
    arrays then warned of missing names, and encoded frames by the stale categories."""
    pd = pytest.importorskip("pandas")
    X, y, qid = cluster_data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["f0"] = pd.Categorical(np.round(X[:, 0]).astype(int) % 3)
    model = RFPointRanker(n_estimators=4, query_subsample=0.1, categorical_features="from_dtype", random_state=0)
    model.fit(frame, y, qid=qid)
    assert model.frame_categories_ and hasattr(model, "feature_names_in_")
    model.set_params(categorical_features=None).fit(*_as_dask(X, y, qid, 1500)[:2], qid=_as_dask(X, y, qid, 1500)[2])
    assert model.is_categorical_ is None and model.frame_categories_ == {} and not hasattr(model, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)
