"""Ranking ensembles built on the shared tree engine, and their common contract."""

from ._averaged import AveragedRanker
from ._base import BaseRanker
from ._broof import BROOF
from ._boosting import LambdaMART, PLRank
from ._forest import RFPointRanker
from ._listwise_forest import RFHybridRanker, RFListRanker

__all__ = ["AveragedRanker", "BROOF", "BaseRanker", "LambdaMART", "PLRank", "RFHybridRanker", "RFListRanker", "RFPointRanker"]
