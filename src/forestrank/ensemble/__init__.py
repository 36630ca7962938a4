"""Ranking ensembles built on the shared tree engine, and their common contract."""

from ._base import BaseRanker
from ._forest import RFPointRanker

__all__ = ["BaseRanker", "RFPointRanker"]
