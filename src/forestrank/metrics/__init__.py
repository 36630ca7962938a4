"""Ranking metrics (NDCG, ERR, MAP, precision), binary metrics (AUC, partial AUC,
PREC@5), their conventions and scikit-learn scorers.

See ``docs/metrics.md`` for the conventions and a worked example.
"""

from ._binary import auc_score, partial_auc_score, precision_at_5
from ._conventions import Convention, resolve_convention
from ._custom import CustomMetric
from ._ranking import (
    average_precision,
    describe_metric,
    err_score,
    map_score,
    ndcg_score,
    precision_at_k,
)
from ._scorer import (
    BinaryScorer,
    RankingScorer,
    auc_scorer,
    err_scorer,
    map_scorer,
    ndcg_scorer,
    partial_auc_scorer,
    precision_at_5_scorer,
)

__all__ = [
    "BinaryScorer",
    "Convention",
    "CustomMetric",
    "RankingScorer",
    "auc_score",
    "auc_scorer",
    "average_precision",
    "describe_metric",
    "err_score",
    "err_scorer",
    "map_score",
    "map_scorer",
    "ndcg_score",
    "ndcg_scorer",
    "partial_auc_score",
    "partial_auc_scorer",
    "precision_at_5",
    "precision_at_5_scorer",
    "precision_at_k",
    "resolve_convention",
]
