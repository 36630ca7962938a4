"""MART's least squares on the grade, the gain or the normalised gain, and CatBoost's
QueryRMSE, the same with each query's offset free (``objectives/__init__.py``)."""

from collections import namedtuple

import numpy as np

from .._input.labels import check_gain
from .._ranking import exp_gains_of_grades, grade_gains, normalized_gains
from ._base import RankingObjective, mean_target
from ._compiled import register_gradients


_LARGEST_SQUARED_EXP_GRADE = 480

SquaredErrorState = namedtuple("SquaredErrorState", ["targets"])
SquaredErrorState.__doc__ = """``SquaredError.compiled_state()``: the regression targets (float64, (n_rows,))."""


@register_gradients(SquaredErrorState)
def _squared_error_gradients_at(state, scores, gradients, hessians):
    for row in range(len(scores)):
        gradients[row] = scores[row] - state.targets[row]
        hessians[row] = 1.0


class SquaredError(RankingObjective):
    """Least squares on the grade, on ``G(l) = 2^l - 1`` (MART-2 and MART-1 of the PLRank
    paper, Eqs. 12 and 11), or on ``G(l) / |G|_D`` (c-MART-1, Eq. 10).

    ``|G|_D`` is the query's DCG normaliser, the DCG of its ideal order over the whole
    list (``max_pi sum_i G(l_pi(i)) / log2(1 + i)``). Regressing on ``G / |G|_D`` makes
    the least-squares surrogate NDCG-consistent (Ravikumar, Tewari & Yang, "On NDCG
    Consistency of Listwise Ranking Methods", AISTATS 2011): its minimiser, the
    conditional mean of the normalised gains, orders documents as the Bayes-optimal
    ranking for NDCG does, which the mean of the raw gains need not. A query without
    gain regresses on zeros.

    Parameters
    ----------
    target : {"grade", "exp_gain", "normalized_gain"}, default="grade"
        ``"exp_gain"`` and ``"normalized_gain"`` take ``label_gain``'s ``G``.
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        ``G(l)``: ``2^l - 1``, ``l`` or a table (``_ranking.row_gains``).
    """

    starts_from_mean_target = True

    def __init__(self, target: str = "grade", label_gain: object = "exp") -> None:
        self.target = target
        self.label_gain = label_gain

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        if self.target == "grade":
            self.targets_ = self.labels_
        elif self.target == "normalized_gain":
            self.targets_ = normalized_gains(self.labels_, self.query_boundaries_, "dcg", self.label_gain)
        elif isinstance(self.label_gain, str) and self.label_gain == "exp":
            largest = float(self.labels_.max())
            if largest > _LARGEST_SQUARED_EXP_GRADE:
                raise ValueError(
                    f"target='exp_gain' regresses on 2**y - 1, whose squared loss overflows float64 for grades above "
                    f"{_LARGEST_SQUARED_EXP_GRADE}; y holds {largest:g}. Use target='grade', or objective='c-mart' "
                    "(the gains normalised per query, finite for any grade)."
                )
            self.targets_ = exp_gains_of_grades(self.labels_, 0.0)
        else:
            self.targets_ = grade_gains(self.labels_, check_gain(self.label_gain, name="label_gain"))
            if self.targets_.max() > 2.0**_LARGEST_SQUARED_EXP_GRADE:
                raise ValueError(
                    f"target='exp_gain' regresses on label_gain's gains, whose squared loss overflows float64 above "
                    f"2**{_LARGEST_SQUARED_EXP_GRADE}; y's grades reach a gain of {self.targets_.max():g}. Use "
                    "target='grade', or objective='c-mart' (the gains normalised per query, finite for any gain)."
                )

    def initial_score(self, sample_weight: np.ndarray | None = None) -> float:
        """The mean target weighted by ``sample_weight``, the constant minimising the
        weighted loss (Friedman 2001, Algorithm 2; LightGBM's ``boost_from_average``)."""
        return float(np.ravel(mean_target(self.targets_, sample_weight))[0])

    def loss(self, scores: np.ndarray) -> float:
        """``1/2 sum (s - t)^2``."""
        return 0.5 * float(((scores - self.targets_) ** 2).sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        np.subtract(scores, self.targets_, out=gradients)
        hessians[:] = 1.0

    def compiled_state(self) -> SquaredErrorState | None:
        return SquaredErrorState(self.targets_)


class QueryRMSE(SquaredError):
    """Least squares up to a free offset per query (CatBoost's ``QueryRMSE``).

    ``L = 1/2 sum_q sum_{i in q} (s_i + b_q - t_i)^2`` with each query's offset at its
    minimiser, the mean residual ``b_q = mean_{i in q} (t_i - s_i)``. Since ``b_q``
    minimises ``L``, ``dL/ds_i = s_i + b_q - t_i`` (the envelope theorem), and the
    residuals of a query sum to zero: the loss asks each query's scores for the targets'
    differences only, which is all a ranking uses. ``h`` is 1, as in CatBoost: the
    curvature with ``b_q`` held where it is (re-fitting ``b_q`` to a leaf's step would
    lower a leaf's curvature by its documents' share of each query). The offset is the
    unweighted mean: with ``sample_weight`` per query, as ranking data has it, that is
    the weighted mean, CatBoost's (``LambdaMART`` refuses weights that vary within a
    query with this objective).

    Parameters
    ----------
    target : {"grade", "exp_gain"}, default="grade"
        What the scores fit, as for :class:`SquaredError`.
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        ``G(l)`` of ``target="exp_gain"``.
    """

    starts_from_mean_target = False
    shift_invariant = True

    def initial_score(self, sample_weight: np.ndarray | None = None) -> float:
        """0: any constant is absorbed by the queries' offsets."""
        return 0.0

    def _residuals(self, scores: np.ndarray) -> np.ndarray:
        """``s - t`` less each query's mean of it, float64 of shape (n_rows,)."""
        residuals = scores - self.targets_
        sizes = np.diff(self.query_boundaries_)
        means = np.add.reduceat(residuals, self.query_boundaries_[:-1]) / sizes
        return residuals - np.repeat(means, sizes)

    def loss(self, scores: np.ndarray) -> float:
        """``1/2 sum (s + b_q - t)^2``."""
        residuals = self._residuals(scores)
        return 0.5 * float(np.dot(residuals, residuals))

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        gradients[:] = self._residuals(scores)
        hessians[:] = 1.0

    def compiled_state(self) -> None:
        """None: the queries' mean residuals are numpy's sums, which a compiled loop would add in another order."""
        return None
