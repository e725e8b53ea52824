"""Sparse LTDL / LTL factorization of the joint-space mass matrix (SPARSE.md; RBDA §6.4–6.5).

Conventions
-----------
* ``ℳ`` is an ``n × n`` symmetric positive definite matrix (a numpy array) whose rows and
  columns are dofs ``1 … n``, and ``parents`` is its expanded parent array ``λ'`` in
  Featherstone's 1-based form (``parents[k − 1] = λ'(k)``, 0 the base, ``λ'(k) < k``; see
  :func:`sko.graphs.dof_parent_array`). Array positions are 0-based: dof ``k`` is row ``k − 1``.
* Branch-induced sparsity: below the diagonal, row ``k`` has non-zeros only in the columns
  ``λ'(k), λ'(λ'(k)), …``. Every algorithm iterates over those chains only, reads nothing else
  (entries above the diagonal and the branch-induced zeros are never read nor written), and the
  factorizations have no fill-in.
* ``ℳ = Lᵀ D L`` (LTDL, ``L`` unit lower triangular) or ``ℳ = Lᵀ L`` (LTL). A factorized array
  holds ``L`` strictly below the diagonal and ``D`` (LTDL) or ``L(k, k)`` (LTL) on it; the
  triangular routines take ``unit=True`` for an LTDL factor.
* Generic scalars: float, complex (complex-step) and ``object`` (sympy) arrays flow through; only
  numeric pivots are checked for positivity.
* MuJoCo's compressed storage: row ``k`` (0-based) stores ``ℳ(k, k), ℳ(k, λ'(k)), …`` from
  address ``dof_Madr[k]``; ``dof_parentid[k] = λ'(k + 1) − 1`` (−1 for the base).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from sko.graphs.errors import DimensionError, NonFiniteError, NotPositiveDefiniteError
from sko.graphs.arrays import checked_array, numeric_array
from sko.graphs.numbering import check_parent_array
from sko.arrays import result_dtype

__all__ = [
    "ltdl",
    "ltl",
    "ltdl_in_place",
    "ltl_in_place",
    "lower_factor",
    "L_apply",
    "L_transpose_apply",
    "L_inverse_apply",
    "L_inverse_transpose_apply",
    "sparse_mass_matrix_apply",
    "ltdl_solve",
    "ltl_solve",
    "SparsityCounts",
    "sparsity_counts",
    "operation_counts",
    "CompressedLayout",
    "compressed_layout",
    "compress_lower",
    "decompress_lower",
    "CompressedLTDL",
    "compressed_ltdl",
]


# ----------------------------------------------------------------------------- checks


def _parents0(parents: Sequence[int], n: int) -> list[int]:
    """``λ'`` checked and made 0-based (−1 for the base), for a matrix of size ``n``."""
    checked = check_parent_array(parents, "λ'")
    if len(checked) != n:
        raise DimensionError(f"the parent array has {len(checked)} entries for a {n} × {n} matrix")
    return [p - 1 for p in checked]


def _pattern(par: list[int]):
    """``(k, j)`` for every diagonal and branch-induced non-zero position below it."""
    for k in range(len(par)):
        j = k
        while j >= 0:
            yield k, j
            j = par[j]


def _matrix(H, parents: Sequence[int], what: str, copy: bool = True) -> tuple[np.ndarray, list[int]]:
    """A square matrix (a fresh writable copy with ``copy``, else possibly a read-only view) and
    its 0-based parents; finiteness is checked on the branch-induced pattern only, since
    nothing else is read (O(n + D1))."""
    A = numeric_array(H, what, copy)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise DimensionError(f"{what} must be a square matrix, got shape {A.shape}")
    par = _parents0(parents, A.shape[0])
    if A.dtype != object:
        bad = [(k + 1, j + 1) for k, j in _pattern(par) if not np.isfinite(A[k, j])]
        if bad:
            raise NonFiniteError(f"{what} has NaN or infinity at dof positions {bad[:3]} of its sparsity pattern")
    return A, par


