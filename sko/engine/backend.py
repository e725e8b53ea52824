"""Which path the systems and :mod:`sko.engine.algorithms` take: the compiled kernels or the
generic reference code of :mod:`sko.algorithms`.

The compiled path runs for models and vectors whose numbers are float64 or complex128 (or
other real/integer numbers, promoted to those); everything else (sympy and other ``object``
arrays, other dtypes) runs the reference code. The reference path can be forced for checking
and teaching by the context manager :func:`use_backend`, by :func:`set_backend` or by the
environment variable ``SKO_BACKEND=reference``.

The choice is one context value (:data:`BACKEND`, a :class:`contextvars.ContextVar`): a
:func:`use_backend` block or a :func:`set_backend` call holds in the calling thread (or asyncio
task) only, so a block in one thread never switches, or leaves switched, the path of another;
a thread started later begins with the process default, ``SKO_BACKEND``'s.

``SKO_BACKEND`` is read at import but judged at first use: a value that names no backend makes
:func:`get_backend` (and so the first computation) raise :class:`~sko.graphs.errors.SKOError`
naming the variable and the allowed values, unless a choice made in the program overrides it
(:func:`set_backend`, or :func:`use_backend` for a block — the command line's ``--backend``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from sko.graphs.errors import SKOError

__all__ = ["BACKENDS", "BACKEND", "COMPILED", "get_backend", "set_backend", "use_backend", "compiled_dtype"]

COMPILED = "compiled"
BACKENDS = (COMPILED, "reference")
_F8 = np.dtype(np.float64)
_INVALID = "invalid"  # the default when SKO_BACKEND names no backend: get_backend reports it


def _checked(name: str) -> str:
    if not isinstance(name, str) or name not in BACKENDS:
        raise SKOError(f"unknown backend {name!r}; choose one of {BACKENDS}")
    return BACKENDS[BACKENDS.index(name)]  # the interned constant: a per-call test compares identities


def _from_environment() -> tuple[str, str | None]:
    """The process default ``SKO_BACKEND`` asks for, and the complaint about a value that names
    no backend (raised at first use, not at import: a choice in the program may override it)."""
    raw = os.environ.get("SKO_BACKEND", "")
    name = raw.strip().lower() or COMPILED
    if name in BACKENDS:
        return _checked(name), None
    return _INVALID, (f"environment variable SKO_BACKEND={raw!r} names no backend: set it to one of "
                      f"{', '.join(map(repr, BACKENDS))} (or unset it for 'compiled')")


_DEFAULT, _ENVIRONMENT_ERROR = _from_environment()

#: The backend of the current context. A per-call fast path tests ``BACKEND.get() is COMPILED``
#: and calls :func:`get_backend` only when that is False.
BACKEND: ContextVar[str] = ContextVar("sko_backend", default=_DEFAULT)


def get_backend() -> str:
    """The current backend, ``"compiled"`` or ``"reference"``.

    Raises
    ------
    SKOError
        ``SKO_BACKEND`` names no backend and no :func:`set_backend` or :func:`use_backend`
        choice overrides it (module docstring).
    """
    name = BACKEND.get()
    if name is _INVALID:
        raise SKOError(_ENVIRONMENT_ERROR)
    return name


def set_backend(name: str) -> None:
    """Select the backend for the rest of the current context (overriding ``SKO_BACKEND``)."""
    BACKEND.set(_checked(name))


@contextmanager
def use_backend(name: str) -> Iterator[None]:
    """Run a block with the given backend, restoring the previous one afterwards (in the
    calling thread only: module docstring).

    Examples
    --------
    >>> with use_backend("reference"):
    ...     get_backend()
    'reference'
    """
    token = BACKEND.set(_checked(name))
    try:
        yield
    finally:
        BACKEND.reset(token)


def compiled_dtype(*dtypes) -> np.dtype | None:
    """float64 or complex128 if the compiled path takes numbers of these dtypes (and is
    selected), else ``None``."""
    if BACKEND.get() is not COMPILED and get_backend() != COMPILED:
        return None
    if all(dt is _F8 for dt in dtypes):
        return _F8
    complex_ = False
    for dt in dtypes:
        kind = np.dtype(dt).kind
        if kind == "c":
            complex_ = True
        elif kind not in "fiub":
            return None
        if np.dtype(dt).itemsize > (16 if kind == "c" else 8):
            return None  # long double: keep its precision on the reference path
    return np.dtype(np.complex128 if complex_ else np.float64)
