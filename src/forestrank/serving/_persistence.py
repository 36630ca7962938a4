"""Saving fitted rankers: scikit-learn's safe format (skops) and the forestrank version.

Pickle (and joblib) run arbitrary code on load. :func:`save` writes the skops format,
whose :func:`load` rebuilds only the types it is told to trust: numpy, scikit-learn and
the forestrank types of :func:`trusted_types`; a file holding anything else is refused.
Trusted types are not enough: the predictor follows the node indices of the trees it
is given, so every tree is checked as it is loaded (``_tree._tree.Tree.check``), and a
file whose trees could send it outside the arrays is refused.
Every saved ranker, in either format, carries the forestrank version that fitted it,
and loading it under another version warns (``InconsistentVersionWarning``), since
models are only guaranteed to predict the same under the version that saved them.
"""

import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from types import FunctionType, ModuleType

from ..ensemble._base import InconsistentVersionWarning

__all__ = ["InconsistentVersionWarning", "load", "save", "trusted_types"]

_SKOPS_HELP = 'the skops format needs skops: pip install "forestrank[skops]"'


def trusted_types() -> list[str]:
    """The forestrank types a saved ranker may hold (for ``skops.io.load(trusted=...)``)."""
    return [
        "forestrank._tree._tree.Tree",
        "forestrank.calibration.CalibratedRanker",
        "forestrank.dummy.DummyRanker",
        "forestrank.ensemble._averaged.AveragedRanker",
        "forestrank.ensemble._boosting.LambdaMART",
        "forestrank.ensemble._boosting.PLRank",
        "forestrank.ensemble._broof.BROOF",
        "forestrank.ensemble._forest.RFPointRanker",
        "forestrank.ensemble._listwise_forest.RFHybridRanker",
        "forestrank.ensemble._listwise_forest.RFListRanker",
        "forestrank.model_selection.QueryKFold",
        "forestrank.model_selection.QueryShuffleSplit",
        "forestrank.preprocessing.QueryScaler",
        "forestrank.transfer._features.ModelFeatures",
    ]


def save(model: object, path: str | PathLike) -> None:
    """Write ``model`` in the skops format to ``path``. Metadata requests
    (``set_fit_request(qid=True)`` and the like, on the model or any estimator in it) are
    written with it and set again by :func:`load`.

    Raises
    ------
    TypeError
        When a parameter is a numba-compiled function (an ``objective`` or
        ``eval_metric`` of your own), which skops cannot write; joblib or pickle can.
    """
    try:
        import skops.io
    except ImportError as error:
        raise ImportError(_SKOPS_HELP) from error
    compiled = _compiled_functions(model)
    if compiled:
        raise TypeError(
            f"the skops format cannot hold a numba-compiled function, and {type(model).__name__}'s "
            f"{'; '.join(compiled)}: save the model with joblib or pickle (which run code when loaded: load "
            "such a file only from a source you trust), or give the parameter a Python function."
        )
    with _requests_as_dicts(model):
        skops.io.dump(model, path)


# Where a saved estimator keeps the metadata requests that set_fit_request and the like
# gave it, as {method: {parameter: request}}: skops cannot write scikit-learn's request
# objects (it recurses without end), so they travel as plain dicts and are set again on load.
_REQUESTS = "_forestrank_metadata_requests"


def _reachable(model: object) -> Iterator[object]:
    """Every object reachable from ``model`` through attributes, lists, tuples, sets, dicts
    and object arrays (parameters, fitted members, pipeline steps, a search's
    ``cv_results_``), each once. A numba-compiled function is yielded, not entered (its
    compiler's objects lead to native libraries whose ``__dict__`` is no dict)."""
    import numpy as np
    from numba.core.dispatcher import Dispatcher

    seen, pending = set(), [model]
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, Dispatcher | type | ModuleType | FunctionType):
            continue
        if isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, np.ndarray):
            if item.dtype == object:
                pending.extend(item.ravel().tolist())
        elif isinstance(getattr(item, "__dict__", None), dict):
            pending.extend(vars(item).values())


def _requesters(model: object) -> list:
    """The metadata requesters (estimators, scorers, splitters: scikit-learn's
    ``_MetadataRequester``) reachable from ``model`` (``_reachable``)."""
    from sklearn.utils._metadata_requests import _MetadataRequester

    return [item for item in _reachable(model) if isinstance(item, _MetadataRequester)]


