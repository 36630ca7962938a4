"""Objectives' gradients called from compiled code, for the boosting iteration compiled whole
(``ensemble/_compiled_boosting.py``).

An objective that offers this returns from ``RankingObjective.compiled_state()`` a
namedtuple of a class of its own, holding what its kernel reads, and registers with
``register_gradients`` how ``gradients_at`` calls its kernel for that class; one whose
leaves' curvature is not their hessians' sum (``RankingObjective.leaf_curvature``)
registers that kernel with ``register_leaf_curvature``. A compiled caller is then
specialised by the tuple's type: no jitted function travels as an argument, which
numba's disk cache would miss in every new process (``docs/design.md``, "Numba rules").
"""

from collections.abc import Callable

from numba.core import types
from numba.extending import overload

from .._numba.jit import JIT_OPTIONS


def gradients_at(state, scores, gradients, hessians):
    """Fill ``gradients`` and ``hessians`` (float64, (n_rows,)) at ``scores`` (float64,
    (n_rows,)) by the kernel of the objective whose ``compiled_state()`` is ``state``.

    Compiled code only: numba picks the implementation registered for ``state``'s class.
    """
    raise TypeError("gradients_at is called from compiled code, with an objective's compiled_state().")


def leaf_curvature_at(state, scores, row_leaf, weights, curvature):
    """Add each leaf's curvature, as ``RankingObjective.leaf_curvature`` computes it, into
    ``curvature`` (float64, (n_nodes,), zeros) from ``scores`` (float64, (n_rows,)), the
    rows' leaves (int64, -1 outside the tree) and weights (float64); returns whether the
    objective has a curvature of its own (False: nothing is added, the leaves' hessian
    sums are their curvature).

    Compiled code only, as ``gradients_at``.
    """
    raise TypeError("leaf_curvature_at is called from compiled code, with an objective's compiled_state().")


# The state classes whose objective registered a leaf curvature of its own.
_OWN_CURVATURE = set()


def _is_state_of(state, state_class: type) -> bool:
    return isinstance(state, types.BaseNamedTuple) and state.instance_class is state_class


@overload(leaf_curvature_at, jit_options=JIT_OPTIONS)
def _hessian_curvature(state, scores, row_leaf, weights, curvature):
    if isinstance(state, types.BaseNamedTuple) and state.instance_class not in _OWN_CURVATURE:

        def implementation(state, scores, row_leaf, weights, curvature):
            return False

        return implementation
    return None


def register_leaf_curvature(state_class: type) -> Callable[[Callable], Callable]:
    """Decorate the Python function that ``leaf_curvature_at`` compiles for states of
    ``state_class`` (its arguments are ``leaf_curvature_at``'s; it returns True)."""

    def register(implementation: Callable) -> Callable:
        _OWN_CURVATURE.add(state_class)

        @overload(leaf_curvature_at, jit_options=JIT_OPTIONS)
        def _typed(state, scores, row_leaf, weights, curvature):
            return implementation if _is_state_of(state, state_class) else None

        return implementation

    return register


def register_gradients(state_class: type) -> Callable[[Callable], Callable]:
    """Decorate the Python function that ``gradients_at`` compiles for states of
    ``state_class`` (its arguments are ``gradients_at``'s)."""

    def register(implementation: Callable) -> Callable:
        @overload(gradients_at, jit_options=JIT_OPTIONS)
        def _typed(state, scores, gradients, hessians):
            return implementation if _is_state_of(state, state_class) else None

        return implementation

    return register
