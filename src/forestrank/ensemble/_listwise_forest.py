"""Random forests whose splits maximise the expected NDCG of the whole tree: RF-list, RF-hybrid.

Ibrahim & Carman, "Comparing Pointwise and Listwise Objective Functions for Random
Forest based Learning-to-Rank": RF-list (§4.3, Algorithm 4) grows every tree
breadth-first; a node is split, when its turn comes, by the candidate that most
increases the mean over the tree's training queries of the expected NDCG
(Eq. 11-13) of the tree as it stands, every leaf scoring its documents by their
pooled expected relevance (Eq. 9). RF-hybrid (§4.4.3) splits listwise above a depth
and with the pointwise entropy below. Both run on the shared engine: the listwise
criterion is the stateful ``move`` path of the builder (``forestrank._tree._listwise``,
which states the incremental algorithm and its complexity).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._tree import _criteria, _frontier, _listwise, _scans
from .._tree._grow import TrainingSet, TreeParams
from .._input.labels import check_grades_for_gain
from .._ranking import row_gains
from ._base import RankingData
from ._forest import RELEVANCE_WEIGHTS, BaseForestRanker
from ._sampling import resolve_count, resolve_max_features

# listwise_depth of RF-list: deeper than any tree can grow.
_EVERY_DEPTH = np.iinfo(np.int32).max


def _resolve_discount(discount: object) -> tuple[str, float]:
    """``"log2"``, ``("log_power", alpha)`` or ``("rank_power", beta)`` -> (name, power)."""
    if isinstance(discount, str) and discount == "log2":
        return "log2", 1.0
    if (
        isinstance(discount, tuple)
        and len(discount) == 2
        and discount[0] in ("log_power", "rank_power")
        and isinstance(discount[1], Real)
        and not isinstance(discount[1], bool)
        and discount[1] > 0
    ):
        return discount[0], float(discount[1])
    raise ValueError(
        "The 'discount' parameter must be 'log2', ('log_power', alpha) or ('rank_power', beta) "
        f"with a positive power; got {discount!r}."
    )


class RFListRanker(BaseForestRanker):
    """Listwise random-forest ranker (RF-list): splits maximise the tree's mean expected NDCG.

    Each tree sees a sub-sample of the queries and is grown breadth-first; when a
    node's turn comes, every candidate split is scored by the change of the mean
    expected NDCG of the tree's training queries (ties between equal leaf scores
    averaged, Ibrahim & Carman Eq. 11-13), leaves scoring their documents by
    expected relevance (Eq. 9). The node is split by the best candidate when it
    gains more than ``min_gain_to_split`` (gains below 1e-12 are rounding noise);
    otherwise it is a leaf. The forest averages its trees.

    By default the objective is the paper's own scalable variant (§4.4.2,
    heuristics 6 and 1): NDCG@10 (``ndcg_k=10``) scored on at most 200 queries per
    node (``max_queries_per_split=200``). On MQ2008 it scores as the exact
    objective (NDCG@10 0.2317 / MAP 0.4768 against 0.2312 / 0.4766, three seeds) at
    3.8-4.4x an RF-point tree instead of 5.0-6.2x, and its time grows linearly with
    the rows (exponent 1.01 on ``make_ranking``, against 1.27-1.38). The paper's exact
    objective, the full expected NDCG of every query in the node, is
    ``ndcg_k=None, max_queries_per_split=None`` (``docs/listwise.md``).

    Parameters
    ----------
    n_estimators : int, default=500
    max_features : int, float, {"sqrt", "log2", "log2+1"} or None, default="log2+1"
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_gain_to_split : float, default=0.0
        Minimum increase of the tree's mean expected NDCG for a split.
    max_leaf_nodes : int or None, default=None
    expansion : {"breadth", "depth", "random", "biggest", "relevant"}, default="breadth"
        Order in which nodes are split (appendix A of the paper: the order matters
        for a listwise objective). ``"best"`` is not available: a listwise gain
        depends on the tree at the moment the node is split. Without
        ``max_leaf_nodes``, the nodes left once a tree's last listwise split is
        made (RF-hybrid's pointwise ones) grow depth-first, whatever the order:
        theirs changes only their random draws, and depth-first is faster. A
        ``max_leaf_nodes`` that cannot bind (the number of training rows) keeps
        the order throughout, as ``tree_strength_curve`` needs.
    query_subsample : float in (0, 1], default=0.63
    bootstrap : bool, default=False
        Queries drawn with replacement count as many times in the mean.
    sample_level : {"query", "document"}, default="query"
        With ``"document"`` the drawn documents count as copies within their query.
    skip_queries_without_relevance : bool, default=False
        Train on the queries that have a document with a positive label (and a positive
        ``sample_weight``) only, as if the others were not in the data. They have no
        part in the objective either way (their IDCG is 0); what changes is that their
        documents no longer lower the expected relevance of the leaves they fall in, nor
        shape the bins. See RFPointRanker.
    discount : "log2", ("log_power", alpha) or ("rank_power", beta), default="log2"
        Position discount of the objective: ``1/log2(r+1)`` (Eq. 8),
        ``1/log2(r+1)**alpha`` (Eq. 14), ``1/r**beta`` (Eq. 15) (§5.2.2).
    label_gain : {"exp", "linear"} or array-like of shape (n_grades,), default="exp"
        The gain ``G(l)`` of the objective's NDCG (Eq. 8), of ``oob_score_`` and of
        ``score``: ``2^l - 1``, ``l``, or ``label_gain[l]`` for the grades 0 to
        ``len - 1`` (finite, >= 0, not decreasing; LightGBM's ``label_gain``).
    ndcg_k : int or None, default=10
        Truncate the objective to NDCG@k (§4.4.2, heuristic 6); None: the full
        expected NDCG (Eq. 11-13). Documents that a split cannot lift above rank k
        are left out of its evaluation: on MQ2008, ``ndcg_k=10`` fits a tree in
        about two thirds of the time of the full objective at the same NDCG@10 and
        MAP.
    max_queries_per_split : int or None, default=200
        Score each node's candidates on at most this many of its queries, drawn at
        random per node (§4.4.2, heuristic 1); None: every query. A cap that binds
        only in the largest nodes keeps the others exact and bounds how a tree's
        time grows with the queries: 200 binds only in MQ2008's top nodes (its
        roots hold about 210 scored queries) and scores as every query there, and
        with ``ndcg_k=10`` makes a tree's time linear in the rows of
        ``make_ranking`` (see ``docs/listwise.md``).
    relevance_weights : {"linear", "square", "exp"}, default="linear"
        Leaf score ``sum_c P(c | leaf) F(c)`` with ``F(c) = c, c**2, 2**c``.
    max_bins : int in [2, 255] or None, default=255
    missing_direction : {"learn", "left", "right"}, default="learn"
        Where a split sends the missing values (NaN) of its feature: ``"learn"``
        tries both sides and keeps the better one, a node that saw none sending them
        to its heavier child; ``"left"`` and ``"right"`` always send them that way,
        as imputing -inf or +inf would (``docs/missing_values.md``). The three-way
        split of ``RFPointRanker`` (``"separate"``) is not offered: the listwise
        gain of a split is not the sum of its two steps' gains.
    feature_costs, cost_penalty, cost_wave_size :
        Cost-aware splits as in ``RFPointRanker``; for a listwise split the unit of the
        penalty is the whole range of the mean expected NDCG (``docs/costs.md``).
    oob_score : bool, default=False
    n_jobs : int or None, default=None
        As in ``RFPointRanker``: ``None`` means every core unless
        ``joblib.parallel_config(n_jobs=...)`` or ``OMP_NUM_THREADS`` sets fewer.
    random_state : int, RandomState or None, default=None
    verbose : int, default=0
    warm_start : bool, default=False
        As in ``RFPointRanker``: the new trees continue the first fit's random stream.

    Attributes
    ----------
    trees_ : list of Tree
    n_trees_ : int
    classes_ : ndarray of float64
    feature_importances_ : ndarray of shape (n_features,)
        Mean increase of expected NDCG per feature, normalised (with feature costs, less
        the penalties paid: ``docs/costs.md``).
    oob_score_, oob_prediction_ : as in RFPointRanker.
    n_features_in_, feature_names_in_ :
        As in scikit-learn.

    Examples
    --------
    >>> from forestrank import RFListRanker, make_ranking
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> ranker = RFListRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """

    _requires_grades = True
    _parameter_constraints = {
        **BaseForestRanker._parameter_constraints,
        "expansion": [StrOptions(set(_frontier.EXPANSIONS) - {"best"})],
        # The listwise gain of a split is not that of two cuts added up, so it sets no
        # missing rows apart (docs/missing_values.md).
        "missing_direction": [StrOptions(set(_scans.MISSING_DIRECTIONS) - {"separate"})],
        "discount": "no_validation",  # checked by _resolve_discount
        "label_gain": [StrOptions({"exp", "linear"}), "array-like"],
        "ndcg_k": [Interval(Integral, 1, None, closed="left"), None],
        "max_queries_per_split": [Interval(Integral, 1, None, closed="left"), None],
        "relevance_weights": [StrOptions(set(RELEVANCE_WEIGHTS))],
    }

    def __init__(
        self,
        n_estimators: int = 500,
        *,
        max_features: int | float | str | None = "log2+1",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_gain_to_split: float = 0.0,
        max_leaf_nodes: int | None = None,
        expansion: str = "breadth",
        query_subsample: float = 0.63,
        bootstrap: bool = False,
        sample_level: str = "query",
        skip_queries_without_relevance: bool = False,
        discount: str | tuple = "log2",
        label_gain: object = "exp",
        ndcg_k: int | None = 10,
        max_queries_per_split: int | None = 200,
        relevance_weights: str = "linear",
        max_bins: int | None = 255,
        missing_direction: str = "learn",
        feature_costs: object = None,
        cost_penalty: float = 0.0,
        cost_wave_size: int | None = None,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_gain_to_split = min_gain_to_split
        self.max_leaf_nodes = max_leaf_nodes
        self.expansion = expansion
        self.query_subsample = query_subsample
        self.bootstrap = bootstrap
        self.sample_level = sample_level
        self.skip_queries_without_relevance = skip_queries_without_relevance
        self.discount = discount
        self.label_gain = label_gain
        self.ndcg_k = ndcg_k
        self.max_queries_per_split = max_queries_per_split
        self.relevance_weights = relevance_weights
        self.max_bins = max_bins
        self.missing_direction = missing_direction
        self.feature_costs = feature_costs
        self.cost_penalty = cost_penalty
        self.cost_wave_size = cost_wave_size
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _listwise_depth(self) -> int:
        return _EVERY_DEPTH

    def fit(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> "RFListRanker":
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance grades (non-negative integers); the objective's gain is ``label_gain``'s.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, any order; ``None`` means one query (warns).
        sample_weight : array-like of shape (n_samples,), default=None
            A document of weight ``w`` has its gain multiplied by ``w`` in the expected
            NDCG (its query's ideal included), and a query weighs the mean weight of its
            documents of positive weight in the mean over queries: a query of uniform
            weight ``w`` counts ``w`` times, as LightGBM's and XGBoost's query weights
            do. A weight of 0 leaves the document out. Memory and time do not depend on
            the weights' values.

        Returns
        -------
        self
        """
        return super().fit(X, y, qid, sample_weight)

    def _targets(self, y: np.ndarray) -> np.ndarray:
        return self._class_targets(y)

    def _leaf_targets(self, y: np.ndarray) -> np.ndarray:
        return RELEVANCE_WEIGHTS[self.relevance_weights](y)

    def _listwise_data(self, data: RankingData, query_of_row: np.ndarray, base_weight: np.ndarray) -> dict:
        """The listwise fields of the training set: each row's gain times its weight (a
        weight scales the document's gain in the expected NDCG, its ideal included)."""
        self._discount = _resolve_discount(self.discount)
        gain = self._gain()
        check_grades_for_gain(data.y, gain, name="y", gain_name="label_gain")
        query_boundaries = data.groups.query_boundaries.astype(INDEX_DTYPE)
        return {
            "query_of_row": query_of_row,
            "query_boundaries": query_boundaries,
            "row_gains": row_gains(data.y, query_boundaries, gain) * base_weight,
        }

    def _tree_params(self, n_rows: int, n_features: int) -> TreeParams:
        return TreeParams(
            criterion=_criteria.ENTROPY,
            n_classes=len(self.classes_),
            max_features=resolve_max_features(self.max_features, n_features),
            expansion=_frontier.EXPANSIONS[self.expansion],
            missing_direction=_scans.MISSING_DIRECTIONS[self.missing_direction],
            max_depth=-1 if self.max_depth is None else self.max_depth,
            min_samples_split=resolve_count(self.min_samples_split, n_rows),
            min_samples_leaf=resolve_count(self.min_samples_leaf, n_rows),
            min_gain_to_split=self.min_gain_to_split,
            max_leaf_nodes=-1 if self.max_leaf_nodes is None else self.max_leaf_nodes,
            listwise_depth=self._listwise_depth(),
            max_queries=-1 if self.max_queries_per_split is None else self.max_queries_per_split,
        )

    def _listwise_weights(
        self, training: TrainingSet, counts: np.ndarray, base_weight: np.ndarray, params: TreeParams
    ) -> dict:
        if params.listwise_depth == 0:
            return {}
        first_rows = training.query_boundaries[:-1]
        weighted = base_weight > 0
        # A query weighs the mean weight of its documents of positive weight (their gains
        # carry each one's weight, which the query's NDCG, a ratio, cancels when uniform).
        n_weighted = np.add.reduceat(weighted.astype(FLOAT_DTYPE), first_rows)
        mean_weight = np.add.reduceat(base_weight, first_rows) / np.maximum(n_weighted, 1.0)
        if self.sample_level == "query":  # a query drawn k times weighs k in the mean
            copies = np.where((counts > 0) & weighted, 1.0, 0.0)
            query_weights = counts[first_rows] * mean_weight
        else:  # a document drawn k times is k copies in its query
            copies = np.where(weighted, counts, 0.0)
            query_weights = mean_weight
        largest = int(np.add.reduceat(copies, first_rows).max())
        name, power = self._discount
        table = _listwise.cumulative_discounts(largest, name, power, self.ndcg_k)
        return {"copies": copies, "query_weights": query_weights, "cumulative_discount": table}


class RFHybridRanker(RFListRanker):
    """RF-hybrid: listwise splits above ``listwise_depth``, pointwise entropy splits below.

    Ibrahim & Carman §4.4.3 (Fig. 3): the first levels of each tree, which decide
    the coarse order of the documents, maximise the tree's expected NDCG; deeper
    nodes use RF-point's entropy, which costs far less. Trees grow breadth-first, so
    ``listwise_depth=2`` makes the first three splits listwise; after the last
    listwise split the pointwise nodes grow depth-first (see ``expansion``).
    ``listwise_depth=0`` is RFPointRanker with the same parameters (same trees for
    the same seed) and a depth beyond the trees' is RFListRanker.

    Parameters
    ----------
    listwise_depth : int, default=2
        Nodes at depth < ``listwise_depth`` (root = 0) split listwise.
    min_gain_to_split : float, default=0.0
        At a listwise node the minimum increase of the tree's mean expected NDCG; at a
        pointwise node the minimum entropy decrease per unit of the tree's weight, in
        nats (as RFPointRanker's): one threshold in two units.
    Others : as in RFListRanker.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        Each feature's recorded gains, normalised: increases of expected NDCG at the
        listwise nodes and entropy decreases (nats per unit of weight) at the pointwise
        ones, summed together (with feature costs, less the penalties paid).
    Others : as in RFListRanker.

    Examples
    --------
    >>> from forestrank import RFHybridRanker, make_ranking
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> ranker = RFHybridRanker(n_estimators=5, listwise_depth=3, random_state=0).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints = {
        **RFListRanker._parameter_constraints,
        "listwise_depth": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_estimators: int = 500,
        *,
        listwise_depth: int = 2,
        max_features: int | float | str | None = "log2+1",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_gain_to_split: float = 0.0,
        max_leaf_nodes: int | None = None,
        expansion: str = "breadth",
        query_subsample: float = 0.63,
        bootstrap: bool = False,
        sample_level: str = "query",
        skip_queries_without_relevance: bool = False,
        discount: str | tuple = "log2",
        label_gain: object = "exp",
        ndcg_k: int | None = 10,
        max_queries_per_split: int | None = 200,
        relevance_weights: str = "linear",
        max_bins: int | None = 255,
        missing_direction: str = "learn",
        feature_costs: object = None,
        cost_penalty: float = 0.0,
        cost_wave_size: int | None = None,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state: object = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
        super().__init__(
            n_estimators,
            max_features=max_features,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_gain_to_split=min_gain_to_split,
            max_leaf_nodes=max_leaf_nodes,
            expansion=expansion,
            query_subsample=query_subsample,
            bootstrap=bootstrap,
            sample_level=sample_level,
            skip_queries_without_relevance=skip_queries_without_relevance,
            discount=discount,
            label_gain=label_gain,
            ndcg_k=ndcg_k,
            max_queries_per_split=max_queries_per_split,
            relevance_weights=relevance_weights,
            max_bins=max_bins,
            missing_direction=missing_direction,
            feature_costs=feature_costs,
            cost_penalty=cost_penalty,
            cost_wave_size=cost_wave_size,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
        )
        self.listwise_depth = listwise_depth

    def _listwise_depth(self) -> int:
        return self.listwise_depth
