"""Input checks shared by every public entry point: shapes, finiteness, dtype.

Arrays keep their scalar type (float, complex for complex-step, ``object`` for sympy), integers
become floats, and every checked array is a fresh read-only copy, so inputs are never mutated and
a model cannot be changed behind its back.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Hashable
from typing import NoReturn

import numpy as np

from .errors import DimensionError, NonFiniteError, NotPositiveDefiniteError, RankDeficientError

__all__ = ["checked_array", "numeric_array", "checked_scalar", "checked_count", "checked_horizon", "scaled_norm", "unit_vector", "is_numeric",
           "check_spd", "check_psd", "raise_not_pd", "check_full_row_rank", "result_dtype", "plain_numbers_as_floats"]


def _is_symbolic(e) -> bool:
    """True for a sympy expression (never imports sympy: without it loaded no entry can be one)."""
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(e, sympy.Basic)


def _is_scalar_type(t: type) -> bool:
    """A number type, a sympy type, or a user scalar type with field arithmetic (not a string,
    ``None``, a container or an array, which would otherwise pass as "symbolic")."""
    if issubclass(t, (numbers.Number, np.number)):
        return True
    sympy = sys.modules.get("sympy")
    if sympy is not None and issubclass(t, sympy.Basic):
        return True
    if t is type(None) or issubclass(t, (str, bytes, list, tuple, dict, set, np.ndarray)):
        return False
    return all(hasattr(t, op) for op in ("__add__", "__sub__", "__mul__", "__truediv__"))


def _is_number(e) -> bool:
    return isinstance(e, (numbers.Number, np.number)) and not isinstance(e, np.datetime64)


def _entry_is_finite(e) -> bool:
    if getattr(e, "free_symbols", None):  # symbolic: look for infinities, never evaluate numerically
        from sympy import nan, oo, zoo

        return not e.has(oo, -oo, zoo, nan)
    try:
        return bool(np.isfinite(complex(e)))
    except OverflowError:  # an exact number (a Python int, a Fraction) beyond the float range
        return True
    except (TypeError, ValueError):  # a symbolic expression: finite unless it says otherwise
        return getattr(e, "is_finite", None) is not False


def numeric_array(A, what: str, copy: bool = True) -> np.ndarray:
    """``A`` as an array of real, complex or object (symbolic) entries, integers, booleans and
    floats of any precision as float64 (complex as complex128): a fresh copy with ``copy``, otherwise possibly ``A`` itself (no shape or finiteness
    check; see :func:`checked_array`). ``what`` names it in the errors."""
    try:
        A = np.array(A, copy=True) if copy else np.asarray(A)
    except (TypeError, ValueError) as exc:
        raise DimensionError(f"{what} is not an array: {exc}") from None
    if A.dtype.kind in "biu":
        return A.astype(float)
    if A.dtype.kind not in "fcO":
        raise DimensionError(f"{what} has dtype {A.dtype}; expected real, complex or object (symbolic) entries")
    if A.dtype.kind in "fc" and A.dtype.itemsize != (8 if A.dtype.kind == "f" else 16):
        # extended precision (float128 / longdouble): linalg cannot take it; half and single
        # precision: the compiled path computes in double, so every path does (same answers)
        with np.errstate(over="ignore"):
            A = A.astype(float if A.dtype.kind == "f" else complex)
    if A.dtype == object:
        bad_types = {t for t in set(map(type, A.flat)) if not _is_scalar_type(t)}  # one test per type
        if bad_types:
            bad = next(e for e in A.flat if type(e) in bad_types)
            raise DimensionError(f"{what} holds {bad!r} ({type(bad).__name__}); entries must be numbers or sympy expressions")
    return A


def plain_numbers_as_floats(A: np.ndarray, what: str) -> np.ndarray:
    """An object array whose entries are all plain numbers (Python ints beyond int64,
    ``Fraction``, ``Decimal``, floats) as float64 (complex128 if one is complex); any other array
    as it is. Such entries carry no exact meaning through a joint's cosine or a quaternion's norm
    (numpy would look for a ``cos`` method on them); sympy entries and user scalar types with
    methods of their own stay objects. ``what`` names ``A`` when an entry is beyond the float
    range (:class:`NonFiniteError`)."""
    if A.dtype != object or A.size == 0:
        return A
    if not all(isinstance(e, numbers.Number) and not _is_symbolic(e) for e in A.flat):
        return A
    kind = complex if any(isinstance(e, numbers.Complex) and not isinstance(e, numbers.Real) for e in A.flat) else float
    try:
        out = np.array([kind(e) for e in A.flat], dtype=kind).reshape(A.shape)
    except OverflowError:
        raise NonFiniteError(f"{what} (shape {A.shape}) holds a number beyond the floating-point range") from None
    if not np.isfinite(out).all():  # a Decimal or Fraction that rounds to infinity
        raise NonFiniteError(f"{what} (shape {A.shape}) holds a number beyond the floating-point range")
    out.setflags(write=A.flags.writeable)
    return out


def checked_scalar(x, what: str, *, positive: bool = False, nonnegative: bool = False, nonzero: bool = False,
                   symbolic: bool = False, error: type[Exception] | None = None):
    """``x`` as a finite Python ``float`` (or, with ``symbolic``, a sympy expression kept as is).

    ``None``, strings, lists, booleans, NaN and infinity are rejected with ``error`` (default
    :class:`NonFiniteError` for non-finite numbers and :class:`DimensionError` otherwise), as
    are values breaking ``positive``, ``nonnegative`` or ``nonzero``. ``what`` names the
    parameter (and its owner) in the message.
    """
    if symbolic and _is_symbolic(x) and getattr(x, "free_symbols", None):
        return x
    if isinstance(x, np.ndarray) and x.shape == ():
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not (_is_number(x) or _is_symbolic(x)):
        raise (error or DimensionError)(f"{what} must be a real number, got {x!r} ({type(x).__name__})")
    try:
        value = complex(x)
    except (TypeError, ValueError, OverflowError):
        raise (error or DimensionError)(f"{what} must be a real number, got {x!r}") from None
    if value.imag != 0:
        raise (error or DimensionError)(f"{what} must be a real number, got {x!r}")
    value = value.real
    if not np.isfinite(value):
        raise (error or NonFiniteError)(f"{what} is non-finite ({x!r}); it must be a finite number")
    if positive and not value > 0:
        raise (error or DimensionError)(f"{what} must be positive, got {x!r}")
    if nonnegative and not value >= 0:
        raise (error or DimensionError)(f"{what} must be non-negative, got {x!r}")
    if nonzero and value == 0:
        raise (error or DimensionError)(f"{what} must be nonzero, got {x!r}")
    return value


def checked_count(x, what: str, *, minimum: int = 0, error: type[Exception] | None = None) -> int:
    """``x`` as an ``int`` of at least ``minimum``; floats, strings, ``None`` and booleans are
    rejected with ``error`` (default :class:`DimensionError`) naming ``what``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        raise (error or DimensionError)(f"{what} must be an integer, got {x!r} ({type(x).__name__})")
    if int(x) < minimum:
        raise (error or DimensionError)(f"{what} must be at least {minimum}, got {x!r}")
    return int(x)


