"""Export fitted rankers: ONNX and a JSON dump of the trees (``serving/_export.py``)."""

from .serving._export import dump_trees, to_onnx

__all__ = ["dump_trees", "to_onnx"]
