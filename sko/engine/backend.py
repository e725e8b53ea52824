"""Which path the recursions take: the compiled kernels or the generic reference code.

The compiled path runs for models and vectors whose numbers are float64 or complex128 (or
other real/integer numbers, promoted to those); everything else (sympy and other ``object``
arrays, other dtypes) runs the reference code. The reference path can be forced for checking
and teaching by :func:`set_backend`, the context manager :func:`use_backend` or the environment
variable ``SKO_BACKEND=reference``.

``SKO_BACKEND`` is read at import but judged at first use: a value that names no backend makes
:func:`get_backend` (and so the first computation) raise :class:`~sko.graphs.errors.SKOError`
naming the variable and the allowed values, unless a choice made in the program overrides it
(:func:`set_backend`, or :func:`use_backend` for a block — the command line's ``--backend``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from sko.graphs.errors import SKOError

__all__ = ["BACKENDS", "get_backend", "set_backend", "use_backend", "compiled_dtype", "compiled_everywhere"]

BACKENDS = ("compiled", "reference")
_F8 = np.dtype(np.float64)


def _checked(name: str) -> str:
    if not isinstance(name, str) or name not in BACKENDS:
        raise SKOError(f"unknown backend {name!r}; choose one of {BACKENDS}")
    return name


def _from_environment() -> tuple[str, str | None]:
    """The process-wide choice ``SKO_BACKEND`` asks for, and the complaint about a value that names
    no backend (raised at first use, not at import: a choice in the program may override it)."""
    raw = os.environ.get("SKO_BACKEND", "")
    name = raw.strip().lower() or "compiled"
    if name in BACKENDS:
        return name, None
    return "compiled", (f"environment variable SKO_BACKEND={raw!r} names no backend: set it to one of "
                        f"{', '.join(map(repr, BACKENDS))} (or unset it for 'compiled')")


_backend, _environment_error = _from_environment()


class _Choice(threading.local):
    backend: str | None = None  # use_backend's choice in this thread (None: the process-wide one)


_local = _Choice()
_blocks = 0  # use_backend blocks open, in every thread
_blocks_lock = threading.Lock()

#: Whether every thread takes the compiled path: the process-wide choice is ``"compiled"`` and
#: no :func:`use_backend` block is open in any thread. A per-call fast path reads this one
#: module attribute, and calls :func:`get_backend` (a thread-local lookup) only when it is False.
compiled_everywhere = _backend == "compiled" and _environment_error is None


def _count_block(change: int) -> None:
    global _blocks, compiled_everywhere
    with _blocks_lock:
        _blocks += change
        compiled_everywhere = _backend == "compiled" and _blocks == 0 and _environment_error is None


def get_backend() -> str:
    """The current backend, ``"compiled"`` or ``"reference"``.

    Raises
    ------
    SKOError
        ``SKO_BACKEND`` names no backend and no :func:`set_backend` or :func:`use_backend`
        choice overrides it (module docstring).
    """
    choice = _local.backend
    if choice is not None:
        return choice
    if _environment_error is not None:
        raise SKOError(_environment_error)
    return _backend


def set_backend(name: str) -> None:
    """Select the backend for the rest of the process (overriding ``SKO_BACKEND``)."""
    global _backend, _environment_error
    _backend = _checked(name)
    _environment_error = None
    _count_block(0)


@contextmanager
def use_backend(name: str) -> Iterator[None]:
    """Run a block with the given backend, restoring the previous one afterwards. The choice
    holds in the calling thread only: other threads keep theirs (a block in one thread never
    switches, or leaves switched, the path of another).

    Examples
    --------
    >>> with use_backend("reference"):
    ...     get_backend()
    'reference'
    """
    previous = _local.backend
    _local.backend = _checked(name)
    _count_block(1)
    try:
        yield
    finally:
        _local.backend = previous
        _count_block(-1)


def compiled_dtype(*dtypes) -> np.dtype | None:
    """float64 or complex128 if the compiled path takes numbers of these dtypes (and is
    selected), else ``None``."""
    if not compiled_everywhere and get_backend() != "compiled":
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
