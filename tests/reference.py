"""Independent, deliberately naive reference implementations of the ranking metrics (and
of the grade probabilities of cumulative boosting).

Written from the definitions, in plain Python, sharing no code with forestrank:
``ties="expected"`` is computed by enumerating every permutation of every tie block
(exponential, for small queries only), not by the closed forms of the kernels.
"""

import itertools
import math


def _fixed_order(labels, scores):
    """Labels sorted by decreasing score, ties kept in input order."""
    order = sorted(range(len(labels)), key=lambda i: -scores[i])  # sorted() is stable
    return [labels[i] for i in order], [scores[i] for i in order]


def possible_rankings(labels, scores, ties):
    """Every label sequence the ranking can show, each equally likely."""
    ranked, ranked_scores = _fixed_order(labels, scores)
    blocks = [list(group) for _, group in itertools.groupby(zip(ranked_scores, ranked), key=lambda p: p[0])]
    blocks = [[label for _, label in block] for block in blocks]
    if ties == "input_order":
        return [ranked]
    if ties == "pessimistic":
        return [[label for block in blocks for label in sorted(block)]]
    per_block = [list(itertools.permutations(block)) for block in blocks]
    return [[label for block in choice for label in block] for choice in itertools.product(*per_block)]


def _mean(values):
    return sum(values) / len(values)


def discount(rank, kind):
    if kind == "log2":
        return 1.0 / math.log2(rank + 1)
    return 1.0 if rank <= 2 else 1.0 / math.log2(rank)


def gain_of(label, gain):
    """``2**l - 1`` for "exp", ``l`` for "linear", ``gain[l]`` for a list of gains."""
    if gain == "exp":
        return 2.0**label - 1.0
    if gain == "linear":
        return float(label)
    return float(gain[int(label)])


def dcg(ranked, k, gain, discount_kind):
    total = 0.0
    for rank, label in enumerate(ranked[:k], start=1):
        total += gain_of(label, gain) * discount(rank, discount_kind)
    return total


def ndcg(labels, scores, k=None, gain="exp", discount_kind="log2", ties="expected", short_query_zero=False):
    """NDCG@k of one query; None when no document is relevant."""
    if max(labels) == 0:
        return None
    k = len(labels) if k is None else k
    if short_query_zero and len(labels) < k:
        return 0.0
    ideal = dcg(sorted(labels, reverse=True), k, gain, discount_kind)
    if ideal == 0.0:  # a gain list that gives every present grade 0
        return None
    return _mean([dcg(r, k, gain, discount_kind) / ideal for r in possible_rankings(labels, scores, ties)])


def err(labels, scores, k=None, max_grade=None, ties="expected", gain="exp"):
    """ERR@k of one query (Chapelle et al. 2009, R = (2**g - 1) / 2**g_max; with another
    gain G, R = G(g) / (G(g_max) + 1)); None when no document is relevant."""
    if max(labels) == 0:
        return None
    max_grade = max(labels) if max_grade is None else max_grade
    k = len(labels) if k is None else k

    def one(ranked):
        total, reach = 0.0, 1.0
        for rank, label in enumerate(ranked[:k], start=1):
            if gain == "exp":
                stop = (2.0**label - 1.0) / 2.0**max_grade
            else:
                stop = gain_of(label, gain) / (gain_of(max_grade, gain) + 1.0)
            total += reach * stop / rank
            reach *= 1.0 - stop
        return total

    return _mean([one(r) for r in possible_rankings(labels, scores, ties)])


def average_precision(labels, scores, k=None, ties="expected"):
    """AP@k of one query, denominator = all relevant documents; None when none is relevant."""
    n_relevant = sum(1 for label in labels if label > 0)
    if n_relevant == 0:
        return None
    k = len(labels) if k is None else k

    def one(ranked):
        hits, total = 0, 0.0
        for rank, label in enumerate(ranked[:k], start=1):
            if label > 0:
                hits += 1
                total += hits / rank
        return total / n_relevant

    return _mean([one(r) for r in possible_rankings(labels, scores, ties)])


def precision(labels, scores, k, ties="expected", short_query_zero=False):
    """P@k of one query, denominator k; None when no document is relevant."""
    if max(labels) == 0:
        return None
    if short_query_zero and len(labels) < k:
        return 0.0
    return _mean([sum(1 for label in r[:k] if label > 0) / k for r in possible_rankings(labels, scores, ties)])


def cumulative_probabilities(cumulative_rows):
    """Mohan's Eqs. 3.2-3.3 with the correction forestrank documents, one value at a time:
    each ``P(y <= c)`` clipped to [0, 1] and never below the previous grade's, then
    differenced, ``P(y <= c_max) = 1``."""
    probabilities = []
    for values in cumulative_rows:
        below, row = 0.0, []
        for value in values:
            at_or_below = max(below, min(1.0, max(0.0, float(value))))
            row.append(at_or_below - below)
            below = at_or_below
        probabilities.append(row + [1.0 - below])
    return probabilities
