"""ONNX export, float64 and float32 input, against forestrank's own predictions."""

import numpy as np
import pytest

from forestrank.export import to_onnx

from .models import ESTIMATORS, MCRANK, at_thresholds, fitted, float32_sum_bound, missing_data, mq2008_fold1, parametrized

onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs forestrank[onnx]")


def onnx_scores(model: object, X: np.ndarray, dtype: type) -> np.ndarray:
    session = onnxruntime.InferenceSession(to_onnx(model, dtype=dtype).SerializeToString())
    scores = session.run(None, {"X": np.ascontiguousarray(X, dtype=dtype)})[0]
    assert scores.dtype == dtype
    return scores


def assert_onnx_equals_forestrank(model: object, X: np.ndarray) -> None:
    """float64 input on the doubles, float32 input on their float32 casts: onnxruntime
    sums the leaves in float32 (the bound of ``float32_sum_bound``; McRank's softmax adds
    its own float32 rounding, checked to 1e-5 of the grade range)."""
    X32 = X.astype(np.float32)
    for rows, dtype in ((X, np.float64), (X32, np.float32)):
        expected = model.predict(rows)
        error = np.abs(onnx_scores(model, rows, dtype).astype(np.float64) - expected)
        if hasattr(model, "classes_") and model.classes_ is not None:
            assert error.max() <= 1e-5 * max(1.0, np.ptp(model.classes_)), (dtype, error.max())
        else:
            assert np.all(error <= float32_sum_bound(model, rows)), (dtype, error.max())


@pytest.mark.parametrize("name", parametrized([*ESTIMATORS, *MCRANK]))
def test_missing_values_and_values_at_thresholds_take_forestranks_branches(name):
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    assert_onnx_equals_forestrank(model, np.vstack([X, at_thresholds(model, X)]))


@pytest.mark.dataset
@pytest.mark.parametrize("name", parametrized([*ESTIMATORS, *MCRANK]))
def test_onnxruntime_scores_mq2008_as_forestrank(name, mq2008):
    model = fitted(name, "mq2008", str(mq2008 / "Fold1"))
    X_test = mq2008_fold1(str(mq2008 / "Fold1"))[1][0]
    assert_onnx_equals_forestrank(model, np.vstack([X_test, at_thresholds(model, X_test)]))


def test_dtype_is_float64_or_float32():
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        to_onnx(fitted("RF-point", "missing"), dtype="int64")
    assert to_onnx(fitted("RF-point", "missing"), dtype="float32").graph.input[0].type.tensor_type.elem_type == 1
