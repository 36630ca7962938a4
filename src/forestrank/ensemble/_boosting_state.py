"""The per-fit state of boosting and the arithmetic of one tree's leaves, shared by the fit in
memory (``_boosting``) and the fit over partitions on a cluster (``_cluster_boosting``),
where every worker keeps a ``BoostingState`` per partition it holds."""

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .._numba.jit import jit
from .._input.labels import check_sample_weight
from .._input.queries import mean_per_query
from .._tree._grow import TrainingSet
from .._tree._tree import Tree, subtree_sums
from ..metrics._conventions import resolve_convention
from ..metrics._ranking import evaluate_grouped, mean_over_queries
from ..objectives import RankingObjective
from ._base import fit_takes


def newton_steps(tree_nodes: np.ndarray, leaf_gradients: np.ndarray, leaf_curvature: np.ndarray, l2: float) -> np.ndarray:
    """Newton step ``-G / (H + l2)`` of every node of a tree (0 where ``H + l2 <= 0``).

    Parameters
    ----------
    tree_nodes : NODE_DTYPE array of shape (n_nodes,)
    leaf_gradients, leaf_curvature : float64 arrays of shape (n_nodes,)
        Each leaf's summed ``w * g`` (``leaf_sums``), and its summed ``w * h`` or the
        objective's own ``H`` (``RankingObjective.leaf_curvature``); internal nodes'
        entries are ignored, however the sums were added (over partitions, for a
        partitioned fit).
    l2 : float

    Returns
    -------
    ndarray of shape (n_nodes,), float64
        Internal nodes get the step of all rows below them.
    """
    sum_g = subtree_sums(tree_nodes, leaf_gradients)
    denominator = subtree_sums(tree_nodes, leaf_curvature) + l2
    values = np.zeros(len(tree_nodes))
    np.divide(-sum_g, denominator, out=values, where=denominator > 0)
    return values


