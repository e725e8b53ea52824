"""The functions of :mod:`sko.algorithms` on the compiled engine: the same names, signatures,
checks and errors, each running the reference function inside
:func:`sko.algorithms.dispatch.implementations` of :func:`steps`, so that every step the engine
implements (:data:`IMPLEMENTED`: the SPOs, Newton–Euler, composite inertias and ℳ, the Riccati
gather, the innovations, articulated-body forward dynamics, ``Ω`` blocks, and the constraint
force algorithm's splits, block products and cyclic reduction) runs compiled on float64 and
complex128 data, and the rest runs the reference code.

The reference backend (:func:`sko.engine.use_backend`) makes these the reference functions.
Classes and constants of :mod:`sko.algorithms` are the same objects here.

Examples
--------
>>> import numpy as np
>>> import sko.algorithms
>>> from sko.engine.algorithms import mass_matrix
>>> from sko.graphs import TreeDigraph
>>> from sko.model import SKOModel
>>> model = SKOModel(TreeDigraph.from_parents({0: None, 1: 0}), phi={1: [[1.0]]}, H={0: [[1.0]], 1: [[1.0]]},
...                  M={0: [[2.0]], 1: [[4.0]]})
>>> np.array_equal(mass_matrix(model), sko.algorithms.mass_matrix(model))
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import sko.algorithms as reference
from sko.algorithms.dispatch import STEPS
from sko.engine import cfa
from sko.engine.backend import compiled_dtype
from sko.engine.model import COMPILED

#: every step the engine implements: the recursions' and the constraint force algorithm's
IMPLEMENTED = {**COMPILED, **cfa.STEPS}

__all__ = ["steps", *reference.__all__]


def steps(name: str, dtypes, arguments: tuple):
    """The compiled implementation of step ``name`` on ``arguments`` (:data:`IMPLEMENTED`), or
    ``NotImplemented`` when there is none, the data is not float64/complex128 or the reference
    backend is selected."""
    compiled = IMPLEMENTED.get(name)
    if compiled is None:
        return NotImplemented
    dtype = compiled_dtype(*dtypes)
    if dtype is None:
        return NotImplemented
    return compiled(dtype, *arguments)


def _compiled(function: Callable) -> Callable:
    """``function`` run with the engine's :func:`steps`."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        token = STEPS.set(steps)
        try:
            return function(*args, **kwargs)
        finally:
            STEPS.reset(token)

    return run


_FUNCTIONS: dict[str, Callable] = {}  # the wrapped functions, made on first use


def __getattr__(name: str):
    if name not in reference.__all__:
        raise AttributeError(f"module 'sko.engine.algorithms' has no attribute {name!r}")
    value = getattr(reference, name)
    if not callable(value) or isinstance(value, type):
        return value
    function = _FUNCTIONS.get(name)
    if function is None:
        function = _FUNCTIONS[name] = _compiled(value)
    return function


def __dir__() -> list[str]:
    return sorted(__all__)
