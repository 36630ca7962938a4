"""Categorical features in the rankers: the codes' numbering and a DataFrame's category order
do not change the model, a DataFrame and its codes give the same model, unseen and missing
categories score alike, models pickle and save with skops, and what is not supported is
refused by name."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from forestrank import BROOF, AveragedRanker, DummyRanker, LambdaMART, QueryScaler, RFPointRanker
from forestrank.ensemble._broof import default_forest
from forestrank.ensemble._costs import nested_models
from forestrank.metrics import ndcg_score

pd = pytest.importorskip("pandas")


def _product_data(seed=0, n_queries=60, per_query=15):
    """Two categorical columns (6 and 40 categories, codes with gaps) carrying the grade,
    a missing value now and then, and a numeric feature."""
    rng = np.random.default_rng(seed)
    n = n_queries * per_query
    qid = np.repeat(np.arange(n_queries), per_query)
    brand = rng.choice(np.arange(0, 60, 10), n)
    seller = rng.integers(0, 40, n)
    price = rng.normal(size=n)
    score = rng.normal(size=60)[brand] + 0.7 * rng.normal(size=40)[seller] + 0.5 * price
    y = np.clip(np.round(score + rng.normal(scale=0.4, size=n) + 1.5), 0, 4)
    X = np.column_stack([brand, seller, price]).astype(float)
    X[rng.random(n) < 0.05, 0] = np.nan
    return X, y, qid


MODELS = [
    LambdaMART(n_estimators=15, categorical_features=[0, 1], random_state=0),
    RFPointRanker(n_estimators=15, categorical_features=[0, 1], max_features=None, random_state=0),
    RFPointRanker(n_estimators=10, criterion="variance", categorical_features=[True, True, False], random_state=0),
]


@pytest.mark.parametrize("model", MODELS, ids=["lambdamart", "rf-entropy", "rf-variance"])
def test_renumbered_codes_give_the_same_model(model):
    """Codes renumbered by a bijection (order reversed, gaps moved) give the same scores on
    the renumbered rows, bit for bit: a categorical split depends on the categories'
    statistics only. Categories whose keys tie are ordered by code, so the forests, whose
    keys are mean grades, are fitted with real-valued row weights (no ties)."""
    X, y, qid = _product_data()
    weights = np.random.default_rng(9).uniform(0.5, 2.0, len(y))
    X_renumbered = _renumbered(X)
    first = model.fit(X, y, qid, sample_weight=weights).predict(X)
    second = model.fit(X_renumbered, y, qid, sample_weight=weights).predict(X_renumbered)
    np.testing.assert_array_equal(first, second)
    assert model.trees_[0].has_categories


def _renumbered(X):
    """``X`` with the codes of its two categorical columns renumbered by a bijection."""
    renumbered = X.copy()
    for column in (0, 1):
        mapping = np.random.default_rng(column).permutation(200)[:100]
        present = ~np.isnan(X[:, column])
        renumbered[present, column] = mapping[X[present, column].astype(int)]
    return renumbered


def test_broof_rounds_split_on_the_forests_categories():
    """BROOF's forests take the template's ``categorical_features``: every round splits on
    categories, renumbered codes give the same model bit for bit (real-valued weights, as
    above), and the categories rank held-out queries better than their codes as numbers."""
    X, y, qid = _product_data(3, n_queries=120)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, len(y))
    forest = RFPointRanker(criterion="variance", min_samples_leaf=0.02, categorical_features=[0, 1])
    model = BROOF(n_estimators=3, n_trees=15, forest=forest, random_state=0)
    first = model.fit(X, y, qid, sample_weight=weights).predict(X)
    np.testing.assert_array_equal(model.is_categorical_, [True, True, False])
    assert all(any(tree.has_categories for tree in round_forest.trees_) for round_forest in model.estimators_)
    second = model.fit(_renumbered(X), y, qid, sample_weight=weights).predict(_renumbered(X))
    np.testing.assert_array_equal(first, second)
    train, test = qid < 80, qid >= 80
    native = model.fit(X[train], y[train], qid[train]).score(X[test], y[test], qid[test])
    ordinal = model.set_params(forest=forest.set_params(categorical_features=None)).fit(X[train], y[train], qid[train])
    assert native > ordinal.score(X[test], y[test], qid[test]) + 0.02


def test_a_frame_of_categories_is_its_codes(tmp_path):
    """``"from_dtype"`` on a DataFrame of string categories gives the model of the codes
    with ``categorical_features`` as indices; at predict, a frame whose categories come in
    another order is read by value, and a category the fit never saw scores as missing;
    the skops file keeps the categories (``frame_categories_``)."""
    X, y, qid = _product_data(1)
    codes = np.where(np.isnan(X[:, 0]), -1, X[:, 0] // 10).astype(int)
    names = np.array(["acme", "bolt", "crux", "dyna", "echo", "flux"])
    frame = pd.DataFrame({
        "brand": pd.Categorical.from_codes(codes, categories=names),
        "seller": pd.Categorical(X[:, 1].astype(int)),
        "price": X[:, 2],
    })  # fmt: skip
    encoded = np.column_stack([np.where(codes < 0, np.nan, codes), X[:, 1], X[:, 2]])
    from_frame = LambdaMART(n_estimators=10, categorical_features="from_dtype", random_state=0).fit(frame, y, qid)
    from_codes = LambdaMART(n_estimators=10, categorical_features=[0, 1], random_state=0).fit(encoded, y, qid)
    np.testing.assert_array_equal(from_frame.is_categorical_, [True, True, False])
    np.testing.assert_array_equal(from_frame.predict(frame), from_codes.predict(encoded))
    reordered = frame.assign(brand=frame["brand"].cat.reorder_categories(names[::-1]))
    np.testing.assert_array_equal(from_frame.predict(reordered), from_frame.predict(frame))
    unseen = frame.iloc[:5].assign(brand=pd.Categorical(["zeta"] * 5))
    missing = frame.iloc[:5].assign(brand=pd.Categorical([None] * 5, categories=names))
    np.testing.assert_array_equal(from_frame.predict(unseen), from_frame.predict(missing))
    named = LambdaMART(n_estimators=10, categorical_features=["brand", "seller"], random_state=0).fit(frame, y, qid)
    np.testing.assert_array_equal(named.predict(frame), from_frame.predict(frame))
    assert from_frame.frame_categories_[0] == list(names)
    pytest.importorskip("skops")
    from forestrank.persistence import load, save

    save(from_frame, tmp_path / "model.skops")
    np.testing.assert_array_equal(load(tmp_path / "model.skops").predict(reordered), from_frame.predict(frame))


class _Frame(pd.DataFrame):
    """A DataFrame subclass of the caller's (as geopandas' and others' are)."""

    @property
    def _constructor(self):
        return _Frame


