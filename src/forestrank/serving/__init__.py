"""Serving fitted rankers outside this process: exports to other engines' formats
(``_lightgbm``, ``_xgboost``, ``_solr``, ``_onnx``; by name in ``_export``), forestrank's
JSON dump of the trees (``_dump``), all read from each ensemble's terms (``_terms``);
SHAP explanations (``_explain``) and safe persistence (``_persistence``). Their public
paths are the top-level modules :mod:`forestrank.export`, :mod:`forestrank.explain` and
:mod:`forestrank.persistence`."""
