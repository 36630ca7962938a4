"""A user's function (a custom objective or metric) in messages, and the errors raised inside it.

Numba reports an exception raised in a compiled function called from one of the
package's kernels as a ``SystemError`` naming the kernel, with the user's exception as
its cause: the message a user reads should name their function instead.
"""


def user_function_name(function: object) -> str:
    """How messages name a user's ``function``: its ``__name__``, or for a callable object
    without one (an instance of a class with ``__call__``) its class's name."""
    return getattr(function, "__name__", type(function).__name__)


def user_function_error(error: SystemError, described: str) -> BaseException:
    """The exception to raise for ``error``, caught around a kernel that calls a user's
    function (``described``: "the compiled objective my_loss", say): the function's own
    exception (``error.__cause__``) of its class, its message prefixed by ``described``;
    a ``RuntimeError`` when that class is not built from a message; ``error`` itself when
    it has no cause (a failure of the kernel, not of the function)."""
    cause = error.__cause__
    if cause is None:
        return error
    try:
        return type(cause)(f"{described} raised: {cause}")
    except Exception:  # a class built from other arguments than a message
        return RuntimeError(f"{described} raised {type(cause).__name__}: {cause}")
