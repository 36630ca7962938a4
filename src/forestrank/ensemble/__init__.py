"""Ranking ensembles built on the shared tree engine, and their common contract."""

from ._base import BaseRanker

__all__ = ["BaseRanker"]
