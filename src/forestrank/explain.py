"""Explanations of fitted rankers with SHAP (``serving/_explain.py``)."""

from .serving._explain import shap_tree_model

__all__ = ["shap_tree_model"]
