"""One way for the benchmarks to print a paired comparison over test queries."""

import numpy as np


def versus(a: np.ndarray, b: np.ndarray) -> str:
    """``"+0.0123 (t-test p=0.045)"``: the mean of ``a - b`` (per-query values of two
    systems on the same queries) and the paired t-test's p-value (``forestrank.paired_test``)."""
    from forestrank import paired_test

    test = paired_test(a, b)
    return f"{test.mean_difference:+.4f} (t-test p={test.pvalue:.2g})"
