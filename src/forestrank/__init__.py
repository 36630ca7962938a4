"""forestrank: scikit-learn compatible learning-to-rank on one numba tree engine.

Public names are imported lazily (PEP 562) so that ``import forestrank`` costs
milliseconds and compiles nothing: scikit-learn and numba load on first use of an
estimator, metric or loader, and numba kernels compile on their first call.
"""

from importlib import import_module

from ._version import __version__

_PUBLIC = {
    "AveragedRanker": "forestrank.ensemble",
    "BROOF": "forestrank.ensemble",
    "CalibratedRanker": "forestrank.calibration",
    "DummyRanker": "forestrank.dummy",
    "EarlyExit": "forestrank.ensemble._early_exit",
    "LambdaMART": "forestrank.ensemble",
    "MissingQidWarning": "forestrank._input.queries",
    "PLRank": "forestrank.ensemble",
    "QueryKFold": "forestrank.model_selection",
    "QueryScaler": "forestrank.preprocessing",
    "QueryShuffleSplit": "forestrank.model_selection",
    "RFHybridRanker": "forestrank.ensemble",
    "RFListRanker": "forestrank.ensemble",
    "RFPointRanker": "forestrank.ensemble",
    "average_precision": "forestrank.metrics",
    "describe_metric": "forestrank.metrics",
    "tree_strength_curve": "forestrank.diagnostics",
    "paired_test": "forestrank.stats",
    "err_score": "forestrank.metrics",
    "err_scorer": "forestrank.metrics",
    "load_letor": "forestrank.datasets",
    "load_letor_fold": "forestrank.datasets",
    "make_ranking": "forestrank.datasets",
    "map_score": "forestrank.metrics",
    "map_scorer": "forestrank.metrics",
    "ndcg_score": "forestrank.metrics",
    "ndcg_scorer": "forestrank.metrics",
    "precision_at_k": "forestrank.metrics",
    "simulate_clicks": "forestrank.datasets",
}
_SUBMODULES = {"calibration", "datasets", "diagnostics", "dummy", "ensemble", "metrics", "model_selection", "objectives", "preprocessing", "stats"}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> object:
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
    elif name in _SUBMODULES:
        value = import_module(f"forestrank.{name}")
    else:
        raise AttributeError(f"module 'forestrank' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
