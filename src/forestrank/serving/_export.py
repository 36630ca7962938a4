"""Every export format by name, and a fitted model written to a file in one of them
(what ``forestrank export`` runs)."""

import json
from pathlib import Path

from ._lightgbm import to_lightgbm
from ._onnx import resolve_dtype, to_onnx
from ._query_scaler import split_query_scaler
from ._solr import to_solr
from ._terms import check_model_name, resolve_feature_names
from ._xgboost import to_xgboost, to_xgboost_ltr

# format name -> what takes the file
FORMATS = {
    "lightgbm": "lightgbm.Booster(model_file=...), Treelite / TL2cgen; Vespa through dump_model, where a value at a threshold goes right",
    "xgboost": "xgboost.Booster().load_model(...); the LTR plugins as model/xgboost+json+raw",
    "xgboost-ltr": "the Elasticsearch / OpenSearch LTR plugins as model/xgboost+json",
    "solr": "Solr's LTR model store (MultipleAdditiveTreesModel)",
    "onnx": "onnxruntime and other ONNX runtimes (ai.onnx.ml TreeEnsembleRegressor)",
}

NAMED_FORMATS = ("solr", "onnx")  # the formats that carry the model's name


def export_model(
    model: object, path: str | Path, *, format: str, feature_names: object = None, name: str | None = None,
    dtype: str = "float64",
) -> Path:  # fmt: skip
    """Write the fitted ``model`` to ``path`` in ``format``.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (its ranker), or a Pipeline of a QueryScaler and one
        Where the format can carry the per-query normalisation it is recorded (LightGBM's
        header, XGBoost's learner attributes) or computed in the graph (ONNX); Solr and
        the LTR plugins' format refuse it (docs/serving.md, "Features normalised per query").
    path : str or Path
        The file to write (replaced if it exists).
    format : {"lightgbm", "xgboost", "xgboost-ltr", "solr", "onnx"}
        See ``FORMATS`` for what takes each file.
    feature_names : sequence of str or None
        One name per column of ``X`` (a pipeline's input); None: the names the model was
        fitted with. Behind a QueryScaler, the trees' features are named from them
        (``QueryScaler.get_feature_names_out``). The LTR
        plugins' and Solr's formats need names; ONNX keeps them in its metadata
        (``feature_names``, a JSON list).
    name : str or None, default=None
        The model's name in Solr's model store or the ONNX graph; None: "forestrank".
        The other formats carry no name, and refuse one.
    dtype : {"float64", "float32"}
        The ONNX model's input type; other formats have their engine's own.

    Returns
    -------
    Path
        ``path``.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {format!r}.")
    resolve_dtype(dtype)  # checked for every format: ONNX reads it
    if name is not None and format not in NAMED_FORMATS:
        raise ValueError(
            f"name is the model's name in {' and '.join(NAMED_FORMATS)}; a {format} file carries none: drop name."
        )
    name = "forestrank" if name is None else name
    check_model_name(name, "Solr's model store or the ONNX graph")
    path = Path(path)
    if format == "onnx":
        onnx_model = to_onnx(model, name=name, dtype=dtype)
        scaler, ranker = split_query_scaler(model)  # the graph's input: the scaler's columns where there is one
        names = resolve_feature_names(ranker if scaler is None else scaler, feature_names, "ONNX", default=None)
        if names:
            onnx_model.metadata_props.add(key="feature_names", value=json.dumps(names, ensure_ascii=False))
        path.write_bytes(onnx_model.SerializeToString())
        return path
    if format == "lightgbm":
        text = to_lightgbm(model, feature_names=feature_names)
    elif format == "solr":
        text = json.dumps(to_solr(model, name=name, feature_names=feature_names), indent=1, ensure_ascii=False)
    else:
        document = (to_xgboost if format == "xgboost" else to_xgboost_ltr)(model, feature_names=feature_names)
        text = json.dumps(document, ensure_ascii=False)
    # Written as UTF-8 itself: XGBoost's JSON reader keeps a "\u00e9" escape as those six
    # characters, so an escaped name would no longer match the DataFrame's column.
    path.write_text(text, encoding="utf-8")
    return path
