"""The builder's frontier: nodes waiting to be split, in a binary max-heap ordered by the expansion rule.

Every expansion order is a choice of priority (ties go to the older node):

==========  =====================================  ============================
expansion   priority                               order
==========  =====================================  ============================
depth       depth * 2**32 - node id                depth-first, left child first
breadth     -node id                               level by level
best        split gain                             best-first (``max_leaf_nodes``)
random      uniform draw                           random
biggest     number of samples                      largest node first
relevant    node value (mean relevance)            most-relevant first
==========  =====================================  ============================

(Ibrahim & Carman §4.3.3 and appendix A on why the order matters with a leaf budget
or a listwise objective.)
"""

from collections import namedtuple

import numpy as np

from .._numba.jit import jit
from . import _rng

DEPTH = 0
BREADTH = 1
BEST = 2
RANDOM = 3
BIGGEST = 4
RELEVANT = 5
EXPANSIONS = {"depth": DEPTH, "breadth": BREADTH, "best": BEST, "random": RANDOM, "biggest": BIGGEST, "relevant": RELEVANT}

Frontier = namedtuple("Frontier", ["heap", "priority", "size"])
Frontier.__doc__ = """heap : int64 array of the waiting nodes (``size[0]`` of them); priority :
float64 array, one per node id; size : int64 array of shape (1,)."""


def new_frontier(capacity: int) -> Frontier:
    """An empty frontier for node ids below ``capacity``."""
    return Frontier(np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.float64), np.zeros(1, dtype=np.int64))


@jit(inline="always")
def _before(priority, a, b):
    """Heap order: higher priority first, then the older (smaller id) node."""
    return priority[a] > priority[b] or (priority[a] == priority[b] and a < b)


@jit(inline="always")
def _sift_up(heap, position, priority):
    while position > 0:
        parent = (position - 1) // 2
        if not _before(priority, heap[position], heap[parent]):
            break
        heap[position], heap[parent] = heap[parent], heap[position]
        position = parent


@jit(inline="always")
def push(frontier, node):
    """Add ``node`` with the priority already set in ``frontier.priority[node]``."""
    size = frontier.size[0]
    frontier.heap[size] = node
    _sift_up(frontier.heap, size, frontier.priority)
    frontier.size[0] = size + 1


@jit(inline="always")
def pop(frontier):
    """Remove and return the node of highest priority."""
    heap = frontier.heap
    priority = frontier.priority
    top = heap[0]
    size = frontier.size[0] - 1
    frontier.size[0] = size
    heap[0] = heap[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and _before(priority, heap[child + 1], heap[child]):
            child += 1
        if not _before(priority, heap[child], heap[position]):
            break
        heap[position], heap[child] = heap[child], heap[position]
        position = child
    return top


@jit(inline="always")
def depth_first_priority(depth, node):
    """Priority of ``node`` at ``depth`` in depth-first order (the deepest first, then the older)."""
    return depth * 4294967296.0 - node


@jit(inline="always")
def order_priority(expansion, node, depth, count, value, rng_state, current):
    """The priority ``expansion`` gives a node (``current`` for ``BEST``: its gain, set by the caller)."""
    if expansion == DEPTH:
        return depth_first_priority(depth, node)
    if expansion == BREADTH:
        return -node
    if expansion == RANDOM:
        return _rng.uniform(rng_state)
    if expansion == BIGGEST:
        return float(count)
    if expansion == RELEVANT:
        return value
    return current


@jit(inline="always")
def reorder_depth_first(frontier, node_depth):
    """Give every waiting node its depth-first priority and restore the heap."""
    heap = frontier.heap
    for i in range(frontier.size[0]):
        frontier.priority[heap[i]] = depth_first_priority(node_depth[heap[i]], heap[i])
    for i in range(frontier.size[0]):
        _sift_up(heap, i, frontier.priority)
