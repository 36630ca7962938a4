"""The frontier: a heap that pops the highest priority first and, among equals, the oldest node."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from forestrank._tree import _frontier


@given(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0, 3.0]), min_size=1, max_size=60), st.data())
def test_pop_order_is_priority_then_age_whatever_the_push_order(priorities, data):
    n = len(priorities)
    frontier = _frontier.new_frontier(n)
    frontier.priority[:] = priorities
    for node in data.draw(st.permutations(range(n))):
        _frontier.push(frontier, node)
    popped = [_frontier.pop(frontier) for _ in range(n)]
    assert popped == sorted(range(n), key=lambda node: (-priorities[node], node))
    assert frontier.size[0] == 0


def test_depth_first_reordering_pops_the_deepest_node_first():
    depth = np.array([0, 1, 1, 2, 2, 3])
    frontier = _frontier.new_frontier(6)
    frontier.priority[:] = -np.arange(6.0)  # breadth-first priorities
    for node in (1, 2, 3, 4, 5):
        _frontier.push(frontier, node)
    _frontier.reorder_depth_first(frontier, depth)
    assert [_frontier.pop(frontier) for _ in range(5)] == [5, 3, 4, 1, 2]
