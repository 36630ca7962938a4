"""Learning from clicks: LambdaMART's position bias (unbiased LambdaMART and additive factors)."""


import numpy as np
import pytest
import sklearn
import sklearn.dummy
from sklearn.model_selection import GridSearchCV

from forestrank import (
    LambdaMART,
    make_ranking,
    ndcg_scorer,
)


@pytest.fixture(scope="module")
def click_log():
    from forestrank import simulate_clicks

    X, y, qid = make_ranking(n_queries=600, docs_per_query=15, n_features=6, random_state=0)
    shown = X[:, 0]  # a production ranking: one feature
    log = simulate_clicks(y, qid, shown, eta=1.0, noise=0.1, random_state=0)
    return X, y, qid, log


@pytest.mark.slow  # fits that compile LambdaRank kernels of their own: the quick suite's time
def test_positions_are_routed_through_grid_search_like_qid(click_log):
    from forestrank import QueryKFold

    X, y, qid, log = click_log
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            LambdaMART(n_estimators=5, position_bias="unbiased", random_state=0), {"max_leaf_nodes": [4]},
            cv=QueryKFold(2), scoring=ndcg_scorer(10),
        ).fit(X, log.clicks, qid=qid, position=log.position)
    assert len(search.best_estimator_.position_bias_) == 15


def test_unbiased_with_constant_propensities_is_plain_lambdarank(click_log, monkeypatch):
    """t+ = t- = 1 weigh every pair 1: the gradients are LambdaRank's at every iteration's
    scores, to rounding (the plain kernel takes a rank's pairs in a vectorised loop, the
    unbiased one pair by pair), and so are the models."""
    from forestrank._input.queries import boundaries_of_grouped
    from forestrank.ensemble._position_bias import PositionBias
    from forestrank.objectives import LambdaRank

    X, y, qid, log = click_log
    monkeypatch.setattr(PositionBias, "step", lambda self, sums: None)  # t+ = t- = 1 throughout
    unbiased = LambdaMART(n_estimators=10, position_bias="unbiased", random_state=0).fit(X, log.clicks, qid=qid, position=log.position)
    plain = LambdaMART(n_estimators=10, random_state=0).fit(X, log.clicks, qid=qid)
    np.testing.assert_allclose(unbiased.predict(X), plain.predict(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(unbiased.position_bias_, np.ones(15))
    boundaries = boundaries_of_grouped(qid)
    labels = log.clicks.astype(float)
    for scores in [np.zeros(len(qid)), *plain.staged_predict(X)]:
        plain_objective, unbiased_objective = LambdaRank(), LambdaRank()
        plain_objective.prepare(labels, boundaries)
        unbiased_objective.prepare(labels, boundaries)
        unbiased_objective.show_positions(np.asarray(log.position), np.ones((2, 15)))
        gradients = [(np.empty(len(qid)), np.empty(len(qid))) for _ in range(2)]
        plain_objective.gradients(scores, *gradients[0])
        unbiased_objective.gradients(scores, *gradients[1])
        for plain_values, unbiased_values in zip(*gradients):
            np.testing.assert_allclose(unbiased_values, plain_values, rtol=1e-12, atol=1e-15)


def test_learned_propensities_fall_with_the_position(click_log):
    from scipy.stats import spearmanr

    X, y, qid, log = click_log
    model = LambdaMART(n_estimators=30, position_bias="unbiased", random_state=0).fit(X, log.clicks, qid=qid, position=log.position)
    assert model.position_bias_[0] == 1.0
    assert spearmanr(model.position_bias_[:8], -np.arange(8))[0] > 0.8
    factor = LambdaMART(n_estimators=30, position_bias="factor", random_state=0).fit(X, log.clicks, qid=qid, position=log.position)
    assert factor.position_bias_[0] > factor.position_bias_[7]


def test_unbiased_positions_without_the_top_one_are_refused(click_log):
    """With no document at position 1 (ranks counted from 2) the propensities, relative to
    position 1, were never updated: the fit was LambdaMART's without the bias, silently."""
    X, y, qid, log = click_log
    with pytest.raises(ValueError, match=r"no row has position 1 \(the smallest is 2\): number the positions from 1"):
        LambdaMART(n_estimators=2, position_bias="unbiased").fit(X, log.clicks, qid=qid, position=log.position + 1)
    LambdaMART(n_estimators=2, position_bias="factor").fit(X, log.clicks, qid=qid, position=log.position + 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(position=np.arange(10)), "position must have one entry per row"),
        (dict(position="full"), "position must have one entry per row"),
        (dict(position=np.zeros(9000, dtype=int)), "position must be >= 1"),
        (dict(position=np.full(9000, 1.5)), "position must hold whole numbers"),
        (dict(position=np.full(9000, 2.0**62)), "position must be at most 1,048,576"),
        (dict(), "position is needed with position_bias"),
    ],
)
def test_bad_positions_are_named(kwargs, message, click_log):
    X, y, qid, log = click_log
    with pytest.raises(ValueError, match=message):
        LambdaMART(n_estimators=2, position_bias="unbiased").fit(X, log.clicks, qid=qid, **kwargs)
    if kwargs:
        return
    with pytest.raises(ValueError, match="position is needed with position_bias and only then"):
        LambdaMART(n_estimators=2).fit(X, log.clicks, qid=qid, position=log.position)
    with pytest.raises(ValueError, match="position_bias needs objective='lambdarank'"):
        LambdaMART(n_estimators=2, objective="mart", position_bias="factor").fit(X, log.clicks, qid=qid, position=log.position)