def _vector(x, n: int, dtype, what: str) -> np.ndarray:
    v = checked_array(x, (1, 2), what)
    if v.shape[0] != n:
        raise DimensionError(f"{what} must have shape ({n},) or ({n}, m), got {v.shape}")
    return v.astype(result_dtype(v, np.zeros(0, dtype=dtype)), copy=True)  # writable: updated in place


def _in_place_target(A, parents: Sequence[int]) -> list[int]:
    """Check the array an in-place factorization overwrites; its 0-based parents."""
    if not isinstance(A, np.ndarray) or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise DimensionError(f"an in-place factorization needs a square numpy array, got {getattr(A, 'shape', type(A).__name__)}")
    if A.dtype.kind not in "fcO" or not A.flags.writeable:
        raise DimensionError(f"an in-place factorization needs a writable float, complex or object array, got dtype {A.dtype}"
                             f"{'' if A.flags.writeable else ' (read-only)'}")
    return _parents0(parents, A.shape[0])


def _check_pivot(value, k: int) -> None:
    """Raise unless a numeric pivot is positive (symbolic pivots pass)."""
    try:
        real = complex(value).real
    except (TypeError, ValueError):
        return
    if not real > 0:
        raise NotPositiveDefiniteError(f"pivot of dof {k + 1} (row {k}) is {value}: the matrix is not positive definite")


def _check_diagonal(A: np.ndarray, what: str, positive: bool = False) -> None:
    """Raise unless every numeric diagonal entry of a factor is nonzero (``positive``: > 0) and
    finite, naming the first bad dof; a solve would otherwise divide by it."""
    if A.dtype == object:
        return
    d = np.diagonal(A)
    bad = np.flatnonzero(~np.isfinite(d) | ((d.real <= 0) if positive else (d == 0)))
    if bad.size:
        k = int(bad[0])
        kind = "positive" if positive else "nonzero"
        raise NotPositiveDefiniteError(f"{what} has pivot {d[k]} at dof {k + 1} (row {k}); a solve needs every pivot "
                                       f"{kind}: the factor is singular or the matrix is not positive definite")


def _sqrt(value):
    if isinstance(value, (float, complex, np.number)):
        return np.sqrt(value)
    import sympy  # symbolic entries only

    return sympy.sqrt(value)


# ----------------------------------------------------------------------------- factorizations


def ltdl_in_place(A: np.ndarray, parents: Sequence[int]) -> np.ndarray:
    """Factor ``ℳ = Lᵀ D L`` in place on the lower triangle of ``A`` (RBDA Table 6.3).

    Rows ``k = n … 1``: region 2 ``a = ℳ(k, i)/ℳ(k, k)`` for ``i`` on the ``λ'`` chain of ``k``,
    region 3 ``ℳ(i, j) −= a ℳ(k, j)`` for ``j`` on the chain from ``i``. ``D`` ends on the
    diagonal, ``L`` strictly below it. ``A`` must be a writable numpy array; it is returned.

    Raises
    ------
    NotPositiveDefiniteError
        On a non-positive pivot (the message names the dof).
    """
    par = _in_place_target(A, parents)
    n = len(par)
    for k in range(n - 1, -1, -1):
        _check_pivot(A[k, k], k)
        i = par[k]
        while i >= 0:
            a = A[k, i] / A[k, k]
            j = i
            while j >= 0:
                A[i, j] = A[i, j] - a * A[k, j]
                j = par[j]
            A[k, i] = a
            i = par[i]
    return A


