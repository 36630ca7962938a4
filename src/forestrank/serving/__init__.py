"""Serving fitted rankers outside this process: ONNX export and a JSON dump of the
trees (``_export``), SHAP explanations (``_explain``) and safe persistence (``_persistence``).
Their public paths are the top-level modules :mod:`forestrank.export`,
:mod:`forestrank.explain` and :mod:`forestrank.persistence`."""
