"""Position discounts of DCG: the one table builder that every NDCG in the package reads.

The metrics, LambdaRank's ``|delta NDCG|`` and the listwise split criterion all weigh
rank ``r`` by a table built here, so the three agree to the last bit on the same
convention.
"""

import numpy as np

DISCOUNTS = ("log2", "letor", "log_power", "rank_power")


def discount_table(n_positions: int, discount: str = "log2", power: float = 1.0, cutoff: int | None = None) -> np.ndarray:
    """``D(r)`` for the ranks ``r = 1 .. n_positions``.

    Parameters
    ----------
    n_positions : int
        Number of ranks (>= 0).
    discount : {"log2", "letor", "log_power", "rank_power"}, default="log2"
        ``"log2"``: ``1 / log2(r + 1)`` (Järvelin & Kekäläinen 2002, as used by
        Burges et al. 2005; the RF-list paper's Eq. 8). ``"letor"``: the official
        LETOR 3.0 and 4.0 evaluation scripts, 1 for ranks 1 and 2 and ``1 / log2(r)``
        after. ``"log_power"``: ``1 / log2(r + 1)**power`` and ``"rank_power"``:
        ``1 / r**power`` (the RF-list paper's Eq. 14 and 15).
    power : float, default=1.0
        Exponent of the two power families.
    cutoff : int or None, default=None
        ``D(r) = 0`` for ``r > cutoff`` (NDCG@k as a training objective).

    Returns
    -------
    ndarray of shape (n_positions,), float64
    """
    ranks = np.arange(1, n_positions + 1, dtype=np.float64)
    if discount == "log2":
        table = 1.0 / np.log2(ranks + 1.0)
    elif discount == "letor":
        table = np.ones(n_positions)
        table[2:] = 1.0 / np.log2(ranks[2:])
    elif discount == "log_power":
        table = 1.0 / np.log2(ranks + 1.0) ** power
    elif discount == "rank_power":
        table = 1.0 / ranks**power
    else:
        raise ValueError(f"discount must be one of {DISCOUNTS}, got {discount!r}.")
    if cutoff is not None:
        table[cutoff:] = 0.0
    return table
