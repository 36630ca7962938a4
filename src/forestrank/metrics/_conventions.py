"""Metric conventions: the explicit choices behind every ranking number.

The same ranking of MQ2008 scores NDCG@10 ~0.23 under the official LETOR 4.0 script
and ~0.50 under the textbook definition (``docs/design.md``, "Metric conventions"), so every metric
call resolves its choices into a :class:`Convention`, and every printed number can
name it with :meth:`Convention.describe`.

Presets reproduce the official evaluation scripts, as read from their source:

``"letor4"`` - Eval-Score-4.0.pl (LETOR 4.0, MQ2007/MQ2008)
    gain ``2**l - 1``; discount 1 for ranks 1 and 2, ``1/log2(r)`` from rank 3 (the
    script divides by ``log(iPos + 1)`` with 0-based ``iPos >= 2``); ties in input
    (file) order; a query without relevant documents scores 0; NDCG@k of a query with
    fewer than ``k`` documents is 0 (the script only fills positions below the list
    length); P@k counts missing positions as irrelevant (denominator ``k``).
``"letor3"`` - Eval-Score-3.0.pl (LETOR 3.0)
    the same, but P@k of a query with fewer than ``k`` documents is 0 too (the script
    fills both metrics' positions only below the list length, and its mean divides by
    every query).

Both scripts know the grades 0, 1 and 2 of their collections (gains 0, 1 and 3;
relevant from grade 1); the presets extend the same rules, ``2**l - 1`` and relevant
from grade 1, to higher grades, which the scripts would count as gain 0 and
irrelevant: on data graded beyond 2 no script gives the presets' numbers.

ERR is not computed by either script; under a preset it uses the preset's tie and
no-relevant rules.
"""

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np

from .._input.labels import check_gain
from . import _kernels

METRICS = {
    "ndcg": _kernels.METRIC_NDCG,
    "err": _kernels.METRIC_ERR,
    "map": _kernels.METRIC_AP,
    "precision": _kernels.METRIC_PRECISION,
}
METRICS_WITH_GAIN = ("ndcg", "err")
GAINS = {"exp": _kernels.GAIN_EXP, "linear": _kernels.GAIN_LINEAR}
TIES = {
    "expected": _kernels.TIES_EXPECTED,
    "input_order": _kernels.TIES_INPUT_ORDER,
    "pessimistic": _kernels.TIES_PESSIMISTIC,
}

_GAIN_TEXT = {"exp": "gain 2^l-1", "linear": "gain l"}
_DISCOUNT_TEXT = {"log2": "discount 1/log2(r+1)", "letor": "discount 1 at r<=2, 1/log2(r) after"}
_TIES_TEXT = {
    "expected": "ties: expectation over tied orders",
    "input_order": "ties: input order",
    "pessimistic": "ties: worst order",
}
_METRIC_TEXT = {"ndcg": "NDCG", "err": "ERR", "map": "MAP", "precision": "P"}


