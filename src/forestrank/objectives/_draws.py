"""One partition's share of a boosting objective's random draws.

The objectives that draw at random draw from one stream per fit: PLRank's tie orders
and XE-NDCG's noise a line of float64 draws with one per row at a time, LambdaRank's
sampled pairs two generator states per query at every iteration. A fit over Dask
partitions (``ensemble/_cluster_boosting.py``) prepares one objective per partition;
given its ``DrawShare``, each draws its own rows' (queries') entries of the same lines,
so that the partitions together draw what the fit in memory draws on their rows
concatenated in partition order, and grow its model.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DrawShare:
    """Where an objective's rows lie in the fit whose draws it shares.

    Parameters
    ----------
    first_row : int
        The fit's row number of the objective's first row.
    n_rows : int
        The fit's rows, over every partition.
    first_query : int
        The fit's query number of the objective's first query.
    n_queries : int
        The fit's queries, over every partition.
    """

    first_row: int
    n_rows: int
    first_query: int
    n_queries: int

    @classmethod
    def whole(cls, labels: np.ndarray, query_boundaries: np.ndarray) -> "DrawShare":
        """The share of a fit that is the objective's own rows (a fit in memory)."""
        return cls(0, len(labels), 0, len(query_boundaries) - 1)


class RowLines:
    """Lines of ``numpy.random.default_rng(seed).random(n_rows)``, rows ``first:first + count`` of each.

    The ``L``-th call of ``next_line`` returns what the ``L``-th call of ``random(n_rows)``
    on one generator would return at those rows, without drawing the others: PCG64 spends
    one 64-bit output per float64 draw (``Generator.random``), so the generator is
    advanced past them.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or None
        The stream's seed, as ``numpy.random.default_rng`` takes it.
    n_rows : int
        The length of a line.
    first, count : int
        The rows drawn of each line.
    """

    def __init__(self, seed: object, n_rows: int, first: int, count: int) -> None:
        self._seed = np.random.SeedSequence(seed) if not isinstance(seed, np.random.SeedSequence) else seed
        self.n_rows, self.first, self.count = n_rows, first, count
        self.n_lines = 0
        self._bits = np.random.PCG64(self._seed)
        self._bits.advance(first)
        self._generator = np.random.Generator(self._bits)

    def next_line(self) -> np.ndarray:
        """The next line's rows ``first:first + count``, float64 of shape (count,)."""
        line = self._generator.random(self.count)
        self._bits.advance(self.n_rows - self.count)
        self.n_lines += 1
        return line

    def following(self) -> np.random.Generator:
        """A generator at the stream's position after the lines drawn so far, on every row."""
        bits = np.random.PCG64(self._seed)
        bits.advance(self.n_lines * self.n_rows)
        return np.random.Generator(bits)