def leaf_sums(
    row_leaf: np.ndarray, gradients: np.ndarray, hessians: np.ndarray, weights: np.ndarray, n_nodes: int,
    carried: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Each leaf's summed ``gradients``, ``hessians`` and ``weights`` (the caller's ``w * g``,
    ``w * h`` and ``w``), float64 of shape (n_nodes, 3), added row by row in the rows' order;
    a row whose leaf is negative (outside the tree) adds nothing.

    ``row_leaf`` (int64), ``gradients``, ``hessians`` and ``weights`` (float64) have shape
    (n_rows,). ``carried`` (float64, (n_nodes, 3)) are sums the rows are added to: the sums
    of the partitions before this one, so that partitions summed one after another add
    every row in the order of their concatenated rows. The sums are ``numpy.bincount``'s
    over the rows inside the tree, bit for bit (it too starts from 0 and adds in row
    order), in one pass without copies of the rows.
    """
    if len(row_leaf) and row_leaf.max() >= n_nodes:
        raise ValueError(f"row_leaf holds leaf {row_leaf.max()}, but there are {n_nodes} nodes.")
    sums = np.zeros((n_nodes, 3))
    if carried is not None:
        sums += carried
    _add_leaf_sums(row_leaf, gradients, hessians, weights, sums)
    return sums


@jit
def _add_leaf_sums(row_leaf, gradients, hessians, weights, sums):
    """``sums[row_leaf[i]] += (gradients[i], hessians[i], weights[i])`` for the rows with a leaf,
    in row order: ``row_leaf`` int64 (n_rows,), the others float64 (n_rows,), ``sums`` float64
    (n_nodes, 3), in place."""
    for row in range(len(row_leaf)):
        leaf = row_leaf[row]
        if leaf >= 0:
            sums[leaf, 0] += gradients[row]
            sums[leaf, 1] += hessians[row]
            sums[leaf, 2] += weights[row]


def add_tree_scores(raw: np.ndarray, output: int, row_leaf: np.ndarray, tree: Tree, X: object) -> None:
    """``tree`` added to the scores ``raw[:, output]`` (float64, (n_rows, n_outputs)) of its
    training rows: its leaf values to the rows it was grown on (``row_leaf`` int64 >= 0,
    ``add_leaf_values``), its predictions to the others (rows of ``X``, which a tree without
    them, under ``subsample`` or zero weights, did not place)."""
    if add_leaf_values(raw[:, output], row_leaf, tree.values):
        left_out = row_leaf < 0
        raw[left_out, output] += tree.predict(X[left_out])


@jit
def add_leaf_values(raw, row_leaf, values):
    """``raw[i] += values[row_leaf[i]]`` for every row with a leaf (``row_leaf >= 0``): a tree's
    values added to the scores of the rows it was grown on, in one pass. ``raw`` float64
    (n_rows,), may be a column of the scores, in place; ``row_leaf`` int64 (n_rows,);
    ``values`` float64 (n_nodes,). Returns the rows without a leaf, counted in the same
    pass, so that a tree with every row needs no mask of the others."""
    outside = 0
    for row in range(len(row_leaf)):
        leaf = row_leaf[row]
        if leaf >= 0:
            raw[row] += values[leaf]
        else:
            outside += 1
    return outside


def exact_targets(gradients: np.ndarray, hessians: np.ndarray, targets: np.ndarray, squared: bool) -> None:
    """What an unquantized tree splits on, into ``targets`` (float64, (n_rows, 2)): the
    gradients (``-g``, the pseudo-response, for ``split_gain="squared"``) and the hessians,
    float64 of shape (n_rows,)."""
    targets[:, 0] = -gradients if squared else gradients
    targets[:, 1] = hessians


def fitted_init(init: object, X: object, y: object, qid: object, sample_weight: object) -> object:
    """A clone of the unfitted ``init`` fitted on the training rows, with their query ids when
    its ``fit`` takes ``qid`` (a ranker; a scikit-learn regressor learns from the rows alone;
    a ``Pipeline`` when its steps request it under metadata routing) and with their weights
    when there are any, as scikit-learn's gradient boosting fits its ``init``.

    Parameters
    ----------
    init : estimator
        Not fitted.
    X : array-like of shape (n_rows, n_features)
    y, qid : array-like of shape (n_rows,)
    sample_weight : array-like of shape (n_rows,), float64, or None
        The rows' weights as the fit was given them (validated, not rescaled to the fit's
        unit of weight: a regressor's regularisation reads their scale), or None when
        the fit was given none.

    Returns
    -------
    estimator
        The fitted clone.

    Raises
    ------
    ValueError
        When weights were given and ``init.fit`` takes no ``sample_weight``: fitting it
        without them would start the boosting from a model of other data; when ``init``
        debiases clicks (``position_bias``), whose positions it is not given.
    """
    if getattr(init, "position_bias", None) is not None:
        raise ValueError(
            f"init: this {type(init).__name__} has position_bias={init.position_bias!r}, whose fit needs each "
            "document's position, which an init is not given; fit it first (with position=...) and pass it fitted."
        )
    routed = _routed_fit_params(init)
    takes_qid = "qid" in inspect.signature(init.fit).parameters if routed is None else "qid" in routed
    extra = {"qid": qid} if takes_qid else {}
    if sample_weight is not None:
        if not (fit_takes(init, "sample_weight") if routed is None else "sample_weight" in routed):
            raise ValueError(
                f"init: {type(init).__name__}'s fit takes no sample_weight, and sample_weight was given; pass an init "
                "that is fitted already or whose fit takes sample_weight, or fit without sample_weight."
            )
        extra["sample_weight"] = sample_weight
    return clone(init).fit(X, y, **extra)


def _routed_fit_params(init: object) -> set | None:
    """Which of ``qid`` and ``sample_weight`` a ``Pipeline`` ``init`` passes on to its steps:
    under scikit-learn's metadata routing those its steps request, and none without it (its
    ``fit`` refuses them); None for an estimator that is no pipeline."""
    if not hasattr(init, "steps"):
        return None
    import sklearn

    if not sklearn.get_config()["enable_metadata_routing"]:
        return set()
    return set(init.get_metadata_routing().consumes("fit", ["qid", "sample_weight"]))


def check_eval_item(item: object, name: str) -> tuple:
    """``eval_set``'s item ``name`` (``valid_0``, ...) as (X, y, qid, sample_weight or None); a
    ValueError saying what the item holds otherwise (LightGBM's ``(X, y)`` with
    ``eval_group`` and ``eval_sample_weight`` apart among them)."""
    if not isinstance(item, tuple | list):
        raise ValueError(
            f"eval_set ({name}): eval_set is a list of (X, y, qid) tuples, one per set; its item is a "
            f"{type(item).__name__} (a single set goes in a list: eval_set=[(X, y, qid)])."
        )
    if len(item) not in (3, 4):
        raise ValueError(
            f"eval_set ({name}): each item must be (X, y, qid) or (X, y, qid, sample_weight), with the query id of "
            f"every row third; got a {type(item).__name__} of {len(item)} item(s) (LightGBM's eval_group and "
            "eval_sample_weight go into each item here)."
        )
    return (*item, None) if len(item) == 3 else tuple(item)


def check_eval_weight(sample_weight: object, n_samples: int, name: str) -> np.ndarray:
    """An ``eval_set`` item's ``sample_weight`` validated (``_input.labels.check_sample_weight``,
    float64, (n_samples,)), its errors naming the item."""
    try:
        return check_sample_weight(sample_weight, n_samples=n_samples)
    except (ValueError, TypeError) as error:
        raise type(error)(f"eval_set ({name}): {error}") from error


class EvalSet:
    """A grouped evaluation set and its running raw scores, shape (n_rows, n_outputs);
    ``query_ids`` (n_queries,), the ids of its queries in their grouped order (by default
    their positions); ``row_weight`` (float64, (n_rows,), or None) the rows' weights (the
    fit's ``sample_weight`` for the training rows and the hold-out, an ``eval_set`` item's
    own), which weigh each query in the NDCG by their mean as ``score`` does
    (``query_weights``)."""

    def __init__(
        self, name: str, X: np.ndarray, y: np.ndarray, query_boundaries: np.ndarray, raw: np.ndarray,
        query_ids: np.ndarray | None = None, row_weight: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.X = X
        self.y = y
        self.query_boundaries = query_boundaries
        self.raw = raw
        self.query_ids = np.arange(len(query_boundaries) - 1) if query_ids is None else query_ids
        self.query_weights = None if row_weight is None else mean_per_query(row_weight, query_boundaries)

    def score(
        self, metric: Callable | None, k: int, ranking_scores: Callable[[np.ndarray], np.ndarray], gain: str | np.ndarray
    ) -> float:  # fmt: skip
        """``metric`` (a ``metrics._custom.CustomMetric``) of the set's ranking scores, or NDCG@``k`` when None."""
        if metric is None:
            return self.ndcg(k, ranking_scores, gain)
        return metric(self.y, ranking_scores(self.raw), self.query_boundaries, self.query_ids, self.query_weights)

    def ndcg(self, k: int, ranking_scores: Callable[[np.ndarray], np.ndarray], gain: str | np.ndarray) -> float:
        return mean_over_queries(self.query_ndcg(k, ranking_scores, gain), self.query_weights)

    def query_ndcg(self, k: int, ranking_scores: Callable[[np.ndarray], np.ndarray], gain: str | np.ndarray) -> np.ndarray:
        """NDCG@``k`` of each query (float64, (n_queries,); NaN where skipped): a partitioned
        fit averages its partitions' concatenated, as ``ndcg`` averages one set's."""
        convention = resolve_convention("ndcg", gain=gain)
        return evaluate_grouped(self.y, ranking_scores(self.raw), self.query_boundaries, convention, k)


