"""The float32 thresholds that keep a float32 engine on forestrank's branches, and the
model as one sum of trees."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from forestrank.serving._terms import float32_above, float32_at_most, scalar_trees

from .models import fitted

doubles = st.floats(allow_nan=False, allow_infinity=True, width=64)


def _float32_neighbours(threshold: float) -> np.ndarray:
    """float32 values around ``threshold``: its nearest float32 and the two beside it."""
    nearest = np.float32(threshold) if np.isfinite(np.float32(threshold)) else np.float32(np.copysign(3.4e38, threshold))
    return np.array([
        np.nextafter(nearest, np.float32(-np.inf)), nearest, np.nextafter(nearest, np.float32(np.inf)),
        np.float32(0.0), np.float32(-0.0),
    ], dtype=np.float32)  # fmt: skip


@np.errstate(over="ignore")
@given(doubles)
def test_float32_at_most_keeps_every_float32_on_its_side(threshold):
    values = _float32_neighbours(threshold)
    cut = float32_at_most(np.array([threshold]))[0]
    assert cut.dtype == np.float32
    np.testing.assert_array_equal(values <= cut, values.astype(np.float64) <= threshold)


@np.errstate(over="ignore")
@given(doubles)
def test_float32_above_turns_less_or_equal_into_less(threshold):
    values = _float32_neighbours(threshold)
    cut = float32_above(np.array([threshold]))[0]
    np.testing.assert_array_equal(values < cut, values.astype(np.float64) <= threshold)


def test_the_base_is_folded_into_the_first_trees_leaves():
    model = fitted("LambdaMART mart", "missing")
    trees, base = scalar_trees(model, "a format")
    assert base == 0.0 and model.baseline_[0] != 0.0
    first = model.trees_[0]
    leaves = first.nodes["feature"] < 0
    np.testing.assert_allclose(trees[0].value[leaves], first.nodes["threshold"][leaves] + model.baseline_[0], rtol=1e-15)
    kept, base = scalar_trees(model, "a format", keep_weights=True)
    assert base == model.baseline_[0]
    np.testing.assert_array_equal(kept[0].value[leaves], first.nodes["threshold"][leaves])


def test_forest_weights_fold_into_the_leaves_or_stay_per_tree():
    model = fitted("RF-point", "missing")
    folded, _ = scalar_trees(model, "a format")
    apart, _ = scalar_trees(model, "a format", keep_weights=True)
    assert folded[0].weight == 1.0 and apart[0].weight == 1 / len(model.trees_)
    np.testing.assert_allclose(folded[0].value, apart[0].value / len(model.trees_))


def test_thresholds_beyond_the_largest_float32_map_to_it_without_a_warning():
    import warnings

    largest = np.finfo(np.float32).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float32_at_most(np.array([1e39]))[0] == largest
        assert float32_above(np.array([1e39]))[0] == np.inf
