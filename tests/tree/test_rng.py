"""The engine's generator: uniform draws and the ziggurat's standard normals."""

import numba
import numpy as np
from scipy import stats

from forestrank._tree import _rng


@numba.njit
def _normals(state, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = _rng.standard_normal(state)
    return out


def test_ziggurat_draws_are_standard_normal_out_to_the_tail():
    state = np.array([123, 456], dtype=np.uint64)
    draws = _normals(state, 400_000)
    assert stats.kstest(draws, "norm").pvalue > 1e-3
    assert abs(draws.mean()) < 0.01 and abs(draws.std() - 1.0) < 0.01
    # The base layer's tail beyond the ziggurat's last edge is sampled apart: its share matches.
    beyond = (np.abs(draws) > _rng._ZIGGURAT_TAIL).mean()
    expected = 2 * stats.norm.sf(_rng._ZIGGURAT_TAIL)
    assert abs(beyond - expected) < 4 * np.sqrt(expected / len(draws))
    assert stats.kstest(np.abs(draws[np.abs(draws) > 3.0]), stats.truncnorm(3.0, np.inf).cdf).pvalue > 1e-3


def test_ziggurat_draws_depend_on_the_state_alone():
    first = _normals(np.array([7, 8], dtype=np.uint64), 1000)
    np.testing.assert_array_equal(first, _normals(np.array([7, 8], dtype=np.uint64), 1000))
    assert not np.array_equal(first, _normals(np.array([7, 9], dtype=np.uint64), 1000))