def ltl_in_place(A: np.ndarray, parents: Sequence[int]) -> np.ndarray:
    """Factor ``ℳ = Lᵀ L`` in place on the lower triangle of ``A`` (RBDA Table 6.3).

    Rows ``k = n … 1``: ``ℳ(k, k) ← √ℳ(k, k)``, the chain of row ``k`` divided by it, then
    ``ℳ(i, j) −= ℳ(k, i) ℳ(k, j)`` over pairs of the chain. ``A`` is returned.

    Raises
    ------
    NotPositiveDefiniteError
        On a non-positive pivot (the message names the dof).
    """
    par = _in_place_target(A, parents)
    n = len(par)
    for k in range(n - 1, -1, -1):
        _check_pivot(A[k, k], k)
        A[k, k] = _sqrt(A[k, k])
        i = par[k]
        while i >= 0:
            A[k, i] = A[k, i] / A[k, k]
            i = par[i]
        i = par[k]
        while i >= 0:
            j = i
            while j >= 0:
                A[i, j] = A[i, j] - A[k, i] * A[k, j]
                j = par[j]
            i = par[i]
    return A


def ltdl(H, parents: Sequence[int]) -> np.ndarray:
    """``ℳ = Lᵀ D L`` on a copy of ``H``: ``D`` on the diagonal, ``L`` strictly below it.

    Only the diagonal and the branch-induced pattern of the lower triangle are read; every other
    entry of the copy is left as it was. See :func:`ltdl_in_place`.

    Examples
    --------
    >>> H = np.array([[4., 0, 0], [2, 3, 0], [2, 0, 5]])   # dofs 2 and 3 hang from dof 1
    >>> LD = ltdl(H, (0, 1, 1))
    >>> L, D = lower_factor(LD, (0, 1, 1), unit=True), np.diag(LD)
    >>> bool(np.allclose(np.tril(L.T @ np.diag(D) @ L), H)), float(LD[2, 1])
    (True, 0.0)
    """
    A, par = _matrix(H, parents, "the mass matrix")
    return ltdl_in_place(A, [p + 1 for p in par])


def ltl(H, parents: Sequence[int]) -> np.ndarray:
    """``ℳ = Lᵀ L`` on a copy of ``H``, ``L`` in the lower triangle. See :func:`ltl_in_place`."""
    A, par = _matrix(H, parents, "the mass matrix")
    return ltl_in_place(A, [p + 1 for p in par])


def lower_factor(A: np.ndarray, parents: Sequence[int], unit: bool = False) -> np.ndarray:
    """The dense ``L`` held by a factorized array: its branch-induced pattern below the
    diagonal, ``1`` (``unit=True``, LTDL) or ``A(k, k)`` (LTL) on it, zeros elsewhere."""
    A, par = _matrix(A, parents, "the factorized array", copy=False)
    L = np.zeros(A.shape, dtype=A.dtype)
    for k, j in _pattern(par):
        L[k, j] = 1 if unit and j == k else A[k, j]
    return L


# ----------------------------------------------------------------------------- products (Table 6.5)


def L_apply(L, parents: Sequence[int], x, unit: bool = False) -> np.ndarray:
    """``y = L x`` over the ``λ'`` chains (rows ``n … 1``, so it could run in situ)."""
    L, par = _matrix(L, parents, "L", copy=False)
    y = _vector(x, L.shape[0], L.dtype, "x")
    for i in range(len(par) - 1, -1, -1):
        if not unit:
            y[i] = L[i, i] * y[i]
        j = par[i]
        while j >= 0:
            y[i] = y[i] + L[i, j] * y[j]
            j = par[j]
    return y


def L_transpose_apply(L, parents: Sequence[int], x, unit: bool = False) -> np.ndarray:
    """``y = Lᵀ x`` over the ``λ'`` chains."""
    L, par = _matrix(L, parents, "L", copy=False)
    x = _vector(x, L.shape[0], L.dtype, "x")
    y = x.copy()
    for i in range(len(par)):
        if not unit:
            y[i] = L[i, i] * x[i]
    for i in range(len(par)):
        j = par[i]
        while j >= 0:
            y[j] = y[j] + L[i, j] * x[i]
            j = par[j]
    return y


