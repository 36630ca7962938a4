"""Averaged rankers: the mean of models that differ only by their random state.

Mohan's "Avg kSGBRT" (thesis §2.3, Table 2.4) averages ``b`` stochastic gradient-boosted
models that each examine ``k`` random features per split (b = 20, k = 40 beat GBRT and
kSGBRT on Yahoo Set 2): the randomness that makes one boosted model noisy averages out,
as it does in a forest. ``AveragedRanker(LambdaMART(max_features=k), n_models=b)``.
"""

import contextlib
import pickle
import warnings
from collections.abc import Iterator
from numbers import Integral

import numpy as np
from sklearn import get_config
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metadata_routing import MetadataRequest, MetadataRouter, MethodMapping, get_routing_for_object
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import delayed
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted

from .._input.categories import SPLIT_ON_CATEGORIES
from .._input.labels import check_relevance
from .._input.features import names_matched, rows_for, validate_rows
from .._input.queries import group_queries, missing_qid_warned, stacklevel_outside_package
from ..parallel._cluster import is_dask_collection, map_predict
from ..parallel._local import N_JOBS_CONSTRAINT, process_parallel
from ._base import BaseRanker, check_in_memory, fit_atomically, fit_takes, ranker_gain, sum_of_trees_terms
from ._sampling import seed_entropy


def _fit_member(
    member: object, X: object, y: object, qid: object, sample_weight: object, fit_params: dict
) -> tuple[object, list[Warning]]:
    """Fit ``member``; return it and the warnings its fit emitted under the caller's filters
    (``process_parallel`` hands them to worker processes), which ``_warn_once`` repeats at
    the caller's line: each member would otherwise warn alike, from inside joblib."""
    with missing_qid_warned(), warnings.catch_warnings(record=True) as caught:  # the ensemble warns once of a missing qid
        member.fit(X, y, qid=qid, sample_weight=sample_weight, **fit_params)
    return member, [_portable(record.message) for record in caught]


def _portable(message: Warning) -> Warning:
    """``message`` if it survives pickling (the trip back from a worker process), else a
    UserWarning of its class name and text: a warning class whose ``__init__`` takes
    keywords only cannot be rebuilt from its arguments, and the fit would fail there.
    Pickled here, in the worker, where a failure can still be caught."""
    try:
        return pickle.loads(pickle.dumps(message))
    except Exception:  # noqa: BLE001 (whatever the class's pickling raises)
        return UserWarning(f"{type(message).__name__}: {message}")


def _warn_once(members_warnings: list[list[Warning]]) -> None:
    """Emit each distinct warning of the members' fits once, pointing at the caller's line."""
    emitted = set()
    for caught in members_warnings:
        for message in caught:
            key = (type(message), str(message))
            if key not in emitted:
                emitted.add(key)
                warnings.warn(message, stacklevel=stacklevel_outside_package())


def _check_fit_takes_queries(estimator: object) -> None:
    """A ValueError naming ``estimator`` unless its ``fit`` takes ``qid`` and ``sample_weight``,
    which every member is given (a regressor's ``fit`` failed inside the members' loop)."""
    missing = [name for name in ("qid", "sample_weight") if not fit_takes(estimator, name)]
    if missing:
        raise ValueError(
            "estimator must be a ranker whose fit takes qid and sample_weight (every forestrank ranker's does); "
            f"{type(estimator).__name__}.fit takes no {' and no '.join(missing)}."
        )


