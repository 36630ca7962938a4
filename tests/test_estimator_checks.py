"""``forestrank.estimator_checks``: the weight checks each configuration fails are listed."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

from forestrank import AveragedRanker, LambdaMART, RFPointRanker
from forestrank.estimator_checks import expected_failed_checks
from assertions import run_estimator_check

WEIGHT_CHECK = "check_sample_weight_equivalence_on_dense_data"


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=5, min_samples_leaf=5, random_state=0),
        RFPointRanker(n_estimators=5, min_samples_split=10, random_state=0),
        LambdaMART(objective="mart", n_estimators=5, min_samples_leaf=5, random_state=0),
        LambdaMART(objective="mcrank", n_estimators=5, min_samples_leaf=1, random_state=0),
        AveragedRanker(RFPointRanker(n_estimators=3, sample_level="document", bootstrap=True), n_models=2, random_state=0),
        AveragedRanker(RFPointRanker(n_estimators=3, min_samples_leaf=5), n_models=2, random_state=0),
    ],
    ids=repr,
)
def test_a_configuration_failing_the_weight_check_lists_it(estimator):
    """Each failed scikit-learn's weight check and was listed as passing (rows counted by
    min_samples_leaf or min_samples_split, small boosting leaves, an average of forests
    drawing documents): the check fails, and the list says so, with a reason."""
    with pytest.raises(AssertionError, match="is not equivalent to fitting with removed or repeated data points"):
        run_estimator_check(estimator, lambda estimator: check_sample_weight_equivalence_on_dense_data("x", estimator))
    assert expected_failed_checks(estimator)[WEIGHT_CHECK]


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=5, random_state=0),
        LambdaMART(objective="mart", n_estimators=5, random_state=0),
        AveragedRanker(RFPointRanker(n_estimators=3), n_models=2, random_state=0),
    ],
    ids=repr,
)
def test_a_configuration_passing_the_weight_check_does_not_list_it(estimator):
    run_estimator_check(estimator, lambda estimator: check_sample_weight_equivalence_on_dense_data("x", estimator))
    assert WEIGHT_CHECK not in expected_failed_checks(estimator)


def test_a_numpy_integer_leaf_size_reads_as_the_int():
    assert expected_failed_checks(LambdaMART(objective="mart", min_samples_leaf=np.int64(30))) == {}
    assert WEIGHT_CHECK in expected_failed_checks(LambdaMART(objective="mart", min_samples_leaf=np.int64(5)))
