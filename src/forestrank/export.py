"""Export fitted rankers to the formats serving systems load (``serving/``): LightGBM's
text model, XGBoost's JSON model and tree dump (the Elasticsearch / OpenSearch LTR
plugins), Solr's ``MultipleAdditiveTreesModel``, ONNX (float64 or float32 input), and a
JSON dump of the trees. ``docs/serving.md`` says which engine takes which file."""

from .serving._dump import dump_trees
from .serving._export import FORMATS, export_model
from .serving._lightgbm import to_lightgbm
from .serving._onnx import to_onnx
from .serving._solr import to_solr
from .serving._xgboost import to_xgboost, to_xgboost_ltr

__all__ = ["FORMATS", "dump_trees", "export_model", "to_lightgbm", "to_onnx", "to_solr", "to_xgboost", "to_xgboost_ltr"]
