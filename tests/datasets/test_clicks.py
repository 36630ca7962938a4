"""simulate_clicks: click rates follow the examination models."""


import numpy as np



def test_simulated_click_rates_match_the_examination_model():
    from scipy import stats

    from forestrank import simulate_clicks

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 20 * 400)
    qid = np.repeat(np.arange(400), 20)
    scores = rng.normal(size=len(y))
    for model in ("position", "cascade"):
        logs = [simulate_clicks(y, qid, scores, model=model, eta=1.0, noise=0.2, random_state=seed) for seed in range(5)]
        clicks = np.sum([log.clicks for log in logs], axis=0)
        expected = logs[0].click_probability
        np.testing.assert_array_equal(logs[0].click_probability, logs[1].click_probability)
        for k in (1, 2, 5, 10):  # observed clicks at each position against the model's rate: binomial tests
            at = logs[0].position == k
            result = stats.binomtest(int(clicks[at].sum()), 5 * int(at.sum()), float(expected[at].mean()))
            assert result.pvalue > 1e-3, (model, k, result)
        if model == "position":
            np.testing.assert_allclose(logs[0].examination, 1.0 / logs[0].position)
        else:  # at most one click per query and session
            assert np.bincount(qid, logs[0].clicks).max() <= 1


def test_a_whole_number_eta_is_the_real_power_and_grades_of_any_size_keep_their_share():
    from forestrank import simulate_clicks

    y, qid, scores = np.zeros(40), np.zeros(40), -np.arange(40.0)  # shown in row order
    for eta in (16, np.int64(10), 16.0):  # 16**16 is 2**64: an int64 power wraps to 0
        log = simulate_clicks(y, qid, scores, eta=eta, random_state=0)
        np.testing.assert_allclose(log.examination, np.arange(1, 41.0) ** -float(eta), rtol=1e-15)
    grades = np.array([0.0, 1.0, 2.0, 1500.0, 1600.0])
    log = simulate_clicks(grades, np.zeros(5), -np.arange(5.0), noise=0.0, random_state=0)  # 2**1600 is inf
    share = [0, 0, 0, 2.0**-100, 1]  # 1 / (2**1600 - 1) and 3 / (2**1600 - 1) are below the smallest double
    np.testing.assert_allclose(log.click_probability / log.examination, share, rtol=1e-15)
    # a top grade near 0: 1 - 2**-top cancelled (shares above 1 at 1e-15, NaN and inf at 1e-17)
    for top in (1e-15, 1e-17, 1e-300):
        tiny = simulate_clicks(np.array([0.0, top / 2, top]), np.zeros(3), -np.arange(3.0), noise=0.0, random_state=0)
        expected = np.expm1(np.array([0.0, top / 2, top]) * np.log(2.0)) / np.expm1(top * np.log(2.0))  # about [0, 1/2, 1]
        np.testing.assert_allclose(tiny.click_probability / tiny.examination, expected, rtol=1e-12)
    # fractional top grades: the top grade's share rounded to 1 + 1 ulp in about one in seven
    tops = np.random.default_rng(0).uniform(0.0, 5.0, 200)
    shares = [simulate_clicks(np.array([top]), np.zeros(1), np.zeros(1), noise=0.0, random_state=0).click_probability[0] for top in tops]
    assert max(shares) == 1.0


def test_a_max_grade_that_is_no_finite_number_above_the_grades_is_refused_by_name():
    import pytest

    from forestrank import simulate_clicks

    y, qid, scores = [0, 1, 2], [1, 1, 1], [3.0, 2.0, 1.0]
    for max_grade in (np.nan, np.inf, 1, "2", True):
        with pytest.raises(ValueError, match=r"max_grade must be a finite number >= the largest label \(2\)"):
            simulate_clicks(y, qid, scores, max_grade=max_grade, random_state=0)
    at_three = simulate_clicks(y, qid, scores, max_grade=3, noise=0.0, random_state=0)
    np.testing.assert_allclose(at_three.click_probability, np.array([0, 1, 3]) / 7 / np.arange(1, 4))
