"""numba kernels of the O(N) recursions on a flat model (layout in :mod:`sko.algorithms.compiled.flat`).

Every kernel takes the ``layout`` table and a ``data`` buffer (float64 or complex128; the
stacked vectors have the same scalar type) and runs the gather (``j = N−1 … 0``) and scatter
(``j = 0 … N−1``) of SKO.md as written there, on blocks of any shape stored row-major at the
layout's offsets. Each body is visited once per pass: O(N). Kernels are compiled on first use
and kept in numba's on-disk cache. Every kernel works on :func:`~.borrow.borrowed` views of its
array arguments, so the per-body steps count no references. The recursions a system call chains
are inlined into their compiled callers (``inline="always"``), which the compiler then optimizes
as one function: called instead, they made a one-state request of a 6-body arm about 0.3–0.6 µs
slower, though they compile several times faster.

The Riccati results live in a second buffer ``r`` laid out by :func:`riccati_layout`: per flat
node ``P(k)``, ``P⁺(k)`` (``m × m``), ``D(k)``, ``D^{-1}(k)`` (``n × n``), ``G(k)`` (``m × n``) and
``ψ(℘(k), k)`` (``m_℘ × m``, −1 for a base body), at the offsets of the columns
``R_P, R_PPLUS, R_D, R_DINV, R_G, R_PSI`` of the returned table. The system requests'
articulated-body passes read only ``P``, ``D^{-1}`` and ``G``: without :func:`riccati`'s ``full``,
``ψ`` and a rigid step's ``P⁺`` are not written.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .borrow import borrowed
from .flat import A, B, COL, DOF, H, HDIM, M, NDIM, NODE, PARENT, PRE, PREORDER, SUB, SUBN, W

__all__ = ["riccati_layout", "R_P", "R_PPLUS", "R_D", "R_DINV", "R_G", "R_PSI"]

R_P, R_PPLUS, R_D, R_DINV, R_G, R_PSI = range(6)


def riccati_layout(layout: np.ndarray) -> tuple[np.ndarray, int]:
    """Offsets of the Riccati blocks per flat node and the length of their buffer."""
    n = layout.shape[0]
    out = np.empty((n, 6), dtype=np.int64)
    off = 0
    for j in range(n):
        m, h, p = int(layout[j, NDIM]), int(layout[j, HDIM]), int(layout[j, PARENT])
        for col, size in ((R_P, m * m), (R_PPLUS, m * m), (R_D, h * h), (R_DINV, h * h), (R_G, m * h)):
            out[j, col] = off
            off += size
        if p >= 0:
            out[j, R_PSI] = off
            off += int(layout[p, NDIM]) * m
        else:
            out[j, R_PSI] = -1
    out.setflags(write=False)
    return out, off


# ----------------------------------------------------------------------------- block helpers
@njit(cache=True, inline="always")
def _dot6(A_, b, step, x0, x1, x2, x3, x4, x5):
    """``Σ_i A_[b + i·step] x_i``: a row (``step`` 1) or a column (``step`` its row length) of a
    row-major block times six numbers held in registers (literal offsets: the compiler unrolls
    the callers)."""
    return (A_[b] * x0 + A_[b + step] * x1 + A_[b + 2 * step] * x2 + A_[b + 3 * step] * x3 + A_[b + 4 * step] * x4
            + A_[b + 5 * step] * x5)


@njit(cache=True, inline="always")
def _block_times(W_, wo, row, col, x):
    """The six sums ``Σ_c W_[wo + i·row + c·col] x_c`` (``i = 0 … 5``) for the 6 × 6 block at
    ``wo`` (row-major) and six numbers ``x``: ``φ x`` with ``(row, col) = (6, 1)``, ``φ* x``
    with ``(1, 6)`` (literal strides: the compiler unrolls the products)."""
    x0, x1, x2, x3, x4, x5 = x
    return (_dot6(W_, wo, col, x0, x1, x2, x3, x4, x5), _dot6(W_, wo + row, col, x0, x1, x2, x3, x4, x5),
            _dot6(W_, wo + 2 * row, col, x0, x1, x2, x3, x4, x5), _dot6(W_, wo + 3 * row, col, x0, x1, x2, x3, x4, x5),
            _dot6(W_, wo + 4 * row, col, x0, x1, x2, x3, x4, x5), _dot6(W_, wo + 5 * row, col, x0, x1, x2, x3, x4, x5))


@njit(cache=True, inline="always")
def _times(W_, wo, x):
    """``φ x`` for the 6 × 6 block ``φ`` at ``wo`` (row-major) and six numbers ``x``."""
    return _block_times(W_, wo, 6, 1, x)


@njit(cache=True, inline="always")
def _transpose_times(W_, wo, x):
    """``φ* x`` for the 6 × 6 block ``φ`` at ``wo`` and six numbers ``x``."""
    return _block_times(W_, wo, 1, 6, x)


@njit(cache=True, inline="always")
def _mv(A_, ao, rows, cols, x, xo, y, yo):
    """``y[yo:yo+rows] += A x[xo:xo+cols]`` (A row-major at ``ao``; 6 × 6 unrolled)."""
    if rows == 6 and cols == 6:
        Ax = _times(A_, ao, (x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4], x[xo + 5]))
        for r in range(6):
            y[yo + r] += Ax[r]
        return
    for r in range(rows):
        s = y[yo + r]
        base = ao + r * cols
        for c in range(cols):
            s += A_[base + c] * x[xo + c]
        y[yo + r] = s


@njit(cache=True, inline="always")
def _mtv(A_, ao, rows, cols, x, xo, y, yo):
    """``y[yo:yo+cols] += A* x[xo:xo+rows]`` (transpose, no conjugation; ``y`` and ``x`` may be
    one array at disjoint offsets; 6 × 6 unrolled)."""
    if rows == 6 and cols == 6:
        x0, x1, x2, x3, x4, x5 = x[xo], x[xo + 1], x[xo + 2], x[xo + 3], x[xo + 4], x[xo + 5]
        for c in range(6):
            y[yo + c] += _dot6(A_, ao + c, 6, x0, x1, x2, x3, x4, x5)
        return
    for c in range(cols):
        s = y[yo + c]
        for r in range(rows):
            s += A_[ao + r * cols + c] * x[xo + r]
        y[yo + c] = s


@njit(cache=True, inline="always")
def _mv2(A_, ao, rows, cols, X, xo, Y, yo, sign):
    """``Y[yo:yo+rows, :] += sign · A X[xo:xo+cols, :]`` for 2-D ``X``, ``Y`` (columns = right-hand sides)."""
    nr = X.shape[1]
    if nr == 1 and rows == 6 and cols == 6:
        Ax = _times(A_, ao, (X[xo, 0], X[xo + 1, 0], X[xo + 2, 0], X[xo + 3, 0], X[xo + 4, 0], X[xo + 5, 0]))
        for r in range(6):
            Y[yo + r, 0] += sign * Ax[r]
        return
    if nr == 1:  # one right-hand side (forward dynamics): each entry summed in a register
        for r in range(rows):
            base = ao + r * cols
            s = 0.0
            for c in range(cols):
                s += A_[base + c] * X[xo + c, 0]
            Y[yo + r, 0] += sign * s
        return
    for r in range(rows):
        base = ao + r * cols
        for c in range(cols):
            a = sign * A_[base + c]
            for q in range(nr):
                Y[yo + r, q] += a * X[xo + c, q]


@njit(cache=True, inline="always")
def _mtv2(A_, ao, rows, cols, X, xo, Y, yo, sign):
    """``Y[yo:yo+cols, :] += sign · A* X[xo:xo+rows, :]``."""
    nr = X.shape[1]
    if nr == 1 and rows == 6 and cols == 6:
        x0, x1, x2, x3, x4, x5 = X[xo, 0], X[xo + 1, 0], X[xo + 2, 0], X[xo + 3, 0], X[xo + 4, 0], X[xo + 5, 0]
        for c in range(6):
            Y[yo + c, 0] += sign * _dot6(A_, ao + c, 6, x0, x1, x2, x3, x4, x5)
        return
    if nr == 1:
        for c in range(cols):
            s = 0.0
            for r in range(rows):
                s += A_[ao + r * cols + c] * X[xo + r, 0]
            Y[yo + c, 0] += sign * s
        return
    for r in range(rows):
        base = ao + r * cols
        for c in range(cols):
            a = sign * A_[base + c]
            for q in range(nr):
                Y[yo + c, q] += a * X[xo + r, q]


@njit(cache=True, inline="always")
def _abt_add(A_, ao, Bm, bo, Cm, co, rows, inner, cols):
    """``C += A B*`` with ``A`` (rows × inner), ``B`` (cols × inner), ``C`` (rows × cols)."""
    if rows == 6 and inner == 6 and cols == 6:
        _abt_add66(A_, ao, Bm, bo, Cm, co)
        return
    for r in range(rows):
        for c in range(cols):
            s = Cm[co + r * cols + c]
            for i in range(inner):
                s += A_[ao + r * inner + i] * Bm[bo + c * inner + i]
            Cm[co + r * cols + c] = s


@njit(cache=True, inline="always")
def _abt_add66(A_, ao, Bm, bo, Cm, co):
    """:func:`_abt_add` for 6 × 6 blocks, with literal bounds the compiler unrolls."""
    for r in range(6):
        a0, a1, a2 = A_[ao + 6 * r], A_[ao + 6 * r + 1], A_[ao + 6 * r + 2]
        a3, a4, a5 = A_[ao + 6 * r + 3], A_[ao + 6 * r + 4], A_[ao + 6 * r + 5]
        for c in range(6):
            Cm[co + 6 * r + c] += _dot6(Bm, bo + 6 * c, 1, a0, a1, a2, a3, a4, a5)


@njit(cache=True, inline="always")
def _congruence66(W_, wo, S, so, C, co):
    """``C += φ S φ*`` for 6 × 6 blocks (``φ`` at ``wo`` of ``W_``, ``S`` symmetric), in registers:
    ``S`` (:func:`_upper66`) and ``φ``'s rows are read before the first store, so ``C`` may share
    ``S``'s array (ℛ, P) and nothing is read back. With ``u_r = S φ(r, :)ᵀ``, ``C(r, c) += φ(c, :) u_r``
    for ``r ≤ c``, mirrored: 342 products. A weight whose lower-left 3 × 3 block is zero — a rigid
    body's ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` — skips the products with those zeros, 216 in all,
    and the same sums (a finite term times zero adds nothing)."""
    _congruence_upper(W_, wo, _upper66(S, so), C, co)


@njit(cache=True, inline="always")
def _congruence_upper(W_, wo, s, C, co):
    """``C += φ S φ*`` (:func:`_congruence66`) for the symmetric ``S`` of upper triangle ``s``, 21
    numbers held in registers (:func:`_upper66`)."""
    p0, p1, p2 = _row66(W_, wo), _row66(W_, wo + 6), _row66(W_, wo + 12)
    u0, u1, u2 = _symmetric_times(s, p0), _symmetric_times(s, p1), _symmetric_times(s, p2)
    upper = (_dot(p0, u0), _dot(p1, u0), _dot(p2, u0), _dot(p1, u1), _dot(p2, u1), _dot(p2, u2))
    if _lower_left_zero(W_, wo):
        t3, t4, t5 = _lower_right(W_, wo)
        v3, v4, v5 = _lower_times(s, t3), _lower_times(s, t4), _lower_times(s, t5)  # S₂₂ t, 3 numbers
        mixed = (_dot_tail(t3, u0), _dot_tail(t4, u0), _dot_tail(t5, u0), _dot_tail(t3, u1), _dot_tail(t4, u1),
                 _dot_tail(t5, u1), _dot_tail(t3, u2), _dot_tail(t4, u2), _dot_tail(t5, u2))
        lower = (_dot3(t3, v3), _dot3(t4, v3), _dot3(t5, v3), _dot3(t4, v4), _dot3(t5, v4), _dot3(t5, v5))
    else:
        p3, p4, p5 = _row66(W_, wo + 18), _row66(W_, wo + 24), _row66(W_, wo + 30)
        u3, u4 = _symmetric_times(s, p3), _symmetric_times(s, p4)
        mixed = (_dot(p3, u0), _dot(p4, u0), _dot(p5, u0), _dot(p3, u1), _dot(p4, u1), _dot(p5, u1),
                 _dot(p3, u2), _dot(p4, u2), _dot(p5, u2))
        lower = (_dot(p3, u3), _dot(p4, u3), _dot(p5, u3), _dot(p4, u4), _dot(p5, u4),
                 _dot(p5, _symmetric_times(s, p5)))
    _add_mirrored(C, co, 0, 0, upper, 3)  # rows and columns 0..2
    for r in range(3):  # rows 0..2, columns 3..5
        for c in range(3):
            x = mixed[3 * r + c]
            C[co + 6 * r + c + 3] += x
            C[co + 6 * (c + 3) + r] += x
    _add_mirrored(C, co, 3, 3, lower, 3)  # rows and columns 3..5


@njit(cache=True, inline="always")
def _lower_left_zero(W_, wo) -> bool:
    """Whether the 6 × 6 block at ``wo`` has a zero lower-left 3 × 3 block, as a rigid body's
    weight ``(ᵏX_o)* = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` has (a NaN there is not zero)."""
    return (W_[wo + 18] == 0 and W_[wo + 19] == 0 and W_[wo + 20] == 0 and W_[wo + 24] == 0
            and W_[wo + 25] == 0 and W_[wo + 26] == 0 and W_[wo + 30] == 0 and W_[wo + 31] == 0
            and W_[wo + 32] == 0)


@njit(cache=True, inline="always")
def _lower_right(W_, wo):
    """Rows 3..5 of the 6 × 6 block at ``wo``, their last three numbers each."""
    return ((W_[wo + 21], W_[wo + 22], W_[wo + 23]), (W_[wo + 27], W_[wo + 28], W_[wo + 29]),
            (W_[wo + 33], W_[wo + 34], W_[wo + 35]))


@njit(cache=True, inline="always")
def _add_mirrored(C, co, r0, c0, v, n):
    """``C(r0 + i, c0 + j) += v_k`` and its mirror for the upper triangle ``i ≤ j < n`` of an
    ``n × n`` diagonal block, given row by row as ``v``."""
    k = 0
    for i in range(n):
        for j in range(i, n):
            C[co + 6 * (r0 + i) + c0 + j] += v[k]
            if i != j:
                C[co + 6 * (c0 + j) + r0 + i] += v[k]
            k += 1


@njit(cache=True, inline="always")
def _upper66(S, so):
    """The upper triangle of the symmetric 6 × 6 block of ``S`` at ``so``, row by row (21
    numbers). Each entry is taken as ``S(i, j) + 0 · S(j, i)``: the same number, but a NaN or
    infinity of the lower triangle is not dropped."""
    return (S[so], S[so + 1] + 0 * S[so + 6], S[so + 2] + 0 * S[so + 12], S[so + 3] + 0 * S[so + 18],
            S[so + 4] + 0 * S[so + 24], S[so + 5] + 0 * S[so + 30], S[so + 7], S[so + 8] + 0 * S[so + 13],
            S[so + 9] + 0 * S[so + 19], S[so + 10] + 0 * S[so + 25], S[so + 11] + 0 * S[so + 31], S[so + 14],
            S[so + 15] + 0 * S[so + 20], S[so + 16] + 0 * S[so + 26], S[so + 17] + 0 * S[so + 32], S[so + 21],
            S[so + 22] + 0 * S[so + 27], S[so + 23] + 0 * S[so + 33], S[so + 28], S[so + 29] + 0 * S[so + 34],
            S[so + 35])


@njit(cache=True, inline="always")
def _upper_minus_outer(S, so, g, x):
    """The upper triangle of ``S − g xᵀ`` (``S`` the 6 × 6 block at ``so``; six numbers each of ``g``
    and ``x``), row by row, each entry with ``0 ×`` its mirror folded in as in :func:`_upper66`:
    ``S − g xᵀ`` is not exactly symmetric, and an entry that overflows below the diagonal is not
    dropped."""
    return (S[so] - g[0] * x[0], (S[so + 1] - g[0] * x[1]) + 0 * (S[so + 6] - g[1] * x[0]),
            (S[so + 2] - g[0] * x[2]) + 0 * (S[so + 12] - g[2] * x[0]),
            (S[so + 3] - g[0] * x[3]) + 0 * (S[so + 18] - g[3] * x[0]),
            (S[so + 4] - g[0] * x[4]) + 0 * (S[so + 24] - g[4] * x[0]),
            (S[so + 5] - g[0] * x[5]) + 0 * (S[so + 30] - g[5] * x[0]), S[so + 7] - g[1] * x[1],
            (S[so + 8] - g[1] * x[2]) + 0 * (S[so + 13] - g[2] * x[1]),
            (S[so + 9] - g[1] * x[3]) + 0 * (S[so + 19] - g[3] * x[1]),
            (S[so + 10] - g[1] * x[4]) + 0 * (S[so + 25] - g[4] * x[1]),
            (S[so + 11] - g[1] * x[5]) + 0 * (S[so + 31] - g[5] * x[1]), S[so + 14] - g[2] * x[2],
            (S[so + 15] - g[2] * x[3]) + 0 * (S[so + 20] - g[3] * x[2]),
            (S[so + 16] - g[2] * x[4]) + 0 * (S[so + 26] - g[4] * x[2]),
            (S[so + 17] - g[2] * x[5]) + 0 * (S[so + 32] - g[5] * x[2]), S[so + 21] - g[3] * x[3],
            (S[so + 22] - g[3] * x[4]) + 0 * (S[so + 27] - g[4] * x[3]),
            (S[so + 23] - g[3] * x[5]) + 0 * (S[so + 33] - g[5] * x[3]), S[so + 28] - g[4] * x[4],
            (S[so + 29] - g[4] * x[5]) + 0 * (S[so + 34] - g[5] * x[4]), S[so + 35] - g[5] * x[5])


@njit(cache=True, inline="always")
def _row66(W_, o):
    """Six numbers of ``W_`` from ``o``: a row of a row-major 6 × 6 block."""
    return W_[o], W_[o + 1], W_[o + 2], W_[o + 3], W_[o + 4], W_[o + 5]


@njit(cache=True, inline="always")
def _symmetric_times(s, x):
    """``S x`` for the symmetric 6 × 6 ``S`` of upper triangle ``s`` (:func:`_upper66`)."""
    s00, s01, s02, s03, s04, s05, s11, s12, s13, s14, s15, s22, s23, s24, s25, s33, s34, s35, s44, s45, s55 = s
    x0, x1, x2, x3, x4, x5 = x
    return (s00 * x0 + s01 * x1 + s02 * x2 + s03 * x3 + s04 * x4 + s05 * x5,
            s01 * x0 + s11 * x1 + s12 * x2 + s13 * x3 + s14 * x4 + s15 * x5,
            s02 * x0 + s12 * x1 + s22 * x2 + s23 * x3 + s24 * x4 + s25 * x5,
            s03 * x0 + s13 * x1 + s23 * x2 + s33 * x3 + s34 * x4 + s35 * x5,
            s04 * x0 + s14 * x1 + s24 * x2 + s34 * x3 + s44 * x4 + s45 * x5,
            s05 * x0 + s15 * x1 + s25 * x2 + s35 * x3 + s45 * x4 + s55 * x5)


@njit(cache=True, inline="always")
def _lower_times(s, x):
    """``S₂₂ x``: the lower-right 3 × 3 block of the symmetric ``S`` of upper triangle ``s`` times
    three numbers ``x``."""
    s33, s34, s35, s44, s45, s55 = s[15], s[16], s[17], s[18], s[19], s[20]
    x3, x4, x5 = x
    return s33 * x3 + s34 * x4 + s35 * x5, s34 * x3 + s44 * x4 + s45 * x5, s35 * x3 + s45 * x4 + s55 * x5


@njit(cache=True, inline="always")
def _dot(a, b):
    """``a · b`` for six numbers each."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, inline="always")
def _dot3(a, b):
    """``a · b`` for three numbers each."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _dot_tail(a, b):
    """``a · b[3:]`` for three numbers ``a`` and six ``b``."""
    return a[0] * b[3] + a[1] * b[4] + a[2] * b[5]


@njit(cache=True, inline="always")
def _ab(A_, ao, Bm, bo, Cm, co, rows, inner, cols):
    """``C = A B`` with ``A`` (rows × inner), ``B`` (inner × cols); each entry summed in a
    register (C may share an array with A or B as far as the compiler knows)."""
    if rows == 6 and inner == 6 and cols == 6:
        _ab66(A_, ao, Bm, bo, Cm, co)
        return
    if rows == 6 and inner == 6 and cols == 1:  # a 6 × 6 block times a vector (one hinge column)
        x0, x1, x2, x3, x4, x5 = Bm[bo], Bm[bo + 1], Bm[bo + 2], Bm[bo + 3], Bm[bo + 4], Bm[bo + 5]
        for r in range(6):
            Cm[co + r] = _dot6(A_, ao + 6 * r, 1, x0, x1, x2, x3, x4, x5)
        return
    for r in range(rows):
        for c in range(cols):
            s = 0.0
            for i in range(inner):
                s += A_[ao + r * inner + i] * Bm[bo + i * cols + c]
            Cm[co + r * cols + c] = s


@njit(cache=True, inline="always")
def _ab66(A_, ao, Bm, bo, Cm, co):
    """:func:`_ab` for 6 × 6 blocks, with literal bounds the compiler unrolls."""
    for r in range(6):
        a0, a1, a2 = A_[ao + 6 * r], A_[ao + 6 * r + 1], A_[ao + 6 * r + 2]
        a3, a4, a5 = A_[ao + 6 * r + 3], A_[ao + 6 * r + 4], A_[ao + 6 * r + 5]
        for c in range(6):
            Cm[co + 6 * r + c] = _dot6(Bm, bo + c, 6, a0, a1, a2, a3, a4, a5)


@njit(cache=True, inline="always")
def _rigid_step(layout, j, p) -> bool:
    """Whether flat node ``j`` (parent ``p``) has ``m = 6``, ``h = 1`` and a 6-dimensional parent
    or none — a rigid body on a 1-dof hinge — whose steps the recursions take in registers."""
    return layout[j, NDIM] == 6 and layout[j, HDIM] == 1 and (p < 0 or layout[p, NDIM] == 6)


@njit(cache=True, inline="always")
def _copy_block(S, so, C, co, m):
    """``C[co: co + m²] = S[so: so + m²]``, element by element (a slice view costs a reference
    count); for ``m = 6`` with a literal bound, which the compiler unrolls (a loop of runtime
    length took about 1 ns an entry)."""
    if m == 6:
        for i in range(36):
            C[co + i] = S[so + i]
        return
    for i in range(m * m):
        C[co + i] = S[so + i]


@njit(cache=True, inline="always")
def _largest(layout, col):
    """The largest entry of a layout column, at least 1 (scratch sizes; empty models too)."""
    out = 1
    for j in range(layout.shape[0]):
        out = max(out, layout[j, col])
    return out


def _max_dims(layout):
    return max(1, int(layout[:, NDIM].max(initial=0))), max(1, int(layout[:, HDIM].max(initial=0)))


# ----------------------------------------------------------------------------- SPO products
@njit(cache=True)
def spo(layout, wdata, woff, x, y, star, tilde):
    """``y = φ x`` (gather), ``φ* x`` (scatter), ``φ̃ x``, ``φ̃* x`` (Lemmas 1, 2, Cor. 3.1) for the
    weights at offsets ``woff`` of ``wdata``. ``y`` is zero on entry."""
    layout, wdata, woff, x, y = borrowed(layout), borrowed(wdata), borrowed(woff), borrowed(x), borrowed(y)
    n = layout.shape[0]
    if not tilde:
        y[:] = x
    if not star:
        for j in range(n - 1, -1, -1):  # gather: y(℘(j)) += φ(℘(j), j) [y(j) (+ x(j))]
            p = layout[j, PARENT]
            if p >= 0:
                mp, m, o, no, npo = layout[p, NDIM], layout[j, NDIM], woff[j], layout[j, NODE], layout[p, NODE]
                _mv(wdata, o, mp, m, y, no, y, npo)
                if tilde:
                    _mv(wdata, o, mp, m, x, no, y, npo)
    else:
        for j in range(n):  # scatter: y(j) (+)= φ*(℘(j), j) [y(℘(j)) (+ x(℘(j)))]
            p = layout[j, PARENT]
            if p >= 0:
                mp, m, o, no, npo = layout[p, NDIM], layout[j, NDIM], woff[j], layout[j, NODE], layout[p, NODE]
                _mtv(wdata, o, mp, m, y, npo, y, no)
                if tilde:
                    _mtv(wdata, o, mp, m, x, npo, y, no)


@njit(cache=True)
def joint_map(layout, data, x, y, star):
    """``y = H x`` (node → hinge) or ``y = H* x`` (hinge → node); ``y`` zero on entry."""
    layout, data, x, y = borrowed(layout), borrowed(data), borrowed(x), borrowed(y)
    for j in range(layout.shape[0]):
        h, m = layout[j, HDIM], layout[j, NDIM]
        if star:
            _mtv(data, layout[j, H], h, m, x, layout[j, DOF], y, layout[j, NODE])
        else:
            _mv(data, layout[j, H], h, m, x, layout[j, NODE], y, layout[j, DOF])


# ----------------------------------------------------------------------------- Newton–Euler
@njit(cache=True, inline="always")
def newton_euler(layout, data, qdd, qd, nodes, T, with_V):
    """Algorithm 3.1 with ``a``, ``b`` from the data buffer: ``nodes[0] = 𝒱`` (if ``with_V``),
    ``nodes[1] = α``, ``nodes[2] = f``, ``T = H f``. Outputs are zero on entry. At a rigid body on
    a 1-dof hinge (:func:`_rigid_step`) the gather step, and without ``𝒱`` the scatter step, hold
    their 6-vectors in registers."""
    layout, data, qdd, qd, nodes, T = (borrowed(layout), borrowed(data), borrowed(qdd), borrowed(qd), borrowed(nodes),
                                       borrowed(T))
    V, alpha, f = nodes[0], nodes[1], nodes[2]
    n = layout.shape[0]
    for j in range(n):  # scatter
        p, m, h, no, do = layout[j, PARENT], layout[j, NDIM], layout[j, HDIM], layout[j, NODE], layout[j, DOF]
        if not with_V and _rigid_step(layout, j, p):
            _newton_euler_scatter_6_1(layout, data, qdd, alpha, f, j, p)
            continue
        if p >= 0:
            mp, npo = layout[p, NDIM], layout[p, NODE]
            _mtv(data, layout[j, W], mp, m, alpha, npo, alpha, no)
            if with_V:
                _mtv(data, layout[j, W], mp, m, V, npo, V, no)
        _mtv(data, layout[j, H], h, m, qdd, do, alpha, no)
        if with_V:
            _mtv(data, layout[j, H], h, m, qd, do, V, no)
        ao, bo = layout[j, A], layout[j, B]
        for i in range(m):
            alpha[no + i] += data[ao + i]
            f[no + i] = data[bo + i]
        _mv(data, layout[j, M], m, m, alpha, no, f, no)
    for j in range(n - 1, -1, -1):  # gather
        p, m, no = layout[j, PARENT], layout[j, NDIM], layout[j, NODE]
        if _rigid_step(layout, j, p):  # T(j) = H f(j), f(℘) += φ f(j), with f(j) in registers
            f0, f1, f2, f3, f4, f5 = f[no], f[no + 1], f[no + 2], f[no + 3], f[no + 4], f[no + 5]
            T[layout[j, DOF]] += _dot6(data, layout[j, H], 1, f0, f1, f2, f3, f4, f5)
            if p >= 0:
                y, npo = _times(data, layout[j, W], (f0, f1, f2, f3, f4, f5)), layout[p, NODE]
                for i in range(6):
                    f[npo + i] += y[i]
            continue
        _mv(data, layout[j, H], layout[j, HDIM], m, f, no, T, layout[j, DOF])
        if p >= 0:
            _mv(data, layout[j, W], layout[p, NDIM], m, f, no, f, layout[p, NODE])


@njit(cache=True, inline="always")
def _newton_euler_scatter_6_1(layout, data, qdd, alpha, f, j, p):
    """The scatter step of :func:`newton_euler` at a rigid body on a 1-dof hinge
    (:func:`_rigid_step`): ``α = φ* α(℘) + H* θ̈ + a``, ``f = M α + b``, ``α`` in registers."""
    no = layout[j, NODE]
    if p >= 0:
        npo = layout[p, NODE]
        x = _transpose_times(data, layout[j, W], (alpha[npo], alpha[npo + 1], alpha[npo + 2], alpha[npo + 3],
                                                   alpha[npo + 4], alpha[npo + 5]))
    else:
        x = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ho, ao, bo, mo, t = layout[j, H], layout[j, A], layout[j, B], layout[j, M], qdd[layout[j, DOF]]
    a0 = x[0] + data[ho] * t + data[ao]
    a1 = x[1] + data[ho + 1] * t + data[ao + 1]
    a2 = x[2] + data[ho + 2] * t + data[ao + 2]
    a3 = x[3] + data[ho + 3] * t + data[ao + 3]
    a4 = x[4] + data[ho + 4] * t + data[ao + 4]
    a5 = x[5] + data[ho + 5] * t + data[ao + 5]
    alpha[no], alpha[no + 1], alpha[no + 2], alpha[no + 3], alpha[no + 4], alpha[no + 5] = a0, a1, a2, a3, a4, a5
    Ma = _times(data, mo, (a0, a1, a2, a3, a4, a5))
    for i in range(6):
        f[no + i] = data[bo + i] + Ma[i]


# ----------------------------------------------------------------------------- composite inertias, CRBA
@njit(cache=True, inline="always")
def composite_inertias(layout, data, R, tmp):
    """``ℛ(k) = Σ_{j ∈ C(k)} φ(k, j) ℛ(j) φ*(k, j) + M(k)`` (Algorithm 4.1) at the ``M`` offsets
    of ``R`` (a buffer of the data's length)."""
    layout, data, R, tmp = borrowed(layout), borrowed(data), borrowed(R), borrowed(tmp)
    n = layout.shape[0]
    for j in range(n):
        _copy_block(data, layout[j, M], R, layout[j, M], layout[j, NDIM])
    for j in range(n - 1, -1, -1):
        p = layout[j, PARENT]
        if p >= 0:
            mp, m, wo = layout[p, NDIM], layout[j, NDIM], layout[j, W]
            if mp == 6 and m == 6:
                _congruence66(data, wo, R, layout[j, M], R, layout[p, M])  # ℛ(℘) += φ ℛ(j) φ*
            else:
                _ab(data, wo, R, layout[j, M], tmp, 0, mp, m, m)  # φ ℛ(j)
                _abt_add(tmp, 0, data, wo, R, layout[p, M], mp, m, mp)


@njit(cache=True, inline="always")
def mass_matrix(layout, data, R, out, F, Y):
    """Algorithm 4.2 from the composite inertias ``R``, ``ℳ(j, k) = H(j) φ(j, k) ℛ(k) H*(k)`` for
    ``k`` in the subtree of ``j``, in block form: a gather (``k = N−1 … 0``) keeps the columns
    ``φ(k, i) ℛ(i) H*(i)`` of every ``i`` in the subtree of ``k`` in ``F`` (``max m × nv``, the
    hinge columns in the preorder of the layout's ``COL``, so a subtree is one range of columns);
    at ``k`` it adds ``k``'s own columns ``ℛ(k) H*(k)``, writes the row ``H(k) F`` of the subtree
    and carries the range to the parent, ``F ← φ(℘(k), k) F``: the columns of a step are
    independent, where a column walked alone up its ancestors is one chain of dependent products.
    ``Y`` is scratch of ``F``'s size; only blocks of related pairs are written."""
    layout, data, R, out, F, Y = (borrowed(layout), borrowed(data), borrowed(R), borrowed(out), borrowed(F),
                                  borrowed(Y))
    nv = out.shape[0]
    for k in range(layout.shape[0] - 1, -1, -1):
        m, h, ck, sub = layout[k, NDIM], layout[k, HDIM], layout[k, COL], layout[k, SUB]
        if sub == 0:
            continue
        ho, ro = layout[k, H], layout[k, M]
        dk, first, last = layout[k, DOF], layout[k, PRE], layout[k, PRE] + layout[k, SUBN]
        if m == 6:  # rows of H(k) in registers
            for c in range(h):  # F(:, own) = ℛ(k) H*(k)
                h0, h1, h2, h3, h4, h5 = (data[ho + 6 * c], data[ho + 6 * c + 1], data[ho + 6 * c + 2],
                                          data[ho + 6 * c + 3], data[ho + 6 * c + 4], data[ho + 6 * c + 5])
                for r in range(6):
                    F[r * nv + ck + c] = _dot6(R, ro + 6 * r, 1, h0, h1, h2, h3, h4, h5)
            for r in range(h):  # ℳ(k, i) = H(k) F(:, i), and its transpose
                h0, h1, h2, h3, h4, h5 = (data[ho + 6 * r], data[ho + 6 * r + 1], data[ho + 6 * r + 2],
                                          data[ho + 6 * r + 3], data[ho + 6 * r + 4], data[ho + 6 * r + 5])
                for at in range(first, last):
                    i = layout[at, PREORDER]
                    col, di = layout[i, COL], layout[i, DOF]
                    for c in range(layout[i, HDIM]):
                        s = _dot6(F, col + c, nv, h0, h1, h2, h3, h4, h5)
                        out[dk + r, di + c] = s
                        out[di + c, dk + r] = s
        else:
            for r in range(m):
                for c in range(h):
                    s = 0.0  # widened to complex on the complex path; F is stale from the last call
                    for i in range(m):
                        s += R[ro + r * m + i] * data[ho + c * m + i]
                    F[r * nv + ck + c] = s
            for at in range(first, last):
                i = layout[at, PREORDER]
                for c in range(layout[i, HDIM]):
                    col, di = layout[i, COL] + c, layout[i, DOF] + c
                    for r in range(h):
                        s = 0.0
                        for l in range(m):
                            s += data[ho + r * m + l] * F[l * nv + col]
                        out[dk + r, di] = s
                        out[di, dk + r] = s
        p = layout[k, PARENT]
        if p < 0:
            continue
        mp, wo = layout[p, NDIM], layout[k, W]
        if mp == 6 and m == 6:
            _carry66(data, wo, F, nv, ck, ck + sub)
        else:  # F(:, subtree) ← φ(℘(k), k) F(:, subtree), through Y
            for r in range(mp):
                for c in range(ck, ck + sub):
                    s = 0.0
                    for l in range(m):
                        s += data[wo + r * m + l] * F[l * nv + c]
                    Y[r * nv + c] = s
            for r in range(mp):
                for c in range(ck, ck + sub):
                    F[r * nv + c] = Y[r * nv + c]


@njit(cache=True, inline="always")
def _carry66(data, wo, F, nv, first, stop):
    """``F(:, c) ← φ F(:, c)`` for the columns ``first … stop − 1`` of ``F`` (rows of ``nv``
    entries) and the 6 × 6 weight ``φ`` at ``wo``. ``φ``'s rows are read once, before the first
    store (a store to ``F`` would otherwise make the compiler read them again for every column),
    and each column is read before it is written. A rigid weight (:func:`_lower_left_zero`)
    skips the products with its zero block: 27 per column, not 36, and the same sums for finite
    columns (a non-finite column has already made its own entries of ℳ non-finite: ``H(k) F``
    multiplies every row, zeros included)."""
    p0, p1, p2 = _row66(data, wo), _row66(data, wo + 6), _row66(data, wo + 12)
    if _lower_left_zero(data, wo):
        t3, t4, t5 = _lower_right(data, wo)
        for c in range(first, stop):
            x = (F[c], F[nv + c], F[2 * nv + c], F[3 * nv + c], F[4 * nv + c], F[5 * nv + c])
            F[c], F[nv + c], F[2 * nv + c] = _dot(p0, x), _dot(p1, x), _dot(p2, x)
            F[3 * nv + c], F[4 * nv + c], F[5 * nv + c] = _dot_tail(t3, x), _dot_tail(t4, x), _dot_tail(t5, x)
        return
    p3, p4, p5 = _row66(data, wo + 18), _row66(data, wo + 24), _row66(data, wo + 30)
    for c in range(first, stop):
        x = (F[c], F[nv + c], F[2 * nv + c], F[3 * nv + c], F[4 * nv + c], F[5 * nv + c])
        F[c], F[nv + c], F[2 * nv + c] = _dot(p0, x), _dot(p1, x), _dot(p2, x)
        F[3 * nv + c], F[4 * nv + c], F[5 * nv + c] = _dot(p3, x), _dot(p4, x), _dot(p5, x)


# ----------------------------------------------------------------------------- Riccati
@njit(cache=True, inline="always")
def riccati(layout, data, roff, r, scratch, full=True):
    """The Riccati gather (Eq. 33) into ``r`` (see :func:`riccati_layout`); ``ψ(℘(k), k)`` only
    if ``full``, and ``P⁺(k)`` of a rigid body on a 1-dof hinge (:func:`_rigid_step`) too:
    Algorithm 6.1 reads neither.

    ``D(k)`` is factored by Cholesky without conjugation (complex-step data: the pivots' real
    parts decide definiteness). Returns ``(j, log det ℳ)``: ``j`` is −1, or the flat node whose
    ``D`` is not positive definite or not finite (the caller reports it)."""
    layout, data, roff, r, scratch = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r),
                                      borrowed(scratch))
    n = layout.shape[0]
    mx = int(np.sqrt(scratch.shape[0] // 8))
    HP, L, Li, Y, T1 = (scratch[0:mx * mx], scratch[mx * mx:2 * mx * mx], scratch[2 * mx * mx:3 * mx * mx],
                        scratch[3 * mx * mx:4 * mx * mx], scratch[4 * mx * mx:8 * mx * mx])
    logdet = 0.0  # not scratch[0] * 0: the scratch holds the last call's values
    for j in range(n):
        _copy_block(data, layout[j, M], r, roff[j, R_P], layout[j, NDIM])
    for j in range(n - 1, -1, -1):
        p, m, h, ho = layout[j, PARENT], layout[j, NDIM], layout[j, HDIM], layout[j, H]
        if _rigid_step(layout, j, p):
            d = _riccati_6_1(layout, data, roff, r, j, full)
            if not (d.real > 0) or not (abs(d) < np.inf):
                return j, logdet
            logdet += np.log(d)
            continue
        Po, Do, DIo, Go, PPo = roff[j, R_P], roff[j, R_D], roff[j, R_DINV], roff[j, R_G], roff[j, R_PPLUS]
        _ab(data, ho, r, Po, HP, 0, h, m, m)  # H P
        for a_ in range(h):  # D = (H P) H*
            for b_ in range(h):
                s = HP[0] * 0
                for i in range(m):
                    s += HP[a_ * m + i] * data[ho + b_ * m + i]
                r[Do + a_ * h + b_] = s
        # Cholesky D = L L* (lower, no conjugation)
        for a_ in range(h):
            for b_ in range(a_ + 1):
                s = r[Do + a_ * h + b_]
                for i in range(b_):
                    s -= L[a_ * h + i] * L[b_ * h + i]
                if a_ == b_:
                    if not (s.real > 0) or not (abs(s) < np.inf):
                        return j, logdet
                    L[a_ * h + a_] = np.sqrt(s)
                else:
                    L[a_ * h + b_] = s / L[b_ * h + b_]
            for b_ in range(a_ + 1, h):
                L[a_ * h + b_] = 0
            logdet += 2 * np.log(L[a_ * h + a_])
        # Li = L^{-1} (lower)
        for a_ in range(h):
            for b_ in range(h):
                Li[a_ * h + b_] = 0
            Li[a_ * h + a_] = 1 / L[a_ * h + a_]
            for b_ in range(a_):
                s = Li[0] * 0
                for i in range(b_, a_):
                    s += L[a_ * h + i] * Li[i * h + b_]
                Li[a_ * h + b_] = -s / L[a_ * h + a_]
        for a_ in range(h):  # D^{-1} = Li* Li
            for b_ in range(h):
                s = Li[0] * 0
                for i in range(max(a_, b_), h):
                    s += Li[i * h + a_] * Li[i * h + b_]
                r[DIo + a_ * h + b_] = s
        _ab(Li, 0, HP, 0, Y, 0, h, h, m)  # Y = Li H P
        for c in range(m):  # G = (Li* Y)*, m × h
            for a_ in range(h):
                s = Y[0] * 0
                for i in range(a_, h):
                    s += Li[i * h + a_] * Y[i * m + c]
                r[Go + c * h + a_] = s
        for a_ in range(m):  # P⁺ = P − Y* Y
            for b_ in range(m):
                s = r[Po + a_ * m + b_]
                for i in range(h):
                    s -= Y[i * m + a_] * Y[i * m + b_]
                r[PPo + a_ * m + b_] = s
        if p >= 0:
            mp, wo, so = layout[p, NDIM], layout[j, W], roff[j, R_PSI]
            if full:
                _ab(data, wo, r, Go, T1, 0, mp, m, h)  # K = φ G, m_℘ × h
                for a_ in range(mp):  # ψ = φ − K H
                    for b_ in range(m):
                        s = data[wo + a_ * m + b_]
                        for i in range(h):
                            s -= T1[a_ * h + i] * data[ho + i * m + b_]
                        r[so + a_ * m + b_] = s
            _ab(data, wo, r, PPo, T1, 0, mp, m, m)  # φ P⁺
            _abt_add(T1, 0, data, wo, r, roff[p, R_P], mp, m, mp)  # P(℘) += φ P⁺ φ*
    return -1, logdet


@njit(cache=True, inline="always")
def _riccati_6_1(layout, data, roff, r, j, full):
    """The step of :func:`riccati` at a rigid body on a 1-dof hinge (:func:`_rigid_step`), in
    registers: ``H P`` (a row), ``D = H P H*`` (a number), ``G = (H P)* / D`` and the upper triangle
    of ``P⁺ = P − G H P`` (:func:`_upper_minus_outer`), which the congruence into ``P(℘)`` takes
    as it is; ``P⁺`` and ``ψ`` are stored only if ``full``. Returns ``D``; nothing else is written
    when ``D`` is not positive and finite (the caller reports the node)."""
    p, ho = layout[j, PARENT], layout[j, H]
    Po, Go = roff[j, R_P], roff[j, R_G]
    h = _row66(data, ho)
    hp = _transpose_times(r, Po, h)
    d = _dot(hp, h)
    if not (d.real > 0) or not (abs(d) < np.inf):
        return d
    di = 1 / d
    g = (hp[0] * di, hp[1] * di, hp[2] * di, hp[3] * di, hp[4] * di, hp[5] * di)
    u = _upper_minus_outer(r, Po, g, hp)  # before the first store into r
    r[roff[j, R_D]], r[roff[j, R_DINV]] = d, di
    for c in range(6):
        r[Go + c] = g[c]
    if full:  # P⁺ = P − G (H P), every entry
        PPo = roff[j, R_PPLUS]
        for a_ in range(6):
            for b_ in range(6):
                r[PPo + 6 * a_ + b_] = r[Po + 6 * a_ + b_] - g[a_] * hp[b_]
    if p >= 0:
        wo = layout[j, W]
        if full:  # K = φ G, ψ = φ − K H
            so = roff[j, R_PSI]
            for a_ in range(6):
                kk = _dot(_row66(data, wo + 6 * a_), g)
                for b_ in range(6):
                    r[so + 6 * a_ + b_] = data[wo + 6 * a_ + b_] - kk * h[b_]
        _congruence_upper(data, wo, u, r, roff[p, R_P])  # P(℘) += φ P⁺ φ*
    return d


def riccati_scratch(layout, dtype) -> np.ndarray:
    mx = max(_max_dims(layout))
    return np.zeros(8 * mx * mx, dtype=dtype)


# ----------------------------------------------------------------------------- Algorithm 6.1
@njit(cache=True, inline="always")
def articulated_body(layout, data, roff, r, T, with_ab, z, out, eps):
    """The gather and scatter of Algorithm 6.1 (Eq. 58) for 2-D ``T`` (columns = right-hand
    sides), ``a``, ``b`` from the data buffer if ``with_ab``; ``z`` (node_size × r) and ``out``
    are zero on entry. ``out`` receives ν in the gather and θ̈ in the scatter; ``z`` is reused
    for α; ``eps`` is scratch for one ε(k) (at least ``max n_k × r`` entries). With one right-hand
    side, the steps of a rigid body on a 1-dof hinge (:func:`_rigid_step`) hold their 6-vectors
    in registers."""
    layout, data, roff, r, T, z, out = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(T),
                                        borrowed(z), borrowed(out))
    n = layout.shape[0]
    nr = T.shape[1]
    if with_ab:
        for j in range(n):  # z(k) = P(k) a(k) + b(k)
            m, no, ao, bo, Po = layout[j, NDIM], layout[j, NODE], layout[j, A], layout[j, B], roff[j, R_P]
            if nr == 1 and m == 6:
                Pa = _times(r, Po, (data[ao], data[ao + 1], data[ao + 2], data[ao + 3], data[ao + 4], data[ao + 5]))
                for a_ in range(6):
                    z[no + a_, 0] = data[bo + a_] + Pa[a_]
                continue
            for a_ in range(m):
                s = data[bo + a_]
                for i in range(m):
                    s += r[Po + a_ * m + i] * data[ao + i]
                for q in range(nr):
                    z[no + a_, q] = s
    hmax = _largest(layout, HDIM)
    eps = borrowed(eps)[:hmax * nr].reshape((hmax, nr))
    for j in range(n - 1, -1, -1):
        p, m, h, no, do = layout[j, PARENT], layout[j, NDIM], layout[j, HDIM], layout[j, NODE], layout[j, DOF]
        if nr == 1 and _rigid_step(layout, j, p):
            _articulated_gather_6_1(layout, data, roff, r, T, z, out, j, p)
            continue
        for a_ in range(h):
            for q in range(nr):
                eps[a_, q] = T[do + a_, q]
        _mv2(data, layout[j, H], h, m, z, no, eps, 0, -1.0)  # ε = T − H z
        _mv2(r, roff[j, R_DINV], h, h, eps, 0, out, do, 1.0)  # ν = D^{-1} ε
        _mv2(r, roff[j, R_G], m, h, eps, 0, z, no, 1.0)  # z⁺ = z + G ε
        if p >= 0:
            _mv2(data, layout[j, W], layout[p, NDIM], m, z, no, z, layout[p, NODE], 1.0)
    for j in range(n):
        p, m, h, no, do = layout[j, PARENT], layout[j, NDIM], layout[j, HDIM], layout[j, NODE], layout[j, DOF]
        if nr == 1 and _rigid_step(layout, j, p):
            _articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p)
            continue
        for a_ in range(m):
            for q in range(nr):
                z[no + a_, q] = 0
        if p >= 0:  # α⁺ = φ* α(℘)
            _mtv2(data, layout[j, W], layout[p, NDIM], m, z, layout[p, NODE], z, no, 1.0)
        _mtv2(r, roff[j, R_G], m, h, z, no, out, do, -1.0)  # θ̈ = ν − G* α⁺
        _mtv2(data, layout[j, H], h, m, out, do, z, no, 1.0)  # α = α⁺ + H* θ̈ (+ a)
        if with_ab:
            ao = layout[j, A]
            for a_ in range(m):
                for q in range(nr):
                    z[no + a_, q] += data[ao + a_]


@njit(cache=True, inline="always")
def _articulated_gather_6_1(layout, data, roff, r, T, z, out, j, p):
    """The gather step of :func:`articulated_body` at a rigid body on a 1-dof hinge
    (:func:`_rigid_step`), one right-hand side: ``ε = T − H z``, ``ν = D^{-1} ε``, ``z(℘) += φ (z + G ε)``
    (``z⁺`` stays in registers: the scatter does not read it)."""
    no, do, go = layout[j, NODE], layout[j, DOF], roff[j, R_G]
    z0, z1, z2, z3, z4, z5 = z[no, 0], z[no + 1, 0], z[no + 2, 0], z[no + 3, 0], z[no + 4, 0], z[no + 5, 0]
    e = T[do, 0] - _dot6(data, layout[j, H], 1, z0, z1, z2, z3, z4, z5)
    out[do, 0] += r[roff[j, R_DINV]] * e
    if p >= 0:
        y = _times(data, layout[j, W], (z0 + r[go] * e, z1 + r[go + 1] * e, z2 + r[go + 2] * e,
                                        z3 + r[go + 3] * e, z4 + r[go + 4] * e, z5 + r[go + 5] * e))
        npo = layout[p, NODE]
        for i in range(6):
            z[npo + i, 0] += y[i]


@njit(cache=True, inline="always")
def _articulated_scatter_6_1(layout, data, roff, r, z, out, with_ab, j, p):
    """The scatter step of :func:`articulated_body` at a rigid body on a 1-dof hinge, one
    right-hand side: ``α⁺ = φ* α(℘)``, ``θ̈ = ν − G* α⁺``, ``α = α⁺ + H* θ̈ (+ a)``."""
    no, do, ho = layout[j, NODE], layout[j, DOF], layout[j, H]
    if p >= 0:
        npo = layout[p, NODE]
        x = _transpose_times(data, layout[j, W], (z[npo, 0], z[npo + 1, 0], z[npo + 2, 0], z[npo + 3, 0],
                                                   z[npo + 4, 0], z[npo + 5, 0]))
    else:
        x = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t = out[do, 0] - _dot(_row66(r, roff[j, R_G]), x)
    out[do, 0] = t
    ao = layout[j, A]
    for i in range(6):
        z[no + i, 0] = x[i] + data[ho + i] * t + (data[ao + i] if with_ab else 0.0)


# ----------------------------------------------------------------------------- innovations
@njit(cache=True)
def gain_apply(layout, data, roff, r, x, y, star):
    """``y = K x`` (``y(℘(k)) += φ(℘(k), k) G(k) x(k)``, hinge → node) or
    ``y = K* x`` (``y(k) = G*(k) φ*(℘(k), k) x(℘(k))``, node → hinge); ``y`` zero on entry."""
    layout, data, roff, r, x, y = (borrowed(layout), borrowed(data), borrowed(roff), borrowed(r), borrowed(x),
                                   borrowed(y))
    t = np.zeros(_largest(layout, NDIM), dtype=y.dtype)
    for j in range(layout.shape[0]):
        p = layout[j, PARENT]
        if p < 0:
            continue
        m, h, mp = layout[j, NDIM], layout[j, HDIM], layout[p, NDIM]
        t[:m] = 0
        if star:
            _mtv(data, layout[j, W], mp, m, x, layout[p, NODE], t, 0)
            _mtv(r, roff[j, R_G], m, h, t, 0, y, layout[j, DOF])
        else:
            _mv(r, roff[j, R_G], m, h, x, layout[j, DOF], t, 0)
            _mv(data, layout[j, W], mp, m, t, 0, y, layout[p, NODE])


@njit(cache=True)
def hinge_blocks(layout, r, offs, x, y):
    """``y = diag(X(k)) x`` for ``n_k × n_k`` blocks of ``r`` at ``offs`` (e.g. ``D``, ``D^{-1}``)."""
    layout, r, offs, x, y = borrowed(layout), borrowed(r), borrowed(offs), borrowed(x), borrowed(y)
    for j in range(layout.shape[0]):
        h, do = layout[j, HDIM], layout[j, DOF]
        _mv(r, offs[j], h, h, x, do, y, do)
