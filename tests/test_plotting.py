"""forestrank.plotting: what each plot draws (the figure objects, not pixels), and its
import of matplotlib only when a plot is drawn."""

import subprocess
import sys

import numpy as np
import pytest

from forestrank import LambdaMART, RFListRanker, RFPointRanker, make_ranking, ndcg_score, tree_strength_curve
from forestrank.stats import paired_test

matplotlib = pytest.importorskip("matplotlib", reason="forestrank.plotting needs forestrank[plot]")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from forestrank.plotting import (  # noqa: E402
    QueryComparisonDisplay,
    plot_importance,
    plot_metric,
    plot_query_comparison,
    plot_tree,
    plot_tree_strength,
)


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=(5, 20), n_features=6, random_state=0)
    train = qid < 60
    return X[train], y[train], qid[train], X[~train], y[~train], qid[~train]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plot_metric_draws_each_sets_curve_and_the_best_iteration(data):
    X, y, qid, X_val, y_val, qid_val = data
    model = LambdaMART(n_estimators=40, n_iter_no_change=5, random_state=0)
    model.fit(X, y, qid=qid, eval_set=[(X_val, y_val, qid_val)])
    ax = plot_metric(model)
    curve = model.evals_result_["valid_0"]["ndcg@10"]
    x_values, y_values = ax.lines[0].get_data()
    np.testing.assert_array_equal(y_values, curve)
    np.testing.assert_array_equal(x_values, np.arange(1, len(curve) + 1))
    assert ax.lines[0].get_label() == "valid_0" and ax.get_ylabel() == "ndcg@10"
    assert ax.lines[1].get_xdata()[0] == model.best_iteration_
    with pytest.raises(ValueError, match=r"recorded no metric: fit it with eval_set, n_iter_no_change \(which holds"):
        plot_metric(LambdaMART(n_estimators=2, validation_fraction=0.3).fit(X, y, qid=qid))  # read only when stopping
    held_out = plot_metric(LambdaMART(n_estimators=3, n_iter_no_change=5, validation_fraction=0.3).fit(X, y, qid=qid))
    assert held_out.lines[0].get_label() == "validation"
    with pytest.raises(ValueError, match=r"eval_names \['test'\] are not in evals_result_"):
        plot_metric(model, eval_names=["test"])
    from sklearn.pipeline import make_pipeline  # a Pipeline was said to record no metric

    piped = make_pipeline(LambdaMART(n_estimators=3, n_iter_no_change=5, validation_fraction=0.3, random_state=0))
    piped.fit(X, y, lambdamart__qid=qid)
    assert plot_metric(piped).lines[0].get_label() == "validation"
    # One name was split into its letters ("eval_names ['v', 'a', ...] are not in evals_result_").
    assert [line.get_label() for line in plot_metric(model, eval_names="valid_0").lines][0] == "valid_0"
    # A forest records no metric; the advice to fit it with eval_set could not be followed.
    with pytest.raises(ValueError, match=r"RFPointRanker records no metric per iteration: plot_metric draws a boosted"):
        plot_metric(RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid))


def test_plot_importance_draws_the_largest_importances_on_top(data):
    X, y, qid, *_ = data
    model = RFPointRanker(n_estimators=10, random_state=0).fit(X, y, qid=qid)
    names = [f"f{index}" for index in range(X.shape[1])]
    ax = plot_importance(model, max_num_features=3, feature_names=names)
    widths = [bar.get_width() for bar in ax.patches]
    expected = np.sort(model.feature_importances_)[-3:]
    np.testing.assert_allclose(widths, expected)
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert labels == [names[index] for index in np.argsort(model.feature_importances_, kind="stable")[::-1][:3][::-1]]
    with pytest.raises(ValueError, match="feature_names has 2 names; the model has 6 features"):
        plot_importance(model, feature_names=["a", "b"])
    for count in (2.5, True, 0):  # 2.5 failed inside numpy's slicing
        with pytest.raises(ValueError, match=rf"max_num_features must be an integer >= 1 or None; got {count}"):
            plot_importance(model, max_num_features=count)
    # A model without a split: the error's advice, ignore_zero=False, drew an axis of zero width with matplotlib's warning.
    import warnings

    stumps = LambdaMART(n_estimators=2, min_samples_leaf=len(y), random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="ignore_zero=False draws them"):
        plot_importance(stumps)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot_importance(stumps, ignore_zero=False)
    assert ax.get_xlim() == (0.0, 1.0) and [bar.get_width() for bar in ax.patches] == [0.0] * X.shape[1]
    with pytest.raises(ValueError, match="ignore_zero must be True or False; got 'no'"):  # it read as True
        plot_importance(stumps, ignore_zero="no")


