"""Quantized gradients: boosting's split search on small integers.

Shi, Ke, Lin, Liu & Bian, "Quantized Training of Gradient Boosting Decision Trees"
(NeurIPS 2022), §3 (LightGBM's ``use_quantized_grad``): before each tree the
gradients are rounded to ``n_levels`` integer levels and the hessians to
``n_levels`` non-negative levels,

    g_q = SR(g / delta_g),  delta_g = max |g| / (n_levels // 2)    (Eq. 4)
    h_q = SR(h / delta_h),  delta_h = max h / n_levels

with stochastic rounding ``SR(x) = floor(x + u)``, ``u ~ U[0, 1)``, which is unbiased
(``E[SR(x)] = x``; their Eq. 5). The tree's histograms then sum small integers: int32
bins of half the float64 width, and sums that no summation order changes. The split
gains in quantized units are the true gains times ``delta_h / delta_g^2``, so the
thresholds that compare gains or hessians are rescaled rather than the sums
(``quantized_params``), and the leaf values are Newton steps of the exact gradients
(their §3.3, "leaf value refitting").
"""

import dataclasses

import numpy as np

from .._tree._grow import TreeParams
from ..objectives._draws import RowLines

# Histogram bins of a quantized tree: every bin sum of one tree is an integer of at
# most n_rows * n_levels in magnitude.
QUANTIZED_DTYPE = np.int32


def check_quantization(split_gain: str, cost_penalty: float) -> None:
    """Refuse quantization where it does not apply, before any work on the data: a
    least-squares split gain (it has no hessians to rescale), or a feature cost penalty
    (its unit, the root's reducible cost ``sum g^2 / h`` over the rows, is biased when
    read from rounded hessians, many of them 0)."""
    if split_gain != "newton":
        raise ValueError(
            f"quantized_gradients applies to split_gain='newton' only; got split_gain={split_gain!r}. "
            "Set quantized_gradients=None or split_gain='newton'."
        )
    if cost_penalty > 0.0:
        raise ValueError(
            f"quantized_gradients cannot be combined with cost_penalty={cost_penalty}: the penalty's unit, the "
            "root's reducible Newton cost (docs/costs.md), would be read from the rounded hessians, many of them 0, "
            "and would not mean what cost_penalty says. Set quantized_gradients=None or cost_penalty=0."
        )


def check_quantized_sums(n_levels: int, n_rows: int) -> None:
    """Refuse levels whose bin sums over ``n_rows`` rows could overflow ``QUANTIZED_DTYPE``."""
    if n_rows * n_levels >= np.iinfo(QUANTIZED_DTYPE).max:
        raise ValueError(
            f"quantized_gradients={n_levels} with {n_rows} training rows could overflow the int32 histogram sums "
            f"(rows x levels must stay below 2^31); use fewer levels or quantized_gradients=None."
        )


def quantize_gradients(
    gradients: np.ndarray, hessians: np.ndarray, n_levels: int, rng: np.random.Generator, out: np.ndarray
) -> tuple[float, float]:
    """Stochastically rounded integer gradients and hessians (Shi et al. 2022, Eqs. 4-5).

    Parameters
    ----------
    gradients, hessians : float64 arrays of shape (n_rows,)
        Weighted ``w * g`` and ``w * h`` (``h >= 0``).
    n_levels : int
        At least 2: gradients in ``[-(n_levels // 2), n_levels // 2]`` (LightGBM's integer
        division), hessians in ``[0, n_levels]``.
    rng : numpy Generator
        The rounding draws (two per row).
    out : float64 array of shape (n_rows, 2)
        Receives ``g_q`` and ``h_q`` (integer-valued floats: the engine's targets).

    Returns
    -------
    (delta_g, delta_h) : tuple of float
        The scales: ``g ~ delta_g * g_q``, ``h ~ delta_h * h_q``. 1.0 where every value is 0.
    """
    scales = quantization_scales(
        float(np.max(np.abs(gradients), initial=0.0)), float(np.max(hessians, initial=0.0)), n_levels
    )
    round_stochastically(gradients, hessians, scales, rng.random((2, len(gradients))), out)
    return scales


def quantization_scales(largest_gradient: float, largest_hessian: float, n_levels: int) -> tuple[float, float]:
    """``(delta_g, delta_h)`` of Eq. 4 from the largest ``|w g|`` and ``w h`` of the tree's rows
    (over every partition of a partitioned fit); 1.0 where the largest is 0."""
    return largest_gradient / (n_levels // 2) or 1.0, largest_hessian / n_levels or 1.0


def round_stochastically(
    gradients: np.ndarray, hessians: np.ndarray, scales: tuple[float, float], draws: np.ndarray, out: np.ndarray
) -> None:
    """``out[:, 0] = floor(g / delta_g + u)``, ``out[:, 1] = floor(h / delta_h + u')`` (Eq. 5).

    ``draws`` (float64, (2, n_rows)) are the uniform ``u`` (row 0) and ``u'`` (row 1);
    ``gradients``, ``hessians`` and ``out`` as in ``quantize_gradients``.
    """
    np.floor(gradients / scales[0] + draws[0], out=out[:, 0])
    np.floor(hessians / scales[1] + draws[1], out=out[:, 1])


def rounding_draws(seed: np.random.SeedSequence, n_rows: int, first: int, count: int) -> np.ndarray:
    """Rows ``first:first + count`` of the draws ``default_rng(seed).random((2, n_rows))``,
    float64 of shape (2, count), without drawing the others: a partition of a partitioned
    fit draws its own rows' share of the stream a fit in memory draws (``RowLines``)."""
    lines = RowLines(seed, n_rows, first, count)
    return np.stack([lines.next_line(), lines.next_line()])


def quantized_params(params: TreeParams, g_scale: float, h_scale: float) -> TreeParams:
    """``params`` with the hessian thresholds and the gain threshold in quantized units.

    A Newton gain ``G^2 / (H + l2)`` with ``G = delta_g G_q`` and ``H = delta_h H_q`` is
    ``delta_g^2 / delta_h * G_q^2 / (H_q + l2 / delta_h)``: ``l2`` and the minimum child
    hessian divide by ``delta_h``, the minimum gain multiplies by ``delta_h / delta_g^2``.
    That factor is taken as two divisions, as ``inf`` beyond float64: ``delta_g^2`` of a
    tree whose weighted gradients are all below 1e-162 is 0.
    """
    gain_units = h_scale / g_scale / g_scale if params.min_gain_to_split else 0.0  # 0 stays 0, not 0 * inf
    return dataclasses.replace(
        params,
        l2_regularization=params.l2_regularization / h_scale,
        min_child_weight=params.min_child_weight / h_scale,
        min_gain_to_split=params.min_gain_to_split * gain_units,
    )
