"""A ``Pipeline`` of :class:`~forestrank.preprocessing.QueryScaler` and a ranker in the exports.

The scaler normalises each feature over the documents of one query, so the trees' inputs
depend on the other documents a query returns. No tree format has a place for that, so
the exports that can carry it say it in the file (``RECORD_KEY``, a JSON object that
names the method, the appended query statistics and the input's width) and ONNX computes
it in the graph; the formats of the engines that score one document at a time with no
view of the query (Solr, the LTR plugins' own format) refuse the pipeline by name.
``docs/serving.md``, "Features normalised per query", says what each engine can do.
"""

import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where used: the command line's help must not load scikit-learn
    from ..preprocessing import QueryScaler

RECORD_KEY = "forestrank_query_normalisation"


def split_query_scaler(model: object) -> tuple["QueryScaler | None", object]:
    """``(scaler, ranker)`` of a fitted ``Pipeline(QueryScaler, ranker)``, or ``(None,
    model)`` for anything else; a pipeline of other steps is refused by name. A
    ``CalibratedRanker``, alone or as the pipeline's last step, stands for its fitted
    ranker (``estimator_``): its ``predict`` is that ranker's scores, which the exports
    write; its calibration map (``predict_relevance``) is not a score they carry.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker, or a fitted sklearn.pipeline.Pipeline

    Returns
    -------
    scaler : QueryScaler or None
    ranker : the model the trees come from
    """
    from sklearn.pipeline import Pipeline

    from ..preprocessing import QueryScaler

    model = _calibrated_ranker(model)
    if not isinstance(model, Pipeline):
        return None, model
    steps = [(name, step) for name, step in model.steps if step not in (None, "passthrough")]
    transformers = steps[:-1]
    if len(transformers) != 1 or not isinstance(transformers[0][1], QueryScaler):
        described = ", ".join(f"{name} ({type(step).__name__})" for name, step in transformers) or "none"
        raise TypeError(
            "model must be a forestrank ranker or a Pipeline of one QueryScaler and a ranker, whose per-query "
            f"normalisation the exports record; this one's transformers are: {described}. Export the ranker "
            "(pipeline[-1]) and apply the other steps in the serving engine."
        )
    return transformers[0][1], _calibrated_ranker(steps[-1][1])


def _calibrated_ranker(model: object) -> object:
    """A fitted ``CalibratedRanker``'s ranker (``estimator_``), whose scores its ``predict``
    returns; any other model as it is."""
    from sklearn.utils.validation import check_is_fitted

    from ..calibration import CalibratedRanker

    if not isinstance(model, CalibratedRanker):
        return model
    check_is_fitted(model)
    return model.estimator_


def query_normalisation(scaler: "QueryScaler") -> dict:
    """What a serving engine must compute before the trees, as JSON-serialisable data:
    the method, the appended query statistics and the input's width (``RECORD_KEY``)."""
    return {
        "method": scaler.method, "query_features": list(scaler.query_features), "n_features_in": int(scaler.n_features_in_),
        "over": "the documents of one query, missing values (NaN) left out; the statistics' columns follow the "
        "normalised ones, one block per statistic (forestrank.preprocessing.QueryScaler)",
    }  # fmt: skip


def query_normalisation_json(scaler: "QueryScaler") -> str:
    """:func:`query_normalisation` as one line of JSON without spaces between tokens."""
    return json.dumps(query_normalisation(scaler), separators=(",", ":"), ensure_ascii=False)


def scaled_feature_names(scaler: "QueryScaler | None", names: object) -> object:
    """The names of the trees' features: ``names`` as given without a scaler; with one,
    ``names`` (one per raw column, or None for the names the scaler was fitted with)
    through ``QueryScaler._names_out``, or None where neither exists."""
    if scaler is None:
        return names
    if names is None and not hasattr(scaler, "feature_names_in_"):
        return None
    if names is not None and (isinstance(names, str) or len(names) != scaler.n_features_in_):
        count = "a string" if isinstance(names, str) else f"{len(names)} names"
        raise ValueError(
            f"feature_names name the pipeline's input columns: {scaler.n_features_in_} names; got {count}. The "
            "exported trees read the QueryScaler's output, named from them."
        )
    return [str(name) for name in scaler._names_out(scaler.feature_names_in_ if names is None else names)]


