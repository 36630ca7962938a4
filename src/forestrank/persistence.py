"""Saving fitted rankers in scikit-learn's safe format, skops (``serving/_persistence.py``)."""

from .serving._persistence import InconsistentVersionWarning, load, save, trusted_types

__all__ = ["InconsistentVersionWarning", "load", "save", "trusted_types"]
