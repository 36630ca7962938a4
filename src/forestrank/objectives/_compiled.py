"""Objectives' gradients called from compiled code, for the boosting iteration compiled whole
(``ensemble/_compiled_boosting.py``).

An objective that offers this returns from ``RankingObjective.compiled_state()`` a
namedtuple of a class of its own, holding what its kernel reads, and registers with
``register_gradients`` how ``gradients_at`` calls its kernel for that class. A compiled
caller is then specialised by the tuple's type: no jitted function travels as an
argument, which numba's disk cache would miss in every new process (``docs/design.md``,
"Numba rules").
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


def register_gradients(state_class: type) -> Callable[[Callable], Callable]:
    """Decorate the Python function that ``gradients_at`` compiles for states of
    ``state_class`` (its arguments are ``gradients_at``'s)."""

    def register(implementation: Callable) -> Callable:
        @overload(gradients_at, jit_options=JIT_OPTIONS)
        def _typed(state, scores, gradients, hessians):
            if isinstance(state, types.BaseNamedTuple) and state.instance_class is state_class:
                return implementation
            return None

        return implementation

    return register
