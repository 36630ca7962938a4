"""Cross-validation splitters that never cut a query across folds.

``QueryKFold`` and ``QueryShuffleSplit`` split the *queries* with scikit-learn's
``KFold`` / ``ShuffleSplit`` and expand each query to its rows. They take the query
ids from ``qid`` (routed to ``split`` by scikit-learn's metadata routing: the class
requests it) or, without routing, from ``groups``.
"""

from abc import abstractmethod
from collections.abc import Iterator
from numbers import Integral

import numpy as np
from sklearn.model_selection import BaseCrossValidator, KFold, ShuffleSplit
from sklearn.model_selection._split import _validate_shuffle_split
from sklearn.utils.validation import _num_samples

from ._input.queries import QueryGroups, group_queries


class _QuerySplitter(BaseCrossValidator):
    """Split queries with an inner scikit-learn splitter; subclasses define ``_query_splitter``."""

    __metadata_request__split = {"qid": True, "groups": True}

    @abstractmethod
    def _query_splitter(self, n_queries: int) -> BaseCrossValidator:
        """The scikit-learn splitter applied to the ``n_queries`` queries."""

    def _groups(self, X: object, groups: object, qid: object) -> QueryGroups:
        name = type(self).__name__
        if qid is None and groups is None:
            raise ValueError(
                f"{name}.split needs the query id of each row: pass qid=... (with "
                "sklearn.set_config(enable_metadata_routing=True) it is routed from fit) or groups=...."
            )
        if qid is not None and groups is not None and not np.array_equal(np.asarray(qid), np.asarray(groups)):
            raise ValueError(f"{name}.split got both qid and groups and they differ; pass one of them.")
        return group_queries(groups if qid is None else qid, _num_samples(X), caller=f"{name}.split")

    def split(
        self, X: object, y: object = None, groups: object = None, qid: object = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate ``(train_rows, test_rows)`` index pairs; every query lies wholly on one side
        (or on neither, where ``train_size`` and ``test_size`` leave it out).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        groups : array-like of shape (n_samples,), default=None
            Query ids, for use without metadata routing.
        qid : array-like of shape (n_samples,), default=None
            Query ids.

        Yields
        ------
        train, test : ndarray of int64
        """
        query_groups = self._groups(X, groups, qid)
        query_index = query_groups.query_index()
        n_queries = query_groups.n_queries
        for train_queries, test_queries in self._query_splitter(n_queries).split(np.zeros((n_queries, 1))):
            # both sides from the inner splitter: ShuffleSplit's train_size may leave queries out of both
            yield np.flatnonzero(np.isin(query_index, train_queries)), np.flatnonzero(np.isin(query_index, test_queries))

    def get_n_splits(self, X: object = None, y: object = None, groups: object = None, qid: object = None) -> int:
        """Number of splits."""
        return self.n_splits


class QueryKFold(_QuerySplitter):
    """K-fold cross-validation over queries.

    Queries (sorted by id, or shuffled) are cut into ``n_splits`` consecutive blocks
    of as equal a number of queries as possible; each block is the test set once. Use
    it (or ``GroupKFold`` with ``groups=qid``) wherever scikit-learn takes ``cv``: an
    integer ``cv`` or a plain ``KFold`` splits rows, and so queries, which no estimator
    can detect (``docs/metrics.md``, "Scorers and cross-validation").

    Parameters
    ----------
    n_splits : int, default=5
        At least 2.
    shuffle : bool, default=False
        Shuffle the queries before cutting them into folds.
    random_state : int, RandomState instance or None, default=None
        Used when ``shuffle`` is True.

    Examples
    --------
    >>> from forestrank import QueryKFold, make_ranking
    >>> X, y, qid = make_ranking(n_queries=10, random_state=0)
    >>> [len(set(qid[test])) for _, test in QueryKFold(5).split(X, qid=qid)]
    [2, 2, 2, 2, 2]
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: object = None) -> None:
        if isinstance(n_splits, bool) or not isinstance(n_splits, Integral) or n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2; got {n_splits!r}.")
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def _query_splitter(self, n_queries: int) -> KFold:
        if n_queries < self.n_splits:
            raise ValueError(
                f"QueryKFold(n_splits={self.n_splits}) needs at least {self.n_splits} queries; got {n_queries}."
            )
        return KFold(self.n_splits, shuffle=self.shuffle, random_state=self.random_state)


class QueryShuffleSplit(_QuerySplitter):
    """Random train/test splits of the queries.

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffling iterations.
    test_size : float or int, default=None
        Fraction (float) or number (int) of queries in the test set; ``None`` means
        0.2 when ``train_size`` is also None, else the complement of ``train_size``.
    train_size : float or int, default=None
        Fraction or number of queries in the training set.
    random_state : int, RandomState instance or None, default=None

    Examples
    --------
    >>> from forestrank import QueryShuffleSplit, make_ranking
    >>> X, y, qid = make_ranking(n_queries=10, random_state=0)
    >>> train, test = next(QueryShuffleSplit(test_size=0.3, random_state=0).split(X, qid=qid))
    >>> len(set(qid[test])), set(qid[train]).isdisjoint(qid[test])
    (3, True)
    """

    def __init__(
        self,
        n_splits: int = 10,
        *,
        test_size: float | int | None = None,
        train_size: float | int | None = None,
        random_state: object = None,
    ) -> None:
        if isinstance(n_splits, bool) or not isinstance(n_splits, Integral) or n_splits < 1:
            raise ValueError(f"n_splits must be an integer >= 1; got {n_splits!r}.")
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state

    def _query_splitter(self, n_queries: int) -> ShuffleSplit:
        test_size = 0.2 if self.test_size is None and self.train_size is None else self.test_size
        try:  # scikit-learn's own check, whose "samples" are the queries here
            _validate_shuffle_split(n_queries, test_size, self.train_size, default_test_size=0.2)
        except ValueError as error:
            raise ValueError(
                f"QueryShuffleSplit splits queries, not rows: {error} (n_samples is the number of queries, {n_queries}; "
                "test_size and train_size count or share queries)."
            ) from error
        return ShuffleSplit(
            self.n_splits, test_size=test_size, train_size=self.train_size, random_state=self.random_state
        )