def refuse_query_scaler(scaler: "QueryScaler | None", target_format: str) -> None:
    """Raise where ``target_format``'s engine cannot be told to normalise per query."""
    if scaler is not None:
        raise ValueError(
            f"{target_format} scores each document on its own, with no view of the other documents of its query, "
            "so it cannot apply the pipeline's QueryScaler. Compute the normalised features before the engine and "
            "export the ranker (pipeline[-1]), or export to ONNX, which normalises the query in the graph "
            "(docs/serving.md, 'Features normalised per query')."
        )


def query_scaler_nodes(scaler: "QueryScaler", input_name: str, output_name: str) -> tuple[list, list]:
    """ONNX nodes that compute ``scaler.transform`` of the rows of ``input_name``, taken as
    the documents of one query, into ``output_name`` (float64).

    The statistics leave missing values out as ``QueryScaler`` does: a minimum over the
    values with NaN read as ``+inf``, a maximum with NaN read as ``-inf``, the mean and
    the population standard deviation over the present values; NaN stays NaN. As in
    ``preprocessing._magnitudes``, each feature's values are first multiplied by a power
    of two near the reciprocal of their largest magnitude (two factors, each within
    float64's normal range), so that sums and squares neither overflow nor underflow; the
    products are exact, so the normalised values are unchanged, and the mean and standard
    deviation are divided back by the same factors. ``"rank"``
    compares every pair of the query's documents per feature (``Less`` and ``Equal`` on
    an (n, n, n_features) tensor): quadratic in the query's length, meant for the
    hundreds of documents a re-ranking stage scores.

    Parameters
    ----------
    scaler : fitted QueryScaler
    input_name : str
        A float64 tensor of shape (n_documents, scaler.n_features_in_).
    output_name : str
        A float64 tensor of shape (n_documents, n_features_in * (1 + len(query_features))).

    Returns
    -------
    nodes : list of onnx.NodeProto
    initializers : list of onnx.TensorProto
    """
    from onnx import TensorProto, helper, numpy_helper

    prefix = "query_scaler_"
    nodes: list = []

    def node(op_type: str, inputs: list, output: str, **attributes: object) -> str:
        name = prefix + output
        named = [item if item == input_name else prefix + item for item in inputs]
        nodes.append(helper.make_node(op_type, named, [name], **attributes))
        return output

    constants = {
        "zero": 0.0, "one": 1.0, "nan": np.nan, "inf": np.inf, "minus_inf": -np.inf, "two": 2.0, "halving": 0.5,
        "inverse_ln2": 1.0 / np.log(2.0),
    }  # fmt: skip
    initializers = [
        numpy_helper.from_array(np.array(value, dtype=np.float64), prefix + key) for key, value in constants.items()
    ]
    initializers.append(numpy_helper.from_array(np.array([0], dtype=np.int64), prefix + "rows"))
    node("IsNaN", [input_name], "missing")
    x, factors = _scaled_nodes(node, input_name)
    node("Not", ["missing"], "present")
    node("Cast", ["present"], "present_count", to=TensorProto.DOUBLE)
    node("ReduceSum", ["present_count", "rows"], "count", keepdims=1)
    node("Greater", ["count", "zero"], "any_present")
    statistics = {name: _extreme_nodes(node, x, name) for name in ("min", "max")}
    if scaler.method == "zscore" or {"mean", "std"} & set(scaler.query_features):
        node("ReduceSum", [node("Where", ["missing", "zero", x], "present_values"), "rows"], "sum", keepdims=1)
        statistics["mean"] = node("Div", ["sum", "count"], "mean")
        node("Where", ["missing", "zero", node("Sub", [x, "mean"], "centred")], "deviations")
        node("ReduceSum", [node("Mul", ["deviations", "deviations"], "squares"), "rows"], "sum_of_squares", keepdims=1)
        statistics["std"] = node("Sqrt", [node("Div", ["sum_of_squares", "count"], "variance")], "std")
    if scaler.method == "rank":
        _rank_nodes(node, input_name, initializers, prefix)
        normalised = "normalised"
    else:
        node("Greater", [node("Sub", ["max", "min"], "spread"), "zero"], "varies")
        low, scale = ("min", "spread") if scaler.method == "minmax" else ("mean", "std")
        node("Where", ["varies", scale, "one"], "divisor")
        node("Where", ["varies", node("Div", [node("Sub", [x, low], "shifted"), "divisor"], "divided"), "zero"], "scaled")
        normalised = node("Where", ["missing", "nan", "scaled"], "normalised")
    columns = [normalised]
    if scaler.query_features:
        node("Shape", [x], "shape")
        for name in scaler.query_features:
            if name in ("min", "max"):  # of the raw values, as QueryScaler's: a scaled value may have underflowed
                raw = _extreme_nodes(node, input_name, name, "raw_")
            else:
                raw = node("Div", [node("Div", [statistics[name], factors[0]], f"{name}_half_back"), factors[1]], f"raw_{name}")
            columns.append(node("Expand", [raw, "shape"], f"query_{name}"))
    nodes.append(helper.make_node("Concat", [prefix + column for column in columns], [output_name], axis=1))
    return nodes, initializers