class AveragedRanker(BaseRanker):
    """The mean prediction of ``n_models`` copies of a ranker that differ only by ``random_state``.

    Parameters
    ----------
    estimator : ranker, default=None
        The member, cloned ``n_models`` times with random states drawn from
        ``random_state``; None: ``LambdaMART(subsample=0.5, max_features=0.3)``, a
        stochastic boosted model (kSGBRT).
    n_models : int, default=20
        ``b``, the members averaged.
    n_jobs : int or None, default=None
        Members fitted at once, in processes (joblib's loky backend, or the configured
        process backend): a member's own numba-parallel kernels must not run in
        several threads of one process, so under a thread or cluster backend the
        members are fitted one after another; so they are under joblib's
        ``"multiprocessing"`` backend once numba's OpenMP threads have run in this
        process (a child forked from it is terminated by GNU OpenMP). Each member keeps
        its own ``n_jobs``.
        ``None`` fits one member at a time (joblib's default), each on every core by
        its own default; a number of processes and members with ``n_jobs=1`` split
        the cores between members instead.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    estimators_ : list of rankers
        The fitted members.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    frame_categories_ : dict of int to list
        The members' (``LambdaMART.frame_categories_``): the categories of each category
        column of a fitted DataFrame, which the exports write (``docs/serving.md``);
        empty when ``X`` was no DataFrame, absent when the members keep none (those
        without ``categorical_features``).

    Examples
    --------
    >>> from forestrank import AveragedRanker, LambdaMART, make_ranking
    >>> X, y, qid = make_ranking(n_queries=40, random_state=0)
    >>> model = AveragedRanker(LambdaMART(n_estimators=10, max_features=0.5), n_models=3, random_state=0)
    >>> model.fit(X, y, qid=qid).predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_models": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def _gain(self) -> object:
        """The members' gain of the grades (``BaseRanker._gain``), which ``score`` uses."""
        gain = ranker_gain(self.estimator)
        return super()._gain() if gain is None else gain

    def __init__(self, estimator: object = None, n_models: int = 20, *, n_jobs: int | None = None, random_state: object = None) -> None:
        self.estimator = estimator
        self.n_models = n_models
        self.n_jobs = n_jobs
        self.random_state = random_state

    @fit_atomically
    def fit(self, X: object, y: object, qid: object = None, sample_weight: object = None, **fit_params: object) -> "AveragedRanker":
        """Fit every member on the same data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        qid : array-like of shape (n_samples,), default=None
        sample_weight : array-like of shape (n_samples,), default=None
        **fit_params
            Passed to every member's ``fit`` (for example ``eval_set`` for early stopping,
            which then works per member); under metadata routing a search or a
            ``Pipeline`` passes what the member requests (LambdaMART's ``position``, an
            ``eval_set`` requested with ``set_fit_request``).

        Returns
        -------
        self
        """
        self._validate_params()
        template = self._inner_template()[1]
        if "random_state" not in template.get_params():
            raise ValueError(f"estimator must have a random_state to vary; {type(template).__name__} has none.")
        _check_fit_takes_queries(template)
        check_in_memory(self, X)  # y is checked here in memory, and members fit in joblib's processes
        if y is not None:  # None: each member says y is required, in scikit-learn's words
            y = check_relevance(y, name="y", warn_column=True)  # warned once here, not once per member
        qid, sample_weight, fit_params = self._member_fit_params(qid, sample_weight, fit_params)
        unknown = [name for name in fit_params if not fit_takes(template, name)]
        if unknown:
            raise TypeError(
                f"AveragedRanker.fit got {', '.join(map(repr, unknown))}, which its members' fit "
                f"({type(template).__name__}.fit) does not take."
            )
        if qid is None and isinstance(template, BaseRanker):
            # a forestrank member reads no qid as one query: warned once, at the caller's line,
            # not once per member from inside joblib (the members' warning is ignored in
            # _fit_member); an X of no length gets the members' own error. Another library's
            # ranker may take its queries otherwise (XGBRanker's group) and keeps qid=None.
            with contextlib.suppress(TypeError):
                group_queries(None, _num_samples(X), caller="AveragedRanker.fit")
        seeds = np.random.SeedSequence(seed_entropy(self.random_state)).generate_state(self.n_models)
        members = [clone(template).set_params(random_state=int(seed)) for seed in seeds]
        try:
            fitted = process_parallel(self.n_jobs)(
                delayed(_fit_member)(member, X, y, qid, sample_weight, fit_params) for member in members
            )
        except ValueError as error:  # a member's advice for a category column names its own parameter
            if SPLIT_ON_CATEGORIES not in str(error):
                raise
            raise ValueError(str(error).replace(SPLIT_ON_CATEGORIES, self._split_on_categories())) from error
        self.estimators_ = [member for member, _ in fitted]
        _warn_once([caught for _, caught in fitted])
        first = self.estimators_[0]
        self.n_features_in_ = first.n_features_in_
        for name in ("feature_names_in_", "frame_categories_"):  # every member read the same X
            if hasattr(first, name):
                setattr(self, name, getattr(first, name))
            elif hasattr(self, name):  # from an earlier fit
                delattr(self, name)
        self._warn_if_members_are_copies(X)
        return self

    def __sklearn_tags__(self):
        # the rows go to the members as given: the member says what input it takes
        tags = super().__sklearn_tags__()
        inner = get_tags(self._inner_template()[1]).input_tags
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.sparse = inner.sparse
        return tags

    def _inner_template(self) -> tuple[str, object]:
        """Its member, ``estimator`` or the default kSGBRT (``BaseRanker._inner_template``)."""
        if self.estimator is not None:
            return "estimator", self.estimator
        from ._boosting import LambdaMART

        return "estimator", LambdaMART(subsample=0.5, max_features=0.3)

    def get_metadata_routing(self) -> MetadataRouter:
        """Its own requests, as every ranker's (``qid``), and, for ``fit``, its member's: what
        the member requests (LambdaMART's ``position``, an ``eval_set`` requested on it)
        reaches every member through ``fit``'s ``**fit_params`` under metadata routing."""
        return (
            MetadataRouter(owner=type(self).__name__)
            .add_self_request(self)
            .add(estimator=self._inner_template()[1], method_mapping=MethodMapping().add(caller="fit", callee="fit"))
        )

    def _member_fit_params(self, qid: object, sample_weight: object, fit_params: dict) -> tuple[object, object, dict]:
        """``qid``, ``sample_weight`` and ``fit_params`` under the names the member's ``fit``
        takes. Under metadata routing a parameter the member requests under an alias
        (``set_fit_request(position="pos")``) reaches ``fit`` under the alias, which the
        member's ``fit`` does not take: it is renamed back. Everything else passes as given,
        as without routing; a member that routes (a ``Pipeline``) maps its steps' aliases
        itself."""
        if not get_config()["enable_metadata_routing"] or not fit_params:
            return qid, sample_weight, fit_params
        requests = get_routing_for_object(self._inner_template()[1])
        if not isinstance(requests, MetadataRequest):
            return qid, sample_weight, fit_params
        params = dict(fit_params)
        for name, alias in requests.fit.requests.items():
            if isinstance(alias, str) and alias.isidentifier() and alias in params:  # not True/False/None/"$UNUSED$"
                params[name] = params.pop(alias)
        return params.pop("qid", qid), params.pop("sample_weight", sample_weight), params

    def _split_on_categories(self) -> str:
        """Its members take ``categorical_features`` (``BaseRanker._split_on_categories``)."""
        member = clone(self._inner_template()[1]).set_params(categorical_features="from_dtype")
        return f"give its members categorical_features='from_dtype' or their names (estimator={member!r})"

    def _warn_if_members_are_copies(self, X: object) -> None:
        """Warn when the first two members score the training rows alike (and not all
        alike, which a model that learned nothing does): random_state then changed
        nothing, and every member is the same model."""
        if len(self.estimators_) < 2:
            return
        first, second = (np.asarray(member.predict(X)) for member in self.estimators_[:2])
        if np.array_equal(first, second, equal_nan=True) and len(np.unique(first)) > 1:
            warnings.warn(
                f"the first two of the {self.n_models} members of AveragedRanker score the training rows identically: "
                f"{type(self.estimators_[0]).__name__} with these parameters drew nothing at random on this data (no "
                "sampling, or one query under query-level sampling), so the average is one model fitted n_models "
                "times. Give it randomness to average (subsample, max_features, feature_fraction), or fit it alone.",
                UserWarning,
                stacklevel=stacklevel_outside_package(),
            )

    def predict(self, X: object) -> np.ndarray:
        """The mean of the members' predictions, shape (n_samples,), float64; for a Dask
        collection, mapped over its partitions (lazy, ``parallel._cluster.map_predict``)."""
        if is_dask_collection(X):
            return map_predict(self, X)
        with self._members_reading(X):
            return np.mean([member.predict(rows_for(member, X)) for member in self.estimators_], axis=0)

    @contextlib.contextmanager
    def _members_reading(self, X: object) -> Iterator[None]:
        """Check ``X``'s feature names and width once, against the ensemble's (scikit-learn's
        warning that ``X`` has none, or has names the fit had not, and its error for another
        width, naming ``AveragedRanker``), and keep each forestrank member from repeating
        that warning while it reads ``X`` (``_input.features.names_matched``; a member of
        another library fitted on named columns gets an array as a frame of them:
        ``rows_for``). An ``X`` not two-dimensional, or of no
        rows, gets ``check_array``'s error, naming the ensemble (a 1-D ``X`` has no width to
        compare: the error says to reshape it)."""
        check_is_fitted(self)
        if np.ndim(X) != 2 or _num_samples(X) == 0:
            check_array(X, accept_sparse=True, dtype=None, ensure_all_finite=False, estimator=self)
        validate_rows(self, X, skip_check_array=True, reset=False)
        with names_matched():
            yield

    def _check_members(self) -> None:
        """Refuse, at load, a model of no members (``BaseRanker._check_members``)."""
        members = getattr(self, "estimators_", None)
        if not isinstance(members, list) or not members:
            raise ValueError("an AveragedRanker's estimators_ must be a non-empty list of rankers: not a model forestrank saved.")

    def _nested_estimators(self) -> list[tuple[str, object]]:
        """Every member (``BaseRanker._check_nested_widths``)."""
        return [(f"member {index}", member) for index, member in enumerate(getattr(self, "estimators_", []))]

    def _additive_terms(self) -> tuple[list, np.ndarray, None]:
        """How the average combines its members' trees, for serving (``serving/_terms.additive_terms``):
        every member's terms with its weights divided by ``n_models``, the mean of their
        bases. A McRank member (an expected grade, not a sum of trees) is refused."""
        terms, base = [], 0.0
        for member in self.estimators_:
            member_terms, member_base = sum_of_trees_terms(member, "member")
            terms += [(tree, weight / len(self.estimators_), target) for tree, weight, target in member_terms]
            base = base + member_base / len(self.estimators_)
        return terms, np.asarray(base, dtype=np.float64).reshape(1), None

    def _members_stage(self) -> bool:
        """``staged_predict``'s condition (``available_if``): the members have stages (boosted
        members do, forests do not); a fitted model's members say, else ``estimator``."""
        members = self.estimators_ if "estimators_" in vars(self) else [self.estimator]
        lacking = [member for member in members if member is not None and not hasattr(member, "staged_predict")]
        if lacking:
            raise AttributeError(
                f"staged_predict averages the members' stages, and {type(lacking[0]).__name__} has none (it is no "
                "sum of boosting stages)."
            )
        return True

    @available_if(_members_stage)
    def staged_predict(self, X: object):
        """The mean of the members' staged predictions, stage by stage; a member with fewer
        stages (stopped early) keeps its last prediction. The last equals ``predict(X)``."""
        # Each member's generator steps with the others, its last stage held once it ends:
        # the members' stages are never all in memory at once. The members read X under
        # names_matched at each step only: the caller's code between two stages runs in the
        # caller's context, where its own predictions check their feature names.
        with self._members_reading(X):
            streams = [member.staged_predict(rows_for(member, X)) for member in self.estimators_]
            latest = [next(stream) for stream in streams]
        while True:
            yield np.mean(latest, axis=0)
            stepped = False
            with names_matched():
                for index, stream in enumerate(streams):
                    stage = next(stream, None)
                    if stage is not None:
                        latest[index], stepped = stage, True
            if not stepped:
                return