@contextmanager
def _requests_as_dicts(model: object) -> Iterator[None]:
    """Within the block, each requester's metadata requests are a plain dict (``_REQUESTS``)."""
    from sklearn.utils._metadata_requests import SIMPLE_METHODS

    swapped = []
    try:
        for requester in _requesters(model):
            request = vars(requester).get("_metadata_request")
            if request is None:
                continue
            plain = {
                method: dict(getattr(request, method).requests)
                for method in SIMPLE_METHODS
                if hasattr(request, method) and getattr(request, method).requests
            }
            swapped.append((requester, request))
            del requester._metadata_request
            setattr(requester, _REQUESTS, plain)
        yield
    finally:
        for requester, request in swapped:
            vars(requester).pop(_REQUESTS, None)
            requester._metadata_request = request


def _restore_requests(model: object) -> None:
    """Set again the metadata requests that :func:`save` wrote as plain dicts."""
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):  # the setters exist only with routing on
        for requester in _requesters(model):
            plain = vars(requester).pop(_REQUESTS, None)
            try:
                for method, requests in (plain or {}).items():
                    getattr(requester, f"set_{method}_request")(**requests)
            except (AttributeError, TypeError, ValueError) as error:
                raise ValueError(
                    f"the metadata requests saved with a {type(requester).__name__} ({plain!r}) are not requests it "
                    f"can make under scikit-learn {sklearn.__version__} ({error}): a model saved under another "
                    "scikit-learn, or a file rewritten after forestrank.persistence.save wrote it."
                ) from error


def _compiled_functions(model: object) -> list[str]:
    """Where ``model`` holds numba-compiled functions, which skops cannot write: each
    parameter (nested ones included) that is one or holds one (a ``CustomMetric`` of one, a
    search's grid), then any other attribute that holds one."""
    from numba.core.dispatcher import Dispatcher

    def compiled(value: object) -> list:
        return [item for item in _reachable(value) if isinstance(item, Dispatcher)]

    params = model.get_params(deep=True) if hasattr(model, "get_params") else {}
    # Parameters that are a function come first, then nested ones: a pipeline's ``steps``
    # hold every step's functions too, which ``ranker__objective`` names better.
    params = sorted(params.items(), key=lambda item: (not isinstance(item[1], Dispatcher), "__" not in item[0]))
    found, named = [], set()
    for name, value in params:
        if hasattr(value, "get_params"):  # a nested estimator: its parameters come by their own names
            continue
        functions = [function for function in compiled(value) if id(function) not in named]
        if not functions:
            continue
        named.update(id(function) for function in functions)
        if isinstance(value, Dispatcher):
            found.append(f"{name} is one")
        else:
            found.append(f"{name} holds one ({', '.join(function.__name__ for function in functions)})")
    others = [function.__name__ for function in compiled(model) if id(function) not in named]
    if others:
        found.append(f"attributes hold {', '.join(others)}")
    return found


def load(path: str | PathLike, trusted: Sequence[str] = ()) -> object:
    """Read a ranker written by :func:`save`, trusting only numpy, scikit-learn and forestrank types.

    Parameters
    ----------
    path : str or path-like
    trusted : sequence of str (not one str), default=()
        More types to trust, by their full names, for a model that holds them: skops
        refuses some of scikit-learn's own, such as ``"sklearn.tree._tree.Tree"`` (a
        LambdaMART whose ``init`` is a fitted scikit-learn tree model), whose node
        indices it cannot check. Trust them only in a file from a source you trust.

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        When the file holds any other type; the message names the types.
    TypeError
        When ``trusted`` is one string rather than a sequence of them.
    ValueError
        When the file is not a zip archive, as every file :func:`save` writes is (a
        pickle, or a file cut short); when a tree (its nodes must form one tree), a nested estimator's width
        (``ensemble/_base.BaseRanker``), an ensemble's members (an ``AveragedRanker`` or
        ``BROOF`` of no members or of a member that is no estimator (no ``predict``); a ``BROOF`` of other
        than one weight per forest) or an estimator's parameters do not hold together:
        a file whose class names were rewritten (forestrank's state under a
        scikit-learn class) lacks the parameters of the class it names. Also when the
        saved metadata requests (``set_fit_request`` and the like) are not requests the
        estimator can make under the installed scikit-learn.
    """
    try:
        import skops.io
    except ImportError as error:
        raise ImportError(_SKOPS_HELP) from error
    if isinstance(trusted, str):
        raise TypeError(f"trusted must be a sequence of type names, such as [{trusted!r}]; got the string {trusted!r}.")
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise ValueError(
            f"{path}: not a skops model file (save writes a zip archive; this file is not one, or is cut short). A "
            "pickled model is read with joblib.load or pickle.load, which run its code: only from a source you trust."
        )
    model = skops.io.load(path, trusted=[*trusted_types(), *trusted])
    _restore_requests(model)
    if hasattr(model, "get_params"):
        try:
            model.get_params(deep=True)
        except AttributeError as error:
            raise ValueError(
                f"{path}: its {type(model).__name__} lacks a parameter of its class ({error}): not a model saved by "
                "forestrank.persistence.save."
            ) from error
    return model