def checked_horizon(dt, steps, what: str) -> tuple[float, int]:
    """``(dt, steps)`` of a time stepping named ``what``: ``dt`` positive and finite
    (:func:`checked_scalar`), ``steps`` a count (:func:`checked_count`), and the final time
    ``dt · steps`` finite, so that every time of the grid is (:class:`NonFiniteError` naming both)."""
    dt = checked_scalar(dt, f"{what}: time step dt", positive=True)
    steps = checked_count(steps, f"{what}: number of steps")
    try:
        final = dt * steps  # Python numbers: inf without a warning, or OverflowError for a huge count
    except OverflowError:
        final = np.inf
    if not np.isfinite(final):
        raise NonFiniteError(f"{what}: the final time dt × steps = {dt!r} × {steps} overflows; it must be a finite number")
    return dt, steps


def scaled_norm(v) -> float:
    """The Euclidean norm of the numeric ``v`` computed on ``v / max|v|`` (no overflow or
    underflow of the squares for any finite ``v``); ``inf`` only if the norm itself overflows."""
    v = np.abs(np.asarray(v))
    top = float(v.max(initial=0.0))
    if top == 0.0 or not np.isfinite(top):
        return top
    with np.errstate(over="ignore"):
        return float(top * np.linalg.norm(v / top))


