"""Synthetic graded relevance for tests, benchmarks and the demo (:func:`make_ranking`)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._input.labels import check_flag, check_positive_int
from .._numba.dtypes import INDEX_DTYPE


def make_ranking(
    n_queries: int = 200,
    docs_per_query: int | tuple[int, int] = (10, 60),
    n_features: int = 20,
    n_grades: int = 5,
    *,
    n_informative: int | None = None,
    noise: float = 0.5,
    missing_fraction: float = 0.0,
    missing: str = "mcar",
    shuffle: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate a synthetic learning-to-rank problem with graded relevance.

    Each query ``q`` draws an offset ``mu_q ~ N(0, 0.5^2 I)`` shared by its documents'
    features, ``x = mu_q + N(0, I)`` (query-dependent feature scales, as in LETOR). A
    latent relevance ``f(x) = w2 . tanh(W1 x_inf) + x_a x_b`` of the informative
    features (a random one-hidden-layer network plus one interaction) is
    standardised, shifted by a per-query difficulty ``N(0, 0.5^2)`` and perturbed by
    ``N(0, noise^2)``. Grades cut the result at global quantiles chosen so that
    ``P(grade = g)`` is proportional to ``2^-g``: most documents are irrelevant and
    some queries have no relevant document, as in real LTR data.

    Parameters
    ----------
    n_queries : int, default=200
    docs_per_query : int or (int, int), default=(10, 60)
        Documents per query, fixed or drawn uniformly from the inclusive range.
    n_features : int, default=20
    n_grades : int, default=5
        Grades ``0 .. n_grades-1``.
    n_informative : int, default=None
        Features the latent relevance depends on; ``None`` means
        ``max(2, n_features // 3)`` (capped at ``n_features``).
    noise : float, default=0.5
        Standard deviation of the label noise, relative to the unit-variance signal.
    missing_fraction : float in [0, 1), default=0.0
        Fraction of the informative features' values replaced by NaN (missing).
    missing : {"mcar", "mnar"}, default="mcar"
        ``"mcar"``: missing completely at random, each value independently.
        ``"mnar"``: missing not at random, as web features are (absent more often
        from the less relevant documents): a document's informative values are each
        missing with probability ``sigmoid(a - r)``, ``r`` its standardised latent
        relevance and ``a`` set so that the mean is ``missing_fraction``.
    shuffle : bool, default=False
        Shuffle rows so that queries are not contiguous.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        Grades.
    qid : ndarray of shape (n_samples,), int64
    """
    n_queries = check_positive_int("n_queries", n_queries)
    n_features = check_positive_int("n_features", n_features)
    n_grades = check_positive_int("n_grades", n_grades, minimum=2)
    if isinstance(docs_per_query, Integral):
        low = high = check_positive_int("docs_per_query", docs_per_query)
    else:
        try:
            low, high = docs_per_query
        except (TypeError, ValueError):
            low = high = None
        if any(isinstance(value, bool) or not isinstance(value, Integral) for value in (low, high)):
            raise ValueError(f"docs_per_query must be an int or a (low, high) pair of ints; got {docs_per_query!r}.")
        low, high = int(low), int(high)
        if not 1 <= low <= high:
            raise ValueError(f"docs_per_query range must satisfy 1 <= low <= high; got {docs_per_query!r}.")
    if n_informative is None:
        n_informative = min(n_features, max(2, n_features // 3))
    n_informative = check_positive_int("n_informative", n_informative)
    if n_informative > n_features:
        raise ValueError(f"n_informative={n_informative} exceeds n_features={n_features}.")
    if isinstance(noise, bool) or not isinstance(noise, Real) or not 0 <= noise < np.inf:
        raise ValueError(f"noise must be a finite number >= 0; got {noise!r}.")
    if isinstance(missing_fraction, bool) or not isinstance(missing_fraction, Real) or not 0 <= missing_fraction < 1:
        raise ValueError(f"missing_fraction must be a number in [0, 1); got {missing_fraction!r}.")
    if missing not in ("mcar", "mnar"):
        raise ValueError(f"missing must be 'mcar' or 'mnar'; got {missing!r}.")
    rng = check_random_state(random_state)

    sizes = rng.randint(low, high + 1, size=n_queries)
    qid = np.repeat(np.arange(n_queries, dtype=INDEX_DTYPE), sizes)
    X = rng.standard_normal((len(qid), n_features)) + rng.normal(scale=0.5, size=(n_queries, n_features))[qid]

    informative_columns = rng.permutation(n_features)[:n_informative]
    informative = X[:, informative_columns]
    n_hidden = 2 * n_informative
    hidden = np.tanh(informative @ (rng.standard_normal((n_informative, n_hidden)) / np.sqrt(n_informative)))
    latent = hidden @ rng.standard_normal(n_hidden)
    if n_informative > 1:
        latent += informative[:, 0] * informative[:, 1]
    spread = latent.std()
    latent = latent - latent.mean()
    if spread > 0:  # one document has none
        latent /= spread
    latent += rng.normal(scale=0.5, size=n_queries)[qid] + noise * rng.standard_normal(len(qid))

    shares = 0.5 ** np.arange(n_grades)
    thresholds = np.quantile(latent, np.cumsum(shares)[:-1] / shares.sum())
    y = np.searchsorted(thresholds, latent, side="right").astype(INDEX_DTYPE)
    if missing_fraction > 0:
        probability = missing_fraction if missing == "mcar" else _mnar_probability(latent, missing_fraction)[:, None]
        hidden_values = rng.random_sample((len(qid), n_informative)) < probability
        X[:, informative_columns] = np.where(hidden_values, np.nan, X[:, informative_columns])
    if check_flag("shuffle", shuffle):
        permutation = rng.permutation(len(qid))
        X, y, qid = X[permutation], y[permutation], qid[permutation]
    return X, y, qid


def _mnar_probability(latent: np.ndarray, fraction: float) -> np.ndarray:
    """``sigmoid(a - latent)`` per document, ``a`` found by bisection so that its mean is ``fraction``.

    Parameters
    ----------
    latent : float64 array of shape (n_samples,)
        Standardised latent relevance.
    fraction : float in (0, 1)

    Returns
    -------
    float64 array of shape (n_samples,)
    """
    low, high = -50.0, 50.0  # the mean is increasing in a, from ~0 to ~1 over this range
    for _ in range(100):
        middle = (low + high) / 2
        if np.mean(1 / (1 + np.exp(latent - middle))) < fraction:
            low = middle
        else:
            high = middle
    return 1 / (1 + np.exp(latent - (low + high) / 2))
