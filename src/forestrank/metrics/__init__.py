"""Ranking metrics (NDCG, ERR, MAP, precision), their conventions and scikit-learn scorers.

See ``docs/metrics.md`` for the conventions and a worked example.
"""

from ._conventions import Convention, resolve_convention
from ._ranking import (
    average_precision,
    describe_metric,
    err_score,
    map_score,
    ndcg_score,
    precision_at_k,
)
from ._scorer import RankingScorer, err_scorer, map_scorer, ndcg_scorer

__all__ = [
    "Convention",
    "RankingScorer",
    "average_precision",
    "describe_metric",
    "err_score",
    "err_scorer",
    "map_score",
    "map_scorer",
    "ndcg_score",
    "ndcg_scorer",
    "precision_at_k",
    "resolve_convention",
]