def _extreme_nodes(node: object, x: str, name: str, prefix: str = "") -> str:
    """The ``name`` ("min" or "max") of each feature of ``x`` over its present values (NaN
    where none is): missing values read as +inf for the minimum, -inf for the maximum."""
    ignored, reduce = ("inf", "ReduceMin") if name == "min" else ("minus_inf", "ReduceMax")
    node("Where", ["missing", ignored, x], f"{prefix}{name}_candidates")
    node(reduce, [f"{prefix}{name}_candidates"], f"{prefix}{name}_or_{ignored}", axes=[0], keepdims=1)
    return node("Where", ["any_present", f"{prefix}{name}_or_{ignored}", "nan"], f"{prefix}{name}")


def _scaled_nodes(node: object, x: str) -> tuple[str, tuple[str, str]]:
    """Nodes that multiply each feature of ``x`` by ``2**-e``, ``e`` the floor of the base-2
    logarithm of its largest present magnitude (0 where all are 0 or missing), as two
    factors ``2**-floor(e / 2)`` and ``2**-(e - floor(e / 2))``: for a subnormal or a
    value near float64's largest, ``2**-e`` alone would overflow or underflow. Returns the
    scaled values' name and the two factors, which divide a statistic back exactly."""
    node("Where", ["missing", "zero", node("Abs", [x], "absolute")], "present_absolute")
    node("ReduceMax", ["present_absolute"], "largest", axes=[0], keepdims=1)
    node("Greater", ["largest", "zero"], "nonzero")
    node("Log", [node("Where", ["nonzero", "largest", "one"], "largest_or_one")], "log_largest")
    node("Floor", [node("Mul", ["log_largest", "inverse_ln2"], "log2_largest")], "exponent")
    node("Floor", [node("Mul", ["exponent", "halving"], "exponent_halved")], "first_exponent")
    node("Sub", ["exponent", "first_exponent"], "second_exponent")
    node("Pow", ["two", node("Neg", ["first_exponent"], "minus_first")], "first_down")
    node("Pow", ["two", node("Neg", ["second_exponent"], "minus_second")], "second_down")
    scaled = node("Mul", [node("Mul", [x, "first_down"], "half_scaled"), "second_down"], "scaled_input")
    return scaled, ("first_down", "second_down")


def _rank_nodes(node: object, x: str, initializers: list, prefix: str) -> None:
    """``"rank"``: each present value's mean rank among the query's present values of its
    feature, ``less + (equal - 1) / 2``, over ``count - 1`` (0 where that is 0); NaN
    compares false with everything, so it is counted nowhere."""
    from onnx import TensorProto, numpy_helper

    initializers += [
        numpy_helper.from_array(np.array([1], dtype=np.int64), prefix + "pairs_axis"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), prefix + "others_axis"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float64), prefix + "half"),
    ]
    node("Unsqueeze", [x, "pairs_axis"], "each")  # (n, 1, f)
    node("Unsqueeze", [x, "others_axis"], "others")  # (1, n, f)
    node("Cast", [node("Less", ["others", "each"], "is_less")], "less_pairs", to=TensorProto.DOUBLE)
    node("Cast", [node("Equal", ["others", "each"], "is_equal")], "equal_pairs", to=TensorProto.DOUBLE)
    node("ReduceSum", ["less_pairs", "pairs_axis"], "less", keepdims=0)
    node("ReduceSum", ["equal_pairs", "pairs_axis"], "equal", keepdims=0)
    node("Sub", ["equal", "one"], "tied_others")
    node("Add", ["less", node("Mul", ["tied_others", "half"], "half_ties")], "mean_rank")
    node("Greater", [node("Sub", ["count", "one"], "rank_spread"), "zero"], "ranks_vary")
    node("Where", ["ranks_vary", "rank_spread", "one"], "rank_divisor")
    node("Where", ["ranks_vary", node("Div", ["mean_rank", "rank_divisor"], "rank_divided"), "zero"], "rank_scaled")
    node("Where", ["missing", "nan", "rank_scaled"], "normalised")
