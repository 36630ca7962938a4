"""A partition's share of an objective's random draws (``objectives/_draws.py``) against the
draws of one generator on every row, and the objectives prepared on shares of a fit
against the objective prepared on the whole fit."""

import numpy as np
import pytest

from forestrank import make_ranking
from forestrank.objectives._draws import DrawShare, RowLines
from forestrank.objectives._lambdarank import LambdaRank
from forestrank.objectives._plackett_luce import PlackettLuce
from forestrank.objectives._xendcg import XENDCG


@pytest.mark.parametrize("seed", [0, np.random.SeedSequence(7, spawn_key=(3,))])
@pytest.mark.parametrize("first, count", [(0, 50), (0, 17), (13, 20), (49, 1), (50, 0)])
def test_row_lines_are_the_rows_of_one_generator_draws(seed, first, count):
    expected = np.random.default_rng(seed)
    lines = RowLines(seed, 50, first, count)
    for _ in range(3):
        np.testing.assert_array_equal(lines.next_line(), expected.random(50)[first : first + count])
    assert lines.following().integers(2**63) == expected.integers(2**63)


@pytest.fixture(scope="module")
def fit():
    X, y, qid = make_ranking(n_queries=12, docs_per_query=(3, 15), n_features=2, random_state=0)
    return y.astype(float), np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])


OBJECTIVES = {
    "plrank": (lambda: PlackettLuce(top_k=4, n_permutations=3, random_state=5), ("permutations_", "top_share_")),
    "xendcg": (lambda: XENDCG(random_state=5), ("gammas_",)),
    "sampled pairs": (lambda: LambdaRank(pair_method="mean", pairs_per_document=2, random_state=5), ("pair_states_",)),
}


@pytest.mark.parametrize("make, drawn", OBJECTIVES.values(), ids=OBJECTIVES.keys())
def test_objectives_on_shares_of_a_fit_draw_what_the_whole_fit_draws(make, drawn, fit):
    """Queries 0-4, 5 and 6-11 prepared apart, each given its share: after two gradient
    calls their draws are the whole fit's, sliced by row (or query), and so are their
    gradients."""
    labels, boundaries = fit
    scores = np.random.default_rng(1).normal(size=len(labels))
    whole = make()
    whole.prepare(labels, boundaries)
    parts = []
    for first_query, last_query in [(0, 5), (5, 6), (6, 12)]:
        rows = slice(boundaries[first_query], boundaries[last_query])
        part = make()
        part.share_draws(DrawShare(int(boundaries[first_query]), len(labels), first_query, 12))
        part.prepare(labels[rows], boundaries[first_query : last_query + 1] - boundaries[first_query])
        parts.append((rows, first_query, last_query, part))
    gradients, hessians = np.empty(len(labels)), np.empty(len(labels))
    for _ in range(2):
        whole.gradients(scores, gradients, hessians)
        for rows, first_query, last_query, part in parts:
            part_gradients, part_hessians = np.empty(rows.stop - rows.start), np.empty(rows.stop - rows.start)
            part.gradients(scores[rows], part_gradients, part_hessians)
            np.testing.assert_array_equal(part_gradients, gradients[rows])
            np.testing.assert_array_equal(part_hessians, hessians[rows])
            for name in drawn:
                expected = getattr(whole, name)
                if name == "permutations_":
                    expected = expected[:, rows] - rows.start
                elif name == "pair_states_":
                    expected = expected[first_query:last_query]
                else:
                    expected = expected[rows]
                np.testing.assert_array_equal(getattr(part, name), expected, err_msg=name)


def test_sharing_needs_a_seed():
    """Without one, every partition would draw a stream of its own."""
    with pytest.raises(ValueError, match="random_state is None"):
        XENDCG(random_state=None).share_draws(DrawShare(0, 10, 0, 2))
    with pytest.raises(ValueError, match="random_state is None"):
        LambdaRank(pair_method="mean").share_draws(DrawShare(0, 10, 0, 2))
    LambdaRank().share_draws(DrawShare(0, 10, 0, 2))  # top-k pairs draw nothing: no seed needed
