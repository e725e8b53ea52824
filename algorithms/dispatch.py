"""The one place where another implementation of an algorithm's steps may answer.

Every public function of :mod:`sko.algorithms` checks its input, then calls :func:`run` with the
name of a step, the scalar types of its data and its reference implementation — the generic
recursion written beside it, which reads like the paper and runs on any scalar type (float,
complex, sympy). On its own the package runs the reference implementation, always.

A faster implementation of the same steps (the compiled engine: :mod:`sko.engine.algorithms`)
runs a function of this package inside :func:`implementations`, a context in which :func:`run`
asks it first: ``steps(name, dtypes, arguments)`` answers the step, or ``NotImplemented`` (not
its scalar type, a Riccati gather that fails: the reference then runs and names the body). The
context is a :class:`contextvars.ContextVar`: it holds in the calling thread only, and this
package never imports what provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["STEPS", "run", "implementations"]

#: ``steps(name, dtypes, arguments)`` of the current context, or None: the reference only
STEPS: ContextVar[Callable | None] = ContextVar("sko_algorithm_steps", default=None)


def run(name: str, dtypes, reference: Callable, *args):
    """``reference(*args)``, or the answer of the current :func:`implementations` for step
    ``name`` on data of ``dtypes`` (module docstring)."""
    steps = STEPS.get()
    if steps is not None:
        out = steps(name, dtypes, args)
        if out is not NotImplemented:
            return out
    return reference(*args)


@contextmanager
def implementations(steps: Callable) -> Iterator[None]:
    """Run a block in which :func:`run` asks ``steps`` first (module docstring)."""
    token = STEPS.set(steps)
    try:
        yield
    finally:
        STEPS.reset(token)
