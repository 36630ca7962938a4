"""One way for the benchmarks to print a paired comparison over test queries."""

import numpy as np


def versus(a: np.ndarray, b: np.ndarray) -> str:
    """``"+0.0123 (t-test p=0.045)"``: the mean of ``a - b`` (per-query values of two
    systems on the same queries) and the paired t-test's p-value (``forestrank.paired_test``)."""
    from forestrank import paired_test

    test = paired_test(a, b)
    return f"{test.mean_difference:+.4f} (t-test p={test.pvalue:.2g})"


def contender_line(name: str, values: np.ndarray, reference: np.ndarray, reference_name: str, extra: str = "") -> str:
    """``"  name  NDCG@10 0.1234<extra>  vs reference +0.0012 (t-test p=0.5)"``: one contender's
    mean per-query NDCG@10 and, unless it is the reference, the paired comparison with it."""
    line = f"  {name:<26} NDCG@10 {values.mean():.4f}{extra}"
    if name != reference_name:
        line += f"  vs {reference_name} {versus(values, reference)}"
    return line