def test_plot_tree_draws_every_node_with_its_test_or_value(data):
    X, y, qid, *_ = data
    model = LambdaMART(n_estimators=3, max_leaf_nodes=6, random_state=0).fit(X, y, qid=qid)
    tree = model.trees_[1]
    ax = plot_tree(model, 1, precision=4)
    boxes = [text.get_text() for text in ax.texts if text.get_gid() is not None]
    assert [text.get_gid() for text in ax.texts if text.get_gid()] == [f"node {node}" for node in range(tree.node_count)]
    root = tree.nodes[0]
    assert boxes[0].startswith(f"feature_{root['feature']} <= {root['threshold']:.4g}")
    leaf_values = sorted(float(box.split("\n")[0].removeprefix("value = ")) for box in boxes if box.startswith("value"))
    expected = sorted(float(f"{value:.4g}") for value in tree.nodes["threshold"][tree.nodes["feature"] < 0])
    np.testing.assert_allclose(leaf_values, expected)
    shallow = plot_tree(model, 1, max_depth=1)
    assert sum(text.get_gid() is not None for text in shallow.texts) == 3
    with pytest.raises(IndexError, match="tree_index 3 is out of range: the model has 3 trees"):
        plot_tree(model, 3)
    # these failed inside Python or numpy without naming the argument, or (1.5, True) drew something
    for arguments, error, message in [
        ({"tree_index": 1.0}, TypeError, "tree_index must be an integer; got 1.0"),
        ({"tree_index": True}, TypeError, "tree_index must be an integer; got True"),
        ({"max_depth": "2"}, ValueError, "max_depth must be an integer >= 0 or None; got '2'"),
        ({"max_depth": 1.5}, ValueError, "max_depth must be an integer >= 0 or None; got 1.5"),
        ({"precision": 2.5}, ValueError, "precision must be an integer >= 0; got 2.5"),
    ]:
        with pytest.raises(error, match=message):
            plot_tree(model, **{"tree_index": 0, **arguments})
    with pytest.raises(ValueError, match="precision must be an integer >= 0; got 2.5"):
        plot_importance(model, precision=2.5)
    assert [text.get_text() for text in ax.texts if text.get_gid() is None][:2] == ["", "yes"]  # edges first


def test_plot_tree_draws_a_cumulative_models_trees_in_order(data):
    """It refused with the exports' message: its probabilities are no sum of trees, but
    each of its trees is one."""
    X, y, qid, *_ = data
    model = LambdaMART(objective="cumulative", n_estimators=2, max_leaf_nodes=4, random_state=0).fit(X, y, qid=qid)
    for index in (0, len(model.trees_) - 1):
        ax = plot_tree(model, index)
        assert sum(text.get_gid() is not None for text in ax.texts) == model.trees_[index].node_count
    with pytest.raises(IndexError, match=f"the model has {len(model.trees_)} trees"):
        plot_tree(model, len(model.trees_))


def test_plot_tree_draws_the_boosted_trees_of_a_model_whose_init_no_export_lists(data):
    """An init of scikit-learn's (or McRank) made plot_tree fail with the exports' refusal,
    though the boosted trees can be drawn."""
    from sklearn.linear_model import Ridge

    X, y, qid, *_ = data
    for init in (Ridge(), LambdaMART(objective="mcrank", n_estimators=2, random_state=0).fit(X, y, qid=qid)):
        model = LambdaMART(objective="mart", n_estimators=2, max_leaf_nodes=4, init=init, random_state=0).fit(X, y, qid=qid)
        ax = plot_tree(model, 1)
        assert sum(text.get_gid() is not None for text in ax.texts) == model.trees_[1].node_count
    with pytest.raises(TypeError, match="must be a fitted forestrank ranker"):
        plot_tree(Ridge().fit(X, y))