class EarlyStopping:
    """When boosting stops: after ``n_iter_no_change`` iterations whose validation score did
    not beat the best by more than ``tol`` (scikit-learn's ``_should_stop`` of its gradient
    boosting); keeps the best iteration and what was learned alongside it then."""

    def __init__(self, n_iter_no_change: int, tol: float, scored: str = "validation score") -> None:
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scored = scored  # what the scores are, for the error a NaN raises
        self.best_score = -np.inf
        self.best_iteration = 0
        self.best_state = None
        self.stale = 0

    def should_stop(self, score: float, iteration: int, learned: Callable | None = None) -> bool:
        """Record the score of ``iteration`` (0-based); ``learned()``, when given, is kept
        with the best iteration. A NaN score, which no comparison ranks, is a ValueError.
        The first iteration is the best so far whatever its score: one of ``-inf`` beats
        no starting score, and the model keeps at least one iteration."""
        if math.isnan(score):
            raise ValueError(
                f"early stopping compares the {self.scored} from one iteration to the next, and it is NaN at "
                f"iteration {iteration + 1} (NaN for every query of the set): a metric that stops the fit must give "
                "some query a number."
            )
        if self.best_iteration == 0 or score > self.best_score + self.tol:
            self.best_score, self.best_iteration, self.stale = score, iteration + 1, 0
            self.best_state = None if learned is None else learned()
            return False
        self.stale += 1
        return self.stale >= self.n_iter_no_change


@dataclass
class BoostingState:
    """The arrays a boosting fit updates at every iteration.

    ``X``, ``y`` (n_rows,), ``query_of_row`` (int64) and ``base_weight`` (float64) are
    the training rows, grouped by query (``X`` None for a partition on a worker once
    binned, when the fit does not read its features again); ``raw``, ``gradients`` and ``hessians``
    (float64, (n_rows, n_outputs)) the current scores and the objective's derivatives
    there; ``targets`` (float64, (n_rows, 2)) what the next tree splits on, which
    ``training`` shares (None for a partition on a worker, whose rows its
    ``_partition_rows.PartitionRows`` holds); ``row_leaf`` (int64, (n_rows,)) each row's leaf in it.
    """

    X: np.ndarray | None
    y: np.ndarray
    query_of_row: np.ndarray
    base_weight: np.ndarray
    objective: RankingObjective
    bias: object  # _position_bias.PositionBias or None (it imports this module's leaf_sums)
    raw: np.ndarray
    gradients: np.ndarray
    hessians: np.ndarray
    targets: np.ndarray
    training: TrainingSet | None
    row_leaf: np.ndarray
    evals: list
    train_eval: EvalSet