def L_inverse_apply(L, parents: Sequence[int], x, unit: bool = False) -> np.ndarray:
    """``x ← L⁻¹ x`` (forward substitution, rows ``1 … n``) on a copy of ``x``."""
    L, par = _matrix(L, parents, "L", copy=False)
    if not unit:
        _check_diagonal(L, "L")
    x = _vector(x, L.shape[0], L.dtype, "x")
    for i in range(len(par)):
        j = par[i]
        while j >= 0:
            x[i] = x[i] - L[i, j] * x[j]
            j = par[j]
        if not unit:
            x[i] = x[i] / L[i, i]
    return x


def L_inverse_transpose_apply(L, parents: Sequence[int], x, unit: bool = False) -> np.ndarray:
    """``x ← L⁻ᵀ x`` (back substitution, rows ``n … 1``) on a copy of ``x``."""
    L, par = _matrix(L, parents, "L", copy=False)
    if not unit:
        _check_diagonal(L, "L")
    x = _vector(x, L.shape[0], L.dtype, "x")
    for i in range(len(par) - 1, -1, -1):
        if not unit:
            x[i] = x[i] / L[i, i]
        j = par[i]
        while j >= 0:
            x[j] = x[j] - L[i, j] * x[i]
            j = par[j]
    return x


def sparse_mass_matrix_apply(H, parents: Sequence[int], x) -> np.ndarray:
    """``y = ℳ x`` from the lower triangle's branch-induced pattern (each stored entry used for
    ``ℳ(i, j)`` and ``ℳ(j, i)``)."""
    H, par = _matrix(H, parents, "the mass matrix", copy=False)
    x = _vector(x, H.shape[0], H.dtype, "x")
    y = x.copy()
    for i in range(len(par)):
        y[i] = H[i, i] * x[i]
    for i in range(len(par)):
        j = par[i]
        while j >= 0:
            y[i] = y[i] + H[i, j] * x[j]
            y[j] = y[j] + H[i, j] * x[i]
            j = par[j]
    return y


def ltdl_solve(LD, parents: Sequence[int], b) -> np.ndarray:
    """Solve ``ℳ x = b`` from an LTDL factor: ``x = L⁻¹ D⁻¹ L⁻ᵀ b``.

    >>> H = np.array([[4., 0, 0], [2, 3, 0], [2, 0, 5]])
    >>> x = ltdl_solve(ltdl(H, (0, 1, 1)), (0, 1, 1), [1., 2., 3.])
    >>> np.allclose((np.tril(H) + np.tril(H, -1).T) @ x, [1, 2, 3])
    True
    """
    LD, _ = _matrix(LD, parents, "LD", copy=False)
    _check_diagonal(LD, "the LTDL factor LD", positive=True)
    z = L_inverse_transpose_apply(LD, parents, b, unit=True)
    D = np.diagonal(LD)
    z = z / (D if z.ndim == 1 else D[:, None])
    return L_inverse_apply(LD, parents, z, unit=True)


def ltl_solve(L, parents: Sequence[int], b) -> np.ndarray:
    """Solve ``ℳ x = b`` from an LTL factor: ``x = L⁻¹ L⁻ᵀ b``."""
    return L_inverse_apply(L, parents, L_inverse_transpose_apply(L, parents, b))


# ----------------------------------------------------------------------------- counts (Table 6.6)


@dataclass(frozen=True)
class SparsityCounts:
    """Sizes of the branch-induced pattern of ``ℳ`` (SPARSE.md).

    ``depths[k − 1] = d_k`` (dofs on the path from dof ``k`` to the base, ``k`` included),
    ``D1 = Σ (d_k − 1)`` (non-zeros below the diagonal, region-2 steps),
    ``D2 = Σ d_k (d_k − 1)/2`` (region-3 steps), ``depth = max d_k``,
    ``nonzeros = n + 2 D1`` and ``density = nonzeros / n²``.
    """

    n: int
    depths: tuple[int, ...]
    D1: int
    D2: int
    depth: int
    nonzeros: int
    density: float


