"""The scikit-learn estimator checks each forestrank ranker is known to fail, and why.

scikit-learn's ``check_estimator`` and ``parametrize_with_checks`` take the checks an
estimator is expected to fail (``expected_failed_checks``), since scikit-learn 1.6
from the caller rather than from the estimator's tags. The checks pass no ``qid``, so
their data is one query, and some of them compare an integer sample weight with a
repeated row, which no ranking objective can honour. This module is the one place that
says which checks fail for which estimator and why; forestrank's own test-suite runs
the checks with it::

    from sklearn.utils.estimator_checks import check_estimator
    from forestrank import LambdaMART
    from forestrank.estimator_checks import expected_failed_checks

    check_estimator(LambdaMART(n_estimators=5), expected_failed_checks=expected_failed_checks(LambdaMART(n_estimators=5)))
"""

from numbers import Integral

from .dummy import DummyRanker
from .ensemble import BROOF, AveragedRanker, LambdaMART, PLRank, RFListRanker, RFPointRanker
from .ensemble._boosting import GRADE_OBJECTIVES, BaseBoostingRanker

__all__ = ["expected_failed_checks"]

_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")

_PER_QUERY_METRIC = (
    "ranking metrics are per query, not sums over documents: repeating a document changes its query's ideal DCG, "
    "so an integer weight (which weighs the query) cannot equal repetition"
)
_RESAMPLING = (
    "sub-sampling draws a repeated row independently of its copy, so an integer weight and repetition give "
    "different samples (scikit-learn lists this failure for its bootstrapped forests)"
)
_QUANTIZED = (
    "quantized_gradients rounds each row's gradient stochastically, so a repeated row is rounded apart from its copy "
    "where a weighted row is rounded once"
)
_ROWS_IN_FOREST_LEAVES = (
    "min_samples_leaf and min_samples_split count rows, so a repeated row fills a leaf or allows a split that its "
    "weight does not (scikit-learn's forests and trees count rows alike)"
)
_LISTWISE_WEIGHT = "a listwise weight scales a document's gain within its query; it does not repeat the document"
_ROWS_IN_LEAVES = (
    "min_samples_leaf counts rows, so a repeated row fills leaves that a weight does not; for LambdaRank a "
    "repeated document also takes a rank and forms pairs (LightGBM behaves the same)"
)
_PLRANK_WEIGHTS = (
    "the check passes different weights within its single query; PLRank refuses them with a ValueError because a "
    "weight multiplies a query's likelihood, not a document's"
)
_BROOF_RESAMPLING = (
    "the weak learners sub-sample queries and the out-of-bag errors re-weight documents, so a repeated row and an "
    "integer weight are drawn and re-weighted differently"
)
_BROOF_ONE_QUERY = (
    "scikit-learn's checks pass no qid, so their data is one query, which the default forest (sampling queries) puts "
    "in every tree: no row is out of bag, and BROOF refuses the data with an error saying to sample documents "
    "(forest=RFPointRanker(criterion='variance', sample_level='document'))"
)
# The checks that fit on scikit-learn's one-query data, which BROOF's default forest refuses.
_BROOF_ONE_QUERY_CHECKS = (
    "check_dict_unchanged check_dont_overwrite_parameters check_dtype_object check_estimator_sparse_array "
    "check_estimator_sparse_matrix check_estimator_sparse_tag check_estimators_dtypes check_estimators_fit_returns_self "
    "check_estimators_overwrite_params check_estimators_pickle check_f_contiguous_array_estimator check_fit2d_1feature "
    "check_fit2d_predict1d check_fit_check_is_fitted check_fit_idempotent check_fit_score_takes_y "
    "check_methods_sample_order_invariance check_methods_subset_invariance check_n_features_in "
    "check_n_features_in_after_fitting check_pipeline_consistency check_positive_only_tag_during_fit "
    "check_readonly_memmap_input check_sample_weight_equivalence_on_dense_data "
    "check_sample_weight_equivalence_on_sparse_data check_sample_weights_list check_sample_weights_not_an_array "
    "check_sample_weights_not_overwritten check_sample_weights_pandas_series check_sample_weights_shape"
).split()


def expected_failed_checks(estimator: object) -> dict[str, str]:
    """The scikit-learn estimator checks that ``estimator`` fails, each with the reason.

    Parameters
    ----------
    estimator : a forestrank ranker (unfitted; its parameters decide)

    Returns
    -------
    dict of str to str
        Check name to reason, for ``check_estimator`` and ``parametrize_with_checks``'s
        ``expected_failed_checks``; empty for an estimator that passes every check.

    Raises
    ------
    TypeError
        For an estimator that is no forestrank ranker.
    """
    if isinstance(estimator, AveragedRanker):
        member = LambdaMART() if estimator.estimator is None else estimator.estimator  # AveragedRanker's default
        return expected_failed_checks(member)
    if isinstance(estimator, DummyRanker):
        return dict.fromkeys(_WEIGHT_CHECKS, _PER_QUERY_METRIC) if estimator.strategy == "best_feature" else {}
    if isinstance(estimator, BROOF):
        if estimator.forest is None:
            return dict.fromkeys(_BROOF_ONE_QUERY_CHECKS, _BROOF_ONE_QUERY)
        return dict.fromkeys(_WEIGHT_CHECKS, _BROOF_RESAMPLING)
    if isinstance(estimator, RFListRanker):  # RFHybridRanker too
        return dict.fromkeys(_WEIGHT_CHECKS, _LISTWISE_WEIGHT)
    if isinstance(estimator, RFPointRanker):
        # the checks' rows are one query: drawn whole, a repeated row stays with its copy
        by_document = estimator.sample_level == "document" and (estimator.bootstrap or estimator.query_subsample < 1.0)
        if by_document:
            return dict.fromkeys(_WEIGHT_CHECKS, _RESAMPLING)
        counts_rows = estimator.min_samples_leaf != 1 or estimator.min_samples_split != 2
        return dict.fromkeys(_WEIGHT_CHECKS, _ROWS_IN_FOREST_LEAVES) if counts_rows else {}
    if isinstance(estimator, BaseBoostingRanker):
        if getattr(estimator, "objective", None) in (*GRADE_OBJECTIVES, "mart"):
            # Per-document losses: a weight is a repeated row but for sampling, stochastic
            # rounding and the rows min_samples_leaf counts, which from the default (20)
            # up leave the checks' small data too few rows for a leaf to tell them apart.
            by_document = estimator.subsample_level == "document" and (estimator.subsample < 1.0 or estimator.bagging_temperature > 0.0)
            if by_document:
                return dict.fromkeys(_WEIGHT_CHECKS, _RESAMPLING)
            if estimator.quantized_gradients is not None:
                return dict.fromkeys(_WEIGHT_CHECKS, _QUANTIZED)
            small_leaves = not isinstance(estimator.min_samples_leaf, Integral) or estimator.min_samples_leaf < 20
            return dict.fromkeys(_WEIGHT_CHECKS, _ROWS_IN_LEAVES) if small_leaves else {}
        failures = dict.fromkeys(_WEIGHT_CHECKS, _ROWS_IN_LEAVES)
        if isinstance(estimator, PLRank):
            failures["check_sample_weights_not_overwritten"] = _PLRANK_WEIGHTS
        return failures
    raise TypeError(f"estimator must be a forestrank ranker; got {type(estimator).__name__}.")