@dataclass(frozen=True)
class Convention:
    """Resolved conventions of one metric.

    Attributes
    ----------
    metric : {"ndcg", "err", "map", "precision"}
    gain : {"exp", "linear"} or tuple of float
        Gain of NDCG and ERR: ``2**l - 1``, ``l``, or the gain of each grade 0, 1, 2, ...
        (``_input.labels.check_gain``).
    discount : {"log2", "letor"}
        NDCG discount: ``1/log2(r+1)``, or the LETOR scripts' (ranks 1-2 undiscounted,
        then ``1/log2(r)``).
    ties : {"expected", "input_order", "pessimistic"}
        How documents with equal scores are ordered.
    no_relevant : float in [0, 1] or "skip"
        Value of a query without relevant documents, or leave it out of the mean.
    short_query_zero : bool
        Metric@k is 0 for a query with fewer than ``k`` documents.
    preset : str or None
        Name of the preset these values came from.
    """

    metric: str
    gain: str | tuple = "exp"
    discount: str = "log2"
    ties: str = "expected"
    no_relevant: float | str = 0.0
    short_query_zero: bool = False
    preset: str | None = None

    def describe(self, k: int | None = None) -> str:
        """Human-readable name of the metric and its conventions, e.g. for a results table."""
        name = _METRIC_TEXT[self.metric] + ("" if k is None else f"@{k}")
        parts = []
        if self.preset is not None:
            parts.append(f"{self.preset} preset")
        if self.metric == "ndcg" or (self.metric == "err" and self.gain != "exp"):
            parts.append(_GAIN_TEXT[self.gain] if isinstance(self.gain, str) else f"gains {list(self.gain)}")
        if self.metric == "ndcg":
            parts.append(_DISCOUNT_TEXT[self.discount])
        parts.append(_TIES_TEXT[self.ties])
        if self.no_relevant == "skip":
            parts.append("queries without relevant docs skipped")
        else:
            parts.append(f"no-relevant query = {self.no_relevant:g}")
        if self.short_query_zero and k is not None:
            parts.append(f"0 for queries with < {k} docs")
        return f"{name} [{', '.join(parts)}]"

    def gain_arguments(self) -> tuple[int, np.ndarray]:
        """The kernels' gain: its id (``_kernels.GAIN_*``) and table (float64, empty unless a table)."""
        if isinstance(self.gain, str):
            return GAINS[self.gain], np.zeros(0)
        return _kernels.GAIN_TABLE, np.array(self.gain, dtype=np.float64)


def _letor(metric: str, short_query_metrics: tuple, preset: str) -> Convention:
    return Convention(
        metric=metric,
        gain="exp",
        discount="letor",
        ties="input_order",
        no_relevant=0.0,
        short_query_zero=metric in short_query_metrics,
        preset=preset,
    )


PRESETS = {
    "letor4": lambda metric: _letor(metric, ("ndcg",), "letor4"),
    "letor3": lambda metric: _letor(metric, ("ndcg", "precision"), "letor3"),
}


def _check_choice(name: str, value: object, choices: dict) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}; got {value!r}.")


def resolve_convention(
    metric: str,
    *,
    convention: str | None = None,
    gain: str | None = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
) -> Convention:
    """Combine a preset and explicit choices into a :class:`Convention`.

    An explicit choice that contradicts the preset raises: a preset exists to
    reproduce published numbers, and a silently altered preset would not.

    Raises
    ------
    ValueError
        Unknown metric, preset or option value, an option conflicting with the preset,
        or a ``gain`` for a metric that has none (MAP, precision).
    """
    _check_choice("metric", metric, METRICS)
    explicit = {"gain": gain, "ties": ties, "no_relevant": no_relevant}
    explicit = {name: value for name, value in explicit.items() if value is not None}
    if "gain" in explicit:
        if metric not in METRICS_WITH_GAIN:
            raise ValueError(
                f"gain weighs grades in {' and '.join(METRICS_WITH_GAIN)}; {metric} counts documents with a grade above "
                "0 as relevant and takes no gain: drop gain."
            )
        checked = check_gain(explicit["gain"], name="gain")
        explicit["gain"] = checked if isinstance(checked, str) else tuple(checked.tolist())
    if "ties" in explicit:
        _check_choice("ties", explicit["ties"], TIES)
    if "no_relevant" in explicit:
        value = explicit["no_relevant"]
        valid_number = isinstance(value, Real) and not isinstance(value, bool) and 0.0 <= value <= 1.0
        if value != "skip" and not valid_number:
            raise ValueError(f"no_relevant must be a number in [0, 1] or 'skip'; got {value!r}.")
    if convention is None:
        return replace(Convention(metric=metric), **explicit)
    _check_choice("convention", convention, PRESETS)
    preset = PRESETS[convention](metric)
    for name, value in explicit.items():
        if getattr(preset, name) != value:
            raise ValueError(
                f"convention={convention!r} fixes {name}={getattr(preset, name)!r}; got {name}={value!r}. "
                "Drop one of the two."
            )
    return preset