def sparsity_counts(parents: Sequence[int]) -> SparsityCounts:
    """``D1``, ``D2`` and the depths of an expanded parent array, in O(n).

    >>> c = sparsity_counts((0, 1, 2, 3, 1, 4, 4, 5))   # RBDA Table 6.4
    >>> c.depths, c.D1, c.D2, c.nonzeros
    ((1, 2, 3, 4, 2, 5, 5, 3), 17, 34, 42)
    """
    parents = check_parent_array(parents, "λ'")
    depths: list[int] = []
    for p in parents:
        depths.append(1 if p == 0 else depths[p - 1] + 1)
    n = len(depths)
    D1 = sum(d - 1 for d in depths)
    D2 = sum(d * (d - 1) // 2 for d in depths)
    return SparsityCounts(n, tuple(depths), D1, D2, max(depths, default=0), n + 2 * D1,
                          (n + 2 * D1) / n**2 if n else 0.0)


def operation_counts(parents: Sequence[int]) -> dict[str, dict[str, int]]:
    """Arithmetic operations of each algorithm of this module: ``{"m": multiplications,
    "a": additions/subtractions, "d": divisions, "sqrt": square roots}`` as functions of ``n``,
    ``D1``, ``D2`` (the loop counts of the algorithms as written; cf. RBDA Table 6.6). Keys:
    ``ltdl``, ``ltl``, ``L_apply``, ``L_transpose_apply``, ``L_inverse_apply``,
    ``L_inverse_transpose_apply`` (general ``L``), their ``…_unit`` variants, and
    ``sparse_mass_matrix_apply``.

    >>> operation_counts((0, 1, 1))["ltdl"]
    {'m': 2, 'a': 2, 'd': 2, 'sqrt': 0}
    """
    c = sparsity_counts(parents)
    n, D1, D2 = c.n, c.D1, c.D2

    def ops(m=0, a=0, d=0, sqrt=0):
        return {"m": m, "a": a, "d": d, "sqrt": sqrt}

    return {
        "ltdl": ops(m=D2, a=D2, d=D1),
        "ltl": ops(m=D2, a=D2, d=D1, sqrt=n),
        "L_apply": ops(m=n + D1, a=D1),
        "L_transpose_apply": ops(m=n + D1, a=D1),
        "L_inverse_apply": ops(m=D1, a=D1, d=n),
        "L_inverse_transpose_apply": ops(m=D1, a=D1, d=n),
        "L_apply_unit": ops(m=D1, a=D1),
        "L_transpose_apply_unit": ops(m=D1, a=D1),
        "L_inverse_apply_unit": ops(m=D1, a=D1),
        "L_inverse_transpose_apply_unit": ops(m=D1, a=D1),
        "sparse_mass_matrix_apply": ops(m=n + 2 * D1, a=2 * D1),
    }


# ----------------------------------------------------------------------------- MuJoCo's storage


@dataclass(frozen=True)
class CompressedLayout:
    """MuJoCo's compressed layout of ``ℳ`` (``mj_factorI``): 0-based ``dof_parentid`` (−1 for
    the base), row addresses ``dof_Madr``, row lengths ``rownnz = d_k`` and the size ``nM``."""

    dof_parentid: tuple[int, ...]
    dof_Madr: tuple[int, ...]
    rownnz: tuple[int, ...]
    nM: int


def compressed_layout(parents: Sequence[int]) -> CompressedLayout:
    """The compressed layout of an expanded parent array.

    >>> compressed_layout((0, 1, 1)).dof_Madr
    (0, 1, 3)
    """
    depths = sparsity_counts(parents).depths
    addresses = tuple(int(a) for a in np.concatenate(([0], np.cumsum(depths)[:-1]))) if depths else ()
    return CompressedLayout(tuple(p - 1 for p in check_parent_array(parents, "λ'")), addresses, depths, sum(depths))


def _layout(layout, function: str) -> CompressedLayout:
    """``layout`` if it is a :class:`CompressedLayout`, else the error naming ``function``."""
    if not isinstance(layout, CompressedLayout):
        raise DimensionError(f"{function}: layout must be a CompressedLayout (from compressed_layout(parents)), got "
                             f"{type(layout).__name__}")
    return layout


def compress_lower(H, layout: CompressedLayout) -> np.ndarray:
    """``qM``: row ``k`` holds ``ℳ(k, k), ℳ(k, λ'(k)), …`` from ``dof_Madr[k]`` (only the
    lower triangle's pattern is read)."""
    layout = _layout(layout, "compress_lower")
    H, par = _matrix(H, [p + 1 for p in layout.dof_parentid], "the mass matrix", copy=False)
    q = np.zeros(layout.nM, dtype=H.dtype)
    for k in range(len(par)):
        address, j = layout.dof_Madr[k], k
        while j >= 0:
            q[address] = H[k, j]
            address, j = address + 1, par[j]
    return q


def decompress_lower(q, layout: CompressedLayout) -> np.ndarray:
    """The dense lower-triangular matrix stored in ``q`` (zeros off the pattern)."""
    layout = _layout(layout, "decompress_lower")
    q = numeric_array(q, "the compressed matrix q", copy=False)
    if q.shape != (layout.nM,):
        raise DimensionError(f"a compressed matrix of this layout has shape ({layout.nM},), got {q.shape}")
    n = len(layout.dof_parentid)
    A = np.zeros((n, n), dtype=q.dtype)
    for k in range(n):
        address, j = layout.dof_Madr[k], k
        while j >= 0:
            A[k, j] = q[address]
            address, j = address + 1, layout.dof_parentid[j]
    return A


class CompressedLTDL(NamedTuple):
    """``qLD`` (``D`` on each row's first entry, ``L`` after it), ``qLDiagInv = 1/D`` and
    ``qLDiagSqrtInv = 1/√D``."""

    qLD: np.ndarray
    qLDiagInv: np.ndarray
    qLDiagSqrtInv: np.ndarray


def compressed_ltdl(qM, layout: CompressedLayout) -> CompressedLTDL:
    """``ℳ = Lᵀ D L`` on MuJoCo's compressed storage (``mj_factorI``), on a copy of ``qM``.

    Region 3 of row ``k`` is one scaled vector addition per ancestor ``i``: the ancestors of
    ``i`` are a suffix of those of ``k``, so row ``k``'s tail from ``i`` on is subtracted from row
    ``i`` (SPARSE.md).

    Raises
    ------
    DimensionError
        ``qM`` not a numeric vector of the layout's length.
    NonFiniteError
        NaN or infinity in ``qM``.
    NotPositiveDefiniteError
        On a non-positive pivot (the message names the dof).
    """
    layout = _layout(layout, "compressed_ltdl")
    qLD = checked_array(qM, 1, "the compressed matrix qM")
    if qLD.shape != (layout.nM,):
        raise DimensionError(f"a compressed matrix of this layout has shape ({layout.nM},), got {qLD.shape}")
    qLD = qLD.copy()  # writable: factorized in place
    n = len(layout.dof_parentid)
    for k in range(n - 1, -1, -1):
        kk = layout.dof_Madr[k]
        end = kk + layout.rownnz[k]
        _check_pivot(qLD[kk], k)
        ki, i = kk + 1, layout.dof_parentid[k]
        while i >= 0:
            a = qLD[ki] / qLD[kk]
            count = end - ki  # i and its ancestors
            start = layout.dof_Madr[i]
            qLD[start:start + count] = qLD[start:start + count] - a * qLD[ki:end]
            qLD[ki] = a
            ki, i = ki + 1, layout.dof_parentid[i]
    D = np.array([qLD[a] for a in layout.dof_Madr], dtype=qLD.dtype)
    return CompressedLTDL(qLD, 1 / D, 1 / np.array([_sqrt(d) for d in D], dtype=qLD.dtype))