def test_a_dataframe_subclass_is_a_frame():
    """Frames were recognised by their class's name: a subclass's category columns were
    neither found by "from_dtype" nor encoded, and its text failed to convert."""
    X, y, qid = _fruit_frame(["apple", "banana", "cherry"], 1)
    model = LambdaMART(n_estimators=3, categorical_features="from_dtype", random_state=0)
    expected = clone(model).fit(X, y, qid).predict(X)
    fitted = model.fit(_Frame(X), y, qid)
    np.testing.assert_array_equal(fitted.is_categorical_, [True, False])
    assert fitted.frame_categories_ == {0: ["apple", "banana", "cherry"]}
    np.testing.assert_array_equal(fitted.predict(_Frame(X)), expected)
    np.testing.assert_array_equal(fitted.predict(X), expected)


def test_a_polars_frame_is_its_pandas_twin():
    """``"from_dtype"`` on a polars frame: an ``Enum`` column numbered by its categories and a
    ``Categorical`` one by its sorted values give the model of the pandas frame holding
    those categories; unseen and missing values score alike."""
    pl = pytest.importorskip("polars")
    X, y, qid = _product_data(1)
    names = ["flux", "echo", "dyna", "crux", "bolt", "acme"]  # the Enum's order, not sorted
    brand = [None if np.isnan(code) else names[int(code) // 10] for code in X[:, 0]]
    seller = [f"seller {int(code):02d}" for code in X[:, 1]]
    polars_frame = pl.DataFrame({
        "brand": pl.Series(brand, dtype=pl.Enum(names)), "seller": pl.Series(seller, dtype=pl.Categorical),
        "price": X[:, 2],
    })  # fmt: skip
    pandas_frame = pd.DataFrame({
        "brand": pd.Categorical(brand, categories=names), "seller": pd.Categorical(seller, categories=sorted(set(seller))),
        "price": X[:, 2],
    })  # fmt: skip
    model = LambdaMART(n_estimators=10, categorical_features="from_dtype", random_state=0)
    from_polars = model.fit(polars_frame, y, qid).predict(polars_frame)
    assert model.frame_categories_ == {0: names, 1: sorted(set(seller))}
    np.testing.assert_array_equal(model.is_categorical_, [True, True, False])
    np.testing.assert_array_equal(from_polars, model.fit(pandas_frame, y, qid).predict(pandas_frame))
    model.fit(polars_frame, y, qid)
    unseen = polars_frame.head(5).with_columns(pl.Series("brand", ["zeta"] * 5, dtype=pl.Categorical))
    missing = polars_frame.head(5).with_columns(pl.Series("brand", [None] * 5, dtype=pl.Enum(names)))
    np.testing.assert_array_equal(model.predict(unseen), model.predict(missing))


def test_a_column_of_text_for_numeric_categories_is_refused_and_numbers_for_text_match_as_text():
    """A pandas fit of the categories 10, 20, 30 predicting a polars ``Categorical`` or
    ``Enum`` column failed in polars' cast ("casting from i64 to cat is not supported"), and
    a pandas column of text scored every row as unseen; a text fit's pandas column of
    numbers scored every row as unseen where polars matched it as text."""
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(0)
    numbers = rng.choice([10, 20, 30], 300)
    y, qid = np.where(numbers == 20, 2, rng.integers(0, 2, 300)), np.sort(rng.integers(0, 20, 300))
    X = pd.DataFrame({"b": rng.normal(size=300), "a": pd.Categorical(numbers)})
    model = LambdaMART(n_estimators=3, categorical_features="from_dtype", random_state=0).fit(X, y, qid)
    expected = model.predict(X)
    np.testing.assert_array_equal(model.predict(pl.from_pandas(X.assign(a=numbers))), expected)
    text = numbers.astype(str)
    for column in (pl.Series("a", text, dtype=pl.Categorical), pl.Series("a", text, dtype=pl.Enum(["10", "20", "30"]))):
        with pytest.raises(ValueError, match=r"column 'a' of X holds text, and the model's categories of it are numbers \(10, 20, 30\)"):
            model.predict(pl.DataFrame({"b": X["b"].to_numpy()}).with_columns(column))
    with pytest.raises(ValueError, match="column 'a' of X holds text"):
        model.predict(X.assign(a=pd.Categorical(text)))
    on_text = LambdaMART(n_estimators=3, categorical_features="from_dtype", random_state=0).fit(X.assign(a=pd.Categorical(text)), y, qid)
    np.testing.assert_array_equal(on_text.predict(X.assign(a=numbers)), expected)
    np.testing.assert_array_equal(on_text.predict(pl.from_pandas(X.assign(a=numbers))), expected)
    # integers with a missing value (float in pandas, 20.0 read as "20"), as polars' Int64 with a null
    gapped = X.assign(a=np.where(np.arange(300) == 0, np.nan, numbers))
    scored = on_text.predict(gapped)
    np.testing.assert_array_equal(scored[1:], expected[1:])
    nullable = pl.from_pandas(X).with_columns(pl.Series("a", [None, *numbers[1:].tolist()], dtype=pl.Int64))
    np.testing.assert_array_equal(on_text.predict(nullable), scored)
    np.testing.assert_array_equal(on_text.predict(pl.from_pandas(gapped, nan_to_null=True)), scored)


@pytest.mark.parametrize("missing_code", [np.nan, -1.0])
@pytest.mark.parametrize("model", MODELS, ids=["lambdamart", "rf-entropy", "rf-variance"])
def test_a_categorical_column_of_missing_codes_alone_is_a_constant_feature(model, missing_code):
    """Every code missing (NaN or negative) is one missing category: the column never splits,
    and the model is the one fitted with the column as a numeric column of missing values
    (it raised an IndexError); codes the fit did not see score as that category."""
    from sklearn.base import clone

    X, y, qid = _product_data()
    X[:, 0] = missing_code
    numeric_X = np.where(X == -1.0, np.nan, X)
    categorical = clone(model).fit(X, y, qid=qid)
    numeric = clone(model).set_params(categorical_features=[1]).fit(numeric_X, y, qid=qid)
    np.testing.assert_array_equal(categorical.predict(X), numeric.predict(numeric_X))
    seen_elsewhere = X.copy()
    seen_elsewhere[:, 0] = np.arange(len(X)) % 7
    np.testing.assert_array_equal(categorical.predict(seen_elsewhere), categorical.predict(X))


@pytest.mark.parametrize("model", MODELS[:2], ids=["lambdamart", "rf-entropy"])
def test_unseen_codes_score_as_missing_and_models_pickle(model):
    X, y, qid = _product_data(2)
    model.fit(X, y, qid)
    rows = X[:20].copy()
    rows[:, 0] = np.nan
    expected = model.predict(rows)
    for unseen in (5.0, 65.0, -1.0, 70_000.0):  # between codes, past them, negative, past the bound
        rows[:, 0] = unseen
        np.testing.assert_array_equal(model.predict(rows), expected)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    staged = list(loaded.staged_predict(X))[-1] if hasattr(loaded, "staged_predict") else loaded.predict(X)
    np.testing.assert_allclose(staged, model.predict(X), rtol=1e-12)


def test_categories_beat_their_ordinal_codes():
    """On data whose categories carry the grade in no order of their codes, both rankers rank
    held-out queries better with the columns categorical than as the same codes taken as numbers."""
    X, y, qid = _product_data(3, n_queries=120)
    train, test = qid < 80, qid >= 80
    for model in (LambdaMART(n_estimators=40, random_state=0), RFPointRanker(n_estimators=60, random_state=0)):
        ordinal = model.set_params(categorical_features=None).fit(X[train], y[train], qid[train])
        ordinal_ndcg = ordinal.score(X[test], y[test], qid[test])
        native = model.set_params(categorical_features=[0, 1]).fit(X[train], y[train], qid[train])
        assert native.score(X[test], y[test], qid[test]) > ordinal_ndcg + 0.02


@pytest.mark.parametrize(
    "model, message",
    [
        (LambdaMART(grow_policy="symmetric", categorical_features=[0]), "grow_policy='symmetric'"),
        (LambdaMART(quantized_gradients=4, categorical_features=[0]), "quantized_gradients"),
        (LambdaMART(monotonic_cst=[1, 0, 0], categorical_features=[0]), "monotone constraint"),
        (RFPointRanker(criterion="random", categorical_features=[0]), "criterion='random'"),
        (BROOF(forest=RFPointRanker(criterion="random", categorical_features=[0])), "criterion='random'"),
        (LambdaMART(categorical_features=[3]), r"indices must be in \[0, 3\)"),
        (LambdaMART(categorical_features=["brand"]), "no feature names"),
        (LambdaMART(categorical_features=[True]), "one entry per feature"),
    ],
)
def test_what_is_not_supported_is_refused_by_name(model, message):
    X, y, qid = _product_data()
    with pytest.raises(ValueError, match=message):
        model.set_params(n_estimators=2).fit(X, y, qid)


def test_a_frames_category_column_past_the_codes_bound_is_named_with_its_remedy():
    """It was refused as "holds the code 69999 ... Number the categories 0, 1, 2, ... (pandas
    'category' columns are)", advice a category column already follows."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    y, qid = rng.integers(0, 3, 200), np.repeat(np.arange(10), 20)
    declared = range(70_000)
    used_late = pd.DataFrame({"sku": pd.Categorical([0, 69_999] * 100, categories=declared), "price": rng.normal(size=200)})
    with pytest.raises(ValueError, match=r"column 'sku' of X has 70,000 categories .* remove_unused_categories"):
        LambdaMART(n_estimators=2, categorical_features="from_dtype").fit(used_late, y, qid=qid)
    used_early = used_late.assign(sku=pd.Categorical([0, 5] * 100, categories=declared))
    assert LambdaMART(n_estimators=2, categorical_features="from_dtype").fit(used_early, y, qid=qid).n_iter_ == 2


def test_codes_must_be_integers():
    X, y, qid = _product_data()
    model = LambdaMART(n_estimators=3, categorical_features=[0, 1], random_state=0)
    fractional = X.copy()
    fractional[3, 1] = 2.5
    with pytest.raises(ValueError, match="categorical feature 1 of X holds 2.5"):
        model.fit(fractional, y, qid)
    large = X.copy()
    large[3, 1] = 70_000
    with pytest.raises(ValueError, match="codes go up to 65535"):
        model.fit(large, y, qid)
    model.fit(X, y, qid)
    with pytest.raises(ValueError, match="categorical feature 1 of X holds 2.5"):
        model.predict(fractional)
    negative = X.copy()
    negative[:, 0] = -4
    as_missing = X.copy()
    as_missing[:, 0] = np.nan
    np.testing.assert_array_equal(model.predict(negative), model.predict(as_missing))
    assert X[0, 0] != -4  # the caller's X is not modified
    # A frame's column is named (docs/categorical.md); it was called by its position only.
    frame = pd.DataFrame(fractional, columns=["shop", "brand", *(f"f{i}" for i in range(2, X.shape[1]))])
    with pytest.raises(ValueError, match=r"categorical feature 'brand' \(column 1\) of X holds 2.5"):
        LambdaMART(n_estimators=3, categorical_features=["shop", "brand"]).fit(frame, y, qid)
    with pytest.raises(ValueError, match=r"categorical feature 'brand' \(column 1\) of X holds the code 70000"):
        LambdaMART(n_estimators=3, categorical_features=["shop", "brand"]).fit(frame.assign(brand=large[:, 1]), y, qid)


def test_target_statistics_of_a_column_of_missing_codes_alone():
    """No code seen: the column's statistics are missing on every row (it raised an
    IndexError); codes seen only later get the prior, as any unseen code; the model
    pickles and exports to ONNX."""
    X, y, qid = _product_data()
    X[:, 0] = np.nan
    model = LambdaMART(n_estimators=5, categorical_features=[0, 1], cat_target_statistics=True, random_state=0)
    model.fit(X, y, qid)
    tables = model.target_statistics_
    assert len(tables[0][0]) == 0
    later = X[:20].copy()
    later[:, 0] = np.arange(20) % 3
    np.testing.assert_array_equal(model.predict(later), model.predict(X[:20]))
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(later), model.predict(later))
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs forestrank[onnx]")
    from forestrank.export import to_onnx

    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString())
    (scores,) = session.run(None, {"X": later})
    np.testing.assert_allclose(scores, model.predict(later), rtol=1e-6, atol=1e-7)


def test_target_statistics_beside_the_categories():
    """``cat_target_statistics``: renumbered codes give the same model bit for bit (the orders
    are of rows, not codes); the statistics' gains count for their features' importances;
    the tables survive pickling and are checked at load; evaluation sets and early
    stopping read the statistics of every training row."""
    X, y, qid = _product_data()
    model = LambdaMART(n_estimators=15, categorical_features=[0, 1], cat_target_statistics=True, random_state=0)
    first = model.fit(X, y, qid).predict(X)
    second = model.fit(_renumbered(X), y, qid).predict(_renumbered(X))
    np.testing.assert_array_equal(first, second)
    model.fit(X, y, qid)
    gains = np.sum([tree.feature_gains for tree in model.trees_], axis=0)
    assert len(gains) == 5 and gains[3:].sum() > 0  # the trees split on the statistics
    expected = gains[:3] + np.r_[gains[3:], 0.0]
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum())
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    state = model.__getstate__()
    state["target_statistics_"] = state["target_statistics_"][:1]
    with pytest.raises(ValueError, match="not a model forestrank saved"):
        LambdaMART().__setstate__(state)
    stopped = LambdaMART(
        n_estimators=30, categorical_features=[0, 1], cat_target_statistics=True, n_iter_no_change=3, random_state=0
    ).fit(X, y, qid, eval_set=[(X[:300], y[:300], qid[:300])])
    assert len(stopped.evals_result_["valid_0"]["ndcg@10"]) >= stopped.n_iter_


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_an_unseen_category_of_a_frame_reads_the_prior_as_an_unseen_code_does(frame):
    """A category the fit never saw, given in a frame, got the statistics of a missing
    value (NaN) where the same category as an unseen code got the prior (docs/categorical.md,
    "Target statistics"): one model, two scores for one row."""
    pd = pytest.importorskip("pandas")
    X, y, qid = _product_data()
    names = np.array([f"seller {code}" for code in range(40)])
    fitted = pd.DataFrame({"seller": pd.Categorical(names[X[:, 1].astype(int)], categories=names), "price": X[:, 2]})
    model = LambdaMART(n_estimators=10, categorical_features="from_dtype", cat_target_statistics=True, random_state=0)
    model.fit(fitted, y, qid)
    later = {"seller": ["never seen", None, names[7]], "price": [0.5, 0.5, 0.5]}
    if frame == "pandas":
        rows = pd.DataFrame(later).astype({"seller": "category"})
    else:
        pl = pytest.importorskip("polars")
        rows = pl.DataFrame(later).with_columns(pl.col("seller").cast(pl.Categorical))
    codes = np.array([[45, 0.5], [np.nan, 0.5], [7, 0.5]])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        expected = model.predict(codes)
    np.testing.assert_array_equal(model.predict(rows), expected)
    assert expected[0] != expected[1]  # the prior is not the missing value's statistic here


@pytest.mark.parametrize(
    "parameters, message",
    [
        ({"init": RFPointRanker(n_estimators=2)}, "init"),
        ({"feature_costs": [1.0, 1.0, 1.0]}, "feature_costs"),
        ({"monotonic_cst": [0, 0, 1]}, "monotonic_cst"),
        ({"interaction_cst": [[0, 1], [2]]}, "interaction_cst"),
    ],
)
def test_target_statistics_refuse_what_reads_the_columns(parameters, message):
    X, y, qid = _product_data()
    model = LambdaMART(n_estimators=2, categorical_features=[0, 1], cat_target_statistics=True, **parameters)
    with pytest.raises(ValueError, match=f"cat_target_statistics=True cannot be combined with {message}"):
        model.fit(X, y, qid)


def test_target_statistics_refuse_sparse_rows_in_fit_and_predict():
    """The one exception to "every ranker takes scipy.sparse" (``docs/missing_values.md``):
    the statistics' columns are appended to dense rows."""
    import scipy.sparse

    X, y, qid = _product_data()
    model = LambdaMART(n_estimators=2, categorical_features=[0, 1], cat_target_statistics=True, random_state=0)
    with pytest.raises(ValueError, match="cat_target_statistics=True needs a dense X"):
        clone(model).fit(scipy.sparse.csr_matrix(X), y, qid)
    model.fit(X, y, qid)
    with pytest.raises(ValueError, match="a model fitted with cat_target_statistics=True scores a dense X"):
        model.predict(scipy.sparse.csr_matrix(X))


def test_target_statistics_tag_the_ranker_as_taking_no_sparse_input():
    """scikit-learn's ``input_tags.sparse`` said True for a ranker that refuses sparse X,
    and the wrappers that take their tags from it repeated it."""
    from sklearn.utils import get_tags

    from forestrank import AveragedRanker, CalibratedRanker, PLRank

    for ranker in (LambdaMART, PLRank):
        assert get_tags(ranker()).input_tags.sparse
        dense_only = ranker(categorical_features=[0], cat_target_statistics=True)
        assert not get_tags(dense_only).input_tags.sparse
        assert not get_tags(AveragedRanker(dense_only)).input_tags.sparse
        assert not get_tags(CalibratedRanker(dense_only)).input_tags.sparse


@pytest.mark.parametrize("fitted", [False, True])
def test_an_init_fitted_with_target_statistics_is_refused_by_name(fitted):
    """Its trees read the statistics' columns past the features: the boosted model's feature
    costs failed with a broadcasting error ("shapes (4,) (5,)")."""
    X, y, qid = _product_data()
    init = LambdaMART(n_estimators=2, categorical_features=[0, 1], cat_target_statistics=True, random_state=0)
    if fitted:
        init.fit(X, y, qid)
    with pytest.raises(ValueError, match="init: this LambdaMART was fitted with cat_target_statistics=True"):
        LambdaMART(n_estimators=2, init=init).fit(X, y, qid)


def _fruit_frame(categories, seed, n_rows=600):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": pd.Categorical(rng.choice(categories, n_rows)), "b": rng.normal(size=n_rows)})
    y = (X["a"] == categories[1]).to_numpy() * 3 + rng.integers(0, 2, n_rows)
    return X, y, np.sort(rng.integers(0, 30, n_rows))


def test_a_fitted_init_of_other_categories_is_refused_and_of_the_same_reads_its_own():
    """A fitted init was handed the booster's category codes by position: fitted on
    apple/banana/cherry and boosted on banana/cherry/date, "cherry" got the init's
    "banana" score and the unseen "date" its "cherry" score, in predict and every export."""
    source = _fruit_frame(["apple", "banana", "cherry"], 1)
    init = RFPointRanker(n_estimators=3, categorical_features="from_dtype", max_depth=3, random_state=0).fit(*source)
    model = LambdaMART(n_estimators=1, learning_rate=1e-9, init=init, categorical_features="from_dtype")
    with pytest.raises(ValueError, match=r"init was fitted with the categories \['apple', 'banana', 'cherry'\] of column 'a'"):
        model.fit(*_fruit_frame(["banana", "cherry", "date"], 2))
    with pytest.raises(ValueError, match="init was fitted with the categorical columns 'a' and this fit has none"):
        LambdaMART(n_estimators=1, init=init).fit(source[0].assign(a=source[0]["a"].cat.codes), *source[1:])
    averaged = AveragedRanker(RFPointRanker(n_estimators=2, categorical_features="from_dtype", max_depth=3), n_models=2)
    averaged.fit(*source)
    with pytest.raises(ValueError, match="init was fitted with the categories"):  # members checked through the average
        LambdaMART(n_estimators=1, init=averaged, categorical_features="from_dtype").fit(*_fruit_frame(["banana", "cherry", "date"], 2))
    model.fit(*_fruit_frame(["apple", "banana", "cherry"], 2))  # the same categories
    probe = pd.DataFrame({"a": pd.Categorical(["banana", "cherry", "apple"]), "b": 0.0})
    np.testing.assert_allclose(model.predict(probe), init.predict(probe), rtol=1e-6)


def test_a_warm_start_on_a_frame_of_other_categories_is_refused():
    """The refit replaced ``frame_categories_``, so the first trees' codes named other
    categories: "cherry" got the old trees' "banana" score."""
    source = _fruit_frame(["apple", "banana", "cherry"], 1)
    model = RFPointRanker(n_estimators=2, categorical_features="from_dtype", warm_start=True, random_state=0).fit(*source)
    probe = pd.DataFrame({"a": pd.Categorical(["banana", "cherry", "apple"]), "b": 0.0})
    before = model.predict(probe)
    model.set_params(n_estimators=4)
    with pytest.raises(ValueError, match=r"feature 0 was numbered by the categories \['apple', 'banana', 'cherry'\] in the"):
        model.fit(*_fruit_frame(["banana", "cherry", "date"], 2))
    with pytest.raises(ValueError, match="numbered by the categories .* and by its own integer codes in X"):
        model.set_params(categorical_features=["a"]).fit(source[0].assign(a=source[0]["a"].cat.codes), *source[1:])
    assert model.frame_categories_ == {0: ["apple", "banana", "cherry"]}
    np.testing.assert_array_equal(model.predict(probe), before)  # the refusals changed nothing
    model.fit(*_fruit_frame(["apple", "banana", "cherry"], 2))  # the same categories grow on
    assert len(model.trees_) == 4


@pytest.mark.parametrize("columns", [["b"], ["a"]])
def test_a_frame_lacking_a_column_is_refused_by_name_before_its_categories_are_read(columns):
    """A frame lacking a fitted column failed with pandas' bare "single positional indexer
    is out-of-bounds" when the category column's position was past its width."""
    X, y, qid = _fruit_frame(["apple", "banana", "cherry"], 1)
    X = X[["b", "a"]]  # the category column last
    model = LambdaMART(n_estimators=2, categorical_features="from_dtype", random_state=0).fit(X, y, qid)
    with pytest.raises(ValueError, match="The feature names should match those that were passed during fit"):
        model.predict(X[columns])


def test_a_fitted_scikit_learn_init_is_refused_when_a_frames_categories_are_encoded():
    """A scikit-learn init fitted on the frame was handed the category column as codes:
    its ordinal encoding of the values then read them as unknown categories (or, of
    numeric categories, as other ones). Fitted on an array of the codes, it is served."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, qid = _fruit_frame(["apple", "banana", "cherry"], 1)
    init = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype").fit(X, y)
    with pytest.raises(ValueError, match=r"init: a fitted HistGradientBoostingRegressor would be handed the category column\(s\) 'a'"):
        LambdaMART(n_estimators=1, init=init, categorical_features="from_dtype").fit(X, y, qid)
    codes = np.column_stack([X["a"].cat.codes, X["b"]])
    on_codes = HistGradientBoostingRegressor(max_iter=5, categorical_features=[0]).fit(codes, y)
    model = LambdaMART(n_estimators=1, learning_rate=1e-9, init=on_codes, categorical_features=[0]).fit(codes, y, qid)
    np.testing.assert_allclose(model.predict(codes), on_codes.predict(codes), rtol=1e-6)


def test_an_unfitted_init_takes_the_categorical_columns_and_serves_as_lightgbm_does():
    """The init was fitted on the booster's codes with "from_dtype", which found no category
    column there: it split the codes as numbers, and an unseen category (code past the
    list) scored otherwise than missing, as LightGBM's export of the same model scores it."""
    lightgbm = pytest.importorskip("lightgbm")
    from forestrank.export import to_lightgbm

    X, y, qid = _fruit_frame([f"c{i}" for i in range(12)], 1)
    init = RFPointRanker(n_estimators=2, categorical_features="from_dtype", max_depth=3, random_state=0)
    model = LambdaMART(n_estimators=3, init=init, categorical_features="from_dtype", random_state=0).fit(X, y, qid)
    np.testing.assert_array_equal(model.init_.is_categorical_, [True, False])
    probe = pd.DataFrame({"a": pd.Categorical(["zz", None, "c1"]), "b": [0.3, 0.3, 0.3]})  # unseen, missing, seen
    ours = model.predict(probe)
    assert ours[0] == ours[1]
    np.testing.assert_allclose(lightgbm.Booster(model_str=to_lightgbm(model)).predict(probe), ours, rtol=1e-9)
    named = LambdaMART(n_estimators=3, init=clone(init).set_params(categorical_features=["a"]), categorical_features="from_dtype")
    np.testing.assert_array_equal(named.set_params(random_state=0).fit(X, y, qid).predict(probe), ours)  # the same columns
    with pytest.raises(ValueError, match="leave its categorical_features at None or 'from_dtype', or name this fit's. Got \\['b'\\]"):
        LambdaMART(n_estimators=1, init=clone(init).set_params(categorical_features=["b"]), categorical_features=[0]).fit(X, y, qid)


def test_an_unfitted_broof_or_averaged_init_takes_the_categorical_columns_through_its_inner_ranker():
    """An unfitted BROOF init failed with scikit-learn's "Invalid parameter
    'categorical_features' for estimator BROOF" (its read-only property was taken for the
    parameter), and an AveragedRanker's members split the codes as numbers. Each reaches
    its forest or members, at any depth, and a setting naming other columns is refused."""
    X, y, qid = _fruit_frame([f"c{i}" for i in range(12)], 1)
    forest = RFPointRanker(n_estimators=2, criterion="variance", max_depth=3, random_state=0)
    inits = {
        "BROOF": BROOF(n_estimators=2, n_trees=2, forest=forest, random_state=0),
        "BROOF of the default forest": BROOF(n_estimators=2, n_trees=2, random_state=0),
        "AveragedRanker": AveragedRanker(forest.set_params(max_features=0.5), n_models=2, random_state=0),
        "AveragedRanker of BROOFs": AveragedRanker(BROOF(n_estimators=2, n_trees=2, forest=forest), n_models=2, random_state=0),
    }
    for name, init in inits.items():
        model = LambdaMART(n_estimators=1, init=init, categorical_features="from_dtype", random_state=0).fit(X, y, qid)
        fitted = [part for part in nested_models(model.init_) if getattr(part, "trees_", None)]
        assert fitted and all(part.is_categorical_.tolist() == [True, False] for part in fitted), name
    assert forest.categorical_features is None and inits["BROOF"].forest is forest  # the caller's inits unchanged
    other = AveragedRanker(clone(forest).set_params(categorical_features=["b"]), n_models=2)
    with pytest.raises(ValueError, match="leave its categorical_features at None or 'from_dtype', or name this fit's"):
        LambdaMART(n_estimators=1, init=other, categorical_features="from_dtype").fit(X, y, qid)


def test_exports_refuse_target_statistics():
    from forestrank.export import to_lightgbm

    X, y, qid = _product_data()
    model = LambdaMART(n_estimators=2, categorical_features=[0, 1], cat_target_statistics=True).fit(X, y, qid)
    with pytest.raises(ValueError, match="cat_target_statistics=True"):
        to_lightgbm(model)


@pytest.mark.parametrize(
    "column",
    [
        pd.date_range("2020-01-01", periods=600),
        pd.date_range("2020-01-01", periods=600, tz="UTC"),
        pd.to_timedelta(np.arange(600), unit="s"),
        pd.period_range("2020-01", periods=600, freq="D"),
        pd.interval_range(0, 600),
    ],
    ids=["datetime", "datetime-tz", "timedelta", "period", "interval"],
)
@pytest.mark.parametrize("categorical_features", [None, "from_dtype"])
def test_a_column_of_dates_is_refused_naming_it(column, categorical_features):
    """numpy's conversion failed naming no column: "float() argument must be a string or a
    real number, not 'Timestamp'" or a DTypePromotionError."""
    from forestrank.preprocessing import QueryScaler
    from forestrank.transfer import ModelFeatures

    X, y, qid = _fruit_frame(["apple", "banana", "cherry"], 1)
    numeric = X.assign(a=X["a"].cat.codes)
    X = numeric if categorical_features is None else X
    model = LambdaMART(n_estimators=2, categorical_features=categorical_features).fit(X, y, qid)
    on_numbers = LambdaMART(n_estimators=2).fit(numeric, y, qid)
    message = r"column\(s\) 'when' \(.*\) of X hold dates, times, durations, periods or intervals"
    for fit in (
        lambda: LambdaMART(n_estimators=2, categorical_features=categorical_features).fit(X.assign(when=column), y, qid),
        lambda: RFPointRanker(n_estimators=2, categorical_features=categorical_features).fit(X.assign(when=column), y, qid),
        lambda: QueryScaler().fit(numeric.assign(when=column), qid=qid),
        lambda: ModelFeatures(on_numbers).fit(numeric.assign(when=column)),
        lambda: model.predict(X.assign(when=column)),
    ):
        with pytest.raises(ValueError, match=message):
            fit()


def test_a_polars_column_of_dates_is_refused_naming_it():
    pl = pytest.importorskip("polars")
    X, y, qid = _fruit_frame(["apple", "banana", "cherry"], 1)
    frame = pl.from_pandas(X).with_columns(pl.Series("when", pd.date_range("2020-01-01", periods=600)))
    with pytest.raises(ValueError, match=r"column\(s\) 'when' \(Datetime.*\) of X hold dates"):
        LambdaMART(n_estimators=2, categorical_features="from_dtype").fit(frame, y, qid)


@pytest.mark.parametrize("make", [lambda: LambdaMART(n_estimators=2), lambda: RFPointRanker(n_estimators=2)])
def test_a_text_category_column_without_categorical_features_names_the_column_and_the_parameter(make):
    """The default ``categorical_features=None`` reads every column as a number: a column of
    text categories failed with "could not convert string to float: 'x'" alone, naming
    neither the column nor the parameter that splits on it."""
    rng = np.random.default_rng(0)
    colours = rng.choice(["red", "blue"], 40)
    frame = pd.DataFrame({"score": rng.random(40), "colour": pd.Categorical(colours)})
    y, qid = rng.integers(0, 3, 40), np.repeat(np.arange(8), 5)
    with pytest.raises(ValueError, match=r"column\(s\) 'colour' of X hold categories: pass categorical_features='from_dtype'"):
        make().fit(frame, y, qid=qid)
    assert make().set_params(categorical_features="from_dtype").fit(frame, y, qid=qid).is_categorical_.tolist() == [False, True]
    text = frame.assign(colour=colours)  # pandas' default text column, as read from a CSV
    with pytest.raises(ValueError, match=r"column\(s\) 'colour' of X hold text: convert them to a category dtype"):
        make().fit(text, y, qid=qid)
    # named in categorical_features, a text column failed with the bare conversion error
    with pytest.raises(ValueError, match=r"column\(s\) 'colour' of X hold text: convert them to a category dtype"):
        make().set_params(categorical_features=["colour"]).fit(text, y, qid=qid)
    with pytest.raises(ValueError, match="infinity") as caught:  # another error of X keeps its own message
        make().fit(frame.assign(colour=np.inf), y, qid=qid)
    assert "categor" not in str(caught.value)


def test_broofs_and_averaged_rankers_advice_for_a_category_column_names_their_inner_parameter():
    """BROOF and AveragedRanker were told to pass categorical_features, which they do not
    take (their forest and members do)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"score": rng.random(40), "colour": pd.Categorical(rng.choice(["red", "blue"], 40))})
    y, qid = rng.integers(0, 3, 40), np.repeat(np.arange(8), 5)
    advice = r"'colour' of X hold categories: give its forest categorical_features='from_dtype' or their names \(the "
    with pytest.raises(ValueError, match=advice):
        BROOF(n_estimators=2, n_trees=2).fit(frame, y, qid=qid)
    forest = RFPointRanker(criterion="variance", min_samples_leaf=0.02, categorical_features="from_dtype")
    assert forest.get_params() == default_forest().set_params(categorical_features="from_dtype").get_params()
    assert BROOF(n_estimators=2, n_trees=2, forest=forest).fit(frame, y, qid=qid).is_categorical_.tolist() == [False, True]
    # an AveragedRanker was told to pass categorical_features, its members' parameter
    advice = r"hold categories: give its members categorical_features='from_dtype' or their names \(estimator=LambdaMART\("
    with pytest.raises(ValueError, match=advice + r"categorical_features='from_dtype', max_features=0.3, subsample=0.5\)\)"):
        AveragedRanker(n_models=2).fit(frame, y, qid=qid)
    with pytest.raises(ValueError, match=advice + r"categorical_features='from_dtype', n_estimators=2\)\)"):
        AveragedRanker(LambdaMART(n_estimators=2), n_models=2).fit(frame, y, qid=qid)


@pytest.mark.parametrize(
    "fit", [lambda X, y, qid: DummyRanker().fit(X, y, qid=qid), lambda X, y, qid: QueryScaler().fit(X, qid=qid)]
)
def test_an_estimator_taking_numbers_only_names_a_category_or_text_column(fit):
    """DummyRanker and QueryScaler split on no category: a category or text column failed
    with "could not convert string to float" alone, naming no column."""
    rng = np.random.default_rng(0)
    colours = rng.choice(["red", "blue"], 40)
    frame = pd.DataFrame({"score": rng.random(40), "colour": pd.Categorical(colours)})
    y, qid = rng.integers(0, 3, 40), np.repeat(np.arange(8), 5)
    for X in (frame, frame.assign(colour=colours)):
        with pytest.raises(ValueError, match=r"column\(s\) 'colour' of X hold categories or text: encode them as numbers"):
            fit(X, y, qid)


def test_target_statistics_are_learned_without_the_hold_out(held_out_queries):
    """The ordered statistics were computed over every row before the ``validation_fraction``
    queries were held out: the training rows' columns carried the held-out labels (other
    labels there grew other trees) and the hold-out was scored with statistics that
    ``predict`` would not give it, which moved the curve early stopping reads."""
    X, y, qid = _product_data(n_queries=80)
    held = held_out_queries
    params = dict(
        n_estimators=6, n_iter_no_change=50, validation_fraction=0.3, categorical_features=[0, 1],
        cat_target_statistics=True, max_leaf_nodes=6, random_state=0,
    )  # fmt: skip
    model = LambdaMART(**params).fit(X, y, qid=qid)
    in_hold_out = np.isin(qid, held[0])
    shuffled = y.copy()
    shuffled[in_hold_out] = np.random.default_rng(1).permutation(y[in_hold_out])
    other = LambdaMART(**params).fit(X, shuffled, qid=qid)
    kept = min(model.n_iter_, other.n_iter_)  # early stopping reads the hold-out's labels
    for ours, theirs, _ in zip(model.staged_predict(X[~in_hold_out]), other.staged_predict(X[~in_hold_out]), range(kept)):
        np.testing.assert_array_equal(theirs, ours)
    curve = [
        ndcg_score(y[in_hold_out], scores, qid=qid[in_hold_out], k=10)
        for scores in model.staged_predict(X[in_hold_out])
    ]
    np.testing.assert_allclose(model.evals_result_["validation"]["ndcg@10"][: model.n_iter_], curve, rtol=0, atol=1e-12)


@pytest.mark.parametrize("missing_direction", ["learn", "left"])  # the split puts its category set, the light child, left
@pytest.mark.parametrize(
    "make",
    [
        lambda: RFPointRanker(n_estimators=1, criterion="variance", bootstrap=False, query_subsample=1.0, max_depth=1),
        lambda: LambdaMART(n_estimators=1, objective="mart", max_depth=1, min_data_per_group=1),
    ],
)
def test_an_unseen_or_missing_category_goes_to_the_heavier_child_whatever_missing_direction(make, missing_direction):
    """docs/categorical.md: at a node that saw no missing value, an unseen or missing
    category goes to the heavier child, and missing_direction applies to numeric features
    only; "left" sent them to the light child. A numeric feature's fixed side is kept."""
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 6, 300).astype(float)
    X = np.column_stack([codes, codes])  # the same values, as a category and as a number
    y, qid = (codes == 2) * 3.0, np.repeat(np.arange(30), 10)
    model = make().set_params(categorical_features=[0], missing_direction=missing_direction, random_state=0)
    tree = model.fit(X[:, :1], y, qid=qid).trees_[0]
    left = tree.nodes["left"][0]
    heavier_is_left = tree.n_node_samples[left] > tree.n_node_samples[left + 1]
    assert tree.n_node_samples[left] == np.sum(codes == 2)  # category 2 alone: the light child
    np.testing.assert_array_equal(tree.goes_left(np.zeros(2, dtype=np.int64), np.array([np.nan, 99.0])), [heavier_is_left] * 2)
    numeric = make().set_params(missing_direction=missing_direction, random_state=0).fit(X[:, 1:], y, qid=qid).trees_[0]
    if missing_direction != "learn":
        assert numeric.goes_left(np.zeros(1, dtype=np.int64), np.array([np.nan]))[0] == (missing_direction == "left")
