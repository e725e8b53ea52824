"""The one place that chooses an algorithm's path: the compiled kernels or the reference code.

Every public function of :mod:`sko.algorithms` checks its input, then calls :func:`run` with the
name of the algorithm, the scalar types of its data and its reference implementation — the
generic recursion written beside it, which reads like the paper and runs on any scalar type
(float, complex, sympy). :data:`TABLE` maps the name to the compiled implementation of
:mod:`sko.engine.model` (float64 and complex128), which takes the scalar type
first and the reference's arguments after it. :func:`run` takes it when the backend is
``"compiled"`` (:func:`~sko.engine.backend.use_backend`) and every scalar type is
float64 or complex128 (or promoted to one of them); otherwise, or when the compiled
implementation answers ``NotImplemented`` (a Riccati gather that fails: the reference names the
body), the reference runs.
"""

from __future__ import annotations

from collections.abc import Callable

from sko.engine.backend import compiled_dtype
from sko.engine.model import COMPILED

__all__ = ["TABLE", "run"]

#: algorithm name -> its compiled implementation ``f(dtype, *arguments of the reference)``
TABLE: dict[str, Callable] = COMPILED


def run(name: str, dtypes, reference: Callable, *args):
    """``reference(*args)``, or the compiled implementation of ``name`` when it applies to data of
    ``dtypes`` (module docstring)."""
    compiled = TABLE.get(name)
    if compiled is not None:
        dtype = compiled_dtype(*dtypes)
        if dtype is not None:
            out = compiled(dtype, *args)
            if out is not NotImplemented:
                return out
    return reference(*args)
