"""Boosting objectives: per-document gradients and hessians of a ranking loss.

An objective is a small picklable object built from the estimator's parameters; at
fit time :meth:`~RankingObjective.prepare` precomputes what depends on the labels
only, and :meth:`~RankingObjective.gradients` fills ``g = dL/ds`` and ``h`` (a
positive curvature) for the current scores ``s``. The numba kernels run ``prange``
over queries (``docs/design.md``, "Parallelism": boosting parallelises inside an iteration; the
thread count is set by the estimator from ``n_jobs``).

* :class:`LambdaRank` — Burges, "From RankNet to LambdaRank to LambdaMART: An
  Overview" (MSR-TR-2010-82), Eq. 3 and §7: for each pair ``(i, j)`` with
  ``l_i > l_j``, ``lambda_ij = -sigma |dNDCG_ij| / (1 + exp(sigma (s_i - s_j)))``;
  the document that should rank higher gets ``+lambda_ij``, the other
  ``-lambda_ij``; ``h`` is ``sigma^2 |dNDCG_ij| rho (1 - rho)``. With LightGBM's
  defaults (``lambdarank_norm``): ``|dNDCG|`` is divided by ``0.01 + |s_i - s_j|``
  and each query's lambdas are scaled by ``log2(1 + S) / S`` (``S`` = sum of
  ``|lambda|``), and only pairs with a document ranked above the truncation level
  count.
* :class:`PlackettLuce` — the top-k Plackett-Luce (ListMLE) likelihood of the PLRank
  paper (Xia, Zhai & Wang, "Plackett-Luce model for learning-to-rank task", 2019):
  for a ground-truth permutation ``pi`` (grades descending, ties in random order)
  ``L = -sum_{i<k} [s_pi(i) - log sum_{j>=i} exp s_pi(j)]``; the gradient (Eq. 7) is
  ``g_d = sum_{C ni d} p(d|C) - [d among the top k]`` over the contexts
  ``C_i = {pi(i), pi(i+1), ...}``, ``i < k``, with ``p(d|C) = exp s_d / sum_C exp s``.
  A leaf's Newton step (Eq. 9) needs ``L'' = sum_C p'(1 - p')`` with
  ``p' = sum_{d in leaf and C} p(d|C)``, which couples the leaf's documents
  (:meth:`PlackettLuce.leaf_curvature`); the per-document hessians
  ``sum_C p(1 - p)`` only guide the splits. Several permutations average their
  objectives; their contexts are stored once per distinct set with a multiplicity
  (the paper's Table 3; :func:`distinct_contexts`), since permutations that differ
  only in the order of tied grades share every context that starts at a grade
  boundary. Context sums are log-sum-exps accumulated from the end of the
  permutation and every probability is ``exp(s - log sum)``: scores grow without
  bound and spread widely (a shared ``exp(s - max s)`` underflows to zero sums).
* :class:`Softmax` — McRank (Li, Burges & Wu, "McRank: Learning to Rank Using
  Multiple Classification and Gradient Boosting", NIPS 2007): K-class logistic
  boosting with one raw score per grade (Friedman 2001, Algorithm 6):
  ``p = softmax(F)``, ``g_k = p_k - [y = k]``, ``h_k = K/(K-1) p_k (1 - p_k)`` (the
  ``(K-1)/K`` factor of Friedman's leaf step); documents are ranked by their
  expected relevance ``sum_c c p_c`` (McRank §3; Mohan's thesis, ch. 3).
* :class:`CumulativeSquaredError` — Mohan's classification boosting (thesis, ch. 3,
  Algorithm 5): least squares on ``r_c = [y <= c]`` for every grade below the
  largest, one raw score per ``c``; ``P(y = c)`` is the difference of the clipped,
  running-maximum cumulative predictions (:func:`cumulative_probabilities`).
* :class:`SquaredError` — MART on the grade (``target="grade"``) or on ``2^l - 1``
  (``target="exp_gain"``): ``L = 1/2 sum (s - t)^2``, ``g = s - t``, ``h = 1``
  (Friedman 2001; the PLRank paper §3.4 calls these MART-2 and MART-1).
* :class:`CustomObjective` — a user's loss over queries: a Python function of the
  grades, scores, query offsets and ids, or a numba function of one query's rows run
  over the queries in parallel (``_custom``).
* :class:`QueryRMSE` — CatBoost's ``QueryRMSE``: the same up to a free offset per
  query, ``L = 1/2 sum_q sum_i (s_i + b_q - t_i)^2`` at ``b_q = mean_q (t - s)``;
  ``g = s + b_q - t``, ``h = 1``.
* :class:`XENDCG` — XE-NDCG (Bruch, Wang, Bendersky & Najork, WWW 2020): the cross
  entropy of ``softmax(s)`` against the gains with uniform noise,
  ``p_i ∝ 2^{l_i} - gamma_i``; ``g = softmax(s) - p``, corrected by the first terms of
  the series of the inverse Hessian as LightGBM's ``rank_xendcg`` (``_xendcg``).
* :class:`YetiRank` — YetiRank (Gulin, Kuralenok & Pavlov, "Winning the transfer
  learning track of Yahoo!'s learning to rank challenge with YetiRank", 2011, §3): the
  logistic pair loss ``-w log sigma(s_i - s_j)`` over the documents adjacent in noisy
  rankings drawn at every iteration, ``w`` decaying down the ranking; ``g_i = -w p``,
  ``g_j = w p``, ``h = w p (1 - p)`` with ``p = sigma(s_j - s_i)`` (``_yetirank``).
  :class:`YetiRankPairwise` hands the same pairs to the tree, whose levels and leaves
  solve the pairs' quadratic model over the leaves (``_tree/_pairwise.py``).
"""

from ._base import RankingObjective, expected_grade
from ._custom import CustomObjective
from ._cumulative import CumulativeSquaredError, cumulative_probabilities
from ._lambdarank import LambdaRank
from ._plackett_luce import PlackettLuce, distinct_contexts
from ._softmax import Softmax, expected_relevance, softmax_probabilities
from ._squared import QueryRMSE, SquaredError
from ._surrogates import ListwiseSurrogate
from ._xendcg import XENDCG
from ._yetirank import YetiRank, YetiRankPairwise

__all__ = [
    "CumulativeSquaredError",
    "CustomObjective",
    "LambdaRank",
    "ListwiseSurrogate",
    "PlackettLuce",
    "QueryRMSE",
    "RankingObjective",
    "Softmax",
    "SquaredError",
    "XENDCG",
    "YetiRank",
    "YetiRankPairwise",
    "cumulative_probabilities",
    "distinct_contexts",
    "expected_grade",
    "expected_relevance",
    "softmax_probabilities",
]