def test_the_query_comparison_draws_each_querys_ndcg_and_the_paired_tests(data):
    X, y, qid, X_test, y_test, qid_test = data
    forest = RFPointRanker(n_estimators=10, random_state=0).fit(X, y, qid=qid)
    boosted = LambdaMART(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    display = QueryComparisonDisplay.from_estimators(forest, boosted, X_test, y_test, qid_test)
    a = ndcg_score(y_test, forest.predict(X_test), qid_test, 10, per_query=True)
    b = ndcg_score(y_test, boosted.predict(X_test), qid_test, 10, per_query=True)
    np.testing.assert_array_equal(display.points_.get_offsets(), np.column_stack([a, b]))
    assert display.t_test.pvalue == paired_test(b, a).pvalue
    assert display.wilcoxon.pvalue == paired_test(b, a, test="wilcoxon").pvalue
    assert f"{display.t_test.pvalue:.3g}" in display.ax_.get_title() and display.ax_.get_xlabel().startswith("RFPointRanker")
    for names in (("A",), "AB", ("A", "B", "C"), 2):  # one name failed with a bare IndexError
        with pytest.raises(ValueError, match=r"names must be the two systems' names, \(name_a, name_b\)"):
            plot_query_comparison(y_test, forest.predict(X_test), boosted.predict(X_test), qid_test, names=names)
    named = plot_query_comparison(y_test, forest.predict(X_test), boosted.predict(X_test), qid_test, names=np.array(["f", "b"]))
    assert named.ax_.get_xlabel().startswith("f") and named.ax_.get_ylabel().startswith("b")
    again = plot_query_comparison(y_test, forest.predict(X_test), boosted.predict(X_test), qid_test, k=5, ties="input_order")
    np.testing.assert_array_equal(
        again.per_query_b, ndcg_score(y_test, boosted.predict(X_test), qid_test, 5, ties="input_order", per_query=True)
    )


def test_the_query_comparison_gives_qid_to_a_pipeline_that_normalises_within_queries(data):
    """``from_estimators`` called ``predict(X)``: a Pipeline with a QueryScaler refused it
    (its transform needs qid), which every scorer passes."""
    import sklearn
    from sklearn.pipeline import make_pipeline

    from forestrank import DummyRanker, QueryScaler

    X, y, qid, X_test, y_test, qid_test = data
    with sklearn.config_context(enable_metadata_routing=True):
        scaled = make_pipeline(QueryScaler(), LambdaMART(n_estimators=5, random_state=0)).fit(X, y, qid=qid)
        baseline = DummyRanker().fit(X, y, qid=qid)
        display = QueryComparisonDisplay.from_estimators(scaled, baseline, X_test, y_test, qid_test)
        expected = ndcg_score(y_test, scaled.predict(X_test, qid=qid_test), qid_test, 10, per_query=True)
    np.testing.assert_array_equal(display.per_query_a, expected)


def test_plot_tree_strength_draws_the_curve_of_tree_strength_curve(data):
    X, y, qid, X_test, y_test, qid_test = data
    forest = RFListRanker(n_estimators=4, random_state=0).fit(X, y, qid=qid)
    ax = plot_tree_strength(forest, X, y, qid, n_splits=np.arange(10), k=10, label="train")
    ax = plot_tree_strength(forest, X_test, y_test, qid_test, n_splits=np.arange(10), k=10, label="test", ax=ax)
    expected = tree_strength_curve(forest, X_test, y_test, qid_test, n_splits=np.arange(10), k=10)
    splits, values = ax.lines[-1].get_data()
    np.testing.assert_array_equal(splits, expected.n_splits)
    np.testing.assert_array_equal(values, expected.ndcg)
    assert [line.get_label() for line in ax.lines] == ["train", "test"]


def test_matplotlib_is_imported_when_a_plot_is_drawn_and_its_absence_names_the_extra():
    code = """
import sys
import forestrank.plotting
assert "matplotlib" not in sys.modules, "imported with the module"
sys.modules["matplotlib"] = None  # as if it were not installed
sys.modules["matplotlib.pyplot"] = None
from forestrank import RFPointRanker, make_ranking
X, y, qid = make_ranking(n_queries=10, random_state=0)
try:
    forestrank.plotting.plot_importance(RFPointRanker(n_estimators=2).fit(X, y, qid=qid))
except ImportError as error:
    print(error)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert 'forestrank.plotting needs matplotlib: pip install "forestrank[plot]"' in result.stdout
