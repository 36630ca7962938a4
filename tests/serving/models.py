"""The estimators every export is tested on, fitted once per data set, the data they are
scored on, and the tolerance of a float32 sum with the check that applies it."""

import functools

import numpy as np
import pytest

from forestrank import (
    BROOF, AveragedRanker, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, load_letor_fold,
    make_ranking,
)  # fmt: skip

ADDITIVE_OBJECTIVES = ("lambdarank", "xendcg", "mart", "c-mart", "cosine", "c-cosine", "kl", "c-kl")

ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(n_estimators=10, random_state=0),
    "RF-point three-way": lambda: RFPointRanker(n_estimators=5, missing_direction="separate", random_state=0),
    "RF-point missing right": lambda: RFPointRanker(n_estimators=5, missing_direction="right", random_state=0),
    "RF-point missing left": lambda: RFPointRanker(n_estimators=5, missing_direction="left", random_state=0),
    "RF-list": lambda: RFListRanker(n_estimators=4, random_state=0),
    "RF-hybrid": lambda: RFHybridRanker(n_estimators=4, listwise_depth=3, random_state=0),
    **{
        f"LambdaMART {objective}": functools.partial(LambdaMART, n_estimators=15, objective=objective, random_state=0)
        for objective in ADDITIVE_OBJECTIVES
    },
    "IGBRT": lambda: LambdaMART(n_estimators=5, objective="mart", init=RFPointRanker(n_estimators=4, random_state=0), random_state=0),
    "LambdaMART yetirank symmetric": lambda: LambdaMART(
        n_estimators=10, objective="yetirank", grow_policy="symmetric", random_strength=1.0, bagging_temperature=1.0,
        random_state=0,
    ),
    "LambdaMART yetirank_pairwise symmetric": lambda: LambdaMART(
        n_estimators=5, objective="yetirank_pairwise", grow_policy="symmetric", max_depth=4, max_bins=32, random_state=0
    ),
    "PLRank": lambda: PLRank(n_estimators=10, random_state=0),
    "BROOF": lambda: BROOF(n_estimators=3, n_trees=4, random_state=0),
    "AveragedRanker": lambda: AveragedRanker(LambdaMART(n_estimators=5, max_features=0.5), n_models=3, random_state=0),
}
# The models the quick suite exports; the others' parity runs with the slow tests.
QUICK = ("RF-point", "RF-list", "LambdaMART lambdarank")


def parametrized(names) -> list:
    """``names`` as pytest parameters, those not in ``QUICK`` marked slow: each model's
    parity in every engine compiles its estimator's kernels, which the quick suite
    compiles for a few of them only."""
    return [name if name in QUICK else pytest.param(name, marks=pytest.mark.slow) for name in names]


MCRANK = {
    "McRank": lambda: LambdaMART(n_estimators=5, objective="mcrank", random_state=0),
    "McRank, fitted grade weights": lambda: LambdaMART(n_estimators=5, objective="mcrank", relevance_weights="fitted", random_state=0),
}


@functools.cache
def missing_data() -> tuple:
    """80 queries of 8 features, 30% of the values missing, more often from the less
    relevant documents: ``(X, y, qid)``."""
    return make_ranking(
        n_queries=80, docs_per_query=20, n_features=8, n_informative=8, missing_fraction=0.3, missing="mnar", random_state=0
    )


@functools.cache
def mq2008_fold1(folder: str) -> tuple:
    """MQ2008 Fold1's training and test sets."""
    train, _, test = load_letor_fold(folder)
    return train, test


@functools.cache
def fitted(name: str, data: str, folder: str = "") -> object:
    """``name`` (of ``ESTIMATORS`` or ``MCRANK``) fitted on ``data``: "missing" or "mq2008"."""
    X, y, qid = missing_data() if data == "missing" else mq2008_fold1(folder)[0]
    return {**ESTIMATORS, **MCRANK}[name]().fit(X, y, qid=qid)


def at_thresholds(model: object, X: np.ndarray, n_rows: int = 600, seed: int = 0) -> np.ndarray:
    """Rows of ``X`` (float64, NaNs kept) whose every present feature is moved onto one of
    the model's thresholds on that feature: the threshold itself, its nearest float32, or
    the float32 just below or above that, so that casting to float32 lands on either side."""
    rng = np.random.default_rng(seed)
    rows = X[rng.integers(len(X), size=n_rows)].copy()
    terms, _, _ = model._additive_terms()
    features = np.concatenate([tree.nodes["feature"] for tree, _, _ in terms])
    thresholds = np.concatenate([tree.nodes["threshold"] for tree, _, _ in terms])
    split = (features >= 0) & np.isfinite(thresholds)
    for feature in np.unique(features[split]):
        on_feature = thresholds[split & (features == feature)]
        chosen = on_feature[rng.integers(len(on_feature), size=n_rows)]
        nearest = chosen.astype(np.float32)
        variants = np.stack([
            chosen, nearest.astype(np.float64), np.nextafter(nearest, np.float32(-np.inf)).astype(np.float64),
            np.nextafter(nearest, np.float32(np.inf)).astype(np.float64),
        ])  # fmt: skip
        present = ~np.isnan(rows[:, feature])
        rows[present, feature] = variants[rng.integers(4, size=n_rows), np.arange(n_rows)][present]
    return rows


def float32_sum_bound(model: object, X: np.ndarray) -> np.ndarray:
    """A bound on the error of summing the model's terms in float32, per row of ``X``:
    ``(n_terms + 2) * 2**-24 * (|base| + sum_t |w_t v_t(x)|)`` for the leaves ``v_t(x)``
    the row reaches (each leaf and weight rounded once, each addition once)."""
    terms, base, _ = model._additive_terms()
    if getattr(model, "target_statistics_", None):  # the trees read the statistics appended to X
        X = model._check_X(X, reset=False)
    magnitude = np.full(len(X), abs(float(base[0])))
    for tree, weight, _ in terms:
        magnitude += np.abs(weight * tree.predict(X))
    return (len(terms) + 2) * 2.0**-24 * magnitude


def check_float32_engine(scores: np.ndarray, leaves: np.ndarray, model: object, X32: np.ndarray, leaf_ids) -> None:
    """The engine reached forestrank's leaf in every tree (``leaf_ids(tree, nodes)`` gives
    the engine's ids of forestrank's leaf nodes) and its float32 sum is within the float32
    rounding bound of forestrank's score on the same float32 values."""
    terms, _, _ = model._additive_terms()
    for index, (tree, _, _) in enumerate(terms):
        np.testing.assert_array_equal(leaves[:, index], leaf_ids(tree, tree.apply(X32)), err_msg=f"tree {index}")
    error = np.abs(scores.astype(np.float64) - model.predict(X32))
    assert np.all(error <= float32_sum_bound(model, X32)), error.max()