def unit_vector(v, what: str, size: int = 3, *, error: type[Exception] | None = None,
                tiny: float = 0.0) -> np.ndarray:
    """The finite real ``size``-vector ``v`` divided by its norm, computed on ``v / max|v|`` so a
    huge or tiny but finite vector normalises exactly. A vector that is not a finite real
    ``size``-vector, or whose norm is at most ``tiny`` (zero by default), raises ``error``
    (default :class:`DimensionError`) naming ``what``."""
    error = error or DimensionError
    try:
        u = numeric_array(v, what)
    except DimensionError:
        raise error(f"{what} must be a finite real {size}-vector of numbers, got {v!r}") from None
    if u.shape != (size,) or u.dtype.kind != "f" or not np.isfinite(u).all():
        raise error(f"{what} must be a finite real {size}-vector, got {v!r}")
    top = float(np.abs(u).max(initial=0.0))
    if top == 0.0 or scaled_norm(u) <= tiny:
        raise error(f"{what} must be a nonzero {size}-vector, got {v!r}")
    u = u / top
    return u / np.linalg.norm(u)


_F8 = np.dtype(np.float64)
_DOUBLE = (_F8, np.dtype(np.complex128))


def checked_array(A, ndim: int | tuple[int, ...], what: str, k: Hashable = None, finite: bool = True) -> np.ndarray:
    """A read-only copy of ``A`` with ``ndim`` dimensions (or one of the tuple ``ndim``) and (if
    ``finite``) only finite entries.

    ``what`` and ``k`` name the quantity and node in the error messages.
    """
    if type(A) is np.ndarray and A.dtype in _DOUBLE and (A.ndim == ndim or isinstance(ndim, tuple) and A.ndim in ndim) \
            and (not finite or np.isfinite(A).all()):  # the common case, nothing to convert or report
        A = A.copy()
        A.setflags(write=False)
        return A
    where = f"{what} of body {k!r}" if k is not None else what
    try:
        A = np.array(A, copy=True)
    except (TypeError, ValueError) as exc:
        raise DimensionError(f"{where} is not an array: {exc}") from None
    allowed = ndim if isinstance(ndim, tuple) else (ndim,)
    if A.ndim not in allowed:
        raise DimensionError(f"{where} must be {' or '.join(map(str, allowed))}-D, got shape {A.shape}")
    A = numeric_array(A, where, copy=False)
    if finite and not (all(_entry_is_finite(e) for e in A.flat) if A.dtype == object else np.isfinite(A).all()):
        first = next(i for i in np.ndindex(A.shape) if not _entry_is_finite(A[i]))
        raise NonFiniteError(f"{where} (shape {A.shape}) contains NaN or infinity, first at index {list(first)}")
    A.setflags(write=False)
    return A


def is_numeric(A: np.ndarray) -> bool:
    """True unless ``A`` holds symbolic entries that do not evaluate to numbers."""
    if A.dtype != object:
        return True
    if any(getattr(e, "free_symbols", None) for e in A.flat):
        return False
    try:
        np.array(A, dtype=complex)
    except (TypeError, ValueError):
        return False
    return True


def _numeric(A: np.ndarray) -> np.ndarray:
    """Real float view of a numeric array (the real part for complex-step perturbed data)."""
    return np.array(A, dtype=complex).real if A.dtype.kind in "cO" else A