def test_position_bias_is_the_kept_iterations_when_early_stopping_cuts_the_trees(click_log):
    X, y, qid, log = click_log
    train, valid = qid < 450, qid >= 450
    stopped = LambdaMART(n_estimators=60, n_iter_no_change=3, position_bias="factor", random_state=0).fit(
        X[train], log.clicks[train], qid=qid[train], position=log.position[train],
        eval_set=[(X[valid], y[valid], qid[valid])],
    )  # fmt: skip
    assert stopped.best_iteration_ < 60
    shorter = LambdaMART(n_estimators=stopped.best_iteration_, position_bias="factor", random_state=0).fit(
        X[train], log.clicks[train], qid=qid[train], position=log.position[train]
    )
    np.testing.assert_array_equal(stopped.position_bias_, shorter.position_bias_)


@pytest.mark.parametrize("mode", ["unbiased", "factor"])
def test_a_query_of_weight_zero_is_absent_from_the_position_bias(mode, click_log):
    """The first update reads the gradients at the starting scores only: with the dropped
    queries weighed 0 it must equal the update of a fit without them, and a query weighed
    2 must count as two copies of it."""
    X, y, qid, log = click_log
    clicks, position = log.clicks.copy(), log.position
    keep = qid < 300
    clicks[~keep] = position[~keep] == 15  # the dropped queries' clicks all at the last position
    fit = dict(n_estimators=1, position_bias=mode, random_state=0)
    weighted = LambdaMART(**fit).fit(X, clicks, qid=qid, position=position, sample_weight=np.where(keep, 1.0, 0.0))
    subset = LambdaMART(**fit).fit(X[keep], clicks[keep], qid=qid[keep], position=position[keep])
    np.testing.assert_array_equal(weighted.position_bias_, subset.position_bias_)
    doubled = qid < 150
    twice = LambdaMART(**fit).fit(
        X[keep], clicks[keep], qid=qid[keep], position=position[keep], sample_weight=np.where(doubled[keep], 2.0, 1.0)
    )  # fmt: skip
    copies = np.concatenate([np.flatnonzero(keep), np.flatnonzero(doubled)])
    copied_qid = np.concatenate([qid[keep], qid[doubled] + 10_000])
    repeated = LambdaMART(**fit).fit(X[copies], clicks[copies], qid=copied_qid, position=position[copies])
    np.testing.assert_allclose(twice.position_bias_, repeated.position_bias_, rtol=1e-12)


def test_unbiased_refuses_weights_that_vary_within_a_query(click_log):
    X, y, qid, log = click_log
    weights = np.ones(len(y))
    weights[0] = 2.0
    with pytest.raises(ValueError, match="position_bias='unbiased' needs sample_weight constant within each query"):
        LambdaMART(n_estimators=1, position_bias="unbiased").fit(X, log.clicks, qid=qid, position=log.position, sample_weight=weights)
    LambdaMART(n_estimators=1, position_bias="factor").fit(X, log.clicks, qid=qid, position=log.position, sample_weight=weights)


def test_a_refit_without_position_bias_keeps_no_learned_bias(click_log):
    """``position_bias_`` of a fit with position bias survived a refit without it, describing
    a model the estimator no longer holds."""
    X, _, qid, log = click_log
    model = LambdaMART(n_estimators=2, position_bias="factor", random_state=0).fit(X, log.clicks, qid=qid, position=log.position)
    assert hasattr(model, "position_bias_")
    model.set_params(position_bias=None).fit(X, log.clicks, qid=qid)
    assert not hasattr(model, "position_bias_")