def check_spd(A: np.ndarray, what: str, k: Hashable, rtol: float = 1e-9) -> None:
    """Raise unless ``A`` is square, symmetric (to ``rtol`` of its norm) and positive definite.

    Symbolic matrices are checked for symmetry only, since definiteness is undecidable there.
    """
    if A.shape[0] != A.shape[1]:
        raise DimensionError(f"{what} of body {k!r} must be square, got shape {A.shape}")
    if not is_numeric(A):
        asym = [(i, j) for i in range(A.shape[0]) for j in range(i) if (A[i, j] - A[j, i]) != 0]
        if asym:
            raise NotPositiveDefiniteError(f"{what} of body {k!r} is not symmetric: entries {asym[:3]} differ from their transposes")
        return
    R = _numeric(A)
    scale = max(np.abs(R).max(initial=0.0), np.finfo(float).tiny)
    if np.abs(R - R.T).max(initial=0.0) > rtol * scale:
        raise NotPositiveDefiniteError(f"{what} of body {k!r} (shape {A.shape}) is not symmetric")
    try:
        np.linalg.cholesky(R)
    except np.linalg.LinAlgError:
        raise_not_pd(R, what, k)


def raise_not_pd(A: np.ndarray, what: str, k: Hashable) -> NoReturn:
    """Raise :class:`NotPositiveDefiniteError` for the (real) ``A`` of body ``k`` whose Cholesky
    factorization failed, with its smallest eigenvalue (NaN if ``A`` is not finite)."""
    with np.errstate(all="ignore"):
        lowest = np.linalg.eigvalsh(np.asarray(A, dtype=float)).min() if np.isfinite(A).all() else float("nan")
    raise NotPositiveDefiniteError(
        f"{what} of body {k!r} (shape {A.shape}) is not positive definite: smallest eigenvalue {lowest:.3g}") from None


def check_psd(A: np.ndarray, where: str, rtol: float = 1e-10, error: type[Exception] = NotPositiveDefiniteError,
              symmetry_rtol: float | None = None) -> None:
    """Raise ``error`` unless the real square ``A`` is symmetric (to ``symmetry_rtol``, default
    ``rtol``) and positive semidefinite (smallest eigenvalue ``≥ −rtol``), relative to its largest
    entry; ``where`` names it (e.g. ``"stiffness K of flexible body 'b'"``)."""
    scale = max(np.abs(A).max(initial=0.0), np.finfo(float).tiny)
    if np.abs(A - A.T).max(initial=0.0) > (rtol if symmetry_rtol is None else symmetry_rtol) * scale:
        raise error(f"{where} is not symmetric")
    if A.size and (lowest := np.linalg.eigvalsh((A + A.T) / 2).min()) < -rtol * scale:
        raise error(f"{where} is not positive semidefinite: smallest eigenvalue {lowest:.3g}")


def check_full_row_rank(A: np.ndarray, what: str, k: Hashable) -> None:
    """Raise unless the (numeric) ``A`` has full row rank; symbolic matrices are not checked."""
    if A.shape[0] > A.shape[1]:
        raise RankDeficientError(f"{what} of body {k!r} has shape {A.shape}: more rows than columns cannot have full row rank")
    if A.shape[0] == 0 or not is_numeric(A):
        return
    rank = np.linalg.matrix_rank(_numeric(A))
    if rank < A.shape[0]:
        raise RankDeficientError(f"{what} of body {k!r} (shape {A.shape}) has rank {rank}, not full row rank {A.shape[0]}")


def result_dtype(*arrays) -> np.dtype:
    """The common scalar type of the arrays or dtypes (at least float64)."""
    if all(type(a) is np.ndarray and a.dtype == _F8 or a is _F8 for a in arrays):
        return _F8
    return np.result_type(np.float64, *[a.dtype if isinstance(a, np.ndarray) else a if isinstance(a, np.dtype)
                                        else np.asarray(a).dtype for a in arrays])
